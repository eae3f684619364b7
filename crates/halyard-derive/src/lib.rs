//! Derive macros for Halyard topic types.
//!
//! * `#[derive(Topic)]` on a struct with named fields: `CdrEncode`, `CdrDecode` and
//!   `TopicType`.
//! * `#[derive(CdrType)]` on a struct (nested, non-topic types: `CdrEncode` + `CdrDecode`,
//!   including the key parts so nested keys work) or on a C-like enum (encoded as a u32;
//!   unknown values decode to `CdrError::InvalidEnum`).
//!
//! Attributes:
//! * `#[topic(type_name = "M::Point")]` (default: the Rust name),
//!   `#[topic(extensibility = "final" | "appendable" | "mutable")]` (default final),
//!   `#[topic(type_description = "PATH")]` (a `static` `TypeDescription`: the type's XTypes
//!   TypeInformation and TypeObjects, announced in discovery; default none);
//!   `#[cdr(...)]` is accepted as a synonym.
//! * field `#[key]`: key member; field `#[id(N)]`: member id (default: declaration index).
//! * `Option<T>` fields are optional members.
//!
//! `decode_key` builds the value from the key members and `Default::default()` for every
//! other field, so non-key field types must implement `Default`.
//!
//! Generated code names the runtime as `::halyard::cdr` when the crate depends on `halyard`,
//! else `::halyard_cdr`. Inside the `halyard` package itself the path is also `::halyard::cdr`.

mod attrs;
mod describe;
mod enums;
mod shape;
mod structs;

use proc_macro::TokenStream;
use syn::{parse_macro_input, Data, DeriveInput};

/// Derives `CdrEncode`, `CdrDecode` and `TopicType` for a struct with named fields.
#[proc_macro_derive(Topic, attributes(topic, cdr, key, id, uint8))]
pub fn derive_topic(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    structs::expand(&input, true)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `CdrEncode` and `CdrDecode` for a struct with named fields or a C-like enum.
#[proc_macro_derive(CdrType, attributes(topic, cdr, key, id, uint8))]
pub fn derive_cdr_type(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let out = match &input.data {
        Data::Enum(_) => enums::expand(&input),
        _ => structs::expand(&input, false),
    };
    out.unwrap_or_else(syn::Error::into_compile_error).into()
}
