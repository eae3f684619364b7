//! DDS Security through the DCPS API, over loopback UDP: participants with identities of one
//! `halyard security init --protect none` set-up authenticate each other (PKI-DH) and
//! exchange data; a participant of another set-up gets nothing; permissions are enforced on
//! local creation and on remote matching; full protection (rtps, discovery, liveliness,
//! metadata and data, SIGN or ENCRYPT, with or without origin authentication) and rtps
//! protection alone, of every kind, carry every sample.
#![cfg(feature = "security")]
// The set-up's validity starts at the real time, and waits are timed.
#![allow(clippy::disallowed_methods)]

use halyard::qos::{EndpointQos, GroupQos, ReliabilityKind};
use halyard::{DomainParticipant, Error, ParticipantOptions};
use halyard_security::access::ProtectionKind;
use halyard_security::random::OsRandom;
use halyard_security::setup::{self, AllowSpec, InitOptions, KeyKind, Protection};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(halyard::Topic, Clone, Debug, Default, PartialEq)]
#[topic(type_name = "SecureNote")]
struct SecureNote {
    #[key]
    id: u32,
    text: String,
}

const T: Duration = Duration::from_secs(10);

/// Takes from `r` until `n` samples arrived or `timeout` passed; how many arrived.
fn take_n(r: &halyard::DataReader<SecureNote>, n: usize, timeout: Duration) -> usize {
    let mut got = 0;
    let end = std::time::Instant::now() + timeout;
    while got < n && std::time::Instant::now() < end {
        r.wait_for_data(Duration::from_millis(100));
        got += r.take(100).unwrap().len();
    }
    got
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn set_up(name: &str, participants: &[&str], none: bool, allows: Option<Vec<&str>>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halyard-dcps-sec-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = InitOptions {
        participants: participants.iter().map(|s| s.to_string()).collect(),
        protection: Protection {
            encrypt: true,
            origin_auth: false,
            none,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: vec![],
        allows: allows.map(|v| {
            v.iter()
                .map(|a| AllowSpec::parse(a).expect("allow spec"))
                .collect()
        }),
        force: false,
        now: now(),
    };
    setup::init(&dir, &opts, &mut OsRandom).expect("security init");
    dir
}

/// A `--protect none` set-up whose governance then asks for rtps protection `kind`
/// (`SIGN`, `ENCRYPT` or one of those with origin authentication): re-signed with the
/// set-up's permissions CA.
fn set_up_rtps(name: &str, participants: &[&str], kind: ProtectionKind) -> PathBuf {
    let dir = set_up(name, participants, true, None);
    setup::set_rtps_protection(&dir, kind).expect("rtps protection");
    dir
}

fn secure(domain: u32, identity: &Path) -> Result<DomainParticipant, Error> {
    DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            security: Some(identity.to_path_buf()),
            ..Default::default()
        },
    )
}

fn reliable() -> EndpointQos {
    let mut q = EndpointQos::reader_default();
    q.reliability.kind = ReliabilityKind::Reliable;
    q
}

#[test]
fn authenticated_participants_exchange_data_and_an_outsider_gets_nothing() {
    let dir = set_up("pair", &["alice", "bob"], true, None);
    let other = set_up("other", &["eve"], true, None);
    let domain = 141;
    let alice = secure(domain, &dir.join("alice")).expect("alice");
    let bob = secure(domain, &dir.join("bob")).expect("bob");
    let eve = secure(domain, &other.join("eve")).expect("eve");
    let topic = alice.create_topic::<SecureNote>("Notes").unwrap();
    let w = alice
        .create_publisher(GroupQos::default())
        .create_datawriter(&topic, EndpointQos::writer_default())
        .unwrap();
    let readers: Vec<_> = [&bob, &eve]
        .iter()
        .map(|p| {
            let t = p.create_topic::<SecureNote>("Notes").unwrap();
            p.create_subscriber(GroupQos::default())
                .create_datareader(&t, reliable())
                .unwrap()
        })
        .collect();
    w.wait_for_matched(1, T)
        .expect("alice's writer matches bob's reader");
    for id in 0..5 {
        w.write(&SecureNote {
            id,
            text: format!("note {id}"),
        })
        .unwrap();
    }
    assert_eq!(take_n(&readers[0], 5, T), 5, "bob receives every note");
    std::thread::sleep(Duration::from_millis(500));
    let eve_got = readers[1].take(100).unwrap();
    assert!(
        eve_got.is_empty(),
        "eve (another set-up) received {} samples",
        eve_got.len()
    );
    assert!(
        readers[1]
            .wait_for_matched(1, Duration::from_millis(100))
            .is_err(),
        "eve's reader matched alice's writer"
    );
}

#[test]
fn permissions_are_enforced_on_creation_and_on_matching() {
    // carol may only subscribe to "Open"; dave may publish everything.
    let dir = set_up(
        "perm",
        &["carol", "dave"],
        true,
        Some(vec!["carol:sub:Open", "dave:pubsub:*"]),
    );
    let domain = 142;
    let carol = secure(domain, &dir.join("carol")).expect("carol");
    let dave = secure(domain, &dir.join("dave")).expect("dave");
    // carol may not publish anything: refused at creation, saying why.
    let t = carol.create_topic::<SecureNote>("Open").unwrap();
    match carol
        .create_publisher(GroupQos::default())
        .create_datawriter(&t, EndpointQos::writer_default())
    {
        Err(Error::NotAllowedBySecurity(why)) => assert!(why.contains("publish"), "{why}"),
        Err(e) => panic!("expected NotAllowedBySecurity, got {e}"),
        Ok(_) => panic!("carol created a writer her permissions do not grant"),
    }
    // carol may not subscribe to "Closed".
    let closed = carol.create_topic::<SecureNote>("Closed").unwrap();
    assert!(matches!(
        carol
            .create_subscriber(GroupQos::default())
            .create_datareader(&closed, reliable()),
        Err(Error::NotAllowedBySecurity(_))
    ));
    // What she may do works, with dave's writer.
    let open_r = carol
        .create_subscriber(GroupQos::default())
        .create_datareader(&t, reliable())
        .unwrap();
    let dt = dave.create_topic::<SecureNote>("Open").unwrap();
    let dw = dave
        .create_publisher(GroupQos::default())
        .create_datawriter(&dt, EndpointQos::writer_default())
        .unwrap();
    dw.wait_for_matched(1, T)
        .expect("dave's writer matches carol's reader");
    dw.write(&SecureNote {
        id: 1,
        text: "open".into(),
    })
    .unwrap();
    assert_eq!(take_n(&open_r, 1, T), 1, "carol receives");
}

/// A set-up protecting everything (rtps, discovery, liveliness, metadata and data) with SIGN
/// or ENCRYPT, with or without origin authentication, as `halyard security init --protect
/// sign|encrypt [--origin-auth]` makes it.
fn set_up_full(name: &str, participants: &[&str], encrypt: bool, origin_auth: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halyard-dcps-sec-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = InitOptions {
        participants: participants.iter().map(|s| s.to_string()).collect(),
        protection: Protection {
            encrypt,
            origin_auth,
            none: false,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: vec![],
        allows: None,
        force: false,
        now: now(),
    };
    setup::init(&dir, &opts, &mut OsRandom).expect("security init");
    dir
}

#[test]
fn full_protection_at_every_level_carries_every_sample_and_keys() {
    let levels = [(false, false), (true, false), (false, true), (true, true)];
    for (i, (encrypt, origin)) in levels.into_iter().enumerate() {
        let what = format!("encrypt={encrypt} origin_auth={origin}");
        let dir = set_up_full(&format!("full-{i}"), &["alice", "bob"], encrypt, origin);
        let domain = 150 + i as u32;
        let alice = secure(domain, &dir.join("alice")).expect("alice");
        let bob = secure(domain, &dir.join("bob")).expect("bob");
        let t = alice.create_topic::<SecureNote>("Sealed").unwrap();
        let w = alice
            .create_publisher(GroupQos::default())
            .create_datawriter(&t, reliable())
            .unwrap();
        let tb = bob.create_topic::<SecureNote>("Sealed").unwrap();
        let r = bob
            .create_subscriber(GroupQos::default())
            .create_datareader(&tb, reliable())
            .unwrap();
        w.wait_for_matched(1, T)
            .unwrap_or_else(|e| panic!("{what}: not matched under full protection: {e}"));
        // Small samples, and large ones (fragmented after payload encoding).
        for id in 0..40u32 {
            let len = if id % 4 == 0 { 100_000 } else { 200 };
            w.write(&SecureNote {
                id,
                text: "x".repeat(len),
            })
            .unwrap();
        }
        let mut got = Vec::new();
        let end = std::time::Instant::now() + T;
        while got.len() < 40 && std::time::Instant::now() < end {
            r.wait_for_data(Duration::from_millis(100));
            for s in r.take(100).unwrap() {
                if let Some(d) = s.data {
                    got.push(d);
                }
            }
        }
        assert_eq!(got.len(), 40, "{what}: bob receives every note");
        for (k, d) in got.iter().enumerate() {
            assert_eq!(d.id, k as u32, "{what}: in order, keys intact");
            let len = if d.id % 4 == 0 { 100_000 } else { 200 };
            assert_eq!(d.text.len(), len, "{what}: payload intact");
        }
    }
}

#[test]
fn rtps_protection_of_every_kind_carries_data() {
    // Every rtps kind, origin authentication included (what `halyard security help` and the
    // user guide say Halyard implements; `--protect rtps-sign --origin-auth` asks for it).
    for (i, kind) in [
        ProtectionKind::Sign,
        ProtectionKind::Encrypt,
        ProtectionKind::SignWithOriginAuthentication,
        ProtectionKind::EncryptWithOriginAuthentication,
    ]
    .into_iter()
    .enumerate()
    {
        let dir = set_up_rtps(&format!("rtps-{}", kind.as_str()), &["alice", "bob"], kind);
        let domain = [144, 145, 190, 191][i];
        let alice = secure(domain, &dir.join("alice")).expect("alice");
        let bob = secure(domain, &dir.join("bob")).expect("bob");
        let t = alice.create_topic::<SecureNote>("Sealed").unwrap();
        let w = alice
            .create_publisher(GroupQos::default())
            .create_datawriter(&t, EndpointQos::writer_default())
            .unwrap();
        let tb = bob.create_topic::<SecureNote>("Sealed").unwrap();
        let r = bob
            .create_subscriber(GroupQos::default())
            .create_datareader(&tb, reliable())
            .unwrap();
        w.wait_for_matched(1, T)
            .expect("matched under rtps protection");
        for id in 0..20 {
            w.write(&SecureNote {
                id,
                text: "x".repeat(3000),
            })
            .unwrap();
        }
        assert_eq!(take_n(&r, 20, T), 20, "{kind:?}: bob receives every note");
    }
}

#[test]
fn moving_to_a_partition_the_permissions_do_not_grant_is_refused_and_changes_nothing() {
    let dir = set_up(
        "partition",
        &["alice"],
        true,
        Some(vec!["alice:pubsub:Notes@granted"]),
    );
    let alice = secure(160, &dir.join("alice")).expect("alice");
    let t = alice.create_topic::<SecureNote>("Notes").unwrap();
    let granted = GroupQos {
        partition: vec!["granted".into()],
        ..GroupQos::default()
    };
    let publisher = alice.create_publisher(granted.clone());
    let _w = publisher
        .create_datawriter(&t, EndpointQos::writer_default())
        .expect("a writer in the granted partition");
    let subscriber = alice.create_subscriber(granted.clone());
    let _r = subscriber
        .create_datareader(&t, reliable())
        .expect("a reader in the granted partition");
    let elsewhere = GroupQos {
        partition: vec!["elsewhere".into()],
        ..GroupQos::default()
    };
    for (what, r) in [
        ("publisher", publisher.set_qos(elsewhere.clone())),
        ("subscriber", subscriber.set_qos(elsewhere.clone())),
    ] {
        match r {
            Err(Error::NotAllowedBySecurity(why)) => {
                assert!(why.contains("elsewhere"), "{what}: {why}")
            }
            other => panic!("{what}: expected NotAllowedBySecurity, got {other:?}"),
        }
    }
    assert_eq!(publisher.qos().partition, granted.partition);
    assert_eq!(subscriber.qos().partition, granted.partition);
}
