//! Compiles the IDL corpus with the build.rs helper, as a user crate that depends on `halyard`
//! does (default runtime path `::halyard::cdr`).
fn main() {
    let corpus = std::path::Path::new("../tests/corpus");
    halyard_idlc::Builder::new()
        .file(corpus.join("corpus.idl"))
        .file(corpus.join("HelloWorldData.idl"))
        .file(corpus.join("HelloWorld.idl"))
        .include(corpus)
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
