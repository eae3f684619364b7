//! Runs the benchmark campaign end to end in its tiny mode (`scripts/bench.sh --tiny`: all four
//! peers, 32 B and 1024 B, latency and reliable throughput, plus one ponger with one passive
//! subscriber) and checks the shape of what it writes: a result row per peer, size and mode with
//! positive finite latencies, no loss on the DDS peers' reliable streams, passive subscribers
//! that received the pings, and reports that mention every peer. It runs the `halyard` binary
//! of this build (`HALYARD_BENCH_EXE`), not a release build of its own. Also runs the campaign
//! tool's Python unit tests. Holds no performance threshold: numbers on a shared machine are
//! noise for a test.

// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The campaign's hard deadline (normally ≈60 s plus the peers' builds).
const DEADLINE: Duration = Duration::from_secs(420);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

fn in_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

/// Waits for `child` (killing it at `deadline`) and returns (success, stdout + stderr).
fn collect(mut child: Child, deadline: Instant) -> (bool, String) {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() >= deadline => {
                // SIGTERM lets the campaign stop its peer processes; SIGKILL if it does not exit.
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
                std::thread::sleep(Duration::from_secs(5));
                let _ = child.kill();
                let _ = child.wait();
                timed_out = true;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("waiting for the campaign: {e}"),
        }
    };
    let text = format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}\n{}",
        t_out.join().unwrap_or_default(),
        t_err.join().unwrap_or_default(),
        if timed_out {
            "--- killed at the deadline ---"
        } else {
            ""
        }
    );
    (status.map(|s| s.success()).unwrap_or(false), text)
}

/// Splits one CSV line as Python's csv module writes it (quotes around fields with commas).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

struct Csv {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Csv {
    fn parse(text: &str) -> Csv {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header = csv_fields(lines.next().expect("results.csv has a header"));
        Csv {
            header,
            rows: lines.map(csv_fields).collect(),
        }
    }

    fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("results.csv has no column {name}"))
    }

    /// The row of a peer's plain point (one receiver, no passive subscribers) of that kind and size.
    fn find(&self, peer: &str, kind: &str, size: &str) -> Option<&Vec<String>> {
        let (p, k, s, l) = (
            self.col("peer"),
            self.col("kind"),
            self.col("size"),
            self.col("listeners"),
        );
        self.rows
            .iter()
            .find(|r| r[p] == peer && r[k] == kind && r[s] == size && r[l] == "0")
    }

    fn find_point(&self, peer: &str, point: &str) -> Option<&Vec<String>> {
        let (p, k) = (self.col("peer"), self.col("point"));
        self.rows.iter().find(|r| r[p] == peer && r[k] == point)
    }
}

fn positive_finite(s: &str) -> bool {
    s.parse::<f64>()
        .map(|v| v.is_finite() && v > 0.0)
        .unwrap_or(false)
}

#[test]
fn python_unit_tests() {
    let root = repo_root();
    let out = Command::new("python3")
        .args(["-m", "unittest", "discover", "bench/tests"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(&root)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "bench/tests failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tiny_campaign_reports_every_peer() {
    if !in_path("ddsperf") {
        if std::env::var_os("CI").is_some() {
            panic!("ddsperf (cyclonedds-tools) is not installed but CI is set; run scripts/install-deps.sh");
        }
        eprintln!("SKIP: ddsperf not found in PATH (install cyclonedds-tools via scripts/install-deps.sh)");
        return;
    }
    let root = repo_root();
    let out_dir = std::env::temp_dir().join(format!("halyard-bench-tiny-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let child = Command::new("bash")
        .arg("scripts/bench.sh")
        .args(["--tiny", "--out"])
        .arg(&out_dir)
        // The binary these tests built: no release build of its own (about 2.5 minutes of
        // the suite in CI); the peers are still built by the script.
        .env("HALYARD_BENCH_EXE", env!("CARGO_BIN_EXE_halyard"))
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash scripts/bench.sh starts");
    let (ok, log) = collect(child, Instant::now() + DEADLINE);
    assert!(ok, "scripts/bench.sh --tiny failed\n{log}");

    // Peers whose build script is in the repository must have run; so must Halyard and Cyclone.
    let mut peers = vec![("halyard", "Halyard"), ("cyclone", "Cyclone DDS")];
    for (peer, label) in [("fastdds", "Fast DDS"), ("udp", "raw UDP")] {
        if root
            .join("bench/peers")
            .join(peer)
            .join("build.sh")
            .exists()
        {
            peers.push((peer, label));
        } else {
            eprintln!("note: bench/peers/{peer}/build.sh absent: {peer} not required");
        }
    }

    let read = |name: &str| {
        std::fs::read_to_string(out_dir.join(name))
            .unwrap_or_else(|e| panic!("{name} missing in {}: {e}\n{log}", out_dir.display()))
    };
    let csv = Csv::parse(&read("results.csv"));
    let (status, reason) = (csv.col("status"), csv.col("reason"));
    let mut problems = Vec::new();
    for (peer, _) in &peers {
        for size in ["32", "1024"] {
            for kind in ["latency", "throughput"] {
                let Some(row) = csv.find(peer, kind, size) else {
                    problems.push(format!("{peer} {kind} {size} B: no row"));
                    continue;
                };
                if row[status] != "ok" {
                    problems.push(format!(
                        "{peer} {kind} {size} B: {} ({})",
                        row[status], row[reason]
                    ));
                    continue;
                }
                if kind == "latency" {
                    for c in [
                        "lat_ave_us",
                        "lat_min_us",
                        "lat_p50_us",
                        "lat_p99_us",
                        "lat_max_us",
                    ] {
                        let v = &row[csv.col(c)];
                        if !positive_finite(v) {
                            problems.push(format!("{peer} {kind} {size} B: {c} = {v:?}"));
                        }
                    }
                } else {
                    let v = &row[csv.col("thr_samples_per_s")];
                    if !positive_finite(v) {
                        problems.push(format!("{peer} {kind} {size} B: samples/s = {v:?}"));
                    }
                    let lost = &row[csv.col("lost")];
                    if *peer != "udp" && lost != "0" {
                        problems.push(format!("{peer} reliable {size} B: lost {lost:?}"));
                    }
                }
            }
        }
    }
    // One ponger + one passive subscriber (RTI perftest's multi-subscriber set-up).
    for (peer, _) in &peers {
        let Some(row) = csv.find_point(peer, "latency-KS-1024-rel-200hz-n1-l1") else {
            problems.push(format!("{peer} passive-subscriber point: no row"));
            continue;
        };
        let got = &row[csv.col("listener_received_min")];
        if row[status] != "ok" || !positive_finite(got) {
            problems.push(format!(
                "{peer} passive-subscriber point: {} ({}), passive sub received {got:?}",
                row[status], row[reason]
            ));
        }
    }
    for name in ["report.md", "report.html", "results.json", "results.csv"] {
        let text = read(name);
        for (peer, label) in &peers {
            if !text.contains(peer) && !text.contains(label) {
                problems.push(format!("{name} does not mention {label}"));
            }
        }
    }
    let html = read("report.html");
    if !html.contains("<svg") || html.contains("<script src") || html.contains("<link ") {
        problems.push("report.html is not self-contained with inline SVG".into());
    }
    assert!(
        problems.is_empty(),
        "campaign results incomplete:\n  {}\n{log}",
        problems.join("\n  ")
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}
