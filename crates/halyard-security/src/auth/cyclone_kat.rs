//! Known-answer test against a real Cyclone DDS 0.10.2 handshake: two `ddsperf` processes
//! (alice: EC P-256, bob: RSA-2048, same identity CA) captured on loopback
//! (`testdata/cyclone-0.10.2/`). It proves that our decoder and encoder reproduce Cyclone's
//! generic messages byte for byte, that our adjusted GUID derives like Cyclone's from the
//! same certificate (and that Cyclone's SPDP IdentityToken carries no properties), that we
//! accept Cyclone's Request, and that Cyclone's Reply and Final signatures (one ECDSA, one
//! RSASSA-PSS: here bob, the RSA side, has the smaller GUID and initiates, with ECDH) verify
//! over our hash and signature inputs.

use super::*;
use crate::random::SeededRandom;
use crate::token::{entity_id, DataHolder, ParticipantGenericMessage, GMCLASSID_AUTH_REQUEST};
use halyard_cdr::Endianness;

const DIR: &str = "testdata/cyclone-0.10.2";
const CAPTURE: &str = include_str!("testdata/cyclone-0.10.2/handshake.txt");
const CA: &[u8] = include_bytes!("testdata/cyclone-0.10.2/ca.pem");
const ALICE: (&[u8], &[u8]) = (
    include_bytes!("testdata/cyclone-0.10.2/alice.pem"),
    include_bytes!("testdata/cyclone-0.10.2/alice.key"),
);
const BOB: (&[u8], &[u8]) = (
    include_bytes!("testdata/cyclone-0.10.2/bob.pem"),
    include_bytes!("testdata/cyclone-0.10.2/bob.key"),
);
/// A minute after the capture, within every certificate's validity.
const NOW: i64 = 1_795_520_450 + 60;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

struct Participant {
    prefix: [u8; 12],
    token: DataHolder,
    /// (payload bytes, decoded message), in send order.
    messages: Vec<(Vec<u8>, ParticipantGenericMessage)>,
}

/// The SPDP parameters of a PL_CDR_LE payload: (pid, value) pairs up to the sentinel.
fn spdp_parameters(payload: &[u8]) -> Vec<(u16, &[u8])> {
    assert_eq!(&payload[..2], &[0, 3], "Cyclone's SPDP is PL_CDR_LE");
    let mut out = Vec::new();
    let mut p = 4;
    loop {
        let id = u16::from_le_bytes([payload[p], payload[p + 1]]);
        let len = usize::from(u16::from_le_bytes([payload[p + 2], payload[p + 3]]));
        if id == 1 {
            return out;
        }
        out.push((id, &payload[p + 4..p + 4 + len]));
        p += 4 + len;
    }
}

fn participants() -> Vec<Participant> {
    let mut out: Vec<Participant> = Vec::new();
    let lines: Vec<Vec<&str>> = CAPTURE
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').collect())
        .collect();
    for l in lines.iter().filter(|l| l[0] == "SPDP") {
        let payload = hex(l[2]);
        let params = spdp_parameters(&payload);
        let value = |pid| params.iter().find(|(id, _)| *id == pid).unwrap().1;
        let guid = value(crate::token::pid::PARTICIPANT_GUID);
        assert_eq!(hex(l[1]), guid[..12]);
        let token = DataHolder::from_parameter_value(
            value(crate::token::pid::IDENTITY_TOKEN),
            Endianness::Little,
        )
        .unwrap();
        out.push(Participant {
            prefix: guid[..12].try_into().unwrap(),
            token,
            messages: Vec::new(),
        });
    }
    for l in lines.iter().filter(|l| l[0] == "MSG") {
        let payload = hex(l[2]);
        let m = ParticipantGenericMessage::from_payload(&payload).unwrap();
        let who = out.iter_mut().find(|p| p.prefix[..] == hex(l[1])).unwrap();
        who.messages.push((payload, m));
    }
    out
}

/// The participant whose handshake messages carry this certificate in `c.id`.
fn by_cert<'a>(ps: &'a [Participant], cert: &[u8]) -> &'a Participant {
    ps.iter()
        .find(|p| handshake_token(p, 0).1.binary_property("c.id") == Some(cert))
        .unwrap()
}

fn guid(prefix: [u8; 12], entity: u32) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..12].copy_from_slice(&prefix);
    g[12..].copy_from_slice(&entity.to_be_bytes());
    g
}

/// The handshake token of the `n`th `dds.sec.auth` message a participant sent.
fn handshake_token(p: &Participant, n: usize) -> (&ParticipantGenericMessage, &DataHolder) {
    let m = p
        .messages
        .iter()
        .map(|(_, m)| m)
        .filter(|m| m.message_class_id == "dds.sec.auth")
        .nth(n)
        .unwrap();
    (m, &m.message_data[0])
}

#[test]
fn generic_messages_reencode_byte_for_byte() {
    let ps = participants();
    assert_eq!(ps.len(), 2, "{DIR}");
    for p in &ps {
        assert!(p.messages.len() >= 2);
        for (payload, m) in &p.messages {
            let ours = m.to_payload().unwrap();
            assert_eq!(payload[..ours.len()], ours[..]);
            // Anything after is RTPS submessage padding.
            assert!(payload.len() - ours.len() < 4);
            assert!(payload[ours.len()..].iter().all(|&b| b == 0));
            assert_eq!(
                m.message_identity.source_guid,
                guid(p.prefix, entity_id::PARTICIPANT_STATELESS_MESSAGE_WRITER)
            );
            assert_eq!(m.destination_endpoint_guid, [0; 16]);
            assert_eq!(m.source_endpoint_guid, [0; 16]);
            assert_eq!(m.message_data.len(), 1);
        }
        // The first message is the AuthRequest, with no related message.
        let (_, first) = &p.messages[0];
        assert_eq!(first.message_class_id, GMCLASSID_AUTH_REQUEST);
        assert_eq!(first.message_data[0].class_id, CLASS_ID_AUTH_REQUEST);
        assert_eq!(
            first.message_data[0]
                .binary_property("future_challenge")
                .unwrap()
                .len(),
            32
        );
        assert_eq!(first.related_message_identity, Default::default());
    }
}

#[test]
fn identity_token_and_guid_prefix_equal_cyclones() {
    let ps = participants();
    for (cn, (cert, key)) in [("alice", ALICE), ("bob", BOB)] {
        let p = by_cert(&ps, cert);
        let ours = LocalIdentity::new(CA, cert, key, [7; 12], NOW).unwrap();
        // Cyclone 0.10 leaves the token's properties unpropagated: SPDP carries the class only.
        assert_eq!(p.token, DataHolder::new(CLASS_ID), "{cn}");
        assert_eq!(ours.identity_token().class_id, p.token.class_id);
        // The first 6 bytes derive from the subject alone; the rest from the candidate.
        assert_eq!(ours.guid_prefix()[..6], p.prefix[..6], "{cn}");
    }
}

#[test]
fn cyclones_handshake_verifies_with_our_inputs_and_we_accept_its_request() {
    let ps = participants();
    let (alice, bob) = (by_cert(&ps, ALICE.0), by_cert(&ps, BOB.0));
    let (init, repl, init_keys, repl_keys) = if alice.prefix < bob.prefix {
        (alice, bob, ALICE, BOB)
    } else {
        (bob, alice, BOB, ALICE)
    };
    let (req_msg, request) = handshake_token(init, 0);
    let (rep_msg, reply) = handshake_token(repl, 0);
    let (fin_msg, fin) = handshake_token(init, 1);
    assert_eq!(request.class_id, CLASS_ID_REQUEST);
    assert_eq!(reply.class_id, CLASS_ID_REPLY);
    assert_eq!(fin.class_id, CLASS_ID_FINAL);
    assert_eq!(req_msg.related_message_identity, Default::default());
    assert_eq!(rep_msg.related_message_identity, req_msg.message_identity);
    assert_eq!(fin_msg.related_message_identity, rep_msg.message_identity);
    // Cyclone sent the same Final once more (new sequence number, same answer): a replier
    // must take a repeated Final after completion as harmless.
    let (fin2_msg, fin2) = handshake_token(init, 2);
    assert_eq!(
        (fin2, fin2_msg.related_message_identity),
        (fin, rep_msg.message_identity)
    );
    assert_eq!(
        req_msg.destination_participant_guid,
        guid(repl.prefix, 0x1c1)
    );
    // c.pdata carries the sender's GUID.
    let pdata = request.binary_property("c.pdata").unwrap();
    assert_eq!(
        pdata_participant_guid(pdata).unwrap(),
        guid(init.prefix, 0x1c1)
    );
    // Cyclone's initiator proposes ECDH whatever its certificate; no optional fields.
    assert_eq!(
        request.binary_property("c.kagree_algo").unwrap(),
        b"ECDH+prime256v1-CEUM\0"
    );
    assert!(request.binary_property("hash_c1").is_none());
    assert_eq!(request.binary_property("c.perm").unwrap().last(), Some(&0));

    let init_local = LocalIdentity::new(CA, init_keys.0, init_keys.1, [1; 12], NOW).unwrap();
    let repl_local = LocalIdentity::new(CA, repl_keys.0, repl_keys.1, [2; 12], NOW).unwrap();

    // We, as the replier, accept Cyclone's Request (with the initiator's AuthRequest).
    let mut rng = SeededRandom::new(1);
    let auth_req = &init.messages[0].1.message_data[0];
    let remote = repl_local
        .validate_remote_identity(&init.token, init.prefix, Some(auth_req), &mut rng)
        .unwrap();
    let opts = HandshakeOptions::default();
    let (_, our_reply) = Handshake::begin_reply(
        &repl_local,
        &remote,
        request,
        b"",
        &[0, 1, 0, 0],
        &opts,
        NOW,
        &mut rng,
    )
    .unwrap();
    assert_eq!(
        our_reply.binary_property("challenge1"),
        request.binary_property("challenge1")
    );

    // Cyclone's Reply signature verifies over our hash_c1 / hash_c2 and signature layout.
    let mut hs =
        Handshake::resume_initiator(&init_local, repl.prefix, init.prefix, request, NOW).unwrap();
    let step = hs.process(reply, NOW).unwrap();
    assert!(matches!(step, Step::SendFinal { .. }));
    let peer = hs.peer().unwrap();
    assert_eq!(peer.subject_name, repl_local.subject_name());
    assert!(peer.permissions.starts_with(b"MIME-Version: 1.0"));

    // Cyclone's Final signature verifies too.
    let mut hs =
        Handshake::resume_replier(&repl_local, init.prefix, repl.prefix, request, reply, NOW)
            .unwrap();
    assert!(matches!(hs.process(fin, NOW), Ok(Step::Completed(_))));

    // And a flipped bit in either signature is refused.
    for (mut tok, is_reply) in [(reply.clone(), true), (fin.clone(), false)] {
        let sig = tok
            .binary_properties
            .iter_mut()
            .find(|p| p.name == "signature")
            .unwrap();
        sig.value[10] ^= 1;
        let r = if is_reply {
            Handshake::resume_initiator(&init_local, repl.prefix, init.prefix, request, NOW)
                .unwrap()
                .process(&tok, NOW)
        } else {
            Handshake::resume_replier(&repl_local, init.prefix, repl.prefix, request, reply, NOW)
                .unwrap()
                .process(&tok, NOW)
        };
        assert_eq!(r.unwrap_err(), AuthError::BadSignature);
    }
}
