//! `halyard idl FILE.idl --lang rust|python --out DIR [-I DIR]... [-D NAME[=VAL]]...`: the IDL
//! compiler. Errors print as `file:line:col: error: message` and exit 1; bad
//! arguments print the usage and exit 2.

use std::path::{Path, PathBuf};

const USAGE: &str =
    "usage: halyard idl FILE.idl --lang rust|python --out DIR [-I DIR]... [-D NAME[=VALUE]]...\n\
  --lang rust     writes DIR/<stem>.rs (include it with include!; needs the `halyard` crate)\n\
  --lang python   writes one package per IDL module under DIR (needs the `halyard.idl` runtime)\n\
  -I DIR          adds DIR to the #include search path\n\
  -D NAME[=VAL]   defines a preprocessor macro";

#[derive(Debug, PartialEq)]
enum Lang {
    Rust,
    Python,
}

#[derive(Debug)]
struct Args {
    file: PathBuf,
    lang: Lang,
    out: PathBuf,
    includes: Vec<PathBuf>,
    defines: Vec<(String, String)>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut file, mut lang, mut out) = (None, None, None);
    let mut includes = Vec::new();
    let mut defines = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--lang" => {
                lang = Some(match value("--lang")?.as_str() {
                    "rust" => Lang::Rust,
                    "python" => Lang::Python,
                    other => return Err(format!("unknown language `{other}`")),
                })
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "-I" => includes.push(PathBuf::from(value("-I")?)),
            "-D" => defines.push(define(&value("-D")?)),
            s if s.starts_with("-I") && s.len() > 2 => includes.push(PathBuf::from(&s[2..])),
            s if s.starts_with("-D") && s.len() > 2 => defines.push(define(&s[2..])),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            s if file.is_none() => file = Some(PathBuf::from(s)),
            s => return Err(format!("unexpected argument `{s}`")),
        }
    }
    Ok(Args {
        file: file.ok_or("no IDL file given")?,
        lang: lang.ok_or("--lang is required")?,
        out: out.ok_or("--out is required")?,
        includes,
        defines,
    })
}

fn define(s: &str) -> (String, String) {
    match s.split_once('=') {
        Some((n, v)) => (n.to_string(), v.to_string()),
        None => (s.to_string(), "1".to_string()),
    }
}

/// Runs `halyard idl ARGS`; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return 0;
    }
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("halyard idl: {e}\n{USAGE}");
            return 2;
        }
    };
    match run(&args) {
        Ok(written) => {
            for w in written {
                println!("wrote {}", w.display());
            }
            0
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

fn run(args: &Args) -> Result<Vec<PathBuf>, halyard_idlc::Error> {
    let mut opts = halyard_idl::ParseOptions::default();
    opts.include_paths = args.includes.clone();
    opts.defines = args.defines.clone();
    let files: Vec<(PathBuf, String)> = match args.lang {
        Lang::Rust => {
            let (code, _) = halyard_idlc::compile_rust(
                &args.file,
                &opts,
                &halyard_idlc::rust::Options::default(),
            )?;
            let stem = args.file.file_stem().unwrap_or_default();
            vec![(Path::new(stem).with_extension("rs"), code)]
        }
        Lang::Python => {
            let spec = halyard_idl::parse_file(&args.file, &opts)?;
            let types = halyard_idlc::type_objects(&spec)?;
            let mut popts = halyard_idlc::python::Options::default();
            if let Some(stem) = args.file.file_stem() {
                popts.global_module = stem.to_string_lossy().replace(['-', '.'], "_");
            }
            halyard_idlc::python::generate_with(&spec, &types, &popts)?
                .into_iter()
                .map(|(p, c)| (PathBuf::from(p), c))
                .collect()
        }
    };
    let mut written = Vec::new();
    for (rel, code) in files {
        let path = args.out.join(rel);
        let io = |source| halyard_idlc::Error::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(&path, code).map_err(io)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments_parse_and_bad_ones_are_refused() {
        let a = parse(&s(&[
            "x.idl", "--lang", "rust", "--out", "o", "-I", "inc", "-DFOO=2", "-D", "BAR",
        ]))
        .unwrap();
        assert_eq!(a.lang, Lang::Rust);
        assert_eq!(a.includes, vec![PathBuf::from("inc")]);
        assert_eq!(
            a.defines,
            vec![("FOO".into(), "2".into()), ("BAR".into(), "1".into())]
        );
        assert!(parse(&s(&["x.idl", "--lang", "c", "--out", "o"])).is_err());
        assert!(parse(&s(&["x.idl", "--out", "o"])).is_err());
        assert!(parse(&s(&["--lang", "rust", "--out", "o"])).is_err());
        assert!(parse(&s(&["x.idl", "--lang", "rust", "--out"])).is_err());
    }

    fn corpus() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../halyard-idlc/tests/corpus")
    }

    #[test]
    fn compiles_with_include_paths_and_reports_exit_codes() {
        let out = std::env::temp_dir().join(format!("halyard-idl-cli-{}", std::process::id()));
        let file = corpus().join("corpus.idl");
        let inc = corpus();
        let file_s = file.to_string_lossy().to_string();
        let out_s = out.to_string_lossy().to_string();
        let inc_s = inc.to_string_lossy().to_string();
        let args = s(&[&file_s, "--lang", "rust", "--out", &out_s, "-I", &inc_s]);
        assert_eq!(main(&args), 0);
        let code = std::fs::read_to_string(out.join("corpus.rs")).unwrap();
        assert!(code.contains("pub struct Primitives"));
        let args = s(&[&file_s, "--lang", "python", "--out", &out_s, "-I", &inc_s]);
        assert_eq!(main(&args), 0);
        assert!(out.join("Corpus/__init__.py").exists() && out.join("Common/__init__.py").exists());
        let bad = out.join("bad.idl");
        std::fs::write(&bad, "struct S { wstring w; };").unwrap();
        let bad_s = bad.to_string_lossy().to_string();
        assert_eq!(main(&s(&[&bad_s, "--lang", "rust", "--out", &out_s])), 1);
        assert_eq!(main(&s(&[&bad_s, "--lang", "go", "--out", &out_s])), 2);
        let _ = std::fs::remove_dir_all(&out);
    }
}
