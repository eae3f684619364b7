//! TAXII 2.1 (OASIS Committee Specification 01): the discovery resource at `/taxii2/` and one
//! API root at `/taxii2/api/`.
//!
//! Each collection is one (sector, TLP marking) of the node, or one marking of its local
//! objects; its id is a UUID made from `"<sector or local>/<tlp>"`, so it stays the same
//! across restarts and nodes. A user sees only the collections [`Node::visible_collections`]
//! gives them; a collection they cannot see answers 404 like one that does not exist.
//!
//! Reading (§5.3–§5.7) maps the URL parameters onto one [`ObjectQuery`]: `added_after`
//! (RFC 3339, compared at the store's microsecond precision), `limit` (capped at
//! `limits.page_size`), `next` (an opaque token: the last row of the previous page), and the
//! `match[...]` filters. Pages are in `date_added` order and carry the
//! `X-TAXII-Date-Added-First`/`-Last` headers a poller keeps as its bookmark.
//!
//! Writing (§5.4 Add Objects) is all or nothing: the envelope is parsed and validated whole,
//! every object's marking must be at most the collection's, and the node ingests them in one
//! step. The node decides synchronously, so the status resource returned is already
//! `complete`: stored or shared objects are successes, objects waiting for review pendings,
//! and objects the node refused failures. Deleting (§5.6, admins only) disposes of the
//! object in the community and hides it here.
//!
//! Every answer is `application/taxii+json;version=2.1`; a request whose `Accept` does not
//! admit it is refused with 406 (§1.6.8).

use super::auth::{require, Authed};
use super::errors::{HttpError, STIX_MEDIA_TYPE, TAXII_MEDIA_TYPE};
use super::timefmt::{format_us, parse_us};
use super::{blocking, json_response, list, media_type_is, query_pairs, read_body, single};
use super::{media_range_matches, now_us, AppState};
use crate::ids;
use crate::node::{Disposition, IngestRequest, Node, NodeError, Source};
use crate::store::{
    CollectionKey, ObjectPage, ObjectQuery, Role, StoredObject, TaxiiStatus, User, VersionMatch,
};
use axum::body::Body;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The TAXII media type without its version parameter.
const TAXII_ESSENCE: &str = "application/taxii+json";
/// Most query parameters read from one request.
const QUERY_PAIRS_MAX: usize = 64;
/// Most values of one `match[...]` filter.
const MATCH_VALUES_MAX: usize = 1000;
/// `X-TAXII-Date-Added-First` (§3.3.2).
const DATE_ADDED_FIRST: HeaderName = HeaderName::from_static("x-taxii-date-added-first");
/// `X-TAXII-Date-Added-Last` (§3.3.2).
const DATE_ADDED_LAST: HeaderName = HeaderName::from_static("x-taxii-date-added-last");

/// The TAXII routes.
pub(crate) fn routes() -> Router<AppState> {
    let c = "/taxii2/api/collections/{cid}";
    Router::new()
        .route("/taxii2/", get(discovery))
        .route("/taxii2/api/", get(api_root))
        .route("/taxii2/api/status/{id}/", get(status))
        .route("/taxii2/api/collections/", get(collections))
        .route(&format!("{c}/"), get(collection))
        .route(&format!("{c}/objects/"), get(get_objects).post(add_objects))
        .route(
            &format!("{c}/objects/{{oid}}/"),
            get(get_object).delete(delete_object),
        )
        .route(&format!("{c}/objects/{{oid}}/versions/"), get(versions))
        .route(&format!("{c}/manifest/"), get(manifest))
        .route_layer(axum::middleware::from_fn(accept_taxii))
}

/// Refuses (406) a request whose `Accept` does not admit the TAXII 2.1 media type; an absent
/// `Accept` admits anything.
async fn accept_taxii(req: Request, next: Next) -> Response {
    let mut values = req.headers().get_all(header::ACCEPT).iter().peekable();
    if values.peek().is_none() {
        return next.run(req).await;
    }
    let admits = values
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let essence = range.split(';').next().unwrap_or("").trim();
            essence == "*/*"
                || essence.eq_ignore_ascii_case("application/*")
                || media_range_matches(range.trim(), TAXII_ESSENCE, Some("2.1"))
        });
    if admits {
        next.run(req).await
    } else {
        HttpError::new(
            StatusCode::NOT_ACCEPTABLE,
            format!("this server answers only {TAXII_MEDIA_TYPE}; send it in Accept"),
        )
        .into_response()
    }
}

fn taxii(status: StatusCode, body: &Value) -> Response {
    json_response(status, TAXII_MEDIA_TYPE, body)
}

/// The collection's id: a UUID from its sector (or `local`) and marking.
pub fn collection_id(k: &CollectionKey) -> String {
    ids::name_based_uuid("collection", &collection_name(k))
}

fn collection_name(k: &CollectionKey) -> String {
    format!(
        "{}/{}",
        k.sector.as_deref().unwrap_or("local"),
        k.tlp.as_str()
    )
}

fn collection_json(k: &CollectionKey, user: &User) -> Value {
    let place = k.sector.as_deref().unwrap_or("local");
    let tlp = k.tlp.as_str().to_ascii_uppercase();
    let description = match &k.sector {
        Some(s) => format!("TLP:{tlp} objects shared in the sector {s}"),
        None => format!("TLP:{tlp} objects kept on this node only"),
    };
    json!({
        "id": collection_id(k),
        "title": format!("{place} · TLP:{tlp}"),
        "description": description,
        "can_read": true,
        "can_write": user.role <= Role::Analyst,
        "media_types": [STIX_MEDIA_TYPE],
    })
}

async fn visible(state: &AppState, user: &User) -> Result<Vec<CollectionKey>, HttpError> {
    let node = state.node.clone();
    let user = user.clone();
    blocking(move || Ok(node.visible_collections(&user))).await
}

/// The collection `cid` if `user` may see it (404 otherwise, as if it did not exist).
async fn find_collection(
    state: &AppState,
    user: &User,
    cid: &str,
) -> Result<CollectionKey, HttpError> {
    visible(state, user)
        .await?
        .into_iter()
        .find(|k| collection_id(k) == cid)
        .ok_or_else(|| HttpError::not_found("no collection with this id"))
}

/// The server's base URL: the configured public URL, else `http://` and the `Host` the
/// client used (when it is a plausible host), else the listening address.
fn base_url(node: &Node, headers: &HeaderMap) -> String {
    let cfg = node.config();
    if let Some(u) = &cfg.listen.public_url {
        return u.trim_end_matches('/').to_string();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.len() <= 255
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
        })
        .map(str::to_string)
        .unwrap_or_else(|| cfg.listen.http.to_string());
    format!("http://{host}")
}

/// §4.1 Server Discovery.
async fn discovery(
    Authed(_user): Authed,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Response {
    let root = format!("{}/taxii2/api/", base_url(&state.node, &headers));
    let org = &state.node.config().node.organisation;
    taxii(
        StatusCode::OK,
        &json!({
            "title": format!("Halyard CTI node of {org}"),
            "description": "STIX 2.1 shared in real time over DDS, by sector and TLP marking",
            "default": root,
            "api_roots": [root],
        }),
    )
}

/// §4.2 Get API Root Information.
async fn api_root(Authed(_user): Authed, State(state): State<AppState>) -> Response {
    let cfg = state.node.config();
    taxii(
        StatusCode::OK,
        &json!({
            "title": format!("{} threat intelligence", cfg.node.organisation),
            "description": "One collection per sector and TLP marking, and the node's own",
            "versions": [TAXII_MEDIA_TYPE],
            "max_content_length": cfg.limits.max_body_bytes,
        }),
    )
}

/// §4.3 Get Status: its owner or an admin only.
async fn status(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let node = state.node.clone();
    let found = blocking(move || Ok(node.db().status(&id)?)).await?;
    let s = found.ok_or_else(|| HttpError::not_found("no status resource with this id"))?;
    if s.owner != user.name {
        require(&user, Role::Admin)?;
    }
    Ok(taxii(StatusCode::OK, &status_json(&s)))
}

/// §5.1 Get Collections.
async fn collections(
    Authed(user): Authed,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    let keys = visible(&state, &user).await?;
    if keys.is_empty() {
        return Ok(taxii(StatusCode::OK, &json!({})));
    }
    let list: Vec<Value> = keys.iter().map(|k| collection_json(k, &user)).collect();
    Ok(taxii(StatusCode::OK, &json!({ "collections": list })))
}

/// §5.2 Get A Collection.
async fn collection(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(cid): Path<String>,
) -> Result<Response, HttpError> {
    let key = find_collection(&state, &user, &cid).await?;
    Ok(taxii(StatusCode::OK, &collection_json(&key, &user)))
}

/// The paging and matching parameters common to the reading endpoints.
fn object_query(
    pairs: &[(String, String)],
    key: CollectionKey,
    page_size: usize,
) -> Result<ObjectQuery, HttpError> {
    let added_after_us = match single(pairs, "added_after")? {
        Some(s) => Some(parse_us(s).ok_or_else(|| {
            HttpError::bad_request(format!("added_after {s:?} is not an RFC 3339 timestamp"))
        })?),
        None => None,
    };
    let limit = match single(pairs, "limit")? {
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n >= 1 => n.min(page_size),
            _ => return Err(HttpError::bad_request("limit must be a positive integer")),
        },
        None => page_size,
    };
    let after_row = single(pairs, "next")?.map(decode_next).transpose()?;
    let bounded = |name: &str| -> Result<Vec<String>, HttpError> {
        let v = list(pairs, name);
        if v.len() > MATCH_VALUES_MAX {
            return Err(HttpError::bad_request(format!(
                "{name}: more than {MATCH_VALUES_MAX} values"
            )));
        }
        Ok(v)
    };
    Ok(ObjectQuery {
        collection: Some(key),
        added_after_us,
        ids: bounded("match[id]")?,
        types: bounded("match[type]")?,
        versions: version_match(&bounded("match[version]")?)?,
        spec_versions: bounded("match[spec_version]")?,
        limit: limit.max(1),
        after_row,
    })
}

/// `match[version]` (§3.4.2.3): `last` (the default), `first`, `all`, or timestamps.
fn version_match(values: &[String]) -> Result<VersionMatch, HttpError> {
    let keyword = |w: &str| values.iter().any(|v| v == w);
    if values.is_empty() {
        return Ok(VersionMatch::Last);
    }
    if keyword("all") {
        return Ok(VersionMatch::All);
    }
    match values {
        [v] if v == "last" => return Ok(VersionMatch::Last),
        [v] if v == "first" => return Ok(VersionMatch::First),
        _ => {}
    }
    let times: Vec<String> = values
        .iter()
        .filter(|v| *v != "first" && *v != "last")
        .cloned()
        .collect();
    if let Some(bad) = times.iter().find(|v| parse_us(v).is_none()) {
        return Err(HttpError::bad_request(format!(
            "match[version] {bad:?} is neither first, last, all nor a timestamp"
        )));
    }
    if !keyword("last") && !keyword("first") {
        return Ok(VersionMatch::Specific(times));
    }
    // Comma-separated values are alternatives (TAXII 2.1 §3.4.2).
    Ok(VersionMatch::AnyOf {
        first: keyword("first"),
        last: keyword("last"),
        versions: times,
    })
}

/// The `next` token of a page ending at `row`.
fn encode_next(row: i64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("r{row}"))
}

fn decode_next(token: &str) -> Result<i64, HttpError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.strip_prefix('r').and_then(|r| r.parse::<i64>().ok()))
        .ok_or_else(|| HttpError::bad_request("next is not a token this server gave"))
}

/// The collection and the query of a reading request.
async fn prepare(
    state: &AppState,
    user: &User,
    cid: &str,
    raw: Option<&str>,
) -> Result<ObjectQuery, HttpError> {
    let key = find_collection(state, user, cid).await?;
    let pairs = query_pairs(raw, QUERY_PAIRS_MAX)?;
    object_query(&pairs, key, state.node.config().limits.page_size)
}

async fn run_query(node: Arc<Node>, q: ObjectQuery) -> Result<ObjectPage, HttpError> {
    let mut page = blocking(move || Ok(node.db().query_objects(&q)?)).await?;
    page.objects.retain(|o| !o.deleted);
    Ok(page)
}

/// A reading response: the body, `more`/`next`, and the date-added headers.
fn page_response(page: &ObjectPage, mut body: Map<String, Value>, items_key: &str) -> Response {
    let has_items = body.get(items_key).is_some_and(|v| match v {
        Value::Array(a) => !a.is_empty(),
        _ => true,
    });
    if !has_items && !page.more {
        // §3.7: an empty envelope (or resource) is `{}`.
        body = Map::new();
    } else {
        body.insert("more".into(), json!(page.more));
        if let (true, Some(last)) = (page.more, page.objects.last()) {
            body.insert("next".into(), json!(encode_next(last.row)));
        }
    }
    let mut resp = taxii(StatusCode::OK, &Value::Object(body));
    if let (Some(first), Some(last)) = (page.objects.first(), page.objects.last()) {
        for (name, us) in [
            (DATE_ADDED_FIRST, first.added_us),
            (DATE_ADDED_LAST, last.added_us),
        ] {
            if let Ok(v) = HeaderValue::from_str(&format_us(us)) {
                resp.headers_mut().insert(name, v);
            }
        }
    }
    resp
}

fn objects_json(objects: &[StoredObject]) -> Value {
    Value::Array(
        objects
            .iter()
            .filter_map(|o| match serde_json::from_str::<Value>(&o.json) {
                Ok(v) => Some(v),
                Err(e) => {
                    eprintln!("halyard-cti http: stored row {} is not JSON: {e}", o.row);
                    None
                }
            })
            .collect(),
    )
}

/// The TAXII version of a stored version: `modified`/`created`, else its `date_added`.
fn taxii_version(o: &StoredObject) -> String {
    if o.version.is_empty() {
        format_us(o.added_us)
    } else {
        o.version.clone()
    }
}

/// §5.3 Get Objects.
async fn get_objects(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(cid): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    let q = prepare(&state, &user, &cid, raw.as_deref()).await?;
    let page = run_query(state.node.clone(), q).await?;
    let mut body = Map::new();
    body.insert("objects".into(), objects_json(&page.objects));
    Ok(page_response(&page, body, "objects"))
}

/// §5.5 Get An Object: its versions in the collection (the latest by default).
async fn get_object(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path((cid, oid)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    let mut q = prepare(&state, &user, &cid, raw.as_deref()).await?;
    q.ids = vec![oid];
    q.types.clear();
    let first_page = q.after_row.is_none() && q.added_after_us.is_none();
    let page = run_query(state.node.clone(), q).await?;
    if page.objects.is_empty() && first_page {
        return Err(HttpError::not_found("no such object in this collection"));
    }
    let mut body = Map::new();
    body.insert("objects".into(), objects_json(&page.objects));
    Ok(page_response(&page, body, "objects"))
}

/// §5.6 Delete An Object (admins): the object, visible in this collection, is disposed of
/// in every sector this node shared it with and marked deleted here.
async fn delete_object(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path((cid, oid)): Path<(String, String)>,
) -> Result<Response, HttpError> {
    require(&user, Role::Admin)?;
    let mut q = prepare(&state, &user, &cid, None).await?;
    q.ids = vec![oid.clone()];
    q.limit = 1;
    if run_query(state.node.clone(), q).await?.objects.is_empty() {
        return Err(HttpError::not_found("no such object in this collection"));
    }
    let node = state.node.clone();
    blocking(move || Ok(node.delete(&oid, &user)?)).await?;
    let mut resp = StatusCode::OK.into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(TAXII_MEDIA_TYPE),
    );
    Ok(resp)
}

/// §5.7 Get Object Versions.
async fn versions(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path((cid, oid)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    let mut q = prepare(&state, &user, &cid, raw.as_deref()).await?;
    q.ids = vec![oid];
    q.types.clear();
    q.versions = VersionMatch::All;
    let first_page = q.after_row.is_none() && q.added_after_us.is_none();
    let page = run_query(state.node.clone(), q).await?;
    if page.objects.is_empty() && first_page {
        return Err(HttpError::not_found("no such object in this collection"));
    }
    let list: Vec<Value> = page
        .objects
        .iter()
        .map(|o| json!(taxii_version(o)))
        .collect();
    let mut body = Map::new();
    body.insert("versions".into(), Value::Array(list));
    Ok(page_response(&page, body, "versions"))
}

/// §5.4 Get Object Manifests.
async fn manifest(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(cid): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    let q = prepare(&state, &user, &cid, raw.as_deref()).await?;
    let page = run_query(state.node.clone(), q).await?;
    let records: Vec<Value> = page
        .objects
        .iter()
        .map(|o| {
            json!({
                "id": o.id,
                "date_added": format_us(o.added_us),
                "version": taxii_version(o),
                "media_type": STIX_MEDIA_TYPE,
            })
        })
        .collect();
    let mut body = Map::new();
    body.insert("objects".into(), Value::Array(records));
    Ok(page_response(&page, body, "objects"))
}

/// §5.4 Add Objects.
async fn add_objects(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(cid): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    require(&user, Role::Analyst)?;
    let key = find_collection(&state, &user, &cid).await?;
    if !media_type_is(&headers, TAXII_ESSENCE, Some("2.1")) {
        return Err(HttpError::unsupported_media_type(TAXII_MEDIA_TYPE));
    }
    let limits = state.node.config().limits.clone();
    let bytes = read_body(&headers, body, limits.max_body_bytes).await?;
    let request_us = now_us();
    let objects = blocking(move || {
        halyard_stix::bundle::parse(&bytes, &limits.stix())
            .map_err(|e| HttpError::from_validation(&e))
    })
    .await?;
    if let Some((i, o)) = objects
        .iter()
        .enumerate()
        .find(|(_, o)| o.tlp.is_some_and(|t| t > key.tlp))
    {
        let mut e = HttpError::bad_request(format!(
            "object {i} ({}) is marked above the collection's TLP:{}; nothing was added",
            o.id,
            key.tlp.as_str().to_ascii_uppercase()
        ));
        e.fault = Some(Box::new(super::errors::InputFault {
            index: Some(i),
            id: Some(o.id.clone()),
            property: Some("object_marking_refs".into()),
        }));
        return Err(e);
    }
    let posted: Vec<(String, String)> = objects
        .iter()
        .map(|o| (o.id.clone(), o.version().to_string()))
        .collect();
    let req = IngestRequest {
        objects,
        source: Source::User(user.name.clone()),
        sectors: Some(key.sector.iter().cloned().collect()),
        default_tlp: Some(key.tlp),
    };
    let node = state.node.clone();
    let outcome = blocking(move || Ok(node.ingest(req))).await?;
    let mut status = TaxiiStatus {
        id: ids::random_uuid(),
        status: "complete".into(),
        request_us,
        successes: Vec::new(),
        failures: Vec::new(),
        pendings: Vec::new(),
        owner: user.name.clone(),
    };
    match outcome {
        Ok(report) => {
            for (id, version, d) in report.results {
                let (list, message) = match d {
                    Disposition::Shared { sectors } => (
                        &mut status.successes,
                        format!("shared with {}", sectors.join(", ")),
                    ),
                    Disposition::Local => (&mut status.successes, "kept on this node".into()),
                    Disposition::Duplicate => {
                        (&mut status.successes, "this version was known".into())
                    }
                    Disposition::Queued { review, .. } => {
                        (&mut status.pendings, format!("waiting for review {review}"))
                    }
                };
                list.push((id, version, Some(message)));
            }
        }
        Err(NodeError::Refused(reason)) => {
            status.failures = posted
                .into_iter()
                .map(|(id, v)| (id, v, Some(reason.clone())))
                .collect();
        }
        Err(e) => return Err(e.into()),
    }
    let node = state.node.clone();
    let stored = status.clone();
    blocking(move || Ok(node.db().put_status(&stored)?)).await?;
    Ok(taxii(StatusCode::ACCEPTED, &status_json(&status)))
}

/// §4.3.1 the status resource.
fn status_json(s: &TaxiiStatus) -> Value {
    let details = |l: &[(String, String, Option<String>)]| -> Value {
        Value::Array(
            l.iter()
                .map(|(id, version, message)| {
                    let mut m = Map::new();
                    m.insert("id".into(), json!(id));
                    m.insert("version".into(), json!(version));
                    if let Some(msg) = message {
                        m.insert("message".into(), json!(msg));
                    }
                    Value::Object(m)
                })
                .collect(),
        )
    };
    json!({
        "id": s.id,
        "status": s.status,
        "request_timestamp": format_us(s.request_us),
        "total_count": s.successes.len() + s.failures.len() + s.pendings.len(),
        "success_count": s.successes.len(),
        "successes": details(&s.successes),
        "failure_count": s.failures.len(),
        "failures": details(&s.failures),
        "pending_count": s.pendings.len(),
        "pendings": details(&s.pendings),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use halyard_stix::marking::Tlp;

    #[test]
    fn next_tokens_round_trip_and_strangers_are_refused() {
        assert_eq!(decode_next(&encode_next(42)).unwrap(), 42);
        assert!(decode_next("r42").is_err());
        assert!(decode_next("!!").is_err());
    }

    #[test]
    fn version_matches_read_keywords_and_timestamps() {
        let v = |s: &[&str]| version_match(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(v(&[]).unwrap(), VersionMatch::Last);
        assert_eq!(v(&["first"]).unwrap(), VersionMatch::First);
        assert_eq!(v(&["all", "last"]).unwrap(), VersionMatch::All);
        assert_eq!(
            v(&["first", "last"]).unwrap(),
            VersionMatch::AnyOf {
                first: true,
                last: true,
                versions: vec![]
            }
        );
        assert!(v(&["yesterday"]).is_err());
        assert_eq!(
            v(&["2020-01-01T00:00:00.000Z"]).unwrap(),
            VersionMatch::Specific(vec!["2020-01-01T00:00:00.000Z".into()])
        );
    }

    #[test]
    fn collection_ids_are_stable_per_sector_and_marking() {
        let k = |s: Option<&str>, tlp| CollectionKey {
            sector: s.map(str::to_string),
            tlp,
        };
        assert_eq!(
            collection_id(&k(Some("finance"), Tlp::Amber)),
            ids::name_based_uuid("collection", "finance/amber")
        );
        assert_ne!(
            collection_id(&k(Some("finance"), Tlp::Amber)),
            collection_id(&k(None, Tlp::Amber))
        );
    }
}
