//! Proves assignability between type versions against Cyclone DDS 11 (the `cyclonedds`
//! Python package) on loopback: a Python writer of an `@appendable` type v2 (an extra trailing
//! member) and a Halyard reader of v1, whose description halyard-idlc builds from IDL, fetch
//! each other's types through TypeLookup, judge them assignable, match and deliver; a v3 whose
//! member changed type is refused by both: Halyard reports REQUESTED_INCOMPATIBLE_QOS with
//! policy TYPE_CONSISTENCY_ENFORCEMENT, Cyclone does not match its writer either. Between two
//! Halyard participants, a reader set to DISALLOW_TYPE_COERCION (before it is enabled) refuses
//! the assignable v2 its default twin accepts.

// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use halyard::cdr::TypeDescription;
use halyard::{DomainParticipant, ParticipantOptions, PublisherQos, QosPolicyId, SubscriberQos};
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

const CYCLONE_URI: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

const V1_IDL: &str = "module M { @appendable struct T { long a; }; };";

/// `M::T` v1 as halyard-idlc describes it.
static V1: LazyLock<TypeDescription> = LazyLock::new(|| describe(V1_IDL));

const V2_IDL: &str = "module M { @appendable struct T { long a; string b; }; };";

/// `M::T` v2 (an extra trailing member) as halyard-idlc describes it.
static V2: LazyLock<TypeDescription> = LazyLock::new(|| describe(V2_IDL));

/// `idl`'s `M::T` as halyard-idlc describes it, leaked (a description is `'static`).
fn describe(idl: &str) -> TypeDescription {
    let spec = halyard_idl::parse_str("t.idl", idl, &Default::default()).expect("parses");
    let set = halyard_idlc::type_objects(&spec).expect("type objects");
    let d = set
        .topics
        .get("M::T")
        .expect("M::T is a topic type")
        .clone();
    let objects: Vec<&'static [u8]> = d
        .type_objects
        .into_iter()
        .map(|o| &*Box::leak(o.into_boxed_slice()))
        .collect();
    TypeDescription {
        type_information: Box::leak(d.type_information_bytes.into_boxed_slice()),
        type_objects: Box::leak(objects.into_boxed_slice()),
    }
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(
    type_name = "M::T",
    extensibility = "appendable",
    type_description = "V2"
)]
struct TV2 {
    a: i32,
    b: String,
}

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(
    type_name = "M::T",
    extensibility = "appendable",
    type_description = "V1"
)]
struct TV1 {
    a: i32,
}

const PY_WRITER: &str = r#"
import sys, time
from dataclasses import dataclass
from cyclonedds.domain import DomainParticipant
from cyclonedds.topic import Topic
from cyclonedds.pub import DataWriter
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import appendable
from cyclonedds.idl.types import int16, int32

if sys.argv[2] == "v2":
    @appendable
    @dataclass
    class T(IdlStruct, typename="M::T"):
        a: int32
        b: str
    sample = T(a=42, b="extra member of v2")
else:
    @appendable
    @dataclass
    class T(IdlStruct, typename="M::T"):
        a: int16
    sample = T(a=42)

dp = DomainParticipant(int(sys.argv[1]))
wr = DataWriter(dp, Topic(dp, "Versions", T))
end = time.time() + float(sys.argv[3])
while time.time() < end:
    wr.write(sample)
    time.sleep(0.1)
print("matched", len(wr.get_matched_subscriptions()), flush=True)
"#;

fn python_cyclonedds() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import cyclonedds"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: the Python package cyclonedds is not installed");
    }
    ok
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
    )
    .expect("create participant")
}

fn spawn_writer(domain: u32, version: &str, secs: u32) -> std::process::Child {
    Command::new("python3")
        .args(["-u", "-c", PY_WRITER, &domain.to_string(), version])
        .arg(secs.to_string())
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python writer")
}

/// Waits for the Python writer to finish; returns what it printed.
fn finish(child: std::process::Child) -> String {
    let out = child.wait_with_output().expect("python writer");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!(
        "python: {text}{}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    text
}

#[test]
fn cyclone_appendable_v2_writer_and_halyard_v1_reader_match_and_deliver() {
    if !python_cyclonedds() {
        return;
    }
    let dp = participant(95);
    let topic = dp.create_topic::<TV1>("Versions").expect("topic");
    let reader = dp
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic, halyard::qos::DataReaderQos::default())
        .expect("reader");
    let child = spawn_writer(95, "v2", 8);
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut got = Vec::new();
    while Instant::now() < deadline && got.is_empty() {
        got.extend(
            reader
                .take(16)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data),
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let printed = finish(child);
    let stats = dp.stats();
    eprintln!("halyard stats: {stats:?}");
    assert!(
        got.contains(&TV1 { a: 42 }),
        "no v2 sample read as v1: {got:?}"
    );
    assert_eq!(stats.type_assignable_matches, 1);
    assert_eq!(stats.type_name_fallback_matches, 0);
    assert!(
        printed.contains("matched 1"),
        "Cyclone did not match: {printed}"
    );
}

#[test]
fn cyclone_non_assignable_v3_writer_is_refused() {
    if !python_cyclonedds() {
        return;
    }
    let dp = participant(96);
    let topic = dp.create_topic::<TV1>("Versions").expect("topic");
    let reader = dp
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&topic, halyard::qos::DataReaderQos::default())
        .expect("reader");
    let child = spawn_writer(96, "v3", 6);
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline
        && reader
            .requested_incompatible_qos_status()
            .unwrap()
            .total_count
            == 0
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let printed = finish(child);
    let status = reader.requested_incompatible_qos_status().unwrap();
    let stats = dp.stats();
    eprintln!("halyard stats: {stats:?}");
    assert_eq!(
        status.last_policy_id,
        Some(QosPolicyId::TypeConsistencyEnforcement),
        "{status:?}"
    );
    assert!(stats.type_not_assignable >= 1);
    assert_eq!(reader.subscription_matched_status().unwrap().total_count, 0);
    assert!(reader.take(16).expect("take").is_empty());
    assert!(
        printed.contains("matched 0"),
        "Cyclone matched v3: {printed}"
    );
}

#[test]
fn a_halyard_reader_set_to_disallow_type_coercion_refuses_another_version() {
    use halyard::qos::{TypeConsistencyEnforcement, TypeConsistencyKind};
    let wp = participant(97);
    let rp = participant(97);
    let wt = wp.create_topic::<TV2>("Versions").expect("topic");
    let rt = rp.create_topic::<TV1>("Versions").expect("topic");
    let mut manual = SubscriberQos::default();
    manual.entity_factory.autoenable_created_entities = false;
    let sub = rp.create_subscriber(manual);
    let qos = halyard::qos::DataReaderQos::default;
    let strict = sub.create_datareader(&rt, qos()).expect("reader");
    let tc = TypeConsistencyEnforcement {
        kind: TypeConsistencyKind::DisallowTypeCoercion,
        ..Default::default()
    };
    strict.set_type_consistency(tc).expect("set before enable");
    strict.enable().expect("enable");
    assert!(
        strict.set_type_consistency(tc).is_err(),
        "fixed once enabled"
    );
    let lenient = rp
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&rt, qos())
        .expect("reader");
    let writer = wp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&wt, halyard::qos::DataWriterQos::default())
        .expect("writer");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while Instant::now() < deadline
        && (got.is_empty()
            || strict
                .requested_incompatible_qos_status()
                .unwrap()
                .total_count
                == 0)
    {
        writer
            .write(&TV2 {
                a: 5,
                b: "v2".into(),
            })
            .expect("write");
        got.extend(
            lenient
                .take(16)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data),
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        got.contains(&TV1 { a: 5 }),
        "the default reader got {got:?}"
    );
    let status = strict.requested_incompatible_qos_status().unwrap();
    assert_eq!(
        status.last_policy_id,
        Some(QosPolicyId::TypeConsistencyEnforcement)
    );
    assert_eq!(strict.subscription_matched_status().unwrap().total_count, 0);
    assert!(strict.take(16).expect("take").is_empty());
}
