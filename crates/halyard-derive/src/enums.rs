//! Code generation for C-like enums: encoded as a u32 (XTypes default bit bound 32).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::attrs::runtime_path;

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
    })
}
