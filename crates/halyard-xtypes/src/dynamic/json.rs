//! JSON views of dynamic values, for `halyard sub` / `halyard pub`.
//!
//! Shape: structs are objects keyed by member name (an absent optional member is `null`);
//! enums are their enumerator name; bitmasks a list of flag names; sequences lists; arrays
//! nested lists (one level per dimension); maps objects when the key is a string or an
//! integer (keys as strings), otherwise lists of `[key, value]`; unions
//! `{"discriminator": d, "<case>": value}`; chars one-character strings; non-finite floats
//! the strings `"NaN"`, `"Infinity"`, `"-Infinity"`. The `cyclonedds` 11 CLI has no JSON
//! output of its own (`cyclonedds subscribe` prints Python reprs), so this follows the same
//! structure: member names, enumerator names, case names.

use serde_json::{Map, Number, Value};

use super::codec::{array_len, type_label};
use super::types::*;
use super::{default_value, label_value, DynamicError, DynamicValue};
use crate::PrimitiveKind;

/// Options of [`from_json`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonOptions {
    /// Give missing non-optional members their default value (0, "", first enumerator …)
    /// instead of failing with the list of missing members.
    pub default_missing: bool,
}

/// The JSON form of `v`, a value of `t`.
pub fn to_json(t: &DynamicType, v: &DynamicValue) -> Result<Value, DynamicError> {
    let t = t.resolved();
    use DynamicValue as V;
    Ok(match (t.node(), v) {
        (_, V::Bool(b)) => Value::Bool(*b),
        (_, V::Byte(x) | V::UInt8(x)) => Value::from(*x),
        (_, V::Int8(x)) => Value::from(*x),
        (_, V::Int16(x)) => Value::from(*x),
        (_, V::UInt16(x)) => Value::from(*x),
        (_, V::Int32(x)) if !matches!(t.node(), TypeNode::Enum(_)) => Value::from(*x),
        (_, V::UInt32(x)) => Value::from(*x),
        (_, V::Int64(x)) => Value::from(*x),
        (_, V::UInt64(x)) => Value::from(*x),
        (_, V::Float32(x)) => float(f64::from(*x)),
        (_, V::Float64(x)) => float(*x),
        (_, V::Char8(c) | V::Char16(c)) => Value::String(c.to_string()),
        (_, V::String(s)) => Value::String(s.clone()),
        (TypeNode::Enum(e), V::Enum(x)) => match e.by_value(*x) {
            Some(l) => Value::String(l.name.clone()),
            None => Value::from(*x),
        },
        (TypeNode::Bitmask(b), V::Bitmask(bits)) => bitmask_json(b, *bits),
        (TypeNode::Sequence { element, .. }, V::Sequence(items)) => list(element, items)?,
        (TypeNode::Array { element, dims }, V::Array(items)) => nested(element, dims, items)?,
        (TypeNode::Map { key, value, .. }, V::Map(pairs)) => map_json(key, value, pairs)?,
        (TypeNode::Struct(s), V::Struct(slots)) => {
            if slots.len() != s.members.len() {
                return Err(DynamicError::value(format!(
                    "struct {} has {} members, value has {}",
                    s.name,
                    s.members.len(),
                    slots.len()
                )));
            }
            let mut o = Map::new();
            for (m, slot) in s.members.iter().zip(slots) {
                let j = match slot {
                    Some(v) => to_json(&m.ty, v).map_err(|e| e.at(&m.name))?,
                    None => Value::Null,
                };
                o.insert(m.name.clone(), j);
            }
            Value::Object(o)
        }
        (
            TypeNode::Union(u),
            V::Union {
                discriminator,
                case,
            },
        ) => {
            let mut o = Map::new();
            o.insert(
                "discriminator".into(),
                to_json(&u.discriminator, discriminator)?,
            );
            if let Some((i, v)) = case {
                let c = u
                    .cases
                    .get(*i)
                    .ok_or_else(|| DynamicError::value("case index out of range"))?;
                o.insert(
                    c.name.clone(),
                    to_json(&c.ty, v).map_err(|e| e.at(&c.name))?,
                );
            }
            Value::Object(o)
        }
        _ => {
            return Err(DynamicError::value(format!(
                "value does not fit type {}",
                type_label(t)
            )))
        }
    })
}

fn float(x: f64) -> Value {
    match Number::from_f64(x) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("NaN".into()),
        None if x > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}

fn bitmask_json(b: &BitmaskDesc, bits: u64) -> Value {
    let mut out = Vec::new();
    let mut rest = bits;
    for (name, pos) in &b.flags {
        if *pos < 64 && bits & (1u64 << pos) != 0 {
            out.push(Value::String(name.clone()));
            rest &= !(1u64 << pos);
        }
    }
    for pos in 0..64 {
        if rest & (1u64 << pos) != 0 {
            out.push(Value::from(pos));
        }
    }
    Value::Array(out)
}

fn list(element: &DynamicType, items: &[DynamicValue]) -> Result<Value, DynamicError> {
    let mut out = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        out.push(to_json(element, v).map_err(|e| e.at(&format!("[{i}]")))?);
    }
    Ok(Value::Array(out))
}

fn nested(
    element: &DynamicType,
    dims: &[u32],
    items: &[DynamicValue],
) -> Result<Value, DynamicError> {
    match dims {
        [] | [_] => list(element, items),
        [first, rest @ ..] => {
            let step = usize::try_from(array_len(rest))
                .unwrap_or(usize::MAX)
                .max(1);
            let mut out = Vec::with_capacity(*first as usize);
            for (i, chunk) in items.chunks(step).enumerate() {
                out.push(nested(element, rest, chunk).map_err(|e| e.at(&format!("[{i}]")))?);
            }
            Ok(Value::Array(out))
        }
    }
}

fn key_as_string(key: &DynamicType) -> bool {
    match key.resolved().node() {
        TypeNode::String8 { .. } | TypeNode::String16 { .. } => true,
        TypeNode::Primitive(p) => !matches!(
            p,
            PrimitiveKind::Boolean
                | PrimitiveKind::Float32
                | PrimitiveKind::Float64
                | PrimitiveKind::Float128
        ),
        _ => false,
    }
}

fn map_json(
    key: &DynamicType,
    value: &DynamicType,
    pairs: &[(DynamicValue, DynamicValue)],
) -> Result<Value, DynamicError> {
    if key_as_string(key) {
        let mut o = Map::new();
        for (k, v) in pairs {
            let kj = to_json(key, k)?;
            let ks = match kj {
                Value::String(s) => s,
                other => other.to_string(),
            };
            let vj = to_json(value, v).map_err(|e| e.at(&ks))?;
            o.insert(ks, vj);
        }
        return Ok(Value::Object(o));
    }
    let mut out = Vec::with_capacity(pairs.len());
    for (i, (k, v)) in pairs.iter().enumerate() {
        let at = |e: DynamicError| e.at(&format!("[{i}]"));
        out.push(Value::Array(vec![
            to_json(key, k).map_err(at)?,
            to_json(value, v).map_err(at)?,
        ]));
    }
    Ok(Value::Array(out))
}

// ---------------------------------------------------------------------------------------------

fn expected(what: &str, found: &Value) -> DynamicError {
    let mut f = found.to_string();
    if f.len() > 40 {
        f.truncate(40);
        f.push('…');
    }
    DynamicError::value(format!("expected {what}, found {f}"))
}

/// The value of `t` that `json` describes (the shape [`to_json`] produces).
pub fn from_json(
    t: &DynamicType,
    json: &Value,
    opts: JsonOptions,
) -> Result<DynamicValue, DynamicError> {
    let t = t.resolved();
    Ok(match t.node() {
        TypeNode::Primitive(p) => primitive(*p, json)?,
        TypeNode::String8 { bound } | TypeNode::String16 { bound } => {
            let s = json.as_str().ok_or_else(|| expected("a string", json))?;
            // Bounds count what the wire counts: bytes of a string, UTF-16 units of a wstring.
            let len = match t.node() {
                TypeNode::String8 { .. } => s.len(),
                _ => s.encode_utf16().count(),
            };
            if *bound != 0 && len > *bound as usize {
                return Err(DynamicError::value(format!(
                    "string of length {len} exceeds the bound {bound}"
                )));
            }
            DynamicValue::String(s.to_owned())
        }
        TypeNode::Enum(e) => match json {
            Value::String(s) => DynamicValue::Enum(
                e.by_name(s)
                    .ok_or_else(|| {
                        DynamicError::value(format!("{s:?} is no enumerator of {}", e.name))
                    })?
                    .value,
            ),
            Value::Number(n) => {
                let x = n
                    .as_i64()
                    .and_then(|x| i32::try_from(x).ok())
                    .ok_or_else(|| expected("an enumerator", json))?;
                e.by_value(x).ok_or_else(|| {
                    DynamicError::value(format!("{x} is no enumerator of {}", e.name))
                })?;
                DynamicValue::Enum(x)
            }
            _ => return Err(expected("an enumerator name", json)),
        },
        TypeNode::Bitmask(b) => DynamicValue::Bitmask(bitmask(b, json)?),
        TypeNode::Sequence { element, bound } => {
            let items = json.as_array().ok_or_else(|| expected("a list", json))?;
            if *bound != 0 && items.len() > *bound as usize {
                return Err(DynamicError::value(format!(
                    "{} elements exceed the bound {bound}",
                    items.len()
                )));
            }
            DynamicValue::Sequence(elements(element, items, opts)?)
        }
        TypeNode::Array { element, dims } => {
            let mut flat = Vec::new();
            flatten(element, dims, json, opts, &mut flat)?;
            DynamicValue::Array(flat)
        }
        TypeNode::Map { key, value, .. } => map(key, value, json, opts)?,
        TypeNode::Struct(s) => structure(s, json, opts)?,
        TypeNode::Union(u) => union(u, json, opts)?,
        TypeNode::Alias { .. } => return Err(DynamicError::value("unresolved alias")),
    })
}

fn elements(
    element: &DynamicType,
    items: &[Value],
    opts: JsonOptions,
) -> Result<Vec<DynamicValue>, DynamicError> {
    items
        .iter()
        .enumerate()
        .map(|(i, j)| from_json(element, j, opts).map_err(|e| e.at(&format!("[{i}]"))))
        .collect()
}

fn flatten(
    element: &DynamicType,
    dims: &[u32],
    json: &Value,
    opts: JsonOptions,
    out: &mut Vec<DynamicValue>,
) -> Result<(), DynamicError> {
    let Some((first, rest)) = dims.split_first() else {
        out.push(from_json(element, json, opts)?);
        return Ok(());
    };
    let items = json.as_array().ok_or_else(|| expected("a list", json))?;
    if items.len() != *first as usize {
        return Err(DynamicError::value(format!(
            "array dimension is {first}, list has {} elements",
            items.len()
        )));
    }
    for (i, j) in items.iter().enumerate() {
        flatten(element, rest, j, opts, out).map_err(|e| e.at(&format!("[{i}]")))?;
    }
    Ok(())
}

fn integer<T: TryFrom<i64> + TryFrom<u64>>(json: &Value, what: &str) -> Result<T, DynamicError> {
    let r = match json {
        Value::Number(n) => n
            .as_i64()
            .and_then(|x| T::try_from(x).ok())
            .or_else(|| n.as_u64().and_then(|x| T::try_from(x).ok())),
        _ => None,
    };
    r.ok_or_else(|| expected(what, json))
}

fn primitive(p: PrimitiveKind, json: &Value) -> Result<DynamicValue, DynamicError> {
    use DynamicValue as V;
    use PrimitiveKind as P;
    Ok(match p {
        P::Boolean => V::Bool(
            json.as_bool()
                .ok_or_else(|| expected("true or false", json))?,
        ),
        P::Byte => V::Byte(integer(json, "an octet (0..=255)")?),
        P::UInt8 => V::UInt8(integer(json, "a uint8")?),
        P::Int8 => V::Int8(integer(json, "an int8")?),
        P::Int16 => V::Int16(integer(json, "a short")?),
        P::UInt16 => V::UInt16(integer(json, "an unsigned short")?),
        P::Int32 => V::Int32(integer(json, "a long")?),
        P::UInt32 => V::UInt32(integer(json, "an unsigned long")?),
        P::Int64 => V::Int64(integer(json, "a long long")?),
        P::UInt64 => V::UInt64(integer(json, "an unsigned long long")?),
        P::Float32 => V::Float32(number(json)? as f32),
        P::Float64 => V::Float64(number(json)?),
        P::Char8 | P::Char16 => {
            let s = json
                .as_str()
                .ok_or_else(|| expected("a one-character string", json))?;
            let mut it = s.chars();
            let (Some(c), None) = (it.next(), it.next()) else {
                return Err(expected("a one-character string", json));
            };
            if p == P::Char8 && u32::from(c) > 0xff {
                return Err(DynamicError::value(format!("{c:?} is not a Latin-1 char")));
            }
            if p == P::Char8 {
                V::Char8(c)
            } else {
                V::Char16(c)
            }
        }
        P::Float128 => return Err(DynamicError::Unsupported("float128 (long double) values")),
    })
}

fn number(json: &Value) -> Result<f64, DynamicError> {
    match json {
        Value::Number(n) => n.as_f64().ok_or_else(|| expected("a number", json)),
        Value::String(s) if s == "NaN" => Ok(f64::NAN),
        Value::String(s) if s == "Infinity" => Ok(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
        _ => Err(expected("a number", json)),
    }
}

fn bitmask(b: &BitmaskDesc, json: &Value) -> Result<u64, DynamicError> {
    if let Some(x) = json.as_u64() {
        return Ok(x);
    }
    let items = json
        .as_array()
        .ok_or_else(|| expected("a list of flag names", json))?;
    let mut bits = 0u64;
    for j in items {
        let pos = match j {
            Value::String(s) => b
                .flags
                .iter()
                .find(|(n, _)| n == s)
                .map(|(_, p)| *p)
                .ok_or_else(|| DynamicError::value(format!("{s:?} is no flag of {}", b.name)))?,
            other => integer::<u16>(other, "a flag name")?,
        };
        if pos >= 64 || pos >= b.bit_bound {
            return Err(DynamicError::value(format!(
                "bit {pos} beyond bit_bound {}",
                b.bit_bound
            )));
        }
        bits |= 1u64 << pos;
    }
    Ok(bits)
}

fn map(
    key: &DynamicType,
    value: &DynamicType,
    json: &Value,
    opts: JsonOptions,
) -> Result<DynamicValue, DynamicError> {
    let mut pairs = Vec::new();
    match json {
        Value::Object(o) => {
            for (k, v) in o {
                let kj = match key.resolved().node() {
                    TypeNode::String8 { .. } | TypeNode::String16 { .. } => {
                        Value::String(k.clone())
                    }
                    _ => serde_json::from_str(k)
                        .map_err(|_| expected("a map key", &Value::String(k.clone())))?,
                };
                let kv = from_json(key, &kj, opts).map_err(|e| e.at(k))?;
                pairs.push((kv, from_json(value, v, opts).map_err(|e| e.at(k))?));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let at = |e: DynamicError| e.at(&format!("[{i}]"));
                let kv = item
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .ok_or_else(|| at(expected("[key, value]", item)))?;
                pairs.push((
                    from_json(key, &kv[0], opts).map_err(at)?,
                    from_json(value, &kv[1], opts).map_err(at)?,
                ));
            }
        }
        _ => return Err(expected("an object or a list of [key, value]", json)),
    }
    Ok(DynamicValue::Map(pairs))
}

fn structure(
    s: &StructDesc,
    json: &Value,
    opts: JsonOptions,
) -> Result<DynamicValue, DynamicError> {
    let o = json
        .as_object()
        .ok_or_else(|| expected("an object", json))?;
    if let Some(k) = o.keys().find(|k| s.member(k).is_none()) {
        return Err(DynamicError::value(format!(
            "{} has no member {k:?}",
            s.name
        )));
    }
    let mut slots = Vec::with_capacity(s.members.len());
    let mut missing = Vec::new();
    for m in &s.members {
        match o.get(&m.name) {
            Some(Value::Null) | None if m.optional => slots.push(None),
            Some(j) => slots.push(Some(from_json(&m.ty, j, opts).map_err(|e| e.at(&m.name))?)),
            None if opts.default_missing => {
                slots.push(Some(default_value(&m.ty).map_err(|e| e.at(&m.name))?))
            }
            None => {
                missing.push(m.name.clone());
                slots.push(None);
            }
        }
    }
    if !missing.is_empty() {
        return Err(DynamicError::value(format!(
            "missing member(s): {}",
            missing.join(", ")
        )));
    }
    Ok(DynamicValue::Struct(slots))
}

fn union(u: &UnionDesc, json: &Value, opts: JsonOptions) -> Result<DynamicValue, DynamicError> {
    let o = json
        .as_object()
        .ok_or_else(|| expected("an object", json))?;
    let mut names = o.keys().filter(|k| *k != "discriminator");
    let case_name = names.next();
    if let Some(extra) = names.next() {
        return Err(DynamicError::value(format!(
            "union {} given two cases ({extra:?} too)",
            u.name
        )));
    }
    let given = match o.get("discriminator") {
        Some(Value::Null) | None => None,
        Some(j) => Some(from_json(&u.discriminator, j, opts).map_err(|e| e.at("discriminator"))?),
    };
    let Some(name) = case_name else {
        let d =
            given.ok_or_else(|| DynamicError::value("union needs a discriminator or a case"))?;
        let label = d.as_label().unwrap_or(0);
        if u.case_for(label).is_some() {
            return Err(DynamicError::value(
                "the discriminator selects a case but no value is given",
            ));
        }
        return Ok(DynamicValue::Union {
            discriminator: Box::new(d),
            case: None,
        });
    };
    let i = u
        .cases
        .iter()
        .position(|c| &c.name == name)
        .ok_or_else(|| DynamicError::value(format!("{} has no case {name:?}", u.name)))?;
    let c = &u.cases[i];
    let v = from_json(&c.ty, &o[name.as_str()], opts).map_err(|e| e.at(name))?;
    let disc = match given {
        Some(d) => d,
        None => label_value(&u.discriminator, implied_label(u, i)?),
    };
    if u.case_for(disc.as_label().unwrap_or(i64::MIN)) != Some(i) {
        return Err(DynamicError::value(format!(
            "discriminator does not select case {name:?}"
        )));
    }
    Ok(DynamicValue::Union {
        discriminator: Box::new(disc),
        case: Some((i, Box::new(v))),
    })
}

/// The discriminator for case `i` when JSON omits it: its first label, or for the default
/// case the smallest non-negative value no case lists (for enums: the first such enumerator).
fn implied_label(u: &UnionDesc, i: usize) -> Result<i64, DynamicError> {
    let c = &u.cases[i];
    if let Some(l) = c.labels.first() {
        return Ok(i64::from(*l));
    }
    let used = |x: i64| {
        u.cases
            .iter()
            .any(|c| c.labels.iter().any(|l| i64::from(*l) == x))
    };
    if let TypeNode::Enum(e) = u.discriminator.resolved().node() {
        return e
            .literals
            .iter()
            .map(|l| i64::from(l.value))
            .find(|x| !used(*x))
            .ok_or_else(|| DynamicError::value("no enumerator is left for the default case"));
    }
    (0..=i64::from(u16::MAX))
        .find(|x| !used(*x))
        .ok_or_else(|| DynamicError::value("no value is left for the default case"))
}
