//! Proves that `halyard sub` started first receives everything a writer publishes afterwards,
//! whichever tool finishes starting first and whatever the writer offers: `halyard pub`
//! (reliable, then best effort) started at offsets spread over the tools' start-up window,
//! with `pub`'s closing report true each time; and a Cyclone DDS writer (`cyclonedds
//! publish`) created after `halyard sub` and before it.
//! `HALYARD_SUBPUB_RUNS` sets the number of `sub`/`pub` runs (default 20). Domains 145-149.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "../../halyard/tests/common/python_peer.rs"]
mod python_peer;

use python_peer::{cyclonedds_cli_available, CYCLONE_URI};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The keyed type of the runs.
const IDL: &str =
    "module Demo { @topic struct Reading { @key long sensor; string location; double value; }; };\n";

/// The IDL file, written once: runs go on in two lanes at once, and a file rewritten while
/// the other lane's tool reads it would be read empty.
fn idl_file() -> std::path::PathBuf {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("halyard-subthenpub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("Sensor.idl");
        std::fs::write(&path, IDL).expect("write IDL");
        path
    })
    .clone()
}

fn halyard_cmd(args: &[&str]) -> Command {
    let mut c = Command::new("timeout");
    c.arg("60")
        .arg(env!("CARGO_BIN_EXE_halyard"))
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null());
    c
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn samples(n: i64) -> Vec<Value> {
    (1..=n)
        .map(|i| json!({"sensor": i, "location": format!("room {i}"), "value": i as f64 + 0.5}))
        .collect()
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// One run: `sub` started, `pub` `offset` later; returns a description of what went wrong.
fn run_once(domain: u32, offset: Duration, best_effort: bool) -> Result<(), String> {
    let idl = idl_file();
    let idl = idl.to_str().expect("utf-8 path");
    let d = domain.to_string();
    let want = samples(5);
    let sub = halyard_cmd(&[
        "sub",
        "Readings",
        "-i",
        &d,
        "--idl",
        idl,
        "--count",
        "5",
        "--json",
        "--duration",
        "40",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn sub");
    std::thread::sleep(offset);
    let mut args = vec!["pub", "Readings", "-i", &d, "--idl", idl];
    if best_effort {
        args.push("--best-effort");
    }
    let texts: Vec<String> = want.iter().map(Value::to_string).collect();
    args.extend(texts.iter().map(String::as_str));
    let p = halyard_cmd(&args).output().expect("run pub");
    let s = sub.wait_with_output().expect("sub");
    let what = format!(
        "domain {domain}, offset {offset:?}, {}: pub {:?}; sub {:?}",
        if best_effort {
            "best effort"
        } else {
            "reliable"
        },
        text(&p),
        text(&s)
    );
    if !p.status.success() || !s.status.success() {
        return Err(format!("a tool failed: {what}"));
    }
    if json_lines(&text(&s).0) != want {
        return Err(format!("sub did not print the 5 samples: {what}"));
    }
    let report = text(&p).0;
    let truthful = if best_effort {
        report.contains(": 1 best-effort reader (delivery unknown)")
    } else {
        report.contains(": 1 reader acknowledged everything")
    };
    if !truthful || report.contains("did not acknowledge") {
        return Err(format!("pub's report is not what happened: {what}"));
    }
    Ok(())
}

#[test]
fn sub_started_first_gets_everything_pub_writes_at_every_start_offset() {
    let runs: u32 = std::env::var("HALYARD_SUBPUB_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // Offsets from 0 to past the tools' start-up (sub's join, pub's discovery of readers).
    let window_ms = 1_800u32;
    let (tx, rx) = mpsc::channel();
    let lanes = 2u32;
    let workers: Vec<_> = (0..lanes)
        .map(|lane| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in (lane..runs).step_by(lanes as usize) {
                    let offset = Duration::from_millis(u64::from(i * window_ms / runs.max(1)));
                    let best_effort = i % 2 == 1;
                    let _ = tx.send(run_once(145 + lane, offset, best_effort));
                }
            })
        })
        .collect();
    drop(tx);
    let failures: Vec<String> = rx.iter().filter_map(Result::err).collect();
    for w in workers {
        w.join().expect("worker");
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `cyclonedds publish`: a Cyclone DDS writer driven through its Python console.
struct CyclonePublisher {
    child: Child,
    /// Its console's output lines, as they come.
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl CyclonePublisher {
    /// Starts it on `domain`; it learns the topic's type and QoS from the network.
    fn start(domain: u32) -> CyclonePublisher {
        let mut child = Command::new("cyclonedds")
            .args(["publish", "Readings", "-i", &domain.to_string(), "-r", "2s"])
            .arg("--suppress-progress-bar")
            .env("CYCLONEDDS_URI", CYCLONE_URI)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn cyclonedds publish");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        CyclonePublisher {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Sends lines to its console.
    fn say(&mut self, lines: &[String]) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        for l in lines {
            writeln!(stdin, "{l}").expect("write to cyclonedds publish");
        }
        stdin.flush().expect("flush");
    }

    /// Runs `statement` in its console, then prints `marker`, and waits (at most 40 s) for
    /// the marker.
    fn run(&mut self, statement: &str, marker: &str) {
        self.say(&[statement.to_string(), String::new()]);
        self.say(&[format!("print('{marker}', flush=True)")]);
        let end = Instant::now() + Duration::from_secs(40);
        while !self.seen.iter().any(|l| l.contains(marker)) {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.seen.push(l),
                Err(_) => panic!("cyclonedds publish never printed {marker}: {:?}", self.seen),
            }
        }
    }

    /// Waits until its writer matches `n` readers, then writes `samples`.
    fn publish_when_matched(&mut self, n: usize, samples: &[Value]) {
        let mut lines = vec![
            "import time".to_string(),
            format!("while len(writer.get_matched_subscriptions()) < {n}: time.sleep(0.05)"),
            String::new(),
        ];
        for s in samples {
            lines.push(format!(
                "writer.write(Reading(sensor={}, location={}, value={}))",
                s["sensor"], s["location"], s["value"]
            ));
        }
        self.say(&lines);
    }

    fn finish(mut self) -> String {
        self.say(&["time.sleep(1)".into(), "exit()".into()]);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.seen.extend(self.lines.try_iter());
        self.seen.join("\n")
    }
}

/// A `halyard sub` started with [`sub_ready`], and the lines of its stderr.
struct ReadySub {
    child: Child,
    stderr: mpsc::Receiver<String>,
}

impl ReadySub {
    /// Waits (at most 40 s) until sub says it matched a writer.
    fn wait_matched(&self) {
        let end = Instant::now() + Duration::from_secs(40);
        let mut seen = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(l) if l.starts_with("halyard sub: matched writer") => return,
                Ok(l) => seen.push(l),
                Err(_) => panic!("sub never matched a writer: {seen:?}"),
            }
        }
    }
}

/// Starts `halyard sub` and returns it once it printed that it subscribed.
fn sub_ready(args: &[&str]) -> ReadySub {
    let mut child = halyard_cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sub");
    let err = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(err).lines();
    for line in lines.by_ref() {
        let line = line.expect("stderr line");
        if line.starts_with("subscribed to") {
            break;
        }
    }
    // Keep draining stderr so the subscriber never blocks on it.
    let (tx, stderr) = mpsc::channel();
    std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    ReadySub { child, stderr }
}

#[test]
fn sub_gets_a_cyclone_writer_created_after_it_and_before_it() {
    if !cyclonedds_cli_available() {
        return;
    }
    let idl = idl_file();
    let idl = idl.to_str().expect("utf-8 path");
    let want = samples(3);

    // After: `halyard sub` first; the Cyclone writer takes its type and QoS from the reader.
    // It writes once each side has matched the other: a volatile reader that learns of a
    // writer only after its samples went out is not owed them (it starts at the writer's
    // first HEARTBEAT, as Cyclone DDS's readers do).
    let sub = sub_ready(&[
        "sub",
        "Readings",
        "-i",
        "149",
        "--idl",
        idl,
        "--count",
        "3",
        "--json",
        "--duration",
        "50",
    ]);
    let mut cyclone = CyclonePublisher::start(149);
    sub.wait_matched();
    cyclone.publish_when_matched(1, &want);
    let s = sub.child.wait_with_output().expect("sub");
    let log = cyclone.finish();
    assert_eq!(json_lines(&text(&s).0), want, "{log}");

    // Before: the Cyclone writer exists (it learnt the type from a first subscriber, now
    // gone); a `halyard sub` without --idl then learns the type from that writer and gets
    // what it writes next.
    let first = halyard_cmd(&[
        "sub",
        "Readings",
        "-i",
        "148",
        "--idl",
        idl,
        "--duration",
        "6",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn first sub");
    let mut cyclone = CyclonePublisher::start(148);
    cyclone.run("import time", "writer ready");
    let first = first.wait_with_output().expect("first sub");
    assert!(first.status.success());
    // Only once the writer has seen the first subscriber go is a match the new one's.
    cyclone.run(
        "while writer.get_matched_subscriptions(): time.sleep(0.05)",
        "alone",
    );
    let sub = sub_ready(&["sub", "Readings", "-i", "148", "--count", "3", "--json"]);
    sub.wait_matched();
    cyclone.publish_when_matched(1, &want);
    let s = sub.child.wait_with_output().expect("sub");
    let log = cyclone.finish();
    assert_eq!(json_lines(&text(&s).0), want, "{log}");
}
