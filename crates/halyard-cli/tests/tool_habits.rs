//! Proves the `halyard` command's habits: the top-level help on standard output with exit 0,
//! `--version`, an unknown command named with exit 2, `-d, --domain` in every command of
//! Halyard's own (old spellings kept), topic names outside the character set refused before
//! anything joins, and a store file truncated to nothing refused by the standalone and the
//! embedded durability service.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the `halyard` binary with `args` on loopback, with no durability service.
fn halyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null())
        .output()
        .expect("run halyard")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-habits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

#[test]
fn the_help_goes_to_stdout_and_mistakes_exit_2_naming_the_command() {
    for help in ["--help", "-h", "help"] {
        let o = halyard(&[help]);
        assert_eq!(o.status.code(), Some(0), "{help}: {}", stderr(&o));
        assert!(stdout(&o).starts_with("usage: halyard COMMAND"), "{help}");
        assert!(stderr(&o).is_empty(), "{help}: {}", stderr(&o));
    }
    let help = stdout(&halyard(&["--help"]));
    // The domain option, and the two commands that keep their reference tools' options.
    assert!(help.contains("-d, --domain"), "{help}");
    assert!(help.contains("`perf` ddsperf's"), "{help}");
    assert!(
        help.contains("`shapes` shape_main's (-d ID the domain)"),
        "{help}"
    );
    for version in ["--version", "-V", "version"] {
        let o = halyard(&[version]);
        assert_eq!(o.status.code(), Some(0), "{version}");
        assert_eq!(
            stdout(&o).trim(),
            format!("halyard {}", env!("CARGO_PKG_VERSION"))
        );
    }
    let o = halyard(&["frobnicate", "-d", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).starts_with("halyard: unknown command 'frobnicate'"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("usage: halyard COMMAND"));
    let o = halyard(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).starts_with("usage: halyard COMMAND"));
}

/// The `--json` document of `halyard ARGS`.
fn json_of(args: &[&str]) -> Value {
    let o = halyard(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&o)))
}

#[test]
fn every_command_of_halyards_own_takes_dash_d_for_the_domain() {
    // The help of each shows `-d, --domain`.
    for cmd in [
        &["ls", "-h"][..],
        &["ps", "-h"],
        &["typeof", "-h"],
        &["sub", "-h"],
        &["pub", "-h"],
        &["durability", "-h"],
        &["durability-bench", "-h"],
        &["demo", "-h"],
        &["security", "help"],
    ] {
        let o = halyard(cmd);
        assert_eq!(o.status.code(), Some(0), "{cmd:?}");
        assert!(
            stdout(&o).contains("-d, --domain"),
            "{cmd:?}: {}",
            stdout(&o)
        );
    }
    // Every spelling joins the domain asked (ls and ps report it).
    for opt in ["-d", "--domain", "-i", "--id", "--domain-id"] {
        let doc = json_of(&["ls", opt, "190", "-r", "200ms", "--json"]);
        assert_eq!(doc["domain_id"], 190, "ls {opt}");
    }
    let doc = json_of(&["ps", "-d", "191", "--duration", "200ms", "--json"]);
    assert_eq!(doc["domain_id"], 191);
    // `-d` was once the duration of ls and ps: a duration there says where it goes.
    let o = halyard(&["ls", "-d", "500ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the duration is -r, --duration"),
        "{}",
        stderr(&o)
    );
    // sub, pub and typeof take it (exit 1: nothing on the topic; 2 would be a bad argument).
    for cmd in [
        &["typeof", "HabitsNobody", "-d", "192", "--timeout", "300ms"][..],
        &["sub", "HabitsNobody", "-d", "192", "--timeout", "300ms"],
        &[
            "pub",
            "HabitsNobody",
            "-d",
            "192",
            "--timeout",
            "300ms",
            "{}",
        ],
    ] {
        let o = halyard(cmd);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {}", stderr(&o));
    }
    // So do demo, durability-bench and security: a bad domain is refused as such.
    for cmd in [
        &["demo", "-d", "233"][..],
        &["durability-bench", "-d", "233"],
        &["durability", "--store", "x", "-d", "233"],
    ] {
        let o = halyard(cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        assert!(
            stderr(&o).contains("bad domain id \"233\""),
            "{cmd:?}: {}",
            stderr(&o)
        );
    }
    let dir = scratch("sec-domain");
    let set_up = dir.join("s");
    let o = halyard(&[
        "security",
        "init",
        set_up.to_str().unwrap(),
        "--participant",
        "a",
        "-d",
        "7",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let governance = std::fs::read_to_string(set_up.join("governance.xml")).unwrap();
    assert!(governance.contains("<id>7</id>"), "{governance}");
    let o = halyard(&["security", "check", set_up.to_str().unwrap(), "-d", "7"]);
    assert!(o.status.success(), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_durability_service_serves_the_domain_given_by_dash_d() {
    let dir = scratch("durability-d");
    let mut child = Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(["durability", "--store"])
        .arg(dir.join("store.sqlite"))
        .args(["-d", "193", "--status", "0"])
        .env("HALYARD_INTERFACE", "lo")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let first = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .and_then(Result::ok)
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.starts_with("durability service ready: domain 193 "),
        "{first}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_topic_name_outside_the_character_set_is_refused_before_joining() {
    let start = Instant::now();
    for cmd in [
        &["sub", "two words", "--timeout", "5"][..],
        &["pub", "two words", "--timeout", "5", "{}"],
        &["typeof", "Sq*", "--timeout", "5"],
    ] {
        let o = halyard(cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("character"), "{cmd:?}: {}", stderr(&o));
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "refused at once, not after looking for the topic"
    );
    // shapes reports what create_topic says.
    let o = halyard(&["shapes", "-P", "-t", "Sq uare", "-d", "196"]);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("character ' '"), "{all}");
}

#[test]
fn a_store_truncated_to_nothing_is_refused_by_both_services() {
    let dir = scratch("empty-store");
    let store = dir.join("store.sqlite");
    std::fs::write(&store, b"").unwrap();
    let o = Command::new("timeout")
        .arg("20")
        .arg(env!("CARGO_BIN_EXE_halyard"))
        .args(["durability", "--store"])
        .arg(&store)
        .args(["-d", "197", "--status", "0"])
        .env("HALYARD_INTERFACE", "lo")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is empty (0 bytes)"), "{}", stderr(&o));
    // The embedded service of a PERSISTENT writer.
    let o = Command::new("timeout")
        .arg("20")
        .arg(env!("CARGO_BIN_EXE_halyard"))
        .args([
            "perf",
            "-D",
            "1",
            "-i",
            "197",
            "--durability",
            "persistent",
            "pub",
        ])
        .env("HALYARD_DURABILITY_STORE", &store)
        .env("HALYARD_INTERFACE", "lo")
        .output()
        .expect("run");
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(all.contains("is empty (0 bytes)"), "{all}");
    assert_eq!(
        std::fs::metadata(&store).unwrap().len(),
        0,
        "left untouched"
    );
    let _ = std::fs::remove_dir_all(dir);
}
