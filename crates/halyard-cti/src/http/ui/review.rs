//! The review queue: what the sanitiser held back, the changes it made shown as a line diff
//! of the object's JSON, and the approve / edit / reject forms. The four-eyes rule and the
//! roles are the node's ([`crate::node::Node::decide`]): a submitter's own item and an
//! analyst's decision are refused there, and the page says why.

use super::{check_form, field, read_form, render, Me, Viewer};
use crate::http::errors::HttpError;
use crate::http::rest::{may_see, review_state_filter, NOTE_CHARS_MAX};
use crate::http::timefmt::format_us;
use crate::http::{blocking, query_pairs, single, AppState};
use crate::node::Decision;
use crate::store::{ReviewItem, ReviewState, Role};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Serialize;
use serde_json::{json, Value};

/// Items listed on the queue page.
const LIST_ROWS: usize = 200;

/// One line of a diff.
#[derive(Serialize, Debug, PartialEq)]
pub(crate) struct DiffLine {
    /// `same`, `removed` or `added`.
    kind: &'static str,
    text: String,
}

fn pretty(json: &str) -> String {
    serde_json::from_str::<Value>(json)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|_| json.to_string())
}

/// The line diff from the submitted object to the sanitised one.
pub(crate) fn diff(original: &str, sanitized: &str) -> Vec<DiffLine> {
    let (a, b) = (pretty(original), pretty(sanitized));
    similar::TextDiff::from_lines(&a, &b)
        .iter_all_changes()
        .map(|c| DiffLine {
            kind: match c.tag() {
                similar::ChangeTag::Equal => "same",
                similar::ChangeTag::Delete => "removed",
                similar::ChangeTag::Insert => "added",
            },
            text: c.value().trim_end_matches('\n').to_string(),
        })
        .collect()
}

fn summary(r: &ReviewItem) -> Value {
    json!({
        "n": r.id,
        "submitted": format_us(r.submitted_us),
        "state": r.state.as_str(),
        "object_id": r.item.object_id,
        "type": r.item.stix_type,
        "tlp": r.item.tlp.as_str(),
        "sectors": r.item.sectors.join(", "),
        "submitted_by": r.item.submitted_by,
        "reasons": r.item.reasons,
        "decided_by": r.decided_by,
        "note": r.note,
    })
}

/// `GET /ui/review?state=pending|approved|rejected|all` (reviewers and admins).
pub(crate) async fn list(
    viewer: Viewer,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, HttpError> {
    crate::http::auth::require(&viewer.user, Role::Reviewer)?;
    let pairs = query_pairs(raw.as_deref(), 8)?;
    let shown = single(&pairs, "state")?.unwrap_or("pending").to_string();
    let wanted = review_state_filter(&shown)?;
    let node = state.node.clone();
    let items = blocking(move || Ok(node.db().review_items(wanted, LIST_ROWS)?)).await?;
    let items: Vec<Value> = items
        .iter()
        .filter(|r| may_see(&viewer.user, r))
        .map(summary)
        .collect();
    Ok(render(
        StatusCode::OK,
        "review_list.html",
        json!({ "me": Me::of(&viewer, &state), "page": "review", "items": items, "shown": shown }),
    ))
}

async fn load(state: &AppState, viewer: &Viewer, n: &str) -> Result<ReviewItem, HttpError> {
    let n = n
        .parse::<i64>()
        .map_err(|_| HttpError::bad_request("a review item's number is a whole number"))?;
    let node = state.node.clone();
    let item = blocking(move || Ok(node.db().review_item(n)?)).await?;
    let item = item
        .filter(|r| may_see(&viewer.user, r))
        .ok_or_else(|| HttpError::not_found(format!("no review item {n} that you may see")))?;
    if item.item.submitted_by != viewer.user.name {
        crate::http::auth::require(&viewer.user, Role::Reviewer)?;
    }
    Ok(item)
}

fn item_page(state: &AppState, viewer: &Viewer, r: &ReviewItem, error: Option<&str>) -> Response {
    let own = r.item.submitted_by == viewer.user.name;
    let may_decide = r.state == ReviewState::Pending && !own && viewer.user.role <= Role::Reviewer;
    let status = if error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    render(
        status,
        "review_item.html",
        json!({
            "me": Me::of(viewer, state),
            "page": "review",
            "item": summary(r),
            "diff": diff(&r.item.original_json, &r.item.sanitized_json),
            "changes": pretty(&r.item.changes_json),
            "sanitized": pretty(&r.item.sanitized_json),
            "final": r.final_json.as_deref().map(pretty),
            "own": own,
            "may_decide": may_decide,
            "error": error,
        }),
    )
}

/// `GET /ui/review/{n}`.
pub(crate) async fn item(
    viewer: Viewer,
    State(state): State<AppState>,
    Path(n): Path<String>,
) -> Result<Response, HttpError> {
    let r = load(&state, &viewer, &n).await?;
    Ok(item_page(&state, &viewer, &r, None))
}

/// `POST /ui/review/{n}` with `action` = `approve` (with an optional edited `object`) or
/// `reject`, and an optional `note`.
pub(crate) async fn decide(
    viewer: Viewer,
    State(state): State<AppState>,
    Path(n): Path<String>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Result<Response, HttpError> {
    let form = read_form(&state, &headers, body).await?;
    check_form(&state, &viewer, &headers, &form)?;
    crate::http::auth::require(&viewer.user, Role::Reviewer)?;
    let r = load(&state, &viewer, &n).await?;
    let note = field(&form, "note")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if note
        .as_ref()
        .is_some_and(|n| n.chars().count() > NOTE_CHARS_MAX)
    {
        return Ok(item_page(
            &state,
            &viewer,
            &r,
            Some(&format!(
                "the note is longer than {NOTE_CHARS_MAX} characters"
            )),
        ));
    }
    let decision = match field(&form, "action") {
        Some("approve") => Decision::Approve { edited: None, note },
        Some("edit") => {
            let text = field(&form, "object").unwrap_or("");
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => Decision::Approve {
                    edited: Some(map),
                    note,
                },
                Ok(_) => {
                    return Ok(item_page(
                        &state,
                        &viewer,
                        &r,
                        Some("the edited object must be one JSON object"),
                    ))
                }
                Err(e) => {
                    return Ok(item_page(
                        &state,
                        &viewer,
                        &r,
                        Some(&format!("the edited object is not JSON: {e}")),
                    ))
                }
            }
        }
        Some("reject") => Decision::Reject { note },
        _ => {
            return Err(HttpError::bad_request(
                "action: one of approve, edit, reject",
            ))
        }
    };
    let node = state.node.clone();
    let user = viewer.user.clone();
    let id = r.id;
    let decided = blocking(move || Ok(node.decide(id, decision, &user))).await?;
    match decided {
        Ok(_) => Ok(Redirect::to(&format!("/ui/review/{id}")).into_response()),
        Err(crate::node::NodeError::Refused(why)) => Ok(item_page(&state, &viewer, &r, Some(&why))),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_shows_what_the_sanitiser_removed_and_added() {
        let d = diff(
            r#"{"a":1,"description":"call +1 555 0100"}"#,
            r#"{"a":1,"description":"call <phone withheld>"}"#,
        );
        assert!(d
            .iter()
            .any(|l| l.kind == "removed" && l.text.contains("555")));
        assert!(d
            .iter()
            .any(|l| l.kind == "added" && l.text.contains("withheld")));
        assert!(d
            .iter()
            .any(|l| l.kind == "same" && l.text.contains("\"a\": 1")));
    }
}
