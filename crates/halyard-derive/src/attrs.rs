//! Attribute parsing and runtime-path resolution.

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::{format_ident, quote};
use syn::{Attribute, DeriveInput, Field, Lit, LitInt, LitStr};

/// The extensibility named by `#[topic(extensibility = "...")]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ext {
    Final,
    Appendable,
    Mutable,
}

/// Where a type's XTypes description comes from.
pub enum Description {
    /// Computed by the macro (the default).
    Derived,
    /// `#[topic(type_description = false)]`: none.
    Off,
    /// `#[topic(type_description = "PATH")]`: a `static` `TypeDescription` given by hand.
    Given(syn::Path),
}

/// Container attributes.
pub struct TypeAttrs {
    pub type_name: Option<String>,
    pub ext: Ext,
    pub description: Description,
    /// `#[topic(nested)]`: IDL `@nested` (IS_NESTED in the TypeObject).
    pub nested: bool,
}

/// Parses `#[topic(...)]` / `#[cdr(...)]` on the type.
pub fn type_attrs(input: &DeriveInput) -> syn::Result<TypeAttrs> {
    let mut out = TypeAttrs {
        type_name: None,
        ext: Ext::Final,
        description: Description::Derived,
        nested: false,
    };
    for attr in input.attrs.iter().filter(|a| is_container_attr(a)) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("nested") {
                out.nested = true;
                return Ok(());
            }
            if meta.path.is_ident("type_description") {
                out.description =
                    match meta.value()?.parse::<Lit>()? {
                        Lit::Str(path) => Description::Given(path.parse()?),
                        Lit::Bool(b) if !b.value => Description::Off,
                        Lit::Bool(_) => Description::Derived,
                        other => return Err(syn::Error::new(
                            other.span(),
                            "expected a path in quotes (a `static` `TypeDescription`) or `false`",
                        )),
                    };
                return Ok(());
            }
            let value: LitStr = meta.value()?.parse()?;
            if meta.path.is_ident("type_name") {
                check_name(&value, &value.value())?;
                out.type_name = Some(value.value());
            } else if meta.path.is_ident("extensibility") {
                out.ext = parse_ext(&value)?;
            } else {
                return Err(meta.error(
                    "expected `type_name`, `extensibility`, `type_description` or `nested`",
                ));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// Refuses a name XTypes cannot carry (QualifiedTypeName and MemberName are `string<256>`).
pub fn check_name(at: &impl quote::ToTokens, name: &str) -> syn::Result<()> {
    if name.is_empty() || name.len() > 256 || name.contains('\0') {
        return Err(syn::Error::new_spanned(
            at,
            "an XTypes name is 1 to 256 bytes without NUL",
        ));
    }
    Ok(())
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

/// Whether a field carries `#[must_understand]` (IDL `@must_understand`).
pub fn is_must_understand(f: &Field) -> bool {
    f.attrs.iter().any(|a| a.path().is_ident("must_understand"))
}

/// Whether a field carries `#[uint8]` (its `u8`s are IDL `uint8`, not `octet`).
pub fn is_uint8(f: &Field) -> bool {
    f.attrs.iter().any(|a| a.path().is_ident("uint8"))
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
