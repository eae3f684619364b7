//! Basic RTPS types (RTPS 2.5 §9.3.2): GUIDs, entity ids, sequence numbers, locators, time.

/// A 12-byte GUID prefix identifying a participant (RTPS 2.5 §8.2.4.3).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct GuidPrefix(pub [u8; 12]);

impl GuidPrefix {
    /// GUIDPREFIX_UNKNOWN.
    pub const UNKNOWN: GuidPrefix = GuidPrefix([0; 12]);
}

/// A 4-byte entity id: 3 bytes key, 1 byte kind (RTPS 2.5 §9.3.1.2).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct EntityId(pub [u8; 4]);

impl EntityId {
    /// ENTITYID_UNKNOWN.
    pub const UNKNOWN: EntityId = EntityId([0, 0, 0, 0]);
    /// ENTITYID_PARTICIPANT.
    pub const PARTICIPANT: EntityId = EntityId([0, 0, 1, 0xc1]);
    /// ENTITYID_SEDP_BUILTIN_TOPICS_ANNOUNCER.
    pub const SEDP_TOPICS_WRITER: EntityId = EntityId([0, 0, 2, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_TOPICS_DETECTOR.
    pub const SEDP_TOPICS_READER: EntityId = EntityId([0, 0, 2, 0xc7]);
    /// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_ANNOUNCER.
    pub const SEDP_PUBLICATIONS_WRITER: EntityId = EntityId([0, 0, 3, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_DETECTOR.
    pub const SEDP_PUBLICATIONS_READER: EntityId = EntityId([0, 0, 3, 0xc7]);
    /// ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_ANNOUNCER.
    pub const SEDP_SUBSCRIPTIONS_WRITER: EntityId = EntityId([0, 0, 4, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_DETECTOR.
    pub const SEDP_SUBSCRIPTIONS_READER: EntityId = EntityId([0, 0, 4, 0xc7]);
    /// ENTITYID_SPDP_BUILTIN_PARTICIPANT_ANNOUNCER.
    pub const SPDP_WRITER: EntityId = EntityId([0, 1, 0, 0xc2]);
    /// ENTITYID_SPDP_BUILTIN_PARTICIPANT_DETECTOR.
    pub const SPDP_READER: EntityId = EntityId([0, 1, 0, 0xc7]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_WRITER.
    pub const P2P_MESSAGE_WRITER: EntityId = EntityId([0, 2, 0, 0xc2]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_READER.
    pub const P2P_MESSAGE_READER: EntityId = EntityId([0, 2, 0, 0xc7]);
    /// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_SECURE_WRITER (DDS Security 1.1 §7.4.5).
    pub const SEDP_PUBLICATIONS_SECURE_WRITER: EntityId = EntityId([0xff, 0x0, 0x3, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_SECURE_READER.
    pub const SEDP_PUBLICATIONS_SECURE_READER: EntityId = EntityId([0xff, 0x0, 0x3, 0xc7]);
    /// ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_SECURE_WRITER.
    pub const SEDP_SUBSCRIPTIONS_SECURE_WRITER: EntityId = EntityId([0xff, 0x0, 0x4, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_SECURE_READER.
    pub const SEDP_SUBSCRIPTIONS_SECURE_READER: EntityId = EntityId([0xff, 0x0, 0x4, 0xc7]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_STATELESS_WRITER (DDS Security 1.1 §7.4.3).
    pub const P2P_STATELESS_MESSAGE_WRITER: EntityId = EntityId([0x0, 0x2, 0x1, 0xc3]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_STATELESS_READER.
    pub const P2P_STATELESS_MESSAGE_READER: EntityId = EntityId([0x0, 0x2, 0x1, 0xc4]);
    /// XTypes 1.3 §7.6.3.3.4: the TypeLookup service's request writer.
    pub const TL_SVC_REQUEST_WRITER: EntityId = EntityId([0, 3, 0, 0xc3]);
    /// XTypes 1.3 §7.6.3.3.4: the TypeLookup service's request reader.
    pub const TL_SVC_REQUEST_READER: EntityId = EntityId([0, 3, 0, 0xc4]);
    /// XTypes 1.3 §7.6.3.3.4: the TypeLookup service's reply writer.
    pub const TL_SVC_REPLY_WRITER: EntityId = EntityId([0, 3, 1, 0xc3]);
    /// XTypes 1.3 §7.6.3.3.4: the TypeLookup service's reply reader.
    pub const TL_SVC_REPLY_READER: EntityId = EntityId([0, 3, 1, 0xc4]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_SECURE_WRITER.
    pub const P2P_MESSAGE_SECURE_WRITER: EntityId = EntityId([0xff, 0x2, 0x0, 0xc2]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_SECURE_READER.
    pub const P2P_MESSAGE_SECURE_READER: EntityId = EntityId([0xff, 0x2, 0x0, 0xc7]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_VOLATILE_SECURE_WRITER (DDS Security 1.1 §7.4.4).
    pub const P2P_VOLATILE_SECURE_WRITER: EntityId = EntityId([0xff, 0x2, 0x2, 0xc3]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_VOLATILE_SECURE_READER.
    pub const P2P_VOLATILE_SECURE_READER: EntityId = EntityId([0xff, 0x2, 0x2, 0xc4]);
    /// ENTITYID_SPDP_RELIABLE_BUILTIN_PARTICIPANT_SECURE_WRITER.
    pub const SPDP_RELIABLE_SECURE_WRITER: EntityId = EntityId([0xff, 0x1, 0x1, 0xc2]);
    /// ENTITYID_SPDP_RELIABLE_BUILTIN_PARTICIPANT_SECURE_READER.
    pub const SPDP_RELIABLE_SECURE_READER: EntityId = EntityId([0xff, 0x1, 0x1, 0xc7]);

    /// Entity kind: user-defined writer with key.
    pub const KIND_WRITER_WITH_KEY: u8 = 0x02;
    /// Entity kind: user-defined writer without key.
    pub const KIND_WRITER_NO_KEY: u8 = 0x03;
    /// Entity kind: user-defined reader without key.
    pub const KIND_READER_NO_KEY: u8 = 0x04;
    /// Entity kind: user-defined reader with key.
    pub const KIND_READER_WITH_KEY: u8 = 0x07;

    /// Builds a user entity id from a 24-bit key and a kind octet.
    pub fn new(key: u32, kind: u8) -> EntityId {
        let k = key.to_be_bytes();
        EntityId([k[1], k[2], k[3], kind])
    }
    /// The kind octet.
    pub fn kind(self) -> u8 {
        self.0[3]
    }
    /// True for writer kinds (user or builtin).
    pub fn is_writer(self) -> bool {
        matches!(self.kind() & 0x3f, 0x02 | 0x03)
    }
    /// True for reader kinds (user or builtin).
    pub fn is_reader(self) -> bool {
        matches!(self.kind() & 0x3f, 0x04 | 0x07)
    }
    /// True for builtin entities (kind bits 0xc0 set to 0xc0).
    pub fn is_builtin(self) -> bool {
        self.kind() & 0xc0 == 0xc0
    }
}

/// A GUID: prefix plus entity id (RTPS 2.5 §8.2.4.1).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Guid {
    /// The participant part.
    pub prefix: GuidPrefix,
    /// The entity part.
    pub entity: EntityId,
}

impl Guid {
    /// Builds a GUID.
    pub fn new(prefix: GuidPrefix, entity: EntityId) -> Guid {
        Guid { prefix, entity }
    }
    /// The 16 bytes in network order (as in PID_ENDPOINT_GUID and key hashes).
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..12].copy_from_slice(&self.prefix.0);
        b[12..].copy_from_slice(&self.entity.0);
        b
    }
    /// From 16 bytes in network order.
    pub fn from_bytes(b: [u8; 16]) -> Guid {
        let mut p = [0u8; 12];
        p.copy_from_slice(&b[..12]);
        Guid { prefix: GuidPrefix(p), entity: EntityId([b[12], b[13], b[14], b[15]]) }
    }
}

/// A 64-bit sequence number (RTPS 2.5 §9.3.2, wire: high i32, low u32). Valid numbers are >= 1.
///
/// Arithmetic saturates: numbers come from peers, and one near `i64::MAX` must not overflow.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct SequenceNumber(pub i64);

impl SequenceNumber {
    /// The first sequence number a writer assigns.
    pub const FIRST: SequenceNumber = SequenceNumber(1);

    /// The sequence numbers from `self` up to `end`, excluded.
    pub fn until(self, end: SequenceNumber) -> impl Iterator<Item = SequenceNumber> {
        (self.0..end.0.max(self.0)).map(SequenceNumber)
    }
}

impl core::ops::Add<i64> for SequenceNumber {
    type Output = SequenceNumber;
    fn add(self, n: i64) -> SequenceNumber {
        SequenceNumber(self.0.saturating_add(n))
    }
}

impl core::ops::AddAssign<i64> for SequenceNumber {
    fn add_assign(&mut self, n: i64) {
        self.0 = self.0.saturating_add(n);
    }
}

impl core::ops::Sub<i64> for SequenceNumber {
    type Output = SequenceNumber;
    fn sub(self, n: i64) -> SequenceNumber {
        SequenceNumber(self.0.saturating_sub(n))
    }
}

/// How many sequence numbers lie from `earlier` (included) to `self` (excluded); negative
/// when `earlier` is later.
impl core::ops::Sub<SequenceNumber> for SequenceNumber {
    type Output = i64;
    fn sub(self, earlier: SequenceNumber) -> i64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// Protocol version (major, minor).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ProtocolVersion {
    /// Major version (2).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl ProtocolVersion {
    /// The version Halyard speaks: 2.5.
    pub const V2_5: ProtocolVersion = ProtocolVersion { major: 2, minor: 5 };
}

/// Vendor id (RTPS 2.5 §9.3.1.5); Halyard uses an unassigned id.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct VendorId(pub [u8; 2]);

impl VendorId {
    /// Halyard's vendor id (unregistered, chosen not to collide with OMG-assigned ones).
    pub const HALYARD: VendorId = VendorId([0x01, 0x99]);
    /// Eclipse Cyclone DDS.
    pub const CYCLONE: VendorId = VendorId([0x01, 0x10]);
    /// eProsima Fast DDS.
    pub const FASTDDS: VendorId = VendorId([0x01, 0x0f]);
    /// VENDORID_UNKNOWN.
    pub const UNKNOWN: VendorId = VendorId([0, 0]);
}

/// A transport locator (RTPS 2.5 §9.3.2.5).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Locator {
    /// LOCATOR_KIND_UDPv4 = 1, LOCATOR_KIND_UDPv6 = 2, others as the spec or vendors define.
    pub kind: i32,
    /// UDP port.
    pub port: u32,
    /// Address; IPv4 uses the last 4 bytes.
    pub address: [u8; 16],
}

impl Locator {
    /// LOCATOR_KIND_UDPv4.
    pub const KIND_UDPV4: i32 = 1;
    /// LOCATOR_KIND_UDPv6.
    pub const KIND_UDPV6: i32 = 2;
    /// Builds a UDPv4 locator.
    pub fn udpv4(ip: [u8; 4], port: u16) -> Locator {
        let mut address = [0u8; 16];
        address[12..].copy_from_slice(&ip);
        Locator { kind: Self::KIND_UDPV4, port: port as u32, address }
    }
    /// The IPv4 address and port, for UDPv4 locators whose port fits 16 bits.
    pub fn as_udpv4(&self) -> Option<([u8; 4], u16)> {
        // RTPS 2.5 §9.3.2: a UDPv4 address is twelve zero octets and the IPv4 address; one
        // with anything else in front (a damaged announcement) names no reachable host.
        if self.kind != Self::KIND_UDPV4
            || self.port == 0
            || self.port > 65535
            || self.address[..12] != [0; 12]
        {
            return None;
        }
        let mut ip = [0u8; 4];
        ip.copy_from_slice(&self.address[12..]);
        Some((ip, self.port as u16))
    }
}

/// RTPS Time_t: seconds and 2^-32 fractions (RTPS 2.5 §9.3.2.1).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Time {
    /// Seconds since the epoch.
    pub seconds: i32,
    /// Fractions of a second, in units of 2^-32 s.
    pub fraction: u32,
}

impl Time {
    /// TIME_INVALID.
    pub const INVALID: Time = Time { seconds: -1, fraction: 0xffff_ffff };
    /// From nanoseconds since the Unix epoch. The fraction is rounded up, and
    /// [`Time::to_nanos`] rounds to nearest, so nanoseconds survive a round trip exactly
    /// (as in Cyclone DDS; ddsperf uses the timestamp's lowest bit as a flag).
    pub fn from_nanos(nanos: i64) -> Time {
        let seconds = nanos.div_euclid(1_000_000_000);
        let rem = nanos.rem_euclid(1_000_000_000) as u64;
        Time { seconds: seconds as i32, fraction: ((rem << 32).div_ceil(1_000_000_000)) as u32 }
    }
    /// To nanoseconds since the Unix epoch.
    pub fn to_nanos(self) -> i64 {
        self.seconds as i64 * 1_000_000_000
            + ((self.fraction as u64 * 1_000_000_000 + (1 << 31)) >> 32) as i64
    }
}

/// RTPS Duration_t: seconds and 2^-32 fractions; used in parameter lists (lease duration, QoS).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Duration {
    /// Seconds.
    pub seconds: i32,
    /// Fractions, in units of 2^-32 s.
    pub fraction: u32,
}

impl Duration {
    /// DURATION_INFINITE.
    pub const INFINITE: Duration = Duration { seconds: 0x7fff_ffff, fraction: 0xffff_ffff };
    /// DURATION_ZERO.
    pub const ZERO: Duration = Duration { seconds: 0, fraction: 0 };
    /// From nanoseconds; saturates to INFINITE.
    pub fn from_nanos(nanos: i64) -> Duration {
        if nanos >= 0x7fff_ffff * 1_000_000_000 {
            return Self::INFINITE;
        }
        let t = Time::from_nanos(nanos);
        Duration { seconds: t.seconds, fraction: t.fraction }
    }
    /// To nanoseconds; INFINITE maps to i64::MAX.
    pub fn to_nanos(self) -> i64 {
        if self == Self::INFINITE {
            return i64::MAX;
        }
        Time { seconds: self.seconds, fraction: self.fraction }.to_nanos()
    }
}

#[cfg(test)]
mod time_tests {
    use super::Time;

    #[test]
    fn nanoseconds_survive_a_round_trip_exactly() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ns = (x % 2_000_000_000_000_000_000) as i64;
            assert_eq!(Time::from_nanos(ns).to_nanos(), ns, "ns = {ns}");
        }
    }
}
