//! Proves, with real processes over loopback, that a durable instance's last value survives
//! its writer: a `halyard durability` service keeps each instance's last data samples (the
//! DURABILITY_SERVICE history: KEEP_LAST 1 and KEEP_ALL) beside its unregistration, whether
//! the writer (this test binary run as `durable_writer_child`, or `halyard shapes` as in the
//! user guide) ends by SIGINT or by kill -9, and a reader that starts afterwards gets them and the
//! instance's state, from the live service and from one restarted after kill -9, with no
//! status of the service's relay (matched, liveliness, deadline); and that `halyard pub
//! --durability persistent|transient` leaves its instances alive (or disposes them with
//! `--dispose`), waits until a service that never saw the topic stored its samples, and warns
//! when no service does. Domains 155-162.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "common/proc.rs"]
mod proc_util;

use halyard::durability::EmbeddedDurability;
use halyard::qos::{DdsDuration, DurabilityKind, EndpointQos, History, ReliabilityKind};
use halyard::{DomainParticipant, GroupQos, InstanceState, ParticipantOptions};
use proc_util::Proc;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOPIC: &str = "Gauges";
const WRITER_ENV: &str = "HALYARD_DURABLE_WRITER";
const T: Duration = Duration::from_secs(20);
/// The DEADLINE the writer offers and the late reader of its values asks: 100 ms.
fn deadline() -> DdsDuration {
    DdsDuration::from_nanos(100_000_000)
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "Durable::Gauge")]
struct Gauge {
    #[key]
    id: i32,
    value: i32,
}

/// Instance 1 gets values 1..=10, instance 2 values 101..=105.
fn written() -> Vec<Gauge> {
    let a = (1..=10).map(|value| Gauge { id: 1, value });
    let b = (101..=105).map(|value| Gauge { id: 2, value });
    a.chain(b).collect()
}

fn options() -> ParticipantOptions {
    ParticipantOptions {
        interface: Some("lo".into()),
        durability: EmbeddedDurability::Off,
        ..Default::default()
    }
}

/// The writer process: a PERSISTENT writer whose DURABILITY_SERVICE history is
/// `HALYARD_DURABLE_WRITER` (`keep-last` 1 or `keep-all`) writes [`written`], prints
/// `stored` once a service stored it all, then waits for SIGINT, on which it deletes its
/// writer (which unregisters its instances, not disposing them) and exits.
#[test]
#[ignore = "a child process of the durable_last_value tests"]
fn durable_writer_child() {
    let Ok(history) = std::env::var(WRITER_ENV) else {
        return;
    };
    let domain: u32 = std::env::var("HALYARD_DURABLE_DOMAIN")
        .expect("a domain")
        .parse()
        .expect("a domain");
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst)).expect("SIGINT handler");
    let p = DomainParticipant::with_options(domain, options()).expect("participant");
    let t = p.create_topic::<Gauge>(TOPIC).expect("topic");
    let mut q = EndpointQos::writer_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q.durability = DurabilityKind::Persistent;
    q.durability_service.history = match history.as_str() {
        "keep-all" => History::KeepAll,
        _ => History::KeepLast(1),
    };
    q.writer_data_lifecycle.autodispose_unregistered_instances = false;
    // Readers that ask for a deadline match it, and its service's relay.
    q.deadline = deadline();
    let w = p
        .create_publisher(GroupQos::default())
        .create_datawriter(&t, q)
        .expect("writer");
    for g in written() {
        w.write(&g).expect("write");
    }
    w.wait_for_stored(1, T)
        .expect("a service stores the samples");
    println!("stored");
    while !interrupted.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(w);
    drop(p);
    println!("left");
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halyard-lastvalue-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn service(store: &Path, domain: u32) -> Proc {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.args(["durability", "--store"]).arg(store).args([
        "--domain",
        &domain.to_string(),
        "--status",
        "1",
    ]);
    let mut p = Proc::spawn(c);
    assert!(
        p.wait_for("durability service ready", T),
        "the service did not start: {:?}",
        p.seen
    );
    p
}

fn writer_child(domain: u32, history: &str) -> Proc {
    let mut c = Command::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        "durable_writer_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(WRITER_ENV, history)
    .env("HALYARD_DURABLE_DOMAIN", domain.to_string());
    let mut p = Proc::spawn(c);
    assert!(
        p.wait_for("stored", T),
        "the writer's samples were not stored: {:?}",
        p.seen
    );
    p
}

/// What a reader started now gets: each instance's values in order, and the instance states
/// its samples reported.
struct Late {
    values: BTreeMap<i32, Vec<i32>>,
    states: BTreeMap<i32, Vec<InstanceState>>,
    matched: u32,
    alive: u32,
    deadline_missed: u32,
}

/// A PERSISTENT reader (with [`deadline`]'s if `with_deadline`) started now: what it got once
/// `want` values arrived (or `T` passed), and a second more (for copies, late states and
/// deadlines).
fn late_reader(domain: u32, want: usize, with_deadline: bool) -> Late {
    let p = DomainParticipant::with_options(domain, options()).expect("participant");
    let t = p.create_topic::<Gauge>(TOPIC).expect("topic");
    let mut q = EndpointQos::reader_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q.durability = DurabilityKind::Persistent;
    if with_deadline {
        q.deadline = deadline();
    }
    let r = p
        .create_subscriber(GroupQos::default())
        .create_datareader(&t, q)
        .expect("reader");
    let mut late = Late {
        values: BTreeMap::new(),
        states: BTreeMap::new(),
        matched: 0,
        alive: 0,
        deadline_missed: 0,
    };
    let take = |late: &mut Late| {
        for s in r.take(1000).expect("take") {
            let id = s.data.as_ref().map(|g| g.id).unwrap_or_else(|| {
                // A sample without data: its instance is known by its handle.
                r.lookup_instance(&Gauge { id: 1, value: 0 })
                    .ok()
                    .filter(|h| *h == s.info.instance_handle)
                    .map_or(2, |_| 1)
            });
            if let Some(g) = &s.data {
                late.values.entry(id).or_default().push(g.value);
            }
            late.states
                .entry(id)
                .or_default()
                .push(s.info.instance_state);
        }
    };
    let end = Instant::now() + T;
    while late.values.values().map(Vec::len).sum::<usize>() < want && Instant::now() < end {
        r.wait_for_data(Duration::from_millis(50));
        take(&mut late);
    }
    let settle = Instant::now() + Duration::from_secs(1);
    while Instant::now() < settle {
        r.wait_for_data(Duration::from_millis(50));
        take(&mut late);
    }
    late.matched = r.subscription_matched_status().unwrap().total_count;
    late.alive = r.liveliness_changed_status().unwrap().alive_count;
    late.deadline_missed = r.requested_deadline_missed_status().unwrap().total_count;
    late
}

/// How the writer ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ending {
    Sigint,
    Kill9,
}

/// The writer writes, its samples are stored, it ends; a late reader gets each instance's
/// last values (and, when it unregistered them, their state) from the live service, then
/// from one restarted after kill -9.
fn last_values_survive(domain: u32, keep_all: bool, ending: Ending) {
    let dir = scratch(&format!("{domain}"));
    let store = dir.join("store.sqlite");
    let mut svc = service(&store, domain);
    let mut w = writer_child(domain, if keep_all { "keep-all" } else { "keep-last" });
    match ending {
        Ending::Sigint => assert!(w.interrupt(T), "the writer's exit: {:?}", w.seen),
        Ending::Kill9 => w.kill9(),
    }
    let want: BTreeMap<i32, Vec<i32>> = match keep_all {
        true => [(1, (1..=10).collect()), (2, (101..=105).collect())].into(),
        false => [(1, vec![10]), (2, vec![105])].into(),
    };
    let count = want.values().map(Vec::len).sum();
    for phase in ["live service", "service restarted after kill -9"] {
        let late = late_reader(domain, count, true);
        let what = format!("{ending:?}, keep_all {keep_all}, {phase}");
        assert_eq!(late.values, want, "{what}: the last values, once, in order");
        if ending == Ending::Sigint {
            for id in [1, 2] {
                assert_eq!(
                    late.states[&id].last(),
                    Some(&InstanceState::NotAliveNoWriters),
                    "{what}: instance {id} was unregistered by its writer: {:?}",
                    late.states
                );
            }
        }
        assert_eq!(
            (late.matched, late.alive, late.deadline_missed),
            (0, 0, 0),
            "{what}: no status from the service's relay (matched, alive, deadline missed)"
        );
        if phase == "live service" {
            svc.kill9();
            svc = service(&store, domain);
        }
    }
}

#[test]
fn keep_last_1_writer_interrupted() {
    last_values_survive(155, false, Ending::Sigint);
}

#[test]
fn keep_last_1_writer_killed() {
    last_values_survive(156, false, Ending::Kill9);
}

#[test]
fn keep_all_writer_interrupted() {
    last_values_survive(157, true, Ending::Sigint);
}

#[test]
fn keep_all_writer_killed() {
    last_values_survive(158, true, Ending::Kill9);
}

fn shapes(domain: u32, args: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.arg("shapes")
        .args(["-d", &domain.to_string()])
        .args(args.split_whitespace())
        .env("HALYARD_DURABILITY", "off");
    c
}

/// The size of each RED sample line `halyard shapes` printed.
fn red_sizes(lines: &[String]) -> Vec<u32> {
    lines
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, "RED", _, _, size, ..] if size.starts_with('[') => {
                    size.trim_matches(|c| c == '[' || c == ']').parse().ok()
                }
                _ => None,
            }
        })
        .collect()
}

/// The user guide's durability example: `halyard shapes -P -t Square -c RED -D p` for a while, ended by
/// SIGINT, with the durability service running; then `halyard shapes -S -t Square -D p`
/// prints the last shape and its state (no writers), live and after a restart of the
/// service, and no matched writer (the relay is no peer).
#[test]
fn the_readme_example_prints_the_last_shape_and_its_state() {
    let domain = 159;
    let dir = scratch("readme");
    let store = dir.join("store.sqlite");
    let mut svc = service(&store, domain);
    let mut publisher = Proc::spawn(shapes(
        domain,
        "-P -t Square -c RED -D p -z 0 -w --write-period 50",
    ));
    assert!(
        publisher.wait_until(T, |seen| red_sizes(seen).len() >= 8),
        "the publisher: {:?}",
        publisher.seen
    );
    assert!(publisher.interrupt(T), "{:?}", publisher.seen);
    let last = *red_sizes(&publisher.seen).last().expect("a shape written");
    for phase in ["live service", "service restarted after kill -9"] {
        let out = shapes(
            domain,
            "-S -t Square -D p --num-iterations 15 --read-period 100",
        )
        .env("HALYARD_INTERFACE", "lo")
        .stdin(Stdio::null())
        .output()
        .expect("subscriber");
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        assert_eq!(
            red_sizes(&lines),
            vec![last],
            "{phase}: the last shape:\n{text}"
        );
        assert!(
            text.contains("NOT_ALIVE_NO_WRITERS_INSTANCE_STATE"),
            "{phase}: its state:\n{text}"
        );
        assert!(!text.contains("matched writers"), "{phase}:\n{text}");
        if phase == "live service" {
            svc.kill9();
            svc = service(&store, domain);
        }
    }
}

fn data(file: &str) -> String {
    format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `halyard pub` on `domain` with `args`, then the samples; its output.
fn publish(domain: u32, args: &[&str], samples: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args([
            "pub",
            TOPIC,
            "-i",
            &domain.to_string(),
            "--idl",
            &data("gauge.idl"),
        ])
        .args(args)
        .args(samples)
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null())
        .output()
        .expect("halyard pub")
}

/// A short-lived `halyard pub --durability persistent` on a topic the service has never seen:
/// it waits until the service (which makes its reader for the topic only once it discovers
/// the writer) stored the samples, leaves its instances alive, and a later reader gets them.
#[test]
fn pub_waits_for_a_service_that_never_saw_the_topic_and_leaves_its_instances_alive() {
    let domain = 160;
    let dir = scratch("pub");
    let _svc = service(&dir.join("store.sqlite"), domain);
    let out = publish(
        domain,
        &["--durability", "persistent", "--timeout", "10"],
        &[r#"{"id":1,"value":7}"#, r#"{"id":2,"value":8}"#],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let late = late_reader(domain, 2, false);
    assert_eq!(
        late.values,
        [(1, vec![7]), (2, vec![8])].into(),
        "stored before pub exited"
    );
    for id in [1, 2] {
        assert_eq!(
            late.states[&id].last(),
            Some(&InstanceState::NotAliveNoWriters),
            "unregistered, not disposed: {:?}",
            late.states
        );
    }
}

/// `--dispose` disposes the instances as pub exits: the service purges them (cleanup delay
/// 0), and a later reader gets nothing of them.
#[test]
fn pub_dispose_has_the_service_purge_its_instances() {
    let domain = 161;
    let dir = scratch("dispose");
    let mut svc = service(&dir.join("store.sqlite"), domain);
    let out = publish(
        domain,
        &["--durability", "transient", "--dispose"],
        &[r#"{"id":3,"value":9}"#],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        svc.wait_for("purged 1", T),
        "the disposed instance is purged: {:?}",
        svc.seen
    );
    let late = late_reader(domain, 1, false);
    assert!(late.values.is_empty(), "{:?}", late.values);
}

/// Without a durability service, `halyard pub --durability transient` says so once its
/// `--timeout` passed, and exits 0: what it wrote was published.
#[test]
fn pub_warns_when_no_service_stored_its_samples() {
    let start = Instant::now();
    let out = publish(
        162,
        &["--durability", "transient", "--timeout", "1"],
        &[r#"{"id":1,"value":1}"#],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: no durability service outside this process stored"),
        "{stderr}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "bounded by --timeout"
    );
}
