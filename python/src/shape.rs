//! [`Shape`]: a resolved type with its Python side cached (interned member names, classes,
//! enum members), built once per topic class, and the general conversion between Python
//! objects and [`DynamicValue`]s (for the `halyard-xtypes` codec). Types the fast codec
//! (`fast.rs`) does not cover (mutable structs, optional members, unions, maps) go this way.
//!
//! Python mapping (as cyclonedds.idl): integers and floats are `int`/`float`, `char` a
//! one-character `str`, octet/uint8 sequences and one-dimensional arrays `bytes` (lists of
//! ints are accepted when writing), other sequences and arrays lists (nested lists for
//! multi-dimensional arrays), maps dicts, enums members of the enum class, absent optional
//! members `None`, unions instances with `discriminator` and `value`.

use halyard_cdr::Extensibility;
use halyard_xtypes::dynamic::{enum_size, EnumDesc, StructDesc, TypeNode};
use halyard_xtypes::{DynamicType, DynamicValue, PrimitiveKind};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::errors::{BadParameterError, SampleTypeError, SerializationError};

/// Most elements a Python sequence may have when converted (bounds memory on bad input).
pub(crate) const MAX_ELEMENTS: usize = 1 << 26;
/// Deepest type nesting accepted.
const MAX_DEPTH: usize = 64;

/// The Python side of one (alias-resolved) type node.
pub(crate) enum Shape {
    /// A primitive.
    Prim(PrimitiveKind),
    /// `string<bound>` (0 unbounded), `wstring` when `wide`.
    Str { bound: u32, wide: bool },
    /// A sequence (`array: None`, with its bound) or one-dimensional array (`Some(len)`) of
    /// octet or uint8: Python `bytes`.
    Octets {
        array: Option<usize>,
        bound: u32,
        kind: PrimitiveKind,
    },
    /// `sequence<elem, bound>`; `dheader`: XCDR2 puts a DHEADER before it.
    Seq {
        elem: Box<Shape>,
        bound: u32,
        dheader: bool,
    },
    /// `elem name[d0][d1]...`.
    Array {
        elem: Box<Shape>,
        dims: Vec<usize>,
        dheader: bool,
    },
    /// `map<key, value>`.
    Map(Box<Shape>, Box<Shape>),
    /// An enum: its class, its members by value, its wire size.
    Enum {
        cls: Py<PyAny>,
        members: Vec<(i32, Py<PyAny>)>,
        size: usize,
    },
    /// A struct: its class, members (interned name, shape, optional), extensibility.
    Struct {
        cls: Py<PyAny>,
        fields: Vec<(Py<PyString>, Shape, bool)>,
        ext: Extensibility,
    },
    /// A bitmask: its class and (flag attribute, bit position) of each flag.
    Bitmask {
        cls: Py<PyAny>,
        flags: Vec<(Py<PyString>, u16)>,
    },
    /// A union: its class, discriminator and case shapes.
    Union {
        cls: Py<PyAny>,
        disc: Box<Shape>,
        cases: Vec<Shape>,
    },
}

/// Builds the shape of `t`, looking up the classes of named types in `classes`;
/// `renames` maps a type name to its {IDL member name: Python attribute} renames.
pub(crate) fn shape_of(
    py: Python<'_>,
    t: &DynamicType,
    classes: &Bound<'_, PyDict>,
    renames: Option<&Bound<'_, PyDict>>,
) -> PyResult<Shape> {
    ShapeBuilder {
        py,
        classes,
        renames,
    }
    .build(t, 0)
}

/// The lookups [`shape_of`] needs while it walks a type.
struct ShapeBuilder<'a, 'py> {
    py: Python<'py>,
    classes: &'a Bound<'py, PyDict>,
    renames: Option<&'a Bound<'py, PyDict>>,
}

impl ShapeBuilder<'_, '_> {
    fn build(&self, t: &DynamicType, depth: usize) -> PyResult<Shape> {
        if depth > MAX_DEPTH {
            return Err(BadParameterError::new_err("type nesting deeper than 64"));
        }
        let sub = |t: &DynamicType| self.build(t, depth + 1);
        Ok(match t.resolved().node() {
            TypeNode::Primitive(p) => Shape::Prim(*p),
            TypeNode::String8 { bound } => Shape::Str {
                bound: *bound,
                wide: false,
            },
            TypeNode::String16 { bound } => Shape::Str {
                bound: *bound,
                wide: true,
            },
            TypeNode::Sequence { element, bound } => match octet_kind(element) {
                Some(kind) => Shape::Octets {
                    array: None,
                    bound: *bound,
                    kind,
                },
                None => Shape::Seq {
                    elem: Box::new(sub(element)?),
                    bound: *bound,
                    dheader: !element.is_primitive(),
                },
            },
            TypeNode::Array { element, dims } => self.array(element, dims, depth)?,
            TypeNode::Map { key, value, .. } => {
                Shape::Map(Box::new(sub(key)?), Box::new(sub(value)?))
            }
            TypeNode::Enum(e) => self.enumeration(e)?,
            TypeNode::Struct(s) => self.structure(s, depth)?,
            TypeNode::Union(u) => Shape::Union {
                cls: self.class(&u.name)?,
                disc: Box::new(sub(&u.discriminator)?),
                cases: u
                    .cases
                    .iter()
                    .map(|c| sub(&c.ty))
                    .collect::<PyResult<_>>()?,
            },
            TypeNode::Bitmask(b) => Shape::Bitmask {
                cls: self.class(&b.name)?,
                flags: b
                    .flags
                    .iter()
                    .map(|(name, pos)| Ok((self.attr(&b.name, name)?, *pos)))
                    .collect::<PyResult<_>>()?,
            },
            _ => return Err(BadParameterError::new_err("unsupported type kind")),
        })
    }

    /// The Python class of named type `name`.
    fn class(&self, name: &str) -> PyResult<Py<PyAny>> {
        match self.classes.get_item(name)? {
            Some(c) => Ok(c.unbind()),
            None => Err(BadParameterError::new_err(format!(
                "no Python class given for IDL type {name}"
            ))),
        }
    }

    /// The Python attribute of member `member` of `type_name` (renamed or the IDL name).
    fn attr(&self, type_name: &str, member: &str) -> PyResult<Py<PyString>> {
        let table = match self.renames {
            Some(r) => r.get_item(type_name)?,
            None => None,
        };
        let renamed = match table {
            Some(d) => d.get_item(member).ok().map(|a| a.str()).transpose()?,
            None => None,
        };
        Ok(match renamed {
            Some(a) => PyString::intern_bound(self.py, &a.to_cow()?).unbind(),
            None => PyString::intern_bound(self.py, member).unbind(),
        })
    }

    fn array(&self, element: &DynamicType, dims: &[u32], depth: usize) -> PyResult<Shape> {
        let dims: Vec<usize> = dims.iter().map(|d| *d as usize).collect();
        let n = dims.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
        if n.is_none_or(|n| n > MAX_ELEMENTS) {
            return Err(BadParameterError::new_err("array too large"));
        }
        Ok(match (octet_kind(element), dims.as_slice()) {
            (Some(kind), [len]) => Shape::Octets {
                array: Some(*len),
                bound: 0,
                kind,
            },
            _ => Shape::Array {
                elem: Box::new(self.build(element, depth + 1)?),
                dims,
                dheader: !element.is_primitive(),
            },
        })
    }

    fn enumeration(&self, e: &EnumDesc) -> PyResult<Shape> {
        let cls = self.class(&e.name)?;
        let mut members = Vec::with_capacity(e.literals.len());
        for l in &e.literals {
            members.push((l.value, cls.bind(self.py).call1((l.value,))?.unbind()));
        }
        Ok(Shape::Enum {
            cls,
            members,
            size: enum_size(e.bit_bound),
        })
    }

    fn structure(&self, s: &StructDesc, depth: usize) -> PyResult<Shape> {
        let mut fields = Vec::with_capacity(s.members.len());
        for m in &s.members {
            let shape = self.build(&m.ty, depth + 1)?;
            fields.push((self.attr(&s.name, &m.name)?, shape, m.optional));
        }
        Ok(Shape::Struct {
            cls: self.class(&s.name)?,
            fields,
            ext: s.extensibility,
        })
    }
}

fn octet_kind(t: &DynamicType) -> Option<PrimitiveKind> {
    match t.resolved().node() {
        TypeNode::Primitive(k @ (PrimitiveKind::Byte | PrimitiveKind::UInt8)) => Some(*k),
        _ => None,
    }
}

/// A conversion error with the path of the member where it happened.
pub(crate) struct ConvError {
    path: Vec<String>,
    msg: String,
    py: Option<PyErr>,
}

impl ConvError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        ConvError {
            path: Vec::new(),
            msg: msg.into(),
            py: None,
        }
    }

    pub(crate) fn at(mut self, name: &str) -> Self {
        self.path.push(name.to_string());
        self
    }

    /// The Python exception: a [`SampleTypeError`] naming the member.
    pub(crate) fn into_err(self, py: Python<'_>) -> PyErr {
        let path: Vec<&str> = self.path.iter().rev().map(String::as_str).collect();
        let mut msg = format!("member '{}': {}", path.join("."), self.msg);
        if let Some(e) = self.py {
            msg.push_str(&format!(" ({})", e.value_bound(py)));
        }
        SampleTypeError::new_err(msg)
    }
}

impl From<PyErr> for ConvError {
    fn from(e: PyErr) -> Self {
        ConvError {
            path: Vec::new(),
            msg: "Python error".into(),
            py: Some(e),
        }
    }
}

/// A conversion result.
pub(crate) type Conv<T> = Result<T, ConvError>;

/// A Python int in the range of `T`.
pub(crate) fn int<T: TryFrom<i128>>(o: &Bound<'_, PyAny>, what: &str) -> Conv<T> {
    let v: i128 = o
        .extract()
        .map_err(|_| ConvError::new(format!("expected an int ({what})")))?;
    T::try_from(v).map_err(|_| ConvError::new(format!("{v} is out of range for {what}")))
}

/// A one-character str as a char (Latin-1 unless `wide`).
pub(crate) fn one_char(o: &Bound<'_, PyAny>, wide: bool) -> Conv<char> {
    let s: String = o
        .extract()
        .map_err(|_| ConvError::new("expected a one-character str"))?;
    let mut it = s.chars();
    match (it.next(), it.next()) {
        (Some(c), None) if wide || u32::from(c) <= 0xff => Ok(c),
        _ => Err(ConvError::new("expected a one-character (Latin-1) str")),
    }
}

fn prim(p: PrimitiveKind, o: &Bound<'_, PyAny>) -> Conv<DynamicValue> {
    use DynamicValue as V;
    let float = |o: &Bound<'_, PyAny>| -> Conv<f64> {
        o.extract().map_err(|_| ConvError::new("expected a float"))
    };
    Ok(match p {
        PrimitiveKind::Boolean => {
            V::Bool(o.extract().map_err(|_| ConvError::new("expected a bool"))?)
        }
        PrimitiveKind::Byte => V::Byte(int(o, "octet")?),
        PrimitiveKind::Int8 => V::Int8(int(o, "int8")?),
        PrimitiveKind::UInt8 => V::UInt8(int(o, "uint8")?),
        PrimitiveKind::Int16 => V::Int16(int(o, "int16")?),
        PrimitiveKind::UInt16 => V::UInt16(int(o, "uint16")?),
        PrimitiveKind::Int32 => V::Int32(int(o, "int32")?),
        PrimitiveKind::UInt32 => V::UInt32(int(o, "uint32")?),
        PrimitiveKind::Int64 => V::Int64(int(o, "int64")?),
        PrimitiveKind::UInt64 => V::UInt64(int(o, "uint64")?),
        PrimitiveKind::Float32 => V::Float32(float(o)? as f32),
        PrimitiveKind::Float64 | PrimitiveKind::Float128 => V::Float64(float(o)?),
        PrimitiveKind::Char8 => V::Char8(one_char(o, false)?),
        PrimitiveKind::Char16 => V::Char16(one_char(o, true)?),
    })
}

/// The elements of a list, tuple or other iterable (not a str).
pub(crate) fn elements<'p>(o: &Bound<'p, PyAny>) -> Conv<Vec<Bound<'p, PyAny>>> {
    if let Ok(l) = o.downcast::<PyList>() {
        return Ok(l.iter().collect());
    }
    if let Ok(t) = o.downcast::<PyTuple>() {
        return Ok(t.iter().collect());
    }
    if o.is_instance_of::<PyString>() {
        return Err(ConvError::new("expected a list, not a str"));
    }
    let mut v = Vec::new();
    for x in o.iter().map_err(|_| ConvError::new("expected a list"))? {
        if v.len() >= MAX_ELEMENTS {
            return Err(ConvError::new("too many elements"));
        }
        v.push(x?);
    }
    Ok(v)
}

/// The octets of `bytes`, `bytearray` or a list of ints.
pub(crate) fn octets(o: &Bound<'_, PyAny>) -> Conv<Vec<u8>> {
    if let Ok(b) = o.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = o.downcast::<pyo3::types::PyByteArray>() {
        return Ok(b.to_vec());
    }
    let mut v = Vec::new();
    for e in elements(o)? {
        v.push(int::<u8>(&e, "octet")?);
    }
    Ok(v)
}

/// Checks the length of octets against their shape.
pub(crate) fn check_octets(n: usize, array: Option<usize>, bound: u32) -> Conv<()> {
    match array {
        Some(len) if n != len => Err(ConvError::new(format!(
            "an array of {len} octets was given {n}"
        ))),
        None if bound != 0 && n > bound as usize => Err(ConvError::new(format!(
            "{n} octets exceed the bound {bound}"
        ))),
        _ => Ok(()),
    }
}

/// Flattens nested lists of array `dims` (row-major), checking each dimension.
pub(crate) fn flatten<'p>(
    o: &Bound<'p, PyAny>,
    dims: &[usize],
    out: &mut Vec<Bound<'p, PyAny>>,
) -> Conv<()> {
    let Some((first, rest)) = dims.split_first() else {
        out.push(o.clone());
        return Ok(());
    };
    let items = elements(o)?;
    if items.len() != *first {
        return Err(ConvError::new(format!(
            "an array of {first} elements was given {}",
            items.len()
        )));
    }
    for (i, x) in items.iter().enumerate() {
        flatten(x, rest, out).map_err(|e| e.at(&format!("[{i}]")))?;
    }
    Ok(())
}

/// Checks `o` is an instance of `cls`.
pub(crate) fn check_class(o: &Bound<'_, PyAny>, cls: &Py<PyAny>) -> Conv<()> {
    let c = cls.bind(o.py());
    if o.is_instance(c)? {
        return Ok(());
    }
    Err(ConvError::new(format!(
        "expected a {}, got a {}",
        c.getattr("__name__")?,
        o.get_type().name()?
    )))
}

/// Converts a Python object to a value of its shape.
pub(crate) fn to_value(s: &Shape, o: &Bound<'_, PyAny>) -> Conv<DynamicValue> {
    use DynamicValue as V;
    Ok(match s {
        Shape::Prim(p) => prim(*p, o)?,
        Shape::Str { .. } => V::String(o.extract().map_err(|_| ConvError::new("expected a str"))?),
        Shape::Octets { array, bound, kind } => {
            let bytes = octets(o)?;
            check_octets(bytes.len(), *array, *bound)?;
            let vals = bytes
                .into_iter()
                .map(|b| match kind {
                    PrimitiveKind::UInt8 => V::UInt8(b),
                    _ => V::Byte(b),
                })
                .collect();
            if array.is_some() {
                V::Array(vals)
            } else {
                V::Sequence(vals)
            }
        }
        Shape::Seq { elem, .. } => {
            let mut v = Vec::new();
            for (i, x) in elements(o)?.iter().enumerate() {
                v.push(to_value(elem, x).map_err(|err| err.at(&format!("[{i}]")))?);
            }
            V::Sequence(v)
        }
        Shape::Array { elem, dims, .. } => {
            let mut flat = Vec::new();
            flatten(o, dims, &mut flat)?;
            let mut v = Vec::with_capacity(flat.len());
            for (i, x) in flat.iter().enumerate() {
                v.push(to_value(elem, x).map_err(|err| err.at(&format!("[{i}]")))?);
            }
            V::Array(v)
        }
        Shape::Map(k, val) => {
            let d = o
                .downcast::<PyDict>()
                .map_err(|_| ConvError::new("expected a dict"))?;
            let mut v = Vec::with_capacity(d.len());
            for (a, b) in d.iter() {
                v.push((to_value(k, &a)?, to_value(val, &b)?));
            }
            V::Map(v)
        }
        Shape::Enum { cls, .. } => {
            check_class(o, cls)?;
            V::Enum(int(&o.getattr("value")?, "enum value")?)
        }
        Shape::Struct { cls, fields, .. } => struct_value(cls, fields, o)?,
        Shape::Bitmask { cls, flags } => bitmask_value(cls, flags, o)?,
        Shape::Union { cls, disc, cases } => union_value(cls, disc, cases, o)?,
    })
}

fn struct_value(
    cls: &Py<PyAny>,
    fields: &[(Py<PyString>, Shape, bool)],
    o: &Bound<'_, PyAny>,
) -> Conv<DynamicValue> {
    check_class(o, cls)?;
    let mut slots = Vec::with_capacity(fields.len());
    for (name, fs, _) in fields {
        let n = name.bind(o.py());
        let a = o
            .getattr(n)
            .map_err(|_| ConvError::new("missing").at(&n.to_string()))?;
        if a.is_none() {
            slots.push(None);
        } else {
            slots.push(Some(to_value(fs, &a).map_err(|e| e.at(&n.to_string()))?));
        }
    }
    Ok(DynamicValue::Struct(slots))
}

fn bitmask_value(
    cls: &Py<PyAny>,
    flags: &[(Py<PyString>, u16)],
    o: &Bound<'_, PyAny>,
) -> Conv<DynamicValue> {
    check_class(o, cls)?;
    let mut bits = 0u64;
    for (name, pos) in flags {
        let n = name.bind(o.py());
        let on: bool = o
            .getattr(n)?
            .is_truthy()
            .map_err(|e| ConvError::from(e).at(&n.to_string()))?;
        if on && *pos < 64 {
            bits |= 1 << pos;
        }
    }
    Ok(DynamicValue::Bitmask(bits))
}

fn union_value(
    cls: &Py<PyAny>,
    disc: &Shape,
    cases: &[Shape],
    o: &Bound<'_, PyAny>,
) -> Conv<DynamicValue> {
    check_class(o, cls)?;
    let d = to_value(disc, &o.getattr("discriminator")?)?;
    let index: Option<usize> = o.call_method0("_case_index")?.extract()?;
    let case = match index {
        Some(i) => {
            let cs = cases
                .get(i)
                .ok_or_else(|| ConvError::new("bad union case index"))?;
            Some((i, Box::new(to_value(cs, &o.getattr("value")?)?)))
        }
        None => None,
    };
    Ok(DynamicValue::Union {
        discriminator: Box::new(d),
        case,
    })
}

fn prim_py(py: Python<'_>, v: DynamicValue) -> PyResult<PyObject> {
    use DynamicValue as V;
    Ok(match v {
        V::Bool(b) => b.into_py(py),
        V::Byte(x) | V::UInt8(x) => x.into_py(py),
        V::Int8(x) => x.into_py(py),
        V::Int16(x) => x.into_py(py),
        V::UInt16(x) => x.into_py(py),
        V::Int32(x) => x.into_py(py),
        V::UInt32(x) => x.into_py(py),
        V::Int64(x) => x.into_py(py),
        V::UInt64(x) => x.into_py(py),
        V::Float32(x) => f64::from(x).into_py(py),
        V::Float64(x) => x.into_py(py),
        V::Char8(c) | V::Char16(c) => c.to_string().into_py(py),
        V::String(s) => s.into_py(py),
        V::Enum(x) => x.into_py(py),
        V::Bitmask(x) => x.into_py(py),
        _ => return Err(SerializationError::new_err("value does not fit its type")),
    })
}

fn octet(v: &DynamicValue) -> u8 {
    match v {
        DynamicValue::Byte(b) | DynamicValue::UInt8(b) => *b,
        _ => 0,
    }
}

/// A struct or union instance made without running `__init__`, with its `__dict__`.
pub(crate) fn blank<'p>(
    cls: &Bound<'p, PyAny>,
    new: &Bound<'p, PyAny>,
) -> PyResult<(Bound<'p, PyAny>, Bound<'p, PyDict>)> {
    let inst = new.call1((cls,))?;
    let dict = inst.getattr("__dict__")?.downcast_into::<PyDict>()?;
    Ok((inst, dict))
}

/// Nests flat row-major `items` into lists of `dims`.
pub(crate) fn nest<'p>(
    py: Python<'p>,
    items: &mut impl Iterator<Item = PyResult<PyObject>>,
    dims: &[usize],
) -> PyResult<PyObject> {
    let Some((first, rest)) = dims.split_first() else {
        return items
            .next()
            .unwrap_or_else(|| Err(SerializationError::new_err("array shorter than its type")));
    };
    let l = PyList::empty_bound(py);
    for _ in 0..*first {
        l.append(nest(py, items, rest)?)?;
    }
    Ok(l.into_any().unbind())
}

/// Converts a decoded value of shape `s` to a Python object.
pub(crate) fn from_value(
    py: Python<'_>,
    s: &Shape,
    v: DynamicValue,
    new: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    use DynamicValue as V;
    let mismatch = || SerializationError::new_err("decoded value does not fit its type");
    Ok(match (s, v) {
        (Shape::Prim(_) | Shape::Str { .. }, v) => prim_py(py, v)?,
        (Shape::Octets { .. }, V::Sequence(items) | V::Array(items)) => {
            let b: Vec<u8> = items.iter().map(octet).collect();
            PyBytes::new_bound(py, &b).into_any().unbind()
        }
        (Shape::Seq { elem, .. }, V::Sequence(items)) => {
            let l = PyList::empty_bound(py);
            for x in items {
                l.append(from_value(py, elem, x, new)?)?;
            }
            l.into_any().unbind()
        }
        (Shape::Array { elem, dims, .. }, V::Array(items)) => {
            let mut it = items.into_iter().map(|x| from_value(py, elem, x, new));
            nest(py, &mut it, dims)?
        }
        (Shape::Map(k, val), V::Map(pairs)) => {
            let d = PyDict::new_bound(py);
            for (a, b) in pairs {
                d.set_item(from_value(py, k, a, new)?, from_value(py, val, b, new)?)?;
            }
            d.into_any().unbind()
        }
        (Shape::Enum { cls, members, .. }, V::Enum(x)) => match members.iter().find(|m| m.0 == x) {
            Some((_, m)) => m.clone_ref(py),
            None => cls.bind(py).call1((x,))?.unbind(),
        },
        (Shape::Struct { cls, fields, .. }, V::Struct(slots)) => {
            let (inst, dict) = blank(cls.bind(py), new)?;
            for ((name, fs, _), slot) in fields.iter().zip(slots) {
                let val = match slot {
                    Some(x) => from_value(py, fs, x, new)?,
                    None => py.None(),
                };
                dict.set_item(name.bind(py), val)?;
            }
            inst.unbind()
        }
        (Shape::Bitmask { cls, flags }, V::Bitmask(bits)) => {
            let (inst, dict) = blank(cls.bind(py), new)?;
            for (name, pos) in flags {
                let on = *pos < 64 && bits & (1 << pos) != 0;
                dict.set_item(name.bind(py), on)?;
            }
            inst.unbind()
        }
        (
            Shape::Union { cls, disc, cases },
            V::Union {
                discriminator,
                case,
            },
        ) => {
            let (inst, dict) = blank(cls.bind(py), new)?;
            dict.set_item("discriminator", from_value(py, disc, *discriminator, new)?)?;
            let val = match case {
                Some((i, x)) => {
                    let cs = cases.get(i).ok_or_else(mismatch)?;
                    from_value(py, cs, *x, new)?
                }
                None => py.None(),
            };
            dict.set_item("value", val)?;
            inst.unbind()
        }
        _ => return Err(mismatch()),
    })
}
