//! ddsperf's topic types (ddsperf_types.idl, all `@final`, no module) and the accessors the
//! ping/pong/pub/sub code needs, so it can be generic over `-T`. Each announces its XTypes
//! description as Cyclone DDS 0.10's `idlc` gives ddsperf_types.idl, which sets
//! must-understand on every key (`#[must_understand]`): ddsperf 0.10 matches a nested type
//! (Struct256 ...) only when it is equal to its own.

use halyard::cdr::{
    CdrDecode, CdrEncode, CdrError, CdrReader, CdrWriter, Reflect, TopicType, TypeRef, XTypesType,
};

/// ddsperf's default type: `struct KeyedSeq { uint32 seq; @key uint32 keyval; sequence<octet> baggage; }`.
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "KeyedSeq")]
pub struct KeyedSeq {
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
    pub baggage: Vec<u8>,
}

/// A fixed-size octet array (`octet x[N]`) that implements `Default` for any `N`.
#[derive(Clone, Debug)]
pub struct Octets<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Octets<N> {
    fn default() -> Self {
        Octets([0; N])
    }
}

impl<const N: usize> CdrEncode for Octets<N> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        self.0.encode(w)
    }
}

impl<const N: usize> Reflect for Octets<N> {
    fn field(&self, path: &[halyard::cdr::PathSegment]) -> Option<halyard::cdr::FieldValue<'_>> {
        self.0.field(path)
    }
    fn field_kind(path: &[halyard::cdr::PathSegment]) -> Option<halyard::cdr::FieldKind> {
        <[u8; N]>::field_kind(path)
    }
}

/// Described as what it encodes, `octet x[N]`.
impl<const N: usize> XTypesType for Octets<N> {
    fn xtypes_ref() -> TypeRef {
        <[u8; N]>::xtypes_ref()
    }
}

impl<const N: usize> CdrDecode for Octets<N> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        <[u8; N]>::decode(r).map(Octets)
    }
    fn min_size() -> usize {
        N
    }
}

/// `struct Keyed32 { uint32 seq; @key uint32 keyval; octet baggage[24]; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Keyed32")]
pub struct Keyed32 {
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
    pub baggage: [u8; 24],
}

/// `struct Keyed256 { uint32 seq; @key uint32 keyval; octet baggage[248]; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Keyed256")]
pub struct Keyed256 {
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
    pub baggage: Octets<248>,
}

/// `struct OneULong { uint32 seq; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "OneULong")]
pub struct OneULong {
    pub seq: u32,
}

/// `struct Unkeyed16 { uint32 seq; octet baggage[12]; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Unkeyed16")]
pub struct Unkeyed16 {
    pub seq: u32,
    pub baggage: [u8; 12],
}

/// `struct Unkeyed1024 { uint32 seq; octet baggage[1020]; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Unkeyed1024")]
pub struct Unkeyed1024 {
    pub seq: u32,
    pub baggage: Octets<1020>,
}

/// `struct Struct16 { octet struct0 .. structf; int64 junk; uint32 seq; @key uint32 keyval; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Struct16")]
pub struct Struct16 {
    pub struct0: u8,
    pub struct1: u8,
    pub struct2: u8,
    pub struct3: u8,
    pub struct4: u8,
    pub struct5: u8,
    pub struct6: u8,
    pub struct7: u8,
    pub struct8: u8,
    pub struct9: u8,
    pub structa: u8,
    pub structb: u8,
    pub structc: u8,
    pub structd: u8,
    pub structe: u8,
    pub structf: u8,
    pub junk: i64,
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
}

/// `struct Struct256 { Struct16 struct160 .. struct16f; int64 junk; uint32 seq; @key uint32 keyval; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Struct256")]
pub struct Struct256 {
    pub struct160: Struct16,
    pub struct161: Struct16,
    pub struct162: Struct16,
    pub struct163: Struct16,
    pub struct164: Struct16,
    pub struct165: Struct16,
    pub struct166: Struct16,
    pub struct167: Struct16,
    pub struct168: Struct16,
    pub struct169: Struct16,
    pub struct16a: Struct16,
    pub struct16b: Struct16,
    pub struct16c: Struct16,
    pub struct16d: Struct16,
    pub struct16e: Struct16,
    pub struct16f: Struct16,
    pub junk: i64,
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
}

/// `struct Struct4k { Struct256 struct2560 .. struct256f; int64 junk; uint32 seq; @key uint32 keyval; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Struct4k")]
pub struct Struct4k {
    pub struct2560: Struct256,
    pub struct2561: Struct256,
    pub struct2562: Struct256,
    pub struct2563: Struct256,
    pub struct2564: Struct256,
    pub struct2565: Struct256,
    pub struct2566: Struct256,
    pub struct2567: Struct256,
    pub struct2568: Struct256,
    pub struct2569: Struct256,
    pub struct256a: Struct256,
    pub struct256b: Struct256,
    pub struct256c: Struct256,
    pub struct256d: Struct256,
    pub struct256e: Struct256,
    pub struct256f: Struct256,
    pub junk: i64,
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
}

/// `struct Struct32k { Struct4k struct4k0 .. struct4k7; int64 junk; uint32 seq; @key uint32 keyval; }`
#[derive(halyard::Topic, Clone, Debug, Default)]
#[topic(type_name = "Struct32k")]
pub struct Struct32k {
    pub struct4k0: Struct4k,
    pub struct4k1: Struct4k,
    pub struct4k2: Struct4k,
    pub struct4k3: Struct4k,
    pub struct4k4: Struct4k,
    pub struct4k5: Struct4k,
    pub struct4k6: Struct4k,
    pub struct4k7: Struct4k,
    pub junk: i64,
    pub seq: u32,
    #[key]
    #[must_understand]
    pub keyval: u32,
}

/// What ping/pong/pub/sub need of a ddsperf topic type.
pub trait PerfType: TopicType + Default {
    /// Topic-name suffix (`-T` value).
    const SUFFIX: &'static str;
    /// Offset of `seq` in the CDR body (after the 4-byte encapsulation header).
    const SEQ_OFF: usize;
    /// Offset of `keyval` in the CDR body; `None` for the unkeyed types.
    const KEY_OFF: Option<usize>;
    /// ddsperf's payload size for fixed-size types (its C `sizeof`, which equals the XCDR1
    /// body size for all of them: every nested struct is a multiple of 8 bytes).
    const SIZE: u32;

    fn seq(&self) -> u32;
    fn set_seq(&mut self, seq: u32);
    fn keyval(&self) -> u32;
    fn set_keyval(&mut self, k: u32);

    /// A sample as ddsperf initialises one: every octet 0xEE, then seq and keyval 0.
    /// `size` (total, >= 12) only matters for KeyedSeq.
    fn initial(size: u32) -> Self {
        let _ = size;
        let mut body = vec![0u8, 1, 0, 0];
        body.resize(4 + Self::SIZE as usize, 0xee);
        let mut s: Self = halyard::cdr::deserialize(&body).unwrap_or_default();
        s.set_seq(0);
        s.set_keyval(0);
        s
    }

    /// (seq, keyval, size) read straight from a serialized sample (either endianness)
    /// without deserializing it.
    fn peek(payload: &[u8]) -> Option<(u32, u32, u32)> {
        let seq = u32_at(payload, Self::SEQ_OFF)?;
        let key = match Self::KEY_OFF {
            Some(o) => u32_at(payload, o)?,
            None => 0,
        };
        Some((seq, key, Self::SIZE))
    }
}

/// The u32 at body offset `o` of a CDR payload (4-byte encapsulation header first).
pub fn u32_at(payload: &[u8], o: usize) -> Option<u32> {
    let b: [u8; 4] = payload.get(4 + o..8 + o)?.try_into().ok()?;
    Some(if payload.get(1)? & 1 == 1 {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    })
}

impl PerfType for KeyedSeq {
    const SUFFIX: &'static str = "KS";
    const SEQ_OFF: usize = 0;
    const KEY_OFF: Option<usize> = Some(4);
    const SIZE: u32 = 12;
    fn seq(&self) -> u32 {
        self.seq
    }
    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }
    fn keyval(&self) -> u32 {
        self.keyval
    }
    fn set_keyval(&mut self, k: u32) {
        self.keyval = k;
    }
    fn initial(size: u32) -> Self {
        KeyedSeq {
            seq: 0,
            keyval: 0,
            baggage: vec![0xee; size.saturating_sub(12) as usize],
        }
    }
    fn peek(payload: &[u8]) -> Option<(u32, u32, u32)> {
        let baglen = u32_at(payload, 8)?;
        Some((
            u32_at(payload, 0)?,
            u32_at(payload, 4)?,
            12u32.saturating_add(baglen),
        ))
    }
}

macro_rules! perf_type {
    ($t:ty, $suffix:literal, $size:expr, $seq_off:expr, keyed $key_off:expr) => {
        impl PerfType for $t {
            const SUFFIX: &'static str = $suffix;
            const SEQ_OFF: usize = $seq_off;
            const KEY_OFF: Option<usize> = Some($key_off);
            const SIZE: u32 = $size;
            fn seq(&self) -> u32 {
                self.seq
            }
            fn set_seq(&mut self, seq: u32) {
                self.seq = seq;
            }
            fn keyval(&self) -> u32 {
                self.keyval
            }
            fn set_keyval(&mut self, k: u32) {
                self.keyval = k;
            }
        }
    };
    ($t:ty, $suffix:literal, $size:expr, $seq_off:expr, unkeyed) => {
        impl PerfType for $t {
            const SUFFIX: &'static str = $suffix;
            const SEQ_OFF: usize = $seq_off;
            const KEY_OFF: Option<usize> = None;
            const SIZE: u32 = $size;
            fn seq(&self) -> u32 {
                self.seq
            }
            fn set_seq(&mut self, seq: u32) {
                self.seq = seq;
            }
            fn keyval(&self) -> u32 {
                0
            }
            fn set_keyval(&mut self, _k: u32) {}
        }
    };
}

/// Struct16 = 16 octets, int64 (8-aligned at 16), seq, keyval: 32 bytes. Each StructN is a
/// multiple of 8 bytes, so nesting adds no padding and seq/keyval are the last 8 bytes.
pub const S16_SIZE: u32 = 32;
pub const S256_SIZE: u32 = 16 * S16_SIZE + 16;
pub const S4K_SIZE: u32 = 16 * S256_SIZE + 16;
pub const S32K_SIZE: u32 = 8 * S4K_SIZE + 16;

perf_type!(Keyed32, "K32", 32, 0, keyed 4);
perf_type!(Keyed256, "K256", 256, 0, keyed 4);
perf_type!(OneULong, "OU", 4, 0, unkeyed);
perf_type!(Unkeyed16, "UK16", 16, 0, unkeyed);
perf_type!(Unkeyed1024, "UK1024", 1024, 0, unkeyed);
perf_type!(Struct16, "S16", S16_SIZE, S16_SIZE as usize - 8, keyed S16_SIZE as usize - 4);
perf_type!(Struct256, "S256", S256_SIZE, S256_SIZE as usize - 8, keyed S256_SIZE as usize - 4);
perf_type!(Struct4k, "S4k", S4K_SIZE, S4K_SIZE as usize - 8, keyed S4K_SIZE as usize - 4);
perf_type!(Struct32k, "S32k", S32K_SIZE, S32K_SIZE as usize - 8, keyed S32K_SIZE as usize - 4);

#[cfg(test)]
mod tests {
    use super::*;
    use halyard::cdr::{serialize, DataRepresentation};

    fn check<T: PerfType>() {
        let mut s = T::initial(12);
        s.set_seq(0x01020304);
        s.set_keyval(if T::KEY_OFF.is_some() { 7 } else { 0 });
        let mut buf = Vec::new();
        serialize(&s, DataRepresentation::Xcdr1, &mut buf).unwrap();
        assert_eq!(buf.len() - 4, T::SIZE as usize, "{}", T::SUFFIX);
        assert_eq!(T::peek(&buf), Some((0x01020304, s.keyval(), T::SIZE)));
        // Everything but seq/keyval is 0xEE, as ddsperf's memset.
        let mut fixed = buf[4..].to_vec();
        fixed[T::SEQ_OFF..T::SEQ_OFF + 4].fill(0xee);
        if let Some(k) = T::KEY_OFF {
            fixed[k..k + 4].fill(0xee);
        }
        assert!(fixed.iter().all(|&b| b == 0xee), "{}", T::SUFFIX);
    }

    #[test]
    fn layouts_match_ddsperf() {
        check::<Keyed32>();
        check::<Keyed256>();
        check::<OneULong>();
        check::<Unkeyed16>();
        check::<Unkeyed1024>();
        check::<Struct16>();
        check::<Struct256>();
        check::<Struct4k>();
        check::<Struct32k>();
        assert_eq!((S256_SIZE, S4K_SIZE, S32K_SIZE), (528, 8464, 67728));
        let ks = KeyedSeq::initial(100);
        let mut buf = Vec::new();
        serialize(&ks, DataRepresentation::Xcdr1, &mut buf).unwrap();
        assert_eq!(KeyedSeq::peek(&buf), Some((0, 0, 100)));
        assert_eq!(<Struct16 as TopicType>::type_name(), "Struct16");
        assert!(!OneULong::has_key() && Struct32k::has_key());
    }
}
