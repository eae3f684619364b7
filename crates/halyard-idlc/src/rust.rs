//! Rust back end (placeholder while being written).
