//! Flat, readable columns of a sample (for `halyard sub` in table form): struct members are
//! flattened into dotted paths (`pos.x`), everything else (sequences, arrays, maps, unions)
//! is one cell in compact JSON; strings and enumerators print bare, absent optionals empty.

use serde_json::Value;

use super::json::to_json;
use super::types::*;
use super::{DynamicError, DynamicValue};

/// The column names of `t` (dotted member paths; `value` for a non-struct type).
pub fn column_names(t: &DynamicType) -> Vec<String> {
    let mut out = Vec::new();
    names(t, "", &mut out, 0);
    out
}

fn names(t: &DynamicType, prefix: &str, out: &mut Vec<String>, depth: usize) {
    match t.as_struct() {
        Some(s) if depth < crate::registry::MAX_TYPE_DEPTH => {
            for m in &s.members {
                names(&m.ty, &join(prefix, &m.name), out, depth + 1);
            }
        }
        _ => out.push(if prefix.is_empty() {
            "value".to_owned()
        } else {
            prefix.to_owned()
        }),
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The cells of `v`, in the order of [`column_names`].
pub fn columns(t: &DynamicType, v: &DynamicValue) -> Result<Vec<String>, DynamicError> {
    let mut out = Vec::new();
    cells(t, Some(v), &mut out, 0)?;
    Ok(out)
}

fn cells(
    t: &DynamicType,
    v: Option<&DynamicValue>,
    out: &mut Vec<String>,
    depth: usize,
) -> Result<(), DynamicError> {
    match (t.as_struct(), v) {
        (Some(s), Some(DynamicValue::Struct(slots))) if depth < crate::registry::MAX_TYPE_DEPTH => {
            for (m, slot) in s.members.iter().zip(slots) {
                cells(&m.ty, slot.as_ref(), out, depth + 1).map_err(|e| e.at(&m.name))?;
            }
            Ok(())
        }
        (Some(s), None) if depth < crate::registry::MAX_TYPE_DEPTH => {
            for m in &s.members {
                cells(&m.ty, None, out, depth + 1)?;
            }
            Ok(())
        }
        (_, None) => {
            out.push(String::new());
            Ok(())
        }
        (_, Some(v)) => {
            out.push(match to_json(t, v)? {
                Value::String(s) => s,
                other => other.to_string(),
            });
            Ok(())
        }
    }
}
