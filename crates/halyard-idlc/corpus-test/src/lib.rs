//! The IDL corpus of `crates/halyard-idlc/tests/corpus`, compiled to Rust by
//! `halyard_idlc::Builder` in `build.rs` (test-only crate).
#![forbid(unsafe_code)]

/// `corpus.idl` (and `common.idl`, which it includes).
pub mod corpus {
    include!(concat!(env!("OUT_DIR"), "/corpus.rs"));
}

/// Cyclone DDS's `HelloWorldData.idl`.
pub mod hello_world_data {
    include!(concat!(env!("OUT_DIR"), "/HelloWorldData.rs"));
}

/// Fast DDS's `HelloWorld.idl`.
pub mod hello_world {
    include!(concat!(env!("OUT_DIR"), "/HelloWorld.rs"));
}
