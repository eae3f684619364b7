//! Code generation for structs: `CdrEncode`, `CdrDecode`, `Reflect` (member access by name,
//! for content filters) and (for topics) `TopicType`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attrs::{
    ext_tokens, field_id, is_key, is_must_understand, is_uint8, runtime_path, type_attrs, Ext,
    TypeAttrs,
};
use crate::describe::{self, Ctx, DescMember};

/// One named field and its CDR attributes.
struct Member {
    ident: Ident,
    local: Ident,
    ty: Type,
    id: u32,
    key: bool,
    optional: bool,
    uint8: bool,
    must_understand: bool,
    field: syn::Field,
}

/// Everything code generation needs about the struct.
struct Model<'a> {
    input: &'a DeriveInput,
    attrs: TypeAttrs,
    members: Vec<Member>,
    cdr: TokenStream,
}

impl Model<'_> {
    /// The explicitly `#[key]` members, in key-serialization order.
    fn keys(&self) -> Vec<&Member> {
        let mut keys: Vec<&Member> = self.members.iter().filter(|m| m.key).collect();
        if self.attrs.ext == Ext::Mutable {
            keys.sort_by_key(|m| m.id);
        }
        keys
    }

    /// The members serialized when this type is itself a key member: its keys, or all
    /// members when it has none.
    fn effective_keys(&self) -> Vec<&Member> {
        let keys = self.keys();
        if !keys.is_empty() {
            return keys;
        }
        let mut all: Vec<&Member> = self.members.iter().collect();
        if self.attrs.ext == Ext::Mutable {
            all.sort_by_key(|m| m.id);
        }
        all
    }
}

/// Expands `#[derive(Topic)]` (`topic`) or `#[derive(CdrType)]` on a struct.
pub fn expand(input: &DeriveInput, topic: bool) -> syn::Result<TokenStream> {
    let model = Model {
        input,
        attrs: type_attrs(input)?,
        members: members(input)?,
        cdr: runtime_path(),
    };
    let encode = encode_impl(&model);
    let decode = decode_impl(&model);
    let described = description(&model, topic)?;
    let topic = if topic {
        topic_impl(&model, &described)
    } else {
        TokenStream::new()
    };
    let reflect = reflect_impl(&model);
    let xtypes = &described.xtypes_impl;
    Ok(quote!(#encode #decode #reflect #topic #xtypes))
}

/// The type's XTypes description (the `describe` module).
fn description(m: &Model, topic: bool) -> syn::Result<describe::Generated> {
    let members: Vec<DescMember> = m
        .members
        .iter()
        .map(|f| {
            let mut value = &f.ty;
            if f.optional {
                value = first_type_arg(value).unwrap_or(value);
            }
            let external = is_boxed(value);
            if external {
                value = first_type_arg(value).unwrap_or(value);
            }
            DescMember {
                name: f.ident.to_string().trim_start_matches("r#").to_string(),
                id: f.id,
                key: f.key,
                optional: f.optional,
                external,
                uint8: f.uint8,
                must_understand: f.must_understand,
                value,
                field: &f.field,
            }
        })
        .collect();
    let ctx = Ctx {
        input: m.input,
        attrs: &m.attrs,
        cdr: &m.cdr,
        topic,
    };
    describe::for_struct(&ctx, &members)
}

/// The first type argument of a path type (`T` of `Option<T>`).
fn first_type_arg(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let syn::PathArguments::AngleBracketed(a) = &p.path.segments.last()?.arguments else {
        return None;
    };
    a.args.iter().find_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// Whether the type is spelled `Box<..>` (an external member).
fn is_boxed(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Box" && !s.arguments.is_empty()),
        _ => false,
    }
}

/// `Reflect`: a path's first segment names a member (its Rust name, `r#` stripped); the rest
/// goes to the member's type.
fn reflect_impl(m: &Model) -> TokenStream {
    let cdr = &m.cdr;
    let name = &m.input.ident;
    let (ig, tg, wc) = m.input.generics.split_for_impl();
    let names: Vec<String> = m
        .members
        .iter()
        .map(|f| f.ident.to_string().trim_start_matches("r#").to_string())
        .collect();
    let idents: Vec<&Ident> = m.members.iter().map(|f| &f.ident).collect();
    let tys: Vec<&Type> = m.members.iter().map(|f| &f.ty).collect();
    quote! {
        #[automatically_derived]
        impl #ig #cdr::Reflect for #name #tg #wc {
            fn field(&self, __path: &[#cdr::PathSegment]) -> ::core::option::Option<#cdr::FieldValue<'_>> {
                match __path.split_first()? {
                    (#cdr::PathSegment::Member(__n), __rest) => match __n.as_str() {
                        #( #names => #cdr::Reflect::field(&self.#idents, __rest), )*
                        _ => ::core::option::Option::None,
                    },
                    _ => ::core::option::Option::None,
                }
            }
            fn field_kind(__path: &[#cdr::PathSegment]) -> ::core::option::Option<#cdr::FieldKind> {
                match __path.split_first()? {
                    (#cdr::PathSegment::Member(__n), __rest) => match __n.as_str() {
                        #( #names => <#tys as #cdr::Reflect>::field_kind(__rest), )*
                        _ => ::core::option::Option::None,
                    },
                    _ => ::core::option::Option::None,
                }
            }
            fn has_member(__path: &[#cdr::PathSegment]) -> bool {
                match __path.split_first() {
                    ::core::option::Option::None => true,
                    ::core::option::Option::Some((#cdr::PathSegment::Member(__n), __rest)) => match __n.as_str() {
                        #( #names => <#tys as #cdr::Reflect>::has_member(__rest), )*
                        _ => false,
                    },
                    _ => false,
                }
            }
        }
    }
}

fn members(input: &DeriveInput) -> syn::Result<Vec<Member>> {
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => &named.named,
            _ => return Err(syn::Error::new_spanned(input, "expected named fields")),
        },
        _ => return Err(syn::Error::new_spanned(input, "expected a struct")),
    };
    let mut out: Vec<Member> = Vec::new();
    for (index, f) in fields.iter().enumerate() {
        let ident = f.ident.clone().expect("named field");
        let m = Member {
            local: format_ident!("__f{}", index),
            ty: f.ty.clone(),
            id: field_id(f)?.unwrap_or(index as u32),
            key: is_key(f),
            optional: is_option(&f.ty),
            uint8: is_uint8(f),
            must_understand: is_must_understand(f),
            field: f.clone(),
            ident,
        };
        if m.key && m.optional {
            return Err(syn::Error::new_spanned(
                f,
                "a key member cannot be optional",
            ));
        }
        if out.iter().any(|o| o.id == m.id) {
            return Err(syn::Error::new_spanned(f, "duplicate member id"));
        }
        out.push(m);
    }
    Ok(out)
}

/// Whether the type is spelled `Option<..>` (an optional member).
fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Option" && !s.arguments.is_empty()),
        _ => false,
    }
}

fn encode_impl(m: &Model) -> TokenStream {
    let cdr = &m.cdr;
    let name = &m.input.ident;
    let (ig, tg, wc) = m.input.generics.split_for_impl();
    let ext = ext_tokens(cdr, m.attrs.ext);
    let writes = m.members.iter().map(|f| {
        let (ident, id, key) = (&f.ident, f.id, f.key);
        if f.optional {
            quote!(__w.write_optional_member(&__scope, #id, ::core::option::Option::as_ref(&self.#ident))?;)
        } else {
            quote!(__w.write_member(&__scope, #id, #key, &self.#ident)?;)
        }
    });
    let keys = m.effective_keys();
    let key_writes = key_writes(cdr, &keys);
    let key_max = key_max(cdr, &keys);
    quote! {
        #[automatically_derived]
        impl #ig #cdr::CdrEncode for #name #tg #wc {
            fn encode(&self, __w: &mut #cdr::CdrWriter<'_>) -> ::core::result::Result<(), #cdr::CdrError> {
                let __scope = __w.begin_struct(#ext);
                #(#writes)*
                __w.end_struct(__scope)
            }
            fn encode_key_members(&self, __w: &mut #cdr::CdrWriter<'_>) -> ::core::result::Result<(), #cdr::CdrError> {
                #key_writes
            }
            fn key_max_end(__offset: usize) -> ::core::option::Option<usize> {
                #key_max
            }
        }
    }
}

/// Statements writing `keys` as key members, ending in `Ok(())`.
fn key_writes(cdr: &TokenStream, keys: &[&Member]) -> TokenStream {
    let idents = keys.iter().map(|k| &k.ident);
    quote! {
        #( #cdr::CdrEncode::encode_key_members(&self.#idents, __w)?; )*
        ::core::result::Result::Ok(())
    }
}

/// Expression folding the key members' maximum end offsets from `__offset`.
fn key_max(cdr: &TokenStream, keys: &[&Member]) -> TokenStream {
    let tys = keys.iter().map(|k| &k.ty);
    quote! {
        #( let __offset = <#tys as #cdr::CdrEncode>::key_max_end(__offset)?; )*
        ::core::option::Option::Some(__offset)
    }
}

/// Statements reading `keys` then building `Self` with the other fields defaulted.
fn key_reads(cdr: &TokenStream, members: &[Member], keys: &[&Member]) -> TokenStream {
    let reads = keys.iter().map(|k| {
        let (local, ty) = (&k.local, &k.ty);
        quote!(let #local: #ty = #cdr::CdrDecode::decode_key_members(__r)?;)
    });
    let inits = members.iter().map(|f| {
        let (ident, local) = (&f.ident, &f.local);
        if keys.iter().any(|k| k.ident == f.ident) {
            quote!(#ident: #local)
        } else {
            quote!(#ident: ::core::default::Default::default())
        }
    });
    quote! {
        #(#reads)*
        ::core::result::Result::Ok(Self { #(#inits),* })
    }
}

fn decode_impl(m: &Model) -> TokenStream {
    let cdr = &m.cdr;
    let name = &m.input.ident;
    let (ig, tg, wc) = m.input.generics.split_for_impl();
    let body = match m.attrs.ext {
        Ext::Mutable => decode_mutable(m),
        _ => decode_sequential(m),
    };
    let min_size = match m.attrs.ext {
        Ext::Mutable => quote!(4),
        _ => {
            let tys = m.members.iter().map(|f| &f.ty);
            quote!(0usize #( .saturating_add(<#tys as #cdr::CdrDecode>::min_size()) )*)
        }
    };
    let key_reads = key_reads(cdr, &m.members, &m.effective_keys());
    quote! {
        #[automatically_derived]
        impl #ig #cdr::CdrDecode for #name #tg #wc {
            fn decode(__r: &mut #cdr::CdrReader<'_>) -> ::core::result::Result<Self, #cdr::CdrError> {
                #body
            }
            fn min_size() -> usize {
                #min_size
            }
            fn decode_key_members(__r: &mut #cdr::CdrReader<'_>) -> ::core::result::Result<Self, #cdr::CdrError> {
                #key_reads
            }
        }
    }
}

/// Decoding of final and appendable structs: members in declaration order.
fn decode_sequential(m: &Model) -> TokenStream {
    let cdr = &m.cdr;
    let ext = ext_tokens(cdr, m.attrs.ext);
    let reads = m.members.iter().map(|f| {
        let (local, ty, id) = (&f.local, &f.ty, f.id);
        if f.optional {
            quote!(let #local: #ty = __r.read_optional_member(&__scope, #id)?;)
        } else {
            quote!(let #local: #ty = #cdr::CdrDecode::decode(__r)?;)
        }
    });
    let inits = m.members.iter().map(|f| {
        let (ident, local) = (&f.ident, &f.local);
        quote!(#ident: #local)
    });
    quote! {
        let __scope = __r.begin_struct(#ext)?;
        #(#reads)*
        __r.end_struct(__scope)?;
        ::core::result::Result::Ok(Self { #(#inits),* })
    }
}

/// Decoding of mutable structs: members by id in any order, unknown ones skipped.
fn decode_mutable(m: &Model) -> TokenStream {
    let cdr = &m.cdr;
    let decls = m.members.iter().map(|f| {
        let (local, ty) = (&f.local, &f.ty);
        if f.optional {
            quote!(let mut #local: #ty = ::core::option::Option::None;)
        } else {
            quote!(let mut #local: ::core::option::Option<#ty> = ::core::option::Option::None;)
        }
    });
    let arms = m.members.iter().map(|f| {
        let (local, id) = (&f.local, f.id);
        quote!(#id => #local = ::core::option::Option::Some(__r.read_member_body(&__h)?),)
    });
    let inits = m.members.iter().map(|f| {
        let (ident, local, id) = (&f.ident, &f.local, f.id);
        if f.optional {
            quote!(#ident: #local)
        } else {
            quote!(#ident: #local.ok_or(#cdr::CdrError::MissingMember(#id))?)
        }
    });
    quote! {
        let __scope = __r.begin_struct(#cdr::Extensibility::Mutable)?;
        #(#decls)*
        while let ::core::option::Option::Some(__h) = __r.next_member(&__scope)? {
            match __h.id() {
                #(#arms)*
                _ => __r.skip_member(&__h)?,
            }
        }
        __r.end_struct(__scope)?;
        ::core::result::Result::Ok(Self { #(#inits),* })
    }
}

fn topic_impl(m: &Model, described: &describe::Generated) -> TokenStream {
    let cdr = &m.cdr;
    let name = &m.input.ident;
    let mut generics = m.input.generics.clone();
    if !described.topic_bounds.is_empty() {
        let wc = generics.make_where_clause();
        for b in &described.topic_bounds {
            wc.predicates.push(syn::parse_quote!(#b));
        }
    }
    let (ig, tg, wc) = generics.split_for_impl();
    let type_name = m
        .attrs
        .type_name
        .clone()
        .unwrap_or_else(|| name.to_string());
    let ext = ext_tokens(cdr, m.attrs.ext);
    let keys = m.keys();
    let has_key = !keys.is_empty();
    let key_writes = key_writes(cdr, &keys);
    let key_max = key_max(cdr, &keys);
    let key_reads = key_reads(cdr, &m.members, &keys);
    let description = &described.topic_items;
    quote! {
        #[automatically_derived]
        impl #ig #cdr::TopicType for #name #tg #wc {
            fn type_name() -> &'static str {
                #type_name
            }
            fn extensibility() -> #cdr::Extensibility {
                #ext
            }
            fn has_key() -> bool {
                #has_key
            }
            fn encode_key(&self, __w: &mut #cdr::CdrWriter<'_>) -> ::core::result::Result<(), #cdr::CdrError> {
                #key_writes
            }
            fn key_max_size() -> ::core::option::Option<usize> {
                let __offset = 0usize;
                #key_max
            }
            fn decode_key(__r: &mut #cdr::CdrReader<'_>) -> ::core::result::Result<Self, #cdr::CdrError> {
                #key_reads
            }
            #description
        }
    }
}
