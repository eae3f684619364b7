//! RTPS messages and submessages (RTPS 2.5 §8.3, §9.4): zero-copy parsing and emission.
//!
//! Parsing lives in `message/parse.rs`, emission in `message/emit.rs`.

use crate::error::WireError;
use crate::param::ParameterList;
use crate::types::*;

mod emit;
mod parse;

/// Submessage ids (RTPS 2.5 §9.4.5.1.1).
pub mod id {
    /// PAD
    pub const PAD: u8 = 0x01;
    /// ACKNACK
    pub const ACKNACK: u8 = 0x06;
    /// HEARTBEAT
    pub const HEARTBEAT: u8 = 0x07;
    /// GAP
    pub const GAP: u8 = 0x08;
    /// INFO_TS
    pub const INFO_TS: u8 = 0x09;
    /// INFO_SRC
    pub const INFO_SRC: u8 = 0x0c;
    /// INFO_REPLY_IP4
    pub const INFO_REPLY_IP4: u8 = 0x0d;
    /// INFO_DST
    pub const INFO_DST: u8 = 0x0e;
    /// INFO_REPLY
    pub const INFO_REPLY: u8 = 0x0f;
    /// NACK_FRAG
    pub const NACK_FRAG: u8 = 0x12;
    /// HEARTBEAT_FRAG
    pub const HEARTBEAT_FRAG: u8 = 0x13;
    /// DATA
    pub const DATA: u8 = 0x15;
    /// DATA_FRAG
    pub const DATA_FRAG: u8 = 0x16;
    /// SEC_BODY (DDS Security 1.1 §7.3.7.3): a protected submessage or message body.
    pub const SEC_BODY: u8 = 0x30;
    /// SEC_PREFIX: the crypto header before a protected submessage.
    pub const SEC_PREFIX: u8 = 0x31;
    /// SEC_POSTFIX: the crypto footer after a protected submessage.
    pub const SEC_POSTFIX: u8 = 0x32;
    /// SRTPS_PREFIX: the crypto header of a protected RTPS message.
    pub const SRTPS_PREFIX: u8 = 0x33;
    /// SRTPS_POSTFIX: the crypto footer of a protected RTPS message.
    pub const SRTPS_POSTFIX: u8 = 0x34;
    /// The first vendor-specific submessage id (RTPS 2.5 §9.4.5.1.1): ids from here up are
    /// interpreted according to the vendor id of the message that carries them.
    pub const VENDOR_SPECIFIC_FIRST: u8 = 0x80;
    /// Halyard's reception report ([`super::ReceptionReport`]), in messages whose header
    /// names Halyard's vendor id (0x01 0x99).
    pub const HALYARD_RECEPTION_REPORT: u8 = 0x80;
    /// Halyard's NACK ([`super::AckNack::parse_halyard_nack`]), in messages whose header
    /// names Halyard's vendor id: changes a reader misses, beyond the 256 its ACKNACK can name.
    pub const HALYARD_NACK: u8 = 0x81;
}

/// The 20-byte RTPS message header (RTPS 2.5 §9.4.4).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Header {
    /// Protocol version of the sender.
    pub version: ProtocolVersion,
    /// Vendor of the sender.
    pub vendor: VendorId,
    /// GUID prefix of the sending participant.
    pub guid_prefix: GuidPrefix,
}

/// Length of the RTPS header.
pub const HEADER_LEN: usize = 20;

/// Sets bit `i` (< 256): word i/32, mask 1 << (31 - i%32).
fn set_bit(bitmap: &mut [u32; 8], i: u32) {
    if let Some(w) = bitmap.get_mut((i / 32) as usize) {
        *w |= 1 << (31 - i % 32);
    }
}

/// Reads bit `i` (false beyond 256).
fn get_bit(bitmap: &[u32; 8], i: u32) -> bool {
    bitmap.get((i / 32) as usize).is_some_and(|w| w & (1 << (31 - i % 32)) != 0)
}

/// Indices of the set bits below `num_bits`, increasing.
fn bits(bitmap: &[u32; 8], num_bits: u32) -> impl Iterator<Item = u32> + '_ {
    (0..num_bits.min(256)).filter(move |&i| get_bit(bitmap, i))
}

/// A set of up to 256 sequence numbers relative to `base` (RTPS 2.5 §9.4.2.6).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SequenceNumberSet {
    /// bitmapBase; must be >= 1 on the wire.
    pub base: SequenceNumber,
    /// numBits, 0..=256.
    pub num_bits: u32,
    /// Bit i (MSB-first within each word, word i/32) says base+i is in the set.
    pub bitmap: [u32; 8],
}

impl SequenceNumberSet {
    /// An empty set with the given base (`num_bits` is clamped to 256).
    pub fn new(base: SequenceNumber, num_bits: u32) -> Self {
        SequenceNumberSet { base, num_bits: num_bits.min(256), bitmap: [0; 8] }
    }
    /// Bit index of `sn`, if within base..base+num_bits.
    fn index(&self, sn: SequenceNumber) -> Option<u32> {
        let d = sn.0.checked_sub(self.base.0)?;
        (d >= 0 && d < self.num_bits as i64).then_some(d as u32)
    }
    /// Adds `sn`; returns false if it is outside base..base+num_bits.
    pub fn insert(&mut self, sn: SequenceNumber) -> bool {
        match self.index(sn) {
            Some(i) => {
                set_bit(&mut self.bitmap, i);
                true
            }
            None => false,
        }
    }
    /// True if `sn` is in the set.
    pub fn contains(&self, sn: SequenceNumber) -> bool {
        self.index(sn).is_some_and(|i| get_bit(&self.bitmap, i))
    }
    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = SequenceNumber> + '_ {
        bits(&self.bitmap, self.num_bits)
            .map(move |i| SequenceNumber(self.base.0.saturating_add(i as i64)))
    }
}

/// A set of up to 256 fragment numbers relative to `base` (RTPS 2.5 §9.4.2.8). Fragment numbers start at 1.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FragmentNumberSet {
    /// bitmapBase (>= 1).
    pub base: u32,
    /// numBits, 0..=256.
    pub num_bits: u32,
    /// As in [`SequenceNumberSet`].
    pub bitmap: [u32; 8],
}

impl FragmentNumberSet {
    /// An empty set (`num_bits` is clamped to 256).
    pub fn new(base: u32, num_bits: u32) -> Self {
        FragmentNumberSet { base, num_bits: num_bits.min(256), bitmap: [0; 8] }
    }
    /// Bit index of `n`, if within base..base+num_bits.
    fn index(&self, n: u32) -> Option<u32> {
        let d = n.checked_sub(self.base)?;
        (d < self.num_bits).then_some(d)
    }
    /// Adds `n`; false if out of range.
    pub fn insert(&mut self, n: u32) -> bool {
        match self.index(n) {
            Some(i) => {
                set_bit(&mut self.bitmap, i);
                true
            }
            None => false,
        }
    }
    /// True if `n` is in the set.
    pub fn contains(&self, n: u32) -> bool {
        self.index(n).is_some_and(|i| get_bit(&self.bitmap, i))
    }
    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        bits(&self.bitmap, self.num_bits).map(move |i| self.base.saturating_add(i))
    }
}

/// DATA (RTPS 2.5 §8.3.8.2 / §9.4.5.3).
#[derive(Clone, Copy, Debug)]
pub struct Data<'a> {
    /// Destination reader (ENTITYID_UNKNOWN = all matched readers).
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// The sample's sequence number.
    pub writer_sn: SequenceNumber,
    /// Inline QoS (Q flag), e.g. PID_KEY_HASH and PID_STATUS_INFO.
    pub inline_qos: Option<ParameterList<'a>>,
    /// The serialized payload including its 4-byte encapsulation header (D or K flag).
    pub payload: Option<&'a [u8]>,
    /// K flag: the payload is a serialized key, not data.
    pub key_flag: bool,
    /// N flag: non-standard payload.
    pub non_standard_flag: bool,
}

/// DATA_FRAG (RTPS 2.5 §8.3.8.3 / §9.4.5.4).
#[derive(Clone, Copy, Debug)]
pub struct DataFrag<'a> {
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// The sample's sequence number.
    pub writer_sn: SequenceNumber,
    /// First fragment number in this submessage (1-based).
    pub fragment_starting_num: u32,
    /// Number of consecutive fragments carried.
    pub fragments_in_submessage: u16,
    /// Size of every fragment but possibly the last.
    pub fragment_size: u16,
    /// Total size of the serialized sample (including encapsulation header).
    pub sample_size: u32,
    /// Inline QoS.
    pub inline_qos: Option<ParameterList<'a>>,
    /// The submessage's octets after the inline QoS: the fragments, then any padding to
    /// four octets; under DDS Security data protection, the encoded fragments (longer than
    /// the fragments they decode to). [`DataFrag::fragments`] is the fragments alone.
    pub payload: &'a [u8],
    /// K flag: key rather than data.
    pub key_flag: bool,
}

impl<'a> DataFrag<'a> {
    /// Octets of the sample this submessage's fragments span: `fragments_in_submessage`
    /// fragments, the last one cut at `sample_size` (0 when the fields are inconsistent).
    pub fn fragments_len(&self) -> usize {
        let offset =
            u64::from(self.fragment_starting_num.saturating_sub(1)) * u64::from(self.fragment_size);
        let span = u64::from(self.fragments_in_submessage) * u64::from(self.fragment_size);
        span.min(u64::from(self.sample_size).saturating_sub(offset)) as usize
    }

    /// The fragment octets of [`DataFrag::payload`], without padding (what a plain
    /// DATA_FRAG carries; at most [`DataFrag::fragments_len`] octets).
    pub fn fragments(&self) -> &'a [u8] {
        &self.payload[..self.payload.len().min(self.fragments_len())]
    }
}

/// HEARTBEAT (RTPS 2.5 §8.3.8.6).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Heartbeat {
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// First available sequence number.
    pub first_sn: SequenceNumber,
    /// Last available sequence number.
    pub last_sn: SequenceNumber,
    /// Count, to detect duplicates.
    pub count: i32,
    /// F flag: no response required.
    pub final_flag: bool,
    /// L flag: liveliness assertion.
    pub liveliness_flag: bool,
}

/// ACKNACK (RTPS 2.5 §8.3.8.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AckNack {
    /// Source reader.
    pub reader_id: EntityId,
    /// Destination writer.
    pub writer_id: EntityId,
    /// All below base acknowledged; members negatively acknowledged.
    pub reader_sn_state: SequenceNumberSet,
    /// Count.
    pub count: i32,
    /// F flag.
    pub final_flag: bool,
}

impl AckNack {
    /// Parses the body of Halyard's NACK (vendor-specific submessage [`id::HALYARD_NACK`],
    /// `flags` bit 0: little-endian). Its body is an ACKNACK's, and so is what it names:
    /// changes the reader misses, `reader_sn_state.base` being the first of them. Unlike an
    /// ACKNACK it acknowledges nothing: a reader whose acknowledgments lag what it received
    /// (a durability service's, which acknowledges only what its service stored) names with
    /// it the changes its ACKNACK cannot reach, those more than 256 past what it acknowledges.
    /// Other vendors skip it, as they skip every vendor-specific submessage of a vendor they
    /// do not know.
    pub fn parse_halyard_nack(flags: u8, body: &[u8]) -> Result<AckNack, WireError> {
        parse::halyard_nack(flags, body)
    }
}

/// GAP (RTPS 2.5 §8.3.8.5).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Gap {
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// First irrelevant sequence number; gap_start..gap_list.base are all irrelevant.
    pub gap_start: SequenceNumber,
    /// Further irrelevant sequence numbers.
    pub gap_list: SequenceNumberSet,
}

/// NACK_FRAG (RTPS 2.5 §8.3.8.12).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NackFrag {
    /// Source reader.
    pub reader_id: EntityId,
    /// Destination writer.
    pub writer_id: EntityId,
    /// The sample concerned.
    pub writer_sn: SequenceNumber,
    /// Missing fragments.
    pub fragment_number_state: FragmentNumberSet,
    /// Count.
    pub count: i32,
}

/// HEARTBEAT_FRAG (RTPS 2.5 §8.3.8.7).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HeartbeatFrag {
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// The sample concerned.
    pub writer_sn: SequenceNumber,
    /// Highest fragment number available.
    pub last_fragment_num: u32,
    /// Count.
    pub count: i32,
}

/// INFO_SRC (RTPS 2.5 §8.3.8.9).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct InfoSrc {
    /// Protocol version.
    pub version: ProtocolVersion,
    /// Vendor.
    pub vendor: VendorId,
    /// Source prefix for the following submessages.
    pub guid_prefix: GuidPrefix,
}

/// Maximum number of locators kept from one INFO_REPLY list.
pub const MAX_REPLY_LOCATORS: usize = 8;

/// INFO_REPLY / INFO_REPLY_IP4 (RTPS 2.5 §8.3.8.8). Lists longer than
/// [`MAX_REPLY_LOCATORS`] are truncated (not an error).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct InfoReply {
    /// Unicast reply locators.
    pub unicast: Vec<Locator>,
    /// Multicast reply locators (M flag).
    pub multicast: Vec<Locator>,
}

/// One parsed submessage.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Submessage<'a> {
    /// DATA
    Data(Data<'a>),
    /// DATA_FRAG
    DataFrag(DataFrag<'a>),
    /// HEARTBEAT
    Heartbeat(Heartbeat),
    /// HEARTBEAT_FRAG
    HeartbeatFrag(HeartbeatFrag),
    /// ACKNACK
    AckNack(AckNack),
    /// NACK_FRAG
    NackFrag(NackFrag),
    /// GAP
    Gap(Gap),
    /// INFO_TS; None when the I flag (invalidate) is set.
    InfoTs(Option<Time>),
    /// INFO_DST
    InfoDst(GuidPrefix),
    /// INFO_SRC
    InfoSrc(InfoSrc),
    /// INFO_REPLY or INFO_REPLY_IP4
    InfoReply(InfoReply),
    /// PAD
    Pad,
    /// A vendor-specific submessage (id 0x80 and up): its meaning depends on the vendor id
    /// of the message (RTPS 2.5 §9.4.5.1.1); receivers skip those of other vendors.
    Vendor {
        /// Its id.
        id: u8,
        /// Its flags (bit 0: little-endian).
        flags: u8,
        /// Its body.
        body: &'a [u8],
    },
    /// A submessage id we do not know (skipped per RTPS 2.5 §8.3.4.1).
    Unknown {
        /// Its id.
        id: u8,
    },
}

/// Halyard's reception report (vendor-specific submessage
/// [`id::HALYARD_RECEPTION_REPORT`]): what a best-effort reader received from one writer over
/// an interval, so that the writer can pace large samples to what the path absorbs. Other
/// vendors skip it, as they skip every vendor-specific submessage of a vendor they do not
/// know.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReceptionReport {
    /// The reporting reader.
    pub reader_id: EntityId,
    /// The writer reported on.
    pub writer_id: EntityId,
    /// Increases with every report of this reader about this writer.
    pub count: i32,
    /// The interval covered, in microseconds.
    pub interval_us: u32,
    /// Payload bytes received from the writer in the interval.
    pub bytes: u32,
    /// Samples completed in the interval.
    pub complete: u32,
    /// Samples lost in the interval (never seen, or abandoned incomplete).
    pub lost: u32,
}

impl ReceptionReport {
    /// Body length on the wire.
    pub const LEN: usize = 28;

    /// Parses the body of a reception report (`flags` bit 0: little-endian).
    pub fn parse(flags: u8, body: &[u8]) -> Result<ReceptionReport, WireError> {
        parse::reception_report(flags, body)
    }
}

/// A checked view of an RTPS message.
pub struct Message<'a> {
    /// The header.
    pub header: Header,
    body: &'a [u8],
}

impl<'a> Message<'a> {
    /// Checks the header; submessages are checked one by one as they are iterated.
    pub fn parse(bytes: &'a [u8]) -> Result<Message<'a>, WireError> {
        let (header, body) = parse::header(bytes)?;
        Ok(Message { header, body })
    }
    /// Iterates over submessages. An error item ends the iteration (the rest of the
    /// message is invalid per §8.3.4.1); unknown submessage ids yield `Submessage::Unknown`.
    pub fn submessages(&self) -> Submessages<'a> {
        Submessages { rest: self.body }
    }
}

/// Iterator over the submessages of a [`Message`].
pub struct Submessages<'a> {
    rest: &'a [u8],
}

impl<'a> Submessages<'a> {
    /// Iterates over a sequence of submessages without a message header (a protected
    /// message's or submessage's plain content, once decoded).
    pub fn over(bytes: &'a [u8]) -> Submessages<'a> {
        Submessages { rest: bytes }
    }
    /// The bytes not iterated yet: the next submessage (header included) and what follows.
    pub fn remaining(&self) -> &'a [u8] {
        self.rest
    }
    /// Skips `n` bytes of [`Submessages::remaining`] (past submessages a caller consumed
    /// itself, such as SEC_PREFIX … SEC_POSTFIX); ends the iteration if fewer remain.
    pub fn skip_bytes(&mut self, n: usize) {
        self.rest = self.rest.get(n..).unwrap_or_default();
    }

    /// The next submessage without parsing its body beyond the endpoints it names (see
    /// [`RawSubmessage`]): what a sender needs to decide which submessages to protect, at a
    /// fraction of the cost of [`Iterator::next`] on a datagram of many small samples. An
    /// error (a header or length that does not fit, a body too short for its endpoint ids)
    /// ends the iteration, as it does for `next`.
    pub fn next_raw(&mut self) -> Option<Result<RawSubmessage<'a>, WireError>> {
        if self.rest.is_empty() {
            return None;
        }
        let result = self.split_next().and_then(|(sid, flags, body)| {
            let at = match sid {
                id::DATA | id::DATA_FRAG => Some(4),
                id::HEARTBEAT | id::HEARTBEAT_FRAG | id::GAP | id::ACKNACK | id::NACK_FRAG => {
                    Some(0)
                }
                _ => None,
            };
            let endpoints = match at {
                None => None,
                Some(at) => {
                    let ids = body.get(at..at + 8).ok_or(WireError::Truncated)?;
                    let id = |i: usize| EntityId([ids[i], ids[i + 1], ids[i + 2], ids[i + 3]]);
                    Some(RawEndpoints { reader: id(0), writer: id(4) })
                }
            };
            Ok(RawSubmessage { id: sid, flags, body, endpoints })
        });
        if result.is_err() {
            self.rest = &[];
        }
        Some(result)
    }
}

/// A submessage as [`Submessages::next_raw`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSubmessage<'a> {
    /// The submessage id.
    pub id: u8,
    /// Its flags (bit 0: little-endian).
    pub flags: u8,
    /// Its body (after the 4-octet header).
    pub body: &'a [u8],
    /// The endpoints of a submessage between a writer and a reader (DATA, DATA_FRAG,
    /// HEARTBEAT, HEARTBEAT_FRAG, GAP, ACKNACK, NACK_FRAG); `None` for the others.
    pub endpoints: Option<RawEndpoints>,
}

/// The reader and writer ids a submessage names (entity ids are octets: no byte order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEndpoints {
    /// readerId.
    pub reader: EntityId,
    /// writerId.
    pub writer: EntityId,
}

/// Builds an RTPS message into a reusable buffer; always little-endian.
///
/// Each `push_*` appends one submessage (header, body, padding to 4 bytes).
pub struct MessageBuilder {
    buf: Vec<u8>,
}
