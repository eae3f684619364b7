//! Tokens (`DataHolder`, DDS Security 1.1 §7.2.3) and the `ParticipantGenericMessage`
//! (§7.4.4.3) that carries them, with the CDR encodings Cyclone DDS 0.10 uses on the wire.
//!
//! # Facts established (and where)
//!
//! * A DataHolder is `string class_id; sequence<Property> properties;
//!   sequence<BinaryProperty> binary_properties`, a Property `string name; string value`, a
//!   BinaryProperty `string name; sequence<octet> value`: plain (final) CDR, no headers.
//!   Cyclone serializes tokens in SPDP parameters with the descriptor
//!   `XS, XQ, XbPROP, XS, XS, XSTOP, XQ, XbPROP, XS, XO, XSTOP` (ddsi_plist.c, PIDs
//!   IDENTITY_TOKEN 0x1001, PERMISSIONS_TOKEN 0x1002, IDENTITY_STATUS_TOKEN 0x1006), in the byte
//!   order of the parameter list, alignment counted from the start of the parameter value.
//! * `XbPROP` is the `propagate` flag: it is never serialized; a property whose flag is false
//!   is left out on encoding and every decoded property has it set (ddsi_plist.c,
//!   `ser_generic_count` / `deser_generic_r`). The handshake's binary properties are
//!   propagated (dds_security_utils.c, `DDS_Security_BinaryProperty_set_by_*` set it true), but
//!   the IdentityToken's and PermissionsToken's string properties are not: Cyclone 0.10's SPDP
//!   carries those tokens as a bare class id (`DDS:Auth:PKI-DH:1.0`,
//!   `DDS:Access:Permissions:1.0`, zero properties), as seen in a capture
//!   (auth/testdata/cyclone-0.10.2). [`DataHolder`] has no propagate flag: whatever it holds
//!   goes on the wire; leave out what should not.
//! * ParticipantGenericMessage is `{GUID source_guid; int64 sequence_number}
//!   message_identity, related_message_identity; GUID destination_participant_guid,
//!   destination_endpoint_guid, source_endpoint_guid; string message_class_id;
//!   sequence<DataHolder> message_data` (ddsi_security_msg.c, `pserop_participant_generic_message`:
//!   `XG, Xl, XG, Xl, XG, XG, XG, XS, XQ(..)`). GUIDs are the 16 wire bytes; the sequence
//!   number is one int64 aligned to 8 (not the RTPS high/low pair). The payload written by
//!   Cyclone is the 4-byte encapsulation header in native order (`00 01 00 00`, CDR_LE on
//!   x86) then that body, with no trailing padding (ddsi_serdata_pserop.c,
//!   `serdata_pserop_from_sample`, `to_ser` of `4 + pos` bytes). Cyclone accepts CDR_LE and
//!   CDR_BE.
//! * Who fills what (ddsi_security_exchange.c): the authentication messages on the
//!   ParticipantStatelessMessage topic have `source_guid` = the stateless writer's GUID,
//!   `sequence_number` = the writer's sequence number, `destination_participant_guid` = the
//!   remote participant, endpoint GUIDs zero, `related_message_identity` = the identity of the
//!   message answered (zero for an AuthRequest and a Request); class `dds.sec.auth_request`
//!   (one `+AuthReq` token) or `dds.sec.auth` (one handshake token). The crypto-token messages
//!   on ParticipantVolatileMessageSecure have `destination_endpoint_guid` = the remote
//!   endpoint, `source_endpoint_guid` = the local endpoint (both zero for participant tokens).
//!   On receipt Cyclone accepts `source_guid` with entity id participant (0x000001c1) or the
//!   stateless writer (0x000201c3).
//! * Cyclone's decoder rejects counts larger than the remaining bytes; ours also caps element
//!   counts and lengths ([`MAX_STRING_LEN`], [`MAX_BINARY_VALUE_LEN`], [`MAX_PROPERTIES`],
//!   [`MAX_DATA_HOLDERS`]) and never panics.

use halyard_cdr::{CdrError, CdrReader, CdrWriter, DataRepresentation, Endianness};
use std::fmt;

/// Message class id of the authentication handshake messages (DDS Security 1.1 §7.4.3.5).
pub const GMCLASSID_AUTH_HANDSHAKE: &str = "dds.sec.auth";
/// Message class id of the AuthRequest message (§7.4.3.5; Cyclone `DDS_SECURITY_AUTH_REQUEST`).
pub const GMCLASSID_AUTH_REQUEST: &str = "dds.sec.auth_request";
/// Message class id of participant crypto tokens (§7.4.4.6).
pub const GMCLASSID_PARTICIPANT_CRYPTO_TOKENS: &str = "dds.sec.participant_crypto_tokens";
/// Message class id of data writer crypto tokens (§7.4.4.6).
pub const GMCLASSID_DATAWRITER_CRYPTO_TOKENS: &str = "dds.sec.datawriter_crypto_tokens";
/// Message class id of data reader crypto tokens (§7.4.4.6).
pub const GMCLASSID_DATAREADER_CRYPTO_TOKENS: &str = "dds.sec.datareader_crypto_tokens";

/// Parameter ids of the security parameters in SPDP/SEDP (§7.4.1.4; Cyclone `q_protocol.h`).
pub mod pid {
    /// `PID_IDENTITY_TOKEN`: the participant's IdentityToken (a DataHolder).
    pub const IDENTITY_TOKEN: u16 = 0x1001;
    /// `PID_PERMISSIONS_TOKEN`: the participant's PermissionsToken (a DataHolder).
    pub const PERMISSIONS_TOKEN: u16 = 0x1002;
    /// `PID_DATA_TAGS`: the endpoint's data tags.
    pub const DATA_TAGS: u16 = 0x1003;
    /// `PID_ENDPOINT_SECURITY_INFO`: two u32 (endpoint and plugin endpoint attributes).
    pub const ENDPOINT_SECURITY_INFO: u16 = 0x1004;
    /// `PID_PARTICIPANT_SECURITY_INFO`: two u32 (participant and plugin attributes).
    pub const PARTICIPANT_SECURITY_INFO: u16 = 0x1005;
    /// `PID_IDENTITY_STATUS_TOKEN`: the IdentityStatusToken (Cyclone's plugin sends none).
    pub const IDENTITY_STATUS_TOKEN: u16 = 0x1006;
    /// `PID_PARTICIPANT_GUID` (RTPS), which `c.pdata` must carry.
    pub const PARTICIPANT_GUID: u16 = 0x0050;
    /// `PID_SENTINEL` (RTPS), which ends a parameter list.
    pub const SENTINEL: u16 = 0x0001;
}

/// Entity ids of the secure builtin endpoints (§7.4.7.1; Cyclone `q_rtps.h`), as u32 in
/// wire (big-endian) order.
pub mod entity_id {
    /// BuiltinParticipantStatelessMessageWriter.
    pub const PARTICIPANT_STATELESS_MESSAGE_WRITER: u32 = 0x0002_01c3;
    /// BuiltinParticipantStatelessMessageReader.
    pub const PARTICIPANT_STATELESS_MESSAGE_READER: u32 = 0x0002_01c4;
    /// BuiltinParticipantVolatileMessageSecureWriter.
    pub const PARTICIPANT_VOLATILE_MESSAGE_SECURE_WRITER: u32 = 0xff02_02c3;
    /// BuiltinParticipantVolatileMessageSecureReader.
    pub const PARTICIPANT_VOLATILE_MESSAGE_SECURE_READER: u32 = 0xff02_02c4;
    /// SEDPbuiltinPublicationsSecureWriter.
    pub const SEDP_PUBLICATIONS_SECURE_WRITER: u32 = 0xff00_03c2;
    /// SEDPbuiltinPublicationsSecureReader.
    pub const SEDP_PUBLICATIONS_SECURE_READER: u32 = 0xff00_03c7;
    /// SEDPbuiltinSubscriptionsSecureWriter.
    pub const SEDP_SUBSCRIPTIONS_SECURE_WRITER: u32 = 0xff00_04c2;
    /// SEDPbuiltinSubscriptionsSecureReader.
    pub const SEDP_SUBSCRIPTIONS_SECURE_READER: u32 = 0xff00_04c7;
    /// BuiltinParticipantMessageSecureWriter (secure liveliness).
    pub const PARTICIPANT_MESSAGE_SECURE_WRITER: u32 = 0xff02_00c2;
    /// BuiltinParticipantMessageSecureReader (secure liveliness).
    pub const PARTICIPANT_MESSAGE_SECURE_READER: u32 = 0xff02_00c7;
    /// SPDPbuiltinParticipantsSecureWriter (reliable secure SPDP).
    pub const SPDP_RELIABLE_PARTICIPANT_SECURE_WRITER: u32 = 0xff01_01c2;
    /// SPDPbuiltinParticipantsSecureReader (reliable secure SPDP).
    pub const SPDP_RELIABLE_PARTICIPANT_SECURE_READER: u32 = 0xff01_01c7;
}

/// Longest string (bytes, without the NUL) a decoder accepts.
pub const MAX_STRING_LEN: usize = 64 * 1024;
/// Longest binary property value a decoder accepts (a certificate, a permissions document).
pub const MAX_BINARY_VALUE_LEN: usize = 1024 * 1024;
/// Most properties (and, separately, binary properties) in one DataHolder.
pub const MAX_PROPERTIES: usize = 256;
/// Most DataHolders in one ParticipantGenericMessage.
pub const MAX_DATA_HOLDERS: usize = 256;

/// Why a token or generic message could not be decoded (or encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// The CDR data is malformed (truncated, bad string, count beyond the input).
    Cdr(CdrError),
    /// A count or length is above this implementation's cap.
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// The value read.
        value: usize,
        /// The cap.
        limit: usize,
    },
    /// The encapsulation header is not CDR_LE or CDR_BE.
    BadEncapsulation(u16),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Cdr(e) => write!(f, "malformed token CDR: {e}"),
            TokenError::TooLarge { what, value, limit } => {
                write!(f, "{what} of {value} exceeds the limit of {limit}")
            }
            TokenError::BadEncapsulation(id) => write!(
                f,
                "generic message encapsulation {id:#06x} is neither CDR_BE nor CDR_LE"
            ),
        }
    }
}

impl std::error::Error for TokenError {}

impl From<CdrError> for TokenError {
    fn from(e: CdrError) -> Self {
        TokenError::Cdr(e)
    }
}

/// A name/value string pair (`DDS::Property_t`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Property {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

/// A name/bytes pair (`DDS::BinaryProperty_t`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BinaryProperty {
    /// The name.
    pub name: String,
    /// The value.
    pub value: Vec<u8>,
}

/// A token (`DDS::DataHolder`, §7.2.3): a class id with string and binary properties.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataHolder {
    /// What kind of token this is, e.g. `DDS:Auth:PKI-DH:1.0+Req`.
    pub class_id: String,
    /// String properties, in order.
    pub properties: Vec<Property>,
    /// Binary properties, in order.
    pub binary_properties: Vec<BinaryProperty>,
}

impl DataHolder {
    /// An empty token of class `class_id`.
    pub fn new(class_id: &str) -> Self {
        DataHolder {
            class_id: class_id.to_owned(),
            ..Default::default()
        }
    }

    /// Whether this is the nil token (empty class id, nothing else).
    pub fn is_nil(&self) -> bool {
        self.class_id.is_empty() && self.properties.is_empty() && self.binary_properties.is_empty()
    }

    /// Appends a string property.
    pub fn with_property(mut self, name: &str, value: &str) -> Self {
        self.properties.push(Property {
            name: name.to_owned(),
            value: value.to_owned(),
        });
        self
    }

    /// Appends a binary property.
    pub fn with_binary(mut self, name: &str, value: &[u8]) -> Self {
        self.binary_properties.push(BinaryProperty {
            name: name.to_owned(),
            value: value.to_vec(),
        });
        self
    }

    /// Appends binary properties, in order.
    pub fn with_binaries<N: AsRef<str>, V: AsRef<[u8]>>(
        mut self,
        props: impl IntoIterator<Item = (N, V)>,
    ) -> Self {
        for (name, value) in props {
            self = self.with_binary(name.as_ref(), value.as_ref());
        }
        self
    }

    /// The value of the first string property named `name`.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.as_str())
    }

    /// The value of the first binary property named `name` (Cyclone's
    /// `DDS_Security_DataHolder_find_binary_property` also takes the first).
    pub fn binary_property(&self, name: &str) -> Option<&[u8]> {
        self.binary_properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.as_slice())
    }

    /// Writes this token as plain CDR at the writer's position.
    pub fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), TokenError> {
        w.write_string(&self.class_id)?;
        w.write_seq_len(self.properties.len())?;
        for p in &self.properties {
            w.write_string(&p.name)?;
            w.write_string(&p.value)?;
        }
        w.write_seq_len(self.binary_properties.len())?;
        for p in &self.binary_properties {
            w.write_string(&p.name)?;
            w.write_octets(&p.value)?;
        }
        Ok(())
    }

    /// Reads a token from plain CDR at the reader's position (bounded; never panics).
    pub fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, TokenError> {
        let class_id = read_bounded_string(r)?;
        // A property is at least two empty strings: 2 × (4-byte length + NUL).
        let n = read_count(r, 10, MAX_PROPERTIES, "property count")?;
        let mut properties = Vec::with_capacity(n);
        for _ in 0..n {
            let name = read_bounded_string(r)?;
            let value = read_bounded_string(r)?;
            properties.push(Property { name, value });
        }
        // A binary property is at least an empty string and an empty sequence.
        let n = read_count(r, 9, MAX_PROPERTIES, "binary property count")?;
        let mut binary_properties = Vec::with_capacity(n);
        for _ in 0..n {
            let name = read_bounded_string(r)?;
            let value = r.read_octets()?;
            check_len("binary property value", value.len(), MAX_BINARY_VALUE_LEN)?;
            binary_properties.push(BinaryProperty {
                name,
                value: value.to_vec(),
            });
        }
        Ok(DataHolder {
            class_id,
            properties,
            binary_properties,
        })
    }

    /// The value of a token parameter (PID_IDENTITY_TOKEN, PID_PERMISSIONS_TOKEN) in the
    /// parameter list's byte order, zero-padded to a multiple of 4 as parameter values are.
    pub fn to_parameter_value(&self, endianness: Endianness) -> Result<Vec<u8>, TokenError> {
        let mut buf = Vec::new();
        let mut w = CdrWriter::with_endianness(&mut buf, DataRepresentation::Xcdr1, endianness);
        self.write_cdr(&mut w)?;
        w.align(4);
        Ok(buf)
    }

    /// Decodes a token parameter value (trailing padding is ignored).
    pub fn from_parameter_value(value: &[u8], endianness: Endianness) -> Result<Self, TokenError> {
        let mut r = CdrReader::new(value, DataRepresentation::Xcdr1, endianness);
        DataHolder::read_cdr(&mut r)
    }
}

fn check_len(what: &'static str, value: usize, limit: usize) -> Result<(), TokenError> {
    if value > limit {
        return Err(TokenError::TooLarge { what, value, limit });
    }
    Ok(())
}

fn read_bounded_string(r: &mut CdrReader<'_>) -> Result<String, TokenError> {
    let s = r.read_str()?;
    check_len("string length", s.len(), MAX_STRING_LEN)?;
    Ok(s.to_owned())
}

fn read_count(
    r: &mut CdrReader<'_>,
    min_elem_size: usize,
    limit: usize,
    what: &'static str,
) -> Result<usize, TokenError> {
    let n = r.read_seq_len(min_elem_size)?;
    check_len(what, n, limit)?;
    Ok(n)
}

/// `DDS::MessageIdentity` (§7.2.6): the writer GUID and sequence number of a generic message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct MessageIdentity {
    /// GUID (16 wire bytes) of the writer that sent the message.
    pub source_guid: [u8; 16],
    /// The writer's sequence number for it.
    pub sequence_number: i64,
}

/// `DDS::ParticipantGenericMessage` (§7.4.4.3), the sample type of the
/// ParticipantStatelessMessage and ParticipantVolatileMessageSecure topics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParticipantGenericMessage {
    /// Identity of this message.
    pub message_identity: MessageIdentity,
    /// Identity of the message this one answers (zero if none).
    pub related_message_identity: MessageIdentity,
    /// The participant this message is for (zero: every participant).
    pub destination_participant_guid: [u8; 16],
    /// The endpoint this message is for (zero if none).
    pub destination_endpoint_guid: [u8; 16],
    /// The endpoint this message is from (zero if none).
    pub source_endpoint_guid: [u8; 16],
    /// What the message is, e.g. [`GMCLASSID_AUTH_HANDSHAKE`].
    pub message_class_id: String,
    /// The tokens it carries.
    pub message_data: Vec<DataHolder>,
}

/// Encapsulation id CDR_BE.
const CDR_BE: [u8; 2] = [0x00, 0x00];
/// Encapsulation id CDR_LE.
const CDR_LE: [u8; 2] = [0x00, 0x01];

impl ParticipantGenericMessage {
    /// The serialized payload as Cyclone writes it: `00 01 00 00` (CDR_LE) then the body.
    pub fn to_payload(&self) -> Result<Vec<u8>, TokenError> {
        self.to_payload_with(Endianness::Little)
    }

    /// The serialized payload in the given byte order (CDR_LE or CDR_BE header).
    pub fn to_payload_with(&self, endianness: Endianness) -> Result<Vec<u8>, TokenError> {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(match endianness {
            Endianness::Little => &CDR_LE,
            Endianness::Big => &CDR_BE,
        });
        buf.extend_from_slice(&[0, 0]);
        let mut w = CdrWriter::with_endianness(&mut buf, DataRepresentation::Xcdr1, endianness);
        self.write_body(&mut w)?;
        Ok(buf)
    }

    fn write_body(&self, w: &mut CdrWriter<'_>) -> Result<(), TokenError> {
        for id in [&self.message_identity, &self.related_message_identity] {
            w.write_bytes(&id.source_guid);
            w.write_i64(id.sequence_number);
        }
        w.write_bytes(&self.destination_participant_guid);
        w.write_bytes(&self.destination_endpoint_guid);
        w.write_bytes(&self.source_endpoint_guid);
        w.write_string(&self.message_class_id)?;
        w.write_seq_len(self.message_data.len())?;
        for d in &self.message_data {
            d.write_cdr(w)?;
        }
        Ok(())
    }

    /// Decodes a serialized payload (encapsulation header included). Bounded; never panics.
    pub fn from_payload(payload: &[u8]) -> Result<Self, TokenError> {
        let (header, body) = match payload {
            [a, b, _, _, body @ ..] => ([*a, *b], body),
            _ => return Err(TokenError::Cdr(CdrError::Truncated)),
        };
        let endianness = match header {
            CDR_LE => Endianness::Little,
            CDR_BE => Endianness::Big,
            other => return Err(TokenError::BadEncapsulation(u16::from_be_bytes(other))),
        };
        let mut r = CdrReader::new(body, DataRepresentation::Xcdr1, endianness);
        let message_identity = read_identity(&mut r)?;
        let related_message_identity = read_identity(&mut r)?;
        let destination_participant_guid = read_guid(&mut r)?;
        let destination_endpoint_guid = read_guid(&mut r)?;
        let source_endpoint_guid = read_guid(&mut r)?;
        let message_class_id = read_bounded_string(&mut r)?;
        // A DataHolder is at least an empty string and two empty sequences.
        let n = read_count(&mut r, 13, MAX_DATA_HOLDERS, "data holder count")?;
        let mut message_data = Vec::with_capacity(n);
        for _ in 0..n {
            message_data.push(DataHolder::read_cdr(&mut r)?);
        }
        Ok(ParticipantGenericMessage {
            message_identity,
            related_message_identity,
            destination_participant_guid,
            destination_endpoint_guid,
            source_endpoint_guid,
            message_class_id,
            message_data,
        })
    }
}

fn read_guid(r: &mut CdrReader<'_>) -> Result<[u8; 16], TokenError> {
    let mut g = [0u8; 16];
    g.copy_from_slice(r.read_bytes(16)?);
    Ok(g)
}

fn read_identity(r: &mut CdrReader<'_>) -> Result<MessageIdentity, TokenError> {
    let source_guid = read_guid(r)?;
    let sequence_number = r.read_i64()?;
    Ok(MessageIdentity {
        source_guid,
        sequence_number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_token() -> DataHolder {
        DataHolder::new("DDS:Auth:PKI-DH:1.0")
            .with_property("dds.cert.sn", "/C=NL/O=Example/CN=alice")
            .with_property("dds.cert.algo", "EC-prime256v1")
            .with_binary("challenge1", &[7u8; 32])
            .with_binary("empty", &[])
    }

    #[test]
    fn identity_token_parameter_layout_matches_cyclone_descriptor() {
        let t = DataHolder::new("AB").with_property("n", "v");
        let v = t.to_parameter_value(Endianness::Little).unwrap();
        // "AB\0" (len 3) + pad, 1 property: "n\0", "v\0", then 0 binary properties.
        let expected: Vec<u8> = [
            &[3, 0, 0, 0, b'A', b'B', 0, 0][..],
            &[1, 0, 0, 0],
            &[2, 0, 0, 0, b'n', 0, 0, 0],
            &[2, 0, 0, 0, b'v', 0, 0, 0],
            &[0, 0, 0, 0],
        ]
        .concat();
        assert_eq!(v, expected);
    }

    #[test]
    fn token_round_trips_in_both_byte_orders() {
        let t = sample_token();
        for e in [Endianness::Little, Endianness::Big] {
            let v = t.to_parameter_value(e).unwrap();
            assert_eq!(v.len() % 4, 0);
            assert_eq!(DataHolder::from_parameter_value(&v, e).unwrap(), t);
        }
    }

    fn sample_message() -> ParticipantGenericMessage {
        let mut src = [1u8; 16];
        src[12..].copy_from_slice(&entity_id::PARTICIPANT_STATELESS_MESSAGE_WRITER.to_be_bytes());
        ParticipantGenericMessage {
            message_identity: MessageIdentity {
                source_guid: src,
                sequence_number: 5,
            },
            related_message_identity: MessageIdentity::default(),
            destination_participant_guid: [2u8; 16],
            destination_endpoint_guid: [0; 16],
            source_endpoint_guid: [0; 16],
            message_class_id: GMCLASSID_AUTH_HANDSHAKE.to_owned(),
            message_data: vec![sample_token()],
        }
    }

    #[test]
    fn generic_message_layout_and_round_trip() {
        let m = sample_message();
        let p = m.to_payload().unwrap();
        assert_eq!(&p[..4], &[0, 1, 0, 0]);
        // Body offsets (from byte 4): guid 0..16, seq 16..24 (LE), related 24..48,
        // three GUIDs 48..96, class id length at 96.
        assert_eq!(&p[4 + 16..4 + 24], &5i64.to_le_bytes());
        assert_eq!(&p[4 + 48..4 + 64], &[2u8; 16]);
        assert_eq!(&p[4 + 96..4 + 100], &13u32.to_le_bytes());
        assert_eq!(&p[4 + 100..4 + 113], b"dds.sec.auth\0");
        assert_eq!(ParticipantGenericMessage::from_payload(&p).unwrap(), m);
        let be = m.to_payload_with(Endianness::Big).unwrap();
        assert_eq!(&be[..4], &[0, 0, 0, 0]);
        assert_eq!(ParticipantGenericMessage::from_payload(&be).unwrap(), m);
        // Trailing padding (as an RTPS DATA may add) is ignored.
        let mut padded = p.clone();
        padded.extend_from_slice(&[0, 0, 0]);
        assert_eq!(ParticipantGenericMessage::from_payload(&padded).unwrap(), m);
    }

    #[test]
    fn decoding_rejects_bad_input_with_typed_errors() {
        let p = sample_message().to_payload().unwrap();
        assert!(matches!(
            ParticipantGenericMessage::from_payload(&[0, 2, 0, 0]),
            Err(TokenError::BadEncapsulation(2))
        ));
        for cut in [0, 3, 10, 60, 100, p.len() - 1] {
            assert!(ParticipantGenericMessage::from_payload(&p[..cut]).is_err());
        }
        // A huge data holder count is refused before any allocation.
        let m = ParticipantGenericMessage {
            message_class_id: "x".into(),
            ..Default::default()
        };
        let mut q = m.to_payload().unwrap();
        let n = q.len();
        q[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(ParticipantGenericMessage::from_payload(&q).is_err());
    }

    #[test]
    fn caps_are_enforced() {
        let mut t = DataHolder::new("c");
        for i in 0..=MAX_PROPERTIES {
            t = t.with_property(&i.to_string(), "");
        }
        let v = t.to_parameter_value(Endianness::Little).unwrap();
        assert!(matches!(
            DataHolder::from_parameter_value(&v, Endianness::Little),
            Err(TokenError::TooLarge { .. })
        ));
    }

    #[test]
    fn seeded_mutations_never_panic() {
        use crate::random::{SecureRandom, SeededRandom};
        let base = sample_message().to_payload().unwrap();
        let mut rng = SeededRandom::new(42);
        for _ in 0..5000 {
            let mut m = base.clone();
            let mut r = [0u8; 4];
            rng.fill(&mut r);
            let pos = usize::from(u16::from_le_bytes([r[0], r[1]])) % m.len();
            match r[2] % 3 {
                0 => m.truncate(pos),
                1 => m[pos] ^= 1 << (r[3] % 8),
                _ => m[pos] = r[3],
            }
            let _ = ParticipantGenericMessage::from_payload(&m);
            let _ = DataHolder::from_parameter_value(&m, Endianness::Big);
        }
    }
}
