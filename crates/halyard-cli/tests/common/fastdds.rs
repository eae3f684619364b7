//! The Fast DDS 2.9 perf peer (`bench/peers/fastdds`) for the tests that run against Fast DDS.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Fast DDS perf peer, built on demand; `None` (skip) when Fast DDS is not installed,
/// except under CI.
pub fn fastdds_perf() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/fastdds/build.sh");
    let out = Command::new("sh").arg(&script).output().expect("run sh");
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).to_string();
        if std::env::var_os("CI").is_some() {
            panic!("the Fast DDS peer does not build but CI is set: {why}");
        }
        eprintln!("SKIP: the Fast DDS peer does not build (scripts/install-deps.sh): {why}");
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}
