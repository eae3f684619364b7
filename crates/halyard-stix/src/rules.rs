//! Rules of STIX 2.1 that tie several properties of one object together, and the checks of
//! the structured common properties (external references, granular markings, extensions).
//!
//! [`crate::validate`] has already checked each property's kind when these run, so a rule
//! reads values knowing their type; it still reads them with `get` and `as_*`, never
//! indexing, so that a rule never panics whatever it is given.

use crate::marking::{tlp_1_0_id, Tlp, TLP_2_0_EXTENSION_ID};
use crate::pattern;
use crate::schema::{Category, Kind, Target, EXTENSION_TYPE_VALUES};
use crate::time;
use crate::validate::{check_kind, check_ref, expect_str, fail, is_uuid, Check};
use serde_json::{Map, Value};

/// The rules of the object's type and category.
pub(crate) fn check(stix_type: &str, category: Category, map: &Map<String, Value>) -> Check {
    match category {
        Category::MarkingDefinition => return check_marking_definition(map),
        Category::ExtensionDefinition => return check_extension_types(map),
        _ => {}
    }
    match stix_type {
        "indicator" => check_indicator(map),
        "campaign" | "intrusion-set" | "threat-actor" | "infrastructure" | "sighting" => {
            check_not_before(map, "first_seen", "last_seen")
        }
        "malware" => check_malware(map),
        "malware-analysis" => need_one_of(map, &["result", "analysis_sco_refs"]),
        "observed-data" => check_observed_data(map),
        "relationship" => check_strictly_before(map, "start_time", "stop_time"),
        "location" => check_location(map),
        "language-content" => check_contents(map),
        _ => check_sco(stix_type, map),
    }
}

fn check_sco(stix_type: &str, map: &Map<String, Value>) -> Check {
    match stix_type {
        "artifact" => check_artifact(map),
        "file" => need_one_of(map, &["hashes", "name"]),
        "email-message" => check_email_message(map),
        "network-traffic" => check_network_traffic(map),
        "ipv4-addr" => check_ip_value(map, false),
        "ipv6-addr" => check_ip_value(map, true),
        "mac-addr" => check_mac(map),
        "email-addr" => check_value(map, |v| v.contains('@'), "an email address (addr-spec)"),
        "url" => check_value(map, has_url_scheme, "a URL with a scheme (RFC 3986)"),
        "domain-name" => check_value(map, |v| !v.is_empty(), "a non-empty domain name"),
        "process" | "user-account" | "windows-registry-key" | "x509-certificate" => {
            need_specific_property(stix_type, map)
        }
        _ => Ok(()),
    }
}

fn time_of(map: &Map<String, Value>, name: &str) -> Option<i128> {
    map.get(name)
        .and_then(Value::as_str)
        .and_then(time::parse_rfc3339)
}

/// `later`, when both are present, is not before `earlier`.
pub(crate) fn check_not_before(map: &Map<String, Value>, earlier: &str, later: &str) -> Check {
    if let (Some(a), Some(b)) = (time_of(map, earlier), time_of(map, later)) {
        if b < a {
            return fail(later, format!("must not be earlier than `{earlier}`"));
        }
    }
    Ok(())
}

fn check_strictly_before(map: &Map<String, Value>, earlier: &str, later: &str) -> Check {
    if let (Some(a), Some(b)) = (time_of(map, earlier), time_of(map, later)) {
        if b <= a {
            return fail(later, format!("must be later than `{earlier}`"));
        }
    }
    Ok(())
}

fn need_one_of(map: &Map<String, Value>, names: &[&str]) -> Check {
    if names.iter().any(|n| map.contains_key(*n)) {
        return Ok(());
    }
    fail(
        names.join("|"),
        format!("at least one of {} must be present", names.join(", ")),
    )
}

/// STIX 2.1 §4.7: pattern, pattern_type and valid_from; valid_until after valid_from; a
/// `stix` pattern must parse.
fn check_indicator(map: &Map<String, Value>) -> Check {
    check_strictly_before(map, "valid_from", "valid_until")?;
    if map.get("pattern_type").and_then(Value::as_str) != Some("stix") {
        return Ok(());
    }
    let text = map
        .get("pattern")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match pattern::parse(text) {
        Ok(_) => Ok(()),
        Err(e) => fail("pattern", format!("invalid STIX pattern {e}")),
    }
}

fn check_malware(map: &Map<String, Value>) -> Check {
    check_not_before(map, "first_seen", "last_seen")?;
    if map.get("is_family").and_then(Value::as_bool) == Some(true) && !map.contains_key("name") {
        return fail("name", "required when is_family is true");
    }
    Ok(())
}

fn check_observed_data(map: &Map<String, Value>) -> Check {
    check_not_before(map, "first_observed", "last_observed")?;
    match (map.contains_key("objects"), map.contains_key("object_refs")) {
        (true, true) => fail("objects", "must not be present together with object_refs"),
        (false, false) => fail("object_refs", "required property is missing"),
        _ => Ok(()),
    }
}

/// STIX 2.1 §4.11: latitude and longitude go together, precision needs them, and one of
/// region, country or latitude/longitude is present.
fn check_location(map: &Map<String, Value>) -> Check {
    let lat = map.contains_key("latitude");
    let long = map.contains_key("longitude");
    if lat != long {
        let missing = if lat { "longitude" } else { "latitude" };
        return fail(missing, "latitude and longitude must be given together");
    }
    if map.contains_key("precision") && !lat {
        return fail("precision", "requires latitude and longitude");
    }
    if !lat && !map.contains_key("region") && !map.contains_key("country") {
        return fail(
            "region",
            "one of region, country, or latitude and longitude must be present",
        );
    }
    Ok(())
}

/// STIX 2.1 §7.1: `contents` maps language tags to dictionaries of translated properties.
fn check_contents(map: &Map<String, Value>) -> Check {
    let contents = map.get("contents").and_then(Value::as_object);
    for (lang, translated) in contents.into_iter().flatten() {
        let path = format!("contents.{lang}");
        check_lang(&Value::String(lang.clone()), &path)?;
        if !translated.is_object() {
            return fail(path, "must be a dictionary of translated properties");
        }
    }
    Ok(())
}

fn check_artifact(map: &Map<String, Value>) -> Check {
    match (map.contains_key("payload_bin"), map.contains_key("url")) {
        (true, true) => return fail("url", "must not be present together with payload_bin"),
        (false, false) => return fail("payload_bin", "one of payload_bin or url must be present"),
        _ => {}
    }
    if map.contains_key("url") && !map.contains_key("hashes") {
        return fail("hashes", "required when url is present");
    }
    Ok(())
}

fn check_email_message(map: &Map<String, Value>) -> Check {
    let multipart = map
        .get("is_multipart")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if multipart && map.contains_key("body") {
        return fail("body", "must not be present when is_multipart is true");
    }
    if !multipart && map.contains_key("body_multipart") {
        return fail(
            "body_multipart",
            "must not be present when is_multipart is false",
        );
    }
    Ok(())
}

fn check_network_traffic(map: &Map<String, Value>) -> Check {
    need_one_of(map, &["src_ref", "dst_ref"])?;
    // §6.12: with `end`, `is_active` MUST be false; read as the stix2 library reads it,
    // which wants the `false` written out.
    if map.contains_key("end") && map.get("is_active").and_then(Value::as_bool) != Some(false) {
        return fail("is_active", "must be present and false when end is present");
    }
    check_not_before(map, "start", "end")
}

fn check_value(map: &Map<String, Value>, ok: impl Fn(&str) -> bool, what: &str) -> Check {
    match map.get("value").and_then(Value::as_str) {
        Some(v) if ok(v) => Ok(()),
        _ => fail("value", format!("must be {what}")),
    }
}

fn has_url_scheme(v: &str) -> bool {
    let Some((scheme, _)) = v.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// An IPv4 or IPv6 address, optionally in CIDR notation (STIX 2.1 §6.4, §6.5).
fn check_ip_value(map: &Map<String, Value>, v6: bool) -> Check {
    let ok = |v: &str| {
        let (addr, prefix) = match v.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (v, None),
        };
        let max = if v6 { 128 } else { 32 };
        let prefix_ok = prefix.is_none_or(|p| p.parse::<u8>().is_ok_and(|n| n <= max));
        let addr_ok = if v6 {
            addr.parse::<std::net::Ipv6Addr>().is_ok()
        } else {
            addr.parse::<std::net::Ipv4Addr>().is_ok()
        };
        addr_ok && prefix_ok
    };
    let what = if v6 {
        "an IPv6 address or CIDR block"
    } else {
        "an IPv4 address or CIDR block"
    };
    check_value(map, ok, what)
}

/// STIX 2.1 §6.8: a MAC address, lower case, colon-delimited.
fn check_mac(map: &Map<String, Value>) -> Check {
    let ok = |v: &str| {
        let parts: Vec<&str> = v.split(':').collect();
        parts.len() == 6
            && parts.iter().all(|p| {
                p.len() == 2
                    && p.bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            })
    };
    check_value(
        map,
        ok,
        "a lower-case, colon-delimited MAC address (aa:bb:cc:dd:ee:ff)",
    )
}

/// Process, user account, registry key and certificate objects have only optional
/// properties, of which at least one must be present (or an extension).
fn need_specific_property(stix_type: &str, map: &Map<String, Value>) -> Check {
    let common = [
        "type",
        "id",
        "spec_version",
        "object_marking_refs",
        "granular_markings",
        "defanged",
    ];
    if map.keys().any(|k| !common.contains(&k.as_str())) {
        return Ok(());
    }
    fail(
        "",
        format!("a {stix_type} object must have at least one property of its own"),
    )
}

/// STIX 2.1 §7.2: a statement or TLP 1.0 definition, or the TLP 2.0 extension form.
fn check_marking_definition(map: &Map<String, Value>) -> Check {
    let tlp2 = map
        .get("extensions")
        .and_then(|e| e.get(TLP_2_0_EXTENSION_ID));
    if let Some(ext) = tlp2 {
        return check_tlp2_marking(map, ext);
    }
    let Some(definition_type) = map.get("definition_type").and_then(Value::as_str) else {
        if map.contains_key("extensions") {
            return Ok(());
        }
        return fail(
            "definition_type",
            "required unless the marking is defined by an extension",
        );
    };
    let Some(definition) = map.get("definition").and_then(Value::as_object) else {
        return fail("definition", "required when definition_type is present");
    };
    match definition_type {
        "statement" => match definition.get("statement") {
            Some(Value::String(_)) if definition.len() == 1 => Ok(()),
            _ => fail(
                "definition.statement",
                "a statement definition is {\"statement\": <text>}",
            ),
        },
        "tlp" => check_tlp1_marking(map, definition),
        _ => Ok(()),
    }
}

fn check_tlp1_marking(map: &Map<String, Value>, definition: &Map<String, Value>) -> Check {
    let level = definition
        .get("tlp")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(expected) = tlp_1_0_id(level) else {
        return fail("definition.tlp", "must be one of white, green, amber, red");
    };
    if map.get("id").and_then(Value::as_str) != Some(expected) {
        return fail(
            "id",
            format!("the TLP {level} marking definition must have the id {expected}"),
        );
    }
    Ok(())
}

fn check_tlp2_marking(map: &Map<String, Value>, ext: &Value) -> Check {
    let path = format!("extensions.{TLP_2_0_EXTENSION_ID}");
    let level = ext
        .get("tlp_2_0")
        .and_then(Value::as_str)
        .and_then(|s| Tlp::ALL.into_iter().find(|t| t.as_str() == s));
    let Some(tlp) = level else {
        return fail(
            format!("{path}.tlp_2_0"),
            "must be one of clear, green, amber, amber+strict, red",
        );
    };
    if ext.get("extension_type").and_then(Value::as_str) != Some("property-extension") {
        return fail(
            format!("{path}.extension_type"),
            "must be \"property-extension\"",
        );
    }
    if map.get("id").and_then(Value::as_str) != Some(tlp.marking_definition_id()) {
        return fail(
            "id",
            format!(
                "the {tlp} marking definition must have the id {}",
                tlp.marking_definition_id()
            ),
        );
    }
    if map.get("name").and_then(Value::as_str) != Some(tlp.marking_name()) {
        return fail(
            "name",
            format!("the TLP 2.0 marking definition must be named {tlp}"),
        );
    }
    Ok(())
}

fn check_extension_types(map: &Map<String, Value>) -> Check {
    let items = map.get("extension_types").and_then(Value::as_array);
    for (i, t) in items.into_iter().flatten().enumerate() {
        if !t
            .as_str()
            .is_some_and(|s| EXTENSION_TYPE_VALUES.contains(&s))
        {
            return fail(
                format!("extension_types[{i}]"),
                format!("must be one of: {}", EXTENSION_TYPE_VALUES.join(", ")),
            );
        }
    }
    Ok(())
}

/// STIX 2.1 §2.5: source_name, and at least one of description, url, external_id.
pub(crate) fn check_external_reference(value: &Value, path: &str) -> Check {
    let Some(r) = value.as_object() else {
        return fail(path, "an external reference must be an object");
    };
    for (name, v) in r {
        let p = format!("{path}.{name}");
        match name.as_str() {
            "source_name" | "description" | "url" | "external_id" => drop(expect_str(v, &p)?),
            "hashes" => check_kind(v, Kind::Hashes, &p)?,
            _ if name.starts_with("x_") => {}
            _ => return fail(p, "unknown property of an external reference"),
        }
    }
    if !r.contains_key("source_name") {
        return fail(
            format!("{path}.source_name"),
            "required property is missing",
        );
    }
    if !["description", "url", "external_id"]
        .iter()
        .any(|k| r.contains_key(*k))
    {
        return fail(
            path,
            "needs at least one of description, url, external_id besides source_name",
        );
    }
    check_well_known_external_id(r, path)
}

/// STIX 2.1 §2.5: `cve` references carry `CVE-YYYY-NNNN...`, `capec` ones `CAPEC-n`.
fn check_well_known_external_id(r: &Map<String, Value>, path: &str) -> Check {
    let source = r.get("source_name").and_then(Value::as_str);
    let id = r.get("external_id").and_then(Value::as_str);
    let digits = |s: &str, min: usize| s.len() >= min && s.bytes().all(|b| b.is_ascii_digit());
    let (ok, form) = match source {
        Some("cve") => (
            id.and_then(|i| i.strip_prefix("CVE-"))
                .and_then(|rest| rest.split_once('-'))
                .is_some_and(|(year, n)| year.len() == 4 && digits(year, 4) && digits(n, 4)),
            "CVE-YYYY-NNNN",
        ),
        Some("capec") => (
            id.and_then(|i| i.strip_prefix("CAPEC-"))
                .is_some_and(|n| digits(n, 1)),
            "CAPEC-n",
        ),
        _ => return Ok(()),
    };
    if ok {
        return Ok(());
    }
    fail(
        format!("{path}.external_id"),
        format!(
            "a {} reference needs an external_id of the form {form}",
            source.unwrap_or_default()
        ),
    )
}

/// STIX 2.1 §7.2.3: selectors and exactly one of marking_ref and lang.
pub(crate) fn check_granular_marking(value: &Value, path: &str) -> Check {
    let Some(g) = value.as_object() else {
        return fail(path, "a granular marking must be an object");
    };
    let Some(selectors) = g.get("selectors") else {
        return fail(format!("{path}.selectors"), "required property is missing");
    };
    check_kind(selectors, Kind::StrList, &format!("{path}.selectors"))?;
    match (g.get("marking_ref"), g.get("lang")) {
        (Some(r), None) => check_ref(
            r,
            Target::Types(&["marking-definition"]),
            &format!("{path}.marking_ref"),
        ),
        (None, Some(l)) => check_lang(l, &format!("{path}.lang")),
        _ => fail(path, "needs exactly one of marking_ref and lang"),
    }?;
    match g
        .keys()
        .find(|k| !matches!(k.as_str(), "selectors" | "marking_ref" | "lang"))
    {
        Some(k) => fail(
            format!("{path}.{k}"),
            "unknown property of a granular marking",
        ),
        None => Ok(()),
    }
}

/// An RFC 5646 language tag, loosely: letters, then hyphen-separated alphanumeric subtags.
pub(crate) fn check_lang(value: &Value, path: &str) -> Check {
    let tag = expect_str(value, path)?;
    let mut parts = tag.split('-');
    let first_ok = parts
        .next()
        .is_some_and(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphabetic()));
    let rest_ok =
        parts.all(|p| (1..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()));
    if first_ok && rest_ok {
        return Ok(());
    }
    fail(path, "must be an RFC 5646 language tag (e.g. en, de-CH)")
}

/// STIX 2.1 §7.3: extension keys are extension-definition ids or predefined/custom SCO
/// extension names ending in `-ext`; each value is an object.
pub(crate) fn check_extensions(value: &Value) -> Check {
    let Some(exts) = value.as_object() else {
        return fail("extensions", "must be a dictionary of extensions");
    };
    if exts.is_empty() {
        return fail("extensions", "must not be empty");
    }
    for (key, ext) in exts {
        let path = format!("extensions.{key}");
        let key_ok = match key.strip_prefix("extension-definition--") {
            Some(uuid) => is_uuid(uuid),
            None => key.ends_with("-ext") && key.len() <= 250,
        };
        if !key_ok {
            return fail(
                path,
                "extension keys are extension-definition ids or names ending in -ext",
            );
        }
        let Some(body) = ext.as_object() else {
            return fail(path, "an extension must be an object");
        };
        if let Some(t) = body.get("extension_type") {
            if !t
                .as_str()
                .is_some_and(|s| EXTENSION_TYPE_VALUES.contains(&s))
            {
                return fail(
                    format!("{path}.extension_type"),
                    format!("must be one of: {}", EXTENSION_TYPE_VALUES.join(", ")),
                );
            }
        }
    }
    Ok(())
}
