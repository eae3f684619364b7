//! The threat-intelligence sharing node (being written).
