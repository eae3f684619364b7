//! What the macro can tell of a member's type from its spelling: its XTypes identifier when
//! every part is a type it knows (computed now, at expansion time), `None` when a part is a
//! type it cannot see (another derived type, an alias, a generic parameter: described at
//! first use through `XTypesType`), or an error when the type has no IDL equivalent.
//!
//! The mapping is the CDR encoding's (halyard-cdr's impls): `bool` boolean, `i8` int8, `u8`
//! octet (`uint8` with `#[uint8]`), `i16`/`u16`/`i32`/`u32`/`i64`/`u64` (unsigned) short,
//! long, long long, `f32` float, `f64` double, `char` char (one octet on the wire), `String`
//! string, `BoundedString<N>` `string<N>`, `Vec<T>` `sequence<T>`, `BoundedSeq<T, N>`
//! `sequence<T, N>`, `[T; N]` `T[N]` (nested arrays are one multi-dimensional array),
//! `BTreeMap<K, V>` `map<K, V>`. Each known type also yields its canonical spelling, which
//! the generated code checks the field's type against (a user type named `String` or `Vec`
//! is then an error, not a wrong description).

use halyard_xtypes::{PrimitiveKind, TypeRef};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, GenericArgument, Ident, Lit, PathArguments, Type, TypePath};

/// A type the macro understood: its description and canonical spelling.
pub struct Known {
    pub xtypes: TypeRef,
    pub canonical: TokenStream,
}

/// Analyses member types of the type named `own`.
pub struct Shapes<'a> {
    pub own: &'a Ident,
    pub cdr: &'a TokenStream,
}

fn err<T>(at: &impl quote::ToTokens, msg: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new_spanned(at, msg))
}

impl Shapes<'_> {
    /// The type's description, `None` when it must wait for first use.
    pub fn of(&self, ty: &Type) -> syn::Result<Option<Known>> {
        match ty {
            Type::Paren(p) => self.of(&p.elem),
            Type::Group(g) => self.of(&g.elem),
            Type::Array(a) => {
                let element = self.of(&a.elem)?;
                let n = match &a.len {
                    Expr::Lit(l) => match &l.lit {
                        Lit::Int(i) => Some(i.base10_parse::<u32>()?),
                        _ => None,
                    },
                    _ => None,
                };
                Ok(match (element, n) {
                    (Some(e), Some(n)) => {
                        let c = e.canonical;
                        let len = &a.len;
                        Some(Known {
                            xtypes: TypeRef::array(e.xtypes, n),
                            canonical: quote!([#c; #len]),
                        })
                    }
                    _ => None,
                })
            }
            Type::Path(p) if p.qself.is_none() => self.path(p),
            Type::Path(_) | Type::Macro(_) | Type::Infer(_) | Type::Verbatim(_) => Ok(None),
            Type::Reference(_) | Type::Ptr(_) => err(
                ty,
                "a reference has no IDL equivalent: a topic type owns its members",
            ),
            Type::Slice(_) => err(ty, "a slice has no IDL equivalent: use Vec<T> or [T; N]"),
            Type::Tuple(t) if t.elems.is_empty() => err(ty, "`()` has no IDL equivalent"),
            Type::Tuple(_) => err(
                ty,
                "a tuple has no IDL equivalent: use a struct deriving CdrType",
            ),
            _ => err(ty, "this type has no IDL equivalent"),
        }
    }

    fn path(&self, p: &TypePath) -> syn::Result<Option<Known>> {
        let path = &p.path;
        let Some(last) = path.segments.last() else {
            return Ok(None);
        };
        let name = last.ident.to_string();
        let single = path.segments.len() == 1 && path.leading_colon.is_none();
        if single && (last.ident == *self.own || name == "Self") {
            return err(
                p,
                "a type that contains itself has no XTypes description here (recursive types \
                 need strongly connected components); turn it off with \
                 #[topic(type_description = false)]",
            );
        }
        let std_path = |prefix: &[&str]| {
            single
                || path
                    .segments
                    .iter()
                    .rev()
                    .skip(1)
                    .all(|s| prefix.contains(&s.ident.to_string().as_str()))
        };
        if std_path(&["std", "core", "primitive"]) && last.arguments.is_empty() {
            if let Some(k) = primitive(&name) {
                let id = &last.ident;
                return Ok(Some(Known {
                    xtypes: TypeRef::primitive(k),
                    canonical: quote!(::core::primitive::#id),
                }));
            }
            if let Some(why) = no_idl_primitive(&name) {
                return err(p, why);
            }
        }
        let args = type_args(&last.arguments);
        let cdr = self.cdr;
        match (name.as_str(), args.as_slice()) {
            ("String", []) if std_path(&["std", "alloc", "string"]) => Ok(Some(Known {
                xtypes: TypeRef::string(0),
                canonical: quote!(::std::string::String),
            })),
            ("Vec", [Arg::Type(t)]) if std_path(&["std", "alloc", "vec"]) => {
                Ok(self.of(t)?.map(|e| {
                    let c = e.canonical;
                    Known {
                        xtypes: TypeRef::sequence(e.xtypes, 0),
                        canonical: quote!(::std::vec::Vec<#c>),
                    }
                }))
            }
            ("BoundedString", [Arg::Const(n)]) => Ok(n.map(|(n, e)| Known {
                xtypes: TypeRef::string(n),
                canonical: quote!(#cdr::BoundedString<#e>),
            })),
            ("BoundedSeq", [Arg::Type(t), Arg::Const(n)]) => {
                let element = self.of(t)?;
                Ok(match (element, n) {
                    (Some(el), Some((n, e))) => {
                        let c = el.canonical;
                        Some(Known {
                            xtypes: TypeRef::sequence(el.xtypes, *n),
                            canonical: quote!(#cdr::BoundedSeq<#c, #e>),
                        })
                    }
                    _ => None,
                })
            }
            ("BTreeMap", [Arg::Type(k), Arg::Type(v)]) => {
                let (k, v) = (self.of(k)?, self.of(v)?);
                Ok(match (k, v) {
                    (Some(k), Some(v)) => {
                        let (kc, vc) = (k.canonical, v.canonical);
                        Some(Known {
                            xtypes: TypeRef::map(k.xtypes, v.xtypes),
                            canonical: quote!(::std::collections::BTreeMap<#kc, #vc>),
                        })
                    }
                    _ => None,
                })
            }
            ("Option", [_]) if std_path(&["std", "core", "option"]) => err(
                p,
                "`Option` is IDL's @optional for a member only: an optional element has no \
                 IDL equivalent",
            ),
            ("Box", [_]) if std_path(&["std", "alloc", "boxed"]) => err(
                p,
                "`Box` is IDL's @external for a member only: an external element has no IDL \
                 equivalent",
            ),
            _ => {
                // A type the macro cannot see: check its arguments for what has no IDL
                // equivalent, then describe it at first use.
                for a in &args {
                    if let Arg::Type(t) = a {
                        self.of(t)?;
                    }
                }
                Ok(None)
            }
        }
    }
}

/// A generic argument: a type, or a const (its value when it is an integer literal, and the
/// expression as written).
enum Arg<'a> {
    Type(&'a Type),
    Const(Option<(u32, &'a Expr)>),
    Other,
}

fn type_args(a: &PathArguments) -> Vec<Arg<'_>> {
    let PathArguments::AngleBracketed(a) = a else {
        return Vec::new();
    };
    a.args
        .iter()
        .map(|g| match g {
            // `N` alone parses as a type whether it is one or a const parameter: either way
            // it is not known now.
            GenericArgument::Type(t) => Arg::Type(t),
            GenericArgument::Const(e) => Arg::Const(const_u32(e).map(|n| (n, e))),
            _ => Arg::Other,
        })
        .collect()
}

fn const_u32(e: &Expr) -> Option<u32> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => const_u32(e),
            _ => None,
        },
        _ => None,
    }
}

fn primitive(name: &str) -> Option<PrimitiveKind> {
    Some(match name {
        "bool" => PrimitiveKind::Boolean,
        "i8" => PrimitiveKind::Int8,
        "u8" => PrimitiveKind::Byte,
        "i16" => PrimitiveKind::Int16,
        "u16" => PrimitiveKind::UInt16,
        "i32" => PrimitiveKind::Int32,
        "u32" => PrimitiveKind::UInt32,
        "i64" => PrimitiveKind::Int64,
        "u64" => PrimitiveKind::UInt64,
        "f32" => PrimitiveKind::Float32,
        "f64" => PrimitiveKind::Float64,
        "char" => PrimitiveKind::Char8,
        _ => return None,
    })
}

fn no_idl_primitive(name: &str) -> Option<&'static str> {
    Some(match name {
        "usize" | "isize" => {
            "`usize` and `isize` have no IDL equivalent (their width depends on the \
             platform): use u32/i32 or u64/i64"
        }
        "u128" | "i128" => "128-bit integers have no IDL equivalent",
        "str" => "`str` has no IDL equivalent: use String",
        "f16" | "f128" => "`f16` and `f128` have no IDL equivalent: use f32 or f64",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_xtypes::TypeIdentifier;

    fn shapes(t: Type) -> syn::Result<Option<Known>> {
        let own: Ident = syn::parse_quote!(Own);
        let cdr = quote!(::halyard_cdr);
        Shapes {
            own: &own,
            cdr: &cdr,
        }
        .of(&t)
    }

    fn message(t: Type) -> String {
        match shapes(t) {
            Err(e) => e.to_string(),
            Ok(_) => "accepted".into(),
        }
    }

    #[test]
    fn known_types_are_described_now_and_others_later() {
        let k = shapes(syn::parse_quote!([[u8; 3]; 2])).unwrap().unwrap();
        assert!(matches!(
            k.xtypes.complete(),
            TypeIdentifier::PlainArraySmall { bounds, .. } if bounds == &[2, 3]
        ));
        assert!(shapes(syn::parse_quote!(Vec<BoundedString<12>>))
            .unwrap()
            .is_some());
        assert!(shapes(syn::parse_quote!(Vec<Inner>)).unwrap().is_none());
        assert!(shapes(syn::parse_quote!([u8; SIZE])).unwrap().is_none());
        assert!(shapes(syn::parse_quote!(my::u32)).unwrap().is_none());
    }

    #[test]
    fn types_without_an_idl_equivalent_say_why() {
        for (t, needle) in [
            (syn::parse_quote!(usize), "platform"),
            (syn::parse_quote!(Vec<i128>), "128-bit"),
            (syn::parse_quote!(&'static str), "reference"),
            (syn::parse_quote!((u32, u32)), "tuple"),
            (
                syn::parse_quote!(Vec<Option<u32>>),
                "@optional for a member only",
            ),
            (
                syn::parse_quote!([Box<Inner>; 2]),
                "@external for a member only",
            ),
            (syn::parse_quote!(Vec<Own>), "contains itself"),
            (syn::parse_quote!(HashMap<u32, (u8, u8)>), "tuple"),
        ] {
            let m = message(t);
            assert!(m.contains(needle), "{m}");
        }
    }
}
