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
use halyard_xtypes::dynamic;
use halyard_xtypes::{
    DynamicError, DynamicType, DynamicValue, TypeInformation, TypeObject, TypeRegistry,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors::{BadParameterError, SampleTypeError, SerializationError};
use crate::shape::{from_value, shape_of, to_value, Shape};

/// A class's type: what the native entities need to write and read it.
#[pyclass(module = "halyard._native", frozen)]
pub struct TypeSupport {
    pub(crate) ty: DynamicType,
    shape: Shape,
    /// The fast codec handles the whole type (`fast.rs`).
    fast: bool,
    /// The encapsulation id of samples written (little-endian variant).
    encap: u16,
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

/// An encoding error: the value came from the caller, so it is a [`SampleTypeError`].
fn value_err(e: DynamicError) -> PyErr {
    SampleTypeError::new_err(format!("the sample does not fit its type: {e}"))
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
    /// `TypeSupport(type_information, type_objects, classes, xcdr2, renames)`: `classes` maps
    /// each qualified IDL name (`M::T`) to its Python class, `renames` a type name to its
    /// {IDL member name: Python attribute} renames.
    #[new]
    #[pyo3(signature = (type_information, type_objects, classes, xcdr2=false, renames=None))]
    fn py_new(
        py: Python<'_>,
        type_information: Vec<u8>,
        type_objects: Vec<Vec<u8>>,
        classes: &Bound<'_, PyDict>,
        xcdr2: bool,
        renames: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (reg, id) = registry_of(&type_information, &type_objects)?;
        let ty = reg
            .build(&id)
            .map_err(|e| BadParameterError::new_err(format!("type: {e}")))?;
        let shape = shape_of(py, &ty, classes, renames)?;
        let s = ty
            .as_struct()
            .ok_or_else(|| BadParameterError::new_err("a topic type is a struct"))?;
        let name = s.name.clone();
        let key: Option<Arc<dyn KeySupport>> = if s.has_key() {
            Some(Arc::new(DynKey(
                ty.clone(),
                crate::keyscan::KeyScan::new(&ty),
            )))
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
        let fast = crate::fast::supports(&shape);
        let encap = dynamic::encapsulation_id(&ty, rep, Endianness::Little);
        Ok(TypeSupport {
            ty,
            shape,
            fast,
            encap,
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

    /// Serializes a sample through the general (DynamicValue) codec, bypassing the fast one
    /// (for tests that compare both).
    fn serialize_dynamic<'p>(&self, sample: &Bound<'p, PyAny>) -> PyResult<Bound<'p, PyBytes>> {
        let v = self.to_value(sample)?;
        let bytes =
            dynamic::encode(&self.ty, &v, self.rep, Endianness::Little).map_err(value_err)?;
        Ok(PyBytes::new_bound(sample.py(), &bytes))
    }

    /// Deserializes through the general codec (for tests).
    fn deserialize_dynamic(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyObject> {
        let v = dynamic::decode(&self.ty, data).map_err(dyn_err)?;
        from_value(py, &self.shape, v, self.new.bind(py))
    }

    /// The key hash of a serialized sample as Halyard computes it (`scan`: with the key
    /// scanner when it covers the type, else by a full decode), for tests.
    fn serialized_key_hash<'p>(
        &self,
        py: Python<'p>,
        data: &[u8],
        scan: bool,
    ) -> PyResult<Bound<'p, PyBytes>> {
        let h = if scan {
            crate::keyscan::KeyScan::new(&self.ty)
                .and_then(|s| s.key_hash(data))
                .ok_or_else(|| BadParameterError::new_err("the key scanner does not cover this"))?
        } else {
            let v = dynamic::decode(&self.ty, data).map_err(dyn_err)?;
            dynamic::key_hash(&self.ty, &v).map_err(dyn_err)?
        };
        Ok(PyBytes::new_bound(py, &h))
    }

    /// True when the key scanner computes key hashes (no full decode).
    #[getter]
    fn uses_key_scan(&self) -> bool {
        crate::keyscan::KeyScan::new(&self.ty).is_some()
    }

    /// True when samples go through the fast codec.
    #[getter]
    fn uses_fast_codec(&self) -> bool {
        self.fast
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
        if self.fast {
            self.check_class(sample)?;
            return crate::fast::encode(&self.shape, sample, self.rep, self.encap)
                .map_err(|e| e.into_err(sample.py()));
        }
        let v = self.to_value(sample)?;
        dynamic::encode(&self.ty, &v, self.rep, Endianness::Little).map_err(value_err)
    }

    /// Serializes a sample whose key members only matter (dispose, unregister, lookup):
    /// the other members of the top-level struct are replaced by their defaults, so that a
    /// sample built with only its key set (`Msg(id=7)`) works.
    pub(crate) fn encode_key_sample(&self, sample: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        self.check_class(sample)?;
        let (Some(s), Shape::Struct { fields, .. }) = (self.ty.as_struct(), &self.shape) else {
            return self.encode(sample);
        };
        if !s.has_key() {
            return self.encode(sample);
        }
        let mut slots = Vec::with_capacity(fields.len());
        for (m, (name, fs, _)) in s.members.iter().zip(fields) {
            if m.key {
                let a = sample.getattr(name.bind(sample.py()))?;
                let v = to_value(fs, &a).map_err(|e| e.at(&m.name).into_err(sample.py()))?;
                slots.push(Some(v));
            } else if m.optional {
                slots.push(None);
            } else {
                slots.push(Some(dynamic::default_value(&m.ty).map_err(value_err)?));
            }
        }
        let v = DynamicValue::Struct(slots);
        dynamic::encode(&self.ty, &v, self.rep, Endianness::Little).map_err(value_err)
    }

    fn to_value(&self, sample: &Bound<'_, PyAny>) -> PyResult<DynamicValue> {
        self.check_class(sample)?;
        to_value(&self.shape, sample).map_err(|e| e.into_err(sample.py()))
    }

    /// A sample of another class is a [`SampleTypeError`] naming both.
    fn check_class(&self, sample: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Shape::Struct { cls, .. } = &self.shape {
            if !sample.is_instance(cls.bind(sample.py()))? {
                return Err(SampleTypeError::new_err(format!(
                    "a {} sample was given where {} is expected",
                    sample.get_type().name()?,
                    cls.bind(sample.py()).getattr("__name__")?
                )));
            }
        }
        Ok(())
    }

    /// Deserializes bytes into an instance of the class.
    pub(crate) fn decode(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyObject> {
        if self.fast {
            if let Some(o) = crate::fast::decode(py, &self.shape, data, self.new.bind(py)) {
                return Ok(o);
            }
        }
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

/// [`KeySupport`] of a dynamic type: the key scanner when it covers the type, else a full
/// decode.
struct DynKey(DynamicType, Option<crate::keyscan::KeyScan>);

fn cdr(e: DynamicError) -> CdrError {
    let _ = e;
    CdrError::InvalidHeader("sample does not decode with its dynamic type")
}

impl KeySupport for DynKey {
    fn key_hash(&self, payload: &[u8], key_only: bool) -> Result<[u8; 16], CdrError> {
        if !key_only {
            if let Some(h) = self.1.as_ref().and_then(|s| s.key_hash(payload)) {
                return Ok(h);
            }
        }
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
