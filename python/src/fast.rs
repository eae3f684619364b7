//! The fast codec: XCDR1/XCDR2 (little-endian) straight between Python objects and bytes, for
//! the types most topics use: final and appendable structs without optional members, whose
//! members are primitives (not `wchar`), strings (not `wstring`), 4-byte enums, nested such
//! structs, and sequences and arrays of them (octets as `bytes`, copied in one piece).
//!
//! It follows the `halyard-xtypes` dynamic codec's rules exactly (alignment relative to the
//! body, 8-byte alignment in XCDR1 and 4 in XCDR2, a DHEADER before appendable structs and
//! before sequences and arrays of non-primitive elements in XCDR2, the body padded to 4 with
//! the padding in the encapsulation options); `tests/test_codec.py` checks both produce the
//! same bytes. Everything else (mutable structs, optional members, unions, maps, big-endian
//! input, an appendable sample from an older type version, any decode error) goes through the
//! dynamic codec, which also words the errors.

use halyard_cdr::{DataRepresentation, Endianness, Extensibility};
use halyard_xtypes::PrimitiveKind as P;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::shape::{
    blank, check_class, check_octets, elements, flatten, int, nest, one_char, Conv, ConvError,
    Shape,
};

/// True when the fast codec handles `s` entirely.
pub(crate) fn supports(s: &Shape) -> bool {
    match s {
        Shape::Prim(p) => !matches!(p, P::Char16 | P::Float128),
        Shape::Str { wide, .. } => !wide,
        Shape::Octets { .. } => true,
        Shape::Seq { elem, .. } | Shape::Array { elem, .. } => supports(elem),
        Shape::Enum { size, .. } => *size == 4,
        Shape::Struct { fields, ext, .. } => {
            *ext != Extensibility::Mutable && fields.iter().all(|(_, f, opt)| !opt && supports(f))
        }
        Shape::Map(..) | Shape::Union { .. } | Shape::Bitmask { .. } => false,
    }
}

/// The byte writer (little-endian; alignment relative to the body after the 4-byte header).
struct W {
    buf: Vec<u8>,
    v2: bool,
}

impl W {
    fn align(&mut self, size: usize) {
        let a = size.clamp(1, if self.v2 { 4 } else { 8 });
        let rem = (self.buf.len() - 4) % a;
        if rem != 0 {
            self.buf.resize(self.buf.len() + a - rem, 0);
        }
    }

    fn prim(&mut self, le: &[u8]) {
        self.align(le.len());
        self.buf.extend_from_slice(le);
    }

    fn u32(&mut self, v: u32) {
        self.prim(&v.to_le_bytes());
    }

    /// Starts a DHEADER when `on`; returns where to patch its length.
    fn open(&mut self, on: bool) -> Option<usize> {
        on.then(|| {
            self.u32(0);
            self.buf.len() - 4
        })
    }

    fn close(&mut self, at: Option<usize>) -> Conv<()> {
        if let Some(at) = at {
            let len = u32::try_from(self.buf.len() - at - 4)
                .map_err(|_| ConvError::new("more than 4 GiB in one member"))?;
            if let Some(slot) = self.buf.get_mut(at..at + 4) {
                slot.copy_from_slice(&len.to_le_bytes());
            }
        }
        Ok(())
    }
}

fn count(n: usize) -> Conv<u32> {
    u32::try_from(n).map_err(|_| ConvError::new("more than 2^32 elements"))
}

/// Serializes `o` of shape `s` with the encapsulation header `encap` (little-endian id).
pub(crate) fn encode(
    s: &Shape,
    o: &Bound<'_, PyAny>,
    rep: DataRepresentation,
    encap: u16,
) -> Conv<Vec<u8>> {
    let mut w = W {
        buf: Vec::with_capacity(64),
        v2: rep == DataRepresentation::Xcdr2,
    };
    w.buf.extend_from_slice(&encap.to_be_bytes());
    w.buf.extend_from_slice(&[0, 0]);
    write(&mut w, s, o)?;
    let pad = (4 - (w.buf.len() - 4) % 4) % 4;
    w.buf.resize(w.buf.len() + pad, 0);
    if let Some(b) = w.buf.get_mut(3) {
        *b = pad as u8;
    }
    Ok(w.buf)
}

fn write_prim(w: &mut W, p: P, o: &Bound<'_, PyAny>) -> Conv<()> {
    let float = |o: &Bound<'_, PyAny>| -> Conv<f64> {
        o.extract().map_err(|_| ConvError::new("expected a float"))
    };
    match p {
        P::Boolean => {
            let b: bool = o.extract().map_err(|_| ConvError::new("expected a bool"))?;
            w.buf.push(u8::from(b));
        }
        P::Byte => w.buf.push(int::<u8>(o, "octet")?),
        P::UInt8 => w.buf.push(int::<u8>(o, "uint8")?),
        P::Int8 => w.buf.push(int::<i8>(o, "int8")? as u8),
        P::Int16 => w.prim(&int::<i16>(o, "int16")?.to_le_bytes()),
        P::UInt16 => w.prim(&int::<u16>(o, "uint16")?.to_le_bytes()),
        P::Int32 => w.prim(&int::<i32>(o, "int32")?.to_le_bytes()),
        P::UInt32 => w.prim(&int::<u32>(o, "uint32")?.to_le_bytes()),
        P::Int64 => w.prim(&int::<i64>(o, "int64")?.to_le_bytes()),
        P::UInt64 => w.prim(&int::<u64>(o, "uint64")?.to_le_bytes()),
        P::Float32 => w.prim(&(float(o)? as f32).to_le_bytes()),
        P::Float64 => w.prim(&float(o)?.to_le_bytes()),
        P::Char8 => w.buf.push(u32::from(one_char(o, false)?) as u8),
        P::Char16 | P::Float128 => return Err(ConvError::new("not handled by the fast codec")),
    }
    Ok(())
}

fn write_str(w: &mut W, bound: u32, o: &Bound<'_, PyAny>) -> Conv<()> {
    let s = o
        .downcast::<PyString>()
        .map_err(|_| ConvError::new("expected a str"))?;
    let s = s.to_cow()?;
    if bound != 0 && s.len() > bound as usize {
        return Err(ConvError::new(format!(
            "string of {} bytes exceeds the bound {bound}",
            s.len()
        )));
    }
    if s.contains('\0') {
        return Err(ConvError::new("string contains a NUL character"));
    }
    w.u32(count(s.len() + 1)?);
    w.buf.extend_from_slice(s.as_bytes());
    w.buf.push(0);
    Ok(())
}

fn write(w: &mut W, s: &Shape, o: &Bound<'_, PyAny>) -> Conv<()> {
    match s {
        Shape::Prim(p) => write_prim(w, *p, o),
        Shape::Str { bound, .. } => write_str(w, *bound, o),
        Shape::Octets { array, bound, .. } => {
            let owned;
            let bytes: &[u8] = if let Ok(b) = o.downcast::<PyBytes>() {
                b.as_bytes()
            } else {
                owned = crate::shape::octets(o)?;
                &owned
            };
            check_octets(bytes.len(), *array, *bound)?;
            if array.is_none() {
                w.u32(count(bytes.len())?);
            }
            w.buf.extend_from_slice(bytes);
            Ok(())
        }
        Shape::Seq {
            elem,
            bound,
            dheader,
        } => {
            let items = elements(o)?;
            if *bound != 0 && items.len() > *bound as usize {
                return Err(ConvError::new(format!(
                    "{} elements exceed the bound {bound}",
                    items.len()
                )));
            }
            let at = w.open(w.v2 && *dheader);
            w.u32(count(items.len())?);
            for (i, x) in items.iter().enumerate() {
                write(w, elem, x).map_err(|e| e.at(&format!("[{i}]")))?;
            }
            w.close(at)
        }
        Shape::Array {
            elem,
            dims,
            dheader,
        } => {
            let mut flat = Vec::new();
            flatten(o, dims, &mut flat)?;
            let at = w.open(w.v2 && *dheader);
            for (i, x) in flat.iter().enumerate() {
                write(w, elem, x).map_err(|e| e.at(&format!("[{i}]")))?;
            }
            w.close(at)
        }
        Shape::Enum { cls, members, .. } => {
            check_class(o, cls)?;
            let v: i32 = int(&o.getattr("value")?, "enum value")?;
            if !members.iter().any(|m| m.0 == v) {
                return Err(ConvError::new(format!("{v} is no enumerator")));
            }
            w.prim(&v.to_le_bytes());
            Ok(())
        }
        Shape::Struct { cls, fields, ext } => {
            check_class(o, cls)?;
            let at = w.open(w.v2 && *ext == Extensibility::Appendable);
            for (name, fs, _) in fields {
                let n = name.bind(o.py());
                let a = o
                    .getattr(n)
                    .map_err(|_| ConvError::new("missing").at(&n.to_string()))?;
                if a.is_none() {
                    return Err(ConvError::new("non-optional member is None").at(&n.to_string()));
                }
                write(w, fs, &a).map_err(|e| e.at(&n.to_string()))?;
            }
            w.close(at)
        }
        Shape::Map(..) | Shape::Union { .. } | Shape::Bitmask { .. } => {
            Err(ConvError::new("not handled by the fast codec"))
        }
    }
}

/// Why a fast decode gave up (the caller then uses the dynamic codec).
pub(crate) struct GiveUp;

impl From<PyErr> for GiveUp {
    fn from(_: PyErr) -> Self {
        GiveUp
    }
}

type Dec<T> = Result<T, GiveUp>;

/// The byte reader (little-endian only).
struct R<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    v2: bool,
}

impl<'a> R<'a> {
    fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    fn bytes(&mut self, n: usize) -> Dec<&'a [u8]> {
        if n > self.remaining() {
            return Err(GiveUp);
        }
        let s = self.buf.get(self.pos..self.pos + n).ok_or(GiveUp)?;
        self.pos += n;
        Ok(s)
    }

    fn prim<const N: usize>(&mut self) -> Dec<[u8; N]> {
        let a = N.clamp(1, if self.v2 { 4 } else { 8 });
        let pad = (a - (self.pos - 4) % a) % a;
        self.bytes(pad)?;
        let mut b = [0u8; N];
        b.copy_from_slice(self.bytes(N)?);
        Ok(b)
    }

    fn u32(&mut self) -> Dec<u32> {
        self.prim::<4>().map(u32::from_le_bytes)
    }

    /// Reads a DHEADER when `on` and limits reading to its length; returns the outer end.
    fn enter(&mut self, on: bool) -> Dec<Option<usize>> {
        if !on {
            return Ok(None);
        }
        let len = self.u32()? as usize;
        if len > self.remaining() {
            return Err(GiveUp);
        }
        let outer = self.end;
        self.end = self.pos + len;
        Ok(Some(outer))
    }

    fn leave(&mut self, outer: Option<usize>) {
        if let Some(outer) = outer {
            self.pos = self.end;
            self.end = outer;
        }
    }
}

/// Deserializes a sample of shape `s`; `None` when the fast codec does not handle it.
pub(crate) fn decode(
    py: Python<'_>,
    s: &Shape,
    data: &[u8],
    new: &Bound<'_, PyAny>,
) -> Option<PyObject> {
    let id = u16::from_be_bytes([*data.first()?, *data.get(1)?]);
    let (rep, end) = halyard_cdr::parse_encapsulation(id).ok()?;
    if end != Endianness::Little || data.len() < 4 {
        return None;
    }
    let mut r = R {
        buf: data,
        pos: 4,
        end: data.len(),
        v2: rep == DataRepresentation::Xcdr2,
    };
    read(py, &mut r, s, new).ok()
}

fn read_prim(py: Python<'_>, r: &mut R<'_>, p: P) -> Dec<PyObject> {
    Ok(match p {
        P::Boolean => match r.bytes(1)? {
            [0] => false.into_py(py),
            [1] => true.into_py(py),
            _ => return Err(GiveUp),
        },
        P::Byte | P::UInt8 => r.prim::<1>()?[0].into_py(py),
        P::Int8 => (r.prim::<1>()?[0] as i8).into_py(py),
        P::Int16 => i16::from_le_bytes(r.prim()?).into_py(py),
        P::UInt16 => u16::from_le_bytes(r.prim()?).into_py(py),
        P::Int32 => i32::from_le_bytes(r.prim()?).into_py(py),
        P::UInt32 => u32::from_le_bytes(r.prim()?).into_py(py),
        P::Int64 => i64::from_le_bytes(r.prim()?).into_py(py),
        P::UInt64 => u64::from_le_bytes(r.prim()?).into_py(py),
        P::Float32 => f64::from(f32::from_le_bytes(r.prim()?)).into_py(py),
        P::Float64 => f64::from_le_bytes(r.prim()?).into_py(py),
        P::Char8 => char::from(r.prim::<1>()?[0]).to_string().into_py(py),
        P::Char16 | P::Float128 => return Err(GiveUp),
    })
}

fn read(py: Python<'_>, r: &mut R<'_>, s: &Shape, new: &Bound<'_, PyAny>) -> Dec<PyObject> {
    Ok(match s {
        Shape::Prim(p) => read_prim(py, r, *p)?,
        Shape::Str { bound, .. } => {
            let len = r.u32()? as usize;
            let b = r.bytes(len)?;
            let (last, text) = b.split_last().ok_or(GiveUp)?;
            if *last != 0 || (*bound != 0 && text.len() > *bound as usize) {
                return Err(GiveUp);
            }
            let t = std::str::from_utf8(text).map_err(|_| GiveUp)?;
            PyString::new_bound(py, t).into_any().unbind()
        }
        Shape::Octets { array, bound, .. } => {
            let n = match array {
                Some(n) => *n,
                None => r.u32()? as usize,
            };
            if array.is_none() && *bound != 0 && n > *bound as usize {
                return Err(GiveUp);
            }
            PyBytes::new_bound(py, r.bytes(n)?).into_any().unbind()
        }
        Shape::Seq {
            elem,
            bound,
            dheader,
        } => {
            let outer = r.enter(r.v2 && *dheader)?;
            let n = r.u32()? as usize;
            if n > r.remaining() || (*bound != 0 && n > *bound as usize) {
                return Err(GiveUp);
            }
            let l = PyList::empty_bound(py);
            for _ in 0..n {
                l.append(read(py, r, elem, new)?)?;
            }
            r.leave(outer);
            l.into_any().unbind()
        }
        Shape::Array {
            elem,
            dims,
            dheader,
        } => {
            let outer = r.enter(r.v2 && *dheader)?;
            let n: usize = dims.iter().product();
            if n > r.remaining() {
                return Err(GiveUp);
            }
            let mut flat = Vec::with_capacity(n);
            for _ in 0..n {
                flat.push(read(py, r, elem, new)?);
            }
            r.leave(outer);
            let mut it = flat.into_iter().map(Ok);
            nest(py, &mut it, dims)?
        }
        Shape::Enum { members, .. } => {
            let v = i32::from_le_bytes(r.prim()?);
            let m = members.iter().find(|m| m.0 == v).ok_or(GiveUp)?;
            m.1.clone_ref(py)
        }
        Shape::Struct { cls, fields, ext } => {
            let outer = r.enter(r.v2 && *ext == Extensibility::Appendable)?;
            let (inst, dict) = blank(cls.bind(py), new)?;
            for (name, fs, _) in fields {
                if outer.is_some() && r.remaining() == 0 {
                    return Err(GiveUp);
                }
                dict.set_item(name.bind(py), read(py, r, fs, new)?)?;
            }
            r.leave(outer);
            inst.unbind()
        }
        Shape::Map(..) | Shape::Union { .. } | Shape::Bitmask { .. } => return Err(GiveUp),
    })
}
