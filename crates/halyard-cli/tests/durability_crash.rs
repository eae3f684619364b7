//! Proves PERSISTENT durability survives kill -9 of any process at any moment, with real
//! processes over loopback: a `halyard durability --store PATH` service, a writer process
//! (this test binary run again as `crash_writer_child`) that prints what the service
//! acknowledged as stored, and readers started afterwards. Each iteration (50 by default,
//! `HALYARD_CRASH_ITERATIONS`; the schedule follows `HALYARD_CRASH_SEED`, printed on
//! failure) starts a reader process and a writer, kills the reader at a random moment, and
//! the writer, the service or both with SIGKILL after a random time, restarts what was killed (the store must open cleanly every time), and then a new
//! reader must get every sample ever acknowledged as stored, exactly once and in order.
//!
//! The same contract is also checked with `halyard shapes`: a PERSISTENT shape written
//! while the service ran reaches a subscriber started after the publisher exited and the
//! service was killed with -9 and restarted on the same store.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "common/proc.rs"]
mod proc_util;

use halyard::durability::EmbeddedDurability;
use halyard::qos::{DurabilityKind, EndpointQos, History, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, ParticipantOptions};
use proc_util::Proc;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DOMAIN: u32 = 71;
const TOPIC: &str = "CrashIndicators";
const WRITER_ENV: &str = "HALYARD_CRASH_WRITER";
const READER_ENV: &str = "HALYARD_CRASH_READER";
const BLOCKED_ENV: &str = "HALYARD_BLOCKED_WRITER";

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Crash::Indicator")]
struct Indicator {
    #[key]
    source: u32,
    seq: u64,
    body: String,
}

fn options() -> ParticipantOptions {
    ParticipantOptions {
        interface: Some("lo".into()),
        durability: EmbeddedDurability::Off,
        ..Default::default()
    }
}

fn writer_qos() -> EndpointQos {
    let mut q = EndpointQos::writer_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q.durability = DurabilityKind::Persistent;
    q.durability_service.history = History::KeepAll;
    q.writer_data_lifecycle.autodispose_unregistered_instances = false;
    q
}

/// The writer process: `seq` from `HALYARD_CRASH_WRITER` up, printing `acked N` once every
/// sample up to N is acknowledged by the service (stored), until it is killed.
#[test]
#[ignore = "a child process of kill_9_of_writer_or_service_loses_no_stored_sample"]
fn crash_writer_child() {
    let Ok(base) = std::env::var(WRITER_ENV) else {
        return;
    };
    let base: u64 = base.parse().expect("a sequence base");
    let p = DomainParticipant::with_options(DOMAIN, options()).expect("participant");
    let t = p.create_topic::<Indicator>(TOPIC).expect("topic");
    let w = p
        .create_publisher(GroupQos::default())
        .create_datawriter(&t, writer_qos())
        .expect("writer");
    w.wait_for_durability_services(1, Duration::from_secs(20))
        .expect("the service's reader matches");
    println!("writing");
    let mut seq = base;
    loop {
        for _ in 0..5 {
            let s = Indicator {
                source: (seq % 3) as u32,
                seq,
                body: format!("indicator {seq} {}", "x".repeat((seq % 200) as usize)),
            };
            // A full history blocks up to max_blocking_time: try again.
            while w.write(&s).is_err() {}
            seq += 1;
        }
        if w.wait_for_acknowledgments(Duration::from_secs(2)).is_ok() {
            println!("acked {}", seq - 1);
        }
    }
}

/// A reader process catching up while writers and services crash around it (and it is
/// killed itself): prints how many samples it has every time more arrive.
#[test]
#[ignore = "a child process of kill_9_of_writer_or_service_loses_no_stored_sample"]
fn crash_reader_child() {
    if std::env::var(READER_ENV).is_err() {
        return;
    }
    let p = DomainParticipant::with_options(DOMAIN, options()).expect("participant");
    let t = p.create_topic::<Indicator>(TOPIC).expect("topic");
    let r = p
        .create_subscriber(GroupQos::default())
        .create_datareader(&t, reader_qos())
        .expect("reader");
    let mut n = 0usize;
    loop {
        r.wait_for_data(Duration::from_millis(100));
        let got = r.take(100_000).expect("take").len();
        if got > 0 {
            n += got;
            println!("read {n}");
        }
    }
}

fn reader_qos() -> EndpointQos {
    let mut q = EndpointQos::reader_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q.durability = DurabilityKind::Persistent;
    q
}

fn service(store: &Path) -> Proc {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.args(["durability", "--store"])
        .arg(store)
        .args(["--domain", &DOMAIN.to_string(), "--status", "0"])
        .env("HALYARD_INTERFACE", "lo");
    let mut p = Proc::spawn(c);
    assert!(
        p.wait_for("durability service ready", Duration::from_secs(20)),
        "the service did not open its store cleanly: {:?}",
        p.seen
    );
    p
}

fn reader_process() -> Proc {
    let mut c = Command::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        "crash_reader_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(READER_ENV, "1")
    .env("HALYARD_INTERFACE", "lo");
    Proc::spawn(c)
}

fn writer(base: u64) -> Proc {
    let mut c = Command::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        "crash_writer_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(WRITER_ENV, base.to_string())
    .env("HALYARD_INTERFACE", "lo");
    Proc::spawn(c)
}

/// The highest `acked N` a writer printed.
fn acked(p: &Proc) -> Option<u64> {
    p.seen
        .iter()
        .filter_map(|l| l.strip_prefix("acked ")?.trim().parse().ok())
        .max()
}

/// A reader started now: every sequence number it gets within the time allowed, once it
/// holds `until` (or after `limit`).
fn late_reader(until: Option<u64>, limit: Duration) -> Vec<u64> {
    let p = DomainParticipant::with_options(DOMAIN, options()).expect("participant");
    let t = p.create_topic::<Indicator>(TOPIC).expect("topic");
    let r = p
        .create_subscriber(GroupQos::default())
        .create_datareader(&t, reader_qos())
        .expect("reader");
    let mut got = Vec::new();
    let end = Instant::now() + limit;
    let done = |got: &Vec<u64>| until.is_some_and(|u| got.contains(&u));
    while Instant::now() < end && !done(&got) {
        r.wait_for_data(Duration::from_millis(50));
        for s in r.take(100_000).expect("take") {
            if let Some(d) = s.data {
                got.push(d.seq);
            }
        }
    }
    // Copies, if any, would follow within moments.
    std::thread::sleep(Duration::from_millis(300));
    for s in r.take(100_000).expect("take") {
        if let Some(d) = s.data {
            got.push(d.seq);
        }
    }
    got
}

/// xorshift64*: the kill schedule.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

#[test]
fn kill_9_of_writer_or_service_loses_no_stored_sample() {
    let seed: u64 = std::env::var("HALYARD_CRASH_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(0x5eed_d0ab_1e00_0012);
    let iterations: u64 = std::env::var("HALYARD_CRASH_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let replay = format!("replay: HALYARD_CRASH_SEED={seed:#x}");
    let mut rng = Rng(seed | 1);
    let dir = scratch("writer-service");
    let store = dir.join("store.sqlite");
    let mut svc = service(&store);
    // Everything acknowledged as stored so far.
    let mut acknowledged: Vec<u64> = Vec::new();
    for i in 0..iterations {
        let base = (i + 1) * 1_000_000;
        // A reader catching up meanwhile, killed at its own random moment.
        let mut r = reader_process();
        let reader_dies_at = Instant::now() + Duration::from_millis(rng.next() % 600);
        let mut w = writer(base);
        assert!(
            w.wait_for("writing", Duration::from_secs(20)),
            "iteration {i}: the writer never matched the service ({replay}): {:?}",
            &w.seen[..w.seen.len().min(5)]
        );
        std::thread::sleep(Duration::from_millis(20 + rng.next() % 400));
        std::thread::sleep(reader_dies_at.saturating_duration_since(Instant::now()));
        r.kill9();
        let victim = rng.next() % 3;
        if victim != 1 {
            w.kill9();
        }
        if victim != 0 {
            svc.kill9();
        }
        w.kill9();
        if let Some(top) = acked(&w) {
            acknowledged.extend(base..=top);
        }
        if victim != 0 {
            svc = service(&store);
        }
        let want_last = acknowledged.last().copied();
        let got = late_reader(want_last, Duration::from_secs(20));
        assert!(
            got.windows(2).all(|p| p[0] < p[1]),
            "iteration {i} (victim {victim}): not exactly once in order ({replay}): {got:?}"
        );
        let missing: Vec<u64> = acknowledged
            .iter()
            .copied()
            .filter(|s| got.binary_search(s).is_err())
            .collect();
        assert!(
            missing.is_empty(),
            "iteration {i} (victim {victim}): {} acknowledged samples never delivered, first {:?} ({replay})",
            missing.len(),
            &missing[..missing.len().min(10)]
        );
        eprintln!(
            "iteration {i}: victim {} acknowledged {} delivered {}",
            ["writer", "service", "both"][victim as usize],
            acknowledged.len(),
            got.len()
        );
    }
    svc.kill9();
}

/// The contract, with `halyard shapes`: a PERSISTENT shape written while the service
/// ran is delivered to a subscriber started after the publisher exited and the service was
/// killed with -9 and restarted on the same store.
#[test]
fn a_persistent_shape_outlives_its_publisher_and_a_kill_9_of_the_service() {
    let dir = scratch("shapes");
    let store = dir.join("shapes.sqlite");
    let shapes = |args: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
        c.arg("shapes")
            .args(args.split_whitespace())
            .env("HALYARD_INTERFACE", "lo")
            .env("HALYARD_DURABILITY", "off");
        c
    };
    let mut svc = {
        let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
        c.args(["durability", "--store"])
            .arg(&store)
            .args(["--domain", "72", "--status", "0"])
            .env("HALYARD_INTERFACE", "lo");
        let mut p = Proc::spawn(c);
        assert!(p.wait_for("durability service ready", Duration::from_secs(20)));
        p
    };
    // Ten shapes, the last of size 10, while the service runs; then the publisher exits.
    let publisher = shapes(
        "-P -d 72 -t Square -c RED -r -D p -k 0 -z 0 -w --num-iterations 10 --write-period 100",
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .output()
    .expect("publisher");
    assert!(
        publisher.status.success(),
        "{}",
        String::from_utf8_lossy(&publisher.stdout)
    );
    svc.kill9();
    let mut svc = {
        let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
        c.args(["durability", "--store"])
            .arg(&store)
            .args(["--domain", "72", "--status", "0"])
            .env("HALYARD_INTERFACE", "lo");
        let mut p = Proc::spawn(c);
        assert!(
            p.wait_for("durability service ready", Duration::from_secs(20)),
            "the store did not open after kill -9: {:?}",
            p.seen
        );
        p
    };
    let subscriber =
        shapes("-S -d 72 -t Square -r -D p -k 0 --num-iterations 40 --read-period 100")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .output()
            .expect("subscriber");
    svc.kill9();
    let out = String::from_utf8_lossy(&subscriber.stdout);
    let sizes: Vec<u32> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, "RED", _, _, size, ..] if size.starts_with('[') => {
                    size.trim_matches(|c| c == '[' || c == ']').parse().ok()
                }
                _ => None,
            }
        })
        .collect();
    assert_eq!(
        sizes,
        (1..=10).collect::<Vec<_>>(),
        "every persisted shape, in order:\n{out}"
    );
}

#[test]
fn a_bad_embedded_sync_level_or_commit_policy_is_refused_with_its_name() {
    for (variable, value) in [
        ("HALYARD_DURABILITY_SYNC", "fast"),
        ("HALYARD_DURABILITY_COMMIT", "batch:0"),
    ] {
        refused_with_its_name(variable, value);
    }
}

fn refused_with_its_name(variable: &str, value: &str) {
    let dir = scratch("bad-env");
    let out = Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(["perf", "-D", "1", "-i", "63", "--durability", "persistent"])
        .args(["pub", "size", "1k"])
        .env("HALYARD_DURABILITY_STORE", dir.join("store.sqlite"))
        .env(variable, value)
        .env("HALYARD_INTERFACE", "lo")
        .output()
        .expect("run halyard perf");
    // halyard perf prints its errors in ddsperf's way, on standard output.
    let said = printed(&out);
    assert_eq!(out.status.code(), Some(2), "output: {said}");
    assert!(
        said.contains(variable) && said.contains(&format!("{value:?}")),
        "output: {said}"
    );
    assert!(
        !dir.join("store.sqlite").exists(),
        "no store is created before the service's settings are known"
    );
}

/// The writer process of `a_writer_blocked_on_its_embedded_service_is_not_held_to_the_batch`:
/// a PERSISTENT writer whose history holds 8 samples writes 64 and waits for their
/// acknowledgment, each within 10 s, while its embedded service's batch lasts 10 minutes.
#[test]
#[ignore = "a child process of a_writer_blocked_on_its_embedded_service_is_not_held_to_the_batch"]
fn blocked_writer_child() {
    if std::env::var(BLOCKED_ENV).is_err() {
        return;
    }
    let p = DomainParticipant::with_options(
        DOMAIN + 1,
        // The embedded service's store and commit policy come from the environment.
        ParticipantOptions::from_env().expect("options from the environment"),
    )
    .expect("participant");
    let t = p.create_topic::<Indicator>(TOPIC).expect("topic");
    let mut q = writer_qos();
    q.resource_limits.max_samples = 8;
    q.reliability.max_blocking_time = halyard::qos::dds_duration(Duration::from_secs(10));
    let w = p
        .create_publisher(GroupQos::default())
        .create_datawriter(&t, q)
        .expect("writer");
    for seq in 0..64 {
        let s = Indicator {
            source: (seq % 3) as u32,
            seq,
            body: format!("indicator {seq}"),
        };
        w.write(&s)
            .unwrap_or_else(|e| panic!("write {seq} waited for the batch: {e}"));
    }
    w.wait_for_acknowledgments(Duration::from_secs(10))
        .expect("the service commits when asked");
    let stats = p.embedded_durability_stats().expect("an embedded service");
    println!("stored {}", stats.stored);
}

#[test]
fn a_writer_blocked_on_its_embedded_service_is_not_held_to_the_batch() {
    // The embedded service commits (and so acknowledges) at the end of a batch. A writer
    // whose full history waits on that acknowledgment, or that waits for acknowledgments,
    // asks for the commit at once: with a batch of 10 minutes, 64 writes through a history of
    // 8 finish, where each one past the 8th would otherwise time out after 10 s.
    let dir = scratch("blocked");
    let out = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "blocked_writer_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(BLOCKED_ENV, "1")
        .env("HALYARD_DURABILITY_STORE", dir.join("store.sqlite"))
        .env("HALYARD_DURABILITY_COMMIT", "batch:1000000:600000")
        .env("HALYARD_INTERFACE", "lo")
        .output()
        .expect("run the writer");
    let said = printed(&out);
    assert!(out.status.success(), "output: {said}");
    assert!(said.contains("stored 64"), "output: {said}");
}

/// The voluntary context switches of process `pid`'s threads named `name` (as `comm` shows
/// it, 15 characters at most), summed.
fn voluntary_switches(pid: u32, name: &str) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads");
    let mut total = 0;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() != name {
            continue;
        }
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

#[test]
fn an_idle_service_sleeps_until_it_has_something_to_do() {
    // With nothing to store, commit or clean up, the service thread wakes for its cleanup
    // tick (10 times a second) and discovery's rare news; it once woke every millisecond.
    let dir = scratch("idle");
    let mut svc = service(&dir.join("store.sqlite"));
    std::thread::sleep(Duration::from_millis(500));
    let pid = svc.child.id();
    let before = voluntary_switches(pid, "halyard-durabil");
    std::thread::sleep(Duration::from_secs(2));
    let woke = voluntary_switches(pid, "halyard-durabil") - before;
    svc.kill9();
    assert!(
        woke < 100,
        "the idle service thread woke {woke} times in 2 s: {:?}",
        svc.seen
    );
}

/// What a finished process printed, standard output then standard error.
fn printed(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
