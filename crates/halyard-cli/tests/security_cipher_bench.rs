//! Proves `halyard security cipher-bench` (the security benchmark's cipher floor) times the
//! primitive and prints the one line bench/halyard_bench/security.py parses, for each kind,
//! and refuses sizes and durations out of range.

use std::process::{Command, Output};

fn cipher_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(["security", "cipher-bench"])
        .args(args)
        .output()
        .expect("run halyard")
}

/// The `key=value` fields of the cipher-bench line.
fn fields(o: &Output) -> Vec<(String, String)> {
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let line = out
        .lines()
        .find(|l| l.starts_with("cipher-bench "))
        .unwrap_or_else(|| panic!("no cipher-bench line in {out:?}"));
    line.split_whitespace()
        .skip(1)
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn number(f: &[(String, String)], key: &str) -> f64 {
    let v = f.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    v.and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} missing or not a number in {f:?}"))
}

#[test]
fn times_each_kind_and_prints_one_parseable_line() {
    for (kind, name) in [
        ("aes256-gcm", "AES256_GCM"),
        ("aes128-gcm", "AES128_GCM"),
        ("aes256-gmac", "AES256_GMAC"),
    ] {
        let o = cipher_bench(&["--kind", kind, "--size", "4096", "--seconds", "0.05"]);
        assert!(o.status.success(), "{kind}: {o:?}");
        let f = fields(&o);
        assert!(f.contains(&("kind".to_owned(), name.to_owned())), "{f:?}");
        assert_eq!(number(&f, "size"), 4096.0);
        assert!(number(&f, "passes") >= 16.0, "{f:?}");
        let (min, median) = (
            number(&f, "us_per_pass_min"),
            number(&f, "us_per_pass_median"),
        );
        assert!(min > 0.0 && min <= median, "{f:?}");
        let gbps = number(&f, "gbytes_per_s");
        assert!(
            (gbps - 4096.0 / min / 1000.0).abs() < 0.02 * gbps + 0.01,
            "{f:?}"
        );
    }
}

#[test]
fn refuses_bad_options() {
    for args in [
        &["--size", "0"][..],
        &["--size", "2000000"],
        &["--seconds", "0"],
        &["--kind", "aes512-gcm"],
        &["--size"],
        &["--bogus", "1"],
    ] {
        let o = cipher_bench(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(!o.stderr.is_empty(), "{args:?}: says why");
    }
}
