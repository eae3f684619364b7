//! Proves what works between Halyard and Fast DDS 2.9's durability (its SQLite persistence
//! plugin, through the Fast DDS perf peer of `bench/peers/fastdds`), on loopback:
//!
//! - a Fast DDS TRANSIENT writer writes, exits, and a new Fast DDS process on the same
//!   database (the same persistence GUID) reloads those samples: a Halyard TRANSIENT reader
//!   that starts afterwards gets every one of them, then the new ones, none lost (Fast DDS
//!   refuses PERSISTENT: its peer runs TRANSIENT with the plugin);
//! - a Halyard PERSISTENT writer's samples reach a Fast DDS TRANSIENT reader started after the
//!   Halyard writer's process exited: the Halyard durability service serves them.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "common/fastdds.rs"]
mod fastdds_peer;

use fastdds_peer::fastdds_perf;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn(program: &Path, args: &[&str]) -> Child {
    Command::new(program)
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()))
}

/// Waits for `child` within `limit` (killing it after), returns its output.
fn finish(mut child: Child, limit: Duration) -> Output {
    let end = Instant::now() + limit;
    while child.try_wait().expect("wait").is_none() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().expect("output")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The highest `total N` and `lost N` of ddsperf-style sub lines.
fn totals(out: &str) -> (u64, u64) {
    let field = |name: &str| {
        out.lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.windows(2)
                    .find(|p| p[0] == name)
                    .and_then(|p| p[1].parse::<u64>().ok())
            })
            .max()
            .unwrap_or(0)
    };
    (field("total"), field("lost"))
}

/// `pub sent N` of a perf publisher.
fn sent(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.split("pub sent ").nth(1)?.trim().parse().ok())
        .max()
        .unwrap_or(0)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-fastdds-dur-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

#[test]
fn a_halyard_late_reader_gets_what_fast_dds_reloaded_from_its_database() {
    let Some(fast) = fastdds_perf() else {
        return;
    };
    let halyard = Path::new(env!("CARGO_BIN_EXE_halyard"));
    let dir = scratch("reload");
    let db = dir.join("writer.db");
    let db = db.to_str().expect("utf-8 path");
    let common = [
        "-i",
        "96",
        "--durability",
        "transient",
        "--persistence-db",
        db,
    ];
    // A first writer process writes for 2 s with no reader, and exits.
    let first = finish(
        spawn(
            &fast,
            &[&common[..], &["-D", "2", "pub", "size", "100"]].concat(),
        ),
        Duration::from_secs(20),
    );
    let written = sent(&text(&first));
    assert!(
        written > 0,
        "the first Fast DDS writer wrote nothing:\n{}",
        text(&first)
    );
    // A second one on the same database reloads them and writes 10 more per second.
    let second = spawn(
        &fast,
        &[&common[..], &["-D", "8", "pub", "10Hz", "size", "100"]].concat(),
    );
    std::thread::sleep(Duration::from_millis(1500));
    let reader = finish(
        spawn(
            halyard,
            &[
                "perf",
                "-i",
                "96",
                "-D",
                "4",
                "--durability",
                "transient",
                "sub",
            ],
        ),
        Duration::from_secs(20),
    );
    let _ = finish(second, Duration::from_secs(20));
    let out = text(&reader);
    let (total, lost) = totals(&out);
    assert!(
        total > written,
        "a late Halyard reader got {total} samples, fewer than the {written} the first Fast DDS \
         process wrote:\n{out}"
    );
    assert_eq!(lost, 0, "samples lost:\n{out}");
}

#[test]
fn a_fast_dds_late_reader_gets_a_departed_halyard_writers_samples_from_its_service() {
    let Some(fast) = fastdds_perf() else {
        return;
    };
    let halyard = Path::new(env!("CARGO_BIN_EXE_halyard"));
    let dir = scratch("service");
    let store = dir.join("service.sqlite");
    let store = store.to_str().expect("utf-8 path");
    let service = spawn(
        halyard,
        &[
            "durability",
            "--store",
            store,
            "--domain",
            "97",
            "--status",
            "1",
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    // The Halyard writer's process writes 200 samples and exits; only the service keeps them.
    let writer = finish(
        Command::new(halyard)
            .args(["perf", "-i", "97", "-D", "2", "--durability", "persistent"])
            .args(["pub", "100Hz", "size", "100"])
            .env("HALYARD_INTERFACE", "lo")
            .env("HALYARD_DURABILITY", "off")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn halyard perf pub"),
        Duration::from_secs(20),
    );
    let written = sent(&text(&writer));
    assert!(
        written > 0,
        "the Halyard writer wrote nothing:\n{}",
        text(&writer)
    );
    // Long enough for the service to see the writer leave (and to purge the instances had
    // the writer disposed them): the reader must still get every sample.
    std::thread::sleep(Duration::from_secs(1));
    let dbdir = dir.join("reader.db");
    let reader = finish(
        spawn(
            &fast,
            &[
                "-i",
                "97",
                "-D",
                "4",
                "--durability",
                "transient",
                "--persistence-db",
                dbdir.to_str().expect("utf-8 path"),
                "sub",
            ],
        ),
        Duration::from_secs(20),
    );
    let svc = finish(service, Duration::from_millis(10));
    let out = text(&reader);
    let (total, lost) = totals(&out);
    assert!(
        total >= written,
        "a late Fast DDS reader got {total} of the {written} samples the Halyard writer wrote:\n{out}\n=== service\n{}",
        text(&svc)
    );
    assert_eq!(lost, 0, "samples lost:\n{out}");
}
