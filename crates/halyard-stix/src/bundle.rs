//! Reading a STIX 2.1 bundle (STIX 2.1 §8), a TAXII 2.1 envelope, or one bare object, whole
//! or not at all.
//!
//! The input is hostile until checked, so the cheap bounds come first: its size, UTF-8, and
//! a single pass over the bytes (a small state machine that knows when it is inside a JSON
//! string) that measures nesting depth, string lengths and properties per JSON object before
//! serde builds anything. Deep nesting thus gets a clear error instead of serde's recursion
//! limit. Then serde parses, the envelope is recognised, and every object is validated; the
//! first invalid object refuses the whole input, reported with its index and id.

use crate::object::StixObject;
use crate::validate::{self, parse_identifier, Limits, ValidationError};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

fn whole(reason: impl Into<String>) -> ValidationError {
    ValidationError::new("", reason)
}

/// Parses and validates a bundle (`{"type": "bundle", "id": "bundle--<UUID>", "objects":
/// [...]}`), a TAXII 2.1 envelope (`{"objects": [...]}`, optionally with `more` and `next`),
/// or one bare STIX object. All objects are valid or the whole input is refused with the
/// first error; two objects with the same id and the same version are refused too.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Vec<StixObject>, ValidationError> {
    if bytes.len() > limits.max_bytes {
        return Err(whole(format!(
            "input is {} bytes, more than the limit of {} bytes",
            bytes.len(),
            limits.max_bytes
        )));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        whole(format!(
            "input is not UTF-8: invalid byte at offset {}",
            e.valid_up_to()
        ))
    })?;
    scan(text.as_bytes(), limits)?;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        whole(format!(
            "malformed JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let objects = unwrap_envelope(value)?;
    if objects.len() > limits.max_objects {
        return Err(whole(format!(
            "{} objects, more than the limit of {}",
            objects.len(),
            limits.max_objects
        )));
    }
    let mut out = Vec::with_capacity(objects.len());
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (index, raw) in objects.iter().enumerate() {
        let obj = validate::object(raw).map_err(|e| e.at_index(index))?;
        let key = (obj.id.clone(), obj.version().to_string());
        if let Some(first) = seen.insert(key, index) {
            let mut e = ValidationError::new(
                "id",
                format!("duplicate: object {first} has the same id and modified"),
            )
            .at_index(index);
            e.id = Some(obj.id.clone());
            return Err(e);
        }
        out.push(obj);
    }
    Ok(out)
}

/// The objects of a bundle or envelope, or the one bare object.
fn unwrap_envelope(value: Value) -> Result<Vec<Value>, ValidationError> {
    let Value::Object(mut map) = value else {
        return Err(whole(
            "expected a JSON object: a bundle, a TAXII envelope or a STIX object",
        ));
    };
    let is_bundle = map.get("type").and_then(Value::as_str) == Some("bundle");
    if !is_bundle && (map.contains_key("type") || !map.contains_key("objects")) {
        return Ok(vec![Value::Object(map)]);
    }
    if is_bundle {
        check_bundle_header(&map)?;
    } else {
        check_envelope_header(&map)?;
    }
    match map.remove("objects") {
        None if is_bundle => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        _ => Err(ValidationError::new(
            "objects",
            "must be a list of STIX objects",
        )),
    }
}

/// STIX 2.1 §8: `type`, `id` (`bundle--<UUID>`) and `objects`.
fn check_bundle_header(map: &Map<String, Value>) -> Result<(), ValidationError> {
    let id = map.get("id").and_then(Value::as_str);
    match id.map(parse_identifier) {
        Some(Ok("bundle")) => {}
        Some(Ok(t)) => {
            return Err(ValidationError::new(
                "id",
                format!("a bundle id starts with bundle--, not {t}--"),
            ))
        }
        Some(Err(reason)) => return Err(ValidationError::new("id", reason)),
        None => {
            return Err(ValidationError::new(
                "id",
                "a bundle needs an id bundle--<UUID>",
            ))
        }
    }
    for key in map.keys() {
        if !matches!(key.as_str(), "type" | "id" | "objects") && !key.starts_with("x_") {
            return Err(ValidationError::new(
                key.as_str(),
                "unknown property of a bundle (a STIX 2.1 bundle has type, id and objects)",
            ));
        }
    }
    Ok(())
}

/// TAXII 2.1 §3.7 envelope: `objects`, `more`, `next`.
fn check_envelope_header(map: &Map<String, Value>) -> Result<(), ValidationError> {
    for (key, value) in map {
        let ok = match key.as_str() {
            "objects" => true,
            "more" => value.is_boolean(),
            "next" => value.is_string(),
            _ => false,
        };
        if !ok {
            return Err(ValidationError::new(
                key.as_str(),
                "not a property of a TAXII envelope (objects, more, next)",
            ));
        }
    }
    Ok(())
}

/// One open JSON array or object during [`scan`].
struct Open {
    is_object: bool,
    commas: usize,
    nonempty: bool,
}

/// Checks nesting depth, string lengths (as written, escapes included) and properties per
/// object in one pass, without building anything. Malformed JSON is left to serde, which
/// reports it with a line and column.
fn scan(bytes: &[u8], limits: &Limits) -> Result<(), ValidationError> {
    let mut stack: Vec<Open> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0;
    for (offset, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                if offset - string_start - 1 > limits.max_string_bytes {
                    return Err(whole(format!(
                        "string at byte offset {string_start} is longer than the limit of {} bytes",
                        limits.max_string_bytes
                    )));
                }
            }
            continue;
        }
        if !b.is_ascii_whitespace() && !matches!(b, b'}' | b']') {
            if let Some(top) = stack.last_mut() {
                top.nonempty = true;
            }
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = offset;
            }
            b'{' | b'[' => {
                stack.push(Open {
                    is_object: b == b'{',
                    commas: 0,
                    nonempty: false,
                });
                if stack.len() > limits.max_depth {
                    return Err(whole(format!(
                        "JSON nested deeper than the limit of {} at byte offset {offset}",
                        limits.max_depth
                    )));
                }
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.commas += 1;
                    check_properties(top, offset, limits)?;
                }
            }
            b'}' | b']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    if in_string && bytes.len() - string_start > limits.max_string_bytes {
        return Err(whole("unterminated string longer than the string limit"));
    }
    Ok(())
}

fn check_properties(open: &Open, offset: usize, limits: &Limits) -> Result<(), ValidationError> {
    if open.is_object && open.nonempty && open.commas + 1 > limits.max_properties {
        return Err(whole(format!(
            "a JSON object has more than the limit of {} properties (at byte offset {offset})",
            limits.max_properties
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Limits {
        Limits {
            max_bytes: 10_000,
            max_objects: 3,
            max_depth: 4,
            max_string_bytes: 20,
            max_properties: 3,
        }
    }

    #[test]
    fn scan_counts_depth_outside_strings_only() {
        assert!(scan(br#"{"a": "[[[[[[[[[[[["}"#, &small()).is_ok());
        let e = scan(b"[[[[[1]]]]]", &small()).expect_err("too deep");
        assert!(e.reason.contains("nested deeper"), "{e}");
    }

    #[test]
    fn scan_counts_properties_and_string_lengths() {
        assert!(scan(br#"{"a":1,"b":2,"c":[1,2,3,4,5]}"#, &small()).is_ok());
        let e = scan(br#"{"a":1,"b":2,"c":3,"d":4}"#, &small()).expect_err("too many");
        assert!(e.reason.contains("properties"), "{e}");
        let e = scan(br#"{"a":"0123456789012345678901"}"#, &small()).expect_err("long");
        assert!(e.reason.contains("string"), "{e}");
        assert!(scan(br#"{"a":"0123456789\"12345678"}"#, &small()).is_ok());
    }
}
