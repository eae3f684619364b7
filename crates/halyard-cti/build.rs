//! Compiles `idl/cti.idl` with Halyard's IDL compiler (the one `halyard idl` runs) into
//! `$OUT_DIR/cti.rs`, included by `src/dds.rs`; and copies the dashboard's browser libraries
//! (uPlot, Cytoscape.js) from `web/node_modules`, where `npm ci --prefix
//! crates/halyard-cti/web` puts them, into `$OUT_DIR/web/`, embedded by
//! `src/http/ui/assets.rs`. Without them the build goes on, and the dashboard's pages say
//! how to install them.
use std::path::Path;

/// The files embedded: (path under `web/node_modules`, name served).
const LIBRARIES: [(&str, &str); 3] = [
    ("uplot/dist/uPlot.iife.min.js", "uPlot.iife.min.js"),
    ("uplot/dist/uPlot.min.css", "uPlot.min.css"),
    ("cytoscape/dist/cytoscape.min.js", "cytoscape.min.js"),
];

fn main() {
    println!("cargo:rerun-if-changed=idl/cti.idl");
    halyard_idlc::Builder::new()
        .file("idl/cti.idl")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));

    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("web");
    std::fs::create_dir_all(&out).expect("OUT_DIR is writable");
    let mut missing = Vec::new();
    for (from, to) in LIBRARIES {
        let src = Path::new("web/node_modules").join(from);
        println!("cargo:rerun-if-changed={}", src.display());
        match std::fs::read(&src) {
            Ok(bytes) => std::fs::write(out.join(to), bytes).expect("OUT_DIR is writable"),
            Err(_) => {
                missing.push(from);
                std::fs::write(out.join(to), b"").expect("OUT_DIR is writable");
            }
        }
    }
    println!("cargo:rerun-if-changed=web/package-lock.json");
    let flag = if missing.is_empty() { "" } else { "missing" };
    std::fs::write(out.join("status"), flag).expect("OUT_DIR is writable");
    if !missing.is_empty() {
        println!(
            "cargo:warning=the dashboard's browser libraries are not installed ({}): run \
             `npm ci --prefix crates/halyard-cti/web` and rebuild for its plots and graph",
            missing.join(", ")
        );
    }
}
