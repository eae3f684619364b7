//! The JSON REST API under `/api/v1/`: what the dashboard and scripts use to submit
//! intelligence (STIX bundles and MISP events), search what the user may see, work the
//! review queue, read the audit log and the node's state.
//!
//! Every route needs an account, and the role each needs is stated at the top of its handler
//! with [`require`]; what an account may *see* (sectors, clearance) is the node's
//! [`Node::visible_collections`], applied to every read. Submissions go through
//! [`Node::ingest`] and decisions through [`Node::decide`] (which enforces the four-eyes
//! rule), so the HTTP layer adds no rule of its own beyond parsing.
//!
//! `GET /api/v1/events` is a server-sent event stream of every object version the node
//! stores that the account may see (`event: object`, the data a JSON [`crate::feed::FeedEvent`]), as it is
//! stored: the dashboard's live feed. A stream that falls behind gets `event: lagged` with the
//! number of events it lost; streams are bounded by `limits.max_event_streams`.
//!
//! Bodies are JSON (`application/json`, or `application/stix+json` for bundles), read within
//! `limits.max_body_bytes` and checked for nesting depth before they are parsed; a refused
//! STIX object is reported with its index, id and property.

use super::auth::{require, Authed};
use super::errors::HttpError;
use super::timefmt::{format_us, parse_us};
use super::{blocking, json_response, list, media_type_is, query_pairs, read_body, single};
use super::{now_us, AppState};
use crate::node::{Counters, Decision, Disposition, IngestReport, IngestRequest, Node, Source};
use crate::store::{
    AuditRecord, ReviewItem, ReviewState, Role, SearchQuery, Sector, StoredObject, User,
};
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use halyard_stix::marking::Tlp;
use halyard_stix::object::StixObject;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Most query parameters read from one request.
pub(crate) const QUERY_PAIRS_MAX: usize = 64;
/// Default number of search results, review items and audit lines.
const LIST_DEFAULT: usize = 100;
/// Most review items or audit lines in one answer.
const LIST_MAX: usize = 1000;
/// Most search results skipped.
const OFFSET_MAX: usize = 100_000;
/// Longest search text, in bytes.
const SEARCH_TEXT_BYTES_MAX: usize = 1000;
/// Longest reviewer's note, in characters.
pub(crate) const NOTE_CHARS_MAX: usize = 4000;

/// The REST routes.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/objects", post(post_objects))
        .route("/api/v1/objects/{id}", get(get_object))
        .route("/api/v1/misp", post(post_misp))
        .route("/api/v1/search", get(search))
        .route("/api/v1/review", get(review_list))
        .route("/api/v1/review/{n}", get(review_get))
        .route("/api/v1/review/{n}/approve", post(approve))
        .route("/api/v1/review/{n}/reject", post(reject))
        .route("/api/v1/audit", get(audit))
        .route("/api/v1/status", get(status))
        .route("/api/v1/events", get(events))
        .route("/api/v1/community", get(community))
}

fn ok(body: &Value) -> Response {
    json_response(StatusCode::OK, "application/json", body)
}

/// Where submitted objects go: `sector=` a sector of the node (one the user is in), `local`,
/// or absent for the sharing policy; `tlp=` the marking of unmarked objects.
fn target(
    node: &Node,
    user: &User,
    pairs: &[(String, String)],
) -> Result<(Option<Vec<String>>, Option<Tlp>), HttpError> {
    let sectors = match single(pairs, "sector")? {
        None => None,
        Some("local") => Some(Vec::new()),
        Some(s) => {
            if !node.config().sectors.iter().any(|x| x == s) {
                return Err(HttpError::bad_request(format!(
                    "sector {s:?} is not one of this node's sectors"
                )));
            }
            if user
                .sectors
                .as_ref()
                .is_some_and(|mine| !mine.iter().any(|x| x == s))
            {
                return Err(HttpError::forbidden(format!(
                    "{} may not publish to the sector {s:?}",
                    user.name
                )));
            }
            Some(vec![s.to_string()])
        }
    };
    let tlp = match single(pairs, "tlp")? {
        None => None,
        Some(t) => Some(Tlp::parse(t).ok_or_else(|| {
            HttpError::bad_request(format!(
                "tlp {t:?}: one of clear, green, amber, amber+strict, red"
            ))
        })?),
    };
    Ok((sectors, tlp))
}

/// Reads a JSON body: the content type, the size, the nesting depth, the syntax.
async fn read_json(
    node: &Node,
    headers: &HeaderMap,
    body: Body,
    media_types: &[&str],
) -> Result<Vec<u8>, HttpError> {
    if !media_types.iter().any(|m| media_type_is(headers, m, None)) {
        return Err(HttpError::unsupported_media_type(&media_types.join(" or ")));
    }
    let limits = &node.config().limits;
    let bytes = read_body(headers, body, limits.max_body_bytes).await?;
    check_depth(&bytes, limits.max_depth)?;
    Ok(bytes)
}

fn parse_json(bytes: &[u8]) -> Result<Value, HttpError> {
    serde_json::from_slice(bytes)
        .map_err(|e| HttpError::bad_request(format!("malformed JSON: {e}")))
}

/// Refuses JSON nested deeper than `max` arrays and objects, before any parser recurses.
fn check_depth(bytes: &[u8], max: usize) -> Result<(), HttpError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(HttpError::bad_request(format!(
                        "the JSON is nested deeper than {max} levels"
                    )));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

async fn ingest(
    node: Arc<Node>,
    user: &User,
    objects: Vec<StixObject>,
    target: (Option<Vec<String>>, Option<Tlp>),
) -> Result<Response, HttpError> {
    let req = IngestRequest {
        objects,
        source: Source::User(user.name.clone()),
        sectors: target.0,
        default_tlp: target.1,
    };
    let report = blocking(move || Ok(node.ingest(req)?)).await?;
    Ok(ok(&report_json(&report)))
}

fn report_json(r: &IngestReport) -> Value {
    let results: Vec<Value> = r
        .results
        .iter()
        .map(|(id, version, d)| {
            let mut v = json!({ "id": id, "version": version });
            let extra = match d {
                Disposition::Shared { sectors } => {
                    json!({ "disposition": "shared", "sectors": sectors })
                }
                Disposition::Queued { review, reasons } => {
                    json!({ "disposition": "queued", "review": review, "reasons": reasons })
                }
                Disposition::Duplicate => json!({ "disposition": "duplicate" }),
                Disposition::Local => json!({ "disposition": "local" }),
            };
            if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
                m.extend(e);
            }
            v
        })
        .collect();
    json!({ "results": results })
}

/// `POST /api/v1/objects?sector=&tlp=`: a STIX bundle (analysts and above).
async fn post_objects(
    Authed(user): Authed,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    require(&user, Role::Analyst)?;
    let node = state.node.clone();
    let target = target(&node, &user, &query_pairs(raw.as_deref(), QUERY_PAIRS_MAX)?)?;
    let bytes = read_json(
        &node,
        &headers,
        body,
        &["application/json", "application/stix+json"],
    )
    .await?;
    let stix_limits = node.config().limits.stix();
    let objects = blocking(move || {
        halyard_stix::bundle::parse(&bytes, &stix_limits)
            .map_err(|e| HttpError::from_validation(&e))
    })
    .await?;
    ingest(node, &user, objects, target).await
}

/// `POST /api/v1/misp?sector=&tlp=`: a MISP event, converted to STIX (analysts and above).
async fn post_misp(
    Authed(user): Authed,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    require(&user, Role::Analyst)?;
    let node = state.node.clone();
    let target = target(&node, &user, &query_pairs(raw.as_deref(), QUERY_PAIRS_MAX)?)?;
    let bytes = read_json(&node, &headers, body, &["application/json"]).await?;
    let max_objects = node.config().limits.max_objects;
    let objects = blocking(move || {
        let event = parse_json(&bytes)?;
        let now_millis = now_us() / 1000;
        halyard_stix::misp::event_to_objects(&event, now_millis, max_objects)
            .map_err(|e| HttpError::bad_request(format!("MISP event not converted: {e}")))
    })
    .await?;
    ingest(node, &user, objects, target).await
}

fn stored_json(o: &StoredObject) -> Value {
    let object = serde_json::from_str::<Value>(&o.json).unwrap_or(Value::Null);
    json!({
        "row": o.row,
        "id": o.id,
        "type": o.stix_type,
        "spec_version": o.spec_version,
        "version": o.version,
        "tlp": o.tlp.as_str(),
        "sector": o.sector,
        "origin": o.origin,
        "added": format_us(o.added_us),
        "revoked": o.revoked,
        "deleted": o.deleted,
        "object": object,
    })
}

fn opt_time(pairs: &[(String, String)], name: &str) -> Result<Option<i64>, HttpError> {
    single(pairs, name)?
        .map(|s| {
            parse_us(s).ok_or_else(|| {
                HttpError::bad_request(format!("{name} {s:?} is not an RFC 3339 timestamp"))
            })
        })
        .transpose()
}

fn opt_count(
    pairs: &[(String, String)],
    name: &str,
    default: usize,
    max: usize,
) -> Result<usize, HttpError> {
    match single(pairs, name)? {
        None => Ok(default.min(max)),
        Some(s) => s
            .parse::<usize>()
            .map(|n| n.min(max))
            .map_err(|_| HttpError::bad_request(format!("{name} must be a whole number"))),
    }
}

pub(crate) async fn visible(
    node: &Arc<Node>,
    user: &User,
) -> Result<Vec<crate::store::CollectionKey>, HttpError> {
    let node = node.clone();
    let user = user.clone();
    blocking(move || Ok(node.visible_collections(&user))).await
}

/// The search a query string asks for: `q`, `type`, `tlp`, `sector` (`local` for the node's
/// own collection), `origin`, `since`, `until`, `limit`, `offset`; `visible` left empty.
pub(crate) fn search_query(
    pairs: &[(String, String)],
    page_size: usize,
) -> Result<SearchQuery, HttpError> {
    let text = single(pairs, "q")?.unwrap_or("").to_string();
    if text.len() > SEARCH_TEXT_BYTES_MAX {
        return Err(HttpError::bad_request(format!(
            "q is longer than {SEARCH_TEXT_BYTES_MAX} bytes"
        )));
    }
    let tlps = list(pairs, "tlp")
        .iter()
        .map(|t| Tlp::parse(t).ok_or_else(|| HttpError::bad_request(format!("tlp {t:?} unknown"))))
        .collect::<Result<Vec<_>, _>>()?;
    let sectors: Vec<Sector> = list(pairs, "sector")
        .into_iter()
        .map(|s| (s != "local").then_some(s))
        .collect();
    Ok(SearchQuery {
        text,
        types: list(pairs, "type"),
        tlps,
        sectors,
        origins: list(pairs, "origin"),
        since_us: opt_time(pairs, "since")?,
        until_us: opt_time(pairs, "until")?,
        visible: Vec::new(),
        limit: opt_count(pairs, "limit", LIST_DEFAULT, page_size)?.max(1),
        offset: opt_count(pairs, "offset", 0, OFFSET_MAX)?,
    })
}

/// `GET /api/v1/search?q=&type=&tlp=&sector=&origin=&since=&until=&limit=&offset=`.
async fn search(
    Authed(user): Authed,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(raw.as_deref(), QUERY_PAIRS_MAX)?;
    let mut q = search_query(&pairs, state.node.config().limits.page_size)?;
    q.visible = visible(&state.node, &user).await?;
    let node = state.node.clone();
    let found = blocking(move || Ok(node.db().search(&q)?)).await?;
    let results: Vec<Value> = found.iter().map(stored_json).collect();
    Ok(ok(&json!({ "results": results })))
}

/// `GET /api/v1/objects/{id}`: every version of an object the user may see.
async fn get_object(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let vis = visible(&state.node, &user).await?;
    let node = state.node.clone();
    let lookup = id.clone();
    let versions = blocking(move || Ok(node.db().versions_of(&lookup, &vis)?)).await?;
    if versions.is_empty() {
        return Err(HttpError::not_found("no such object"));
    }
    let list: Vec<Value> = versions.iter().map(stored_json).collect();
    Ok(ok(&json!({ "id": id, "versions": list })))
}

/// Whether `user` may see a review item: its marking within their clearance and its sectors
/// within theirs.
pub(crate) fn may_see(user: &User, item: &ReviewItem) -> bool {
    let within_sectors = match &user.sectors {
        None => true,
        Some(mine) => item.item.sectors.iter().all(|s| mine.contains(s)),
    };
    item.item.tlp <= user.max_tlp && within_sectors
}

fn review_json(r: &ReviewItem) -> Value {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
    json!({
        "id": r.id,
        "submitted": format_us(r.submitted_us),
        "state": r.state.as_str(),
        "object_id": r.item.object_id,
        "version": r.item.version,
        "type": r.item.stix_type,
        "tlp": r.item.tlp.as_str(),
        "sectors": r.item.sectors,
        "submitted_by": r.item.submitted_by,
        "reasons": r.item.reasons,
        "original": parse(&r.item.original_json),
        "sanitized": parse(&r.item.sanitized_json),
        "changes": parse(&r.item.changes_json),
        "decided_by": r.decided_by,
        "decided": r.decided_us.map(format_us),
        "final": r.final_json.as_deref().map(parse),
        "note": r.note,
    })
}

/// The review items a `state` filter asks for: `pending`, `approved`, `rejected` or `all`
/// (`None`).
pub(crate) fn review_state_filter(state: &str) -> Result<Option<ReviewState>, HttpError> {
    match state {
        "pending" => Ok(Some(ReviewState::Pending)),
        "approved" => Ok(Some(ReviewState::Approved)),
        "rejected" => Ok(Some(ReviewState::Rejected)),
        "all" => Ok(None),
        other => Err(HttpError::bad_request(format!(
            "state {other:?}: one of pending, approved, rejected, all"
        ))),
    }
}

/// `GET /api/v1/review?state=pending|approved|rejected|all&limit=` (reviewers and admins).
async fn review_list(
    Authed(user): Authed,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    require(&user, Role::Reviewer)?;
    let pairs = query_pairs(raw.as_deref(), QUERY_PAIRS_MAX)?;
    let wanted = review_state_filter(single(&pairs, "state")?.unwrap_or("pending"))?;
    let limit = opt_count(&pairs, "limit", LIST_DEFAULT, LIST_MAX)?.max(1);
    let node = state.node.clone();
    let items = blocking(move || Ok(node.db().review_items(wanted, limit)?)).await?;
    let items: Vec<Value> = items
        .iter()
        .filter(|r| may_see(&user, r))
        .map(review_json)
        .collect();
    Ok(ok(&json!({ "items": items })))
}

fn review_number(n: &str) -> Result<i64, HttpError> {
    n.parse::<i64>()
        .map_err(|_| HttpError::bad_request("a review item's number is a whole number"))
}

/// The item `n` if `user` may see it (404 otherwise).
async fn load_review(state: &AppState, user: &User, n: i64) -> Result<ReviewItem, HttpError> {
    let node = state.node.clone();
    let item = blocking(move || Ok(node.db().review_item(n)?)).await?;
    item.filter(|r| may_see(user, r))
        .ok_or_else(|| HttpError::not_found("no such review item"))
}

/// `GET /api/v1/review/{n}` (reviewers and admins, and the item's submitter).
async fn review_get(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(n): Path<String>,
) -> Result<Response, HttpError> {
    let item = load_review(&state, &user, review_number(&n)?).await?;
    if item.item.submitted_by != user.name {
        require(&user, Role::Reviewer)?;
    }
    Ok(ok(&review_json(&item)))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    object: Option<serde_json::Map<String, Value>>,
}

/// The decision's body: empty, or `{"note"?, "object"?}`.
async fn decision_body(
    node: &Node,
    headers: &HeaderMap,
    body: Body,
) -> Result<DecisionBody, HttpError> {
    let declared_empty = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() == b"0");
    if declared_empty || !headers.contains_key(axum::http::header::CONTENT_TYPE) {
        let limit = node.config().limits.max_body_bytes;
        let bytes = read_body(headers, body, limit).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(DecisionBody::default());
        }
        return Err(HttpError::unsupported_media_type("application/json"));
    }
    let bytes = read_json(node, headers, body, &["application/json"]).await?;
    let d: DecisionBody = serde_json::from_slice(&bytes)
        .map_err(|e| HttpError::bad_request(format!("decision: {e}")))?;
    if d.note
        .as_ref()
        .is_some_and(|n| n.chars().count() > NOTE_CHARS_MAX)
    {
        return Err(HttpError::bad_request(format!(
            "note is longer than {NOTE_CHARS_MAX} characters"
        )));
    }
    Ok(d)
}

async fn decide(
    state: AppState,
    user: User,
    n: String,
    headers: HeaderMap,
    body: Body,
    approve: bool,
) -> Result<Response, HttpError> {
    require(&user, Role::Reviewer)?;
    let n = review_number(&n)?;
    let d = decision_body(&state.node, &headers, body).await?;
    let item = load_review(&state, &user, n).await?;
    if item.state != ReviewState::Pending {
        return Err(HttpError::new(
            StatusCode::CONFLICT,
            format!("review item {n} is {} already", item.state.as_str()),
        ));
    }
    let decision = if approve {
        Decision::Approve {
            edited: d.object,
            note: d.note,
        }
    } else if d.object.is_some() {
        return Err(HttpError::bad_request("a rejection carries no object"));
    } else {
        Decision::Reject { note: d.note }
    };
    let node = state.node.clone();
    let decided = blocking(move || Ok(node.decide(n, decision, &user)?)).await?;
    Ok(ok(&review_json(&decided)))
}

/// `POST /api/v1/review/{n}/approve` `{"note"?, "object"?}` (reviewers and admins; never the
/// submitter).
async fn approve(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(n): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    decide(state, user, n, headers, body, true).await
}

/// `POST /api/v1/review/{n}/reject` `{"note"?}` (reviewers and admins; never the submitter).
async fn reject(
    Authed(user): Authed,
    State(state): State<AppState>,
    Path(n): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    decide(state, user, n, headers, body, false).await
}

/// An audit line as JSON (its detail parsed when it is JSON).
pub(crate) fn audit_json(a: &AuditRecord) -> Value {
    let detail = serde_json::from_str::<Value>(&a.entry.detail)
        .unwrap_or_else(|_| Value::String(a.entry.detail.clone()));
    json!({
        "seq": a.seq,
        "at": format_us(a.at_us),
        "actor": a.entry.actor,
        "action": a.entry.action,
        "object_id": a.entry.object_id,
        "detail": detail,
    })
}

/// `GET /api/v1/audit?after=&limit=` (reviewers and admins).
async fn audit(
    Authed(user): Authed,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    require(&user, Role::Reviewer)?;
    let pairs = query_pairs(raw.as_deref(), QUERY_PAIRS_MAX)?;
    let after = single(&pairs, "after")?
        .map(|s| {
            s.parse::<i64>()
                .map_err(|_| HttpError::bad_request("after must be an audit line's number"))
        })
        .transpose()?;
    let limit = opt_count(&pairs, "limit", LIST_DEFAULT, LIST_MAX)?.max(1);
    let node = state.node.clone();
    let lines = blocking(move || Ok(node.db().audit_log(after, limit)?)).await?;
    let entries: Vec<Value> = lines.iter().map(audit_json).collect();
    Ok(ok(&json!({ "entries": entries })))
}

/// `GET /api/v1/status`: the node, its counters and queue (any account).
async fn status(
    Authed(user): Authed,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    let node = state.node.clone();
    let (pending, objects) = blocking(move || {
        let db = node.db();
        Ok((db.pending_reviews()?, db.object_count()?))
    })
    .await?;
    let cfg = state.node.config();
    let c = state.node.counters();
    let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    Ok(ok(&json!({
        "organisation": cfg.node.organisation,
        "sectors": cfg.sectors,
        "user": {
            "name": user.name,
            "role": user.role.as_str(),
            "max_tlp": user.max_tlp.as_str(),
            "sectors": user.sectors,
        },
        "counters": counters_json(c, n),
        "pending_reviews": pending,
        "objects": objects,
    })))
}

/// `GET /api/v1/community`: this node and the other members as DDS discovery sees them now
/// (any account).
async fn community(
    Authed(_user): Authed,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    let node = state.node.clone();
    let members = blocking(move || Ok(node.presence())).await?;
    let cfg = state.node.config();
    Ok(ok(&json!({
        "organisation": cfg.node.organisation,
        "sectors": cfg.sectors,
        "members": members,
    })))
}

/// Counts an open event stream while it lives.
struct StreamTurn(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for StreamTurn {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often an idle event stream sends a comment, so that proxies and clients keep it open.
const EVENTS_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

async fn events(
    Authed(user): Authed,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    use axum::response::sse::{Event, KeepAlive, Sse};
    use axum::response::IntoResponse;
    use tokio::sync::broadcast::error::RecvError;
    let max = state.node.config().limits.max_event_streams;
    let open = state.event_streams.fetch_add(1, Ordering::SeqCst);
    let turn = StreamTurn(state.event_streams.clone());
    if open >= max {
        return Err(HttpError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{max} event streams are open (limits.max_event_streams); try again later"),
        )
        .retry_after(5));
    }
    let rx = state.node.feed().subscribe().ok_or_else(|| {
        HttpError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the node is stopping".to_string(),
        )
    })?;
    let visible = state.node.visible_collections(&user);
    let stream =
        futures_util::stream::unfold((rx, visible, turn), |(mut rx, visible, turn)| async move {
            loop {
                let event = match rx.recv().await {
                    Ok(e) if e.visible_in(&visible) => Event::default()
                        .event("object")
                        .data(serde_json::to_string(&e).unwrap_or_default()),
                    Ok(_) => continue,
                    Err(RecvError::Lagged(n)) => {
                        Event::default().event("lagged").data(n.to_string())
                    }
                    Err(RecvError::Closed) => return None,
                };
                return Some((
                    Ok::<_, std::convert::Infallible>(event),
                    (rx, visible, turn),
                ));
            }
        });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(EVENTS_KEEP_ALIVE))
        .into_response())
}

fn counters_json(c: &Counters, n: impl Fn(&std::sync::atomic::AtomicU64) -> u64) -> Value {
    json!({
        "ingested": n(&c.ingested),
        "shared": n(&c.shared),
        "received": n(&c.received),
        "duplicates": n(&c.duplicates),
        "queued": n(&c.queued),
        "refused_input": n(&c.refused_input),
        "refused_samples": n(&c.refused_samples),
        "auth_failures": n(&c.auth_failures),
        "forbidden": n(&c.forbidden),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_outside_strings() {
        assert!(check_depth(br#"{"a":[[1]]}"#, 3).is_ok());
        assert!(check_depth(br#"{"a":[[[1]]]}"#, 3).is_err());
        assert!(check_depth(br#"{"a":"[[[[[[\"[[["}"#, 1).is_ok());
        let deep = "[".repeat(10_000);
        assert!(check_depth(deep.as_bytes(), 16).is_err());
    }
}
