//! Proves that every topic constructor refuses a name outside the topic-name character set
//! with an error naming the character, and that a name with the punctuation Cyclone DDS
//! accepts (`/`, `-`, `.`, `:`) carries samples from Halyard to a Cyclone DDS reader.

// A test driver: it may read the clock for its deadlines.
#![allow(clippy::disallowed_methods)]

#[path = "common/python_peer.rs"]
mod python_peer;

use halyard::cdr::Extensibility;
use halyard::durability::EmbeddedDurability;
use halyard::qos::ReliabilityKind;
use halyard::{
    DataWriterQos, DomainParticipant, Error, ParticipantOptions, PublisherQos, TopicNameError,
    UntypedType,
};
use python_peer::{peer_available, secs, Peer};

/// The type of `tests/peers/peer_common.py` (`Keyed`).
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "HalyardKeyed")]
struct Keyed {
    #[key]
    id: i32,
    seq: u32,
    // `sequence<uint8>`, as the Python peer declares it (the types are checked).
    #[uint8]
    payload: Vec<u8>,
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

/// The offending character of a refused topic name.
fn refused_character(e: Error) -> char {
    match e {
        Error::BadTopicName(TopicNameError::BadCharacter { character, .. }) => character,
        other => panic!("expected BadTopicName(BadCharacter), got {other:?}"),
    }
}

#[test]
fn names_outside_the_character_set_are_refused_by_every_topic_constructor() {
    let dp = participant(194);
    for (name, bad) in [("a b", ' '), ("Sq*", '*'), ("x#1", '#'), ("Größe", 'ö')] {
        let e = dp.create_topic::<Keyed>(name).err().expect(name);
        let text = e.to_string();
        assert!(text.contains(&format!("{bad:?}")), "{name}: {text}");
        assert_eq!(refused_character(e), bad, "create_topic({name:?})");

        let ty = UntypedType::keyless("HalyardKeyed", Extensibility::Final);
        let e = dp.create_untyped_topic(name, ty).expect_err(name);
        assert_eq!(refused_character(e), bad, "create_untyped_topic({name:?})");

        let topic = dp.create_topic::<Keyed>("Readings").expect("a good name");
        let e = dp
            .create_contentfilteredtopic(name, &topic, "id > 1", Vec::new())
            .err()
            .expect(name);
        assert_eq!(refused_character(e), bad, "create_contentfilteredtopic");
    }
    assert!(matches!(
        dp.create_topic::<Keyed>(""),
        Err(Error::BadTopicName(TopicNameError::Empty))
    ));
}

#[test]
fn a_name_with_the_punctuation_cyclone_accepts_carries_samples_to_cyclone() {
    if !peer_available() {
        return;
    }
    const NAME: &str = "rt/habits-names.v1:x";
    const N: u32 = 5;
    let domain = 195;
    let py = Peer::spawn(
        "cyclone_sub.py",
        &[
            "--domain",
            &domain.to_string(),
            "--topic",
            NAME,
            "--reliable",
            "--count",
            &N.to_string(),
            "--timeout",
            "15",
            "--wait-match",
            "1",
        ],
    );
    let dp = participant(domain);
    let topic = dp
        .create_topic::<Keyed>(NAME)
        .expect("Cyclone's name is usable");
    let mut q = DataWriterQos::default();
    q.reliability.kind = ReliabilityKind::Reliable;
    let w = dp
        .create_publisher(PublisherQos::default())
        .create_datawriter(&topic, q)
        .unwrap();
    w.wait_for_matched(1, secs(15.0))
        .expect("the Cyclone reader matches");
    for seq in 0..N {
        w.write(&Keyed {
            id: 1,
            seq,
            payload: vec![7; 8],
        })
        .unwrap();
    }
    let mut py = py;
    let o = py.finish(secs(20.0));
    let seqs: Vec<i64> = o.samples().into_iter().map(|(seq, _, _)| seq).collect();
    o.check(
        seqs == (0..i64::from(N)).collect::<Vec<_>>(),
        &format!("Cyclone got {seqs:?} on {NAME:?}"),
    );
}
