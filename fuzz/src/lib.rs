//! Shared code of Halyard's cargo-fuzz targets (see fuzz_targets/ and scripts/fuzz.sh).
//!
//! `wire_checks` is also compiled into crates/halyard-wire/tests/fuzz_corpus.rs, which replays
//! the committed corpora and regressions on stable.

pub mod cdr_check;
pub mod core_harness;
pub mod wire_checks;
