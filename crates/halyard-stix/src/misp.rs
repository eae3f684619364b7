//! Conversion of MISP events to STIX 2.1, following the shape of MISP's own STIX 2.1
//! export (misp-stix) so that objects read the same whichever tool produced them.
//!
//! One event gives: the TLP 2.0 marking definitions its tags name, an identity for the
//! creating organisation (`Orgc`), a report holding every converted attribute, and per
//! attribute either an indicator with a STIX pattern (`to_ids` set) or an observed-data
//! with its SCOs (`to_ids` not set). Ids come from the MISP uuids (`indicator--<attribute
//! uuid>`, `<sco type>--<attribute uuid>`), and timestamps from MISP's unix timestamps, so
//! converting the same event twice gives the same objects and re-import is idempotent.
//!
//! Attributes of MISP objects are converted one by one like the event's own attributes.
//! Attribute types without a mapping here are left out (documented on
//! [`event_to_stix`]); an attribute of a mapped type whose value is malformed refuses the
//! whole event with [`MispError`], as does any produced object that fails
//! [`crate::validate::object`].

use crate::marking::Tlp;
use crate::time;
use crate::validate::{self, is_uuid};
use serde_json::{json, Map, Value};
use std::fmt;

/// Why a MISP event could not be converted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MispError {
    /// The input is not a MISP event (`{"Event": {...}}` or the inner object).
    NotAnEvent,
    /// A field the conversion needs is absent.
    Missing {
        /// Where, e.g. `Event.Orgc.uuid` or `Attribute[3].value`.
        path: String,
    },
    /// A field is present but unusable.
    Invalid {
        /// Where, e.g. `Attribute[2].value`.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for MispError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MispError::NotAnEvent => f.write_str("not a MISP event: expected {\"Event\": {...}}"),
            MispError::Missing { path } => write!(f, "MISP event: `{path}` is missing"),
            MispError::Invalid { path, reason } => write!(f, "MISP event: `{path}`: {reason}"),
        }
    }
}

impl std::error::Error for MispError {}

fn invalid(path: &str, reason: impl Into<String>) -> MispError {
    MispError::Invalid {
        path: path.to_string(),
        reason: reason.into(),
    }
}

fn missing(path: &str) -> MispError {
    MispError::Missing {
        path: path.to_string(),
    }
}

/// Converts a MISP event to STIX 2.1 objects (marking definitions, identity, report,
/// indicators, observed-data and SCOs), each valid per [`crate::validate::object`].
///
/// Mapped attribute types: `ip-src`, `ip-dst`, `ip-src|port`, `ip-dst|port`, `domain`,
/// `hostname`, `domain|ip`, `url`, `uri`, `link`, `email`, `email-src`, `email-dst`,
/// `filename`, `md5`, `sha1`, `sha256`, `sha512` and `filename|<hash>`. Others are left out.
/// `now_millis` is used only when the event carries neither `timestamp` nor `date`.
pub fn event_to_stix(event: &Value, now_millis: i64) -> Result<Vec<Value>, MispError> {
    let ev = event.get("Event").unwrap_or(event);
    let ev = ev.as_object().ok_or(MispError::NotAnEvent)?;
    let event_uuid = uuid_field(ev, "uuid", "Event.uuid")?;
    let info = str_field(ev, "info", "Event.info")?;
    let event_ms = event_millis(ev)?.unwrap_or(now_millis);
    let orgc = ev
        .get("Orgc")
        .and_then(Value::as_object)
        .ok_or_else(|| missing("Event.Orgc"))?;
    let org_uuid = uuid_field(orgc, "uuid", "Event.Orgc.uuid")?;
    let org_name = str_field(orgc, "name", "Event.Orgc.name")?;
    let event_tlp = tlp_of_tags(ev.get("Tag"));
    let ctx = Context {
        identity_id: format!("identity--{org_uuid}"),
        event_ms,
        event_tlp,
    };

    let mut converted = Vec::new();
    let mut tlps: Vec<Tlp> = event_tlp.into_iter().collect();
    for (path, attr) in attributes(ev) {
        if let Some(objects) = convert_attribute(attr, &path, &ctx)? {
            tlps.extend(attribute_tlp(attr, &ctx));
            converted.extend(objects);
        }
    }
    let refs: Vec<Value> = converted
        .iter()
        .filter(|o| matches!(o["type"].as_str(), Some("indicator" | "observed-data")))
        .map(|o| o["id"].clone())
        .collect();
    if refs.is_empty() {
        return Err(invalid(
            "Event.Attribute",
            "no attribute of a mapped type to convert",
        ));
    }
    tlps.sort();
    tlps.dedup();
    let mut out: Vec<Value> = tlps.iter().map(Tlp::marking_definition).collect();
    out.push(ctx.marked(identity(&ctx, org_name), event_tlp));
    let published = publish_millis(ev)?.unwrap_or(event_ms);
    out.push(ctx.marked(report(&event_uuid, info, published, refs, &ctx), event_tlp));
    out.extend(converted);
    check_all(&out)?;
    Ok(out)
}

/// What every object of one event shares.
struct Context {
    identity_id: String,
    event_ms: i64,
    event_tlp: Option<Tlp>,
}

impl Context {
    fn marked(&self, mut obj: Value, tlp: Option<Tlp>) -> Value {
        if let (Some(tlp), Some(map)) = (tlp, obj.as_object_mut()) {
            map.insert(
                "object_marking_refs".into(),
                json!([tlp.marking_definition_id()]),
            );
        }
        obj
    }
}

fn identity(ctx: &Context, name: &str) -> Value {
    let ts = time::format_rfc3339_millis(ctx.event_ms);
    json!({
        "type": "identity",
        "spec_version": "2.1",
        "id": ctx.identity_id,
        "created": ts,
        "modified": ts,
        "name": name,
        "identity_class": "organization",
    })
}

fn report(uuid: &str, info: &str, published_ms: i64, refs: Vec<Value>, ctx: &Context) -> Value {
    let ts = time::format_rfc3339_millis(ctx.event_ms);
    json!({
        "type": "report",
        "spec_version": "2.1",
        "id": format!("report--{uuid}"),
        "created_by_ref": ctx.identity_id,
        "created": ts,
        "modified": ts,
        "name": info,
        "published": time::format_rfc3339_millis(published_ms),
        "report_types": ["threat-report"],
        "object_refs": refs,
    })
}

/// The event's attributes and those of its objects, with a path for error messages;
/// attributes marked `deleted` are left out.
fn attributes(ev: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let own = ev.get("Attribute").and_then(Value::as_array);
    for (i, a) in own.into_iter().flatten().enumerate() {
        out.push((format!("Attribute[{i}]"), a));
    }
    let objects = ev.get("Object").and_then(Value::as_array);
    for (i, o) in objects.into_iter().flatten().enumerate() {
        let inner = o.get("Attribute").and_then(Value::as_array);
        for (j, a) in inner.into_iter().flatten().enumerate() {
            out.push((format!("Object[{i}].Attribute[{j}]"), a));
        }
    }
    out.retain(|(_, a)| !is_true(a.get("deleted")));
    out
}

fn is_true(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "1" || s.eq_ignore_ascii_case("true"),
        Some(Value::Number(n)) => n.as_i64() == Some(1),
        _ => false,
    }
}

fn str_field<'a>(m: &'a Map<String, Value>, name: &str, path: &str) -> Result<&'a str, MispError> {
    match m.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(invalid(path, "must be a non-empty string")),
        None => Err(missing(path)),
    }
}

fn uuid_field(m: &Map<String, Value>, name: &str, path: &str) -> Result<String, MispError> {
    let s = str_field(m, name, path)?.to_ascii_lowercase();
    if !is_uuid(&s) {
        return Err(invalid(path, "not an RFC 4122 UUID"));
    }
    Ok(s)
}

/// A MISP unix timestamp (seconds, as a string or a number), in milliseconds.
fn unix_millis(v: Option<&Value>, path: &str) -> Result<Option<i64>, MispError> {
    let seconds = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(_) => None,
    };
    match seconds {
        Some(s) if (0..=253_402_300_799).contains(&s) => Ok(Some(s * 1000)),
        _ => Err(invalid(path, "not a unix timestamp in seconds")),
    }
}

/// The event's `timestamp`, else its `date` at midnight UTC.
fn event_millis(ev: &Map<String, Value>) -> Result<Option<i64>, MispError> {
    if let Some(ms) = unix_millis(ev.get("timestamp"), "Event.timestamp")? {
        return Ok(Some(ms));
    }
    let Some(date) = ev.get("date").and_then(Value::as_str) else {
        return Ok(None);
    };
    let nanos = time::parse_rfc3339(&format!("{date}T00:00:00Z"))
        .ok_or_else(|| invalid("Event.date", "not a date YYYY-MM-DD"))?;
    Ok(i64::try_from(nanos / 1_000_000).ok())
}

fn publish_millis(ev: &Map<String, Value>) -> Result<Option<i64>, MispError> {
    let ms = unix_millis(ev.get("publish_timestamp"), "Event.publish_timestamp")?;
    Ok(ms.filter(|ms| *ms > 0))
}

/// The most restrictive TLP of a MISP tag list (`[{"name": "tlp:amber"}, ...]`).
fn tlp_of_tags(tags: Option<&Value>) -> Option<Tlp> {
    let tags = tags.and_then(Value::as_array)?;
    tags.iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .filter(|n| n.to_ascii_lowercase().starts_with("tlp:"))
        .filter_map(Tlp::parse)
        .max()
}

fn attribute_tlp(attr: &Value, ctx: &Context) -> Option<Tlp> {
    tlp_of_tags(attr.get("Tag")).or(ctx.event_tlp)
}

/// What an attribute's value denotes, for the attribute types mapped here.
enum Observable {
    Ip {
        v6: bool,
        src: bool,
        addr: String,
        port: Option<u16>,
    },
    Domain(String),
    DomainIp {
        domain: String,
        v6: bool,
        addr: String,
    },
    Url(String),
    Email(String),
    FileName(String),
    File {
        name: Option<String>,
        algorithm: &'static str,
        hash: String,
    },
}

fn hash_algorithm(t: &str) -> Option<(&'static str, usize)> {
    Some(match t {
        "md5" => ("MD5", 32),
        "sha1" => ("SHA-1", 40),
        "sha256" => ("SHA-256", 64),
        "sha512" => ("SHA-512", 128),
        _ => return None,
    })
}

/// Reads a mapped attribute's value; `Ok(None)` for attribute types not mapped.
fn observable(t: &str, value: &str, path: &str) -> Result<Option<Observable>, MispError> {
    let bad = |what: &str| invalid(path, format!("a {t} value must be {what}"));
    let obs = match t {
        "ip-src" | "ip-dst" => {
            let (v6, addr) = ip(value).ok_or_else(|| bad("an IP address"))?;
            Observable::Ip {
                v6,
                src: t == "ip-src",
                addr,
                port: None,
            }
        }
        "ip-src|port" | "ip-dst|port" => {
            let (a, p) = value.rsplit_once('|').ok_or_else(|| bad("address|port"))?;
            let (v6, addr) = ip(a).ok_or_else(|| bad("address|port"))?;
            let port = p.trim().parse::<u16>().map_err(|_| bad("address|port"))?;
            Observable::Ip {
                v6,
                src: t == "ip-src|port",
                addr,
                port: Some(port),
            }
        }
        "domain" | "hostname" => Observable::Domain(non_empty(value).ok_or_else(|| bad("a name"))?),
        "domain|ip" => {
            let (d, a) = value.split_once('|').ok_or_else(|| bad("domain|ip"))?;
            let (v6, addr) = ip(a).ok_or_else(|| bad("domain|ip"))?;
            let domain = non_empty(d).ok_or_else(|| bad("domain|ip"))?;
            Observable::DomainIp { domain, v6, addr }
        }
        "url" | "uri" | "link" => Observable::Url(non_empty(value).ok_or_else(|| bad("a URL"))?),
        "email" | "email-src" | "email-dst" if value.contains('@') => {
            Observable::Email(value.trim().to_string())
        }
        "email" | "email-src" | "email-dst" => return Err(bad("an email address")),
        "filename" => Observable::FileName(non_empty(value).ok_or_else(|| bad("a file name"))?),
        _ => return file_hash(t, value, path),
    };
    Ok(Some(obs))
}

fn file_hash(t: &str, value: &str, path: &str) -> Result<Option<Observable>, MispError> {
    let (name, hash_type, hash) = match t.strip_prefix("filename|") {
        Some(h) => {
            let (n, v) = value
                .rsplit_once('|')
                .ok_or_else(|| invalid(path, "expected filename|hash"))?;
            (Some(n.to_string()), h, v)
        }
        None => (None, t, value),
    };
    let Some((algorithm, len)) = hash_algorithm(hash_type) else {
        return Ok(None);
    };
    let hash = hash.trim().to_ascii_lowercase();
    if hash.len() != len || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(
            path,
            format!("a {algorithm} hash is {len} hex digits"),
        ));
    }
    Ok(Some(Observable::File {
        name,
        algorithm,
        hash,
    }))
}

fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn ip(s: &str) -> Option<(bool, String)> {
    let s = s.trim();
    if s.parse::<std::net::Ipv4Addr>().is_ok() {
        return Some((false, s.to_string()));
    }
    s.parse::<std::net::Ipv6Addr>()
        .ok()
        .map(|_| (true, s.to_string()))
}

/// A STIX pattern string literal: quotes and backslashes escaped (STIX 2.1 §9.3).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn ip_type(v6: bool) -> &'static str {
    if v6 {
        "ipv6-addr"
    } else {
        "ipv4-addr"
    }
}

/// The STIX pattern of an observable, as misp-stix writes it.
fn pattern_of(obs: &Observable) -> String {
    let inner = match obs {
        Observable::Ip {
            v6,
            src,
            addr,
            port,
        } => {
            let side = if *src { "src" } else { "dst" };
            let mut p = format!(
                "network-traffic:{side}_ref.type = '{}' AND network-traffic:{side}_ref.value = {}",
                ip_type(*v6),
                quote(addr)
            );
            if let Some(port) = port {
                p.push_str(&format!(" AND network-traffic:{side}_port = {port}"));
            }
            p
        }
        Observable::Domain(d) => format!("domain-name:value = {}", quote(d)),
        Observable::DomainIp { domain, addr, .. } => format!(
            "domain-name:value = {} AND domain-name:resolves_to_refs[*].value = {}",
            quote(domain),
            quote(addr)
        ),
        Observable::Url(u) => format!("url:value = {}", quote(u)),
        Observable::Email(e) => format!("email-addr:value = {}", quote(e)),
        Observable::FileName(n) => format!("file:name = {}", quote(n)),
        Observable::File {
            name,
            algorithm,
            hash,
        } => {
            let h = format!("file:hashes.'{algorithm}' = {}", quote(hash));
            match name {
                Some(n) => format!("file:name = {} AND {h}", quote(n)),
                None => h,
            }
        }
    };
    format!("[{inner}]")
}

/// The SCOs of an observable, ids from the attribute uuid; the first listed are referenced
/// by the observed-data.
fn scos_of(obs: &Observable, uuid: &str) -> Vec<Value> {
    let id = |t: &str| format!("{t}--{uuid}");
    match obs {
        Observable::Ip {
            v6,
            src,
            addr,
            port,
        } => {
            let side = if *src { "src" } else { "dst" };
            let addr_id = id(ip_type(*v6));
            let mut traffic = json!({
                "type": "network-traffic", "spec_version": "2.1", "id": id("network-traffic"),
                format!("{side}_ref"): addr_id,
                "protocols": [if *v6 { "ipv6" } else { "ipv4" }],
            });
            if let (Some(port), Some(map)) = (port, traffic.as_object_mut()) {
                map.insert(format!("{side}_port"), json!(port));
            }
            vec![
                traffic,
                json!({"type": ip_type(*v6), "spec_version": "2.1", "id": addr_id, "value": addr}),
            ]
        }
        Observable::Domain(d) => vec![
            json!({"type": "domain-name", "spec_version": "2.1", "id": id("domain-name"), "value": d}),
        ],
        Observable::DomainIp { domain, v6, addr } => vec![
            json!({"type": "domain-name", "spec_version": "2.1", "id": id("domain-name"), "value": domain, "resolves_to_refs": [id(ip_type(*v6))]}),
            json!({"type": ip_type(*v6), "spec_version": "2.1", "id": id(ip_type(*v6)), "value": addr}),
        ],
        Observable::Url(u) => {
            vec![json!({"type": "url", "spec_version": "2.1", "id": id("url"), "value": u})]
        }
        Observable::Email(e) => vec![
            json!({"type": "email-addr", "spec_version": "2.1", "id": id("email-addr"), "value": e}),
        ],
        Observable::FileName(n) => {
            vec![json!({"type": "file", "spec_version": "2.1", "id": id("file"), "name": n})]
        }
        Observable::File {
            name,
            algorithm,
            hash,
        } => {
            let mut file = json!({"type": "file", "spec_version": "2.1", "id": id("file"), "hashes": {*algorithm: hash}});
            if let (Some(n), Some(map)) = (name, file.as_object_mut()) {
                map.insert("name".into(), json!(n));
            }
            vec![file]
        }
    }
}

/// One attribute as an indicator (`to_ids`) or an observed-data with its SCOs; `None` when
/// its type is not mapped.
fn convert_attribute(
    attr: &Value,
    path: &str,
    ctx: &Context,
) -> Result<Option<Vec<Value>>, MispError> {
    let a = attr
        .as_object()
        .ok_or_else(|| invalid(path, "an attribute must be an object"))?;
    let t = str_field(a, "type", &format!("{path}.type"))?;
    let value = str_field(a, "value", &format!("{path}.value"))?;
    let Some(obs) = observable(t, value, &format!("{path}.value"))? else {
        return Ok(None);
    };
    let uuid = uuid_field(a, "uuid", &format!("{path}.uuid"))?;
    let ms = unix_millis(a.get("timestamp"), &format!("{path}.timestamp"))?.unwrap_or(ctx.event_ms);
    let ts = time::format_rfc3339_millis(ms);
    let category = a.get("category").and_then(Value::as_str).unwrap_or("Other");
    let to_ids = is_true(a.get("to_ids"));
    let mut labels = vec![
        format!("misp:type=\"{t}\""),
        format!("misp:category=\"{category}\""),
    ];
    if to_ids {
        labels.push("misp:to_ids=\"True\"".to_string());
    }
    let mut sdo = json!({
        "spec_version": "2.1",
        "created_by_ref": ctx.identity_id,
        "created": ts,
        "modified": ts,
        "labels": labels,
    });
    let Some(map) = sdo.as_object_mut() else {
        return Ok(None);
    };
    if let Some(comment) = a
        .get("comment")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    {
        map.insert("description".into(), json!(comment));
    }
    let mut out = Vec::new();
    if to_ids {
        map.insert("type".into(), json!("indicator"));
        map.insert("id".into(), json!(format!("indicator--{uuid}")));
        map.insert("pattern".into(), json!(pattern_of(&obs)));
        map.insert("pattern_type".into(), json!("stix"));
        map.insert("pattern_version".into(), json!("2.1"));
        map.insert("valid_from".into(), json!(ts));
        map.insert(
            "kill_chain_phases".into(),
            json!([{"kill_chain_name": "misp-category", "phase_name": category}]),
        );
    } else {
        map.remove("description");
        let scos = scos_of(&obs, &uuid);
        let refs: Vec<Value> = scos.iter().map(|s| s["id"].clone()).collect();
        map.insert("type".into(), json!("observed-data"));
        map.insert("id".into(), json!(format!("observed-data--{uuid}")));
        map.insert("first_observed".into(), json!(ts));
        map.insert("last_observed".into(), json!(ts));
        map.insert("number_observed".into(), json!(1));
        map.insert("object_refs".into(), json!(refs));
        out.extend(scos);
    }
    let tlp = attribute_tlp(attr, ctx);
    out.insert(0, ctx.marked(sdo, tlp));
    let marked: Vec<Value> = out.into_iter().map(|o| ctx.marked(o, tlp)).collect();
    Ok(Some(marked))
}

/// Every produced object must be valid STIX: a failure here is a defect of the mapping or a
/// value the mapping did not foresee, reported rather than passed on.
fn check_all(objects: &[Value]) -> Result<(), MispError> {
    for obj in objects {
        validate::object(obj).map_err(|e| {
            invalid(
                "Event",
                format!("conversion produced an invalid object: {e}"),
            )
        })?;
    }
    Ok(())
}

/// The event's objects (what [`event_to_stix`] makes) as validated
/// [`StixObject`](crate::object::StixObject)s, refused when there are more than `max_objects`
/// of them.
pub fn event_to_objects(
    event: &Value,
    now_millis: i64,
    max_objects: usize,
) -> Result<Vec<crate::object::StixObject>, MispError> {
    let values = event_to_stix(event, now_millis)?;
    if values.len() > max_objects {
        return Err(MispError::Invalid {
            path: "Event".into(),
            reason: format!(
                "converts to {} objects, more than the {max_objects} allowed",
                values.len()
            ),
        });
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            crate::validate::object(v).map_err(|e| MispError::Invalid {
                path: format!("converted object {i}"),
                reason: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_and_backslashes() {
        assert_eq!(quote(r"a'b\c"), r"'a\'b\\c'");
    }

    #[test]
    fn patterns_of_every_mapped_type_parse() {
        let cases = [
            ("ip-dst", "198.51.100.7"),
            ("ip-src|port", "2001:db8::1|8443"),
            ("domain|ip", "evil.example|203.0.113.5"),
            (
                "filename|sha256",
                "a'b.exe|6a3e4c5b0f2b4c9e1d7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e",
            ),
            ("email-src", "x@example.org"),
        ];
        for (t, v) in cases {
            let obs = observable(t, v, "x").expect("valid").expect("mapped");
            let p = pattern_of(&obs);
            assert!(crate::pattern::parse(&p).is_ok(), "{p}");
        }
    }

    #[test]
    fn unmapped_types_are_skipped_and_bad_values_refused() {
        assert!(observable("yara", "rule x {}", "x").expect("ok").is_none());
        assert!(observable("md5", "xyz", "x").is_err());
        assert!(observable("ip-dst", "300.1.1.1", "x").is_err());
    }
}
