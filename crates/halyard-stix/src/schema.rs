//! The property tables of STIX 2.1: which properties each object type defines, which are
//! required, and what kind of value each holds (STIX 2.1 §3.2, §4-§8).
//!
//! The tables are data so that [`crate::validate`] stays one generic walk: a property of an
//! object is checked against the common table of its category and the table of its type;
//! a name in neither is unknown (unless custom, see `validate`). Rules that tie several
//! properties together (`modified >= created`, "at least one of") live in `validate`.

/// What an identifier property may point at.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    /// Any STIX object.
    AnyObject,
    /// Any SDO.
    Sdo,
    /// Any SCO.
    Sco,
    /// An SCO or an SRO (the `object_refs` of observed-data).
    ScoOrSro,
    /// An SDO or an SCO (relationship ends).
    SdoOrSco,
    /// One of these types.
    Types(&'static [&'static str]),
}

/// The kind of value a property holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// A string.
    Str,
    /// A non-empty list of strings.
    StrList,
    /// A boolean.
    Bool,
    /// An integer within the bounds (inclusive).
    Int(i64, i64),
    /// A number within the bounds (inclusive).
    Num(f64, f64),
    /// A STIX timestamp.
    Time,
    /// An identifier of an object of the target.
    Ref(Target),
    /// A non-empty list of identifiers of objects of the target.
    Refs(Target),
    /// A hashes dictionary (§2.7).
    Hashes,
    /// A dictionary (§2.8).
    Dict,
    /// A list of kill-chain phases (§2.10).
    KillChain,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// Base64 binary (§2.1).
    Binary,
    /// Hex (§2.6).
    Hex,
    /// Any JSON value (lists of structured items not checked further).
    Any,
}

/// One property of a type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prop {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
}

const fn opt(name: &'static str, kind: Kind) -> Prop {
    Prop {
        name,
        kind,
        required: false,
    }
}

const fn req(name: &'static str, kind: Kind) -> Prop {
    Prop {
        name,
        kind,
        required: true,
    }
}

/// The category of a STIX type, which decides its common properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    Sdo,
    Sro,
    Sco,
    MarkingDefinition,
    LanguageContent,
    ExtensionDefinition,
}

use Kind::*;
use Target::*;

const IDENTITY: Target = Types(&["identity"]);
const SOFTWARE: Target = Types(&["software"]);
const USER_ACCOUNT: Target = Types(&["user-account"]);
const ARTIFACT: Target = Types(&["artifact"]);
const ADDRESS: Target = Types(&["ipv4-addr", "ipv6-addr", "mac-addr", "domain-name"]);
const NETWORK_TRAFFIC: Target = Types(&["network-traffic"]);
const EMAIL_ADDR: Target = Types(&["email-addr"]);
const OPINIONS: &[&str] = &[
    "strongly-disagree",
    "disagree",
    "neutral",
    "agree",
    "strongly-agree",
];
const EXTENSION_TYPES: &[&str] = &[
    "new-sdo",
    "new-sco",
    "new-sro",
    "property-extension",
    "toplevel-property-extension",
];

/// Common properties of SDOs and SROs (§3.2), `type` and `id` handled apart.
const SDO_COMMON: &[Prop] = &[
    req("spec_version", Str),
    opt("created_by_ref", Ref(IDENTITY)),
    req("created", Time),
    req("modified", Time),
    opt("revoked", Bool),
    opt("labels", StrList),
    opt("confidence", Int(0, 100)),
    opt("lang", Str),
    opt("external_references", Any),
    opt("object_marking_refs", Refs(Types(&["marking-definition"]))),
    opt("granular_markings", Any),
    opt("extensions", Any),
];

/// Common properties of SCOs (§3.2, §6).
const SCO_COMMON: &[Prop] = &[
    opt("spec_version", Str),
    opt("object_marking_refs", Refs(Types(&["marking-definition"]))),
    opt("granular_markings", Any),
    opt("defanged", Bool),
    opt("extensions", Any),
];

const MARKING_COMMON: &[Prop] = &[
    req("spec_version", Str),
    opt("created_by_ref", Ref(IDENTITY)),
    req("created", Time),
    opt("external_references", Any),
    opt("object_marking_refs", Refs(Types(&["marking-definition"]))),
    opt("granular_markings", Any),
    opt("extensions", Any),
    opt("name", Str),
    opt("definition_type", Str),
    opt("definition", Dict),
];

const LANGUAGE_CONTENT: &[Prop] = &[
    req("spec_version", Str),
    opt("created_by_ref", Ref(IDENTITY)),
    req("created", Time),
    req("modified", Time),
    opt("revoked", Bool),
    opt("labels", StrList),
    opt("confidence", Int(0, 100)),
    opt("external_references", Any),
    opt("object_marking_refs", Refs(Types(&["marking-definition"]))),
    opt("granular_markings", Any),
    opt("extensions", Any),
    req("object_ref", Ref(AnyObject)),
    opt("object_modified", Time),
    req("contents", Dict),
];

const EXTENSION_DEFINITION: &[Prop] = &[
    req("spec_version", Str),
    req("created_by_ref", Ref(IDENTITY)),
    req("created", Time),
    req("modified", Time),
    opt("revoked", Bool),
    opt("labels", StrList),
    opt("external_references", Any),
    opt("object_marking_refs", Refs(Types(&["marking-definition"]))),
    opt("granular_markings", Any),
    req("name", Str),
    opt("description", Str),
    req("schema", Str),
    req("version", Str),
    req("extension_types", StrList),
    opt("extension_properties", StrList),
];

/// The allowed `extension_types` values of an extension definition (§7.3).
pub(crate) const EXTENSION_TYPE_VALUES: &[&str] = EXTENSION_TYPES;

/// The category and the type-specific properties of a type defined by STIX 2.1, or `None`.
pub(crate) fn lookup(stix_type: &str) -> Option<(Category, &'static [Prop])> {
    if let Some(props) = sdo(stix_type) {
        return Some((Category::Sdo, props));
    }
    if let Some(props) = sco(stix_type) {
        return Some((Category::Sco, props));
    }
    Some(match stix_type {
        "relationship" => (Category::Sro, RELATIONSHIP),
        "sighting" => (Category::Sro, SIGHTING),
        "marking-definition" => (Category::MarkingDefinition, &[]),
        "language-content" => (Category::LanguageContent, &[]),
        "extension-definition" => (Category::ExtensionDefinition, &[]),
        _ => return None,
    })
}

/// The common properties of a category.
pub(crate) fn common(category: Category) -> &'static [Prop] {
    match category {
        Category::Sdo | Category::Sro => SDO_COMMON,
        Category::Sco => SCO_COMMON,
        Category::MarkingDefinition => MARKING_COMMON,
        Category::LanguageContent => LANGUAGE_CONTENT,
        Category::ExtensionDefinition => EXTENSION_DEFINITION,
    }
}

/// The category of a type STIX 2.1 defines, `None` for custom and unknown types.
pub(crate) fn category_of(stix_type: &str) -> Option<Category> {
    lookup(stix_type).map(|(c, _)| c)
}

const RELATIONSHIP: &[Prop] = &[
    req("relationship_type", Str),
    opt("description", Str),
    req("source_ref", Ref(SdoOrSco)),
    req("target_ref", Ref(SdoOrSco)),
    opt("start_time", Time),
    opt("stop_time", Time),
];

const SIGHTING: &[Prop] = &[
    opt("description", Str),
    opt("first_seen", Time),
    opt("last_seen", Time),
    opt("count", Int(0, 999_999_999)),
    req("sighting_of_ref", Ref(Sdo)),
    opt("observed_data_refs", Refs(Types(&["observed-data"]))),
    opt("where_sighted_refs", Refs(Types(&["identity", "location"]))),
    opt("summary", Bool),
];

fn sdo(stix_type: &str) -> Option<&'static [Prop]> {
    Some(match stix_type {
        "attack-pattern" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("aliases", StrList),
                    opt("kill_chain_phases", KillChain),
                ]
            }
        }
        "campaign" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("aliases", StrList),
                    opt("first_seen", Time),
                    opt("last_seen", Time),
                    opt("objective", Str),
                ]
            }
        }
        "course-of-action" => const { &[req("name", Str), opt("description", Str)] },
        "grouping" => {
            const {
                &[
                    opt("name", Str),
                    opt("description", Str),
                    req("context", Str),
                    req("object_refs", Refs(AnyObject)),
                ]
            }
        }
        "identity" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("roles", StrList),
                    opt("identity_class", Str),
                    opt("sectors", StrList),
                    opt("contact_information", Str),
                ]
            }
        }
        "incident" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("kill_chain_phases", KillChain),
                ]
            }
        }
        "indicator" => {
            const {
                &[
                    opt("name", Str),
                    opt("description", Str),
                    opt("indicator_types", StrList),
                    req("pattern", Str),
                    req("pattern_type", Str),
                    opt("pattern_version", Str),
                    req("valid_from", Time),
                    opt("valid_until", Time),
                    opt("kill_chain_phases", KillChain),
                ]
            }
        }
        "infrastructure" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("infrastructure_types", StrList),
                    opt("aliases", StrList),
                    opt("kill_chain_phases", KillChain),
                    opt("first_seen", Time),
                    opt("last_seen", Time),
                ]
            }
        }
        "intrusion-set" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("aliases", StrList),
                    opt("first_seen", Time),
                    opt("last_seen", Time),
                    opt("goals", StrList),
                    opt("resource_level", Str),
                    opt("primary_motivation", Str),
                    opt("secondary_motivations", StrList),
                ]
            }
        }
        "location" => {
            const {
                &[
                    opt("name", Str),
                    opt("description", Str),
                    opt("latitude", Num(-90.0, 90.0)),
                    opt("longitude", Num(-180.0, 180.0)),
                    opt("precision", Num(0.0, f64::MAX)),
                    opt("region", Str),
                    opt("country", Str),
                    opt("administrative_area", Str),
                    opt("city", Str),
                    opt("street_address", Str),
                    opt("postal_code", Str),
                ]
            }
        }
        "malware" => {
            const {
                &[
                    opt("name", Str),
                    opt("description", Str),
                    opt("malware_types", StrList),
                    req("is_family", Bool),
                    opt("aliases", StrList),
                    opt("kill_chain_phases", KillChain),
                    opt("first_seen", Time),
                    opt("last_seen", Time),
                    opt("operating_system_refs", Refs(SOFTWARE)),
                    opt("architecture_execution_envs", StrList),
                    opt("implementation_languages", StrList),
                    opt("capabilities", StrList),
                    opt("sample_refs", Refs(Types(&["file", "artifact"]))),
                ]
            }
        }
        "malware-analysis" => {
            const {
                &[
                    req("product", Str),
                    opt("version", Str),
                    opt("host_vm_ref", Ref(SOFTWARE)),
                    opt("operating_system_ref", Ref(SOFTWARE)),
                    opt("installed_software_refs", Refs(SOFTWARE)),
                    opt("configuration_version", Str),
                    opt("modules", StrList),
                    opt("analysis_engine_version", Str),
                    opt("analysis_definition_version", Str),
                    opt("submitted", Time),
                    opt("analysis_started", Time),
                    opt("analysis_ended", Time),
                    opt("result_name", Str),
                    opt("result", Str),
                    opt("analysis_sco_refs", Refs(Sco)),
                    opt(
                        "sample_ref",
                        Ref(Types(&["file", "network-traffic", "artifact"])),
                    ),
                ]
            }
        }
        "note" => {
            const {
                &[
                    opt("abstract", Str),
                    req("content", Str),
                    opt("authors", StrList),
                    req("object_refs", Refs(AnyObject)),
                ]
            }
        }
        "observed-data" => {
            const {
                &[
                    req("first_observed", Time),
                    req("last_observed", Time),
                    req("number_observed", Int(1, 999_999_999)),
                    opt("objects", Dict),
                    opt("object_refs", Refs(ScoOrSro)),
                ]
            }
        }
        "opinion" => {
            const {
                &[
                    opt("explanation", Str),
                    opt("authors", StrList),
                    req("opinion", Enum(OPINIONS)),
                    req("object_refs", Refs(AnyObject)),
                ]
            }
        }
        "report" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("report_types", StrList),
                    req("published", Time),
                    req("object_refs", Refs(AnyObject)),
                ]
            }
        }
        "threat-actor" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("threat_actor_types", StrList),
                    opt("aliases", StrList),
                    opt("first_seen", Time),
                    opt("last_seen", Time),
                    opt("roles", StrList),
                    opt("goals", StrList),
                    opt("sophistication", Str),
                    opt("resource_level", Str),
                    opt("primary_motivation", Str),
                    opt("secondary_motivations", StrList),
                    opt("personal_motivations", StrList),
                ]
            }
        }
        "tool" => {
            const {
                &[
                    req("name", Str),
                    opt("description", Str),
                    opt("tool_types", StrList),
                    opt("aliases", StrList),
                    opt("kill_chain_phases", KillChain),
                    opt("tool_version", Str),
                ]
            }
        }
        "vulnerability" => const { &[req("name", Str), opt("description", Str)] },
        _ => return None,
    })
}

fn sco(stix_type: &str) -> Option<&'static [Prop]> {
    Some(match stix_type {
        "artifact" => {
            const {
                &[
                    opt("mime_type", Str),
                    opt("payload_bin", Binary),
                    opt("url", Str),
                    opt("hashes", Hashes),
                    opt("encryption_algorithm", Str),
                    opt("decryption_key", Str),
                ]
            }
        }
        "autonomous-system" => {
            const {
                &[
                    req("number", Int(0, u32::MAX as i64)),
                    opt("name", Str),
                    opt("rir", Str),
                ]
            }
        }
        "directory" => {
            const {
                &[
                    req("path", Str),
                    opt("path_enc", Str),
                    opt("ctime", Time),
                    opt("mtime", Time),
                    opt("atime", Time),
                    opt("contains_refs", Refs(Types(&["file", "directory"]))),
                ]
            }
        }
        "domain-name" => {
            const {
                &[
                    req("value", Str),
                    opt(
                        "resolves_to_refs",
                        Refs(Types(&["ipv4-addr", "ipv6-addr", "domain-name"])),
                    ),
                ]
            }
        }
        "email-addr" => {
            const {
                &[
                    req("value", Str),
                    opt("display_name", Str),
                    opt("belongs_to_ref", Ref(USER_ACCOUNT)),
                ]
            }
        }
        "email-message" => {
            const {
                &[
                    req("is_multipart", Bool),
                    opt("date", Time),
                    opt("content_type", Str),
                    opt("from_ref", Ref(EMAIL_ADDR)),
                    opt("sender_ref", Ref(EMAIL_ADDR)),
                    opt("to_refs", Refs(EMAIL_ADDR)),
                    opt("cc_refs", Refs(EMAIL_ADDR)),
                    opt("bcc_refs", Refs(EMAIL_ADDR)),
                    opt("message_id", Str),
                    opt("subject", Str),
                    opt("received_lines", StrList),
                    opt("additional_header_fields", Dict),
                    opt("body", Str),
                    opt("body_multipart", Any),
                    opt("raw_email_ref", Ref(ARTIFACT)),
                ]
            }
        }
        "file" => {
            const {
                &[
                    opt("hashes", Hashes),
                    opt("size", Int(0, i64::MAX)),
                    opt("name", Str),
                    opt("name_enc", Str),
                    opt("magic_number_hex", Hex),
                    opt("mime_type", Str),
                    opt("ctime", Time),
                    opt("mtime", Time),
                    opt("atime", Time),
                    opt("parent_directory_ref", Ref(Types(&["directory"]))),
                    opt("contains_refs", Refs(Sco)),
                    opt("content_ref", Ref(ARTIFACT)),
                ]
            }
        }
        "ipv4-addr" | "ipv6-addr" => {
            const {
                &[
                    req("value", Str),
                    opt("resolves_to_refs", Refs(Types(&["mac-addr"]))),
                    opt("belongs_to_refs", Refs(Types(&["autonomous-system"]))),
                ]
            }
        }
        "mac-addr" => const { &[req("value", Str)] },
        "mutex" => const { &[req("name", Str)] },
        "network-traffic" => {
            const {
                &[
                    opt("start", Time),
                    opt("end", Time),
                    opt("is_active", Bool),
                    opt("src_ref", Ref(ADDRESS)),
                    opt("dst_ref", Ref(ADDRESS)),
                    opt("src_port", Int(0, 65_535)),
                    opt("dst_port", Int(0, 65_535)),
                    req("protocols", StrList),
                    opt("src_byte_count", Int(0, i64::MAX)),
                    opt("dst_byte_count", Int(0, i64::MAX)),
                    opt("src_packets", Int(0, i64::MAX)),
                    opt("dst_packets", Int(0, i64::MAX)),
                    opt("ipfix", Dict),
                    opt("src_payload_ref", Ref(ARTIFACT)),
                    opt("dst_payload_ref", Ref(ARTIFACT)),
                    opt("encapsulates_refs", Refs(NETWORK_TRAFFIC)),
                    opt("encapsulated_by_ref", Ref(NETWORK_TRAFFIC)),
                ]
            }
        }
        "process" => {
            const {
                &[
                    opt("is_hidden", Bool),
                    opt("pid", Int(i64::MIN, i64::MAX)),
                    opt("created_time", Time),
                    opt("cwd", Str),
                    opt("command_line", Str),
                    opt("environment_variables", Dict),
                    opt("opened_connection_refs", Refs(NETWORK_TRAFFIC)),
                    opt("creator_user_ref", Ref(USER_ACCOUNT)),
                    opt("image_ref", Ref(Types(&["file"]))),
                    opt("parent_ref", Ref(Types(&["process"]))),
                    opt("child_refs", Refs(Types(&["process"]))),
                ]
            }
        }
        "software" => {
            const {
                &[
                    req("name", Str),
                    opt("cpe", Str),
                    opt("swid", Str),
                    opt("languages", StrList),
                    opt("vendor", Str),
                    opt("version", Str),
                ]
            }
        }
        "url" => const { &[req("value", Str)] },
        "user-account" => {
            const {
                &[
                    opt("user_id", Str),
                    opt("credential", Str),
                    opt("account_login", Str),
                    opt("account_type", Str),
                    opt("display_name", Str),
                    opt("is_service_account", Bool),
                    opt("is_privileged", Bool),
                    opt("can_escalate_privs", Bool),
                    opt("is_disabled", Bool),
                    opt("account_created", Time),
                    opt("account_expires", Time),
                    opt("credential_last_changed", Time),
                    opt("account_first_login", Time),
                    opt("account_last_login", Time),
                ]
            }
        }
        "windows-registry-key" => {
            const {
                &[
                    opt("key", Str),
                    opt("values", Any),
                    opt("modified_time", Time),
                    opt("creator_user_ref", Ref(USER_ACCOUNT)),
                    opt("number_of_subkeys", Int(0, i64::MAX)),
                ]
            }
        }
        "x509-certificate" => {
            const {
                &[
                    opt("is_self_signed", Bool),
                    opt("hashes", Hashes),
                    opt("version", Str),
                    opt("serial_number", Str),
                    opt("signature_algorithm", Str),
                    opt("issuer", Str),
                    opt("validity_not_before", Time),
                    opt("validity_not_after", Time),
                    opt("subject", Str),
                    opt("subject_public_key_algorithm", Str),
                    opt("subject_public_key_modulus", Str),
                    opt("subject_public_key_exponent", Int(0, i64::MAX)),
                    opt("x509_v3_extensions", Dict),
                ]
            }
        }
        _ => return None,
    })
}
