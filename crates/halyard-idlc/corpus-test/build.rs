//! Compiles the IDL corpus with the build.rs helper (what a user crate does).
fn main() {
    let corpus = std::path::Path::new("../tests/corpus");
    halyard_idlc::Builder::new()
        .file(corpus.join("corpus.idl"))
        .file(corpus.join("HelloWorldData.idl"))
        .file(corpus.join("HelloWorld.idl"))
        .include(corpus)
        .runtime("::halyard_cdr")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
