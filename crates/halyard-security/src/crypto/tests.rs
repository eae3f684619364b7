//! Proves the AES-GCM-GMAC plugin round-trips at every level for every kind, matches
//! independently computed Cyclone-layout bytes, and rejects tampering, replays, wrong keys and
//! malformed input without panicking.

use super::*;
use crate::random::{SecureRandom, SeededRandom};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn rtps_header() -> [u8; RTPS_HEADER_LEN] {
    let mut h = [0u8; RTPS_HEADER_LEN];
    h[..8].copy_from_slice(b"RTPS\x02\x05\x01\x10");
    for (i, b) in h[8..].iter_mut().enumerate() {
        *b = 0xa0 + i as u8;
    }
    h
}

/// A DATA-shaped submessage of `len` body octets (a multiple of 4).
fn submessage(len: usize, fill: u8) -> Vec<u8> {
    let mut v = vec![0x15, 0x01];
    v.extend_from_slice(&(len as u16).to_le_bytes());
    v.extend((0..len).map(|i| fill.wrapping_add(i as u8)));
    v
}

fn pair(kind: TransformKind, seed: u64) -> (SenderCrypto, ReceiverCrypto) {
    let mut rng = SeededRandom::new(seed);
    let km = KeyMaterial::generate(kind, 7, &mut rng);
    let rx = ReceiverCrypto::new(km.clone()).unwrap();
    (SenderCrypto::new(km, &mut rng).unwrap(), rx)
}

#[test]
fn transform_kinds_have_their_wire_values() {
    let want = [
        (TransformKind::None, [0, 0, 0, 0]),
        (TransformKind::Aes128Gmac, [0, 0, 0, 1]),
        (TransformKind::Aes128Gcm, [0, 0, 0, 2]),
        (TransformKind::Aes256Gmac, [0, 0, 0, 3]),
        (TransformKind::Aes256Gcm, [0, 0, 0, 4]),
    ];
    for (k, w) in want {
        assert_eq!(k.to_wire(), w);
        assert_eq!(TransformKind::from_wire(w), Some(k));
    }
    assert_eq!(TransformKind::from_u32(5), None);
    assert_eq!(TransformKind::Aes128Gmac.key_len(), 16);
    assert_eq!(TransformKind::Aes256Gcm.key_len(), 32);
}

#[test]
fn session_keys_match_independent_hmac_known_answers() {
    // Expected values computed with Python's hmac/hashlib from Cyclone's recipe
    // (crypto_utils.c crypto_calculate_key_impl): HMAC-SHA256(master_key, prefix | salt | sid).
    let mut km = KeyMaterial {
        transformation_kind: TransformKind::Aes128Gcm,
        master_salt: (1..=16).collect(),
        sender_key_id: 0x1122_3344,
        master_sender_key: (0x21..=0x30).collect(),
        receiver_specific_key_id: 0,
        master_receiver_specific_key: Vec::new(),
    };
    let sid = [1, 2, 3, 4];
    assert_eq!(
        session_key(&km, sid).unwrap().as_slice(),
        hex("eb37bedf3c76dd56d273f43639b43835")
    );
    km.transformation_kind = TransformKind::Aes256Gmac;
    km.master_salt = (1..=32).collect();
    km.master_sender_key = (0x21..=0x40).collect();
    km.receiver_specific_key_id = 0x5566_7788;
    km.master_receiver_specific_key = (0x41..=0x60).collect();
    assert_eq!(
        session_key(&km, sid).unwrap().as_slice(),
        hex("011a6dd9f442d28c93f4255c47d58d89fdf67296446dc6c7e8eb213a4ed3663e")
    );
    assert_eq!(
        receiver_specific_session_key(&km, sid).unwrap().as_slice(),
        hex("964cb5ae6cd9e4ba6daf54dbfd74f7ff9912c5ee2f694a50025e4a44468fa5cc")
    );
}

fn kat_keymat_128() -> KeyMaterial {
    KeyMaterial {
        transformation_kind: TransformKind::Aes128Gcm,
        master_salt: (1..=16).collect(),
        sender_key_id: 0x1122_3344,
        master_sender_key: (0x21..=0x30).collect(),
        receiver_specific_key_id: 0,
        master_receiver_specific_key: Vec::new(),
    }
}

#[test]
fn payload_matches_known_answer() {
    // Built with Python `cryptography` AESGCM following Cyclone's encode_serialized_payload.
    let want = hex(
        "00000002112233440102030400000000000000050000001098bbd0a103de14582f03baefe699bfbf\
         fefa8a12c21e4b0e655e2ff22c738aa400000000",
    );
    let km = kat_keymat_128();
    let mut tx = SenderCrypto::with_state(km.clone(), 0x0102_0304, 4).unwrap();
    let mut out = Vec::new();
    tx.encode_serialized_payload(b"\x00\x01\x00\x00hello world!", &mut out)
        .unwrap();
    assert_eq!(out, want);
    let mut rx = ReceiverCrypto::new(km).unwrap();
    let mut plain = Vec::new();
    rx.decode_serialized_payload(&want, &mut plain).unwrap();
    assert_eq!(plain, b"\x00\x01\x00\x00hello world!");
}

#[test]
fn gmac_submessage_with_receiver_mac_matches_known_answer() {
    let want = hex(
        "31011400000000030a0b0c0d01020304000000000000000507011c00000102030405060708090a0b\
         0c0d0e0f101112131415161718191a1b320128002d1070106a154e67e74167f72cf373a200000001\
         55667788adef7dceae1fc394ef0bc1e0588794cc",
    );
    let writer = KeyMaterial {
        transformation_kind: TransformKind::Aes256Gmac,
        master_salt: (1..=32).collect(),
        sender_key_id: 0x0a0b_0c0d,
        master_sender_key: (0x21..=0x40).collect(),
        receiver_specific_key_id: 0,
        master_receiver_specific_key: Vec::new(),
    };
    let mut for_reader = writer.clone();
    for_reader.receiver_specific_key_id = 0x5566_7788;
    for_reader.master_receiver_specific_key = (0x41..=0x60).collect();
    let mut sub = vec![0x07, 0x01, 0x1c, 0x00];
    sub.extend(0..28u8);
    let mut tx = SenderCrypto::with_state(writer, 0x0102_0304, 4).unwrap();
    let mut out = Vec::new();
    tx.encode_submessage(&sub, &[&for_reader], &mut out)
        .unwrap();
    assert_eq!(out, want);
    let mut rx = ReceiverCrypto::new(for_reader).unwrap();
    let mut plain = Vec::new();
    assert_eq!(rx.decode_submessage(&want, &mut plain).unwrap(), want.len());
    assert_eq!(plain, sub);
}

#[test]
fn gcm_message_matches_known_answer() {
    let want = hex(
        "5254505302050110a0a1a2a3a4a5a6a7a8a9aaab33011400000000021122334401020304000000000000\
         0005300128000000002494bbc4a16bbb78344226cc903454793d83a21dc135aa021e122e80e03bcc47ae\
         dcd5f5a83401140032fd64d88c6d845ce7977f44e1a62c8e00000000",
    );
    let mut subs = vec![0x09, 0x01, 0x08, 0x00];
    subs.extend(0..8u8);
    let mut tx = SenderCrypto::with_state(kat_keymat_128(), 0x0102_0304, 4).unwrap();
    let mut out = Vec::new();
    tx.encode_rtps_message(&rtps_header(), &subs, &[], &mut out)
        .unwrap();
    assert_eq!(out, want);
    let mut rx = ReceiverCrypto::new(kat_keymat_128()).unwrap();
    let mut plain = Vec::new();
    rx.decode_rtps_message(&want, &mut plain).unwrap();
    // Cyclone hands back the RTPS header, the INFO_SRC it inserted, then the submessages.
    assert_eq!(&plain[..20], &rtps_header());
    assert_eq!(&plain[20..28], &[0x0c, 0x01, 20, 0, 0, 0, 0, 0]);
    assert_eq!(&plain[28..44], &rtps_header()[4..]);
    assert_eq!(&plain[44..], &subs);
}

#[test]
fn every_kind_round_trips_payload_submessage_and_message() {
    for (i, kind) in TransformKind::KEYED.into_iter().enumerate() {
        let (mut tx, mut rx) = pair(kind, 100 + i as u64);
        let (mut enc, mut dec) = (Vec::new(), Vec::new());
        let payload: Vec<u8> = (0..123u8).collect();
        tx.encode_serialized_payload(&payload, &mut enc).unwrap();
        assert_eq!(&enc[..4], &kind.to_wire());
        rx.decode_serialized_payload(&enc, &mut dec).unwrap();
        assert_eq!(dec, payload, "{kind} payload");
        assert_eq!(kind.encrypts(), !enc.windows(123).any(|w| w == payload));

        let sub = submessage(64, 3);
        enc.clear();
        dec.clear();
        tx.encode_submessage(&sub, &[], &mut enc).unwrap();
        assert_eq!(enc[0], SMID_SEC_PREFIX);
        let n = rx.decode_submessage(&enc, &mut dec).unwrap();
        assert_eq!((n, &dec), (enc.len(), &sub), "{kind} submessage");

        let subs = [submessage(16, 9), submessage(40, 1)].concat();
        enc.clear();
        dec.clear();
        tx.encode_rtps_message(&rtps_header(), &subs, &[], &mut enc)
            .unwrap();
        assert_eq!(enc[20], SMID_SRTPS_PREFIX);
        rx.decode_rtps_message(&enc, &mut dec).unwrap();
        assert_eq!(&dec[..20], &rtps_header());
        assert_eq!(&dec[44..], &subs[..], "{kind} message");
    }
}

/// Flips every octet of `enc` in turn and asserts `decode` fails, then that the original
/// still decodes (failed attempts leave no state behind).
fn assert_every_flip_fails(
    enc: &[u8],
    mut decode: impl FnMut(&[u8], &mut Vec<u8>) -> Result<(), CryptoError>,
) {
    let mut out = vec![0xEE];
    for i in 0..enc.len() {
        let mut bad = enc.to_vec();
        bad[i] ^= 0xFF;
        assert!(
            decode(&bad, &mut out).is_err(),
            "flip of octet {i} accepted"
        );
        assert_eq!(out, [0xEE], "output not restored after flip {i}");
    }
    decode(enc, &mut out).unwrap();
}

#[test]
fn flipping_any_octet_makes_decode_fail() {
    for (i, kind) in TransformKind::KEYED.into_iter().enumerate() {
        let mut rng = SeededRandom::new(200 + i as u64);
        let km = KeyMaterial::generate(kind, 9, &mut rng);
        let mine = km.with_receiver_specific_key(77, &mut rng);
        let mut tx = SenderCrypto::new(km.clone(), &mut rng).unwrap();

        let mut enc = Vec::new();
        tx.encode_serialized_payload(&[1, 2, 3, 4, 5, 6, 7, 8], &mut enc)
            .unwrap();
        let mut rx = ReceiverCrypto::new(km.clone()).unwrap();
        assert_every_flip_fails(&enc, |b, o| rx.decode_serialized_payload(b, o));

        enc.clear();
        tx.encode_submessage(&submessage(24, 5), &[&mine], &mut enc)
            .unwrap();
        let mut rx = ReceiverCrypto::new(mine.clone()).unwrap();
        assert_every_flip_fails(&enc, |b, o| rx.decode_submessage(b, o).map(|_| ()));

        enc.clear();
        let subs = [submessage(8, 1), submessage(12, 2)].concat();
        tx.encode_rtps_message(&rtps_header(), &subs, &[&mine], &mut enc)
            .unwrap();
        let mut rx = ReceiverCrypto::new(mine).unwrap();
        assert_every_flip_fails(&enc, |b, o| rx.decode_rtps_message(b, o));
    }
}

#[test]
fn replays_are_rejected_and_reordering_within_the_window_is_not() {
    let (mut tx, mut rx) = pair(TransformKind::Aes128Gcm, 300);
    let encs: Vec<Vec<u8>> = (0..70)
        .map(|i| {
            let mut e = Vec::new();
            tx.encode_submessage(&submessage(8, i), &[], &mut e)
                .unwrap();
            e
        })
        .collect();
    let mut out = Vec::new();
    rx.decode_submessage(&encs[10], &mut out).unwrap();
    assert!(matches!(
        rx.decode_submessage(&encs[10], &mut out),
        Err(CryptoError::Replayed)
    ));
    rx.decode_submessage(&encs[5], &mut out).unwrap();
    rx.decode_submessage(&encs[69], &mut out).unwrap();
    // 64 behind the highest: too old to tell from a replay.
    assert!(matches!(
        rx.decode_submessage(&encs[5], &mut out),
        Err(CryptoError::Replayed)
    ));
    assert!(matches!(
        rx.decode_submessage(&encs[4], &mut out),
        Err(CryptoError::Replayed)
    ));
    rx.decode_submessage(&encs[6], &mut out).unwrap();

    let mut msg = Vec::new();
    tx.encode_rtps_message(&rtps_header(), &submessage(4, 0), &[], &mut msg)
        .unwrap();
    rx.decode_rtps_message(&msg, &mut out).unwrap();
    assert!(matches!(
        rx.decode_rtps_message(&msg, &mut out),
        Err(CryptoError::Replayed)
    ));

    // Payloads are resent unchanged in retransmissions: no replay check there.
    let mut p = Vec::new();
    tx.encode_serialized_payload(&[9; 12], &mut p).unwrap();
    rx.decode_serialized_payload(&p, &mut out).unwrap();
    rx.decode_serialized_payload(&p, &mut out).unwrap();

    rx.set_replay_protection(false);
    rx.decode_submessage(&encs[10], &mut out).unwrap();
}

#[test]
fn wrong_keys_are_rejected() {
    let mut rng = SeededRandom::new(400);
    for kind in TransformKind::KEYED {
        let km = KeyMaterial::generate(kind, 12, &mut rng);
        let other_same_id = KeyMaterial::generate(kind, 12, &mut rng);
        let other_id = KeyMaterial::generate(kind, 13, &mut rng);
        let mut tx = SenderCrypto::new(km, &mut rng).unwrap();
        let mut enc = Vec::new();
        tx.encode_submessage(&submessage(20, 0), &[], &mut enc)
            .unwrap();
        let mut out = Vec::new();
        let r = ReceiverCrypto::new(other_same_id)
            .unwrap()
            .decode_submessage(&enc, &mut out);
        assert!(matches!(r, Err(CryptoError::TamperedOrWrongKey)), "{r:?}");
        let r = ReceiverCrypto::new(other_id)
            .unwrap()
            .decode_submessage(&enc, &mut out);
        assert!(
            matches!(r, Err(CryptoError::UnknownKeyId { key_id: 12 })),
            "{r:?}"
        );
        assert!(out.is_empty());
    }
    let (_, mut rx) = pair(TransformKind::Aes256Gcm, 401);
    let (mut tx, _) = pair(TransformKind::Aes128Gcm, 401);
    let mut enc = Vec::new();
    tx.encode_serialized_payload(&[0; 4], &mut enc).unwrap();
    assert!(matches!(
        rx.decode_serialized_payload(&enc, &mut Vec::new()),
        Err(CryptoError::KindMismatch { found: 2, .. })
    ));
}

#[test]
fn receiver_specific_macs_authenticate_each_receiver() {
    let mut rng = SeededRandom::new(500);
    for kind in TransformKind::KEYED {
        let w = KeyMaterial::generate(kind, 3, &mut rng);
        let a = w.with_receiver_specific_key(101, &mut rng);
        let b = w.with_receiver_specific_key(102, &mut rng);
        let c = w.with_receiver_specific_key(103, &mut rng);
        let impostor_a = w.with_receiver_specific_key(101, &mut rng);
        let mut tx = SenderCrypto::new(w.clone(), &mut rng).unwrap();
        let sub = submessage(32, 7);
        let mut enc = Vec::new();
        tx.encode_submessage(&sub, &[&a, &w, &b], &mut enc).unwrap();
        let footer = CryptoFooter::read(&enc[enc.len() - 60..]).unwrap();
        let ids: Vec<u32> = footer
            .receiver_specific_macs
            .iter()
            .map(|m| m.receiver_mac_key_id)
            .collect();
        assert_eq!(ids, [101, 102]);

        let decode = |km: &KeyMaterial| {
            let mut out = Vec::new();
            ReceiverCrypto::new(km.clone())
                .unwrap()
                .decode_submessage(&enc, &mut out)
                .map(|_| out)
        };
        assert_eq!(decode(&a).unwrap(), sub);
        assert_eq!(decode(&b).unwrap(), sub);
        // No receiver-specific key: the common MAC alone is enough.
        assert_eq!(decode(&w).unwrap(), sub);
        assert!(matches!(
            decode(&c),
            Err(CryptoError::MissingReceiverSpecificMac { key_id: 103 })
        ));
        assert!(matches!(
            decode(&impostor_a),
            Err(CryptoError::TamperedOrWrongKey)
        ));

        let mut msg = Vec::new();
        tx.encode_rtps_message(&rtps_header(), &sub, &[&b], &mut msg)
            .unwrap();
        let mut rb = ReceiverCrypto::new(b.clone()).unwrap();
        rb.decode_rtps_message(&msg, &mut Vec::new()).unwrap();
        let mut ra = ReceiverCrypto::new(a.clone()).unwrap();
        assert!(matches!(
            ra.decode_rtps_message(&msg, &mut Vec::new()),
            Err(CryptoError::MissingReceiverSpecificMac { key_id: 101 })
        ));
    }
}

/// The message in the layout [`SenderCrypto::encode_rtps_message_in_place`] takes: the header,
/// `headroom` free octets (filled with junk, which must not matter), the submessages.
fn with_headroom(subs: &[u8], headroom: usize) -> Vec<u8> {
    let mut buf = rtps_header().to_vec();
    buf.resize(RTPS_HEADER_LEN + headroom, 0xee);
    buf.extend_from_slice(subs);
    buf
}

#[test]
fn message_protected_in_place_is_the_same_octets() {
    // The known answer of gcm_message_matches_known_answer, made in place.
    let mut subs = vec![0x09, 0x01, 0x08, 0x00];
    subs.extend(0..8u8);
    let mut tx = SenderCrypto::with_state(kat_keymat_128(), 0x0102_0304, 4).unwrap();
    let mut want = Vec::new();
    tx.encode_rtps_message(&rtps_header(), &subs, &[], &mut want)
        .unwrap();
    let mut tx = SenderCrypto::with_state(kat_keymat_128(), 0x0102_0304, 4).unwrap();
    let headroom = tx.message_headroom();
    let mut buf = with_headroom(&subs, headroom);
    tx.encode_rtps_message_in_place(&mut buf, headroom, &[])
        .unwrap();
    assert_eq!(buf, want);
    // Every kind, with receiver-specific MACs, and decoded over a dirty reused buffer.
    let mut rng = SeededRandom::new(700);
    for kind in TransformKind::KEYED {
        let w = KeyMaterial::generate(kind, 3, &mut rng);
        let (a, b) = (
            w.with_receiver_specific_key(101, &mut rng),
            w.with_receiver_specific_key(102, &mut rng),
        );
        let subs = [submessage(16, 9), submessage(400, 1)].concat();
        let mut copying = SenderCrypto::with_state(w.clone(), 9, 77).unwrap();
        let mut in_place = SenderCrypto::with_state(w.clone(), 9, 77).unwrap();
        let mut want = Vec::new();
        copying
            .encode_rtps_message(&rtps_header(), &subs, &[&a, &b], &mut want)
            .unwrap();
        let headroom = in_place.message_headroom();
        assert_eq!(headroom, if kind.encrypts() { 56 } else { 48 });
        let mut buf = with_headroom(&subs, headroom);
        in_place
            .encode_rtps_message_in_place(&mut buf, headroom, &[&a, &b])
            .unwrap();
        assert_eq!(buf, want, "{kind}");
        let mut out = vec![0x33u8; 5000];
        let mut rx = ReceiverCrypto::new(b).unwrap();
        rx.decode_rtps_message_overwriting(&buf, &mut out).unwrap();
        assert_eq!(out.len(), 20 + 24 + subs.len(), "{kind}");
        assert_eq!(&out[..20], &rtps_header());
        assert_eq!(&out[44..], &subs[..], "{kind}");
        // Another headroom is refused before anything is changed.
        let mut short = with_headroom(&subs, headroom - 4);
        let before = short.clone();
        assert!(in_place
            .encode_rtps_message_in_place(&mut short, headroom - 4, &[])
            .is_err());
        assert_eq!(short, before);
    }
}

#[test]
fn overwriting_decoders_reuse_a_buffer_and_empty_it_on_failure() {
    for kind in TransformKind::KEYED {
        let (mut tx, mut rx) = pair(kind, 800);
        let mut out = Vec::new();
        for len in [400, 40, 4000, 400] {
            let sub = submessage(len, len as u8);
            let mut enc = Vec::new();
            tx.encode_submessage(&sub, &[], &mut enc).unwrap();
            let n = rx.decode_submessage_overwriting(&enc, &mut out).unwrap();
            assert_eq!((n, &out), (enc.len(), &sub), "{kind} {len}");
            let last = enc.len() - 1;
            enc[last] ^= 1; // the last MAC octet: tampered
            out.extend_from_slice(b"junk");
            assert!(rx.decode_submessage_overwriting(&enc, &mut out).is_err());
            assert!(
                out.is_empty(),
                "{kind}: a failed decode leaves nothing behind"
            );
        }
    }
}

#[test]
fn sessions_renew_and_decode_across_the_change() {
    for kind in TransformKind::KEYED {
        let (mut tx, mut rx) = pair(kind, 600);
        tx.set_max_blocks_per_session(12); // 3 submessages of 52 octets (4 blocks) each
        let first = tx.session_id();
        let mut encs = Vec::new();
        let mut ids = Vec::new();
        for i in 0..7u8 {
            let mut e = Vec::new();
            tx.encode_submessage(&submessage(48, i), &[], &mut e)
                .unwrap();
            ids.push(peek_submessage_header(&e).unwrap().session_id);
            encs.push(e);
        }
        let step = |id: [u8; 4], n: u32| u32::from_be_bytes(id).wrapping_add(n).to_be_bytes();
        assert_eq!(ids[0], first);
        assert_eq!(ids[2], first);
        assert_eq!(ids[3], step(first, 1));
        assert_eq!(ids[6], step(first, 2));
        let mut out = Vec::new();
        // In order except one message of the previous session arriving late.
        for i in [0, 1, 3, 2, 4, 6, 5] {
            out.clear();
            rx.decode_submessage(&encs[i], &mut out).unwrap();
            assert_eq!(out, submessage(48, i as u8));
        }
        // A session two behind is no longer tracked: indistinguishable from a replay.
        assert!(matches!(
            rx.decode_submessage(&encs[0], &mut out),
            Err(CryptoError::Replayed)
        ));
    }
}

#[test]
fn message_with_a_forged_rtps_header_is_rejected() {
    let (mut tx, mut rx) = pair(TransformKind::Aes256Gcm, 700);
    let mut enc = Vec::new();
    tx.encode_rtps_message(&rtps_header(), &submessage(8, 0), &[], &mut enc)
        .unwrap();
    enc[19] ^= 1; // last octet of the GUID prefix, outside the protected bytes
    assert!(matches!(
        rx.decode_rtps_message(&enc, &mut Vec::new()),
        Err(CryptoError::Malformed { .. })
    ));
}

#[test]
fn keymat_encodes_as_cyclone_and_round_trips() {
    let mut rng = SeededRandom::new(800);
    let km = KeyMaterial::generate(TransformKind::Aes128Gmac, 0x0102_0304, &mut rng);
    let b = keymat_to_bytes(&km);
    assert_eq!(b.len(), 6 * 4 + 2 * 16);
    assert_eq!(&b[..8], &[0, 0, 0, 1, 0, 0, 0, 16]);
    assert_eq!(&b[8..24], km.master_salt.as_slice());
    assert_eq!(&b[24..32], &[1, 2, 3, 4, 0, 0, 0, 16]);
    assert_eq!(&b[48..], &[0; 8]);
    assert_eq!(keymat_from_bytes(&b).unwrap(), km);
    for kind in TransformKind::KEYED {
        let km = KeyMaterial::generate(kind, 5, &mut rng).with_receiver_specific_key(6, &mut rng);
        let (class, prop, value) = keymat_token_parts(&km);
        assert_eq!(
            (class, prop),
            ("DDS:Crypto:AES_GCM_GMAC", "dds.cryp.keymat")
        );
        assert_eq!(value.len(), 6 * 4 + 3 * kind.key_len());
        let back = keymat_from_token_parts(class, &[(prop, &value)]).unwrap();
        assert_eq!(back, km);
        assert!(keymat_from_token_parts("DDS:Crypto:Other", &[(prop, &value)]).is_err());
        assert!(keymat_from_token_parts(class, &[("x", &value)]).is_err());
        assert!(keymat_from_token_parts(class, &[]).is_err());
    }
    let mut zero = km.clone();
    zero.master_sender_key = vec![0; 16];
    assert!(keymat_from_bytes(&keymat_to_bytes(&zero)).is_err());
    let mut short = km.clone();
    short.master_salt.truncate(8);
    assert!(keymat_from_bytes(&keymat_to_bytes(&short)).is_err());
}

#[test]
fn key_exchange_keys_follow_the_spec_recipe() {
    let km = KeyMaterial::derive_key_exchange(&[1; 32], &[2; 32], &[3; 32]).unwrap();
    assert_eq!(km.transformation_kind, TransformKind::Aes256Gcm);
    assert_eq!((km.sender_key_id, km.receiver_specific_key_id), (0, 0));
    let again = KeyMaterial::derive_key_exchange(&[1; 32], &[2; 32], &[3; 32]).unwrap();
    assert_eq!(km, again);
    let swapped = KeyMaterial::derive_key_exchange(&[2; 32], &[1; 32], &[3; 32]).unwrap();
    assert_ne!(km.master_salt, swapped.master_salt);
    // Usable as is, sender and receiver agreeing.
    let mut rng = SeededRandom::new(1);
    let mut tx = SenderCrypto::new(km.clone(), &mut rng).unwrap();
    let mut enc = Vec::new();
    tx.encode_submessage(&submessage(8, 0), &[], &mut enc)
        .unwrap();
    ReceiverCrypto::new(again)
        .unwrap()
        .decode_submessage(&enc, &mut Vec::new())
        .unwrap();
}

/// Truncates, flips, extends or overwrites `v` at a random place.
fn mutate(v: &mut Vec<u8>, rng: &mut SeededRandom) {
    let mut r = [0u8; 4];
    rng.fill(&mut r);
    let at = usize::from(u16::from_le_bytes([r[1], r[2]])) % (v.len() + 1);
    match r[0] % 4 {
        0 => v.truncate(at),
        1 if !v.is_empty() => {
            let i = at.min(v.len() - 1);
            v[i] ^= r[3] | 1;
        }
        2 => v.splice(at..at, [r[3]; 3]).for_each(drop),
        _ if at + 4 <= v.len() => v[at..at + 4].copy_from_slice(&[r[3], 0, 0, r[3]]),
        _ => v.push(r[3]),
    }
}

#[test]
fn malformed_keymat_never_panics() {
    let mut rng = SeededRandom::new(900);
    let mut ok = 0;
    for i in 0..5000 {
        let kind = TransformKind::KEYED[i % 4];
        let mut km = KeyMaterial::generate(kind, i as u32, &mut rng);
        if i % 2 == 0 {
            km = km.with_receiver_specific_key(1, &mut rng);
        }
        let mut b = keymat_to_bytes(&km);
        for _ in 0..1 + i % 3 {
            mutate(&mut b, &mut rng);
        }
        if let Ok(k) = keymat_from_bytes(&b) {
            ok += 1;
            k.validate().unwrap();
        }
    }
    assert!(
        ok < 5000,
        "mutations never produced a rejected key material"
    );
}

#[test]
fn malformed_secure_data_never_panics() {
    let mut rng = SeededRandom::new(1000);
    for kind in TransformKind::KEYED {
        let km = KeyMaterial::generate(kind, 1, &mut rng);
        let mine = km.with_receiver_specific_key(2, &mut rng);
        let mut tx = SenderCrypto::new(km, &mut rng).unwrap();
        let mut rx = ReceiverCrypto::new(mine.clone()).unwrap();
        let mut samples = [Vec::new(), Vec::new(), Vec::new()];
        tx.encode_serialized_payload(&[1; 20], &mut samples[0])
            .unwrap();
        tx.encode_submessage(&submessage(16, 0), &[&mine], &mut samples[1])
            .unwrap();
        tx.encode_rtps_message(
            &rtps_header(),
            &submessage(16, 0),
            &[&mine],
            &mut samples[2],
        )
        .unwrap();
        let mut out = Vec::new();
        for i in 0..1500 {
            let mut b = samples[i % 3].clone();
            for _ in 0..1 + i % 4 {
                mutate(&mut b, &mut rng);
            }
            out.clear();
            let _ = rx.decode_serialized_payload(&b, &mut out);
            let _ = rx.decode_submessage(&b, &mut out);
            let _ = rx.decode_rtps_message(&b, &mut out);
            let _ = CryptoFooter::read(&b);
            let _ = peek_message_header(&b);
        }
    }
}
