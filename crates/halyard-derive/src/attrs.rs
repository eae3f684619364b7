//! Attribute parsing and runtime-path resolution.

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::{format_ident, quote};
use syn::{Attribute, DeriveInput, Field, LitInt, LitStr};

/// The extensibility named by `#[topic(extensibility = "...")]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ext {
    Final,
    Appendable,
    Mutable,
}

/// Container attributes.
pub struct TypeAttrs {
    pub type_name: Option<String>,
    pub ext: Ext,
    /// `#[topic(type_description = "PATH")]`: a `static` `TypeDescription` the type announces.
    pub type_description: Option<syn::Path>,
}

/// Parses `#[topic(...)]` / `#[cdr(...)]` on the type.
pub fn type_attrs(input: &DeriveInput) -> syn::Result<TypeAttrs> {
    let mut out = TypeAttrs {
        type_name: None,
        ext: Ext::Final,
        type_description: None,
    };
    for attr in input.attrs.iter().filter(|a| is_container_attr(a)) {
        attr.parse_nested_meta(|meta| {
            let value: LitStr = meta.value()?.parse()?;
            if meta.path.is_ident("type_name") {
                out.type_name = Some(value.value());
            } else if meta.path.is_ident("extensibility") {
                out.ext = parse_ext(&value)?;
            } else if meta.path.is_ident("type_description") {
                out.type_description = Some(value.parse()?);
            } else {
                return Err(
                    meta.error("expected `type_name`, `extensibility` or `type_description`")
                );
            }
            Ok(())
        })?;
    }
    Ok(out)
}

fn is_container_attr(a: &Attribute) -> bool {
    a.path().is_ident("topic") || a.path().is_ident("cdr")
}

fn parse_ext(v: &LitStr) -> syn::Result<Ext> {
    match v.value().as_str() {
        "final" => Ok(Ext::Final),
        "appendable" => Ok(Ext::Appendable),
        "mutable" => Ok(Ext::Mutable),
        _ => Err(syn::Error::new(
            v.span(),
            "expected \"final\", \"appendable\" or \"mutable\"",
        )),
    }
}

/// Whether a field carries `#[key]`.
pub fn is_key(f: &Field) -> bool {
    f.attrs.iter().any(|a| a.path().is_ident("key"))
}

/// The field's `#[id(N)]`, if any.
pub fn field_id(f: &Field) -> syn::Result<Option<u32>> {
    let Some(a) = f.attrs.iter().find(|a| a.path().is_ident("id")) else {
        return Ok(None);
    };
    let lit: LitInt = a.parse_args()?;
    let id: u32 = lit.base10_parse()?;
    if id > 0x0fff_ffff {
        return Err(syn::Error::new(lit.span(), "member id above 0x0fffffff"));
    }
    Ok(Some(id))
}

/// The path of the runtime crate as seen from the crate being compiled.
pub fn runtime_path() -> TokenStream {
    match crate_name("halyard") {
        // Inside the `halyard` package (its lib declares `extern crate self as halyard`, and its
        // doctests and integration tests link it as `halyard`), the absolute path works too.
        Ok(FoundCrate::Itself) => return quote!(::halyard::cdr),
        Ok(FoundCrate::Name(n)) => {
            let id = format_ident!("{}", n);
            return quote!(::#id::cdr);
        }
        Err(_) => {}
    }
    match crate_name("halyard-cdr") {
        Ok(FoundCrate::Name(n)) => {
            let id = syn::Ident::new(&n, Span::call_site());
            quote!(::#id)
        }
        _ => quote!(::halyard_cdr),
    }
}

/// The runtime's `Extensibility` value for `ext`.
pub fn ext_tokens(cdr: &TokenStream, ext: Ext) -> TokenStream {
    match ext {
        Ext::Final => quote!(#cdr::Extensibility::Final),
        Ext::Appendable => quote!(#cdr::Extensibility::Appendable),
        Ext::Mutable => quote!(#cdr::Extensibility::Mutable),
    }
}
