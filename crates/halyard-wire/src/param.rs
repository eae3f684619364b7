//! Parameter lists (RTPS 2.5 §9.4.2.11) and the parameter ids used by Halyard.
//!
//! TO BE IMPLEMENTED by the wire helper; signatures are the contract.

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
    pub const BUILTIN_ENDPOINT_SET: u16 = 0x0058;
    pub const PROPERTY_LIST: u16 = 0x0059;
    pub const ENDPOINT_GUID: u16 = 0x005a;
    pub const TYPE_MAX_SIZE_SERIALIZED: u16 = 0x0060;
    pub const ENTITY_NAME: u16 = 0x0062;
    pub const KEY_HASH: u16 = 0x0070;
    pub const STATUS_INFO: u16 = 0x0071;
    pub const DATA_REPRESENTATION: u16 = 0x0073;
    pub const TYPE_CONSISTENCY_ENFORCEMENT: u16 = 0x0074;
    pub const BUILTIN_ENDPOINT_QOS: u16 = 0x0077;
    pub const DOMAIN_TAG: u16 = 0x4014;
    /// Bit set in vendor-specific ids.
    pub const VENDOR_SPECIFIC_FLAG: u16 = 0x8000;
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

impl<'a> ParameterList<'a> {
    /// Wraps bytes; nothing is checked until iteration.
    pub fn new(bytes: &'a [u8], little_endian: bool) -> Self {
        ParameterList { bytes, little_endian }
    }
    /// Iterates parameters up to PID_SENTINEL (excluded; PID_PAD skipped). An error item
    /// (no sentinel, overrun) ends the iteration.
    pub fn iter(&self) -> impl Iterator<Item = Result<Parameter<'a>, WireError>> + 'a {
        let _ = self;
        core::iter::empty()
    }
    /// Byte length of the list including its sentinel (used to find the payload after inline QoS).
    pub fn encoded_len(&self) -> Result<usize, WireError> {
        todo!()
    }
    /// The first parameter with this id (flags compared exactly).
    pub fn find(&self, id: u16) -> Result<Option<Parameter<'a>>, WireError> {
        todo!()
    }
    /// PID_KEY_HASH, if present and 16 bytes.
    pub fn key_hash(&self) -> Result<Option<[u8; 16]>, WireError> {
        todo!()
    }
    /// PID_STATUS_INFO flags (big-endian on the wire per spec), 0 if absent.
    pub fn status_info(&self) -> Result<u32, WireError> {
        todo!()
    }
}

/// Reads primitive values from a parameter's value with the list's byte order.
pub struct ValueReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    little_endian: bool,
}

impl<'a> ValueReader<'a> {
    /// Starts reading `bytes`.
    pub fn new(bytes: &'a [u8], little_endian: bool) -> Self {
        ValueReader { bytes, pos: 0, little_endian }
    }
    /// u32 (4-byte aligned relative to the value start).
    pub fn u32(&mut self) -> Result<u32, WireError> {
        todo!()
    }
    /// i32.
    pub fn i32(&mut self) -> Result<i32, WireError> {
        todo!()
    }
    /// u16.
    pub fn u16(&mut self) -> Result<u16, WireError> {
        todo!()
    }
    /// Raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        todo!()
    }
    /// CDR string (u32 length including NUL, bytes, NUL); must be valid UTF-8.
    pub fn string(&mut self) -> Result<&'a str, WireError> {
        todo!()
    }
    /// CDR sequence<octet>.
    pub fn octets(&mut self) -> Result<&'a [u8], WireError> {
        todo!()
    }
    /// Locator_t (kind, port, 16-byte address).
    pub fn locator(&mut self) -> Result<Locator, WireError> {
        todo!()
    }
    /// Duration_t.
    pub fn duration(&mut self) -> Result<Duration, WireError> {
        todo!()
    }
    /// 16-byte GUID.
    pub fn guid(&mut self) -> Result<Guid, WireError> {
        todo!()
    }
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
        todo!()
    }
    /// A parameter whose value is written by `f` into the buffer (then padded to 4).
    pub fn with(&mut self, id: u16, f: impl FnOnce(&mut Vec<u8>)) {
        todo!()
    }
    /// A u32 value.
    pub fn u32(&mut self, id: u16, v: u32) {
        todo!()
    }
    /// A CDR string value.
    pub fn string(&mut self, id: u16, s: &str) {
        todo!()
    }
    /// A sequence<octet> value.
    pub fn octets(&mut self, id: u16, v: &[u8]) {
        todo!()
    }
    /// A locator value.
    pub fn locator(&mut self, id: u16, l: &Locator) {
        todo!()
    }
    /// A Duration_t value.
    pub fn duration(&mut self, id: u16, d: Duration) {
        todo!()
    }
    /// A GUID value.
    pub fn guid(&mut self, id: u16, g: Guid) {
        todo!()
    }
    /// PID_SENTINEL; ends the list.
    pub fn finish(self) {
        todo!()
    }
}
