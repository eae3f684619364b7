//! Fuzz target `security_token`: the security token decoders of `halyard-security` (a
//! ParticipantGenericMessage payload, a DataHolder parameter value in either byte order, a
//! `c.pdata` participant GUID) never panic, and whatever decodes re-encodes to an equal value.
#![no_main]

use halyard_cdr::Endianness;
use halyard_security::auth::pdata_participant_guid;
use halyard_security::token::{DataHolder, ParticipantGenericMessage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = ParticipantGenericMessage::from_payload(data) {
        let again = m.to_payload().expect("a decoded message re-encodes");
        assert_eq!(ParticipantGenericMessage::from_payload(&again).as_ref(), Ok(&m));
    }
    for e in [Endianness::Little, Endianness::Big] {
        if let Ok(t) = DataHolder::from_parameter_value(data, e) {
            let again = t.to_parameter_value(e).expect("a decoded token re-encodes");
            assert_eq!(DataHolder::from_parameter_value(&again, e).as_ref(), Ok(&t));
        }
    }
    let _ = pdata_participant_guid(data);
});
