//! Compiles `idl/cti.idl` with Halyard's IDL compiler (the one `halyard idl` runs) into
//! `$OUT_DIR/cti.rs`, included by `src/dds.rs`.
fn main() {
    println!("cargo:rerun-if-changed=idl/cti.idl");
    halyard_idlc::Builder::new()
        .file("idl/cti.idl")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
