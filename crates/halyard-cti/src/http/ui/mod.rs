//! The web dashboard, at `/ui/`: pages rendered on the server from minijinja templates
//! (every value HTML-escaped by the templates' auto-escaping), with small scripts for what is
//! live — the feed and the plots read the node's server-sent event stream, the community
//! table and the delivery plot re-read `/api/v1/community`.
//!
//! A browser logs in with the login form and gets a session cookie ([`super::session`]).
//! Every page needs a session ([`Viewer`]; without one, a redirect to the login form); every
//! form that changes anything carries the session's CSRF token and is refused without it,
//! and refused as well when its `Origin` is another site's. What a role may do is decided by
//! the node and [`super::auth::require`], as for the REST API: the dashboard is one more
//! client of the same rules.
//!
//! The pages' security headers (set by the server's outer layer) allow scripts, styles and
//! connections from the node itself only: no inline script, no third-party origin.

mod assets;
mod pages;
mod review;

use super::errors::HttpError;
use super::session::{self, SessionInfo};
use super::AppState;
use crate::store::User;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use minijinja::Environment;
use serde::Serialize;
use std::sync::OnceLock;
use std::time::Instant;

/// The dashboard's routes.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/ui/") }))
        .route("/ui", get(|| async { Redirect::to("/ui/") }))
        .route("/ui/", get(pages::feed))
        .route("/ui/login", get(login_form).post(login))
        .route("/ui/logout", post(logout))
        .route("/ui/search", get(pages::search))
        .route("/ui/objects/{id}", get(pages::object))
        .route("/ui/review", get(review::list))
        .route("/ui/review/{n}", get(review::item).post(review::decide))
        .route("/ui/audit", get(pages::audit))
        .route("/ui/community", get(pages::community))
        .route("/ui/plots", get(pages::plots))
        .route("/ui/static/{file}", get(assets::serve))
}

/// The content security policy of the dashboard's pages: the node's own scripts, styles,
/// images and connections, nothing inline, no framing, forms posted to the node only. The one
/// hash allowed is of the style element Cytoscape.js adds for its container (the version
/// `web/package-lock.json` pins): no other inline style applies.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// The account of a page request, by its session; without a live session the request is
/// redirected to the login form (which comes back to the page after).
pub(crate) struct Viewer {
    pub user: User,
    pub session: SessionInfo,
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match super::auth::session_of(parts, state).await {
            Ok(Some((user, session))) => Ok(Viewer { user, session }),
            Ok(None) => {
                let path = parts
                    .uri
                    .path_and_query()
                    .map(|p| p.as_str())
                    .unwrap_or("/ui/");
                let next: String = form_urlencoded::byte_serialize(path.as_bytes()).collect();
                Err(Redirect::to(&format!("/ui/login?next={next}")).into_response())
            }
            Err(e) => Err(e.into_response()),
        }
    }
}

/// The templates, parsed once.
fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.add_global("libraries_present", assets::libraries_present());
        for (name, text) in [
            ("base.html", include_str!("templates/base.html")),
            ("login.html", include_str!("templates/login.html")),
            ("feed.html", include_str!("templates/feed.html")),
            ("search.html", include_str!("templates/search.html")),
            ("object.html", include_str!("templates/object.html")),
            (
                "review_list.html",
                include_str!("templates/review_list.html"),
            ),
            (
                "review_item.html",
                include_str!("templates/review_item.html"),
            ),
            ("audit.html", include_str!("templates/audit.html")),
            ("community.html", include_str!("templates/community.html")),
            ("plots.html", include_str!("templates/plots.html")),
            ("rows.html", include_str!("templates/rows.html")),
        ] {
            if let Err(e) = env.add_template(name, text) {
                // The templates are compiled into the binary and parsed by the unit tests.
                eprintln!("halyard-cti dashboard: template {name}: {e}");
            }
        }
        env
    })
}

/// What every page shows of who is looking.
#[derive(Serialize)]
pub(crate) struct Me<'a> {
    name: &'a str,
    role: &'static str,
    organisation: &'a str,
    csrf: &'a str,
    may_review: bool,
}

impl<'a> Me<'a> {
    pub(crate) fn of(v: &'a Viewer, state: &'a AppState) -> Me<'a> {
        Me {
            name: &v.user.name,
            role: v.user.role.as_str(),
            organisation: &state.node.config().node.organisation,
            csrf: &v.session.csrf,
            may_review: v.user.role <= crate::store::Role::Reviewer,
        }
    }
}

/// Renders template `name` with `ctx` as an HTML page.
pub(crate) fn render(status: StatusCode, name: &str, ctx: impl Serialize) -> Response {
    let rendered = templates().get_template(name).and_then(|t| t.render(ctx));
    match rendered {
        Ok(html) => {
            let mut resp = (status, html).into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            resp
        }
        Err(e) => HttpError::internal(&format!("template {name}: {e}")).into_response(),
    }
}

/// A form body's pairs (at most `max_body_bytes`, 400 for more than 64 fields).
pub(crate) async fn read_form(
    state: &AppState,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<Vec<(String, String)>, HttpError> {
    let limit = state.node.config().limits.max_body_bytes;
    let bytes = super::read_body(headers, body, limit).await?;
    let text =
        std::str::from_utf8(&bytes).map_err(|_| HttpError::bad_request("the form is not UTF-8"))?;
    super::query_pairs(Some(text), super::rest::QUERY_PAIRS_MAX)
}

/// Refuses a form post whose `Origin` (or, without one, `Referer`) is neither this server as
/// the request names it (`Host`) nor its configured public URL (behind a reverse proxy).
pub(crate) fn same_origin(headers: &HeaderMap, public_url: Option<&str>) -> Result<(), HttpError> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let claimed = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|h| h.to_str().ok());
    let Some(claimed) = claimed else {
        // Browsers send Origin with every form post; a client without one is not a browser
        // another site can drive.
        return Ok(());
    };
    let authority = claimed
        .split_once("://")
        .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
        .unwrap_or("");
    let public = public_url
        .and_then(|u| u.split_once("://"))
        .map(|(_, rest)| rest.split('/').next().unwrap_or(""));
    let ours = |a: &str| !a.is_empty() && authority.eq_ignore_ascii_case(a);
    if ours(host) || public.is_some_and(ours) {
        Ok(())
    } else {
        Err(HttpError::forbidden(format!(
            "a form of another site ({claimed}) may not post to this node"
        )))
    }
}

/// Checks a form post of a session: same origin and the session's CSRF token.
pub(crate) fn check_form(
    state: &AppState,
    viewer: &Viewer,
    headers: &HeaderMap,
    form: &[(String, String)],
) -> Result<(), HttpError> {
    same_origin(headers, public_url(state))?;
    let sent = form
        .iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    if session::csrf_matches(&viewer.session, sent) {
        Ok(())
    } else {
        Err(HttpError::forbidden(
            "the form's CSRF token is missing or not this session's: reload the page and try again",
        ))
    }
}

/// The node's configured public URL, if any.
fn public_url(state: &AppState) -> Option<&str> {
    state.node.config().listen.public_url.as_deref()
}

/// The value of form field `name` (the first).
pub(crate) fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Where to go after login: a dashboard path only (no other host).
fn safe_next(next: Option<&str>) -> &str {
    match next {
        Some(n) if n.starts_with("/ui/") && !n.contains("//") && !n.contains('\\') => n,
        _ => "/ui/",
    }
}

#[derive(Serialize)]
struct LoginPage<'a> {
    organisation: &'a str,
    next: &'a str,
    error: Option<&'a str>,
    name: &'a str,
}

async fn login_form(
    State(state): State<AppState>,
    axum::extract::RawQuery(raw): axum::extract::RawQuery,
) -> Result<Response, HttpError> {
    let pairs = super::query_pairs(raw.as_deref(), 8)?;
    let next = safe_next(super::single(&pairs, "next")?);
    Ok(render(
        StatusCode::OK,
        "login.html",
        LoginPage {
            organisation: &state.node.config().node.organisation,
            next,
            error: None,
            name: "",
        },
    ))
}

async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Result<Response, HttpError> {
    same_origin(&headers, public_url(&state))?;
    let form = read_form(&state, &headers, body).await?;
    let name = field(&form, "name").unwrap_or("").trim();
    let password = field(&form, "password").unwrap_or("");
    let next = safe_next(field(&form, "next"));
    if name.is_empty() || password.is_empty() || name.len() > 256 || password.len() > 1024 {
        return Ok(login_failed(
            &state,
            next,
            name,
            "give an account name and its password",
        ));
    }
    match super::auth::check_password(&state, name, password).await {
        Ok(user) => {
            let (token, _csrf) = state.sessions.open(&user.name, Instant::now());
            let mut resp = Redirect::to(next).into_response();
            // Behind a TLS reverse proxy (`listen.public_url` is https) the cookie is Secure.
            let secure = public_url(&state).is_some_and(|u| u.starts_with("https://"));
            if let Ok(v) = HeaderValue::from_str(&session::set_cookie(&token, secure)) {
                resp.headers_mut().insert(header::SET_COOKIE, v);
            }
            Ok(resp)
        }
        Err(e) if e.status == StatusCode::UNAUTHORIZED => Ok(login_failed(
            &state,
            next,
            name,
            "the account name or password was not accepted",
        )),
        Err(e) => Err(e),
    }
}

fn login_failed(state: &AppState, next: &str, name: &str, why: &str) -> Response {
    render(
        StatusCode::UNAUTHORIZED,
        "login.html",
        LoginPage {
            organisation: &state.node.config().node.organisation,
            next,
            error: Some(why),
            name,
        },
    )
}

async fn logout(
    viewer: Viewer,
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Result<Response, HttpError> {
    let form = read_form(&state, &headers, body).await?;
    check_form(&state, &viewer, &headers, &form)?;
    if let Some(token) = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(session::token_in_cookies)
    {
        state.sessions.close(token);
    }
    let mut resp = Redirect::to("/ui/login").into_response();
    if let Ok(v) = HeaderValue::from_str(&session::clear_cookie()) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        for name in [
            "base.html",
            "login.html",
            "feed.html",
            "search.html",
            "object.html",
            "review_list.html",
            "review_item.html",
            "audit.html",
            "community.html",
            "plots.html",
            "rows.html",
        ] {
            assert!(templates().get_template(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn values_are_escaped_in_pages() {
        let html = templates()
            .get_template("login.html")
            .unwrap()
            .render(LoginPage {
                organisation: "<script>alert(1)</script>",
                next: "/ui/\"><script>",
                error: Some("<b>"),
                name: "x' onmouseover='y",
            })
            .unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<b>"));
        assert!(!html.contains("x' onmouseover"));
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
            "{html}"
        );
    }

    #[test]
    fn object_rows_render_with_links_and_escaped_names() {
        let me = serde_json::json!({"name": "ana", "role": "analyst", "organisation": "acme",
            "csrf": "t", "may_review": false});
        let row = serde_json::json!({"id": "indicator--1", "stix_type": "indicator",
            "name": "<script>x</script>", "tlp": "amber+strict", "sector": "energy",
            "origin": "acme", "added": "2026-01-01T00:00:00Z", "version": "v", "revoked": true});
        let html = templates()
            .get_template("feed.html")
            .unwrap()
            .render(serde_json::json!({"me": me, "page": "feed", "rows": [row]}))
            .unwrap();
        assert!(html.contains("href=\"/ui/objects/indicator--1\""), "{html}");
        assert!(html.contains("tlp-amber-strict"));
        assert!(html.contains("&lt;script&gt;x"));
        assert!(!html.contains("<script>x"));
    }

    #[test]
    fn login_returns_only_to_dashboard_paths() {
        assert_eq!(safe_next(Some("/ui/review/3")), "/ui/review/3");
        assert_eq!(safe_next(Some("https://evil.example/")), "/ui/");
        assert_eq!(safe_next(Some("/ui//evil.example")), "/ui/");
        assert_eq!(safe_next(Some("//evil.example")), "/ui/");
        assert_eq!(safe_next(None), "/ui/");
    }

    #[test]
    fn a_form_of_another_site_is_refused() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8441"));
        assert!(same_origin(&h, None).is_ok());
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8441"),
        );
        assert!(same_origin(&h, None).is_ok());
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:9999"),
        );
        assert!(same_origin(&h, None).is_err());
        h.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(same_origin(&h, None).is_err());
        // Behind a reverse proxy: the public URL's origin is the node's too.
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://cti.acme.example"),
        );
        assert!(same_origin(&h, Some("https://cti.acme.example/")).is_ok());
        assert!(same_origin(&h, Some("https://other.example")).is_err());
    }
}
