//! Derive macros for Halyard topic types.
//!
//! * `#[derive(Topic)]` on a struct with named fields: `CdrEncode`, `CdrDecode`, `Reflect`,
//!   `TopicType` and `XTypesType`.
//! * `#[derive(CdrType)]` on a struct (nested, non-topic types: `CdrEncode` + `CdrDecode`,
//!   including the key parts so nested keys work, `Reflect`, `XTypesType`) or on a C-like enum
//!   (encoded as a u32; unknown values decode to `CdrError::InvalidEnum`; described as an IDL
//!   enum whose default literal is the `#[default]` variant, else the first).
//!
//! Attributes:
//! * `#[topic(type_name = "M::Point")]` (default: the Rust name),
//!   `#[topic(extensibility = "final" | "appendable" | "mutable")]` (default final),
//!   `#[topic(nested)]` (IDL `@nested`), `#[topic(type_description = "PATH")]` (a `static`
//!   `TypeDescription` given by hand, announced as it is) or `#[topic(type_description =
//!   false)]` (no description); `#[cdr(...)]` is accepted as a synonym.
//! * field `#[key]`: key member; field `#[id(N)]`: member id (default: declaration index);
//!   field `#[uint8]`: its `u8`s are IDL `uint8` rather than `octet`; field
//!   `#[must_understand]`: IDL `@must_understand` (Cyclone DDS 0.10's `idlc` sets it on every
//!   key, Python `cyclonedds` on none).
//! * `Option<T>` fields are optional members, `Box<T>` fields external ones.
//!
//! The XTypes description (TypeObjects and TypeInformation, what `TopicType::type_description`
//! announces) is byte-identical to what `halyard idl` gives the same type written in IDL. It is
//! computed while the macro expands when every member's type is one the macro knows from its
//! spelling (primitives, `String`, `Vec`, arrays, `BTreeMap`, the bounded containers; the
//! `shape` module has the mapping) and emitted as static bytes; otherwise the generated code
//! composes it once, at first use, from the members' `XTypesType` (the `describe` module). A
//! member type with no IDL equivalent is a compile error saying why.
//!
//! `decode_key` builds the value from the key members and `Default::default()` for every
//! other field, so non-key field types must implement `Default`.
//!
//! Generated code names the runtime as `::halyard::cdr` when the crate depends on `halyard`,
//! else `::halyard_cdr`. Inside the `halyard` package itself the path is also `::halyard::cdr`.

#![warn(missing_docs)]

mod attrs;
mod describe;
mod enums;
mod shape;
mod structs;

use proc_macro::TokenStream;
use syn::{parse_macro_input, Data, DeriveInput};

/// Derives `CdrEncode`, `CdrDecode`, `Reflect`, `TopicType` and `XTypesType` for a struct with
/// named fields.
#[proc_macro_derive(Topic, attributes(topic, cdr, key, id, uint8, must_understand))]
pub fn derive_topic(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    structs::expand(&input, true)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `CdrEncode`, `CdrDecode`, `Reflect` and `XTypesType` for a struct with named fields
/// or a C-like enum.
#[proc_macro_derive(CdrType, attributes(topic, cdr, key, id, uint8, must_understand))]
pub fn derive_cdr_type(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let out = match &input.data {
        Data::Enum(_) => enums::expand(&input),
        _ => structs::expand(&input, false),
    };
    out.unwrap_or_else(syn::Error::into_compile_error).into()
}
