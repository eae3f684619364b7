//! The dashboard's reading pages: the live feed, search, an object with its versions and
//! relationship graph, the audit log, the community status and the live plots.

use super::{render, Me, Viewer};
use crate::http::errors::HttpError;
use crate::http::rest::{audit_json, search_query, visible, QUERY_PAIRS_MAX};
use crate::http::timefmt::format_us;
use crate::http::{blocking, query_pairs, AppState};
use crate::store::{Role, SearchQuery, StoredObject};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use serde_json::{json, Value};

/// Rows on the feed page when it opens (the live ones are added above them).
const FEED_ROWS: usize = 50;
/// Most relationships drawn around an object.
const GRAPH_EDGES_MAX: usize = 100;
/// The types the search form offers (any other can still be typed in the URL).
const SEARCH_TYPES: [&str; 15] = [
    "indicator",
    "observed-data",
    "sighting",
    "malware",
    "attack-pattern",
    "vulnerability",
    "threat-actor",
    "campaign",
    "course-of-action",
    "identity",
    "relationship",
    "report",
    "note",
    "tool",
    "infrastructure",
];
/// Audit lines on the audit page.
const AUDIT_ROWS: usize = 200;

/// One object version as a table row.
#[derive(Serialize)]
pub(crate) struct Row {
    id: String,
    stix_type: String,
    name: String,
    tlp: &'static str,
    sector: String,
    origin: String,
    added: String,
    version: String,
    revoked: bool,
}

impl Row {
    fn of(o: &StoredObject) -> Row {
        let object = serde_json::from_str::<Value>(&o.json).unwrap_or(Value::Null);
        Row {
            name: crate::feed::display_name(&object)
                .map(|s| s.chars().take(160).collect())
                .unwrap_or_else(|| o.id.clone()),
            id: o.id.clone(),
            stix_type: o.stix_type.clone(),
            tlp: o.tlp.as_str(),
            sector: o.sector.clone().unwrap_or_else(|| "local".into()),
            origin: o.origin.clone(),
            added: format_us(o.added_us),
            version: o.version.clone(),
            revoked: o.revoked,
        }
    }
}

async fn find(
    state: &AppState,
    viewer: &Viewer,
    mut q: SearchQuery,
) -> Result<Vec<Row>, HttpError> {
    q.visible = visible(&state.node, &viewer.user).await?;
    let node = state.node.clone();
    let found = blocking(move || Ok(node.db().search(&q)?)).await?;
    Ok(found.iter().map(Row::of).collect())
}

/// `GET /ui/`: the newest objects, then every new one as it is stored.
pub(crate) async fn feed(
    viewer: Viewer,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    let q = SearchQuery {
        limit: FEED_ROWS,
        ..SearchQuery::default()
    };
    let rows = find(&state, &viewer, q).await?;
    Ok(render(
        StatusCode::OK,
        "feed.html",
        json!({ "me": Me::of(&viewer, &state), "page": "feed", "rows": rows }),
    ))
}

/// `GET /ui/search?q=&type=&tlp=&sector=&origin=&since=&until=`.
pub(crate) async fn search(
    viewer: Viewer,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(raw.as_deref(), QUERY_PAIRS_MAX)?;
    // An empty field of the form is no filter.
    let pairs: Vec<(String, String)> = pairs.into_iter().filter(|(_, v)| !v.is_empty()).collect();
    let form: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let (rows, error) = match search_query(&pairs, state.node.config().limits.page_size) {
        Ok(q) => (find(&state, &viewer, q).await?, None),
        Err(e) => (Vec::new(), Some(e.description)),
    };
    let cfg = state.node.config();
    Ok(render(
        if error.is_some() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        },
        "search.html",
        json!({
            "me": Me::of(&viewer, &state),
            "page": "search",
            "rows": rows,
            "form": form,
            "error": error,
            "searched": !pairs.is_empty(),
            "sectors": cfg.sectors,
            "types": SEARCH_TYPES,
        }),
    ))
}

/// A node of the relationship graph.
#[derive(Serialize)]
struct GraphNode {
    id: String,
    label: String,
    kind: String,
    known: bool,
}

/// An edge of the relationship graph.
#[derive(Serialize)]
struct GraphEdge {
    id: String,
    source: String,
    target: String,
    label: String,
}

/// `GET /ui/objects/{id}`: every version the viewer may see, the newest one's JSON, and the
/// relationships and sightings around it as a graph.
pub(crate) async fn object(
    viewer: Viewer,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let vis = visible(&state.node, &viewer.user).await?;
    let node = state.node.clone();
    let lookup = id.clone();
    let (versions, related, neighbours) = blocking(move || {
        let db = node.db();
        let versions = db.versions_of(&lookup, &vis)?;
        let related = db.related(&lookup, &vis, GRAPH_EDGES_MAX)?;
        let mut neighbours = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for r in &related {
            for other in ends(r).into_iter().flatten() {
                if other != lookup && seen.insert(other.clone()) {
                    let latest = db.versions_of(&other, &vis)?.into_iter().next_back();
                    neighbours.push((other, latest));
                }
            }
        }
        Ok((versions, related, neighbours))
    })
    .await?;
    let Some(latest) = versions.last() else {
        return Err(HttpError::not_found(format!(
            "no object {id} that you may see"
        )));
    };
    let latest_json = serde_json::from_str::<Value>(&latest.json)
        .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default())
        .unwrap_or_else(|_| latest.json.clone());
    let mut nodes = vec![GraphNode {
        id: id.clone(),
        label: Row::of(latest).name,
        kind: latest.stix_type.clone(),
        known: true,
    }];
    for (nid, stored) in &neighbours {
        nodes.push(GraphNode {
            id: nid.clone(),
            label: stored
                .as_ref()
                .map(|s| Row::of(s).name)
                .unwrap_or_else(|| nid.clone()),
            kind: nid.split("--").next().unwrap_or("").to_string(),
            known: stored.is_some(),
        });
    }
    let mut edges = Vec::new();
    let mut drawn = std::collections::BTreeSet::new();
    for r in &related {
        if !drawn.insert(r.id.clone()) {
            continue; // an older version of a relationship already drawn
        }
        let [Some(source), Some(target)] = ends(r) else {
            continue;
        };
        let object = serde_json::from_str::<Value>(&r.json).unwrap_or(Value::Null);
        let label = object
            .get("relationship_type")
            .and_then(Value::as_str)
            .unwrap_or(&r.stix_type)
            .to_string();
        edges.push(GraphEdge {
            id: r.id.clone(),
            source,
            target,
            label,
        });
    }
    let graph = json!({ "nodes": nodes, "edges": edges }).to_string();
    let rows: Vec<Row> = versions.iter().rev().map(Row::of).collect();
    let related_rows: Vec<Row> = related.iter().map(Row::of).collect();
    Ok(render(
        StatusCode::OK,
        "object.html",
        json!({
            "me": Me::of(&viewer, &state),
            "page": "search",
            "id": id,
            "latest": Row::of(latest),
            "json": latest_json,
            "versions": rows,
            "related": related_rows,
            "graph": graph,
        }),
    ))
}

/// The two ends of a relationship (`source_ref`, `target_ref`) or a sighting (the sighted
/// object, and the first place it was sighted or the sighting's observer).
fn ends(r: &StoredObject) -> [Option<String>; 2] {
    let object = serde_json::from_str::<Value>(&r.json).unwrap_or(Value::Null);
    let s = |k: &str| object.get(k).and_then(Value::as_str).map(str::to_string);
    if r.stix_type == "sighting" {
        let place = object
            .get("where_sighted_refs")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| s("created_by_ref"));
        [place, s("sighting_of_ref")]
    } else {
        [s("source_ref"), s("target_ref")]
    }
}

/// `GET /ui/audit` (reviewers and admins): the newest audit lines.
pub(crate) async fn audit(
    viewer: Viewer,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    crate::http::auth::require(&viewer.user, Role::Reviewer)?;
    let node = state.node.clone();
    let lines = blocking(move || {
        let db = node.db();
        // The log reads forward from a line number: start AUDIT_ROWS before its end.
        let after = db
            .last_audit_seq()?
            .map(|last| last - AUDIT_ROWS as i64)
            .filter(|a| *a > 0);
        Ok(db.audit_log(after, AUDIT_ROWS)?)
    })
    .await?;
    let entries: Vec<Value> = lines.iter().rev().map(audit_json).collect();
    Ok(render(
        StatusCode::OK,
        "audit.html",
        json!({ "me": Me::of(&viewer, &state), "page": "audit", "entries": entries }),
    ))
}

/// `GET /ui/community`: the members discovery sees, refreshed by the page's script.
pub(crate) async fn community(
    viewer: Viewer,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    let node = state.node.clone();
    let members = blocking(move || Ok(node.presence())).await?;
    Ok(render(
        StatusCode::OK,
        "community.html",
        json!({
            "me": Me::of(&viewer, &state),
            "page": "community",
            "sectors": state.node.config().sectors,
            "members": members,
        }),
    ))
}

/// `GET /ui/plots`: objects per second, latency percentiles and delivery, per partition.
pub(crate) async fn plots(
    viewer: Viewer,
    State(state): State<AppState>,
) -> Result<Response, HttpError> {
    Ok(render(
        StatusCode::OK,
        "plots.html",
        json!({
            "me": Me::of(&viewer, &state),
            "page": "plots",
            "sectors": state.node.config().sectors,
        }),
    ))
}
