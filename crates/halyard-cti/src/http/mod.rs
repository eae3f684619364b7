//! The node's HTTP server: TAXII 2.1 ([`taxii`], at `/taxii2/`), a JSON REST API
//! ([`rest`], at `/api/v1/`) and the web dashboard (`ui`, at `/ui/`), all over the same
//! [`Node`].
//!
//! Every request passes one outer layer, `guard`, which bounds it before any handler runs
//! and shapes every answer after: at most `limits.max_concurrent_requests` requests are
//! served at once (more wait for a turn), each within `limits.request_timeout_secs` (then
//! 503), a panicking handler becomes a 500 and the server goes on; errors get their body in
//! the path's dialect ([`errors`]); the input-refusal and permission counters are bumped; and
//! every response, errors included, carries the security headers (no content sniffing, no
//! framing, no referrer, no caching, a content security policy that allows nothing, or for
//! the dashboard's pages only the node's own scripts, styles and connections). Request
//! bodies are read by `read_body` within `limits.max_body_bytes` (then 413).
//!
//! Handlers do their database and node work on the blocking pool (`blocking`): SQLite and
//! argon2 block, and the runtime's threads must stay free to accept and time out requests.
//!
//! Every route needs an authenticated account ([`auth`]); what each role may do is decided
//! in [`auth::require`] alone.

pub mod auth;
pub mod errors;
pub mod rest;
pub mod session;
pub mod taxii;
pub mod timefmt;
mod ui;

use crate::node::{Counters, Node};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use errors::{Api, HttpError};
use futures_util::FutureExt;
use http_body_util::BodyExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// What every handler reaches: the node and the server's own state.
#[derive(Clone)]
pub struct AppState {
    /// The node.
    pub node: Arc<Node>,
    /// The authentication cache and the audit throttle.
    pub(crate) auth: Arc<auth::Guard>,
    /// Turns to serve a request (`limits.max_concurrent_requests`).
    turns: Arc<Semaphore>,
    /// Live event streams open (`limits.max_event_streams`).
    pub(crate) event_streams: Arc<std::sync::atomic::AtomicUsize>,
    /// The dashboard's login sessions.
    pub(crate) sessions: Arc<session::Sessions>,
}

/// The server's routes and layers over `node`.
pub fn router(node: Arc<Node>) -> Router {
    let turns = Arc::new(Semaphore::new(
        node.config().limits.max_concurrent_requests.max(1),
    ));
    let state = AppState {
        node,
        auth: Arc::new(auth::Guard::default()),
        turns,
        event_streams: Arc::default(),
        sessions: Arc::default(),
    };
    Router::new()
        .merge(taxii::routes())
        .merge(rest::routes())
        .merge(ui::routes())
        .fallback(unknown_route)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Serves [`router`] on `listener` until `shutdown` completes, then finishes the requests in
/// progress. The node's live feed is closed then: event streams never end by themselves, and
/// the graceful shutdown would wait for them.
pub async fn serve(
    node: Arc<Node>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let watched = node.clone();
    let shutdown = async move {
        shutdown.await;
        watched.feed().close();
    };
    axum::serve(listener, router(node))
        .with_graceful_shutdown(shutdown)
        .await
}

async fn unknown_route() -> HttpError {
    HttpError::not_found("no such resource")
}

/// The outer layer: bounds, panics, error bodies, counters, security headers.
async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let api = Api::of_path(req.uri().path());
    let has_body = request_has_body(req.headers());
    let timeout_secs = state.node.config().limits.request_timeout_secs;
    let resp = bounded(state.turns.clone(), timeout_secs, next.run(req)).await;
    let mut resp = finish(resp, api, state.node.counters());
    if has_body && (resp.status().is_client_error() || resp.status().is_server_error()) {
        // The body may be unread (refused before reading it): the connection cannot carry
        // another request, and the client must know not to reuse it.
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// Runs `work` when a turn is free, within `timeout_secs` of its arrival (then 503), a panic
/// becoming a 500.
async fn bounded(
    turns: Arc<Semaphore>,
    timeout_secs: u64,
    work: impl Future<Output = Response>,
) -> Response {
    let work = async move {
        // The semaphore is never closed, so acquiring only waits.
        let _turn = turns.acquire_owned().await;
        AssertUnwindSafe(work).catch_unwind().await
    };
    match tokio::time::timeout(Duration::from_secs(timeout_secs), work).await {
        Ok(Ok(resp)) => resp,
        Ok(Err(_panic)) => HttpError::internal(&"a handler panicked").into_response(),
        Err(_elapsed) => HttpError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the request was not served within {timeout_secs} s; try again later"),
        )
        .retry_after(timeout_secs)
        .into_response(),
    }
}

fn request_has_body(h: &HeaderMap) -> bool {
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// Renders an error's body, counts refusals, and adds the security headers.
fn finish(mut resp: Response, api: Api, counters: &Counters) -> Response {
    let status = resp.status();
    let mut counted = false;
    if let Some(err) = resp.extensions_mut().remove::<HttpError>() {
        counted = err.counted;
        resp = err.render(api);
    } else if (status.is_client_error() || status.is_server_error()) && !is_page(&resp, api) {
        // The router's own answers (no route, method not allowed) and extractor rejections;
        // a dashboard page rendered with an error status (a refused login) is kept.
        let description = match status {
            StatusCode::NOT_FOUND => "no such resource",
            StatusCode::METHOD_NOT_ALLOWED => "this method is not allowed on this resource",
            _ => "the request cannot be served as sent",
        };
        resp = HttpError::new(status, description).render(api);
    }
    match status {
        _ if counted => {}
        StatusCode::FORBIDDEN => Counters::bump(&counters.forbidden),
        StatusCode::BAD_REQUEST
        | StatusCode::PAYLOAD_TOO_LARGE
        | StatusCode::UNSUPPORTED_MEDIA_TYPE => Counters::bump(&counters.refused_input),
        _ => {}
    }
    security_headers(resp.headers_mut(), api);
    resp
}

/// Whether a response is a dashboard page a handler rendered.
fn is_page(resp: &Response, api: Api) -> bool {
    api == Api::Ui
        && resp
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/html"))
}

/// The headers every response carries.
fn security_headers(h: &mut HeaderMap, api: Api) {
    let (csp, referrer) = match api {
        // A form post of a page under `no-referrer` has the Origin `null`; `same-origin`
        // gives the node's own pages their origin, and nothing to other sites.
        Api::Ui => (ui::PAGE_CSP, "same-origin"),
        Api::Rest | Api::Taxii => ("default-src 'none'; frame-ancestors 'none'", "no-referrer"),
    };
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, csp),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, referrer),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    h.remove(header::SERVER);
}

/// Reads a request body of at most `limit` bytes (413 beyond it, refused before reading when
/// `Content-Length` says so already).
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Vec<u8>, HttpError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(HttpError::too_large(limit));
    }
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes().to_vec()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(HttpError::too_large(limit)),
        Err(e) => Err(HttpError::bad_request(format!(
            "the request body could not be read: {e}"
        ))),
    }
}

/// Runs node or database work on the blocking pool.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, HttpError>
where
    F: FnOnce() -> Result<T, HttpError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(HttpError::internal(&e)),
    }
}

/// The query string's pairs, percent-decoded, at most `max` of them (400 beyond).
pub(crate) fn query_pairs(
    raw: Option<&str>,
    max: usize,
) -> Result<Vec<(String, String)>, HttpError> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .take(max + 1)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if pairs.len() > max {
        return Err(HttpError::bad_request(format!(
            "more than {max} query parameters"
        )));
    }
    Ok(pairs)
}

/// The one value of query parameter `name` (400 if given twice).
pub(crate) fn single<'a>(
    pairs: &'a [(String, String)],
    name: &str,
) -> Result<Option<&'a str>, HttpError> {
    let mut it = pairs.iter().filter(|(k, _)| k == name);
    let first = it.next().map(|(_, v)| v.as_str());
    if it.next().is_some() {
        return Err(HttpError::bad_request(format!("{name} is given twice")));
    }
    Ok(first)
}

/// Every comma-separated value of every occurrence of `name`, empty values dropped.
pub(crate) fn list(pairs: &[(String, String)], name: &str) -> Vec<String> {
    pairs
        .iter()
        .filter(|(k, _)| k == name)
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a `Content-Type` header names `media_type`, with an optional `version` parameter
/// that must then equal `version` (case and spaces around `;` ignored).
pub(crate) fn media_type_is(headers: &HeaderMap, media_type: &str, version: Option<&str>) -> bool {
    let Some(v) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    media_range_matches(v, media_type, version)
}

/// Whether one media range (`type/sub; params`) is `media_type` with an acceptable
/// `version`: absent, or equal to `version`.
pub(crate) fn media_range_matches(range: &str, media_type: &str, version: Option<&str>) -> bool {
    let mut parts = range.split(';').map(str::trim);
    let Some(essence) = parts.next() else {
        return false;
    };
    if !essence.eq_ignore_ascii_case(media_type) {
        return false;
    }
    parts.all(|p| match p.split_once('=') {
        Some((k, v)) if k.trim().eq_ignore_ascii_case("version") => {
            version.is_none_or(|want| v.trim().trim_matches('"') == want)
        }
        _ => true,
    })
}

/// A JSON response of the given media type.
pub(crate) fn json_response(
    status: StatusCode,
    media_type: &'static str,
    body: &serde_json::Value,
) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    resp
}

/// Microseconds since the epoch, now.
pub(crate) fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_of(resp: &Response) -> (u16, Option<u16>) {
        let err = resp
            .extensions()
            .get::<HttpError>()
            .map(|e| e.status.as_u16());
        (resp.status().as_u16(), err)
    }

    #[tokio::test]
    async fn a_panic_is_a_500_and_a_slow_request_a_503() {
        let turns = Arc::new(Semaphore::new(1));
        let ok = bounded(turns.clone(), 1, async { StatusCode::OK.into_response() }).await;
        assert_eq!(status_of(&ok), (200, None));
        let panicked = bounded(turns.clone(), 1, async {
            if turns_are_free() {
                panic!("handler bug");
            }
            StatusCode::OK.into_response()
        })
        .await;
        assert_eq!(status_of(&panicked), (500, Some(500)));
        let slow = bounded(turns.clone(), 1, async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            StatusCode::OK.into_response()
        })
        .await;
        assert_eq!(status_of(&slow), (503, Some(503)));
        assert_eq!(turns.available_permits(), 1, "every turn is given back");

        // A request waiting for a turn longer than the timeout is answered too.
        let held = turns.clone().acquire_owned().await.unwrap();
        let waiting = bounded(turns.clone(), 1, async { StatusCode::OK.into_response() }).await;
        assert_eq!(status_of(&waiting), (503, Some(503)));
        std::mem::drop(held);
    }

    fn turns_are_free() -> bool {
        true
    }

    #[test]
    fn errors_get_their_dialect_and_every_answer_the_security_headers() {
        let counters = Counters::default();
        let taxii = finish(
            HttpError::too_large(10).into_response(),
            Api::Taxii,
            &counters,
        );
        assert_eq!(taxii.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            taxii.headers()[header::CONTENT_TYPE],
            errors::TAXII_MEDIA_TYPE
        );
        let rest = finish(
            StatusCode::METHOD_NOT_ALLOWED.into_response(),
            Api::Rest,
            &counters,
        );
        assert_eq!(rest.headers()[header::CONTENT_TYPE], "application/json");
        let ok = finish(StatusCode::OK.into_response(), Api::Rest, &counters);
        for r in [&taxii, &rest, &ok] {
            assert_eq!(r.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(r.headers()[header::CACHE_CONTROL], "no-store");
        }
        assert_eq!(
            counters
                .refused_input
                .load(std::sync::atomic::Ordering::Relaxed),
            1
        );
    }

    #[test]
    fn media_ranges_match_with_an_optional_version() {
        let t = "application/taxii+json";
        assert!(media_range_matches(
            "application/taxii+json;version=2.1",
            t,
            Some("2.1")
        ));
        assert!(media_range_matches(
            "Application/TAXII+json ; version=2.1",
            t,
            Some("2.1")
        ));
        assert!(media_range_matches(
            "application/taxii+json",
            t,
            Some("2.1")
        ));
        assert!(!media_range_matches(
            "application/taxii+json;version=2.0",
            t,
            Some("2.1")
        ));
        assert!(!media_range_matches("application/json", t, Some("2.1")));
    }

    #[test]
    fn query_strings_are_bounded_and_lists_split_on_commas() {
        let p = query_pairs(
            Some("match%5Btype%5D=indicator,malware&match[type]=tool"),
            8,
        )
        .unwrap();
        assert_eq!(list(&p, "match[type]"), ["indicator", "malware", "tool"]);
        assert!(single(&p, "match[type]").is_err());
        assert!(query_pairs(Some("a=1&b=2&c=3"), 2).is_err());
    }
}
