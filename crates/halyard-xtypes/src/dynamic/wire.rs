//! The byte-level writer and reader of the dynamic codec: XCDR1/XCDR2 primitives of either
//! byte order with alignment relative to a movable origin. The origin moves because Cyclone
//! DDS 11 aligns the value of an XCDR1 parameter as if it started at offset 0 mod 8
//! (`dds_stream_write_xcdr1_paramheader`), which our own `halyard-cdr` writer cannot express.

use halyard_cdr_core::DataRepresentation;

use super::DynamicError;

/// Appends encoded data to a vector.
pub(crate) struct Out {
    pub(crate) buf: Vec<u8>,
    pub(crate) origin: usize,
    pub(crate) rep: DataRepresentation,
    pub(crate) be: bool,
}

impl Out {
    fn max_align(&self) -> usize {
        self.rep.max_alignment()
    }

    pub(crate) fn align(&mut self, size: usize) {
        let a = size.clamp(1, self.max_align());
        let rem = (self.buf.len() - self.origin) % a;
        if rem != 0 {
            self.buf.resize(self.buf.len() + a - rem, 0);
        }
    }

    /// Writes `bytes` (already in the stream's byte order) aligned to their length.
    pub(crate) fn prim(&mut self, le: &[u8]) {
        self.align(le.len());
        if self.be {
            self.buf.extend(le.iter().rev());
        } else {
            self.buf.extend_from_slice(le);
        }
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.prim(&v.to_le_bytes());
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.prim(&v.to_le_bytes());
    }

    /// Overwrites the u32 at absolute offset `at`.
    pub(crate) fn patch_u32(&mut self, at: usize, v: u32) {
        let b = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        if let Some(slot) = self.buf.get_mut(at..at + 4) {
            slot.copy_from_slice(&b);
        }
    }

    /// Reserves a u32 length (DHEADER, NEXTINT, parameter length); returns its offset.
    pub(crate) fn reserve_u32(&mut self) -> usize {
        self.u32(0);
        self.buf.len() - 4
    }

    /// Patches the u32 at `at` with the number of bytes written after it.
    pub(crate) fn close_len(&mut self, at: usize) -> Result<(), DynamicError> {
        let len = u32::try_from(self.buf.len() - at - 4)
            .map_err(|_| DynamicError::value("more than 4 GiB in one member"))?;
        self.patch_u32(at, len);
        Ok(())
    }
}

/// Reads encoded data from a slice, inside a window that DHEADERs and member headers narrow.
pub(crate) struct In<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) end: usize,
    pub(crate) origin: usize,
    pub(crate) rep: DataRepresentation,
    pub(crate) be: bool,
    /// How many more values defaults of missing members may create in this sample.
    pub(crate) defaults_left: usize,
}

pub(crate) fn truncated() -> DynamicError {
    DynamicError::decode("input ends early")
}

impl<'a> In<'a> {
    pub(crate) fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    pub(crate) fn align(&mut self, size: usize) -> Result<(), DynamicError> {
        let a = size.clamp(1, self.rep.max_alignment());
        let pad = (a - (self.pos - self.origin) % a) % a;
        self.bytes(pad).map(|_| ())
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DynamicError> {
        if n > self.remaining() {
            return Err(truncated());
        }
        let s = self.buf.get(self.pos..self.pos + n).ok_or_else(truncated)?;
        self.pos += n;
        Ok(s)
    }

    /// Reads an aligned primitive of N bytes, returned in little-endian order.
    pub(crate) fn prim<const N: usize>(&mut self) -> Result<[u8; N], DynamicError> {
        self.align(N)?;
        let mut b = [0u8; N];
        b.copy_from_slice(self.bytes(N)?);
        if self.be {
            b.reverse();
        }
        Ok(b)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DynamicError> {
        self.prim::<4>().map(u32::from_le_bytes)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, DynamicError> {
        self.prim::<2>().map(u16::from_le_bytes)
    }

    /// Narrows the window to the next `len` bytes; returns the previous end.
    pub(crate) fn enter(&mut self, len: usize) -> Result<usize, DynamicError> {
        if len > self.remaining() {
            return Err(DynamicError::decode(format!(
                "length {len} exceeds the {} bytes left",
                self.remaining()
            )));
        }
        let outer = self.end;
        self.end = self.pos + len;
        Ok(outer)
    }

    /// Skips the rest of the window and restores the outer end.
    pub(crate) fn leave(&mut self, outer: usize) {
        self.pos = self.end;
        self.end = outer;
    }
}
