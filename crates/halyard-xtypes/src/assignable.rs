//! Type assignability (XTypes 1.3 §7.2.4) under the TypeConsistencyEnforcement QoS
//! (§7.6.3.4): whether samples of a writer's type can be delivered to a reader of another.
//!
//! Implemented for the common cases, reader type `T1` "is-assignable-from" writer type `T2`:
//!
//! * aliases are resolved on both sides; primitives must be the same kind (no widening,
//!   as §7.2.4.1 requires);
//! * strings: same character kind; bounds are compared unless `ignore_string_bounds`
//!   (the reader's bound must hold the writer's), sequences likewise with
//!   `ignore_sequence_bounds`, maps with the sequence flag; arrays need equal dimensions;
//!   element (and key) types must be assignable;
//! * enums: an enumerator name present in both has the same value, and a value present in
//!   both has the same name (names ignored with `ignore_member_names`); bitmasks need the same
//!   bit bound and the same flag positions named alike;
//! * structs: the same extensibility; final: the same members in order; appendable: the
//!   members they share as a prefix are assignable pairwise (extra trailing members on either
//!   side are tolerated); mutable: members matched by id, a shared id must have the same name
//!   (unless `ignore_member_names`) and an assignable type, a shared name must have the same
//!   id, the key members must be the same, writer members flagged `@must_understand` must
//!   exist in the reader, and at least one member must be shared;
//! * unions: the same extensibility and discriminator type; cases sharing a label have
//!   assignable types; final unions have the same labels; at least one label is shared.
//!
//! `prevent_type_widening` forbids the reader from being wider than the writer: larger
//! bounds, or members the writer does not have. `kind = DisallowTypeCoercion` requires the
//! types to be identical (up to the bound flags). `force_type_validation` concerns matching
//! when a peer sent no type information, which the caller decides; both types are known here.

use std::collections::BTreeMap;

use crate::dynamic::*;

/// TypeConsistencyEnforcementQosPolicy kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeConsistencyKind {
    /// The types must be the same.
    DisallowTypeCoercion,
    /// The reader's type must be assignable from the writer's (the default).
    AllowTypeCoercion,
}

/// TypeConsistencyEnforcementQosPolicy (XTypes 1.3 §7.6.3.4.1) with its defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeConsistency {
    /// Coercion allowed or not.
    pub kind: TypeConsistencyKind,
    /// Sequence and map bounds are not compared (default true).
    pub ignore_sequence_bounds: bool,
    /// String bounds are not compared (default true).
    pub ignore_string_bounds: bool,
    /// Member, enumerator and flag names are not compared (default false).
    pub ignore_member_names: bool,
    /// The reader may not be wider than the writer (default false).
    pub prevent_type_widening: bool,
    /// Types must be validated even without type information (default false; see the module).
    pub force_type_validation: bool,
}

impl Default for TypeConsistency {
    fn default() -> Self {
        TypeConsistency {
            kind: TypeConsistencyKind::AllowTypeCoercion,
            ignore_sequence_bounds: true,
            ignore_string_bounds: true,
            ignore_member_names: false,
            prevent_type_widening: false,
            force_type_validation: false,
        }
    }
}

fn no(why: impl Into<String>) -> DynamicError {
    DynamicError::NotAssignable {
        path: String::new(),
        why: why.into(),
    }
}

/// Ok when a reader of type `reader` may receive samples written with type `writer`;
/// otherwise [`DynamicError::NotAssignable`] naming the member path and the rule.
pub fn assignable(
    writer: &DynamicType,
    reader: &DynamicType,
    tc: &TypeConsistency,
) -> Result<(), DynamicError> {
    Check { tc, depth: 0 }.types(writer.resolved(), reader.resolved())
}

struct Check<'a> {
    tc: &'a TypeConsistency,
    depth: usize,
}

impl Check<'_> {
    fn identical(&self) -> bool {
        self.tc.kind == TypeConsistencyKind::DisallowTypeCoercion
    }

    fn types(&mut self, w: &DynamicType, r: &DynamicType) -> Result<(), DynamicError> {
        self.depth += 1;
        if self.depth > crate::registry::MAX_TYPE_DEPTH {
            return Err(no("types nested too deeply"));
        }
        let res = self.nodes(w.resolved(), r.resolved());
        self.depth -= 1;
        res
    }

    fn nodes(&mut self, w: &DynamicType, r: &DynamicType) -> Result<(), DynamicError> {
        match (w.node(), r.node()) {
            (TypeNode::Primitive(a), TypeNode::Primitive(b)) if a == b => Ok(()),
            (TypeNode::String8 { bound: a }, TypeNode::String8 { bound: b })
            | (TypeNode::String16 { bound: a }, TypeNode::String16 { bound: b }) => {
                self.bounds(*a, *b, self.tc.ignore_string_bounds, "string")
            }
            (
                TypeNode::Sequence {
                    element: we,
                    bound: wb,
                },
                TypeNode::Sequence {
                    element: re,
                    bound: rb,
                },
            ) => {
                self.bounds(*wb, *rb, self.tc.ignore_sequence_bounds, "sequence")?;
                self.types(we, re).map_err(|e| e.at("[]"))
            }
            (
                TypeNode::Array {
                    element: we,
                    dims: wd,
                },
                TypeNode::Array {
                    element: re,
                    dims: rd,
                },
            ) => {
                if wd != rd {
                    return Err(no(format!("array dimensions {wd:?} and {rd:?} differ")));
                }
                self.types(we, re).map_err(|e| e.at("[]"))
            }
            (
                TypeNode::Map {
                    key: wk,
                    value: wv,
                    bound: wb,
                },
                TypeNode::Map {
                    key: rk,
                    value: rv,
                    bound: rb,
                },
            ) => {
                self.bounds(*wb, *rb, self.tc.ignore_sequence_bounds, "map")?;
                self.types(wk, rk).map_err(|e| e.at("key"))?;
                self.types(wv, rv).map_err(|e| e.at("[]"))
            }
            (TypeNode::Enum(a), TypeNode::Enum(b)) => self.enums(a, b),
            (TypeNode::Bitmask(a), TypeNode::Bitmask(b)) => self.bitmasks(a, b),
            (TypeNode::Struct(a), TypeNode::Struct(b)) => self.structs(a, b),
            (TypeNode::Union(a), TypeNode::Union(b)) => self.unions(a, b),
            _ => Err(no(format!(
                "writer type {} and reader type {} are of different kinds",
                label(w),
                label(r)
            ))),
        }
    }

    /// Bounds (0 = unbounded): the reader must hold what the writer sends; equal when
    /// widening is prevented or coercion disallowed.
    fn bounds(&self, w: u32, r: u32, ignore: bool, what: &str) -> Result<(), DynamicError> {
        if ignore || w == r {
            return Ok(());
        }
        let unbounded = |b: u32| if b == 0 { u64::MAX } else { u64::from(b) };
        if self.identical() || self.tc.prevent_type_widening {
            return Err(no(format!("{what} bounds {w} and {r} differ")));
        }
        if unbounded(r) < unbounded(w) {
            return Err(no(format!(
                "reader {what} bound {r} is below the writer's {w}"
            )));
        }
        Ok(())
    }

    fn names_differ(&self, a: &str, b: &str) -> bool {
        !self.tc.ignore_member_names && a != b
    }

    fn enums(&self, w: &EnumDesc, r: &EnumDesc) -> Result<(), DynamicError> {
        for lw in &w.literals {
            if let Some(lr) = r.literals.iter().find(|l| l.name == lw.name) {
                if lr.value != lw.value && !self.tc.ignore_member_names {
                    return Err(no(format!(
                        "enumerator {} is {} in the writer, {} in the reader",
                        lw.name, lw.value, lr.value
                    )));
                }
            }
            if let Some(lr) = r.by_value(lw.value) {
                if self.names_differ(&lr.name, &lw.name) {
                    return Err(no(format!(
                        "enum value {} is {} in the writer, {} in the reader",
                        lw.value, lw.name, lr.name
                    )));
                }
            }
        }
        if self.identical() && w.literals.len() != r.literals.len() {
            return Err(no("enums have different numbers of enumerators"));
        }
        Ok(())
    }

    fn bitmasks(&self, w: &BitmaskDesc, r: &BitmaskDesc) -> Result<(), DynamicError> {
        if w.bit_bound != r.bit_bound {
            return Err(no(format!(
                "bitmask bit_bound {} and {} differ",
                w.bit_bound, r.bit_bound
            )));
        }
        for (name, pos) in &w.flags {
            if let Some((rn, _)) = r.flags.iter().find(|(_, p)| p == pos) {
                if self.names_differ(rn, name) {
                    return Err(no(format!(
                        "bit {pos} is {name} in the writer, {rn} in the reader"
                    )));
                }
            }
        }
        Ok(())
    }

    fn member(&mut self, wm: &MemberDesc, rm: &MemberDesc) -> Result<(), DynamicError> {
        if self.names_differ(&wm.name, &rm.name) {
            return Err(no(format!(
                "member {} is named {} by the reader",
                wm.name, rm.name
            )));
        }
        if wm.key != rm.key {
            return Err(no("key in one type only").at(&rm.name));
        }
        self.types(&wm.ty, &rm.ty).map_err(|e| e.at(&rm.name))
    }

    fn structs(&mut self, w: &StructDesc, r: &StructDesc) -> Result<(), DynamicError> {
        if w.extensibility != r.extensibility {
            return Err(no(format!(
                "extensibility {:?} (writer) and {:?} (reader) differ",
                w.extensibility, r.extensibility
            )));
        }
        let wider = r.members.len() > w.members.len();
        if wider && self.tc.prevent_type_widening {
            return Err(no(
                "the reader has members the writer lacks (type widening prevented)",
            ));
        }
        match w.extensibility {
            Extensibility::Final => {
                if w.members.len() != r.members.len() {
                    return Err(no(format!(
                        "final structs with {} and {} members",
                        w.members.len(),
                        r.members.len()
                    )));
                }
                self.prefix(w, r)
            }
            Extensibility::Appendable => {
                if self.identical() && w.members.len() != r.members.len() {
                    return Err(no("member counts differ (type coercion disallowed)"));
                }
                self.prefix(w, r)
            }
            Extensibility::Mutable => self.mutable(w, r),
        }
    }

    fn prefix(&mut self, w: &StructDesc, r: &StructDesc) -> Result<(), DynamicError> {
        for (wm, rm) in w.members.iter().zip(&r.members) {
            if wm.optional != rm.optional {
                return Err(no("optional in one type only").at(&rm.name));
            }
            self.member(wm, rm)?;
        }
        Ok(())
    }

    fn mutable(&mut self, w: &StructDesc, r: &StructDesc) -> Result<(), DynamicError> {
        let by_id: BTreeMap<u32, &MemberDesc> = r.members.iter().map(|m| (m.id, m)).collect();
        let mut shared = 0;
        for wm in &w.members {
            if let Some(rm) = r
                .members
                .iter()
                .find(|m| m.name == wm.name && m.id != wm.id)
            {
                if !self.tc.ignore_member_names {
                    return Err(no(format!(
                        "member {} has id {} in the writer, {} in the reader",
                        wm.name, wm.id, rm.id
                    )));
                }
            }
            match by_id.get(&wm.id) {
                Some(rm) => {
                    shared += 1;
                    self.member(wm, rm)?;
                }
                None if wm.key => return Err(no("key member missing in the reader").at(&wm.name)),
                None if wm.must_understand => {
                    return Err(no("must-understand member missing in the reader").at(&wm.name))
                }
                None => {}
            }
        }
        if let Some(rm) = r
            .members
            .iter()
            .find(|rm| rm.key && !w.members.iter().any(|m| m.id == rm.id))
        {
            return Err(no("key member missing in the writer").at(&rm.name));
        }
        if shared == 0 && !(w.members.is_empty() && r.members.is_empty()) {
            return Err(no("no member in common"));
        }
        if self.identical() && (shared != w.members.len() || shared != r.members.len()) {
            return Err(no("member sets differ (type coercion disallowed)"));
        }
        Ok(())
    }

    fn unions(&mut self, w: &UnionDesc, r: &UnionDesc) -> Result<(), DynamicError> {
        if w.extensibility != r.extensibility {
            return Err(no("union extensibilities differ"));
        }
        self.types(&w.discriminator, &r.discriminator)
            .map_err(|e| e.at("discriminator"))?;
        let mut shared = 0;
        for wc in &w.cases {
            for l in &wc.labels {
                let Some(rc) = r.cases.iter().find(|c| c.labels.contains(l)) else {
                    if w.extensibility == Extensibility::Final {
                        return Err(no(format!("label {l} missing in the reader's final union")));
                    }
                    continue;
                };
                shared += 1;
                if self.names_differ(&wc.name, &rc.name) {
                    return Err(no(format!(
                        "label {l} selects {} in the writer, {} in the reader",
                        wc.name, rc.name
                    )));
                }
                self.types(&wc.ty, &rc.ty).map_err(|e| e.at(&rc.name))?;
            }
        }
        let labels = |u: &UnionDesc| u.cases.iter().map(|c| c.labels.len()).sum::<usize>();
        if w.extensibility == Extensibility::Final && labels(w) != labels(r) {
            return Err(no("final unions with different labels"));
        }
        if shared == 0 && labels(w) + labels(r) > 0 {
            return Err(no("no case label in common"));
        }
        Ok(())
    }
}

fn label(t: &DynamicType) -> String {
    match t.node() {
        TypeNode::Primitive(p) => format!("{p:?}"),
        TypeNode::String8 { .. } => "string".into(),
        TypeNode::String16 { .. } => "wstring".into(),
        TypeNode::Sequence { .. } => "sequence".into(),
        TypeNode::Array { .. } => "array".into(),
        TypeNode::Map { .. } => "map".into(),
        _ => t.name().unwrap_or("?").to_owned(),
    }
}
