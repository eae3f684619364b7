//! [`CdrWriter`]: appends XCDR1 / XCDR2 encoded data to a byte vector.

use crate::{CdrEncode, CdrError, DataRepresentation, Endianness, Extensibility};

/// XCDR1 parameter id announcing an extended parameter header.
pub(crate) const PID_EXTENDED: u16 = 0x3f01;
/// XCDR1 parameter id terminating a parameter list.
pub(crate) const PID_LIST_END: u16 = 0x3f02;
/// XCDR1 must-understand flag in a parameter id.
pub(crate) const PID_FLAG_MUST_UNDERSTAND: u16 = 0x4000;
/// Largest member id that fits a short XCDR1 parameter header.
const PID_SHORT_MAX: u32 = 0x3eff;
/// Largest member id an XCDR2 EMHEADER can carry.
pub(crate) const EM_ID_MAX: u32 = 0x0fff_ffff;

/// Appends CDR data to a `Vec<u8>`; alignment is relative to the vector's length when the
/// writer was created (the start of the body, after the encapsulation header).
#[derive(Debug)]
pub struct CdrWriter<'a> {
    buf: &'a mut Vec<u8>,
    origin: usize,
    rep: DataRepresentation,
    big_endian: bool,
}

/// A DHEADER placeholder opened by [`CdrWriter::begin_dheader`].
#[derive(Debug)]
#[must_use]
pub struct DHeader {
    at: usize,
}

/// A member header opened by [`CdrWriter::begin_member`] or [`CdrWriter::begin_param`].
#[derive(Debug)]
#[must_use]
pub struct MemberToken {
    kind: TokenKind,
}

#[derive(Debug)]
enum TokenKind {
    /// XCDR2 EMHEADER with a fixed-size length code: nothing to patch.
    Fixed,
    /// XCDR2 EMHEADER with NEXTINT at this offset.
    NextInt(usize),
    /// XCDR1 short parameter header at this offset.
    Param { at: usize, id: u32 },
    /// XCDR1 extended parameter header; the 4-byte length is at this offset.
    ExtendedParam(usize),
}

/// An open struct, from [`CdrWriter::begin_struct`].
#[derive(Debug)]
#[must_use]
pub struct WriteScope {
    ext: Extensibility,
    dheader: Option<DHeader>,
}

macro_rules! write_primitive {
    ($name:ident, $t:ty) => {
        #[doc = concat!("Writes a `", stringify!($t), "`, aligned to its size.")]
        pub fn $name(&mut self, v: $t) {
            self.align(std::mem::size_of::<$t>());
            if self.big_endian {
                self.buf.extend_from_slice(&v.to_be_bytes());
            } else {
                self.buf.extend_from_slice(&v.to_le_bytes());
            }
        }
    };
}

impl<'a> CdrWriter<'a> {
    /// A little-endian writer whose body starts at the current end of `buf`.
    pub fn new(buf: &'a mut Vec<u8>, rep: DataRepresentation) -> Self {
        Self::with_endianness(buf, rep, Endianness::Little)
    }

    /// A writer of the given byte order whose body starts at the current end of `buf`.
    pub fn with_endianness(
        buf: &'a mut Vec<u8>,
        rep: DataRepresentation,
        endianness: Endianness,
    ) -> Self {
        let origin = buf.len();
        CdrWriter {
            buf,
            origin,
            rep,
            big_endian: endianness == Endianness::Big,
        }
    }

    /// The data representation being written.
    pub fn representation(&self) -> DataRepresentation {
        self.rep
    }

    /// The byte order being written.
    pub fn endianness(&self) -> Endianness {
        if self.big_endian {
            Endianness::Big
        } else {
            Endianness::Little
        }
    }

    /// Bytes written since the start of the body.
    pub fn position(&self) -> usize {
        self.buf.len() - self.origin
    }

    /// Pads with zeros to a multiple of `min(size, max_alignment)` from the body start.
    pub fn align(&mut self, size: usize) {
        let a = size.clamp(1, self.rep.max_alignment());
        let rem = self.position() % a;
        if rem != 0 {
            self.buf.resize(self.buf.len() + a - rem, 0);
        }
    }

    write_primitive!(write_u16, u16);
    write_primitive!(write_i16, i16);
    write_primitive!(write_u32, u32);
    write_primitive!(write_i32, i32);
    write_primitive!(write_u64, u64);
    write_primitive!(write_i64, i64);
    write_primitive!(write_f32, f32);
    write_primitive!(write_f64, f64);

    /// Writes an octet.
    pub fn write_u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Writes a signed octet.
    pub fn write_i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    /// Writes a boolean as one octet (0 or 1).
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Writes a `char` as one octet; fails for characters above U+00FF.
    pub fn write_char(&mut self, c: char) -> Result<(), CdrError> {
        let v =
            u8::try_from(u32::from(c)).map_err(|_| CdrError::Unsupported("char above U+00FF"))?;
        self.buf.push(v);
        Ok(())
    }

    /// Appends raw bytes without alignment or length.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes a sequence length (u32); fails above `u32::MAX`.
    pub fn write_seq_len(&mut self, len: usize) -> Result<(), CdrError> {
        let n = u32::try_from(len).map_err(|_| too_large(len, u32::MAX as usize))?;
        self.write_u32(n);
        Ok(())
    }

    /// Writes a `sequence<octet>`: length then the bytes, in one copy.
    pub fn write_octets(&mut self, bytes: &[u8]) -> Result<(), CdrError> {
        self.write_seq_len(bytes.len())?;
        self.write_bytes(bytes);
        Ok(())
    }

    /// Writes a string: u32 length including the NUL, the bytes, the NUL.
    pub fn write_string(&mut self, s: &str) -> Result<(), CdrError> {
        self.write_seq_len(s.len() + 1)?;
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        Ok(())
    }

    /// Overwrites a u32 at absolute offset `at` in the stream's byte order.
    fn patch_u32(&mut self, at: usize, v: u32) {
        let b = if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.buf[at..at + 4].copy_from_slice(&b);
    }

    /// Overwrites a u16 at absolute offset `at` in the stream's byte order.
    fn patch_u16(&mut self, at: usize, v: u16) {
        let b = if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.buf[at..at + 2].copy_from_slice(&b);
    }

    /// Length of what was written since absolute offset `from`, as a u32.
    fn len_since(&self, from: usize) -> Result<u32, CdrError> {
        let len = self.buf.len() - from;
        u32::try_from(len).map_err(|_| too_large(len, u32::MAX as usize))
    }

    /// Writes a DHEADER placeholder (XCDR2), patched by [`CdrWriter::end_dheader`].
    pub fn begin_dheader(&mut self) -> DHeader {
        self.write_u32(0);
        DHeader {
            at: self.buf.len() - 4,
        }
    }

    /// Patches the DHEADER with the number of bytes written after it.
    pub fn end_dheader(&mut self, h: DHeader) -> Result<(), CdrError> {
        let len = self.len_since(h.at + 4)?;
        self.patch_u32(h.at, len);
        Ok(())
    }

    /// Opens a member of a mutable struct: an EMHEADER (+ NEXTINT) in XCDR2, a parameter
    /// header in XCDR1. `fixed_size` of 1, 2, 4 or 8 selects a length code without NEXTINT.
    pub fn begin_member(
        &mut self,
        id: u32,
        must_understand: bool,
        fixed_size: Option<usize>,
    ) -> Result<MemberToken, CdrError> {
        if self.rep == DataRepresentation::Xcdr1 {
            return self.begin_param(id, must_understand);
        }
        if id > EM_ID_MAX {
            return Err(CdrError::Unsupported("member id above 0x0fffffff"));
        }
        let lc: u32 = match fixed_size {
            Some(1) => 0,
            Some(2) => 1,
            Some(4) => 2,
            Some(8) => 3,
            _ => 4,
        };
        self.write_u32((u32::from(must_understand) << 31) | (lc << 28) | id);
        if lc < 4 {
            return Ok(MemberToken {
                kind: TokenKind::Fixed,
            });
        }
        self.write_u32(0);
        Ok(MemberToken {
            kind: TokenKind::NextInt(self.buf.len() - 4),
        })
    }

    /// Opens an XCDR1 parameter (PL_CDR member or optional member): short header when the
    /// id allows, extended (PID_EXTENDED) otherwise.
    pub fn begin_param(&mut self, id: u32, must_understand: bool) -> Result<MemberToken, CdrError> {
        let flag = if must_understand {
            PID_FLAG_MUST_UNDERSTAND
        } else {
            0
        };
        self.align(4);
        let at = self.buf.len();
        if id <= PID_SHORT_MAX {
            self.write_u16(id as u16 | flag);
            self.write_u16(0);
            return Ok(MemberToken {
                kind: TokenKind::Param { at, id },
            });
        }
        self.write_u16(PID_EXTENDED | flag);
        self.write_u16(8);
        self.write_u32(id);
        self.write_u32(0);
        Ok(MemberToken {
            kind: TokenKind::ExtendedParam(self.buf.len() - 4),
        })
    }

    /// Closes a member header, patching its length.
    pub fn end_member(&mut self, t: MemberToken) -> Result<(), CdrError> {
        match t.kind {
            TokenKind::Fixed => Ok(()),
            TokenKind::NextInt(at) | TokenKind::ExtendedParam(at) => {
                let len = self.len_since(at + 4)?;
                self.patch_u32(at, len);
                Ok(())
            }
            TokenKind::Param { at, id } => self.end_short_param(at, id),
        }
    }

    /// Patches a short parameter header, widening it to the extended form when the content
    /// exceeds 65535 bytes (inserting 8 bytes keeps the content's alignment).
    fn end_short_param(&mut self, at: usize, id: u32) -> Result<(), CdrError> {
        let len = self.len_since(at + 4)?;
        if let Ok(short) = u16::try_from(len) {
            self.patch_u16(at + 2, short);
            return Ok(());
        }
        let mut ext = Vec::with_capacity(8);
        let mut tmp = CdrWriter::with_endianness(&mut ext, self.rep, self.endianness());
        tmp.write_u32(id);
        tmp.write_u32(len);
        self.buf.splice(at + 4..at + 4, ext);
        let flags = self.buf[at + usize::from(!self.big_endian)] & 0xc0;
        self.patch_u16(at, PID_EXTENDED | (u16::from(flags) << 8));
        self.patch_u16(at + 2, 8);
        Ok(())
    }

    /// Writes the XCDR1 parameter-list terminator (PID_LIST_END, length 0).
    pub fn write_list_end(&mut self) {
        self.align(4);
        self.write_u16(PID_LIST_END);
        self.write_u16(0);
    }

    /// Opens a struct: writes a DHEADER for XCDR2 appendable and mutable structs.
    pub fn begin_struct(&mut self, ext: Extensibility) -> WriteScope {
        let dheader = (self.rep == DataRepresentation::Xcdr2 && ext != Extensibility::Final)
            .then(|| self.begin_dheader());
        WriteScope { ext, dheader }
    }

    /// Closes a struct: the XCDR1 PL_CDR terminator for mutable, DHEADER patch for XCDR2.
    pub fn end_struct(&mut self, s: WriteScope) -> Result<(), CdrError> {
        if self.rep == DataRepresentation::Xcdr1 && s.ext == Extensibility::Mutable {
            self.write_list_end();
        }
        match s.dheader {
            Some(h) => self.end_dheader(h),
            None => Ok(()),
        }
    }

    /// Writes a (non-optional) member of the open struct; `key` sets must-understand.
    pub fn write_member<T: CdrEncode>(
        &mut self,
        s: &WriteScope,
        id: u32,
        key: bool,
        v: &T,
    ) -> Result<(), CdrError> {
        if s.ext != Extensibility::Mutable {
            return v.encode(self);
        }
        let m = self.begin_member(id, key, T::fixed_size())?;
        v.encode(self)?;
        self.end_member(m)
    }

    /// Writes an optional member: omitted when absent in mutable structs, a presence flag in
    /// XCDR2, a parameter header (length 0 when absent) in XCDR1.
    pub fn write_optional_member<T: CdrEncode>(
        &mut self,
        s: &WriteScope,
        id: u32,
        v: Option<&T>,
    ) -> Result<(), CdrError> {
        if s.ext == Extensibility::Mutable {
            return match v {
                Some(v) => self.write_member(s, id, false, v),
                None => Ok(()),
            };
        }
        if self.rep == DataRepresentation::Xcdr2 {
            self.write_bool(v.is_some());
            return v.map_or(Ok(()), |v| v.encode(self));
        }
        let m = self.begin_param(id, false)?;
        if let Some(v) = v {
            v.encode(self)?;
        }
        self.end_member(m)
    }
}

fn too_large(length: usize, limit: usize) -> CdrError {
    CdrError::LengthTooLarge {
        length: length as u64,
        limit: limit as u64,
    }
}
