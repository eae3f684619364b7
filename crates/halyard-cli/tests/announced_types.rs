//! Proves that every Halyard writer announces its type, with real processes on loopback:
//! `cyclonedds typeof` prints the ShapeType IDL for a `halyard shapes -P` writer, the
//! KeyedSeq IDL for a `halyard perf` writer, and the IDL of a derived type with nested
//! members for a writer of it (and `cyclonedds subscribe` decodes its samples); and that
//! `halyard sub` without `--idl` decodes a durable topic that only a `halyard durability`
//! service serves, its writer gone, before and after the service is killed and restarted.
//! Domains 170-173.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "../../halyard/tests/common/python_peer.rs"]
mod python_peer;

#[path = "common/proc.rs"]
mod proc_util;

use halyard::durability::EmbeddedDurability;
use halyard::qos::{Durability, History, ReliabilityKind};
use halyard::{
    DataWriterQos, DomainParticipant, EndpointTypeInformation, ParticipantOptions, PublisherQos,
};
use proc_util::Proc;
use python_peer::{cyclonedds_cli, cyclonedds_cli_available};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn halyard_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.args(args)
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null());
    c
}

/// Runs `halyard ARGS` (killed after 40 s by `timeout`).
fn halyard(args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("40")
        .arg(env!("CARGO_BIN_EXE_halyard"))
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .env("HALYARD_DURABILITY", "off")
        .stdin(Stdio::null())
        .output()
        .expect("run halyard")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// `cyclonedds typeof TOPIC` in `domain`, for at most 10 s of discovery.
fn cyclone_typeof(topic: &str, domain: &str) -> String {
    let (out, err) = cyclonedds_cli(&["typeof", topic, "--id", domain, "-r", "5s"], 30);
    assert!(
        !out.trim().is_empty(),
        "cyclonedds typeof printed nothing: {err}"
    );
    out
}

/// `halyard typeof TOPIC` in `domain` (our printer names `uint8` and `octet` apart; the
/// `cyclonedds` CLI prints IDL `uint8` as `octet` and `octet` as `byte`).
fn halyard_typeof(topic: &str, domain: &str) -> String {
    let o = halyard(&["typeof", topic, "--id", domain, "--timeout", "20"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "halyard typeof failed:\n{out}\n{err}");
    out
}

/// Asserts every line of `idl` appears in `out` (whitespace-normalised, in order).
fn assert_idl(out: &str, idl: &[&str]) {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<String> = out.lines().map(norm).filter(|l| !l.is_empty()).collect();
    let mut at = 0;
    for want in idl {
        let want = norm(want);
        match lines[at..].iter().position(|l| *l == want) {
            Some(i) => at += i + 1,
            None => panic!("`{want}` not found (in order) in:\n{out}"),
        }
    }
}

#[test]
fn cyclonedds_typeof_prints_the_shape_type_of_a_halyard_shapes_writer() {
    if !cyclonedds_cli_available() {
        return;
    }
    let mut c = halyard_cmd(&["shapes", "-P", "-t", "Square", "-c", "RED", "-d", "170"]);
    c.arg("-w");
    let mut shapes = Proc::spawn(c);
    assert!(
        shapes.wait_for("Create writer", Duration::from_secs(15)),
        "{:?}",
        shapes.seen
    );
    let out = cyclone_typeof("Square", "170");
    let ours = halyard_typeof("Square", "170");
    shapes.kill9();
    let idl = |payload: &'static str| {
        [
            "@appendable",
            "struct ShapeType {",
            "@key string<128> color;",
            "long x;",
            "long y;",
            "long shapesize;",
            payload,
            "};",
        ]
    };
    // `octet` (Cyclone 0.10's `uint8`; the `cyclonedds` CLI prints it `byte`).
    assert_idl(&out, &idl("sequence<byte> additional_payload_size;"));
    assert_idl(&ours, &idl("sequence<octet> additional_payload_size;"));
}

#[test]
fn cyclonedds_typeof_prints_the_keyed_seq_of_a_halyard_perf_writer() {
    if !cyclonedds_cli_available() {
        return;
    }
    let c = halyard_cmd(&["perf", "-D", "30", "-i", "171", "pub", "size", "100"]);
    let mut perf = Proc::spawn(c);
    let out = cyclone_typeof("DDSPerfRDataKS", "171");
    let ours = halyard_typeof("DDSPerfRDataKS", "171");
    perf.kill9();
    let idl = |baggage: &'static str| {
        [
            "@final",
            "struct KeyedSeq {",
            "unsigned long seq;",
            "@key unsigned long keyval;",
            baggage,
            "};",
        ]
    };
    assert_idl(&out, &idl("sequence<byte> baggage;"));
    assert_idl(&ours, &idl("sequence<octet> baggage;"));
}

/// A derived type with members of other derived types (described at first use).
mod derived {
    #[derive(halyard::CdrType, Clone, Copy, Debug, Default, PartialEq)]
    #[topic(type_name = "Derived::Level")]
    #[allow(clippy::upper_case_acronyms)]
    pub enum Level {
        #[default]
        LOW,
        HIGH,
    }

    #[derive(halyard::CdrType, Clone, Debug, Default, PartialEq)]
    #[topic(type_name = "Derived::Position")]
    pub struct Position {
        pub x: i32,
        pub y: f64,
    }

    #[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
    #[topic(type_name = "Derived::Reading", extensibility = "appendable")]
    pub struct Reading {
        #[key]
        pub sensor: u32,
        pub level: Level,
        pub at: Position,
        pub trail: Vec<Position>,
        pub note: Option<String>,
    }

    pub fn sample(sensor: u32) -> Reading {
        Reading {
            sensor,
            level: Level::HIGH,
            at: Position {
                x: -3,
                y: 0.5 * f64::from(sensor),
            },
            trail: vec![Position { x: 1, y: 2.0 }],
            note: Some(format!("reading {sensor}")),
        }
    }
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            durability: EmbeddedDurability::Off,
            ..Default::default()
        },
    )
    .expect("participant")
}

fn writer_qos(durability: Durability) -> DataWriterQos {
    let mut q = DataWriterQos::default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q.history = History::KeepAll;
    q.durability = durability;
    q.durability_service.history = History::KeepAll;
    q.writer_data_lifecycle.autodispose_unregistered_instances = false;
    q
}

#[test]
fn cyclonedds_reads_the_type_and_samples_of_a_derived_type_writer() {
    if !cyclonedds_cli_available() {
        return;
    }
    let dp = participant(172);
    let t = dp
        .create_topic::<derived::Reading>("DerivedReadings")
        .expect("topic");
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, writer_qos(Durability::TransientLocal))
        .expect("writer");
    for s in 1..=2 {
        w.write(&derived::sample(s)).expect("write");
    }
    let out = cyclone_typeof("DerivedReadings", "172");
    assert_idl(
        &out,
        &[
            "module Derived {",
            "enum Level {",
            "struct Position {",
            "long x;",
            "double y;",
            "@appendable",
            "struct Reading {",
            "@key unsigned long sensor;",
            "Derived::Level level;",
            "Derived::Position at;",
            "sequence<Derived::Position> trail;",
            "@optional string note;",
        ],
    );
    let (sub, err) = cyclonedds_cli(
        &["subscribe", "DerivedReadings", "--id", "172", "-r", "6s"],
        30,
    );
    drop(w);
    assert!(
        sub.contains("reading 1") && sub.contains("reading 2"),
        "cyclonedds subscribe did not decode the samples:\n{sub}\n{err}"
    );
}

/// The `halyard durability` service of `domain` on `store`, once it is ready.
fn service(store: &Path, domain: &str) -> Proc {
    let mut c = halyard_cmd(&["durability", "--status", "0", "--domain", domain, "--store"]);
    c.arg(store);
    let mut p = Proc::spawn(c);
    assert!(
        p.wait_for("durability service ready", Duration::from_secs(20)),
        "the service did not start: {:?}",
        p.seen
    );
    p
}

/// Waits (at most 20 s) until a relay of `topic` announces a TypeInformation.
fn relay_announces_type(dp: &DomainParticipant, topic: &str) -> bool {
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        let typed = dp.discovered_publications().iter().any(|e| {
            e.topic_name == topic
                && e.entity_name.as_deref() == Some(halyard_core::RELAY_WRITER_NAME)
                && e.decoded_type_information().is_some()
        });
        if typed {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// `halyard sub TOPIC` without `--idl`: the samples it prints as JSON.
fn sub_without_idl(topic: &str, domain: &str, when: &str, count: usize) -> Vec<String> {
    let n = count.to_string();
    let o = halyard(&[
        "sub",
        topic,
        "--id",
        domain,
        "--reliable",
        "--durability",
        "persistent",
        "--json",
        "--count",
        &n,
        "--timeout",
        "20",
    ]);
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "{when}: halyard sub failed:\n{out}\n{err}"
    );
    out.lines().map(str::to_string).collect()
}

#[test]
fn halyard_sub_decodes_a_topic_only_the_durability_service_serves_also_after_its_restart() {
    let dir = std::env::temp_dir().join(format!("halyard-relay-type-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let store = dir.join("store.sqlite");
    let mut svc = service(&store, "173");
    {
        // The original writer, gone before the readers come.
        let dp = participant(173);
        let t = dp
            .create_topic::<derived::Reading>("ServedReadings")
            .expect("topic");
        let w = dp
            .create_publisher(PublisherQos::default())
            .create_datawriter(&t, writer_qos(Durability::Persistent))
            .expect("writer");
        w.wait_for_durability_services(1, Duration::from_secs(20))
            .expect("the service's reader matches");
        for s in 1..=3 {
            w.write(&derived::sample(s)).expect("write");
        }
        w.wait_for_acknowledgments(Duration::from_secs(20))
            .expect("the service stored the samples");
        // The writer stays until the service has its type (it fetches it from the writer's
        // participant); what a reader sees without it is checked below.
        let _ = relay_announces_type(&dp, "ServedReadings");
    }
    let check = |lines: Vec<String>, when: &str| {
        assert_eq!(lines.len(), 3, "{when}: {lines:?}");
        for (i, l) in lines.iter().enumerate() {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON sample");
            assert_eq!(v["sensor"], i + 1, "{when}: {l}");
            assert_eq!(v["level"], "HIGH", "{when}: {l}");
            assert_eq!(v["at"]["x"], -3, "{when}: {l}");
            assert_eq!(v["note"], format!("reading {}", i + 1), "{when}: {l}");
        }
    };
    check(
        sub_without_idl("ServedReadings", "173", "served live", 3),
        "served live",
    );
    svc.kill9();
    let _svc = service(&store, "173");
    check(
        sub_without_idl("ServedReadings", "173", "served after a restart", 3),
        "served after a restart",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
