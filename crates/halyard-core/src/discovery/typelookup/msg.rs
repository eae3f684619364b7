//! The TypeLookup service's request and reply samples (XTypes 1.3 §7.6.3.3.3, with the
//! DDS-RPC 1.0 request/reply headers), in XCDR2.
//!
//! `TypeLookup_Request` and `TypeLookup_Reply` are `@final` structs, so a sample is
//! encapsulated as CDR2 (0x0007 little-endian, 0x0006 big-endian); inside them the call and
//! return unions are `@appendable` (a DHEADER first) and the `_In`/`_Out` structs `@mutable`
//! (a DHEADER, then an EMHEADER per member, whose id is the MD5 name hash because the IDL
//! marks them `@hashid`). Member ids and union discriminators are the ones Cyclone DDS's
//! `ddsi_xt_typelookup.idl` uses (checked against its generated op codes).
//!
//! Only hashed TypeIdentifiers (`EK_MINIMAL`, `EK_COMPLETE`) travel here: they are what
//! TypeLookup resolves, and the only kind Cyclone DDS asks for. Any other identifier in a
//! received sample is [`MsgError::UnsupportedIdentifier`]. TypeObjects are carried as their
//! XCDR2 bytes (they are `@appendable`, so their DHEADER delimits them); the caller decodes
//! and checks them. Decoding never panics and bounds every sequence by the input's length.

use halyard_wire::Guid;
use halyard_xtypes::{EquivalenceKind, TypeIdentifier, TypeIdentifierWithSize};

/// `TypeLookup_getTypes_HashId`: the `TypeLookup_Call`/`_Return` discriminator of getTypes.
pub const GET_TYPES_HASH_ID: i32 = 0x0182_52d3;
/// `TypeLookup_getDependencies_HashId`: the discriminator of getTypeDependencies.
pub const GET_DEPENDENCIES_HASH_ID: i32 = 0x05aa_fb31;
/// Member id (name hash) of `type_ids` in `TypeLookup_getTypes_In` and `_getTypeDependencies_In`.
const MID_TYPE_IDS: u32 = 0x0c53_6065;
/// Member id of `types` in `TypeLookup_getTypes_Out`.
const MID_TYPES: u32 = 0x0280_4ad1;
/// Member id of `complete_to_minimal` in `TypeLookup_getTypes_Out`.
const MID_COMPLETE_TO_MINIMAL: u32 = 0x0b8e_6577;
/// Member id of `continuation_point` in the getTypeDependencies structs.
const MID_CONTINUATION_POINT: u32 = 0x0508_e3d2;
/// Member id of `dependent_typeids` in `TypeLookup_getTypeDependencies_Out`.
const MID_DEPENDENT_TYPEIDS: u32 = 0x0ba4_dfc9;
/// Longest `continuation_point` (`sequence<octet, 32>`).
pub const MAX_CONTINUATION_POINT: usize = 32;
/// Longest `instanceName` (`string<255>`).
pub const MAX_INSTANCE_NAME: usize = 255;
/// `DDS_RETCODE_OK`, the one case of the `_Result` unions.
const RETCODE_OK: i32 = 0;

/// Why a TypeLookup sample could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MsgError {
    /// The sample ended inside a value.
    Truncated,
    /// Not a CDR2 encapsulation (the identifier read is given).
    BadEncapsulation(u16),
    /// A length or count larger than what follows it or than the type allows.
    BadLength(&'static str),
    /// A TypeIdentifier that is not a hash (discriminator given).
    UnsupportedIdentifier(u8),
    /// A string that is not NUL-terminated UTF-8.
    BadString,
    /// A mutable struct lacks a member it needs (member id given).
    MissingMember(u32),
    /// An unknown member flagged must-understand (member id given).
    MustUnderstand(u32),
}

impl std::fmt::Display for MsgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MsgError::Truncated => write!(f, "TypeLookup sample truncated"),
            MsgError::BadEncapsulation(e) => {
                write!(f, "TypeLookup sample has encapsulation {e:#06x}, not CDR2")
            }
            MsgError::BadLength(what) => write!(f, "TypeLookup sample: bad length of {what}"),
            MsgError::UnsupportedIdentifier(d) => {
                write!(
                    f,
                    "TypeLookup sample names a non-hashed TypeIdentifier ({d:#04x})"
                )
            }
            MsgError::BadString => write!(f, "TypeLookup sample: bad instanceName string"),
            MsgError::MissingMember(id) => write!(f, "TypeLookup sample lacks member {id:#x}"),
            MsgError::MustUnderstand(id) => {
                write!(
                    f,
                    "TypeLookup sample has unknown must-understand member {id:#x}"
                )
            }
        }
    }
}

impl std::error::Error for MsgError {}

type Res<T> = Result<T, MsgError>;

/// DDS-RPC SampleIdentity: the request writer and the request's sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleIdentity {
    /// The writer of the request.
    pub writer: Guid,
    /// Its sequence number (high and low words on the wire).
    pub sn: i64,
}

/// `TypeLookup_Call`: what a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// getTypes: the TypeObjects of these (hashed) identifiers.
    GetTypes(Vec<TypeIdentifier>),
    /// getTypeDependencies: the identifiers these types depend on, from a continuation point.
    GetTypeDependencies {
        /// The types.
        type_ids: Vec<TypeIdentifier>,
        /// Where the previous reply stopped (empty the first time).
        continuation_point: Vec<u8>,
    },
    /// A call this implementation does not know (its discriminator).
    Unknown(i32),
}

/// `TypeLookup_Request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The request's identity (the requester matches replies by it).
    pub id: SampleIdentity,
    /// `instanceName`: "dds.builtin.TOS." and the hex GUID of the participant asked.
    pub instance_name: String,
    /// The call.
    pub call: Call,
}

/// `TypeLookup_getTypes_Out`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypesOut {
    /// (identifier, TypeObject XCDR2 bytes) pairs.
    pub types: Vec<(TypeIdentifier, Vec<u8>)>,
    /// (complete, minimal) identifier pairs.
    pub complete_to_minimal: Vec<(TypeIdentifier, TypeIdentifier)>,
}

/// `TypeLookup_getTypeDependencies_Out`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DependenciesOut {
    /// The dependencies (this part of them).
    pub dependent_typeids: Vec<TypeIdentifierWithSize>,
    /// Where to continue; empty when this is the last part.
    pub continuation_point: Vec<u8>,
}

/// `TypeLookup_Return`: what a reply carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Return {
    /// getTypes' result (`Err`: the non-OK return code).
    GetTypes(Result<TypesOut, i32>),
    /// getTypeDependencies' result.
    GetTypeDependencies(Result<DependenciesOut, i32>),
    /// A return this implementation does not know (its discriminator).
    Unknown(i32),
}

/// `TypeLookup_Reply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The identity of the request answered.
    pub related: SampleIdentity,
    /// `remoteEx` (0 = REMOTE_EX_OK).
    pub remote_ex: i32,
    /// The result.
    pub ret: Return,
}

/// The `instanceName` of requests to the participant `participant` (as Cyclone DDS writes it:
/// "dds.builtin.TOS." and the participant GUID as 32 lower-case hex digits; the null GUID
/// when the request is for no participant in particular).
pub fn instance_name(participant: Guid) -> String {
    let mut s = String::from("dds.builtin.TOS.");
    for b in participant.to_bytes() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

// ---------------------------------------------------------------- encoding

/// XCDR2 little-endian writer; alignment (at most 4) is relative to the byte after the
/// encapsulation header.
struct Enc {
    buf: Vec<u8>,
}

impl Enc {
    fn new() -> Enc {
        Enc {
            buf: vec![0x00, 0x07, 0x00, 0x00],
        }
    }
    fn align4(&mut self) {
        // The origin (after the 4-byte header) is itself 4-aligned.
        while self.buf.len() & 3 != 0 {
            self.buf.push(0);
        }
    }
    fn u32(&mut self, v: u32) {
        self.align4();
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.u32(v as u32);
    }
    /// Reserves a u32 (a DHEADER or NEXTINT) to be patched by [`Enc::patch_len`].
    fn reserve(&mut self) -> usize {
        self.u32(0);
        self.buf.len()
    }
    /// Writes the number of bytes after the reserved u32 into it.
    fn patch_len(&mut self, at: usize) {
        let len = u32::try_from(self.buf.len() - at).unwrap_or(u32::MAX);
        self.buf[at - 4..at].copy_from_slice(&len.to_le_bytes());
    }
    fn delimited(&mut self, f: impl FnOnce(&mut Enc)) {
        let at = self.reserve();
        f(self);
        self.patch_len(at);
    }
    /// A mutable-struct member: EMHEADER (LC = 4, NEXTINT = length) then the value.
    fn member(&mut self, id: u32, f: impl FnOnce(&mut Enc)) {
        self.u32((4 << 28) | (id & 0x0fff_ffff));
        self.delimited(f);
    }
    fn guid(&mut self, g: Guid) {
        self.buf.extend_from_slice(&g.to_bytes());
    }
    fn identity(&mut self, id: SampleIdentity) {
        self.guid(id.writer);
        self.i32((id.sn >> 32) as i32);
        self.u32(id.sn as u32);
    }
    fn type_id(&mut self, ti: &TypeIdentifier) {
        // Only hashes are written (checked by the callers): 1 + 14 octets.
        if let TypeIdentifier::Hash { kind, hash } = ti {
            self.buf.push(kind.octet());
            self.buf.extend_from_slice(hash);
        }
    }
    fn type_ids(&mut self, ids: &[TypeIdentifier]) {
        self.delimited(|e| {
            e.u32(hashed(ids).count() as u32);
            hashed(ids).for_each(|ti| e.type_id(ti));
        });
    }
    fn octets(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
    }
    /// Pads to 4 and records the padding in the encapsulation options (RTPS 2.5 §10.1.2).
    fn finish(mut self) -> Vec<u8> {
        let pad = (4 - (self.buf.len() % 4)) % 4;
        self.buf.resize(self.buf.len() + pad, 0);
        self.buf[3] = pad as u8;
        self.buf
    }
}

fn hashed(ids: &[TypeIdentifier]) -> impl Iterator<Item = &TypeIdentifier> {
    ids.iter()
        .filter(|t| matches!(t, TypeIdentifier::Hash { .. }))
}

impl Request {
    /// The serialized sample (CDR2_LE encapsulation). Identifiers that are not hashes are
    /// left out (TypeLookup resolves hashes only).
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        e.identity(self.id);
        let name =
            &self.instance_name.as_bytes()[..self.instance_name.len().min(MAX_INSTANCE_NAME)];
        e.u32(name.len() as u32 + 1);
        e.buf.extend_from_slice(name);
        e.buf.push(0);
        e.delimited(|e| match &self.call {
            Call::GetTypes(ids) => {
                e.i32(GET_TYPES_HASH_ID);
                e.delimited(|e| e.member(MID_TYPE_IDS, |e| e.type_ids(ids)));
            }
            Call::GetTypeDependencies {
                type_ids,
                continuation_point,
            } => {
                e.i32(GET_DEPENDENCIES_HASH_ID);
                let cp =
                    &continuation_point[..continuation_point.len().min(MAX_CONTINUATION_POINT)];
                e.delimited(|e| {
                    e.member(MID_TYPE_IDS, |e| e.type_ids(type_ids));
                    e.member(MID_CONTINUATION_POINT, |e| e.octets(cp));
                });
            }
            Call::Unknown(d) => e.i32(*d),
        });
        e.finish()
    }
}

impl Reply {
    /// The serialized sample (CDR2_LE encapsulation).
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        e.identity(self.related);
        e.i32(self.remote_ex);
        e.delimited(|e| match &self.ret {
            Return::GetTypes(r) => {
                e.i32(GET_TYPES_HASH_ID);
                e.delimited(|e| match r {
                    Ok(out) => {
                        e.i32(RETCODE_OK);
                        e.delimited(|e| encode_types_out(e, out));
                    }
                    Err(code) => e.i32(*code),
                });
            }
            Return::GetTypeDependencies(r) => {
                e.i32(GET_DEPENDENCIES_HASH_ID);
                e.delimited(|e| match r {
                    Ok(out) => {
                        e.i32(RETCODE_OK);
                        e.delimited(|e| encode_deps_out(e, out));
                    }
                    Err(code) => e.i32(*code),
                });
            }
            Return::Unknown(d) => e.i32(*d),
        });
        e.finish()
    }
}

fn encode_types_out(e: &mut Enc, out: &TypesOut) {
    let pairs: Vec<&(TypeIdentifier, Vec<u8>)> = out
        .types
        .iter()
        .filter(|(t, _)| matches!(t, TypeIdentifier::Hash { .. }))
        .collect();
    e.member(MID_TYPES, |e| {
        e.delimited(|e| {
            e.u32(pairs.len() as u32);
            for (ti, obj) in &pairs {
                e.type_id(ti);
                e.align4();
                e.buf.extend_from_slice(obj);
            }
        })
    });
    let c2m: Vec<&(TypeIdentifier, TypeIdentifier)> = out
        .complete_to_minimal
        .iter()
        .filter(|(c, m)| {
            matches!(c, TypeIdentifier::Hash { .. }) && matches!(m, TypeIdentifier::Hash { .. })
        })
        .collect();
    e.member(MID_COMPLETE_TO_MINIMAL, |e| {
        e.delimited(|e| {
            e.u32(c2m.len() as u32);
            for (c, m) in &c2m {
                e.type_id(c);
                e.type_id(m);
            }
        })
    });
}

fn encode_deps_out(e: &mut Enc, out: &DependenciesOut) {
    let deps: Vec<&TypeIdentifierWithSize> = out
        .dependent_typeids
        .iter()
        .filter(|t| matches!(t.type_id, TypeIdentifier::Hash { .. }))
        .collect();
    e.member(MID_DEPENDENT_TYPEIDS, |e| {
        e.delimited(|e| {
            e.u32(deps.len() as u32);
            for d in &deps {
                // TypeIdentifierWithSize is @appendable: a DHEADER each.
                e.delimited(|e| {
                    e.type_id(&d.type_id);
                    e.u32(d.typeobject_serialized_size);
                });
            }
        })
    });
    let cp = &out.continuation_point[..out.continuation_point.len().min(MAX_CONTINUATION_POINT)];
    e.member(MID_CONTINUATION_POINT, |e| e.octets(cp));
}

// ---------------------------------------------------------------- decoding

/// XCDR2 reader over `buf[..end]`; alignment relative to `buf[0]` (the byte after the
/// encapsulation header).
struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    big_endian: bool,
}

impl<'a> Dec<'a> {
    fn open(payload: &'a [u8]) -> Res<Dec<'a>> {
        let h = payload.get(..4).ok_or(MsgError::Truncated)?;
        let big_endian = match u16::from_be_bytes([h[0], h[1]]) {
            0x0006 => true,
            0x0007 => false,
            other => return Err(MsgError::BadEncapsulation(other)),
        };
        let buf = payload.get(4..).ok_or(MsgError::Truncated)?;
        Ok(Dec {
            buf,
            pos: 0,
            end: buf.len(),
            big_endian,
        })
    }
    fn bytes(&mut self, n: usize) -> Res<&'a [u8]> {
        let stop = self.pos.checked_add(n).ok_or(MsgError::Truncated)?;
        if stop > self.end {
            return Err(MsgError::Truncated);
        }
        let b = self.buf.get(self.pos..stop).ok_or(MsgError::Truncated)?;
        self.pos = stop;
        Ok(b)
    }
    fn align4(&mut self) -> Res<()> {
        let pad = (4 - self.pos % 4) % 4;
        self.bytes(pad).map(|_| ())
    }
    fn u32(&mut self) -> Res<u32> {
        self.align4()?;
        let b = self.bytes(4)?;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(if self.big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }
    fn i32(&mut self) -> Res<i32> {
        self.u32().map(|v| v as i32)
    }
    /// Runs `f` on the next `len` bytes, then skips whatever `f` left of them.
    fn window<T>(&mut self, len: usize, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        let stop = self.pos.checked_add(len).ok_or(MsgError::Truncated)?;
        if stop > self.end {
            return Err(MsgError::BadLength("DHEADER"));
        }
        let outer = std::mem::replace(&mut self.end, stop);
        let r = f(self);
        self.end = outer;
        self.pos = stop;
        r
    }
    fn delimited<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        let len = self.u32()? as usize;
        self.window(len, f)
    }
    fn guid(&mut self) -> Res<Guid> {
        let b = self.bytes(16)?;
        let mut g = [0u8; 16];
        g.copy_from_slice(b);
        Ok(Guid::from_bytes(g))
    }
    fn identity(&mut self) -> Res<SampleIdentity> {
        let writer = self.guid()?;
        let high = self.i32()?;
        let low = self.u32()?;
        Ok(SampleIdentity {
            writer,
            sn: (i64::from(high) << 32) | i64::from(low),
        })
    }
    fn type_id(&mut self) -> Res<TypeIdentifier> {
        let d = self.bytes(1)?[0];
        let kind = EquivalenceKind::from_octet(d)
            .filter(|k| *k != EquivalenceKind::Both)
            .ok_or(MsgError::UnsupportedIdentifier(d))?;
        let mut hash = [0u8; 14];
        hash.copy_from_slice(self.bytes(14)?);
        Ok(TypeIdentifier::Hash { kind, hash })
    }
    /// A sequence length, bounded by the bytes left (each element takes `min_size` at least).
    fn count(&mut self, min_size: usize, what: &'static str) -> Res<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_size) > self.end.saturating_sub(self.pos) {
            return Err(MsgError::BadLength(what));
        }
        Ok(n)
    }
    fn type_ids(&mut self) -> Res<Vec<TypeIdentifier>> {
        self.delimited(|d| {
            let n = d.count(15, "type_ids")?;
            (0..n).map(|_| d.type_id()).collect()
        })
    }
    fn octets(&mut self, max: usize, what: &'static str) -> Res<Vec<u8>> {
        let n = self.count(1, what)?;
        if n > max {
            return Err(MsgError::BadLength(what));
        }
        Ok(self.bytes(n)?.to_vec())
    }
    /// The members of a mutable struct (inside its DHEADER window): `f(self, id)` reads the
    /// value of a member it knows and returns true, or returns false to skip it.
    fn members(&mut self, mut f: impl FnMut(&mut Self, u32) -> Res<bool>) -> Res<()> {
        while self.end.saturating_sub(self.pos) >= 4 {
            let em = self.u32()?;
            let id = em & 0x0fff_ffff;
            let must = em & 0x8000_0000 != 0;
            let len = match (em >> 28) & 0x7 {
                0 => 1,
                1 => 2,
                2 => 4,
                3 => 8,
                lc => {
                    let next = self.u32()? as usize;
                    match lc {
                        4 => next,
                        // LC 5..7: NEXTINT is also the value's first word; step back to it.
                        _ => {
                            self.pos -= 4;
                            let unit = [1usize, 4, 8][lc as usize - 5];
                            next.checked_mul(unit)
                                .and_then(|l| l.checked_add(4))
                                .ok_or(MsgError::BadLength("member"))?
                        }
                    }
                }
            };
            let known = self.window(len, |d| f(d, id))?;
            if !known && must {
                return Err(MsgError::MustUnderstand(id));
            }
        }
        Ok(())
    }
}

impl Request {
    /// Decodes a request sample (with its encapsulation header).
    pub fn decode(payload: &[u8]) -> Res<Request> {
        let mut d = Dec::open(payload)?;
        let id = d.identity()?;
        let len = d.u32()? as usize;
        if len == 0 || len > MAX_INSTANCE_NAME + 1 {
            return Err(MsgError::BadString);
        }
        let raw = d.bytes(len)?;
        let (text, nul) = raw.split_at(len - 1);
        if nul != [0] {
            return Err(MsgError::BadString);
        }
        let instance_name = std::str::from_utf8(text)
            .map_err(|_| MsgError::BadString)?
            .to_owned();
        let call = d.delimited(|d| match d.i32()? {
            GET_TYPES_HASH_ID => {
                let mut ids = None;
                d.delimited(|d| {
                    d.members(|d, mid| {
                        if mid == MID_TYPE_IDS {
                            ids = Some(d.type_ids()?);
                            return Ok(true);
                        }
                        Ok(false)
                    })
                })?;
                Ok(Call::GetTypes(
                    ids.ok_or(MsgError::MissingMember(MID_TYPE_IDS))?,
                ))
            }
            GET_DEPENDENCIES_HASH_ID => {
                let (mut ids, mut cp) = (None, Vec::new());
                d.delimited(|d| {
                    d.members(|d, mid| match mid {
                        MID_TYPE_IDS => {
                            ids = Some(d.type_ids()?);
                            Ok(true)
                        }
                        MID_CONTINUATION_POINT => {
                            cp = d.octets(MAX_CONTINUATION_POINT, "continuation_point")?;
                            Ok(true)
                        }
                        _ => Ok(false),
                    })
                })?;
                Ok(Call::GetTypeDependencies {
                    type_ids: ids.ok_or(MsgError::MissingMember(MID_TYPE_IDS))?,
                    continuation_point: cp,
                })
            }
            other => Ok(Call::Unknown(other)),
        })?;
        Ok(Request {
            id,
            instance_name,
            call,
        })
    }
}

impl Reply {
    /// Decodes a reply sample (with its encapsulation header).
    pub fn decode(payload: &[u8]) -> Res<Reply> {
        let mut d = Dec::open(payload)?;
        let related = d.identity()?;
        let remote_ex = d.i32()?;
        let ret = d.delimited(|d| match d.i32()? {
            GET_TYPES_HASH_ID => Ok(Return::GetTypes(d.delimited(|d| match d.i32()? {
                RETCODE_OK => d.delimited(decode_types_out).map(Ok),
                code => Ok(Err(code)),
            })?)),
            GET_DEPENDENCIES_HASH_ID => {
                Ok(Return::GetTypeDependencies(d.delimited(
                    |d| match d.i32()? {
                        RETCODE_OK => d.delimited(decode_deps_out).map(Ok),
                        code => Ok(Err(code)),
                    },
                )?))
            }
            other => Ok(Return::Unknown(other)),
        })?;
        Ok(Reply {
            related,
            remote_ex,
            ret,
        })
    }
}

fn decode_types_out(d: &mut Dec<'_>) -> Res<TypesOut> {
    let mut out = TypesOut::default();
    d.members(|d, mid| match mid {
        MID_TYPES => {
            out.types = d.delimited(|d| {
                let n = d.count(20, "types")?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    let ti = d.type_id()?;
                    // The TypeObject (@appendable union): its DHEADER delimits it.
                    let len = d.u32()? as usize;
                    d.pos -= 4;
                    let obj = d.bytes(len.checked_add(4).ok_or(MsgError::Truncated)?)?;
                    v.push((ti, obj.to_vec()));
                }
                Ok(v)
            })?;
            Ok(true)
        }
        MID_COMPLETE_TO_MINIMAL => {
            out.complete_to_minimal = d.delimited(|d| {
                let n = d.count(30, "complete_to_minimal")?;
                (0..n).map(|_| Ok((d.type_id()?, d.type_id()?))).collect()
            })?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(out)
}

fn decode_deps_out(d: &mut Dec<'_>) -> Res<DependenciesOut> {
    let mut out = DependenciesOut::default();
    d.members(|d, mid| match mid {
        MID_DEPENDENT_TYPEIDS => {
            out.dependent_typeids = d.delimited(|d| {
                let n = d.count(4, "dependent_typeids")?;
                (0..n)
                    .map(|_| {
                        d.delimited(|d| {
                            let type_id = d.type_id()?;
                            let typeobject_serialized_size = d.u32()?;
                            Ok(TypeIdentifierWithSize {
                                type_id,
                                typeobject_serialized_size,
                            })
                        })
                    })
                    .collect()
            })?;
            Ok(true)
        }
        MID_CONTINUATION_POINT => {
            out.continuation_point = d.octets(MAX_CONTINUATION_POINT, "continuation_point")?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(out)
}
