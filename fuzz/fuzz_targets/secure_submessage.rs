//! Fuzz target `secure_submessage`: arbitrary bytes to every decode function of the
//! AES-GCM-GMAC crypto plugin (payload, submessage, message, key material, footer); none may
//! panic. The first byte picks the transformation kind and whether the receiver holds a
//! receiver-specific key; fixed seeded keys are used, so the parsers are what gets explored.
#![no_main]

use halyard_security::crypto::{
    keymat_from_bytes, peek_message_header, peek_payload_header, peek_submessage_header,
    CryptoFooter, KeyMaterial, ReceiverCrypto, TransformKind,
};
use halyard_security::random::SeededRandom;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let kind = TransformKind::KEYED[usize::from(sel & 3)];
    let mut rng = SeededRandom::new(u64::from(sel));
    let mut km = KeyMaterial::generate(kind, u32::from(sel >> 4), &mut rng);
    if sel & 4 != 0 {
        km = km.with_receiver_specific_key(1, &mut rng);
    }
    let Ok(mut rx) = ReceiverCrypto::new(km) else {
        return;
    };
    rx.set_replay_protection(sel & 8 != 0);
    let mut out = Vec::new();
    let _ = rx.decode_serialized_payload(rest, &mut out);
    let _ = rx.decode_submessage(rest, &mut out);
    let _ = rx.decode_rtps_message(rest, &mut out);
    let _ = keymat_from_bytes(rest);
    let _ = CryptoFooter::read(rest);
    let _ = peek_payload_header(rest);
    let _ = peek_submessage_header(rest);
    let _ = peek_message_header(rest);
});
