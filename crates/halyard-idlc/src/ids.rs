//! Member ids (XTypes 1.3 §7.3.1.2.1.4): `@id(N)` wins; otherwise `@autoid(HASH)` takes the
//! low 28 bits of the little-endian first 4 bytes of the MD5 of the member name, and
//! sequential ids count on from the previous member's id. A derived struct's members continue
//! after its base's, so ids are computed over the whole inheritance chain.

use halyard_idl::ast::{AutoId, Member, StructDef, TypeSpec, UnionDef};
use halyard_xtypes::name_hash;

use crate::index::{resolved, Index, Named};
use crate::Error;

/// The ids of a struct's own members and the next sequential id after them.
pub(crate) struct StructIds {
    pub own: Vec<u32>,
    pub next: u32,
}

/// The hashed member id of `name`.
pub(crate) fn hashed_id(name: &str) -> u32 {
    u32::from_le_bytes(name_hash(name)) & 0x0fff_ffff
}

fn assign(members: &[&Member], hash: bool, mut next: u32) -> (Vec<u32>, u32) {
    let mut ids = Vec::with_capacity(members.len());
    for m in members {
        let id = match m.typed.id {
            Some(id) => id,
            None if hash => hashed_id(&m.name.name),
            None => next,
        };
        next = id.wrapping_add(1);
        ids.push(id);
    }
    (ids, next)
}

/// Ids of `s`'s own members, after those of its bases.
pub(crate) fn struct_member_ids(ix: &Index<'_>, s: &StructDef) -> Result<StructIds, Error> {
    let start = match &s.base {
        None => 0,
        Some(b) => match ix.get(resolved(b)?, &b.location)? {
            Named::Struct(base) => struct_member_ids(ix, base)?.next,
            Named::Alias(t, d) if d.array.is_empty() => match ix.unalias(&t.type_spec)? {
                TypeSpec::Named(n) => match ix.get(resolved(n)?, &n.location)? {
                    Named::Struct(base) => struct_member_ids(ix, base)?.next,
                    _ => return Err(Error::unsupported(&b.location, "base is not a struct")),
                },
                _ => return Err(Error::unsupported(&b.location, "base is not a struct")),
            },
            _ => return Err(Error::unsupported(&b.location, "base is not a struct")),
        },
    };
    let members: Vec<&Member> = s.members.iter().collect();
    let (own, next) = assign(&members, s.typed.autoid == Some(AutoId::Hash), start);
    Ok(StructIds { own, next })
}

/// Ids of a union's cases, counted from 0.
pub(crate) fn union_member_ids(u: &UnionDef) -> Result<Vec<u32>, Error> {
    let members: Vec<&Member> = u.cases.iter().map(|c| &c.member).collect();
    Ok(assign(&members, u.typed.autoid == Some(AutoId::Hash), 0).0)
}
