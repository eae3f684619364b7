//! Type support: a Python IDL class's resolved XTypes type and the conversion of its
//! instances to and from serialized samples.
//!
//! A class's type comes either from IDL-compiler bytes (TypeInformation + TypeObjects, checked
//! by hash in a [`TypeRegistry`]) or from IDL text the Python runtime writes from the class's
//! annotations, compiled by `halyard-idlc` (whose TypeObjects are byte-identical to the
//! `cyclonedds` Python package's). Either way it ends as a [`DynamicType`].
//!
//! Beside it we build a [`Shape`] tree once per class: the same structure with the Python
//! side cached (interned member names, classes, enum members), so that converting a sample
//! walks the Python objects directly (getattr, lists, dicts) into a [`DynamicValue`] that the
//! `halyard-xtypes` codec serializes, and back. No per-field Python code runs.

use std::sync::Arc;

use halyard::{KeySupport, OwnedTypeDescription, UntypedType};
use halyard_cdr::{CdrError, DataRepresentation, Endianness, Extensibility};
use halyard_xtypes::dynamic::{self, TypeNode};
use halyard_xtypes::{
    DynamicError, DynamicType, DynamicValue, PrimitiveKind, TypeInformation, TypeObject,
    TypeRegistry,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::errors::{BadParameterError, SampleTypeError, SerializationError};

/// Most elements a Python sequence may have when converted (bounds memory on bad input).
const MAX_ELEMENTS: usize = 1 << 26;

/// The Python side of one (resolved) type node.
enum Shape {
    Prim(PrimitiveKind),
    Str,
    /// sequence or array of octet/uint8: Python `bytes`.
    Octets {
        array: bool,
        kind: PrimitiveKind,
    },
    Seq(Box<Shape>),
    Array(Box<Shape>, usize),
    Map(Box<Shape>, Box<Shape>),
    Enum {
        cls: Py<PyAny>,
        /// (value, member) of each enumerator.
        members: Vec<(i32, Py<PyAny>)>,
    },
    Struct {
        cls: Py<PyAny>,
        fields: Vec<(Py<PyString>, Shape)>,
    },
    Union {
        cls: Py<PyAny>,
        disc: Box<Shape>,
        cases: Vec<Shape>,
    },
}

/// A class's type: what the native entities need to write and read it.
#[pyclass(module = "halyard._native", frozen)]
pub struct TypeSupport {
    pub(crate) ty: DynamicType,
    shape: Shape,
    pub(crate) untyped: UntypedType,
    /// `object.__new__`, to make instances without running `__init__`.
    new: Py<PyAny>,
    rep: DataRepresentation,
    type_information: Vec<u8>,
    type_objects: Vec<Vec<u8>>,
}

fn dyn_err(e: DynamicError) -> PyErr {
    SerializationError::new_err(e.to_string())
}

/// The complete TypeObject identifier of a TypeInformation and a registry with its objects.
fn registry_of(
    info_bytes: &[u8],
    objects: &[Vec<u8>],
) -> PyResult<(TypeRegistry, halyard_xtypes::TypeIdentifier)> {
    let info = TypeInformation::from_xcdr2(info_bytes)
        .map_err(|e| BadParameterError::new_err(format!("type_information: {e}")))?;
    let mut reg = TypeRegistry::new();
    for (i, o) in objects.iter().enumerate() {
        let obj = TypeObject::from_xcdr2(o)
            .map_err(|e| BadParameterError::new_err(format!("type_objects[{i}]: {e}")))?;
        reg.insert_object(obj)
            .map_err(|e| BadParameterError::new_err(format!("type_objects[{i}]: {e}")))?;
    }
    Ok((reg, info.complete.typeid_with_size.type_id))
}

/// Compiles IDL text and returns the TypeInformation and TypeObjects of topic type `name`.
pub(crate) fn compile_idl(text: &str, name: &str) -> PyResult<(Vec<u8>, Vec<Vec<u8>>)> {
    let opts = halyard_idl::ParseOptions::default();
    let spec = halyard_idl::parse_str("<python class>", text, &opts).map_err(|e| {
        let msgs: Vec<String> = e
            .iter()
            .map(|x| format!("{}: {}", x.location, x.kind))
            .collect();
        BadParameterError::new_err(format!(
            "the class's IDL does not compile: {}\n{text}",
            msgs.join("; ")
        ))
    })?;
    let set = halyard_idlc::type_objects(&spec)
        .map_err(|e| BadParameterError::new_err(format!("the class's IDL: {e}\n{text}")))?;
    let topic = set.topics.get(name).ok_or_else(|| {
        BadParameterError::new_err(format!("type {name} is not a topic type of its IDL"))
    })?;
    Ok((
        topic.type_information_bytes.clone(),
        topic.type_objects.clone(),
    ))
}

#[pymethods]
impl TypeSupport {
    /// `TypeSupport(type_information, type_objects, classes, xcdr2)`: `classes` maps each
    /// qualified IDL name (`M::T`) to its Python class.
    #[new]
    #[pyo3(signature = (type_information, type_objects, classes, xcdr2=false))]
    fn py_new(
        py: Python<'_>,
        type_information: Vec<u8>,
        type_objects: Vec<Vec<u8>>,
        classes: &Bound<'_, PyDict>,
        xcdr2: bool,
    ) -> PyResult<Self> {
        let (reg, id) = registry_of(&type_information, &type_objects)?;
        let ty = reg
            .build(&id)
            .map_err(|e| BadParameterError::new_err(format!("type: {e}")))?;
        let shape = shape_of(py, &ty, classes, 0)?;
        let s = ty
            .as_struct()
            .ok_or_else(|| BadParameterError::new_err("a topic type is a struct"))?;
        let name = s.name.clone();
        let key: Option<Arc<dyn KeySupport>> = if s.has_key() {
            Some(Arc::new(DynKey(ty.clone())))
        } else {
            None
        };
        let untyped = UntypedType {
            type_name: name,
            extensibility: s.extensibility,
            key,
            type_description: Some(OwnedTypeDescription {
                type_information: type_information.clone(),
                type_objects: type_objects.clone(),
            }),
        };
        let rep = if xcdr2 || s.extensibility != Extensibility::Final {
            DataRepresentation::Xcdr2
        } else {
            DataRepresentation::Xcdr1
        };
        let new = py
            .import_bound("builtins")?
            .getattr("object")?
            .getattr("__new__")?;
        Ok(TypeSupport {
            ty,
            shape,
            untyped,
            new: new.unbind(),
            rep,
            type_information,
            type_objects,
        })
    }

    /// The registered type name (`M::T`).
    #[getter]
    fn type_name(&self) -> &str {
        &self.untyped.type_name
    }

    /// True for a keyed type.
    #[getter]
    fn has_key(&self) -> bool {
        self.untyped.has_key()
    }

    /// The TypeInformation (XCDR2 little-endian).
    #[getter]
    fn type_information<'p>(&self, py: Python<'p>) -> Bound<'p, PyBytes> {
        PyBytes::new_bound(py, &self.type_information)
    }

    /// The TypeObjects (minimal and complete of the type, then of its dependencies).
    #[getter]
    fn type_objects<'p>(&self, py: Python<'p>) -> Bound<'p, PyTuple> {
        PyTuple::new_bound(
            py,
            self.type_objects.iter().map(|o| PyBytes::new_bound(py, o)),
        )
    }

    /// Serializes a sample (encapsulation header included).
    fn serialize<'p>(&self, sample: &Bound<'p, PyAny>) -> PyResult<Bound<'p, PyBytes>> {
        let bytes = self.encode(sample)?;
        Ok(PyBytes::new_bound(sample.py(), &bytes))
    }

    /// Deserializes a sample.
    fn deserialize(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyObject> {
        self.decode(py, data)
    }

    /// The 16-byte key hash of a sample (all zero for a keyless type).
    fn key_hash<'p>(&self, sample: &Bound<'p, PyAny>) -> PyResult<Bound<'p, PyBytes>> {
        let v = self.to_value(sample)?;
        let h = dynamic::key_hash(&self.ty, &v).map_err(dyn_err)?;
        Ok(PyBytes::new_bound(sample.py(), &h))
    }
}

impl TypeSupport {
    /// Converts and serializes a Python sample; a sample of another class is a
    /// [`SampleTypeError`].
    pub(crate) fn encode(&self, sample: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        let v = self.to_value(sample)?;
        dynamic::encode(&self.ty, &v, self.rep, Endianness::Little).map_err(dyn_err)
    }

    fn to_value(&self, sample: &Bound<'_, PyAny>) -> PyResult<DynamicValue> {
        if let Shape::Struct { cls, .. } = &self.shape {
            if !sample.is_instance(cls.bind(sample.py()))? {
                return Err(SampleTypeError::new_err(format!(
                    "a {} sample was given where {} is expected",
                    sample.get_type().name()?,
                    cls.bind(sample.py()).getattr("__name__")?
                )));
            }
        }
        to_value(&self.shape, sample).map_err(|e| e.into_err(sample.py()))
    }

    /// Deserializes bytes into an instance of the class.
    pub(crate) fn decode(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyObject> {
        let v = dynamic::decode(&self.ty, data).map_err(dyn_err)?;
        from_value(py, &self.shape, v, self.new.bind(py))
    }

    /// Deserializes a key-only payload into an instance (non-key members default).
    pub(crate) fn decode_key(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyObject> {
        let v = dynamic::decode_key(&self.ty, data)
            .or_else(|_| dynamic::decode(&self.ty, data))
            .map_err(dyn_err)?;
        from_value(py, &self.shape, v, self.new.bind(py))
    }
}

/// [`KeySupport`] of a dynamic type.
struct DynKey(DynamicType);

fn cdr(e: DynamicError) -> CdrError {
    let _ = e;
    CdrError::InvalidHeader("sample does not decode with its dynamic type")
}

impl KeySupport for DynKey {
    fn key_hash(&self, payload: &[u8], key_only: bool) -> Result<[u8; 16], CdrError> {
        let v = if key_only {
            dynamic::decode_key(&self.0, payload)
        } else {
            dynamic::decode(&self.0, payload)
        }
        .map_err(cdr)?;
        dynamic::key_hash(&self.0, &v).map_err(cdr)
    }

    fn serialized_key(&self, sample: &[u8]) -> Result<Vec<u8>, CdrError> {
        let id = match sample {
            [a, b, ..] => u16::from_be_bytes([*a, *b]),
            _ => return Err(CdrError::Truncated),
        };
        let (rep, end) = halyard_cdr::parse_encapsulation(id)?;
        let v = dynamic::decode(&self.0, sample).map_err(cdr)?;
        dynamic::encode_key(&self.0, &v, rep, end).map_err(cdr)
    }
}

/// Builds the shape of `t`, looking up the classes of named types in `classes`.
fn shape_of(
    py: Python<'_>,
    t: &DynamicType,
    classes: &Bound<'_, PyDict>,
    depth: usize,
) -> PyResult<Shape> {
    if depth > 64 {
        return Err(BadParameterError::new_err("type nesting deeper than 64"));
    }
    let class = |name: &str| -> PyResult<Py<PyAny>> {
        match classes.get_item(name)? {
            Some(c) => Ok(c.unbind()),
            None => Err(BadParameterError::new_err(format!(
                "no Python class given for IDL type {name}"
            ))),
        }
    };
    Ok(match t.resolved().node() {
        TypeNode::Primitive(p) => Shape::Prim(*p),
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => Shape::Str,
        TypeNode::Sequence { element, .. } => match element.resolved().node() {
            TypeNode::Primitive(k @ (PrimitiveKind::Byte | PrimitiveKind::UInt8)) => {
                Shape::Octets {
                    array: false,
                    kind: *k,
                }
            }
            _ => Shape::Seq(Box::new(shape_of(py, element, classes, depth + 1)?)),
        },
        TypeNode::Array { element, dims } => {
            let n = dims.iter().map(|d| *d as usize).product::<usize>();
            match element.resolved().node() {
                TypeNode::Primitive(k @ (PrimitiveKind::Byte | PrimitiveKind::UInt8))
                    if dims.len() == 1 =>
                {
                    Shape::Octets {
                        array: true,
                        kind: *k,
                    }
                }
                _ => Shape::Array(Box::new(shape_of(py, element, classes, depth + 1)?), n),
            }
        }
        TypeNode::Map { key, value, .. } => Shape::Map(
            Box::new(shape_of(py, key, classes, depth + 1)?),
            Box::new(shape_of(py, value, classes, depth + 1)?),
        ),
        TypeNode::Enum(e) => {
            let cls = class(&e.name)?;
            let mut members = Vec::with_capacity(e.literals.len());
            for l in &e.literals {
                members.push((l.value, cls.bind(py).call1((l.value,))?.unbind()));
            }
            Shape::Enum { cls, members }
        }
        TypeNode::Struct(s) => {
            let cls = class(&s.name)?;
            let mut fields = Vec::with_capacity(s.members.len());
            for m in &s.members {
                let name = PyString::intern_bound(py, &m.name).unbind();
                fields.push((name, shape_of(py, &m.ty, classes, depth + 1)?));
            }
            Shape::Struct { cls, fields }
        }
        TypeNode::Union(u) => {
            let cls = class(&u.name)?;
            let disc = Box::new(shape_of(py, &u.discriminator, classes, depth + 1)?);
            let mut cases = Vec::with_capacity(u.cases.len());
            for c in &u.cases {
                cases.push(shape_of(py, &c.ty, classes, depth + 1)?);
            }
            Shape::Union { cls, disc, cases }
        }
        TypeNode::Bitmask(b) => {
            return Err(BadParameterError::new_err(format!(
                "bitmask {} is not supported by the Python binding yet",
                b.name
            )))
        }
        TypeNode::Alias { .. } => {
            return Err(BadParameterError::new_err("unresolved alias"));
        }
        _ => return Err(BadParameterError::new_err("unsupported type kind")),
    })
}

/// A conversion error with the path of the member where it happened.
pub(crate) struct ConvError {
    path: Vec<String>,
    msg: String,
    py: Option<PyErr>,
}

impl ConvError {
    fn new(msg: impl Into<String>) -> Self {
        ConvError {
            path: Vec::new(),
            msg: msg.into(),
            py: None,
        }
    }

    fn at(mut self, name: &str) -> Self {
        self.path.push(name.to_string());
        self
    }

    fn into_err(self, py: Python<'_>) -> PyErr {
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

type Conv<T> = Result<T, ConvError>;

fn int<T: TryFrom<i128>>(o: &Bound<'_, PyAny>, what: &str) -> Conv<T> {
    let v: i128 = o
        .extract()
        .map_err(|_| ConvError::new(format!("expected an int ({what})")))?;
    T::try_from(v).map_err(|_| ConvError::new(format!("{v} is out of range for {what}")))
}

fn prim(p: PrimitiveKind, o: &Bound<'_, PyAny>) -> Conv<DynamicValue> {
    use DynamicValue as V;
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
        PrimitiveKind::Float32 => V::Float32(
            o.extract::<f64>()
                .map_err(|_| ConvError::new("expected a float"))? as f32,
        ),
        PrimitiveKind::Float64 | PrimitiveKind::Float128 => V::Float64(
            o.extract()
                .map_err(|_| ConvError::new("expected a float"))?,
        ),
        PrimitiveKind::Char8 | PrimitiveKind::Char16 => {
            let s: String = o
                .extract()
                .map_err(|_| ConvError::new("expected a one-character str"))?;
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) if p == PrimitiveKind::Char16 => V::Char16(c),
                (Some(c), None) if u32::from(c) <= 0xff => V::Char8(c),
                _ => return Err(ConvError::new("expected a one-character (Latin-1) str")),
            }
        }
    })
}

fn elements<'p>(o: &Bound<'p, PyAny>) -> Conv<Vec<Bound<'p, PyAny>>> {
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

fn to_value(s: &Shape, o: &Bound<'_, PyAny>) -> Conv<DynamicValue> {
    use DynamicValue as V;
    Ok(match s {
        Shape::Prim(p) => prim(*p, o)?,
        Shape::Str => V::String(o.extract().map_err(|_| ConvError::new("expected a str"))?),
        Shape::Octets { array, kind } => {
            let bytes: Vec<u8> = if let Ok(b) = o.downcast::<PyBytes>() {
                b.as_bytes().to_vec()
            } else {
                let mut v = Vec::new();
                for e in elements(o)? {
                    v.push(int::<u8>(&e, "octet")?);
                }
                v
            };
            let vals = bytes
                .into_iter()
                .map(|b| match kind {
                    PrimitiveKind::UInt8 => V::UInt8(b),
                    _ => V::Byte(b),
                })
                .collect();
            if *array {
                V::Array(vals)
            } else {
                V::Sequence(vals)
            }
        }
        Shape::Seq(e) => {
            let mut v = Vec::new();
            for (i, x) in elements(o)?.iter().enumerate() {
                v.push(to_value(e, x).map_err(|err| err.at(&format!("[{i}]")))?);
            }
            V::Sequence(v)
        }
        Shape::Array(e, n) => {
            let items = elements(o)?;
            if items.len() != *n {
                return Err(ConvError::new(format!(
                    "an array of {n} elements was given {}",
                    items.len()
                )));
            }
            let mut v = Vec::with_capacity(*n);
            for (i, x) in items.iter().enumerate() {
                v.push(to_value(e, x).map_err(|err| err.at(&format!("[{i}]")))?);
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
            if !o.is_instance(cls.bind(o.py()))? {
                return Err(ConvError::new(format!(
                    "expected a member of {}",
                    cls.bind(o.py()).getattr("__name__")?
                )));
            }
            V::Enum(int(&o.getattr("value")?, "enum value")?)
        }
        Shape::Struct { cls, fields } => {
            if !o.is_instance(cls.bind(o.py()))? {
                return Err(ConvError::new(format!(
                    "expected a {}, got a {}",
                    cls.bind(o.py()).getattr("__name__")?,
                    o.get_type().name()?
                )));
            }
            let mut slots = Vec::with_capacity(fields.len());
            for (name, fs) in fields {
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
            V::Struct(slots)
        }
        Shape::Union { cls, disc, cases } => {
            if !o.is_instance(cls.bind(o.py()))? {
                return Err(ConvError::new(format!(
                    "expected a {}",
                    cls.bind(o.py()).getattr("__name__")?
                )));
            }
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
            V::Union {
                discriminator: Box::new(d),
                case,
            }
        }
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

fn from_value(
    py: Python<'_>,
    s: &Shape,
    v: DynamicValue,
    new: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    use DynamicValue as V;
    let mismatch = || SerializationError::new_err("decoded value does not fit its type");
    Ok(match (s, v) {
        (Shape::Prim(_) | Shape::Str, v) => prim_py(py, v)?,
        (Shape::Octets { .. }, V::Sequence(items) | V::Array(items)) => {
            let b: Vec<u8> = items.iter().map(octet).collect();
            PyBytes::new_bound(py, &b).into_any().unbind()
        }
        (Shape::Seq(e) | Shape::Array(e, _), V::Sequence(items) | V::Array(items)) => {
            let l = PyList::empty_bound(py);
            for x in items {
                l.append(from_value(py, e, x, new)?)?;
            }
            l.into_any().unbind()
        }
        (Shape::Map(k, val), V::Map(pairs)) => {
            let d = PyDict::new_bound(py);
            for (a, b) in pairs {
                d.set_item(from_value(py, k, a, new)?, from_value(py, val, b, new)?)?;
            }
            d.into_any().unbind()
        }
        (Shape::Enum { cls, members }, V::Enum(x)) => match members.iter().find(|m| m.0 == x) {
            Some((_, m)) => m.clone_ref(py),
            None => cls.bind(py).call1((x,))?.unbind(),
        },
        (Shape::Struct { cls, fields }, V::Struct(slots)) => {
            let inst = new.call1((cls.bind(py),))?;
            let dict = inst.getattr("__dict__")?;
            let dict = dict.downcast::<PyDict>()?;
            for ((name, fs), slot) in fields.iter().zip(slots) {
                let val = match slot {
                    Some(x) => from_value(py, fs, x, new)?,
                    None => py.None(),
                };
                dict.set_item(name.bind(py), val)?;
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
            let inst = new.call1((cls.bind(py),))?;
            let dict = inst.getattr("__dict__")?;
            let dict = dict.downcast::<PyDict>()?;
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

/// Compiles IDL text to the TypeInformation and TypeObjects of topic type `name`.
#[pyfunction]
pub(crate) fn idl_type_objects<'p>(
    py: Python<'p>,
    idl: &str,
    name: &str,
) -> PyResult<(Bound<'p, PyBytes>, Bound<'p, PyTuple>)> {
    let (info, objs) = compile_idl(idl, name)?;
    Ok((
        PyBytes::new_bound(py, &info),
        PyTuple::new_bound(py, objs.iter().map(|o| PyBytes::new_bound(py, o))),
    ))
}
