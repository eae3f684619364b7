//! Shared by the Python interop tests: the peer check and the generated Python modules.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Whether python3 can import cyclonedds; under CI (`CI` set) its absence is a failure.
pub fn python_has_cyclonedds() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import cyclonedds.idl"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("python3 package `cyclonedds` is not installed but CI is set");
    }
    ok
}

/// Writes the Python modules of the corpus (Halyard's Python back end) and the test stub of
/// `halyard.idl` into `dir`.
pub fn write_python(dir: &Path) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    for (file, global) in [
        ("corpus.idl", "corpus"),
        ("HelloWorldData.idl", "HelloWorldData"),
        ("HelloWorld.idl", "HelloWorld"),
    ] {
        let mut opts = halyard_idl::ParseOptions::default();
        opts.include_paths.push(corpus.clone());
        let spec = halyard_idl::parse_file(&corpus.join(file), &opts).unwrap();
        let types = halyard_idlc::type_objects(&spec).unwrap();
        let mut popts = halyard_idlc::python::Options::default();
        popts.global_module = global.to_string();
        for (rel, text) in halyard_idlc::python::generate_with(&spec, &types, &popts).unwrap() {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
    let stub = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/halyard");
    for rel in [
        "__init__.py",
        "idl/__init__.py",
        "idl/types.py",
        "idl/annotations.py",
    ] {
        let to = dir.join("halyard").join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(stub.join(rel), to).unwrap();
    }
}
