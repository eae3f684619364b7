//! Proves the Python back end writes valid Python (`python3 -m py_compile`) that imports
//! against a tiny stub of the `halyard.idl` contract and registers every topic type.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn generate(dir: &Path, file: &str, global: &str) -> usize {
    let mut opts = halyard_idl::ParseOptions::default();
    opts.include_paths.push(corpus());
    let spec = halyard_idl::parse_file(&corpus().join(file), &opts).unwrap();
    let types = halyard_idlc::type_objects(&spec).unwrap();
    let mut popts = halyard_idlc::python::Options::default();
    popts.global_module = global.to_string();
    for (rel, text) in halyard_idlc::python::generate_with(&spec, &types, &popts).unwrap() {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let status = Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success(), "{} does not compile", path.display());
    }
    types.topics.len()
}

fn copy_stub(dir: &Path) {
    let stub = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/stub/halyard");
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

#[test]
fn generated_python_compiles_imports_and_registers_every_topic_type() {
    if !python3() {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("halyard-idlc-py-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let topics = generate(&dir, "corpus.idl", "corpus")
        + generate(&dir, "HelloWorldData.idl", "HelloWorldData")
        + generate(&dir, "HelloWorld.idl", "HelloWorld");
    copy_stub(&dir);
    let script = format!(
        "import sys; sys.path.insert(0, {:?})\n\
         import halyard.idl, Corpus, Common, HelloWorldData, HelloWorld\n\
         assert len(halyard.idl.REGISTERED) == {topics}, sorted(halyard.idl.REGISTERED)\n\
         assert Corpus.TWICE == 8 and Corpus.GREETING == 'hello'\n\
         m = HelloWorldData.Msg(userID=1, message='x'); assert m.userID == 1\n\
         d = Corpus.Defaults(); assert (d.a, d.b) == (5, 2.5)\n\
         print('imported', len(halyard.idl.REGISTERED), 'topic types')",
        dir.display().to_string()
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn global_definitions_never_shadow_a_module_package() {
    let spec = halyard_idl::parse_str(
        "M.idl",
        "struct G { long x; }; module M { struct S { G g; }; };",
        &halyard_idl::ParseOptions::default(),
    )
    .unwrap();
    let types = halyard_idlc::type_objects(&spec).unwrap();
    let mut opts = halyard_idlc::python::Options::default();
    opts.global_module = "M".to_string();
    let files = halyard_idlc::python::generate_with(&spec, &types, &opts).unwrap();
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["M_global.py", "M/__init__.py"]);
    let m = &files[1].1;
    assert!(
        m.contains("import M_global") && m.contains("g: M_global.G"),
        "{m}"
    );
}
