//! [`CdrEncode`] / [`CdrDecode`] for primitives, strings, sequences, arrays, options, boxes.

use crate::{CdrDecode, CdrEncode, CdrError, CdrReader, CdrWriter, DataRepresentation};

/// End offset of a `size`-byte primitive placed at `offset` with XCDR2 alignment.
pub(crate) fn xcdr2_end(offset: usize, size: usize) -> usize {
    let a = size.min(4);
    offset.next_multiple_of(a) + size
}

macro_rules! primitive {
    ($t:ty, $write:ident, $read:ident) => {
        impl CdrEncode for $t {
            fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
                w.$write(*self);
                Ok(())
            }
            fn is_primitive() -> bool {
                true
            }
            fn fixed_size() -> Option<usize> {
                Some(std::mem::size_of::<$t>())
            }
            fn key_max_end(offset: usize) -> Option<usize> {
                Some(xcdr2_end(offset, std::mem::size_of::<$t>()))
            }
        }
        impl CdrDecode for $t {
            fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
                r.$read()
            }
            fn min_size() -> usize {
                std::mem::size_of::<$t>()
            }
        }
    };
}

primitive!(bool, write_bool, read_bool);
primitive!(i8, write_i8, read_i8);
primitive!(u16, write_u16, read_u16);
primitive!(i16, write_i16, read_i16);
primitive!(u32, write_u32, read_u32);
primitive!(i32, write_i32, read_i32);
primitive!(u64, write_u64, read_u64);
primitive!(i64, write_i64, read_i64);
primitive!(f32, write_f32, read_f32);
primitive!(f64, write_f64, read_f64);

impl CdrEncode for u8 {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        w.write_u8(*self);
        Ok(())
    }
    fn is_primitive() -> bool {
        true
    }
    fn fixed_size() -> Option<usize> {
        Some(1)
    }
    fn encode_slice(items: &[Self], w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        w.write_bytes(items);
        Ok(())
    }
    fn key_max_end(offset: usize) -> Option<usize> {
        Some(offset + 1)
    }
}

impl CdrDecode for u8 {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        r.read_u8()
    }
    fn decode_vec(r: &mut CdrReader<'_>, n: usize) -> Result<Vec<Self>, CdrError> {
        Ok(r.read_bytes(n)?.to_vec())
    }
}

/// A `char` is one octet on the wire (Latin-1); characters above U+00FF fail to encode.
impl CdrEncode for char {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        w.write_char(*self)
    }
    fn is_primitive() -> bool {
        true
    }
    fn fixed_size() -> Option<usize> {
        Some(1)
    }
    fn key_max_end(offset: usize) -> Option<usize> {
        Some(offset + 1)
    }
}

impl CdrDecode for char {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        r.read_char()
    }
}

impl CdrEncode for String {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        w.write_string(self)
    }
}

impl CdrDecode for String {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        r.read_string()
    }
    fn min_size() -> usize {
        5
    }
}

/// Whether an XCDR2 collection of `T` carries a DHEADER.
fn needs_dheader<T: CdrEncode>(w_rep: DataRepresentation) -> bool {
    w_rep == DataRepresentation::Xcdr2 && !T::is_primitive()
}

/// Runs `f`, wrapped in a DHEADER when `dheader` is set.
fn with_dheader(
    w: &mut CdrWriter<'_>,
    dheader: bool,
    f: impl FnOnce(&mut CdrWriter<'_>) -> Result<(), CdrError>,
) -> Result<(), CdrError> {
    if !dheader {
        return f(w);
    }
    let h = w.begin_dheader();
    f(w)?;
    w.end_dheader(h)
}

/// A sequence: u32 count then the elements (XCDR2: DHEADER first for non-primitives).
impl<T: CdrEncode> CdrEncode for Vec<T> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        with_dheader(w, needs_dheader::<T>(w.representation()), |w| {
            w.write_seq_len(self.len())?;
            T::encode_slice(self, w)
        })
    }
}

impl<T: CdrDecode + CdrEncode> CdrDecode for Vec<T> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        let body = |r: &mut CdrReader<'_>| {
            let n = r.read_seq_len(T::min_size())?;
            T::decode_vec(r, n)
        };
        if needs_dheader::<T>(r.representation()) {
            r.with_dheader(body)
        } else {
            body(r)
        }
    }
    fn min_size() -> usize {
        4
    }
}

/// An array: the N elements without a count (XCDR2: DHEADER first for non-primitives).
impl<T: CdrEncode, const N: usize> CdrEncode for [T; N] {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        let dheader =
            w.representation() == DataRepresentation::Xcdr2 && !T::array_innermost_primitive();
        with_dheader(w, dheader, |w| self.encode_array_elements(w))
    }
    fn is_primitive() -> bool {
        false
    }
    fn array_innermost_primitive() -> bool {
        T::array_innermost_primitive()
    }
    fn encode_array_elements(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        if T::is_primitive() {
            return T::encode_slice(self, w);
        }
        self.iter().try_for_each(|e| e.encode_array_elements(w))
    }
    fn key_max_end(offset: usize) -> Option<usize> {
        match (N, T::fixed_size()) {
            (0, _) => return Some(offset),
            (_, Some(size)) => return Some(xcdr2_end(offset, size) + size * (N - 1)),
            _ => {}
        }
        (0..N).try_fold(offset, |o, _| T::key_max_end(o))
    }
}

impl<T: CdrDecode + CdrEncode, const N: usize> CdrDecode for [T; N] {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        if r.representation() == DataRepresentation::Xcdr2 && !T::array_innermost_primitive() {
            r.with_dheader(Self::decode_array_elements)
        } else {
            Self::decode_array_elements(r)
        }
    }
    fn decode_array_elements(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        let v = if T::is_primitive() {
            T::decode_vec(r, N)?
        } else {
            r.check_count(N, T::min_size())?;
            let mut v = Vec::with_capacity(N);
            for _ in 0..N {
                v.push(T::decode_array_elements(r)?);
            }
            v
        };
        v.try_into()
            .map_err(|_| CdrError::InvalidHeader("array length"))
    }
    fn min_size() -> usize {
        T::min_size().saturating_mul(N)
    }
}

impl<T: CdrEncode> CdrEncode for Option<T> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        w.write_bool(self.is_some());
        self.as_ref().map_or(Ok(()), |v| v.encode(w))
    }
}

impl<T: CdrDecode> CdrDecode for Option<T> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        match r.read_bool()? {
            true => T::decode(r).map(Some),
            false => Ok(None),
        }
    }
}

impl<T: CdrEncode> CdrEncode for Box<T> {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        (**self).encode(w)
    }
    fn is_primitive() -> bool {
        T::is_primitive()
    }
    fn fixed_size() -> Option<usize> {
        T::fixed_size()
    }
    fn encode_key_members(&self, w: &mut CdrWriter<'_>) -> Result<(), CdrError> {
        (**self).encode_key_members(w)
    }
    fn key_max_end(offset: usize) -> Option<usize> {
        T::key_max_end(offset)
    }
}

impl<T: CdrDecode> CdrDecode for Box<T> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        T::decode(r).map(Box::new)
    }
    fn min_size() -> usize {
        T::min_size()
    }
    fn decode_key_members(r: &mut CdrReader<'_>) -> Result<Self, CdrError> {
        T::decode_key_members(r).map(Box::new)
    }
}
