//! Code generation for C-like enums: encoded as a u32 (XTypes default bit bound 32), described
//! as an IDL enum whose enumerators are the variants, with the values `Self::V as u32` gives
//! and the `#[default]` variant (else the first) as the default literal.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Expr, Fields, Lit, UnOp};

use crate::attrs::{runtime_path, type_attrs};
use crate::describe::{self, Ctx};

/// The value of a discriminant written as an integer literal (possibly negated).
fn literal_value(e: &Expr) -> Option<i128> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => literal_value(&u.expr).map(|v| -v),
        Expr::Paren(p) => literal_value(&p.expr),
        Expr::Group(g) => literal_value(&g.expr),
        _ => None,
    }
}

/// The enumerators' names and the values `as u32` gives them when the macro can compute
/// them (explicit integer literals, or counting on from one), as XTypes' `long`.
fn literals(data: &syn::DataEnum) -> Vec<(String, syn::Ident, Option<i32>)> {
    let mut next: Option<i128> = Some(0);
    data.variants
        .iter()
        .map(|v| {
            let value = match &v.discriminant {
                Some((_, e)) => literal_value(e),
                None => next,
            };
            next = value.map(|x| x + 1);
            // `Self::V as u32`, then as XTypes' signed 32-bit enumerator value.
            let wire = value.map(|x| x as u32 as i32);
            let name = v.ident.to_string().trim_start_matches("r#").to_string();
            (name, v.ident.clone(), wire)
        })
        .collect()
}

/// Expands `#[derive(CdrType)]` on a fieldless enum.
pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(input, "expected an enum"));
    };
    if let Some(v) = data
        .variants
        .iter()
        .find(|v| !matches!(v.fields, Fields::Unit))
    {
        return Err(syn::Error::new_spanned(
            v,
            "CdrType enums must be fieldless",
        ));
    }
    let cdr = runtime_path();
    let attrs = type_attrs(input)?;
    let default = data
        .variants
        .iter()
        .position(|v| v.attrs.iter().any(|a| a.path().is_ident("default")))
        .unwrap_or(0);
    let ctx = Ctx {
        input,
        attrs: &attrs,
        cdr: &cdr,
        topic: false,
    };
    let described = describe::for_enum(&ctx, &literals(data), default)?;
    let xtypes = &described.xtypes_impl;
    let name = &input.ident;
    let (ig, tg, wc) = input.generics.split_for_impl();
    let variants: Vec<_> = data.variants.iter().map(|v| &v.ident).collect();
    let names: Vec<String> = variants.iter().map(|v| v.to_string()).collect();
    Ok(quote! {
        #[automatically_derived]
        impl #ig #cdr::Reflect for #name #tg #wc {
            fn field(&self, __path: &[#cdr::PathSegment]) -> ::core::option::Option<#cdr::FieldValue<'_>> {
                if !__path.is_empty() {
                    return ::core::option::Option::None;
                }
                let (__v, __n): (u32, &'static str) = match self { #( Self::#variants => (Self::#variants as u32, #names), )* };
                ::core::option::Option::Some(#cdr::FieldValue::Enum { value: __v, name: __n })
            }
            fn field_kind(__path: &[#cdr::PathSegment]) -> ::core::option::Option<#cdr::FieldKind> {
                __path.is_empty().then_some(#cdr::FieldKind::Enum(&[#( #names ),*]))
            }
        }
        #[automatically_derived]
        impl #ig #cdr::CdrEncode for #name #tg #wc {
            fn encode(&self, __w: &mut #cdr::CdrWriter<'_>) -> ::core::result::Result<(), #cdr::CdrError> {
                let __v: u32 = match self { #( Self::#variants => Self::#variants as u32, )* };
                __w.write_u32(__v);
                ::core::result::Result::Ok(())
            }
            fn is_primitive() -> bool {
                true
            }
            fn fixed_size() -> ::core::option::Option<usize> {
                ::core::option::Option::Some(4)
            }
            fn key_max_end(__offset: usize) -> ::core::option::Option<usize> {
                ::core::option::Option::Some(__offset.next_multiple_of(4) + 4)
            }
        }
        #[automatically_derived]
        impl #ig #cdr::CdrDecode for #name #tg #wc {
            fn decode(__r: &mut #cdr::CdrReader<'_>) -> ::core::result::Result<Self, #cdr::CdrError> {
                let __v = __r.read_u32()?;
                #( if __v == Self::#variants as u32 { return ::core::result::Result::Ok(Self::#variants); } )*
                ::core::result::Result::Err(#cdr::CdrError::InvalidEnum(__v))
            }
            fn min_size() -> usize {
                4
            }
        }
        #xtypes
    })
}
