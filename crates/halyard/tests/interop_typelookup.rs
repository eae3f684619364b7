//! Proves XTypes type discovery against Cyclone DDS 11 (the `cyclonedds` Python package and
//! its CLI) on loopback: `cyclonedds typeof` rebuilds the IDL of a Halyard topic and
//! `cyclonedds subscribe` prints its samples (both learn the type from Halyard's SEDP
//! TypeInformation and TypeLookup service), and Halyard fetches through TypeLookup the types
//! of a Cyclone writer it has no Rust type for, with hashes that verify (and reads the
//! TypeInformation Cyclone's writers and readers announce in SEDP).
#![cfg(feature = "typelookup")]
// A test driver, not the protocol core: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use halyard::cdr::TypeDescription;
use halyard::xtypes::{TypeInformation, TypeObject};
use halyard::{DomainParticipant, EndpointTypeInformation, ParticipantOptions, PublisherQos};
use std::process::{Command, Stdio};

#[path = "common/python_peer.rs"]
mod python_peer;
use python_peer::{cyclonedds_cli, cyclonedds_cli_available, CYCLONE_URI};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[allow(dead_code)]
mod hello_world {
    include!("data/typelookup/hello_world.rs");
}
#[allow(dead_code)]
mod rich_derived {
    include!("data/typelookup/rich_derived.rs");
}

/// HelloWorldData::Msg as Cyclone's Python package describes it (tests/data/typelookup).
static HELLO_WORLD: TypeDescription = TypeDescription {
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

/// A Halyard writer of `Msg` on `topic` writing a sample every 100 ms until dropped.
struct Publisher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Publisher {
    fn start(dp: Arc<DomainParticipant>, topic: &str) -> Publisher {
        let t = dp.create_topic::<Msg>(topic).expect("topic");
        let w = dp
            .create_publisher(PublisherQos::default())
            .create_datawriter(&t, halyard::qos::DataWriterQos::default())
            .expect("writer");
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut n = 0;
            while !s2.load(Ordering::Relaxed) {
                let m = Msg {
                    user_id: 7,
                    message: format!("hello from halyard {n}"),
                };
                w.write(&m).expect("write");
                n += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            drop(dp);
        });
        Publisher {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn cyclonedds_typeof_and_subscribe_show_a_halyard_topic() {
    if !cyclonedds_cli_available() {
        return;
    }
    let dp = Arc::new(participant(79));
    let _publisher = Publisher::start(dp, "HalyardTyped");
    let (out, err) = cyclonedds_cli(&["typeof", "HalyardTyped", "--id", "79", "-r", "4s"], 30);
    eprintln!("cyclonedds typeof:\n{out}");
    assert!(
        out.contains("module HelloWorldData") && out.contains("struct Msg"),
        "typeof printed no IDL:\n{out}\n{err}"
    );
    assert!(
        out.contains("@key") && out.contains("userID") && out.contains("string message"),
        "typeof printed another type:\n{out}\n{err}"
    );
    let (out, err) = cyclonedds_cli(&["subscribe", "HalyardTyped", "--id", "79", "-r", "4s"], 30);
    eprintln!("cyclonedds subscribe (first lines):");
    out.lines().take(3).for_each(|l| eprintln!("{l}"));
    assert!(
        out.contains("hello from halyard"),
        "subscribe printed no sample:\n{out}\n{err}"
    );
}

#[test]
fn a_description_whose_objects_do_not_match_its_hashes_is_refused_by_create_topic() {
    static WRONG: TypeDescription = TypeDescription {
        type_information: hello_world::TYPE_INFORMATION,
        // Another type's objects: hashes the information does not name.
        type_objects: rich_derived::TYPE_OBJECTS,
    };
    #[derive(halyard::Topic, Clone, Debug, Default)]
    #[topic(type_name = "Wrong::Msg", type_description = "WRONG")]
    struct Wrong {
        v: i32,
    }
    let dp = participant(80);
    match dp.create_topic::<Wrong>("Wrong") {
        Err(halyard::Error::BadTypeDescription(e)) => {
            assert!(e.to_string().contains("TypeObject"), "{e}")
        }
        other => panic!("expected BadTypeDescription, got {:?}", other.map(|_| ())),
    }
}

const PY_WRITER: &str = r#"
import sys, time
from dataclasses import dataclass
from typing import Optional
from enum import auto
from cyclonedds.domain import DomainParticipant
from cyclonedds.topic import Topic
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.idl import IdlStruct, IdlEnum
from cyclonedds.idl.annotations import key, mutable
from cyclonedds.idl.types import int32, float64, sequence, array, typedef, bounded_str
import cyclonedds.idl.types as types

class Color(IdlEnum, typename="Rich::Color"):
    RED = auto(); GREEN = auto(); BLUE = auto()

LongSeq = typedef["Rich::LongSeq", sequence[int32, 10]]

@mutable
@dataclass
class Base(IdlStruct, typename="Rich::Base"):
    id: int32
    key("id")

@mutable
@dataclass
class Derived(Base, typename="Rich::Derived"):
    maybe: Optional[float64]
    color: Color
    ls: LongSeq
    names: sequence[str]
    matrix: array[array[int32, 3], 2]
    big: bounded_str[300]

dp = DomainParticipant(int(sys.argv[1]))
tp = Topic(dp, "CycloneRich", Derived)
wr = DataWriter(dp, tp)
rd = DataReader(dp, Topic(dp, "CycloneRichR", Derived))
Derived.__idl__.fill_type_data()
ti, tm = Derived.__idl__._xt_bytedata
print(ti.hex(), flush=True)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    wr.write(Derived(id=1, maybe=None, color=Color.RED, ls=[1], names=["a"], matrix=[[1,2,3],[4,5,6]], big="x"))
    time.sleep(0.1)
"#;

#[test]
fn halyard_fetches_the_types_of_a_cyclone_writer_through_typelookup() {
    if !cyclonedds_cli_available() {
        return;
    }
    let mut child = Command::new("python3")
        .args(["-u", "-c", PY_WRITER, "81", "15"])
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python writer");
    let dp = participant(81);
    // The writer's TypeInformation, as discovery reports it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let info: TypeInformation = loop {
        let found = dp
            .discovered_publications()
            .into_iter()
            .find(|p| p.topic_name == "CycloneRich");
        if let Some(info) = found.and_then(|p| p.decoded_type_information()) {
            break info;
        }
        assert!(
            Instant::now() < deadline,
            "no CycloneRich publication with TypeInformation"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // The one Python reports for its type is the same.
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).expect("read");
    let py_info = hex(line.trim());
    let py_info = TypeInformation::from_xcdr2(&py_info).expect("python's TypeInformation");
    assert_eq!(
        py_info.complete.typeid_with_size.type_id,
        info.complete.typeid_with_size.type_id
    );
    assert_eq!(
        py_info.minimal.typeid_with_size.type_id,
        info.minimal.typeid_with_size.type_id
    );
    // A Cyclone reader's DCPSSubscription data carries the same TypeInformation.
    let reader_info = loop {
        let found = dp
            .discovered_subscriptions()
            .into_iter()
            .find(|s| s.topic_name == "CycloneRichR");
        if let Some(info) = found.and_then(|s| s.decoded_type_information()) {
            break info;
        }
        assert!(
            Instant::now() < deadline,
            "no CycloneRichR subscription with TypeInformation"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(reader_info.complete, info.complete);
    assert_eq!(
        reader_info.minimal.typeid_with_size.type_id,
        info.minimal.typeid_with_size.type_id
    );

    let objects = dp
        .lookup_type_information(&info, Duration::from_secs(10))
        .expect("lookup through TypeLookup");
    let _ = child.kill();
    let _ = child.wait();
    eprintln!(
        "fetched {} TypeObjects: {:?}",
        objects.len(),
        objects.iter().map(|(id, _)| id).collect::<Vec<_>>()
    );
    // Every object's hash is its identifier; the root is the complete Rich::Derived, and the
    // types it depends on (Rich::Base, Rich::Color, Rich::LongSeq) came along.
    for (id, obj) in &objects {
        assert_eq!(&obj.type_identifier().expect("hash"), id);
    }
    assert_eq!(objects[0].0, info.complete.typeid_with_size.type_id);
    let names: Vec<String> = objects
        .iter()
        .filter_map(|(_, o)| match o {
            TypeObject::Complete(b) => complete_name(b),
            TypeObject::Minimal(_) => None,
        })
        .collect();
    for n in [
        "Rich::Derived",
        "Rich::Base",
        "Rich::Color",
        "Rich::LongSeq",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
    // And they are exactly the objects Cyclone's Python package built for the type.
    for dep in info
        .complete
        .dependent_typeids
        .iter()
        .chain(info.minimal.dependent_typeids.iter())
    {
        assert!(
            objects.iter().any(|(id, _)| *id == dep.type_id),
            "dependency {:?} not fetched",
            dep.type_id
        );
    }
}

fn complete_name(b: &halyard::xtypes::CompleteTypeObject) -> Option<String> {
    use halyard::xtypes::TypeObjectBody as B;
    match b {
        B::Struct(s) => Some(s.detail.type_name.clone()),
        B::Enum(e) => Some(e.detail.type_name.clone()),
        B::Alias(a) => Some(a.detail.type_name.clone()),
        B::Union(u) => Some(u.detail.type_name.clone()),
        _ => None,
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| s.get(2 * i..2 * i + 2))
        .filter_map(|h| u8::from_str_radix(h, 16).ok())
        .collect()
}
