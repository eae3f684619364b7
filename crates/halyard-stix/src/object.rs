//! A validated STIX 2.1 object: the JSON as received plus the properties every consumer needs
//! (identifier, type, versions, markings), read once by [`crate::validate`].

use crate::marking::Tlp;
use serde_json::{Map, Value};

/// One STIX 2.1 object that passed [`crate::validate::object`]. The JSON is kept whole
/// (custom properties and extensions included); the fields are read from it.
#[derive(Clone, Debug, PartialEq)]
pub struct StixObject {
    /// `<type>--<UUID>`.
    pub id: String,
    /// The STIX type (`indicator`, `relationship`, `ipv4-addr` ...).
    pub stix_type: String,
    /// `"2.1"` (SCOs without `spec_version` get `"2.1"`).
    pub spec_version: String,
    /// `created`, RFC 3339 UTC as written; `None` for SCOs, which have none.
    pub created: Option<String>,
    /// `modified` as written; for objects without it (SCOs, and marking definitions) the
    /// `created` timestamp, or `None` when it has neither.
    pub modified: Option<String>,
    /// `created_by_ref`, if any.
    pub created_by_ref: Option<String>,
    /// `revoked: true`.
    pub revoked: bool,
    /// The TLP level of `object_marking_refs` (the most restrictive when several), if any.
    pub tlp: Option<Tlp>,
    /// `object_marking_refs`, in order.
    pub marking_refs: Vec<String>,
    /// The whole object.
    pub json: Map<String, Value>,
}

impl StixObject {
    /// The version of the object that TAXII and the node's store order by: `modified`, else
    /// `created`, else `""` (an object with a single, unversioned state).
    pub fn version(&self) -> &str {
        self.modified.as_deref().unwrap_or("")
    }

    /// The object as compact JSON text.
    pub fn to_json_string(&self) -> String {
        Value::Object(self.json.clone()).to_string()
    }
}
