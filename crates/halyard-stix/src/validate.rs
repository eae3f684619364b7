//! Validation of one STIX 2.1 object (STIX 2.1 OASIS Standard, §2-§8 and §11).
//!
//! One generic walk over the object's properties: each name is looked up in the common
//! table of the object's category and in the table of its type (`schema`), and its value is
//! checked against the kind found there. A name in neither table is refused as unknown
//! unless it is a custom property (§11.1: `x_` prefix, `^[a-z0-9_]{3,250}$`) or the object
//! declares a top-level property extension. The contents of `extensions` are not checked:
//! they belong to their extension definitions. Rules tying several properties together
//! (`modified >= created`, "one of", indicator patterns, TLP marking ids) follow in `rules`.
//!
//! Every error names the property, as a path (`external_references[0].source_name`), and
//! says why in words; [`crate::bundle`] adds the object's position in its bundle.

use crate::marking::tlp_of_marking_ref;
use crate::object::StixObject;
use crate::rules;
use crate::schema::{self, Category, Kind, Prop, Target};
use crate::time;
use serde_json::{Map, Value};
use std::fmt;

/// Why an object (or a bundle) was refused.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationError {
    /// The position of the object in its bundle, when it came in one.
    pub index: Option<usize>,
    /// The `id` of the object, when it has a readable one.
    pub id: Option<String>,
    /// The property at fault, as a path: `pattern`, `external_references[0].source_name`;
    /// empty when the fault is the whole input (malformed JSON, too big).
    pub property: String,
    /// What is wrong, in words.
    pub reason: String,
}

impl ValidationError {
    /// An error about `property` of the object being checked.
    pub fn new(property: impl Into<String>, reason: impl Into<String>) -> Self {
        ValidationError {
            index: None,
            id: None,
            property: property.into(),
            reason: reason.into(),
        }
    }

    /// The same error, located at `index` in a bundle.
    pub fn at_index(mut self, index: usize) -> Self {
        self.index = Some(index);
        self
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.index, &self.id) {
            (Some(i), Some(id)) => write!(f, "object {i} ({id}): ")?,
            (Some(i), None) => write!(f, "object {i}: ")?,
            (None, Some(id)) => write!(f, "{id}: ")?,
            (None, None) => {}
        }
        if !self.property.is_empty() {
            write!(f, "property `{}`: ", self.property)?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ValidationError {}

/// Bounds on what [`crate::bundle::parse`] accepts, checked before or while parsing so that a
/// hostile input costs little.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest input, in bytes, before anything is parsed.
    pub max_bytes: usize,
    /// Most objects in one bundle or envelope.
    pub max_objects: usize,
    /// Deepest nesting of JSON arrays and objects, the outermost counting as one.
    pub max_depth: usize,
    /// Longest JSON string (keys included), in bytes.
    pub max_string_bytes: usize,
    /// Most properties in any one JSON object within a STIX object.
    pub max_properties: usize,
}

impl Default for Limits {
    /// 16 MiB, 100 000 objects, depth 16, 1 MiB strings, 1024 properties per object.
    fn default() -> Self {
        Limits {
            max_bytes: 16 * 1024 * 1024,
            max_objects: 100_000,
            max_depth: 16,
            max_string_bytes: 1024 * 1024,
            max_properties: 1024,
        }
    }
}

pub(crate) type Check = Result<(), ValidationError>;

pub(crate) fn fail<T>(
    property: impl Into<String>,
    reason: impl Into<String>,
) -> Result<T, ValidationError> {
    Err(ValidationError::new(property, reason))
}

/// Validates one STIX 2.1 object and reads the properties every consumer needs.
///
/// Checks the common properties (type, id, spec_version, timestamps, references, markings,
/// external references, custom property names), the required properties and value kinds of
/// the type, and the rules between properties, including the indicator pattern when its
/// `pattern_type` is `stix`.
pub fn object(v: &Value) -> Result<StixObject, ValidationError> {
    let Some(map) = v.as_object() else {
        return fail("", "a STIX object must be a JSON object");
    };
    check_object(map).map_err(|mut e| {
        e.id = map.get("id").and_then(Value::as_str).map(str::to_string);
        e
    })
}

fn check_object(map: &Map<String, Value>) -> Result<StixObject, ValidationError> {
    let stix_type = required_str(map, "type")?;
    check_type_name(stix_type).or_else(|reason| fail("type", reason))?;
    let id = required_str(map, "id")?;
    let id_type = parse_identifier(id).or_else(|reason| fail("id", reason))?;
    if id_type != stix_type {
        return fail(
            "id",
            format!("the id's type `{id_type}` differs from the object's type `{stix_type}`"),
        );
    }
    let (category, props, custom_type) = match schema::lookup(stix_type) {
        Some((category, props)) => (category, props, false),
        None => (custom_category(stix_type, map)?, &[][..], true),
    };
    check_properties(map, category, props, custom_type)?;
    check_common(map, category)?;
    rules::check(stix_type, category, map)?;
    Ok(summarise(map, stix_type, id, category))
}

/// The category of a type STIX 2.1 does not define: a custom object (§11.2, `x-` prefix) or
/// a new object type declared by an extension definition (§7.3). Objects with `created`
/// are taken as SDOs, others as SCOs.
fn custom_category(stix_type: &str, map: &Map<String, Value>) -> Result<Category, ValidationError> {
    let declared = map
        .get("extensions")
        .and_then(Value::as_object)
        .is_some_and(|exts| {
            exts.values().any(|e| {
                matches!(
                    e.get("extension_type").and_then(Value::as_str),
                    Some("new-sdo" | "new-sco" | "new-sro")
                )
            })
        });
    if !declared && !stix_type.starts_with("x-") {
        return fail(
            "type",
            format!("unknown object type `{stix_type}`: not defined by STIX 2.1, not a custom `x-` type, and no extension declares it"),
        );
    }
    Ok(if map.contains_key("created") {
        Category::Sdo
    } else {
        Category::Sco
    })
}

fn required_str<'a>(map: &'a Map<String, Value>, name: &str) -> Result<&'a str, ValidationError> {
    match map.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => fail(name, "must be a string"),
        None => fail(name, "required property is missing"),
    }
}

/// STIX 2.1 §3.1: type names are 3 to 250 characters of `a-z`, `0-9` and single hyphens.
fn check_type_name(t: &str) -> Result<(), String> {
    let chars_ok = t
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let hyphens_ok = !t.starts_with('-') && !t.ends_with('-') && !t.contains("--");
    if !(3..=250).contains(&t.len()) || !chars_ok || !hyphens_ok {
        return Err(format!(
            "`{}` is not a STIX type name: 3 to 250 characters of a-z, 0-9 and single inner hyphens",
            shorten(t)
        ));
    }
    Ok(())
}

/// Reads an identifier `<type>--<UUID>` (STIX 2.1 §2.9) and returns its type.
pub(crate) fn parse_identifier(id: &str) -> Result<&str, String> {
    let Some((t, uuid)) = id.split_once("--") else {
        return Err(format!(
            "`{}` is not an identifier of the form <type>--<UUID>",
            shorten(id)
        ));
    };
    check_type_name(t)?;
    if !is_uuid(uuid) {
        return Err(format!(
            "`{}` is not an RFC 4122 UUID (versions 1 to 5)",
            shorten(uuid)
        ));
    }
    Ok(t)
}

/// An RFC 4122 UUID in its text form, of version 1 to 5 and the RFC 4122 variant.
pub(crate) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 36 {
        return false;
    }
    let shape = b.iter().enumerate().all(|(i, &c)| match i {
        8 | 13 | 18 | 23 => c == b'-',
        _ => c.is_ascii_hexdigit(),
    });
    let version_ok = matches!(b.get(14), Some(b'1'..=b'5'));
    let variant_ok = matches!(b.get(19), Some(b'8' | b'9' | b'a' | b'b' | b'A' | b'B'));
    shape && version_ok && variant_ok
}

/// A long value cut for an error message.
pub(crate) fn shorten(s: &str) -> String {
    if s.chars().count() <= 80 {
        return s.to_string();
    }
    let cut: String = s.chars().take(77).collect();
    format!("{cut}...")
}

fn check_properties(
    map: &Map<String, Value>,
    category: Category,
    props: &[Prop],
    custom_type: bool,
) -> Check {
    let common = schema::common(category);
    let toplevel_ext = declares_toplevel_extension(map);
    for (name, value) in map {
        if name == "type" || name == "id" {
            continue;
        }
        let defined = common.iter().chain(props).find(|p| p.name == name);
        match defined {
            Some(prop) => check_kind(value, prop.kind, name)?,
            None => check_undefined_name(name, custom_type || toplevel_ext)?,
        }
    }
    for prop in common.iter().chain(props).filter(|p| p.required) {
        if !map.contains_key(prop.name) {
            return fail(prop.name, "required property is missing");
        }
    }
    Ok(())
}

fn declares_toplevel_extension(map: &Map<String, Value>) -> bool {
    map.get("extensions")
        .and_then(Value::as_object)
        .is_some_and(|exts| {
            exts.values().any(|e| {
                e.get("extension_type").and_then(Value::as_str)
                    == Some("toplevel-property-extension")
            })
        })
}

/// A property the type does not define: allowed only as a custom property (§11.1), or, for
/// custom types and top-level property extensions, any well-formed property name.
fn check_undefined_name(name: &str, any_well_formed: bool) -> Check {
    let well_formed = (3..=250).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !well_formed {
        return fail(
            shorten(name),
            "invalid property name: custom property names must match ^[a-z0-9_]{3,250}$",
        );
    }
    if any_well_formed || name.starts_with("x_") {
        return Ok(());
    }
    fail(
        name,
        "unknown property: not defined for this type; custom properties must start with `x_`",
    )
}

/// Checks one value against the kind its property table gives it.
pub(crate) fn check_kind(value: &Value, kind: Kind, path: &str) -> Check {
    match kind {
        Kind::Str => expect_str(value, path).map(drop),
        Kind::StrList => each_item(value, path, |v, p| expect_str(v, p).map(drop)),
        Kind::Bool if value.is_boolean() => Ok(()),
        Kind::Bool => fail(path, "must be a boolean (true or false)"),
        Kind::Int(min, max) => check_int(value, min, max, path),
        Kind::Num(min, max) => match value.as_f64() {
            Some(x) if x >= min && x <= max => Ok(()),
            Some(_) => fail(path, format!("must be between {min} and {max}")),
            None => fail(path, "must be a number"),
        },
        Kind::Time => check_timestamp(value, path),
        Kind::Ref(target) => check_ref(value, target, path),
        Kind::Refs(target) => each_item(value, path, |v, p| check_ref(v, target, p)),
        Kind::Hashes => check_hashes(value, path),
        Kind::Dict => check_dict(value, path),
        Kind::KillChain => each_item(value, path, check_kill_chain_phase),
        Kind::Enum(allowed) => match value.as_str() {
            Some(s) if allowed.contains(&s) => Ok(()),
            _ => fail(path, format!("must be one of: {}", allowed.join(", "))),
        },
        Kind::Binary => match value.as_str() {
            Some(s) if crate::pattern::is_base64(s) => Ok(()),
            _ => fail(path, "must be base64-encoded binary (RFC 4648)"),
        },
        Kind::Hex => match value.as_str() {
            Some(s) if s.len().is_multiple_of(2) && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(())
            }
            _ => fail(path, "must be hex: an even number of hex digits"),
        },
        Kind::Any => Ok(()),
    }
}

pub(crate) fn expect_str<'a>(value: &'a Value, path: &str) -> Result<&'a str, ValidationError> {
    value
        .as_str()
        .ok_or_else(|| ValidationError::new(path, "must be a string"))
}

fn check_int(value: &Value, min: i64, max: i64, path: &str) -> Check {
    match value.as_i64() {
        Some(n) if n >= min && n <= max => Ok(()),
        Some(_) => fail(path, format!("must be an integer from {min} to {max}")),
        None => fail(path, format!("must be an integer from {min} to {max}")),
    }
}

/// A non-empty list whose every item passes `check` (STIX 2.1 §2.9: lists are never empty).
pub(crate) fn each_item(value: &Value, path: &str, check: impl Fn(&Value, &str) -> Check) -> Check {
    let Some(items) = value.as_array() else {
        return fail(path, "must be a list");
    };
    if items.is_empty() {
        return fail(path, "must not be an empty list");
    }
    for (i, item) in items.iter().enumerate() {
        check(item, &format!("{path}[{i}]"))?;
    }
    Ok(())
}

pub(crate) fn check_timestamp(value: &Value, path: &str) -> Check {
    match value.as_str() {
        Some(s) if time::is_stix_timestamp(s) => Ok(()),
        Some(s) => fail(
            path,
            format!(
                "`{}` is not a STIX timestamp (YYYY-MM-DDTHH:MM:SS[.s+]Z, UTC)",
                shorten(s)
            ),
        ),
        None => fail(path, "must be a timestamp string"),
    }
}

/// An identifier whose type the target allows. Types STIX 2.1 does not define (custom
/// objects) are allowed wherever a category is asked for, since their category is unknown.
pub(crate) fn check_ref(value: &Value, target: Target, path: &str) -> Check {
    let id = expect_str(value, path)?;
    let t = parse_identifier(id).or_else(|reason| fail(path, reason))?;
    let category = schema::category_of(t);
    let ok = match target {
        Target::AnyObject => true,
        Target::Types(types) => types.contains(&t),
        Target::Sdo => matches!(category, Some(Category::Sdo) | None),
        Target::Sco => matches!(category, Some(Category::Sco) | None),
        Target::ScoOrSro => matches!(category, Some(Category::Sco | Category::Sro) | None),
        Target::SdoOrSco => matches!(category, Some(Category::Sdo | Category::Sco) | None),
    };
    if ok {
        return Ok(());
    }
    let wanted = match target {
        Target::Types(types) => types.join(" or "),
        Target::Sdo => "an SDO".into(),
        Target::Sco => "an SCO".into(),
        Target::ScoOrSro => "an SCO or SRO".into(),
        Target::SdoOrSco => "an SDO or SCO".into(),
        Target::AnyObject => "any object".into(),
    };
    fail(
        path,
        format!("references a `{t}` but must reference {wanted}"),
    )
}

/// Hash algorithm names of the hashing-algorithm-ov with a fixed hex length.
const HASH_HEX_LENGTHS: [(&str, usize); 6] = [
    ("MD5", 32),
    ("SHA-1", 40),
    ("SHA-256", 64),
    ("SHA-512", 128),
    ("SHA3-256", 64),
    ("SHA3-512", 128),
];

/// A hashes dictionary (STIX 2.1 §2.7): algorithm names to hash values, values of the
/// algorithms in the vocabulary in hex of the right length.
pub(crate) fn check_hashes(value: &Value, path: &str) -> Check {
    let Some(hashes) = value.as_object() else {
        return fail(
            path,
            "must be a dictionary of hash algorithm names to hash values",
        );
    };
    if hashes.is_empty() {
        return fail(path, "must not be empty");
    }
    for (name, hash) in hashes {
        let p = format!("{path}.{name}");
        if name.is_empty() || name.len() > 250 {
            return fail(p, "hash algorithm names are 1 to 250 characters");
        }
        let hash = expect_str(hash, &p)?;
        let fixed = HASH_HEX_LENGTHS.iter().find(|(n, _)| n == name);
        if let Some((_, len)) = fixed {
            if hash.len() != *len || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return fail(p, format!("a {name} hash is {len} hex digits"));
            }
        }
    }
    Ok(())
}

/// A dictionary (STIX 2.1 §2.8): keys of at most 250 ASCII letters, digits, `-` and `_`.
pub(crate) fn check_dict(value: &Value, path: &str) -> Check {
    let Some(dict) = value.as_object() else {
        return fail(path, "must be a dictionary (a JSON object)");
    };
    if dict.is_empty() {
        return fail(path, "must not be an empty dictionary");
    }
    for key in dict.keys() {
        let ok = !key.is_empty()
            && key.len() <= 250
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !ok {
            return fail(
                format!("{path}.{}", shorten(key)),
                "dictionary keys are 1 to 250 ASCII letters, digits, '-' or '_'",
            );
        }
    }
    Ok(())
}

fn check_kill_chain_phase(value: &Value, path: &str) -> Check {
    let Some(phase) = value.as_object() else {
        return fail(path, "a kill-chain phase must be an object");
    };
    for name in ["kill_chain_name", "phase_name"] {
        match phase.get(name) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(_) => return fail(format!("{path}.{name}"), "must be a non-empty string"),
            None => return fail(format!("{path}.{name}"), "required property is missing"),
        }
    }
    Ok(())
}

/// The common properties with structure: spec_version, versions, external references,
/// granular markings, extensions and lang.
fn check_common(map: &Map<String, Value>, category: Category) -> Check {
    if let Some(v) = map.get("spec_version") {
        if v.as_str() != Some("2.1") {
            return fail("spec_version", "must be \"2.1\"");
        }
    }
    if category != Category::MarkingDefinition {
        for name in ["created", "modified"] {
            check_millisecond_precision(map, name)?;
        }
    }
    rules::check_not_before(map, "created", "modified")?;
    if let Some(refs) = map.get("external_references") {
        each_item(refs, "external_references", rules::check_external_reference)?;
    }
    if let Some(markings) = map.get("granular_markings") {
        each_item(markings, "granular_markings", rules::check_granular_marking)?;
    }
    if let Some(exts) = map.get("extensions") {
        rules::check_extensions(exts)?;
    }
    if let Some(lang) = map.get("lang") {
        rules::check_lang(lang, "lang")?;
    }
    Ok(())
}

/// STIX 2.1 §3.2: `created` and `modified` are precise to at least the millisecond (three or
/// more fraction digits); marking definitions are exempt, as stix2-validator has them.
fn check_millisecond_precision(map: &Map<String, Value>, name: &str) -> Check {
    let Some(ts) = map.get(name).and_then(Value::as_str) else {
        return Ok(());
    };
    let digits = ts
        .split_once('.')
        .map_or(0, |(_, frac)| frac.trim_end_matches('Z').len());
    if digits < 3 {
        return fail(
            name,
            format!(
                "`{}` must be precise to the millisecond (YYYY-MM-DDTHH:MM:SS.sssZ)",
                shorten(ts)
            ),
        );
    }
    Ok(())
}

fn summarise(
    map: &Map<String, Value>,
    stix_type: &str,
    id: &str,
    category: Category,
) -> StixObject {
    let text = |name: &str| map.get(name).and_then(Value::as_str).map(str::to_string);
    let marking_refs: Vec<String> = map
        .get("object_marking_refs")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let tlp = if category == Category::MarkingDefinition {
        None
    } else {
        marking_refs
            .iter()
            .filter_map(|r| tlp_of_marking_ref(r))
            .max()
    };
    let created = text("created");
    StixObject {
        id: id.to_string(),
        stix_type: stix_type.to_string(),
        spec_version: text("spec_version").unwrap_or_else(|| "2.1".to_string()),
        modified: text("modified").or_else(|| created.clone()),
        created,
        created_by_ref: text("created_by_ref"),
        revoked: map.get("revoked").and_then(Value::as_bool).unwrap_or(false),
        tlp,
        marking_refs,
        json: map.clone(),
    }
}
