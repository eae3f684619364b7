//! The XTypes description of a derived type: `XTypesType` and `TopicType::type_description`.
//!
//! Design. When the macro sees every member's type (primitives, strings, `Vec`, arrays,
//! `BTreeMap`, the bounded containers: [`crate::shape`]), it builds the TypeObjects and the
//! TypeInformation now, with `halyard-xtypes`'s builder, and emits them as `static` bytes.
//! When a member's type is one it cannot see (another derived type, an alias, a generic
//! parameter), the generated code builds the same description with the same builder at first
//! use, from each member type's `XTypesType::xtypes_ref`, once per type (a `static OnceLock`;
//! a map by `TypeId` for generic types). A description given by hand
//! (`#[topic(type_description = "PATH")]`) is announced as it is, and a type with a member of
//! this one composes it from its objects; `#[topic(type_description = false)]` turns it off.

use halyard_xtypes::rust_types::{octets_as_uint8, Member, NamedType};
use halyard_xtypes::type_flag;
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::{DeriveInput, Type};

use crate::attrs::{Description, Ext, TypeAttrs};
use crate::shape::{Known, Shapes};

/// One member as the description sees it.
pub struct DescMember<'a> {
    /// The member name (`r#` stripped).
    pub name: String,
    pub id: u32,
    pub key: bool,
    /// `Option<T>`: `@optional`.
    pub optional: bool,
    /// `Box<T>` (also inside the `Option`): `@external`.
    pub external: bool,
    /// `#[uint8]`.
    pub uint8: bool,
    /// `#[must_understand]`.
    pub must_understand: bool,
    /// The type of the value (inside `Option` and `Box`).
    pub value: &'a Type,
    /// The field, for error spans.
    pub field: &'a syn::Field,
}

/// What the derive adds for the description: the `XTypesType` impl and, for a topic, the
/// items of its `TopicType` impl.
pub struct Generated {
    pub xtypes_impl: TokenStream,
    pub topic_items: TokenStream,
    /// Extra `where` predicates the `TopicType` impl needs (generic types described at
    /// first use).
    pub topic_bounds: Vec<TokenStream>,
}

/// Common inputs.
pub struct Ctx<'a> {
    pub input: &'a DeriveInput,
    pub attrs: &'a TypeAttrs,
    pub cdr: &'a TokenStream,
    pub topic: bool,
}

impl Ctx<'_> {
    pub fn type_name(&self) -> String {
        self.attrs
            .type_name
            .clone()
            .unwrap_or_else(|| self.input.ident.to_string())
    }

    fn flags(&self) -> u16 {
        let mut f = match self.attrs.ext {
            Ext::Final => type_flag::IS_FINAL,
            Ext::Appendable => type_flag::IS_APPENDABLE,
            Ext::Mutable => type_flag::IS_MUTABLE,
        };
        if self.attrs.nested {
            f |= type_flag::IS_NESTED;
        }
        f
    }

    fn generic(&self) -> bool {
        self.input.generics.type_params().next().is_some()
            || self.input.generics.const_params().next().is_some()
    }

    /// The `XTypesType` impl with `body` returning the `TypeRef`.
    fn xtypes_impl(&self, body: TokenStream) -> TokenStream {
        let cdr = self.cdr;
        let name = &self.input.ident;
        let mut generics = self.input.generics.clone();
        if self.generic() {
            let wc = generics.make_where_clause();
            wc.predicates.push(syn::parse_quote!(Self: 'static));
            let params: Vec<_> = self
                .input
                .generics
                .type_params()
                .map(|p| p.ident.clone())
                .collect();
            for p in params {
                wc.predicates.push(syn::parse_quote!(#p: #cdr::XTypesType));
            }
        }
        let (ig, tg, wc) = generics.split_for_impl();
        quote! {
            #[automatically_derived]
            impl #ig #cdr::XTypesType for #name #tg #wc {
                fn xtypes_ref() -> #cdr::TypeRef {
                    #body
                }
            }
        }
    }

    /// `build` (an expression of `Result<Arc<NamedType>, XTypesError>`) run once per type.
    fn cached(&self, build: TokenStream) -> TokenStream {
        let cdr = self.cdr;
        let p = quote!(#cdr::__private);
        let type_name = self.type_name();
        if self.generic() {
            quote!(#p::cached_generic::<Self>(#type_name, || #build))
        } else {
            quote! {
                static __NODE: #p::OnceLock<#p::Arc<#cdr::NamedType>> = #p::OnceLock::new();
                #p::cached(&__NODE, #type_name, || #build)
            }
        }
    }

    /// What a hand-given or switched-off description generates.
    fn not_derived(&self) -> Option<Generated> {
        let cdr = self.cdr;
        match &self.attrs.description {
            Description::Derived => None,
            Description::Off => Some(Generated {
                xtypes_impl: TokenStream::new(),
                topic_items: TokenStream::new(),
                topic_bounds: Vec::new(),
            }),
            Description::Given(path) => Some(Generated {
                xtypes_impl: self
                    .xtypes_impl(self.cached(quote!(#cdr::NamedType::from_description(&#path)))),
                topic_items: quote! {
                    fn type_description() -> ::core::option::Option<&'static #cdr::TypeDescription> {
                        ::core::option::Option::Some(&#path)
                    }
                },
                topic_bounds: Vec::new(),
            }),
        }
    }

    /// The generated code for a node `node` computed now (`None`: built at first use by
    /// `runtime`, an expression of `Result<Arc<NamedType>, XTypesError>`).
    fn emit(
        &self,
        node: Option<std::sync::Arc<NamedType>>,
        runtime: TokenStream,
    ) -> syn::Result<Generated> {
        match node {
            Some(node) => self.emit_now(&node),
            None => Ok(self.emit_at_first_use(runtime)),
        }
    }

    /// A description built at first use by `runtime`.
    fn emit_at_first_use(&self, runtime: TokenStream) -> Generated {
        let cdr = self.cdr;
        let p = quote!(#cdr::__private);
        if !self.topic {
            return Generated {
                xtypes_impl: self.xtypes_impl(self.cached(runtime)),
                topic_items: TokenStream::new(),
                topic_bounds: Vec::new(),
            };
        }
        let (desc, topic_bounds) = if self.generic() {
            let params = self.input.generics.type_params().map(|p| &p.ident);
            (
                quote!(#p::leak_topic_description_generic::<Self>()),
                params.map(|p| quote!(#p: #cdr::XTypesType)).collect(),
            )
        } else {
            (
                quote! {{
                    static __DESC: #p::OnceLock<&'static #cdr::TypeDescription> = #p::OnceLock::new();
                    *__DESC.get_or_init(|| #p::leak_topic_description(
                        &<Self as #cdr::XTypesType>::xtypes_ref()))
                }},
                Vec::new(),
            )
        };
        Generated {
            xtypes_impl: self.xtypes_impl(self.cached(runtime)),
            topic_items: quote! {
                fn type_description() -> ::core::option::Option<&'static #cdr::TypeDescription> {
                    ::core::option::Option::Some(#desc)
                }
            },
            topic_bounds,
        }
    }

    /// A description computed now: static bytes.
    fn emit_now(&self, node: &std::sync::Arc<NamedType>) -> syn::Result<Generated> {
        let cdr = self.cdr;
        let d = node.described();
        if !self.topic {
            let (minimal, complete) = (bytes(&d.minimal_bytes), bytes(&d.complete_bytes));
            return Ok(Generated {
                xtypes_impl: self.xtypes_impl(
                    self.cached(quote!(#cdr::NamedType::from_objects(#minimal, #complete))),
                ),
                topic_items: TokenStream::new(),
                topic_bounds: Vec::new(),
            });
        }
        let t = node.topic_description().map_err(|e| {
            syn::Error::new_spanned(
                &self.input.ident,
                format!("cannot build the XTypes description: {e}"),
            )
        })?;
        let info = bytes(&t.type_information_bytes);
        let objects = t.type_objects.iter().map(|o| bytes(o));
        Ok(Generated {
            xtypes_impl: self.xtypes_impl(self.cached(quote!(
                #cdr::NamedType::from_topic_description(
                    <Self as #cdr::TopicType>::type_description())
            ))),
            topic_items: quote! {
                fn type_description() -> ::core::option::Option<&'static #cdr::TypeDescription> {
                    static __DESC: #cdr::TypeDescription = #cdr::TypeDescription {
                        type_information: #info,
                        type_objects: &[#( #objects ),*],
                    };
                    ::core::option::Option::Some(&__DESC)
                }
            },
            topic_bounds: Vec::new(),
        })
    }
}

/// A byte-string literal (`b"..."`, a `&'static [u8; N]`).
fn bytes(b: &[u8]) -> TokenStream {
    let lit = Literal::byte_string(b);
    quote!(#lit)
}

/// The description of a struct with members `members`.
pub fn for_struct(ctx: &Ctx, members: &[DescMember]) -> syn::Result<Generated> {
    if let Some(g) = ctx.not_derived() {
        return Ok(g);
    }
    let cdr = ctx.cdr;
    let p = quote!(#cdr::__private);
    let shapes = Shapes {
        own: &ctx.input.ident,
        cdr,
    };
    let mut known: Vec<Option<Known>> = Vec::with_capacity(members.len());
    let mut errors: Option<syn::Error> = None;
    for m in members {
        crate::attrs::check_name(&m.field, &m.name)?;
        match shapes.of(m.value) {
            Ok(k) => known.push(k),
            Err(e) => match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            },
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    let flags = ctx.flags();
    let type_name = ctx.type_name();
    let member_flags = |m: &DescMember| {
        halyard_xtypes::describe::member_flags(
            m.key,
            m.optional,
            m.external,
            m.must_understand,
            false,
        )
    };
    let all: Option<Vec<(&DescMember, Known)>> = members
        .iter()
        .zip(known)
        .map(|(m, k)| k.map(|k| (m, k)))
        .collect();
    let runtime_members = members.iter().map(|m| {
        let (name, id, f, value) = (&m.name, m.id, member_flags(m), m.value);
        let mut ty = quote!(<#value as #cdr::XTypesType>::xtypes_ref());
        if m.uint8 {
            ty = quote!(#p::octets_as_uint8(#ty));
        }
        quote!(#cdr::Member {
            name: ::std::string::String::from(#name),
            id: #id,
            flags: #f,
            ty: #ty,
        })
    });
    let runtime = quote!(#cdr::NamedType::structure(
        #type_name, #flags, ::std::vec![#(#runtime_members),*]));
    let Some(all) = all else {
        return ctx.emit(None, runtime);
    };
    let now: Vec<Member> = all
        .iter()
        .map(|(m, k)| Member {
            name: m.name.clone(),
            id: m.id,
            flags: member_flags(m),
            ty: if m.uint8 {
                octets_as_uint8(k.xtypes.clone())
            } else {
                k.xtypes.clone()
            },
        })
        .collect();
    let node = NamedType::structure(&type_name, flags, now).map_err(|e| {
        syn::Error::new_spanned(
            &ctx.input.ident,
            format!("cannot build the XTypes description: {e}"),
        )
    })?;
    let mut out = ctx.emit(Some(node), runtime)?;
    out.xtypes_impl.extend(same_types(&all));
    Ok(out)
}

/// Checks that each member's type is the one the macro took it for (a user type named
/// `String` or `Vec` would otherwise be described as the standard one).
fn same_types(all: &[(&DescMember, Known)]) -> TokenStream {
    let checks = all.iter().map(|(m, k)| {
        let (value, canonical) = (m.value, &k.canonical);
        quote!(__same(::core::marker::PhantomData::<#value>, ::core::marker::PhantomData::<#canonical>);)
    });
    quote! {
        const _: () = {
            fn __same<T: ?::core::marker::Sized>(
                _: ::core::marker::PhantomData<T>,
                _: ::core::marker::PhantomData<T>,
            ) {
            }
            #[allow(dead_code)]
            fn __check() {
                #(#checks)*
            }
        };
    }
}

/// The description of a C-like enum: its enumerators' names and values (`None` for a value
/// the macro cannot compute: then it is `Self::V as u32` at first use) and the index of the
/// default literal.
pub fn for_enum(
    ctx: &Ctx,
    literals: &[(String, syn::Ident, Option<i32>)],
    default: usize,
) -> syn::Result<Generated> {
    if let Some(g) = ctx.not_derived() {
        return Ok(g);
    }
    let cdr = ctx.cdr;
    let type_name = ctx.type_name();
    let flags = ctx.flags();
    for (name, ident, _) in literals {
        crate::attrs::check_name(ident, name)?;
    }
    let values = literals
        .iter()
        .map(|(name, ident, _)| quote!((#name, Self::#ident as u32 as i32)));
    let runtime = quote!(#cdr::NamedType::enumeration(
        #type_name, #flags, &[#(#values),*], #default));
    let now: Option<Vec<(&str, i32)>> = literals
        .iter()
        .map(|(name, _, v)| v.map(|v| (name.as_str(), v)))
        .collect();
    let node = match now {
        Some(now) => Some(
            NamedType::enumeration(&type_name, flags, &now, default).map_err(|e| {
                syn::Error::new_spanned(
                    &ctx.input.ident,
                    format!("cannot build the XTypes description: {e}"),
                )
            })?,
        ),
        None => None,
    };
    ctx.emit(node, runtime)
}
