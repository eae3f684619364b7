//! Proves what a secured participant does with a datagram that holds a protected submessage
//! it cannot decode (yet) followed by plain submessages: the plain ones must still be handled.
//! Cyclone DDS 0.10 sends exactly that during a handshake: its ParticipantVolatileMessageSecure
//! ACKNACK, protected with keys derived from the shared secret, in the same datagram as the
//! handshake's Final message, from which the replier derives that secret.
#![cfg(feature = "security")]
// The set-up's validity starts at the real time, and waits are timed.
#![allow(clippy::disallowed_methods)]

mod common;

use common::{fake_prefix, spdp_datagram, FULL_BUILTIN};
use halyard::{DomainParticipant, ParticipantOptions};
use halyard_security::random::OsRandom;
use halyard_security::setup::{self, InitOptions, KeyKind, Protection};
use halyard_wire::message::id;
use halyard_wire::{GuidPrefix, Locator};
use std::net::UdpSocket;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn set_up() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halyard-undecodable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = InitOptions {
        participants: vec!["alice".into()],
        protection: Protection {
            encrypt: false,
            origin_auth: false,
            none: true,
        },
        key: KeyKind::EcP256,
        days: 30,
        domains: Vec::new(),
        allows: None,
        force: true,
        now: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64,
    };
    setup::init(&dir, &opts, &mut OsRandom).expect("security init");
    dir
}

/// A submessage header (little-endian flag set) and body.
fn submessage(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![kind, 0x01];
    v.extend_from_slice(&(body.len() as u16).to_le_bytes());
    v.extend_from_slice(body);
    v
}

/// SEC_PREFIX (an unknown key) + a signed ACKNACK of the volatile secure reader + SEC_POSTFIX
/// (a MAC that cannot verify): well formed, undecodable.
fn undecodable_protected_submessage() -> Vec<u8> {
    let mut acknack = Vec::new();
    acknack.extend_from_slice(&[0xff, 0x02, 0x02, 0xc4]); // readerId
    acknack.extend_from_slice(&[0xff, 0x02, 0x02, 0xc3]); // writerId
    acknack.extend_from_slice(&0i32.to_le_bytes()); // readerSNState.bitmapBase.high
    acknack.extend_from_slice(&1u32.to_le_bytes()); // .low
    acknack.extend_from_slice(&0u32.to_le_bytes()); // numBits
    acknack.extend_from_slice(&1u32.to_le_bytes()); // count
    let mut v = submessage(id::SEC_PREFIX, &[0x5a; 20]);
    v.extend(submessage(id::ACKNACK, &acknack));
    v.extend(submessage(id::SEC_POSTFIX, &[0; 20]));
    v
}

fn wait_discovered(dp: &DomainParticipant, prefix: GuidPrefix, send: impl Fn()) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        send();
        if dp
            .discovered_participants()
            .iter()
            .any(|p| p.guid.prefix == prefix)
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// An SPDP DATA after an undecodable protected submessage in the same datagram is handled
/// (the participant learns of the announcer), as it is alone in a datagram.
#[test]
fn plain_submessages_after_an_undecodable_protected_one_are_handled() {
    let dir = set_up();
    let domain = 220 + std::process::id() % 10;
    let dp = DomainParticipant::with_options(
        domain,
        ParticipantOptions {
            interface: Some("lo".into()),
            security: Some(dir.join("alice")),
            ..Default::default()
        },
    )
    .expect("secured participant");
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let locs = [Locator::udpv4([127, 0, 0, 1], port)];
    let (ip, hport) = dp.unicast_locator().as_udpv4().unwrap();
    let halyard_at = std::net::SocketAddr::from((ip, hport));

    // Control: an SPDP DATA alone in its datagram.
    let alone = fake_prefix(7, 1);
    let spdp = spdp_datagram(domain, alone, &locs, FULL_BUILTIN);
    let seen = wait_discovered(&dp, alone, || {
        sock.send_to(&spdp, halyard_at).unwrap();
    });
    assert!(seen, "control: the SPDP DATA alone was not handled");

    // The same after an undecodable protected submessage.
    let after = fake_prefix(7, 2);
    let spdp = spdp_datagram(domain, after, &locs, FULL_BUILTIN);
    let mut datagram = spdp[..20].to_vec();
    datagram.extend(undecodable_protected_submessage());
    datagram.extend_from_slice(&spdp[20..]);
    let seen = wait_discovered(&dp, after, || {
        sock.send_to(&datagram, halyard_at).unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        seen,
        "the SPDP DATA after an undecodable protected submessage was dropped with it"
    );
}
