//! Proves `halyard sub`, `halyard pub` and `halyard typeof` on loopback against real peers:
//! a Cyclone DDS 11 (Python) writer of a type Halyard was never compiled with
//! (tests/peers/subpub_types.py: keyed, nested, a sequence, an enum, an optional member) is
//! read and its IDL printed; `halyard pub` reaches a Cyclone reader and `halyard sub`;
//! `cyclonedds typeof` / `cyclonedds subscribe` read what `halyard pub --idl` writes; a peer
//! without type information (a Halyard writer announcing none) gives the clear error and
//! `--idl` decodes it; ddsperf of Cyclone 0.10.2 is decoded through TypeLookup and with
//! `--idl`; bad arguments exit 2.
//! Domains 91-94.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "../../halyard/tests/common/python_peer.rs"]
mod python_peer;

use halyard::{DomainParticipant, ParticipantOptions, PublisherQos};
use python_peer::{
    cyclonedds_cli, cyclonedds_cli_available, peer_available, secs, Peer, CYCLONE_URI,
};
use serde_json::{json, Value};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn data(file: &str) -> String {
    format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"))
}

fn halyard_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_halyard"));
    c.args(args)
        .env("HALYARD_INTERFACE", "lo")
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

/// The JSON lines of `halyard sub --json` output.
fn json_lines(o: &Output) -> Vec<Value> {
    let (out, err) = text(o);
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{err}")))
        .collect()
}

/// The samples tests/peers/subpub_types.py writes, in the JSON form both sides print.
fn python_samples() -> Vec<Value> {
    vec![
        json!({"sensor": 1, "name": "first", "color": "GREEN", "where": {"x": -3, "y": 0.5},
               "history": [1, -2, 300], "note": "hello"}),
        json!({"sensor": 2, "name": "second", "color": "BLUE", "where": {"x": 7, "y": -1.25},
               "history": [], "note": null}),
        json!({"sensor": 3, "name": "third, with \"quotes\"", "color": "RED",
               "where": {"x": 0, "y": 1e10}, "history": [32767], "note": ""}),
    ]
}

#[test]
fn sub_and_typeof_read_a_cyclone_writer_of_a_type_halyard_never_saw() {
    if !peer_available() {
        return;
    }
    let writer = Peer::spawn("subpub_types.py", &["write", "91", "SubPubPy", "40"]);
    assert!(writer.wait_line("written", secs(15.0)), "python writer");

    // JSON: exactly the three samples (the writer is transient-local; sub asks the same).
    let o = halyard(&["sub", "SubPubPy", "--id", "91", "--json", "--count", "3"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(json_lines(&o), python_samples(), "{}", text(&o).1);
    // Members print in declaration order.
    assert!(
        text(&o)
            .0
            .starts_with(r#"{"sensor":1,"name":"first","color":"GREEN","where":{"x":-3,"#),
        "{}",
        text(&o).0
    );

    // --info wraps each sample with its SampleInfo.
    let o = halyard(&[
        "sub", "SubPubPy", "--id", "91", "--json", "--info", "--count", "1",
    ]);
    let lines = json_lines(&o);
    assert_eq!(lines[0]["sample"], python_samples()[0], "{lines:?}");
    assert_eq!(lines[0]["info"]["instance_state"], "alive");

    // A filter on nested members and enumerators.
    let o = halyard(&[
        "sub",
        "SubPubPy",
        "--id",
        "91",
        "--json",
        "--count",
        "2",
        "--filter",
        "color = BLUE OR where.x < 0 AND name LIKE 'fir%'",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let s = python_samples();
    assert_eq!(json_lines(&o), vec![s[0].clone(), s[1].clone()]);

    // Readable lines and the table.
    let o = halyard(&["sub", "SubPubPy", "--id", "91", "--count", "3"]);
    let (out, err) = text(&o);
    assert!(
        out.contains(
            "sensor=1 name=first color=GREEN where.x=-3 where.y=0.5 history=[1,-2,300] note=hello"
        ),
        "{out}\n{err}"
    );
    let o = halyard(&["sub", "SubPubPy", "--id", "91", "--table", "--count", "3"]);
    let (out, err) = text(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 4, "{out}\n{err}");
    for col in [
        "sensor", "name", "color", "where.x", "where.y", "history", "note",
    ] {
        assert!(rows[0].contains(col), "{out}");
    }
    assert!(
        rows[2].starts_with("2 ") && rows[2].contains("BLUE"),
        "{out}"
    );

    // typeof: the IDL names every member and type.
    let o = halyard(&["typeof", "SubPubPy", "--id", "91"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for needle in [
        "module SubPub",
        "enum Color",
        "RED",
        "GREEN",
        "BLUE",
        "struct Point",
        "long x;",
        "double y;",
        "struct Reading",
        "@key long sensor;",
        "string name;",
        "SubPub::Color color;",
        "SubPub::Point where;",
        "sequence<short> history;",
        "@optional string note;",
    ] {
        assert!(out.contains(needle), "{needle} missing:\n{out}");
    }
    let o = halyard(&["typeof", "SubPubPy", "--id", "91", "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("typeof --json");
    assert_eq!(doc["topic"], "SubPubPy");
    assert_eq!(doc["types"][0]["type_name"], "SubPub::Reading");
    assert_eq!(doc["types"][0]["writers"], 1);
    assert!(doc["types"][0]["idl"]
        .as_str()
        .is_some_and(|s| s.contains("struct Reading")));
    assert!(doc["types"][0]["type_information"].is_string());
}

#[test]
fn sub_prints_disposals_and_unregistrations_and_stops_on_sigterm() {
    if !peer_available() {
        return;
    }
    let writer = Peer::spawn(
        "subpub_types.py",
        &["write", "91", "SubPubDispose", "30", "dispose"],
    );
    assert!(writer.wait_line("written", secs(15.0)), "python writer");
    // Runs until SIGTERM; the writer disposes sensor 2 and unregisters sensor 3 3 s after
    // "written".
    let sub = halyard_cmd(&["sub", "SubPubDispose", "--id", "91", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sub");
    assert!(writer.wait_line("disposed", secs(15.0)), "python dispose");
    std::thread::sleep(Duration::from_secs(1));
    let killed = Command::new("kill")
        .args(["-TERM", &sub.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let o = sub.wait_with_output().expect("sub");
    let (_, err) = text(&o);
    assert!(o.status.success(), "SIGTERM must end sub cleanly: {err}");
    let mut want = python_samples();
    want.push(json!({"disposed": {"sensor": 2}}));
    want.push(json!({"unregistered": {"sensor": 3}}));
    assert_eq!(json_lines(&o), want, "{err}");
    assert!(
        err.contains("3 samples, 2 disposals/unregistrations"),
        "{err}"
    );
}

#[test]
fn pub_reaches_a_cyclone_reader_and_halyard_sub() {
    if !peer_available() {
        return;
    }
    // halyard pub learns the type from the Python reader's TypeInformation.
    let mut reader = Peer::spawn("subpub_types.py", &["read", "93", "SubPubPub", "2", "30"]);
    assert!(reader.wait_line("ready", secs(15.0)), "python reader");
    let s = python_samples();
    let (a, b) = (s[0].to_string(), s[1].to_string());
    let o = halyard(&["pub", "SubPubPub", "--id", "93", &a, &b]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(reader.wait_line("done", secs(15.0)));
    let out = reader.finish(secs(5.0));
    let got: Vec<Value> = out
        .lines
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("python JSON"))
        .collect();
    out.check(
        got == vec![s[0].clone(), s[1].clone()],
        "python got other samples",
    );

    // XCDR1, samples from a JSON-lines file (after the argument ones).
    let mut reader = Peer::spawn("subpub_types.py", &["read", "93", "SubPubPub1", "3", "30"]);
    assert!(reader.wait_line("ready", secs(15.0)), "python reader");
    let file = std::env::temp_dir().join(format!("subpub-{}.jsonl", std::process::id()));
    std::fs::write(&file, format!("{}\n\n{}\n", s[1], s[2])).expect("write samples");
    let o = halyard(&[
        "pub",
        "SubPubPub1",
        "--id",
        "93",
        "--xcdr1",
        "--json-file",
        file.to_str().expect("path"),
        &a,
    ]);
    let _ = std::fs::remove_file(&file);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(reader.wait_line("done", secs(15.0)));
    let out = reader.finish(secs(5.0));
    let got: Vec<Value> = out
        .lines
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("python JSON"))
        .collect();
    out.check(got == s, "python got other samples (XCDR1)");

    // halyard sub --idl announces the type; halyard pub learns it from that reader.
    let idl = data("subpub.idl");
    let sub = halyard_cmd(&[
        "sub",
        "SubPubHH",
        "--id",
        "93",
        "--idl",
        &idl,
        "--type",
        "SubPub::Reading",
        "--json",
        "--count",
        "3",
        "--duration",
        "25",
        "--reliable",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn sub");
    std::thread::sleep(Duration::from_secs(3));
    let o = halyard(&[
        "pub",
        "SubPubHH",
        "--id",
        "93",
        &s[0].to_string(),
        &s[1].to_string(),
        &s[2].to_string(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = sub.wait_with_output().expect("sub");
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(json_lines(&o), s, "{}", text(&o).1);
}

/// `halyard pub --idl` writing the same sample every 100 ms until killed.
fn background_pub(domain: &str, topic: &str) -> Child {
    let sample = python_samples()[0].to_string();
    halyard_cmd(&[
        "pub",
        topic,
        "--id",
        domain,
        "--idl",
        &data("subpub.idl"),
        "--type",
        "SubPub::Reading",
        "--rate",
        "10",
        "--repeat",
        "400",
        "--timeout",
        "1",
        &sample,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn pub")
}

#[test]
fn cyclonedds_typeof_and_subscribe_read_halyard_pub() {
    if !cyclonedds_cli_available() {
        return;
    }
    let mut publisher = background_pub("94", "SubPubIdl");
    let (out, err) = cyclonedds_cli(&["typeof", "SubPubIdl", "--id", "94", "-r", "4s"], 30);
    let (sout, serr) = cyclonedds_cli(&["subscribe", "SubPubIdl", "--id", "94", "-r", "4s"], 30);
    // And halyard typeof on a Halyard writer.
    let o = halyard(&["typeof", "SubPubIdl", "--id", "94"]);
    let _ = publisher.kill();
    let _ = publisher.wait();
    eprintln!("cyclonedds typeof:\n{out}");
    for needle in [
        "module SubPub",
        "enum Color",
        "struct Point",
        "struct Reading",
        "@key long sensor;",
        "string name;",
        "SubPub::Color color;",
        "SubPub::Point where;",
        "sequence<short>",
        "history;",
        "@optional string note;",
    ] {
        assert!(
            out.contains(needle),
            "{needle} missing from cyclonedds typeof:\n{out}\n{err}"
        );
    }
    assert!(
        sout.contains("first") && sout.contains("hello"),
        "cyclonedds subscribe printed no sample:\n{sout}\n{serr}"
    );
    let (hout, herr) = text(&o);
    assert!(
        hout.contains("struct Reading") && hout.contains("@optional string note;"),
        "{hout}\n{herr}"
    );
}

#[allow(dead_code)]
mod hello_world {
    include!("../../halyard/tests/data/typelookup/hello_world.rs");
}

/// HelloWorldData::Msg with the XTypes description Cyclone's Python package gives it.
static HELLO_WORLD: halyard::cdr::TypeDescription = halyard::cdr::TypeDescription {
    type_information: hello_world::TYPE_INFORMATION,
    type_objects: hello_world::TYPE_OBJECTS,
};

#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HelloWorldData::Msg", type_description = "HELLO_WORLD")]
struct Msg {
    #[key]
    user_id: i32,
    message: String,
}

#[test]
fn typeof_and_sub_on_a_halyard_typed_writer() {
    let dp = participant(94);
    let t = dp.create_topic::<Msg>("SubPubTyped").expect("topic");
    let mut q = halyard::qos::DataWriterQos::default();
    q.durability = halyard::qos::Durability::TransientLocal;
    q.history = halyard::qos::History::KeepAll;
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, q)
        .expect("writer");
    for (id, m) in [(4, "four"), (5, "five")] {
        w.write(&Msg {
            user_id: id,
            message: m.into(),
        })
        .expect("write");
    }
    let o = halyard(&["typeof", "SubPubTyped", "--id", "94"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for needle in [
        "module HelloWorldData",
        "struct Msg",
        "@key long userID;",
        "string message;",
    ] {
        assert!(out.contains(needle), "{needle} missing:\n{out}");
    }
    let o = halyard(&["sub", "SubPubTyped", "--id", "94", "--json", "--count", "2"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        json_lines(&o),
        vec![
            json!({"userID": 4, "message": "four"}),
            json!({"userID": 5, "message": "five"}),
        ]
    );
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
    )
    .expect("participant")
}

/// ddsperf's KeyedSeq (tests/data/ddsperf_keyedseq.idl) as a Rust type that announces no
/// TypeInformation (its description turned off, as a peer without XTypes would).
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "KeyedSeq", type_description = false)]
struct KeyedSeq {
    seq: u32,
    #[key]
    keyval: u32,
    baggage: Vec<u8>,
}

#[test]
fn peers_without_type_information_and_cyclone_0_10() {
    // A Halyard writer that announces no TypeInformation.
    let dp = participant(92);
    let t = dp.create_topic::<KeyedSeq>("NoTypeInfo").expect("topic");
    let mut q = halyard::qos::DataWriterQos::default();
    q.durability = halyard::qos::Durability::TransientLocal;
    q.history = halyard::qos::History::KeepAll;
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, q)
        .expect("writer");
    for i in 0..2 {
        w.write(&KeyedSeq {
            seq: i,
            keyval: 40 + i,
            baggage: vec![1, 2, i as u8],
        })
        .expect("write");
    }
    let o = halyard(&["sub", "NoTypeInfo", "--id", "92", "--timeout", "5"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("NoTypeInfo (type KeyedSeq) was announced without type information; Halyard cannot decode it"),
        "{err}"
    );
    let idl = data("ddsperf_keyedseq.idl");
    let o = halyard(&[
        "sub",
        "NoTypeInfo",
        "--id",
        "92",
        "--json",
        "--count",
        "2",
        "--idl",
        &idl,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        json_lines(&o),
        vec![
            json!({"seq": 0, "keyval": 40, "baggage": [1, 2, 0]}),
            json!({"seq": 1, "keyval": 41, "baggage": [1, 2, 1]}),
        ]
    );
    drop(w);
    drop(dp);

    // ddsperf (Cyclone 0.10.2): its TypeLookup replies name its own writer (byte-swapped) as
    // the related request; Halyard still takes the objects it asked for.
    if which("ddsperf").is_none() {
        eprintln!("SKIP (ddsperf part): ddsperf not found in PATH");
        return;
    }
    let mut ddsperf = Command::new("ddsperf")
        .args(["-i", "92", "-D", "40", "pub", "20Hz", "size", "16"])
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ddsperf");
    let topic = "DDSPerfRDataKS";
    let o = halyard(&["sub", topic, "--id", "92", "--json", "--count", "3"]);
    let o2 = halyard(&[
        "sub", topic, "--id", "92", "--json", "--count", "3", "--idl", &idl,
    ]);
    let o3 = halyard(&["typeof", topic, "--id", "92"]);
    let _ = ddsperf.kill();
    let _ = ddsperf.wait();
    for o in [&o, &o2] {
        assert!(o.status.success(), "{:?}", text(o));
        let lines = json_lines(o);
        assert_eq!(lines.len(), 3);
        for l in &lines {
            // ddsperf's size 16 leaves 4 bytes of baggage, each 0xee.
            assert_eq!(l["baggage"], json!([238, 238, 238, 238]), "{l}");
            assert!(l["seq"].is_u64() && l["keyval"].is_u64(), "{l}");
        }
    }
    let (out, err) = text(&o3);
    assert!(
        out.contains("struct KeyedSeq") && out.contains("@key unsigned long keyval;"),
        "{out}\n{err}"
    );
}

#[test]
fn several_types_on_one_topic() {
    if !peer_available() {
        return;
    }
    let writer = Peer::spawn("subpub_types.py", &["write", "92", "SubPubMixed", "30"]);
    assert!(writer.wait_line("written", secs(15.0)), "python writer");
    let dp = participant(92);
    let t = dp.create_topic::<KeyedSeq>("SubPubMixed").expect("topic");
    let _w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&t, halyard::qos::DataWriterQos::default())
        .expect("writer");
    // One writer each: the type that can be decoded is used, and that is said.
    let o = halyard(&["sub", "SubPubMixed", "--id", "92", "--json", "--count", "3"]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(json_lines(&o), python_samples(), "{err}");
    assert!(
        err.contains("SubPubMixed has 2 types") && err.contains("using SubPub::Reading"),
        "{err}"
    );
    // --type chooses the other one, which cannot be decoded without --idl.
    let o = halyard(&["sub", "SubPubMixed", "--id", "92", "--type", "KeyedSeq"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("(type KeyedSeq) was announced without type information"),
        "{err}"
    );
    // typeof prints what it can and says why not for the rest.
    let o = halyard(&["typeof", "SubPubMixed", "--id", "92", "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("typeof --json");
    let types = doc["types"].as_array().expect("types");
    assert_eq!(types.len(), 2, "{doc:#}");
    let by = |n: &str| types.iter().find(|t| t["type_name"] == n).expect(n).clone();
    assert!(by("SubPub::Reading")["idl"].is_string(), "{doc:#}");
    assert!(by("KeyedSeq")["idl"].is_null(), "{doc:#}");
    assert!(
        by("KeyedSeq")["error"]
            .as_str()
            .is_some_and(|e| e.contains("without type information")),
        "{doc:#}"
    );
}

fn which(prog: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(prog))
            .find(|f| f.is_file())
    })
}

#[test]
fn bad_arguments_exit_2_and_unknown_topics_exit_1() {
    let idl = data("subpub.idl");
    let cases: &[&[&str]] = &[
        &["sub"],
        &["sub", "T", "--count", "0"],
        &["sub", "T", "--durability", "forever"],
        &["sub", "T", "--bogus"],
        &["sub", "T", "--table", "--json"],
        &["pub", "T"],
        &["pub", "T", "{not json"],
        &["typeof"],
        &["typeof", "T", "--partition", "p"],
    ];
    for args in cases {
        let o = halyard(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {:?}", text(&o));
        assert!(
            text(&o).1.contains("usage") || text(&o).1.contains("JSON"),
            "{args:?}"
        );
    }
    // A bad filter names the problem.
    let o = halyard(&[
        "sub",
        "T",
        "--id",
        "92",
        "--idl",
        &idl,
        "--type",
        "SubPub::Reading",
        "--timeout",
        "1",
        "--filter",
        "where.z > 1",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("where.z") && err.contains("no member z"),
        "{err}"
    );
    // A sample that does not fit the type names the member.
    let o = halyard(&[
        "pub",
        "T",
        "--id",
        "92",
        "--idl",
        &idl,
        "--type",
        "SubPub::Reading",
        "--timeout",
        "1",
        r#"{"sensor": 1, "name": "n", "color": "PURPLE", "where": {"x": 1, "y": 2}, "history": []}"#,
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("color") && err.contains("PURPLE"), "{err}");
    // Nothing on the topic.
    for cmd in ["sub", "typeof"] {
        let o = halyard(&[cmd, "NoSuchTopic", "--id", "92", "--timeout", "2"]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("no writer or reader of topic NoSuchTopic"),
            "{err}"
        );
    }
}
