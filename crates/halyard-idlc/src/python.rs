//! Python back end (placeholder while being written).
