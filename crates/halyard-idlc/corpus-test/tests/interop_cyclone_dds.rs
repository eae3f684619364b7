//! Proves types generated from IDL travel over real DDS between a Halyard DomainParticipant and
//! a Cyclone DDS one (the Python `cyclonedds` 11 package running the classes halyard-idlc's
//! Python back end generated): on loopback, domain 71, each side writes a sample of each type
//! and reads the other's, both compared field by field with the expected value.
//! Skips, loudly, only when Python `cyclonedds` is not installed.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

use std::fmt::Debug;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use halyard::cdr::{BoundedString, TopicType};
use halyard::qos::Durability;
use halyard::{
    DataReader, DataReaderQos, DataWriter, DataWriterQos, DomainParticipant, ParticipantOptions,
    PublisherQos, SubscriberQos, Topic,
};
use halyard_idlc_corpus_test::corpus::{Common, Corpus as C};
use halyard_idlc_corpus_test::hello_world_data::HelloWorldData;

mod common;
use common::{python_has_cyclonedds, write_python};

const DOMAIN: u32 = 71;
const CYCLONE_URI: &str =
    r#"<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>"#;

fn writer_qos() -> DataWriterQos {
    DataWriterQos::default()
        .reliable()
        .durability(Durability::TransientLocal)
        .keep_last(1)
}

fn reader_qos() -> DataReaderQos {
    DataReaderQos::default()
        .reliable()
        .durability(Durability::TransientLocal)
        .keep_last(1)
}

/// One type on the wire: Halyard's writer of the sample and reader of Cyclone's.
struct Wire<T: TopicType> {
    expected: T,
    _writer: DataWriter<T>,
    reader: DataReader<T>,
}

trait Check {
    fn name(&self) -> &'static str;
    /// `Some(Ok)` once Cyclone's sample arrived and equals the expected value.
    fn poll(&self) -> Option<Result<(), String>>;
}

impl<T: TopicType + PartialEq + Debug> Check for Wire<T> {
    fn name(&self) -> &'static str {
        T::type_name()
    }
    fn poll(&self) -> Option<Result<(), String>> {
        let samples = self.reader.take(10).ok()?;
        let got = samples.into_iter().find_map(|s| s.data)?;
        Some(if got == self.expected {
            Ok(())
        } else {
            Err(format!(
                "{}: got {got:?}, expected {:?}",
                T::type_name(),
                self.expected
            ))
        })
    }
}

fn wire<T: TopicType + PartialEq + Debug>(dp: &DomainParticipant, sample: T) -> Box<dyn Check> {
    let stem = T::type_name().replace("::", "_");
    let out: Topic<T> = dp.create_topic(&format!("idlc_{stem}")).unwrap();
    let back: Topic<T> = dp.create_topic(&format!("idlc_py_{stem}")).unwrap();
    let writer = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&out, writer_qos())
        .unwrap();
    writer.write(&sample).unwrap();
    let reader = dp
        .create_subscriber(SubscriberQos::default())
        .create_datareader(&back, reader_qos())
        .unwrap();
    Box::new(Wire {
        expected: sample,
        _writer: writer,
        reader,
    })
}

#[test]
fn generated_types_travel_between_halyard_and_cyclone_over_dds() {
    if !python_has_cyclonedds() {
        eprintln!(
            "SKIPPED: Python package `cyclonedds` is not installed; no DDS peer to test against"
        );
        return;
    }
    println!("peer: Python cyclonedds DomainParticipant (domain {DOMAIN}, loopback)");
    let dir = std::env::temp_dir().join(format!("halyard-idlc-dds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    write_python(&dir);

    let dp = DomainParticipant::with_options(
        DOMAIN,
        ParticipantOptions {
            interface: Some("lo".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let p = |x, y| Common::Point { x, y };
    let checks = [
        wire(
            &dp,
            HelloWorldData::Msg {
                userID: 7,
                message: "Hello World".into(),
            },
        ),
        wire(
            &dp,
            C::MutableT {
                id: 9,
                s: "mut".into(),
                d: Some(0.25),
                p: p(5, 6),
            },
        ),
        wire(
            &dp,
            C::AppendableT {
                a: 1,
                b: "two".into(),
                more: vec!["x".into(), "y".into()],
            },
        ),
        wire(
            &dp,
            C::Optionals {
                a: Some(5),
                b: None,
                c: 6,
            },
        ),
        wire(
            &dp,
            C::WithUnion {
                tag: 1,
                u: C::Shape::side(4),
                v: C::Shape::label(3, BoundedString::new("lbl").unwrap()),
                w: C::Shape::radius(99, 1.5),
            },
        ),
    ];

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/dds_peer.py");
    let mut child = Command::new("python3")
        .arg("-u")
        .arg(&script)
        .arg(&dir)
        .arg(DOMAIN.to_string())
        .args(checks.iter().map(|c| c.name()))
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });

    let deadline = Instant::now() + Duration::from_secs(25);
    let mut peer_done = false;
    let mut peer_log = Vec::new();
    let mut ours: Vec<Option<Result<(), String>>> = checks.iter().map(|_| None).collect();
    while Instant::now() < deadline && !(peer_done && ours.iter().all(Option::is_some)) {
        while let Ok(line) = rx.try_recv() {
            peer_done |= line == "all received";
            let failed = line.starts_with("bad") || line.starts_with("missing");
            peer_log.push(line);
            if failed {
                break;
            }
        }
        if peer_log
            .iter()
            .any(|l| l.starts_with("bad") || l.starts_with("missing"))
        {
            break;
        }
        for (c, r) in checks.iter().zip(ours.iter_mut()) {
            if r.is_none() {
                *r = c.poll();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The peer is ours: stop it by its handle (it would otherwise idle 30 s for late readers).
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    for l in &peer_log {
        println!("peer: {l}");
    }
    assert!(
        peer_done,
        "Cyclone did not receive Halyard's samples:\n{}\n{stderr}",
        peer_log.join("\n")
    );
    for (c, r) in checks.iter().zip(&ours) {
        match r {
            Some(Ok(())) => println!("{}: Cyclone -> Halyard ok", c.name()),
            Some(Err(e)) => panic!("{e}"),
            None => panic!(
                "{}: nothing from Cyclone within the deadline\n{stderr}",
                c.name()
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
