//! [`CdrReader`]: reads XCDR1 / XCDR2 data of either byte order without panicking.

use crate::writer::{PID_EXTENDED, PID_LIST_END};
use crate::{CdrDecode, CdrError, DataRepresentation, Endianness, Extensibility};

/// Deepest struct nesting accepted (guards recursive types against stack exhaustion).
const MAX_DEPTH: usize = 128;

/// Reads CDR data from a byte slice holding the body (after the encapsulation header).
///
/// Every read is bounds-checked against the current window (the whole body, or the
/// DHEADER / member length being decoded); no allocation exceeds the remaining input.
#[derive(Debug, Clone)]
pub struct CdrReader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    rep: DataRepresentation,
    big_endian: bool,
    depth: usize,
}

/// An open struct, from [`CdrReader::begin_struct`].
#[derive(Debug)]
#[must_use]
pub struct ReadScope {
    ext: Extensibility,
    outer_end: Option<usize>,
}

/// A member header of a mutable struct, from [`CdrReader::next_member`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberHeader {
    id: u32,
    must_understand: bool,
    end: usize,
}

impl MemberHeader {
    /// The member id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Whether the must-understand flag is set.
    pub fn must_understand(&self) -> bool {
        self.must_understand
    }
}

macro_rules! read_primitive {
    ($name:ident, $t:ty) => {
        #[doc = concat!("Reads a `", stringify!($t), "`, aligned to its size.")]
        pub fn $name(&mut self) -> Result<$t, CdrError> {
            const N: usize = std::mem::size_of::<$t>();
            self.align(N)?;
            let mut b = [0u8; N];
            b.copy_from_slice(self.read_bytes(N)?);
            Ok(if self.big_endian {
                <$t>::from_be_bytes(b)
            } else {
                <$t>::from_le_bytes(b)
            })
        }
    };
}

impl<'a> CdrReader<'a> {
    /// A reader over `body`, whose first byte is the alignment origin.
    pub fn new(body: &'a [u8], rep: DataRepresentation, endianness: Endianness) -> Self {
        CdrReader {
            buf: body,
            pos: 0,
            end: body.len(),
            rep,
            big_endian: endianness == Endianness::Big,
            depth: 0,
        }
    }

    /// The data representation being read.
    pub fn representation(&self) -> DataRepresentation {
        self.rep
    }

    /// The byte order being read.
    pub fn endianness(&self) -> Endianness {
        if self.big_endian {
            Endianness::Big
        } else {
            Endianness::Little
        }
    }

    /// Offset from the start of the body.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left in the current window.
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// Skips padding to a multiple of `min(size, max_alignment)` from the body start.
    pub fn align(&mut self, size: usize) -> Result<(), CdrError> {
        let a = size.clamp(1, self.rep.max_alignment());
        let pad = (a - self.pos % a) % a;
        self.read_bytes(pad).map(|_| ())
    }

    /// Takes `n` raw bytes.
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8], CdrError> {
        if n > self.remaining() {
            return Err(CdrError::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    read_primitive!(read_u16, u16);
    read_primitive!(read_i16, i16);
    read_primitive!(read_u32, u32);
    read_primitive!(read_i32, i32);
    read_primitive!(read_u64, u64);
    read_primitive!(read_i64, i64);
    read_primitive!(read_f32, f32);
    read_primitive!(read_f64, f64);

    /// Reads an octet.
    pub fn read_u8(&mut self) -> Result<u8, CdrError> {
        Ok(self.read_bytes(1)?[0])
    }

    /// Reads a signed octet.
    pub fn read_i8(&mut self) -> Result<i8, CdrError> {
        Ok(self.read_u8()? as i8)
    }

    /// Reads a boolean; octets other than 0 and 1 are rejected.
    pub fn read_bool(&mut self) -> Result<bool, CdrError> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(CdrError::InvalidBool(b)),
        }
    }

    /// Reads a one-octet char (Latin-1).
    pub fn read_char(&mut self) -> Result<char, CdrError> {
        Ok(char::from(self.read_u8()?))
    }

    /// Fails unless `count` elements of at least `min_size` bytes (taken as at least 1) can
    /// fit in the remaining input.
    pub fn check_count(&self, count: usize, min_size: usize) -> Result<(), CdrError> {
        let limit = self.remaining() / min_size.max(1);
        if count > limit {
            return Err(CdrError::LengthTooLarge {
                length: count as u64,
                limit: limit as u64,
            });
        }
        Ok(())
    }

    /// Reads a sequence length and checks it against the remaining input.
    pub fn read_seq_len(&mut self, min_elem_size: usize) -> Result<usize, CdrError> {
        let n = self.read_u32()? as usize;
        self.check_count(n, min_elem_size)?;
        Ok(n)
    }

    /// Reads a `sequence<octet>` as a borrowed slice.
    pub fn read_octets(&mut self) -> Result<&'a [u8], CdrError> {
        let n = self.read_seq_len(1)?;
        self.read_bytes(n)
    }

    /// Reads a string as a borrowed `&str` (length includes the NUL, which is required).
    pub fn read_str(&mut self) -> Result<&'a str, CdrError> {
        let n = self.read_seq_len(1)?;
        let bytes = self.read_bytes(n)?;
        match bytes.split_last() {
            Some((0, text)) => std::str::from_utf8(text).map_err(|_| CdrError::InvalidUtf8),
            _ => Err(CdrError::MissingNul),
        }
    }

    /// Reads a string.
    pub fn read_string(&mut self) -> Result<String, CdrError> {
        self.read_str().map(str::to_owned)
    }

    /// Restricts reading to the next `len` bytes; returns the previous window end.
    fn enter(&mut self, len: usize) -> Result<usize, CdrError> {
        if len > self.remaining() {
            return Err(CdrError::InvalidHeader("length beyond the enclosing data"));
        }
        let outer = self.end;
        self.end = self.pos + len;
        Ok(outer)
    }

    /// Skips to the end of the current window and restores the outer one.
    fn leave(&mut self, outer_end: usize) {
        self.pos = self.end;
        self.end = outer_end;
    }

    /// Reads a DHEADER and runs `f` inside the window it delimits (bytes `f` leaves unread,
    /// e.g. appended members, are skipped).
    pub fn with_dheader<R>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<R, CdrError>,
    ) -> Result<R, CdrError> {
        let len = self.read_u32()? as usize;
        let outer = self.enter(len)?;
        let r = f(self)?;
        self.leave(outer);
        Ok(r)
    }

    /// Opens a struct: reads the DHEADER of XCDR2 appendable and mutable structs.
    pub fn begin_struct(&mut self, ext: Extensibility) -> Result<ReadScope, CdrError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(CdrError::TooDeep);
        }
        let mut outer_end = None;
        if self.rep == DataRepresentation::Xcdr2 && ext != Extensibility::Final {
            let len = self.read_u32()? as usize;
            outer_end = Some(self.enter(len)?);
        }
        Ok(ReadScope { ext, outer_end })
    }

    /// Closes a struct, skipping unread bytes inside its DHEADER.
    pub fn end_struct(&mut self, s: ReadScope) -> Result<(), CdrError> {
        self.depth = self.depth.saturating_sub(1);
        if let Some(outer) = s.outer_end {
            self.leave(outer);
        }
        Ok(())
    }

    /// Reads an optional member of a final or appendable struct (presence flag in XCDR2,
    /// parameter header in XCDR1). Mutable structs use [`CdrReader::next_member`].
    pub fn read_optional_member<T: CdrDecode>(
        &mut self,
        s: &ReadScope,
        id: u32,
    ) -> Result<Option<T>, CdrError> {
        let _ = id;
        if s.ext == Extensibility::Mutable {
            return Err(CdrError::Unsupported(
                "optional read outside a member header",
            ));
        }
        if self.rep == DataRepresentation::Xcdr2 {
            return match self.read_bool()? {
                true => T::decode(self).map(Some),
                false => Ok(None),
            };
        }
        let h = self.read_param_header()?.ok_or(CdrError::InvalidHeader(
            "list end in place of an optional member",
        ))?;
        if h.end == self.pos {
            return Ok(None);
        }
        self.read_member_body(&h).map(Some)
    }

    /// Reads the next member header of a mutable struct; `None` at the end of the struct.
    pub fn next_member(&mut self, s: &ReadScope) -> Result<Option<MemberHeader>, CdrError> {
        let _ = s;
        match self.rep {
            DataRepresentation::Xcdr1 => self.read_param_header(),
            DataRepresentation::Xcdr2 if self.remaining() == 0 => Ok(None),
            DataRepresentation::Xcdr2 => self.read_emheader().map(Some),
        }
    }

    /// Reads an XCDR1 parameter header; `None` for PID_LIST_END.
    fn read_param_header(&mut self) -> Result<Option<MemberHeader>, CdrError> {
        self.align(4)?;
        let pid = self.read_u16()?;
        let short_len = usize::from(self.read_u16()?);
        let must_understand = pid & 0x4000 != 0;
        let (id, len) = match pid & 0x3fff {
            PID_LIST_END => return Ok(None),
            PID_EXTENDED if short_len == 8 => (self.read_u32()?, self.read_u32()? as usize),
            PID_EXTENDED => return Err(CdrError::InvalidHeader("extended parameter length")),
            id => (u32::from(id), short_len),
        };
        self.member_header(id, must_understand, len).map(Some)
    }

    /// Reads an XCDR2 EMHEADER (and NEXTINT when the length code needs one).
    fn read_emheader(&mut self) -> Result<MemberHeader, CdrError> {
        let h = self.read_u32()?;
        let must_understand = h & 0x8000_0000 != 0;
        let id = h & 0x0fff_ffff;
        let lc = (h >> 28) & 7;
        let len = match lc {
            0..=3 => 1usize << lc,
            4 => self.read_u32()? as usize,
            _ => {
                let next = self.read_u32()? as usize;
                self.pos -= 4; // NEXTINT is also the member's own leading length
                let unit = [1usize, 4, 8][lc as usize - 5];
                next.checked_mul(unit)
                    .and_then(|n| n.checked_add(4))
                    .ok_or(CdrError::InvalidHeader("EMHEADER length overflow"))?
            }
        };
        self.member_header(id, must_understand, len)
    }

    fn member_header(
        &self,
        id: u32,
        must_understand: bool,
        len: usize,
    ) -> Result<MemberHeader, CdrError> {
        if len > self.remaining() {
            return Err(CdrError::InvalidHeader(
                "member length beyond the enclosing data",
            ));
        }
        Ok(MemberHeader {
            id,
            must_understand,
            end: self.pos + len,
        })
    }

    /// Decodes the body of a member inside its header's length, then moves past it.
    pub fn read_member_body<T: CdrDecode>(&mut self, h: &MemberHeader) -> Result<T, CdrError> {
        if h.end < self.pos || h.end > self.end {
            return Err(CdrError::InvalidHeader("member header out of place"));
        }
        let outer = self.end;
        self.end = h.end;
        let v = T::decode(self)?;
        self.leave(outer);
        Ok(v)
    }

    /// Skips an unknown member; fails when it is flagged must-understand.
    pub fn skip_member(&mut self, h: &MemberHeader) -> Result<(), CdrError> {
        if h.must_understand {
            return Err(CdrError::UnknownMustUnderstand(h.id));
        }
        if h.end < self.pos || h.end > self.end {
            return Err(CdrError::InvalidHeader("member header out of place"));
        }
        self.pos = h.end;
        Ok(())
    }
}
