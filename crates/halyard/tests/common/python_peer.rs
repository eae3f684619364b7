//! A Cyclone DDS peer in a Python process (the `cyclonedds` package running a script of
//! `tests/peers/`), for the interop tests: spawned on loopback, its JSON stdout lines collected
//! as they arrive, its report (stdout and stderr) attached to every failed check.
#![allow(dead_code)]
// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Cyclone DDS on loopback only, with multicast.
pub const CYCLONE_URI: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

/// Whether the `cyclonedds` command-line tool (of the Python package) runs; says SKIP when not.
pub fn cyclonedds_cli_available() -> bool {
    let ok = Command::new("cyclonedds")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: the `cyclonedds` CLI (Python package cyclonedds) is not installed");
    }
    ok
}

/// Runs the `cyclonedds` CLI on loopback for at most `secs` seconds; returns its stdout and
/// stderr.
pub fn cyclonedds_cli(args: &[&str], secs: u32) -> (String, String) {
    let out = Command::new("timeout")
        .arg(secs.to_string())
        .arg("cyclonedds")
        .args(args)
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output()
        .expect("run cyclonedds");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Returns false (the test returns early) when python3 + cyclonedds are missing outside CI;
/// panics when they are missing under CI.
pub fn peer_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import cyclonedds.domain"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("python3 package `cyclonedds` is not installed but CI is set; run scripts/install-deps.sh");
    }
    eprintln!(
        "SKIP: python3 with the `cyclonedds` package not found (see scripts/install-deps.sh)"
    );
    false
}

/// A running python peer whose stdout lines are collected as they arrive.
pub struct Peer {
    what: String,
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    out_thread: Option<std::thread::JoinHandle<()>>,
    err_thread: Option<std::thread::JoinHandle<String>>,
    status: Option<String>,
}

impl Peer {
    pub fn spawn(script: &str, args: &[&str]) -> Peer {
        let path = format!("{}/../../tests/peers/{script}", env!("CARGO_MANIFEST_DIR"));
        let what = format!("python3 {script} {}", args.join(" "));
        let mut child = Command::new("python3")
            .arg("-u")
            .arg(&path)
            .args(args)
            .env("HALYARD_INTERFACE", "lo")
            .env("CYCLONEDDS_URI", CYCLONE_URI)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let l2 = lines.clone();
        let out_thread = std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                l2.lock().unwrap().push(line);
            }
        });
        let mut err = child.stderr.take().unwrap();
        let err_thread = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Peer {
            what,
            child,
            lines,
            out_thread: Some(out_thread),
            err_thread: Some(err_thread),
            status: None,
        }
    }

    /// Waits until some stdout line contains `needle` (checks once for a zero timeout).
    pub fn wait_line(&self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if self
                .lines
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.contains(needle))
            {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// Waits for exit (kills after `timeout`), returns the report text.
    pub fn finish(&mut self, timeout: Duration) -> PeerOutput {
        let end = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break (st.success(), format!("{st}")),
                Ok(None) if Instant::now() >= end => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break (false, "KILLED after deadline".to_string());
                }
                Ok(None) => sleep(Duration::from_millis(20)),
                Err(e) => break (false, format!("wait error: {e}")),
            }
        };
        if let Some(t) = self.out_thread.take() {
            let _ = t.join();
        }
        let stderr = self
            .err_thread
            .take()
            .map(|t| t.join().unwrap_or_default())
            .unwrap_or_default();
        self.status = Some(status.1.clone());
        PeerOutput {
            ok: status.0,
            report: format!(
                "=== `{}` exited: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.what,
                status.1,
                self.lines.lock().unwrap().join("\n"),
                stderr
            ),
            lines: self.lines.lock().unwrap().clone(),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub struct PeerOutput {
    pub ok: bool,
    pub report: String,
    pub lines: Vec<String>,
}

impl PeerOutput {
    /// Sample lines `{"seq": .., "id": .., "len": ..}` as (seq, id, len).
    pub fn samples(&self) -> Vec<(i64, Option<i64>, i64)> {
        self.lines
            .iter()
            .filter(|l| l.contains("\"seq\""))
            .map(|l| {
                (
                    json_int(l, "seq").unwrap(),
                    json_int(l, "id"),
                    json_int(l, "len").unwrap(),
                )
            })
            .collect()
    }
    pub fn field(&self, key: &str) -> Option<i64> {
        self.lines.iter().rev().find_map(|l| json_int(l, key))
    }
    pub fn check(&self, cond: bool, msg: &str) {
        assert!(cond, "{msg}\n{}", self.report);
    }
}

/// Integer value of `"key": N` in a flat JSON line (`null` -> None).
pub fn json_int(line: &str, key: &str) -> Option<i64> {
    let pat = format!("\"{key}\":");
    let rest = line[line.find(&pat)? + pat.len()..].trim_start();
    let end = rest
        .find(|c: char| !(c == '-' || c.is_ascii_digit()))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}
