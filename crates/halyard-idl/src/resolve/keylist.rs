//! `#pragma keylist TYPE key...` (the Cyclone DDS / OpenSplice way of naming key members):
//! the type is looked up in the module where the line appears, and each key must be a member
//! of it or of a base.

use super::{fqn, Resolver};
use crate::ast::{Definition, ScopedName, Spec, StructDef};
use crate::error::ErrorKind;
use crate::parser::ModuleExtent;
use crate::preprocess::RawPragma;

impl Resolver {
    /// Applies `#pragma keylist TYPE key...` in the module where the line appears.
    pub(super) fn pragma(&mut self, spec: &mut Spec, pragma: &RawPragma, extents: &[ModuleExtent]) {
        let mut words = pragma
            .text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty());
        if words.next() != Some("keylist") {
            return;
        }
        let Some(type_word) = words.next() else {
            let kind = ErrorKind::BadDirective {
                directive: "pragma keylist".into(),
                reason: "expected a type name",
            };
            return self.error(&pragma.location, kind);
        };
        let scope = extents
            .iter()
            .filter(|e| e.start < pragma.offset && pragma.offset <= e.end)
            .max_by_key(|e| e.path.len())
            .map(|e| e.path.clone())
            .unwrap_or_default();
        let absolute = type_word.starts_with("::");
        let parts = type_word
            .trim_start_matches("::")
            .split("::")
            .map(str::to_string)
            .collect();
        let name = ScopedName {
            absolute,
            parts,
            location: pragma.location.clone(),
            resolved: None,
        };
        let Some(full) = self.lookup(&scope, &name) else {
            return self.error(
                &pragma.location,
                ErrorKind::UnknownName {
                    name: type_word.to_string(),
                },
            );
        };
        let keys: Vec<&str> = words.collect();
        let Some(st) = find_struct_mut(&mut spec.definitions, &full, &mut Vec::new()) else {
            let found = self.symbols[&full].kind.describe();
            return self.error(
                &pragma.location,
                ErrorKind::WrongKind {
                    name: full,
                    expected: "struct",
                    found,
                },
            );
        };
        let inherited = self.inherited_members(&full);
        for key in keys {
            let first = key.split('.').next().unwrap_or(key);
            match st.members.iter_mut().find(|m| m.name.name == first) {
                Some(m) => m.typed.key = true,
                None if inherited.iter().any(|n| n == first) => {}
                None => {
                    let kind = ErrorKind::KeyNotMember {
                        type_name: full.clone(),
                        key: key.to_string(),
                    };
                    self.error(&pragma.location, kind);
                }
            }
        }
    }
}

/// The struct named `full` in `defs`.
fn find_struct_mut<'a>(
    defs: &'a mut [Definition],
    full: &str,
    scope: &mut Vec<String>,
) -> Option<&'a mut StructDef> {
    for def in defs {
        match def {
            Definition::Module(m) => {
                scope.push(m.name.name.clone());
                let found = find_struct_mut(&mut m.definitions, full, scope);
                scope.pop();
                if found.is_some() {
                    return found;
                }
            }
            Definition::Struct(s) if fqn(scope, &s.name.name) == full => return Some(s),
            _ => {}
        }
    }
    None
}
