//! Proves that `halyard ls --json` and `halyard ps --json` report Halyard and Cyclone DDS (python) participants, endpoints, QoS and processes as those peers announce them, that `cyclonedds ps` finds a Halyard process by its pid, and that bad arguments exit 2 with the usage.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "../../halyard/tests/common/python_peer.rs"]
mod python_peer;

use halyard::qos::{Durability, History};
use halyard::{
    DataWriter, DataWriterQos, DomainParticipant, ParticipantOptions, PublisherQos, Topic,
};
use python_peer::{peer_available, secs, Peer, CYCLONE_URI};
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardKeyed")]
struct Keyed {
    #[key]
    id: i32,
    seq: u32,
    payload: Vec<u8>,
}

/// A Halyard participant of this process with a writer on `topic`: TRANSIENT_LOCAL, KEEP_LAST
/// 7, partition `ls_part`, a 2 s deadline, named `ls-writer`.
fn halyard_writer(domain: u32, topic: &str) -> (DomainParticipant, DataWriter<Keyed>) {
    let dp = DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            entity_name: Some("ls-test".into()),
            ..Default::default()
        },
    )
    .expect("participant");
    let t: Topic<Keyed> = dp.create_topic(topic).unwrap();
    let mut q = DataWriterQos::default();
    q.durability = Durability::TransientLocal;
    q.history = History::KeepLast(7);
    q.deadline = Duration::from_secs(2);
    let publisher = dp.create_publisher(PublisherQos::default().partition(["ls_part"]));
    let wr = publisher.create_datawriter(&t, q).unwrap();
    (dp, wr)
}

/// Runs the `halyard` binary with `args` on loopback.
fn halyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(args)
        .env("HALYARD_INTERFACE", "lo")
        .stdin(Stdio::null())
        .output()
        .expect("run halyard")
}

/// Runs `halyard CMD --json` and parses its document.
fn halyard_json(args: &[&str]) -> Value {
    let out = halyard(args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The participant of `doc` whose `pid` is `pid`.
fn participant_of(doc: &Value, pid: u32) -> &Value {
    doc["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("no participant with pid {pid} in {doc:#}"))
}

/// The endpoints of kind `kind` on `topic` of participant `p`.
fn endpoints<'a>(p: &'a Value, topic: &str, kind: &str) -> &'a Vec<Value> {
    p["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == topic)
        .unwrap_or_else(|| panic!("no topic {topic} in {p:#}"))[kind]
        .as_array()
        .unwrap()
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A python Cyclone DDS reader of `topic` (partition `py_part`) and a TRANSIENT_LOCAL writer
/// of it that wrote 3 samples, both in one process each; waits until both are up.
fn python_peers(domain: u32, topic: &str) -> (Peer, Peer) {
    let d = domain.to_string();
    let sub = Peer::spawn(
        "cyclone_sub.py",
        &[
            "--domain",
            &d,
            "--topic",
            topic,
            "--partition",
            "py_part",
            "--count",
            "1000",
            "--timeout",
            "20",
        ],
    );
    let publisher = Peer::spawn(
        "cyclone_pub.py",
        &[
            "--domain",
            &d,
            "--topic",
            topic,
            "--durability",
            "transient-local",
            "--count",
            "3",
            "--linger",
            "20",
            "--timeout",
            "20",
        ],
    );
    assert!(
        sub.wait_line("\"ready\"", secs(10.0)),
        "python reader did not start"
    );
    assert!(
        publisher.wait_line("\"wrote\"", secs(10.0)),
        "python writer did not start"
    );
    (sub, publisher)
}

#[test]
fn ls_json_sees_halyard_and_cyclone_endpoints_with_qos() {
    if !peer_available() {
        return;
    }
    let (_dp, _wr) = halyard_writer(83, "LsHalyard");
    let (sub, publisher) = python_peers(83, "LsCyclone");
    let doc = halyard_json(&["ls", "--id", "83", "--duration", "3", "--json"]);
    assert_eq!(doc["domain_id"], 83);

    let me = participant_of(&doc, std::process::id());
    assert_eq!(me["vendor"], "Halyard");
    assert_eq!(me["name"], "ls-test");
    assert_eq!(me["host"], host_name());
    let w = &endpoints(me, "LsHalyard", "writers")[0];
    assert_eq!(w["kind"], "writer");
    assert_eq!(w["type_name"], "HalyardKeyed");
    assert_eq!(w["partitions"], serde_json::json!(["ls_part"]));
    assert_eq!(w["durability"], "transient_local");
    assert_eq!(
        w["history"],
        serde_json::json!({"kind": "keep_last", "depth": 7})
    );
    assert_eq!(w["reliability"]["kind"], "reliable");
    assert_eq!(w["deadline_s"], 2.0);
    assert_eq!(w["liveliness"]["lease_duration_s"], Value::Null);

    // As the python scripts (tests/peers) create them.
    let r = &endpoints(participant_of(&doc, sub.child.id()), "LsCyclone", "readers")[0];
    assert_eq!(r["partitions"], serde_json::json!(["py_part"]));
    assert_eq!(r["history"]["kind"], "keep_all");
    assert_eq!(r["reliability"]["kind"], "reliable");
    assert_eq!(r["durability"], "volatile");
    let pw = participant_of(&doc, publisher.child.id());
    assert_eq!(pw["vendor"], "Eclipse Cyclone DDS");
    let w = &endpoints(pw, "LsCyclone", "writers")[0];
    assert_eq!(w["durability"], "transient_local");
    assert_eq!(
        w["history"],
        serde_json::json!({"kind": "keep_last", "depth": 3})
    );
    assert_eq!(w["data_representation"], serde_json::json!(["XCDR1"]));

    let topics = doc["topics"].as_array().unwrap();
    let summary = |name: &str| topics.iter().find(|t| t["name"] == name).cloned();
    let cyclone = summary("LsCyclone").expect("LsCyclone in the topic summary");
    assert_eq!(
        (cyclone["writers"].clone(), cyclone["readers"].clone()),
        (1.into(), 1.into())
    );
    assert_eq!(cyclone["type_names"], serde_json::json!(["HalyardKeyed"]));
    assert!(summary("LsHalyard").is_some());
}

#[test]
fn ps_json_sees_both_processes_with_pid_and_host() {
    if !peer_available() {
        return;
    }
    let (_dp, _wr) = halyard_writer(84, "PsHalyard");
    let (_sub, publisher) = python_peers(84, "PsCyclone");
    let doc = halyard_json(&["ps", "-i", "84", "-r", "3", "--json"]);
    let procs = doc["processes"].as_array().unwrap();
    let of = |pid: u32| {
        procs
            .iter()
            .find(|p| p["pid"] == pid)
            .unwrap_or_else(|| panic!("no process {pid} in {doc:#}"))
    };
    let me = of(std::process::id());
    assert_eq!(me["host"], host_name());
    let exe = std::env::current_exe().unwrap();
    assert_eq!(me["process"], exe.file_name().unwrap().to_str().unwrap());
    assert_eq!(me["topics"], serde_json::json!(["PsHalyard"]));
    assert_eq!(me["participants"][0]["vendor"], "Halyard");
    let py = of(publisher.child.id());
    assert_eq!(py["host"], host_name());
    assert_eq!(py["participants"][0]["vendor"], "Eclipse Cyclone DDS");
    assert_eq!(py["topics"], serde_json::json!(["PsCyclone"]));
    assert!(doc["hosts"]
        .as_array()
        .unwrap()
        .contains(&host_name().into()));
}

#[test]
fn cyclonedds_ps_sees_the_halyard_process() {
    let found = Command::new("cyclonedds")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("SKIP: the `cyclonedds` command (python cyclonedds package) is not installed");
        return;
    }
    let (_dp, _wr) = halyard_writer(85, "PsSeen");
    let out = Command::new("timeout")
        .args(["30", "cyclonedds", "ps", "--id", "85", "-r", "3s"])
        .args(["--suppress-progress-bar", "--color", "none"])
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output()
        .expect("run cyclonedds ps");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{text}", out.status);
    let pid = std::process::id().to_string();
    let row = text
        .lines()
        .find(|l| l.contains("PsSeen"))
        .unwrap_or_else(|| panic!("no row with the topic PsSeen:\n{text}"));
    assert!(row.contains(&pid), "pid {pid} not on the row:\n{text}");
    assert!(row.contains(&host_name()), "host not on the row:\n{text}");
}

#[test]
fn bad_arguments_exit_2_with_usage() {
    for args in [
        &["ls", "--bogus"][..],
        &["ls", "--id"],
        &["ls", "--id", "nine"],
        &["ls", "--duration", "0"],
        &["ps", "--watch"],
        &["ps", "-r", "soon"],
    ] {
        let out = halyard(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("usage: halyard {}", args[0])),
            "{args:?}: {err}"
        );
    }
    let help = halyard(&["ls", "--help"]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--json"));
}

#[test]
fn ls_text_and_watch_list_the_halyard_writer() {
    let (_dp, _wr) = halyard_writer(86, "LsText");
    let out = halyard(&["ls", "-i", "86", "-r", "2", "-q"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let pid = std::process::id().to_string();
    assert!(
        text.lines().any(|l| l.starts_with("Participant ")
            && l.contains("\"ls-test\" (Halyard,")
            && l.contains(&pid)),
        "{text}"
    );
    assert!(
        text.contains("  Topic LsText (type HalyardKeyed)"),
        "{text}"
    );
    assert!(
        text.contains(": reliable, transient_local, keep_last 7, shared, partitions [ls_part]"),
        "{text}"
    );
    assert!(text.contains("      deadline 2s, "), "{text}");
    assert!(
        text.contains("  LsText (type HalyardKeyed): 1 writer(s), 0 reader(s)"),
        "{text}"
    );

    // --watch --json: one document a line, every period, until stopped.
    let mut child = Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(["ls", "-i", "86", "-r", "700ms", "--watch", "--json"])
        .env("HALYARD_INTERFACE", "lo")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run halyard ls --watch");
    std::thread::sleep(Duration::from_millis(2600));
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.len() >= 2, "{lines:?}");
    // (The first may come before discovery completed.)
    for doc in &lines[lines.len() - 2..] {
        let me = participant_of(doc, std::process::id());
        assert_eq!(endpoints(me, "LsText", "writers").len(), 1);
    }
}
