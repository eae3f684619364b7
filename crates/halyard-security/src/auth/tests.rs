//! Proves PKI-DH end to end on a test PKI made here with OpenSSL: identities load and are
//! refused for the right reasons, handshakes complete in both directions with equal secrets,
//! and tampered, replayed or foreign messages are refused with the right error.

use super::*;
use crate::random::{SecureRandom, SeededRandom};
use crate::token::{
    DataHolder, MessageIdentity, ParticipantGenericMessage, GMCLASSID_AUTH_HANDSHAKE,
};
use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{BasicConstraints, KeyUsage};
use openssl::x509::{X509Name, X509};
use std::sync::OnceLock;

/// The "current time" of these tests (2027-01-15).
const NOW: i64 = 1_800_000_000;
const DAY: i64 = 86_400;

struct Id {
    cert: Vec<u8>,
    key: Vec<u8>,
}

struct Pki {
    ca: Vec<u8>,
    other_ca: Vec<u8>,
    alice_ec: Id,
    bob_ec: Id,
    alice_rsa: Id,
    bob_rsa: Id,
    expired: Id,
    not_yet_valid: Id,
    foreign: Id,
    p384: Id,
    /// Valid for 30 years, longer than its CA (which ends at NOW + 3650 days).
    outlives_ca: Id,
}

fn ec_key(nid: Nid) -> PKey<Private> {
    let group = EcGroup::from_curve_name(nid).unwrap();
    PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap()
}

fn name(cn: &str) -> X509Name {
    let mut n = X509Name::builder().unwrap();
    n.append_entry_by_text("C", "NL").unwrap();
    n.append_entry_by_text("O", "Example").unwrap();
    n.append_entry_by_text("CN", cn).unwrap();
    n.build()
}

fn make_ca(cn: &str) -> (X509, PKey<Private>) {
    let key = ec_key(Nid::X9_62_PRIME256V1);
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&BigNum::from_u32(1).unwrap().to_asn1_integer().unwrap())
        .unwrap();
    b.set_subject_name(&name(cn)).unwrap();
    b.set_issuer_name(&name(cn)).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::from_unix(NOW - 3650 * DAY).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::from_unix(NOW + 3650 * DAY).unwrap())
        .unwrap();
    b.append_extension(BasicConstraints::new().critical().ca().build().unwrap())
        .unwrap();
    b.append_extension(KeyUsage::new().key_cert_sign().crl_sign().build().unwrap())
        .unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    (b.build(), key)
}

fn issue(
    ca: &(X509, PKey<Private>),
    cn: &str,
    key: &PKey<Private>,
    valid: (i64, i64),
    serial: u32,
) -> Id {
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&BigNum::from_u32(serial).unwrap().to_asn1_integer().unwrap())
        .unwrap();
    b.set_subject_name(&name(cn)).unwrap();
    b.set_issuer_name(ca.0.subject_name()).unwrap();
    b.set_pubkey(key).unwrap();
    b.set_not_before(&Asn1Time::from_unix(valid.0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::from_unix(valid.1).unwrap())
        .unwrap();
    b.sign(&ca.1, MessageDigest::sha256()).unwrap();
    Id {
        cert: b.build().to_pem().unwrap(),
        key: key.private_key_to_pem_pkcs8().unwrap(),
    }
}

fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let ca = make_ca("Identity CA");
        let other = make_ca("Other CA");
        let year = (NOW - 365 * DAY, NOW + 365 * DAY);
        let ec = || ec_key(Nid::X9_62_PRIME256V1);
        let rsa = || PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
        Pki {
            ca: ca.0.to_pem().unwrap(),
            other_ca: other.0.to_pem().unwrap(),
            alice_ec: issue(&ca, "alice", &ec(), year, 10),
            bob_ec: issue(&ca, "bob", &ec(), year, 11),
            alice_rsa: issue(&ca, "alice-rsa", &rsa(), year, 12),
            bob_rsa: issue(&ca, "bob-rsa", &rsa(), year, 13),
            expired: issue(&ca, "old", &ec(), (NOW - 365 * DAY, NOW - DAY), 14),
            not_yet_valid: issue(&ca, "new", &ec(), (NOW + DAY, NOW + 365 * DAY), 15),
            foreign: issue(&other, "mallory", &ec(), year, 16),
            p384: issue(&ca, "big", &ec_key(Nid::SECP384R1), year, 17),
            outlives_ca: issue(&ca, "long", &ec(), (NOW - DAY, NOW + 10_000 * DAY), 18),
        }
    })
}

fn identity_at(id: &Id, candidate: u8, now: i64) -> Result<LocalIdentity, AuthError> {
    LocalIdentity::new(&pki().ca, &id.cert, &id.key, [candidate; 12], now)
}

fn identity(id: &Id, candidate: u8) -> LocalIdentity {
    identity_at(id, candidate, NOW).unwrap()
}

/// A minimal `c.pdata`: PID_PARTICIPANT_GUID and PID_SENTINEL, big-endian, no header.
fn pdata(prefix: [u8; 12]) -> Vec<u8> {
    [
        &[0x00, 0x50, 0x00, 0x10][..],
        &prefix,
        &[0, 0, 1, 0xc1],
        &[0x00, 0x01, 0x00, 0x00],
    ]
    .concat()
}

/// Sends a token through a `dds.sec.auth` generic message, as on the wire.
fn wire(token: DataHolder) -> DataHolder {
    let m = ParticipantGenericMessage {
        message_identity: MessageIdentity {
            source_guid: [1; 16],
            sequence_number: 1,
        },
        message_class_id: GMCLASSID_AUTH_HANDSHAKE.into(),
        message_data: vec![token],
        ..Default::default()
    };
    let mut m = ParticipantGenericMessage::from_payload(&m.to_payload().unwrap()).unwrap();
    m.message_data.pop().unwrap()
}

/// Both sides of one handshake set up to the Request.
struct Pair<'a> {
    init: &'a LocalIdentity,
    repl: &'a LocalIdentity,
    init_remote: RemoteIdentity,
    repl_remote: RemoteIdentity,
}

fn pair<'a>(a: &'a LocalIdentity, b: &'a LocalIdentity, rng: &mut dyn SecureRandom) -> Pair<'a> {
    let mut ra = a
        .validate_remote_identity(b.identity_token(), b.guid_prefix(), None, rng)
        .unwrap();
    let mut rb = b
        .validate_remote_identity(a.identity_token(), a.guid_prefix(), None, rng)
        .unwrap();
    assert_ne!(ra.role(), rb.role());
    let (ta, tb) = (ra.auth_request().cloned(), rb.auth_request().cloned());
    rb.receive_auth_request(&wire(ta.unwrap())).unwrap();
    ra.receive_auth_request(&wire(tb.unwrap())).unwrap();
    if ra.role() == HandshakeRole::Initiator {
        Pair {
            init: a,
            repl: b,
            init_remote: ra,
            repl_remote: rb,
        }
    } else {
        Pair {
            init: b,
            repl: a,
            init_remote: rb,
            repl_remote: ra,
        }
    }
}

const PERM: &[u8] = b"MIME-Version: 1.0\r\n(signed permissions)";

struct Run {
    init: Handshake,
    repl: Handshake,
    request: DataHolder,
    reply: DataHolder,
    fin: DataHolder,
    s_init: SharedSecret,
    s_repl: SharedSecret,
}

fn run(a: &LocalIdentity, b: &LocalIdentity, opts: &HandshakeOptions, seed: u64) -> Run {
    let mut rng = SeededRandom::new(seed);
    let p = pair(a, b, &mut rng);
    let (mut init, request) = Handshake::begin_request(
        p.init,
        &p.init_remote,
        PERM,
        &pdata(p.init.guid_prefix()),
        opts,
        &mut rng,
    )
    .unwrap();
    let request = wire(request);
    let (mut repl, reply) = Handshake::begin_reply(
        p.repl,
        &p.repl_remote,
        &request,
        b"",
        &pdata(p.repl.guid_prefix()),
        opts,
        NOW,
        &mut rng,
    )
    .unwrap();
    let reply = wire(reply);
    let Step::SendFinal {
        message: fin,
        secret: s_init,
    } = init.process(&reply, NOW).unwrap()
    else {
        panic!("the initiator must send a Final");
    };
    let fin = wire(fin);
    let Step::Completed(s_repl) = repl.process(&fin, NOW).unwrap() else {
        panic!("the replier must complete");
    };
    Run {
        init,
        repl,
        request,
        reply,
        fin,
        s_init,
        s_repl,
    }
}

fn names(t: &DataHolder) -> Vec<&str> {
    t.binary_properties
        .iter()
        .map(|p| p.name.as_str())
        .collect()
}

#[test]
fn handshake_completes_for_every_certificate_pairing_in_both_directions() {
    let p = pki();
    let (ae, be) = (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2));
    let (ar, br) = (identity(&p.alice_rsa, 3), identity(&p.bob_rsa, 4));
    let opts = HandshakeOptions::default();
    for (a, b) in [(&ae, &be), (&be, &ae), (&ar, &br), (&ae, &br), (&br, &ae)] {
        let r = run(a, b, &opts, 7);
        assert_eq!(r.s_init, r.s_repl);
        assert_ne!(r.s_init.shared_secret, [0; 32]);
        assert_ne!(r.s_init.challenge1, r.s_init.challenge2);
        assert!(r.init.is_complete() && r.repl.is_complete());
        assert_eq!(r.init.shared_secret(), Some(&r.s_init));
        // Each side learns the other's credentials.
        let (pi, pr) = (r.init.peer().unwrap(), r.repl.peer().unwrap());
        assert_eq!(pi.permissions, b"");
        assert_eq!(pr.permissions, PERM);
        assert_eq!(pr.participant_data, pdata(pr.guid_prefix));
        let (init_id, repl_id) = if a.guid_prefix() < b.guid_prefix() {
            (a, b)
        } else {
            (b, a)
        };
        assert_eq!(pi.subject_name, repl_id.subject_name());
        assert_eq!(pr.subject_name, init_id.subject_name());
        assert_eq!(pi.algo, repl_id.algo());
    }
}

#[test]
fn tokens_carry_cyclones_properties_in_cyclones_order() {
    let p = pki();
    let (a, b) = (identity(&p.alice_ec, 1), identity(&p.bob_rsa, 4));
    let r = run(&a, &b, &HandshakeOptions::default(), 1);
    assert_eq!(r.request.class_id, "DDS:Auth:PKI-DH:1.0+Req");
    assert_eq!(
        names(&r.request),
        [
            "c.id",
            "c.perm",
            "c.pdata",
            "c.dsign_algo",
            "c.kagree_algo",
            "dh1",
            "challenge1"
        ]
    );
    assert_eq!(
        names(&r.reply),
        [
            "c.id",
            "c.perm",
            "c.pdata",
            "c.dsign_algo",
            "c.kagree_algo",
            "dh2",
            "challenge1",
            "challenge2",
            "signature"
        ]
    );
    assert_eq!(names(&r.fin), ["challenge1", "challenge2", "signature"]);
    assert_eq!(r.reply.class_id, "DDS:Auth:PKI-DH:1.0+Reply");
    assert_eq!(r.fin.class_id, "DDS:Auth:PKI-DH:1.0+Final");
    for t in [&r.request, &r.reply] {
        assert_eq!(
            t.binary_property("c.kagree_algo"),
            Some(&b"ECDH+prime256v1-CEUM\0"[..])
        );
        assert_eq!(
            t.binary_property("dh1")
                .or(t.binary_property("dh2"))
                .unwrap()
                .len(),
            65
        );
        assert!(t.properties.is_empty());
    }
    let dsigns: Vec<_> = [&r.request, &r.reply]
        .iter()
        .map(|t| t.binary_property("c.dsign_algo").unwrap().to_vec())
        .collect();
    assert!(dsigns.contains(&b"ECDSA-SHA256\0".to_vec()));
    assert!(dsigns.contains(&b"RSASSA-PSS-SHA256\0".to_vec()));
    let init_perm = r.request.binary_property("c.perm").unwrap();
    assert_eq!(init_perm, [PERM, &[0]].concat());
    assert_eq!(r.reply.binary_property("c.perm").unwrap(), b"\0");
    // The Request's challenge1 is the future_challenge the initiator announced.
    assert_eq!(
        r.request.binary_property("challenge1").unwrap(),
        r.s_init.challenge1
    );
    assert_eq!(
        r.reply.binary_property("challenge2").unwrap(),
        r.s_init.challenge2
    );
}

#[test]
fn optional_fields_and_modp_key_agreement_complete() {
    let p = pki();
    let (a, b) = (identity(&p.alice_rsa, 3), identity(&p.bob_ec, 2));
    let opts = HandshakeOptions {
        include_optional: true,
        key_agreement: KeyAgreement::DhModp2048,
    };
    let r = run(&a, &b, &opts, 3);
    assert_eq!(r.s_init, r.s_repl);
    assert_eq!(r.init.key_agreement(), KeyAgreement::DhModp2048);
    assert_eq!(r.repl.key_agreement(), KeyAgreement::DhModp2048);
    assert_eq!(
        names(&r.request),
        [
            "c.id",
            "c.perm",
            "c.pdata",
            "c.dsign_algo",
            "c.kagree_algo",
            "hash_c1",
            "dh1",
            "challenge1"
        ]
    );
    assert_eq!(
        names(&r.fin),
        [
            "challenge1",
            "challenge2",
            "dh1",
            "dh2",
            "hash_c2",
            "hash_c1",
            "signature"
        ]
    );
    assert_eq!(r.request.binary_property("dh1").unwrap()[0], 0x02); // DER INTEGER
}

#[test]
fn seeded_runs_replay_their_challenges_and_keys() {
    let p = pki();
    let (a, b) = (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2));
    let opts = HandshakeOptions::default();
    let (r1, r2, r3) = (
        run(&a, &b, &opts, 5),
        run(&a, &b, &opts, 5),
        run(&a, &b, &opts, 6),
    );
    assert_eq!(r1.s_init, r2.s_init);
    assert_eq!(
        r1.request.binary_property("dh1"),
        r2.request.binary_property("dh1")
    );
    assert_ne!(r1.s_init, r3.s_init);
}

#[test]
fn local_identity_guid_token_and_subject_are_cyclones() {
    let p = pki();
    let a = identity(&p.alice_ec, 1);
    assert_eq!(a.subject_name(), "/C=NL/O=Example/CN=alice");
    let t = a.identity_token();
    assert_eq!(t.class_id, "DDS:Auth:PKI-DH:1.0");
    let props: Vec<(&str, &str)> = t
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(
        props,
        [
            ("dds.cert.sn", "/C=NL/O=Example/CN=alice"),
            ("dds.cert.algo", "EC-prime256v1"),
            ("dds.ca.sn", "/C=NL/O=Example/CN=Identity CA"),
            ("dds.ca.algo", "EC-prime256v1"),
        ]
    );
    assert!(t.binary_properties.is_empty());
    let r = identity(&p.alice_rsa, 1);
    assert_eq!(
        r.identity_token().property("dds.cert.algo"),
        Some("RSA-2048")
    );
    // Adjusted prefix: 0x80 | first 47 bits of SHA-256(subject DER), then SHA-256(candidate).
    let cert = X509::from_pem(&p.alice_ec.cert).unwrap();
    let h = openssl::sha::sha256(&cert.subject_name().to_der().unwrap());
    let l = openssl::sha::sha256(&[1u8; 12]);
    let g = a.guid_prefix();
    assert_eq!(g[0], 0x80 | h[0] >> 1);
    assert_eq!(g[1], (h[0] << 7) | (h[1] >> 1));
    assert_eq!(g[5], (h[4] << 7) | (h[5] >> 1));
    assert_eq!(g[6..], l[..6]);
    // The same subject with another candidate keeps the first 6 bytes.
    assert_eq!(identity(&p.alice_ec, 9).guid_prefix()[..6], g[..6]);
    assert_eq!(a.not_after_unix_secs().unwrap(), NOW + 365 * DAY);
}

#[test]
fn local_identity_refusals_are_typed() {
    let p = pki();
    let err = |r: Result<LocalIdentity, AuthError>| r.unwrap_err();
    assert!(matches!(
        err(identity_at(&p.expired, 1, NOW)),
        AuthError::Expired { .. }
    ));
    assert!(matches!(
        err(identity_at(&p.not_yet_valid, 1, NOW)),
        AuthError::NotYetValid { .. }
    ));
    assert!(matches!(
        err(identity_at(&p.foreign, 1, NOW)),
        AuthError::WrongCa { .. }
    ));
    let mismatched = Id {
        cert: p.alice_ec.cert.clone(),
        key: p.bob_ec.key.clone(),
    };
    assert_eq!(
        err(identity_at(&mismatched, 1, NOW)),
        AuthError::KeyMismatch
    );
    assert!(matches!(
        err(identity_at(&p.p384, 1, NOW)),
        AuthError::UnsupportedAlgorithm { .. }
    ));
    let garbage = Id {
        cert: b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".to_vec(),
        key: p.alice_ec.key.clone(),
    };
    assert!(matches!(
        err(identity_at(&garbage, 1, NOW)),
        AuthError::BadPem { .. }
    ));
    // Valid against the other CA when that is the configured one.
    assert!(LocalIdentity::new(&p.other_ca, &p.foreign.cert, &p.foreign.key, [1; 12], NOW).is_ok());
}

/// The chain is verified at the given time, not the machine's clock: in 2038 the CA has
/// expired though the certificate has not.
#[test]
fn certificate_chains_are_checked_at_the_given_time() {
    let p = pki();
    assert!(identity_at(&p.outlives_ca, 1, NOW).is_ok());
    let e = identity_at(&p.outlives_ca, 1, NOW + 4000 * DAY).unwrap_err();
    assert!(matches!(e, AuthError::WrongCa { .. }), "{e}");
}

#[test]
fn the_smaller_guid_initiates_and_only_one_auth_request_is_made() {
    let p = pki();
    let (a, b) = (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2));
    let mut rng = SeededRandom::new(1);
    let ra = a
        .validate_remote_identity(b.identity_token(), b.guid_prefix(), None, &mut rng)
        .unwrap();
    let expect = if a.guid_prefix() < b.guid_prefix() {
        HandshakeRole::Initiator
    } else {
        HandshakeRole::Replier
    };
    assert_eq!(ra.role(), expect);
    let areq = ra.auth_request().unwrap();
    assert_eq!(areq.class_id, "DDS:Auth:PKI-DH:1.0+AuthReq");
    assert_eq!(names(areq), ["future_challenge"]);
    // With the peer's AuthRequest in hand, none is made.
    let rb = b
        .validate_remote_identity(a.identity_token(), a.guid_prefix(), Some(areq), &mut rng)
        .unwrap();
    assert!(rb.auth_request().is_none());
    let bad = DataHolder::new("DDS:Auth:Other:1.0");
    assert!(matches!(
        a.validate_remote_identity(&bad, b.guid_prefix(), None, &mut rng),
        Err(AuthError::UnsupportedIdentityToken(_))
    ));
}

/// Runs up to the Request, then lets `edit` change it before the replier sees it.
fn reply_to_edited_request(
    a: &LocalIdentity,
    b: &LocalIdentity,
    opts: &HandshakeOptions,
    edit: impl FnOnce(&mut DataHolder),
) -> Result<(Handshake, DataHolder), AuthError> {
    let mut rng = SeededRandom::new(11);
    let p = pair(a, b, &mut rng);
    let (_, mut request) = Handshake::begin_request(
        p.init,
        &p.init_remote,
        PERM,
        &pdata(p.init.guid_prefix()),
        opts,
        &mut rng,
    )
    .unwrap();
    edit(&mut request);
    Handshake::begin_reply(
        p.repl,
        &p.repl_remote,
        &request,
        PERM,
        &pdata(p.repl.guid_prefix()),
        opts,
        NOW,
        &mut rng,
    )
}

fn set(t: &mut DataHolder, name: &str, value: &[u8]) {
    let p = t
        .binary_properties
        .iter_mut()
        .find(|p| p.name == name)
        .unwrap();
    p.value = value.to_vec();
}

#[test]
fn tampered_signatures_are_refused_on_both_sides() {
    let p = pki();
    for (a, b) in [
        (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2)),
        (identity(&p.alice_rsa, 3), identity(&p.bob_rsa, 4)),
    ] {
        let r = run(&a, &b, &HandshakeOptions::default(), 21);
        // Replay the same exchange with fresh handshakes from the same seed, tampering.
        let mut rng = SeededRandom::new(21);
        let pp = pair(&a, &b, &mut rng);
        let opts = HandshakeOptions::default();
        let (mut init, _) = Handshake::begin_request(
            pp.init,
            &pp.init_remote,
            PERM,
            &pdata(pp.init.guid_prefix()),
            &opts,
            &mut rng,
        )
        .unwrap();
        let mut reply = r.reply.clone();
        let sig = reply.binary_property("signature").unwrap().to_vec();
        let mut bad = sig.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x01;
        set(&mut reply, "signature", &bad);
        assert_eq!(
            init.process(&reply, NOW).unwrap_err(),
            AuthError::BadSignature
        );
        // Changing a signed value (challenge2 is also checked against the AuthRequest, so
        // change dh2 to another valid key) breaks the signature too.
        let mut reply2 = r.reply.clone();
        let other = r.request.binary_property("dh1").unwrap().to_vec();
        set(&mut reply2, "dh2", &other);
        assert_eq!(
            init.process(&reply2, NOW).unwrap_err(),
            AuthError::BadSignature
        );
        // The untouched reply still completes: failures leave the handshake unchanged.
        assert!(matches!(
            init.process(&r.reply, NOW),
            Ok(Step::SendFinal { .. })
        ));

        let mut fin = r.fin.clone();
        let mut bad = fin.binary_property("signature").unwrap().to_vec();
        bad[3] ^= 0x80;
        set(&mut fin, "signature", &bad);
        let mut repl = r.repl;
        // A completed handshake refuses any further message.
        assert!(matches!(
            repl.process(&fin, NOW),
            Err(AuthError::UnexpectedMessage(_))
        ));
        let (mut repl, _) = Handshake::begin_reply(
            pp.repl,
            &pp.repl_remote,
            &r.request,
            b"",
            &pdata(pp.repl.guid_prefix()),
            &opts,
            NOW,
            &mut rng,
        )
        .unwrap();
        assert_eq!(
            repl.process(&fin, NOW).unwrap_err(),
            AuthError::BadSignature
        );
    }
}

#[test]
fn foreign_expired_and_future_peer_certificates_are_refused() {
    let p = pki();
    let bob = identity(&p.bob_ec, 2);
    let opts = HandshakeOptions::default();
    // A peer whose CA is not ours.
    let mallory =
        LocalIdentity::new(&p.other_ca, &p.foreign.cert, &p.foreign.key, [1; 12], NOW).unwrap();
    let mut rng = SeededRandom::new(1);
    let rb = bob
        .validate_remote_identity(
            mallory.identity_token(),
            mallory.guid_prefix(),
            None,
            &mut rng,
        )
        .unwrap();
    let rm = mallory
        .validate_remote_identity(bob.identity_token(), bob.guid_prefix(), None, &mut rng)
        .unwrap();
    let (_, req) = Handshake::begin_request(
        &mallory,
        &rm,
        b"",
        &pdata(mallory.guid_prefix()),
        &opts,
        &mut rng,
    )
    .unwrap();
    let e = Handshake::begin_reply(
        &bob,
        &rb,
        &req,
        b"",
        &pdata(bob.guid_prefix()),
        &opts,
        NOW,
        &mut rng,
    )
    .unwrap_err();
    assert!(matches!(e, AuthError::WrongCa { .. }), "{e}");

    // A peer whose certificate was valid when it started but is not at our `now`.
    for (id, made_at, kind) in [
        (&p.expired, NOW - 30 * DAY, "expired"),
        (&p.not_yet_valid, NOW + 30 * DAY, "future"),
    ] {
        let old = identity_at(id, 1, made_at).unwrap();
        let rb = bob
            .validate_remote_identity(old.identity_token(), old.guid_prefix(), None, &mut rng)
            .unwrap();
        let ro = old
            .validate_remote_identity(bob.identity_token(), bob.guid_prefix(), None, &mut rng)
            .unwrap();
        let (_, req) =
            Handshake::begin_request(&old, &ro, b"", &pdata(old.guid_prefix()), &opts, &mut rng)
                .unwrap();
        let e = Handshake::begin_reply(
            &bob,
            &rb,
            &req,
            b"",
            &pdata(bob.guid_prefix()),
            &opts,
            NOW,
            &mut rng,
        )
        .unwrap_err();
        match kind {
            "expired" => assert!(matches!(e, AuthError::Expired { .. }), "{e}"),
            _ => assert!(matches!(e, AuthError::NotYetValid { .. }), "{e}"),
        }
    }
}

#[test]
fn replayed_and_mismatched_challenges_are_refused() {
    let p = pki();
    let (a, b) = (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2));
    let opts = HandshakeOptions::default();
    let old = run(&a, &b, &opts, 31);
    let new = run(&a, &b, &opts, 32);
    // Yesterday's Reply and Final do not complete today's handshakes.
    let mut rng = SeededRandom::new(32);
    let pp = pair(&a, &b, &mut rng);
    let (mut init, _) = Handshake::begin_request(
        pp.init,
        &pp.init_remote,
        PERM,
        &pdata(pp.init.guid_prefix()),
        &opts,
        &mut rng,
    )
    .unwrap();
    let (mut repl, _) = Handshake::begin_reply(
        pp.repl,
        &pp.repl_remote,
        &new.request,
        b"",
        &pdata(pp.repl.guid_prefix()),
        &opts,
        NOW,
        &mut rng,
    )
    .unwrap();
    assert!(matches!(
        init.process(&old.reply, NOW),
        Err(AuthError::ChallengeMismatch(_))
    ));
    assert!(matches!(
        repl.process(&old.fin, NOW),
        Err(AuthError::ChallengeMismatch(_))
    ));
    // A Request whose challenge1 is not the announced future_challenge.
    let e = reply_to_edited_request(&a, &b, &opts, |r| set(r, "challenge1", &[0xee; 32]));
    assert_eq!(e.unwrap_err(), AuthError::ChallengeMismatch("challenge1"));
    // A Final whose challenge2 is not the replier's.
    let mut fin = new.fin.clone();
    set(&mut fin, "challenge2", &[0xee; 32]);
    assert_eq!(
        repl.process(&fin, NOW).unwrap_err(),
        AuthError::ChallengeMismatch("challenge2")
    );
    // A challenge of the wrong size.
    let e = reply_to_edited_request(&a, &b, &opts, |r| set(r, "challenge1", &[1; 31]));
    assert!(matches!(
        e,
        Err(AuthError::BadProperty {
            name: "challenge1",
            ..
        })
    ));
    // Messages of the wrong kind.
    assert!(matches!(
        init.process(&new.fin, NOW),
        Err(AuthError::WrongClassId { .. })
    ));
}

#[test]
fn wrong_hash_pdata_and_missing_properties_are_refused() {
    let p = pki();
    let (a, b) = (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2));
    let opt = HandshakeOptions {
        include_optional: true,
        ..Default::default()
    };
    let e = reply_to_edited_request(&a, &b, &opt, |r| set(r, "hash_c1", &[0; 32]));
    assert_eq!(e.unwrap_err(), AuthError::HashMismatch("hash_c1"));
    // Changing a hashed property (c.perm) while keeping hash_c1 is caught too.
    let e = reply_to_edited_request(&a, &b, &opt, |r| set(r, "c.perm", b"other\0"));
    assert_eq!(e.unwrap_err(), AuthError::HashMismatch("hash_c1"));
    let plain = HandshakeOptions::default();
    let e = reply_to_edited_request(&a, &b, &plain, |r| set(r, "c.pdata", &pdata([0x80; 12])));
    assert_eq!(e.unwrap_err(), AuthError::ParticipantGuidMismatch);
    let e = reply_to_edited_request(&a, &b, &plain, |r| set(r, "c.pdata", b"junk"));
    assert!(matches!(e, Err(AuthError::BadParticipantData(_))));
    let e = reply_to_edited_request(&a, &b, &plain, |r| {
        r.binary_properties.retain(|p| p.name != "dh1")
    });
    assert_eq!(e.unwrap_err(), AuthError::MissingProperty("dh1"));
    let e = reply_to_edited_request(&a, &b, &plain, |r| {
        set(r, "c.kagree_algo", b"DH+MODP-1024\0")
    });
    assert!(matches!(
        e,
        Err(AuthError::BadProperty {
            name: "c.kagree_algo",
            ..
        })
    ));
    let e = reply_to_edited_request(&a, &b, &plain, |r| {
        r.class_id = "DDS:Auth:PKI-DH:1.0+Reply".into()
    });
    assert!(matches!(e, Err(AuthError::WrongClassId { .. })));
    // Algorithm names are accepted without their NUL too (Cyclone's str_octseq_equal).
    let ok = reply_to_edited_request(&a, &b, &plain, |r| set(r, "c.dsign_algo", b"ECDSA-SHA256"));
    assert!(ok.is_ok());
}

/// Seeded mutations of real handshake messages (as wire payloads and as tokens) fed to the
/// decoders and the handshake: every outcome is a value, never a panic.
#[test]
fn mutated_handshake_messages_never_panic() {
    let p = pki();
    let (a, b) = (identity(&p.alice_ec, 1), identity(&p.bob_ec, 2));
    let opts = HandshakeOptions {
        include_optional: true,
        ..Default::default()
    };
    let r = run(&a, &b, &opts, 41);
    let mut rng = SeededRandom::new(41);
    let pp = pair(&a, &b, &mut rng);
    let fresh_init = |rng: &mut SeededRandom| {
        Handshake::begin_request(
            pp.init,
            &pp.init_remote,
            PERM,
            &pdata(pp.init.guid_prefix()),
            &opts,
            rng,
        )
        .unwrap()
        .0
    };
    let fresh_repl = |rng: &mut SeededRandom| {
        Handshake::begin_reply(
            pp.repl,
            &pp.repl_remote,
            &r.request,
            b"",
            &pdata(pp.repl.guid_prefix()),
            &opts,
            NOW,
            rng,
        )
        .unwrap()
        .0
    };
    let (mut init, mut repl) = (fresh_init(&mut rng), fresh_repl(&mut rng));
    let mut fuzz = SeededRandom::new(99);
    let mut accepted = 0;
    for i in 0..3000 {
        let (which, base) = match i % 3 {
            0 => (0, &r.request),
            1 => (1, &r.reply),
            _ => (2, &r.fin),
        };
        let mut bytes = [0u8; 8];
        fuzz.fill(&mut bytes);
        let token = if bytes[0] & 1 == 0 {
            // Byte-level: mutate the wire payload.
            let m = ParticipantGenericMessage {
                message_data: vec![base.clone()],
                ..Default::default()
            };
            let mut payload = m.to_payload().unwrap();
            let pos = usize::from(u16::from_le_bytes([bytes[1], bytes[2]])) % payload.len();
            match bytes[3] % 3 {
                0 => payload.truncate(pos),
                1 => payload[pos] ^= 1 << (bytes[4] % 8),
                _ => payload[pos] = bytes[4],
            }
            match ParticipantGenericMessage::from_payload(&payload) {
                Ok(mut m) => match m.message_data.pop() {
                    Some(t) => t,
                    None => continue,
                },
                Err(_) => continue,
            }
        } else {
            // Token-level: damage one binary property value.
            let mut t = base.clone();
            let n = t.binary_properties.len();
            let prop = &mut t.binary_properties[usize::from(bytes[1]) % n];
            match bytes[2] % 4 {
                0 => prop.value.clear(),
                1 => prop
                    .value
                    .truncate(usize::from(bytes[3]) % (prop.value.len() + 1)),
                2 if !prop.value.is_empty() => {
                    let pos = usize::from(bytes[3]) % prop.value.len();
                    prop.value[pos] ^= 1 << (bytes[4] % 8);
                }
                _ => prop.value.extend_from_slice(&bytes),
            }
            t
        };
        let ok = match which {
            0 => Handshake::begin_reply(
                pp.repl,
                &pp.repl_remote,
                &token,
                b"",
                &pdata(pp.repl.guid_prefix()),
                &opts,
                NOW,
                &mut rng,
            )
            .is_ok(),
            1 => {
                let ok = init.process(&token, NOW).is_ok();
                if ok {
                    init = fresh_init(&mut rng);
                }
                ok
            }
            _ => {
                let ok = repl.process(&token, NOW).is_ok();
                if ok {
                    repl = fresh_repl(&mut rng);
                }
                ok
            }
        };
        accepted += usize::from(ok);
    }
    // Only mutations of unchecked bytes (e.g. the permissions text) may pass.
    assert!(accepted < 300, "{accepted} mutated messages were accepted");
}
