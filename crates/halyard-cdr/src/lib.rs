//! CDR / XCDR1 / XCDR2 encoding and decoding (OMG DDS-XTypes 1.3 §7.4) for topic types.
//!
//! CONTRACT (to be implemented by the CDR helper; keep these names and signatures):
//!
//! ```ignore
//! pub enum DataRepresentation { Xcdr1, Xcdr2 }
//! pub enum Extensibility { Final, Appendable, Mutable }
//! pub enum CdrError { ... }                     // #[non_exhaustive], structured, Display + Error
//! pub struct CdrWriter<'a> { .. }               // appends to &'a mut Vec<u8>
//! pub struct CdrReader<'a> { .. }               // reads a &'a [u8]; never panics, never
//!                                               // allocates more than the remaining input allows
//! pub trait CdrEncode { fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError>; }
//! pub trait CdrDecode: Sized { fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError>; }
//! pub trait TopicType: CdrEncode + CdrDecode + Clone + Send + Sync + 'static {
//!     fn type_name() -> &'static str;           // e.g. "KeyedSeq" or "M::Point"
//!     fn extensibility() -> Extensibility;
//!     fn has_key() -> bool;
//!     fn encode_key(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError>;  // key members only
//!     fn key_max_size() -> Option<usize>;       // None = unbounded (strings, sequences)
//!     fn decode_key(r: &mut CdrReader<'_>) -> Result<Self, CdrError>; // key-only sample, other
//!                                               // members default
//! }
//! /// Encapsulation header (2-byte id big-endian + 2-byte options whose low 2 bits give the
//! /// padding added at the end) then the body; XCDR1 -> CDR_LE (0x0001), XCDR2 -> CDR2_LE
//! /// (0x0007) / D_CDR2_LE (0x0009) / PL_CDR2_LE (0x000b) by extensibility; XCDR1 mutable -> PL_CDR_LE.
//! pub fn serialize<T: TopicType>(s: &T, rep: DataRepresentation, out: &mut Vec<u8>) -> Result<(), CdrError>;
//! /// Accepts every little- and big-endian encapsulation id listed above.
//! pub fn deserialize<T: TopicType>(bytes: &[u8]) -> Result<T, CdrError>;
//! /// Serialized key payload (for DATA with the K flag / dispose): encapsulation + key members.
//! pub fn serialize_key<T: TopicType>(s: &T, rep: DataRepresentation, out: &mut Vec<u8>) -> Result<(), CdrError>;
//! pub fn deserialize_key<T: TopicType>(bytes: &[u8]) -> Result<T, CdrError>;
//! /// Key hash per XTypes 1.3 §7.6.8: key members in XCDR2 big-endian; if key_max_size() <= 16
//! /// the bytes zero-padded to 16, else the MD5 of them. All-zero for keyless types.
//! pub fn key_hash<T: TopicType>(s: &T) -> Result<[u8; 16], CdrError>;
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
