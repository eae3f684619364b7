//! CDR / XCDR1 / XCDR2 encoding and decoding (OMG DDS-XTypes 1.3 §7.4) for Halyard topic types,
//! with the derive macros and the XTypes descriptions they generate.
//!
//! This crate is `halyard-cdr-core` (the encoding: [`CdrWriter`], [`CdrReader`], the
//! [`CdrEncode`] / [`CdrDecode`] / [`TopicType`] traits, [`serialize`], [`key_hash`] ...)
//! together with:
//!
//! * `#[derive(Topic)]` and `#[derive(CdrType)]` (`halyard-derive`): the encoding of a struct
//!   or C-like enum, and its XTypes description (TypeObjects and TypeInformation, announced
//!   in discovery and served through TypeLookup), computed when the macro expands wherever it
//!   sees every member's type;
//! * [`XTypesType`] (`halyard-xtypes`): the description of a type as a member, which the
//!   derive implements and composes for members whose type it cannot see.
//!
//! The split exists because the macros compute TypeObjects with `halyard-xtypes`, which
//! encodes them with the core: the core cannot depend on the macros.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use halyard_cdr_core::*;
pub use halyard_derive::{CdrType, Topic};
pub use halyard_xtypes::rust_types::{Member, NamedType, TypeRef, XTypesType};
pub use halyard_xtypes::PrimitiveKind;

/// What the derive macros' generated code names; not an API.
#[doc(hidden)]
pub mod __private {
    pub use halyard_xtypes::rust_types::{
        cached, cached_generic, leak_topic_description, leak_topic_description_generic,
        octets_as_uint8,
    };
    pub use halyard_xtypes::{describe::member_flags, type_flag};
    pub use std::sync::{Arc, OnceLock};
}
