//! Parameter lists (RTPS 2.5 §9.4.2.11) and the parameter ids used by Halyard.

use crate::error::WireError;
use crate::types::*;

/// Parameter ids (RTPS 2.5 Table 9.12, 9.13, and DDS-XTypes / DDS-Security additions).
#[allow(missing_docs)]
pub mod pid {
    pub const PAD: u16 = 0x0000;
    pub const SENTINEL: u16 = 0x0001;
    pub const PARTICIPANT_LEASE_DURATION: u16 = 0x0002;
    pub const TIME_BASED_FILTER: u16 = 0x0004;
    pub const TOPIC_NAME: u16 = 0x0005;
    pub const OWNERSHIP_STRENGTH: u16 = 0x0006;
    pub const TYPE_NAME: u16 = 0x0007;
    pub const DOMAIN_ID: u16 = 0x000f;
    pub const PROTOCOL_VERSION: u16 = 0x0015;
    pub const VENDORID: u16 = 0x0016;
    pub const RELIABILITY: u16 = 0x001a;
    pub const LIVELINESS: u16 = 0x001b;
    pub const DURABILITY: u16 = 0x001d;
    pub const DURABILITY_SERVICE: u16 = 0x001e;
    pub const OWNERSHIP: u16 = 0x001f;
    pub const PRESENTATION: u16 = 0x0021;
    pub const DEADLINE: u16 = 0x0023;
    pub const DESTINATION_ORDER: u16 = 0x0025;
    pub const LATENCY_BUDGET: u16 = 0x0027;
    pub const PARTITION: u16 = 0x0029;
    pub const LIFESPAN: u16 = 0x002b;
    pub const USER_DATA: u16 = 0x002c;
    pub const GROUP_DATA: u16 = 0x002d;
    pub const TOPIC_DATA: u16 = 0x002e;
    pub const UNICAST_LOCATOR: u16 = 0x002f;
    pub const MULTICAST_LOCATOR: u16 = 0x0030;
    pub const DEFAULT_UNICAST_LOCATOR: u16 = 0x0031;
    pub const METATRAFFIC_UNICAST_LOCATOR: u16 = 0x0032;
    pub const METATRAFFIC_MULTICAST_LOCATOR: u16 = 0x0033;
    pub const PARTICIPANT_MANUAL_LIVELINESS_COUNT: u16 = 0x0034;
    pub const CONTENT_FILTER_PROPERTY: u16 = 0x0035;
    pub const HISTORY: u16 = 0x0040;
    pub const RESOURCE_LIMITS: u16 = 0x0041;
    pub const EXPECTS_INLINE_QOS: u16 = 0x0043;
    pub const DEFAULT_MULTICAST_LOCATOR: u16 = 0x0048;
    pub const TRANSPORT_PRIORITY: u16 = 0x0049;
    pub const PARTICIPANT_GUID: u16 = 0x0050;
    pub const GROUP_GUID: u16 = 0x0052;
    /// Inline QoS: the sequence number of the first change of the writer's coherent set
    /// (SEQUENCENUMBER_UNKNOWN: not in a set, which ends an open one). RTPS 2.5 §8.7.6.
    pub const COHERENT_SET: u16 = 0x0056;
    /// SEDP: the entity id of the endpoint's publisher or subscriber (RTPS 2.5 §9.6.2.2).
    pub const GROUP_ENTITYID: u16 = 0x0053;
    /// Inline QoS: the group sequence number of the first change of a GROUP coherent set
    /// (RTPS 2.5 §8.7.6).
    pub const GROUP_COHERENT_SET: u16 = 0x0063;
    /// Inline QoS: the change's group sequence number, counted across the writers of its
    /// publisher (RTPS 2.5 §8.7.6).
    pub const GROUP_SEQ_NUM: u16 = 0x0064;
    pub const BUILTIN_ENDPOINT_SET: u16 = 0x0058;
    pub const PROPERTY_LIST: u16 = 0x0059;
    pub const ENDPOINT_GUID: u16 = 0x005a;
    pub const TYPE_MAX_SIZE_SERIALIZED: u16 = 0x0060;
    /// Inline QoS: the writer and sequence number a relayed change was first written with
    /// (RTPS 2.5 §8.7.9, OriginalWriterInfo: GUID, SequenceNumber_t, then a parameter list
    /// of the original writer's QoS). Durability services send their stored samples with it.
    pub const ORIGINAL_WRITER_INFO: u16 = 0x0061;
    pub const ENTITY_NAME: u16 = 0x0062;
    pub const KEY_HASH: u16 = 0x0070;
    pub const STATUS_INFO: u16 = 0x0071;
    pub const DATA_REPRESENTATION: u16 = 0x0073;
    pub const TYPE_CONSISTENCY_ENFORCEMENT: u16 = 0x0074;
    /// XTypes 1.3 §7.6.3.2.2: the endpoint's TypeInformation (XCDR2).
    pub const TYPE_INFORMATION: u16 = 0x0075;
    pub const BUILTIN_ENDPOINT_QOS: u16 = 0x0077;
    pub const DOMAIN_TAG: u16 = 0x4014;
    // DDS Security 1.1 §7.4.1.4 (Table 10) and §7.4.1.5.
    pub const IDENTITY_TOKEN: u16 = 0x1001;
    pub const PERMISSIONS_TOKEN: u16 = 0x1002;
    pub const DATA_TAGS: u16 = 0x1003;
    pub const ENDPOINT_SECURITY_INFO: u16 = 0x1004;
    pub const PARTICIPANT_SECURITY_INFO: u16 = 0x1005;
    pub const IDENTITY_STATUS_TOKEN: u16 = 0x1006;
    /// Bit set in vendor-specific ids.
    pub const VENDOR_SPECIFIC_FLAG: u16 = 0x8000;
    /// Halyard's vendor-specific inline QoS (meaningful only from a participant of vendor
    /// `VendorId::HALYARD`) on the end-of-set marker of a GROUP coherent set: the entity ids
    /// of the publisher's writers that end a part of the set (each with such a marker), as
    /// `unsigned long` count then the ids. With it a subscriber knows a set's membership
    /// before it has discovered every member writer (RTPS 2.5 §8.7.6 gives a subscriber only
    /// PID_WRITER_GROUP_INFO's digest of that membership, which names no writer).
    pub const HALYARD_GROUP_MEMBERS: u16 = 0x8001;
    /// Bit set in must-understand ids.
    pub const MUST_UNDERSTAND_FLAG: u16 = 0x4000;
}

/// PID_STATUS_INFO flag: the instance was disposed.
pub const STATUS_INFO_DISPOSED: u32 = 0x1;
/// PID_STATUS_INFO flag: the instance was unregistered.
pub const STATUS_INFO_UNREGISTERED: u32 = 0x2;

/// One parameter: id (with flag bits) and its value bytes (length as on the wire, a multiple of 4).
#[derive(Clone, Copy, Debug)]
pub struct Parameter<'a> {
    /// Parameter id as sent (may carry the vendor-specific / must-understand bits).
    pub id: u16,
    /// The value bytes.
    pub value: &'a [u8],
}

/// A checked-on-iteration view of a parameter list body (no encapsulation header).
#[derive(Clone, Copy, Debug)]
pub struct ParameterList<'a> {
    /// The bytes, from the first parameter header to (at least) the sentinel.
    pub bytes: &'a [u8],
    /// Byte order of the list.
    pub little_endian: bool,
}

/// Reads a u16 at `at` in the given byte order, if the bytes are there.
fn get_u16(bytes: &[u8], at: usize, le: bool) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    let a = [b[0], b[1]];
    Some(if le { u16::from_le_bytes(a) } else { u16::from_be_bytes(a) })
}

/// Iterator over the parameters of a [`ParameterList`].
struct ParamIter<'a> {
    rest: &'a [u8],
    le: bool,
    done: bool,
}

impl<'a> Iterator for ParamIter<'a> {
    type Item = Result<Parameter<'a>, WireError>;
    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (Some(id), Some(len)) =
                (get_u16(self.rest, 0, self.le), get_u16(self.rest, 2, self.le))
            else {
                self.done = true;
                return Some(Err(WireError::BadParameterList));
            };
            if id == pid::SENTINEL {
                self.done = true;
                return None;
            }
            let end = 4 + len as usize;
            let Some(value) = self.rest.get(4..end) else {
                self.done = true;
                return Some(Err(WireError::BadParameterList));
            };
            self.rest = &self.rest[end..];
            if id != pid::PAD {
                return Some(Ok(Parameter { id, value }));
            }
        }
        None
    }
}

impl<'a> ParameterList<'a> {
    /// Wraps bytes; nothing is checked until iteration.
    pub fn new(bytes: &'a [u8], little_endian: bool) -> Self {
        ParameterList { bytes, little_endian }
    }
    /// Iterates parameters up to PID_SENTINEL (excluded; PID_PAD skipped). An error item
    /// (no sentinel, overrun) ends the iteration.
    pub fn iter(&self) -> impl Iterator<Item = Result<Parameter<'a>, WireError>> + 'a {
        ParamIter { rest: self.bytes, le: self.little_endian, done: false }
    }
    /// Byte length of the list including its sentinel (used to find the payload after inline QoS).
    ///
    /// The sentinel's own length field is ignored (Cyclone writes 0; the spec ignores it).
    pub fn encoded_len(&self) -> Result<usize, WireError> {
        let mut pos = 0usize;
        loop {
            let id = get_u16(self.bytes, pos, self.little_endian);
            let len = get_u16(self.bytes, pos + 2, self.little_endian);
            let (Some(id), Some(len)) = (id, len) else {
                return Err(WireError::BadParameterList);
            };
            if id == pid::SENTINEL {
                return Ok(pos + 4);
            }
            pos += 4 + len as usize;
            if pos > self.bytes.len() {
                return Err(WireError::BadParameterList);
            }
        }
    }
    /// The first parameter with this id (flags compared exactly).
    pub fn find(&self, id: u16) -> Result<Option<Parameter<'a>>, WireError> {
        for p in self.iter() {
            let p = p?;
            if p.id == id {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }
    /// PID_KEY_HASH, if present and 16 bytes.
    pub fn key_hash(&self) -> Result<Option<[u8; 16]>, WireError> {
        match self.find(pid::KEY_HASH)? {
            None => Ok(None),
            Some(p) => {
                let v = p.value.get(..16).ok_or(WireError::InvalidField("key hash length"))?;
                let mut k = [0u8; 16];
                k.copy_from_slice(v);
                Ok(Some(k))
            }
        }
    }
    /// PID_COHERENT_SET (RTPS 2.5 §8.7.6): `Some(first)` for a change in the coherent set
    /// that began at `first`, `Some(None)` for an explicit "not in a set"
    /// (SEQUENCENUMBER_UNKNOWN, or any non-positive value), `None` if absent.
    pub fn coherent_set(&self) -> Result<Option<Option<SequenceNumber>>, WireError> {
        let sn = self.sequence_number(pid::COHERENT_SET, "coherent set length")?;
        Ok(sn.map(|sn| (sn > 0).then_some(SequenceNumber(sn))))
    }
    /// The SequenceNumber_t value of parameter `id`, if present (`what` names it in the error
    /// when it is too short).
    fn sequence_number(&self, id: u16, what: &'static str) -> Result<Option<i64>, WireError> {
        let Some(p) = self.find(id)? else {
            return Ok(None);
        };
        let mut r = ValueReader::new(p.value, self.little_endian);
        let high = r.i32().map_err(|_| WireError::InvalidField(what))?;
        let low = r.u32().map_err(|_| WireError::InvalidField(what))?;
        Ok(Some(((high as i64) << 32) | low as i64))
    }
    /// PID_GROUP_COHERENT_SET and PID_GROUP_SEQ_NUM (RTPS 2.5 §8.7.6): the GROUP coherent set
    /// a change belongs to (the group sequence number of its first change) and the change's own
    /// group sequence number; `None` unless both are present and positive.
    pub fn group_coherent_set(
        &self,
    ) -> Result<Option<(SequenceNumber, SequenceNumber)>, WireError> {
        let what = "group sequence number length";
        let set = self.sequence_number(pid::GROUP_COHERENT_SET, what)?;
        match (set, self.sequence_number(pid::GROUP_SEQ_NUM, what)?) {
            (Some(set), Some(gsn)) if set > 0 && gsn > 0 => {
                Ok(Some((SequenceNumber(set), SequenceNumber(gsn))))
            }
            _ => Ok(None),
        }
    }
    /// PID_GROUP_SEQ_NUM alone (GROUP ordered access outside coherent sets), if present and
    /// positive.
    pub fn group_seq_num(&self) -> Result<Option<SequenceNumber>, WireError> {
        let sn = self.sequence_number(pid::GROUP_SEQ_NUM, "group sequence number length")?;
        Ok(sn.filter(|&sn| sn > 0).map(SequenceNumber))
    }
    /// [`pid::HALYARD_GROUP_MEMBERS`] (read it only from a Halyard participant), if present:
    /// the entity ids of a GROUP coherent set's member writers. More than `max` ids, or fewer
    /// bytes than the count says, is an error.
    pub fn group_members(&self, max: usize) -> Result<Option<Vec<EntityId>>, WireError> {
        let Some(p) = self.find(pid::HALYARD_GROUP_MEMBERS)? else {
            return Ok(None);
        };
        let what = "group members length";
        let mut r = ValueReader::new(p.value, self.little_endian);
        let n = r.u32().map_err(|_| WireError::InvalidField(what))? as usize;
        if n > max || r.remaining() < n.saturating_mul(4) {
            return Err(WireError::InvalidField(what));
        }
        (0..n)
            .map(|_| r.entity_id().map_err(|_| WireError::InvalidField(what)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
    /// PID_ORIGINAL_WRITER_INFO (RTPS 2.5 §8.7.9): the original writer's GUID and the
    /// sequence number the change had there, if present. The trailing QoS list is not read.
    pub fn original_writer(&self) -> Result<Option<(Guid, SequenceNumber)>, WireError> {
        let Some(p) = self.find(pid::ORIGINAL_WRITER_INFO)? else {
            return Ok(None);
        };
        let what = "original writer info length";
        let mut r = ValueReader::new(p.value, self.little_endian);
        let guid = r.guid().map_err(|_| WireError::InvalidField(what))?;
        let high = r.i32().map_err(|_| WireError::InvalidField(what))?;
        let low = r.u32().map_err(|_| WireError::InvalidField(what))?;
        Ok(Some((guid, SequenceNumber(((high as i64) << 32) | low as i64))))
    }
    /// PID_STATUS_INFO flags (big-endian on the wire per spec), 0 if absent.
    pub fn status_info(&self) -> Result<u32, WireError> {
        match self.find(pid::STATUS_INFO)? {
            None => Ok(0),
            Some(p) => {
                let v = p.value.get(..4).ok_or(WireError::InvalidField("status info length"))?;
                Ok(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
            }
        }
    }
}

/// Reads primitive values from a parameter's value with the list's byte order.
pub struct ValueReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    little_endian: bool,
}

impl<'a> ValueReader<'a> {
    /// Whether the value is little-endian (its parameter list's endianness).
    pub fn little_endian(&self) -> bool {
        self.little_endian
    }
    /// The bytes not read yet (the reader is left at the end).
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        self.pos = self.bytes.len();
        rest
    }
    /// Starts reading `bytes`.
    pub fn new(bytes: &'a [u8], little_endian: bool) -> Self {
        ValueReader { bytes, pos: 0, little_endian }
    }
    /// Bytes not yet read (after aligning to `align`).
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }
    /// Moves the position up to a multiple of `n` (relative to the value start).
    fn align(&mut self, n: usize) {
        self.pos = self.pos.div_ceil(n) * n;
    }
    /// Four bytes at a 4-aligned position.
    fn four(&mut self) -> Result<[u8; 4], WireError> {
        self.align(4);
        let b = self.bytes(4)?;
        Ok([b[0], b[1], b[2], b[3]])
    }
    /// u32 (4-byte aligned relative to the value start).
    pub fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.four()?;
        Ok(if self.little_endian { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    }
    /// i32.
    pub fn i32(&mut self) -> Result<i32, WireError> {
        self.u32().map(|v| v as i32)
    }
    /// u16.
    pub fn u16(&mut self) -> Result<u16, WireError> {
        self.align(2);
        let b = self.bytes(2)?;
        let a = [b[0], b[1]];
        Ok(if self.little_endian { u16::from_le_bytes(a) } else { u16::from_be_bytes(a) })
    }
    /// Raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::Truncated)?;
        let b = self.bytes.get(self.pos..end).ok_or(WireError::Truncated)?;
        self.pos = end;
        Ok(b)
    }
    /// CDR string (u32 length including NUL, bytes, NUL); must be valid UTF-8.
    ///
    /// A length of 0 is accepted as the empty string; one trailing NUL is stripped.
    pub fn string(&mut self) -> Result<&'a str, WireError> {
        let len = self.u32()? as usize;
        let b = self.bytes(len)?;
        let b = match b.split_last() {
            Some((0, head)) => head,
            _ => b,
        };
        core::str::from_utf8(b).map_err(|_| WireError::InvalidField("string not UTF-8"))
    }
    /// CDR `sequence<octet>`.
    pub fn octets(&mut self) -> Result<&'a [u8], WireError> {
        let len = self.u32()? as usize;
        self.bytes(len)
    }
    /// Locator_t (kind, port, 16-byte address).
    pub fn locator(&mut self) -> Result<Locator, WireError> {
        let kind = self.i32()?;
        let port = self.u32()?;
        let mut address = [0u8; 16];
        address.copy_from_slice(self.bytes(16)?);
        Ok(Locator { kind, port, address })
    }
    /// Duration_t.
    pub fn duration(&mut self) -> Result<Duration, WireError> {
        let seconds = self.i32()?;
        let fraction = self.u32()?;
        Ok(Duration { seconds, fraction })
    }
    /// 16-byte GUID.
    pub fn guid(&mut self) -> Result<Guid, WireError> {
        let mut g = [0u8; 16];
        g.copy_from_slice(self.bytes(16)?);
        Ok(Guid::from_bytes(g))
    }
    /// 4-byte EntityId_t.
    pub fn entity_id(&mut self) -> Result<EntityId, WireError> {
        let mut e = [0u8; 4];
        e.copy_from_slice(self.bytes(4)?);
        Ok(EntityId(e))
    }
}

/// Appends zeros to `buf` until `buf.len() - start` is a multiple of 4.
pub(crate) fn pad4(buf: &mut Vec<u8>, start: usize) {
    let len = buf.len() - start;
    buf.resize(start + len.div_ceil(4) * 4, 0);
}

/// Appends a CDR string (length with NUL, bytes, NUL) at a 4-aligned position relative to `start`.
pub(crate) fn put_string(buf: &mut Vec<u8>, start: usize, s: &str) {
    pad4(buf, start);
    buf.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
    buf.push(0);
}

/// Appends a Locator_t (little-endian).
pub(crate) fn put_locator(buf: &mut Vec<u8>, l: &Locator) {
    buf.extend_from_slice(&l.kind.to_le_bytes());
    buf.extend_from_slice(&l.port.to_le_bytes());
    buf.extend_from_slice(&l.address);
}

/// Appends a Duration_t (little-endian).
pub(crate) fn put_duration(buf: &mut Vec<u8>, d: Duration) {
    buf.extend_from_slice(&d.seconds.to_le_bytes());
    buf.extend_from_slice(&d.fraction.to_le_bytes());
}

/// Appends a little-endian parameter list to a buffer. Each value is padded to 4 bytes;
/// alignment of values is relative to the start of the value.
pub struct ParameterListWriter<'b> {
    buf: &'b mut Vec<u8>,
}

impl<'b> ParameterListWriter<'b> {
    /// Starts appending to `buf` (which may already hold an encapsulation header).
    pub fn new(buf: &'b mut Vec<u8>) -> Self {
        ParameterListWriter { buf }
    }
    /// A parameter with raw value bytes (padded to 4).
    pub fn raw(&mut self, id: u16, value: &[u8]) {
        self.with(id, |b| b.extend_from_slice(value));
    }
    /// A parameter whose value is written by `f` into the buffer (then padded to 4).
    ///
    /// Values longer than 65532 bytes cannot be represented; their length field saturates.
    pub fn with(&mut self, id: u16, f: impl FnOnce(&mut Vec<u8>)) {
        self.buf.extend_from_slice(&id.to_le_bytes());
        let len_at = self.buf.len();
        self.buf.extend_from_slice(&[0, 0]);
        let start = self.buf.len();
        f(self.buf);
        pad4(self.buf, start);
        let len = u16::try_from(self.buf.len() - start).unwrap_or(0xfffc);
        self.buf[len_at..len_at + 2].copy_from_slice(&len.to_le_bytes());
    }
    /// A SequenceNumber_t value (`None`: SEQUENCENUMBER_UNKNOWN, high -1 and low 0).
    pub fn sequence_number(&mut self, id: u16, sn: Option<SequenceNumber>) {
        let (high, low) = match sn {
            Some(s) => ((s.0 >> 32) as i32, s.0 as u32),
            None => (-1, 0),
        };
        self.with(id, |b| {
            b.extend_from_slice(&high.to_le_bytes());
            b.extend_from_slice(&low.to_le_bytes());
        });
    }
    /// A u32 value.
    pub fn u32(&mut self, id: u16, v: u32) {
        self.raw(id, &v.to_le_bytes());
    }
    /// A CDR string value.
    pub fn string(&mut self, id: u16, s: &str) {
        self.with(id, |b| {
            let start = b.len();
            put_string(b, start, s)
        });
    }
    /// A `sequence<octet>` value.
    pub fn octets(&mut self, id: u16, v: &[u8]) {
        self.with(id, |b| {
            b.extend_from_slice(&(v.len() as u32).to_le_bytes());
            b.extend_from_slice(v);
        });
    }
    /// A locator value.
    pub fn locator(&mut self, id: u16, l: &Locator) {
        self.with(id, |b| put_locator(b, l));
    }
    /// A Duration_t value.
    pub fn duration(&mut self, id: u16, d: Duration) {
        self.with(id, |b| put_duration(b, d));
    }
    /// A GUID value.
    pub fn guid(&mut self, id: u16, g: Guid) {
        self.raw(id, &g.to_bytes());
    }
    /// PID_ORIGINAL_WRITER_INFO: the original writer's GUID and sequence number, with an
    /// empty QoS list (its sentinel).
    pub fn original_writer(&mut self, writer: Guid, sn: SequenceNumber) {
        self.with(pid::ORIGINAL_WRITER_INFO, |b| {
            b.extend_from_slice(&writer.to_bytes());
            b.extend_from_slice(&((sn.0 >> 32) as i32).to_le_bytes());
            b.extend_from_slice(&(sn.0 as u32).to_le_bytes());
            b.extend_from_slice(&pid::SENTINEL.to_le_bytes());
            b.extend_from_slice(&[0, 0]);
        });
    }
    /// A count (`unsigned long`) then that many EntityId_t values.
    pub fn entity_ids(&mut self, id: u16, ids: &[EntityId]) {
        self.with(id, |b| {
            b.extend_from_slice(&(ids.len() as u32).to_le_bytes());
            for e in ids {
                b.extend_from_slice(&e.0);
            }
        });
    }
    /// PID_SENTINEL; ends the list.
    pub fn finish(self) {
        self.buf.extend_from_slice(&pid::SENTINEL.to_le_bytes());
        self.buf.extend_from_slice(&[0, 0]);
    }
}
