//! Errors of the HTTP server, and the one place where a failure becomes a status code.
//!
//! Handlers and extractors return an [`HttpError`]: a status, a short title, a description
//! for the caller, and, for refused STIX input, where in the input the fault is. Turning it
//! into a response only tags the response with the error; the server's outer layer renders
//! the body in the dialect of the path (a TAXII 2.1 error resource under `/taxii2/`, a
//! `{"error": ...}` object under the REST API), so that errors raised outside any handler
//! (unknown routes, methods, timeouts, panics) read exactly like the handlers' own.
//!
//! Internal details (SQLite messages, panics) go to the server's log, never to the client.

use crate::node::NodeError;
use crate::store::DbError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use halyard_stix::validate::ValidationError;
use serde_json::{json, Map, Value};

/// The TAXII 2.1 media type (TAXII 2.1 §1.6.8): every TAXII response is of this type.
pub const TAXII_MEDIA_TYPE: &str = "application/taxii+json;version=2.1";
/// The STIX 2.1 media type of a collection's objects.
pub const STIX_MEDIA_TYPE: &str = "application/stix+json;version=2.1";
/// The challenge of a 401 response: both schemes the server accepts.
pub const WWW_AUTHENTICATE: &str = "Basic realm=\"halyard-cti\", Bearer";

/// Which API a request belongs to: decides the error body's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// TAXII 2.1 (`/taxii2/...`).
    Taxii,
    /// The JSON REST API (`/api/v1/...`) and anything else.
    Rest,
    /// The web dashboard (`/ui/...`): an HTML page.
    Ui,
}

impl Api {
    /// The API of a request path.
    pub fn of_path(path: &str) -> Api {
        if path == "/taxii2" || path.starts_with("/taxii2/") {
            Api::Taxii
        } else if path == "/" || path == "/ui" || path.starts_with("/ui/") {
            Api::Ui
        } else {
            Api::Rest
        }
    }
}

/// Where in the input a refused STIX object is.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct InputFault {
    /// Position of the object in the bundle or envelope.
    pub index: Option<usize>,
    /// The object's id, when it was readable.
    pub id: Option<String>,
    /// The property at fault.
    pub property: Option<String>,
}

/// A request that failed: what the client is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpError {
    /// The status code.
    pub status: StatusCode,
    /// A short title (TAXII error `title`).
    pub title: String,
    /// What went wrong and, where it helps, what to do.
    pub description: String,
    /// For refused STIX input: where.
    pub fault: Option<Box<InputFault>>,
    /// Seconds after which a retry may succeed (`Retry-After`).
    pub retry_after_secs: Option<u64>,
    /// The node counted this refusal already (the server's outer layer counts the others).
    pub(crate) counted: bool,
}

impl HttpError {
    /// An error with the status's standard title.
    pub fn new(status: StatusCode, description: impl Into<String>) -> HttpError {
        HttpError {
            status,
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            description: description.into(),
            fault: None,
            retry_after_secs: None,
            counted: false,
        }
    }

    /// 400: the request is malformed or its content refused.
    pub fn bad_request(description: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::BAD_REQUEST, description)
    }

    /// 401: no acceptable credentials.
    pub fn unauthorized(description: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::UNAUTHORIZED, description)
    }

    /// 403: the caller may not do this.
    pub fn forbidden(description: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::FORBIDDEN, description)
    }

    /// 404.
    pub fn not_found(description: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::NOT_FOUND, description)
    }

    /// 413: the body is larger than `limit` bytes.
    pub fn too_large(limit: usize) -> HttpError {
        HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than the server's limit of {limit} bytes"),
        )
    }

    /// 415: the body's media type is not the one expected.
    pub fn unsupported_media_type(expected: &str) -> HttpError {
        HttpError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("the request body must be of type {expected}"),
        )
    }

    /// 500, its cause logged here and not told to the client.
    pub fn internal(cause: &dyn std::fmt::Display) -> HttpError {
        eprintln!("halyard-cti http: internal error: {cause}");
        HttpError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the server failed to handle the request; nothing was changed by it",
        )
    }

    /// The same error with a retry delay.
    pub fn retry_after(mut self, secs: u64) -> HttpError {
        self.retry_after_secs = Some(secs);
        self
    }

    /// 400 for STIX input refused by the validator, with where the fault is.
    pub fn from_validation(e: &ValidationError) -> HttpError {
        let mut err = HttpError::bad_request(match e.index {
            Some(i) => format!("object {i}: {e}"),
            None => e.to_string(),
        });
        err.title = "Invalid STIX content".into();
        err.fault = Some(Box::new(InputFault {
            index: e.index,
            id: e.id.clone(),
            property: (!e.property.is_empty()).then(|| e.property.clone()),
        }));
        err
    }

    /// The status of every node error, in one place.
    pub fn from_node(e: NodeError) -> HttpError {
        match e {
            NodeError::Refused(s) => HttpError::bad_request(s),
            NodeError::Forbidden(s) => HttpError {
                // The node counts the refusals of its own rules (four eyes, roles).
                counted: true,
                ..HttpError::forbidden(s)
            },
            NodeError::Full(s) => {
                HttpError::new(StatusCode::SERVICE_UNAVAILABLE, s).retry_after(30)
            }
            NodeError::NotFound(s) => HttpError::not_found(s),
            NodeError::Db(d) => HttpError::from_db(d),
            NodeError::Dds(s) => {
                eprintln!("halyard-cti http: DDS: {s}");
                HttpError::new(
                    StatusCode::BAD_GATEWAY,
                    "sharing with the community failed; the objects are kept and will be \
                     shared again",
                )
            }
        }
    }

    /// The status of a database error: conflicts are the caller's to see, failures are not.
    pub fn from_db(e: DbError) -> HttpError {
        match e {
            DbError::Review(s) | DbError::Account(s) => HttpError::new(StatusCode::CONFLICT, s),
            other => HttpError::internal(&other),
        }
    }

    /// The response, its body in the dialect of `api`.
    pub fn render(&self, api: Api) -> Response {
        let (body, media_type) = match api {
            Api::Taxii => (self.taxii_body().to_string(), TAXII_MEDIA_TYPE),
            Api::Rest => (self.rest_body().to_string(), "application/json"),
            Api::Ui => (self.html_body(), "text/html; charset=utf-8"),
        };
        let mut resp = (self.status, body).into_response();
        let h = resp.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
        // The dashboard logs in with its own form: a challenge would open the browser's.
        if self.status == StatusCode::UNAUTHORIZED && api != Api::Ui {
            h.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(WWW_AUTHENTICATE),
            );
        }
        if let Some(s) = self.retry_after_secs {
            h.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        resp
    }

    /// The TAXII 2.1 error resource (§3.6.1).
    fn taxii_body(&self) -> Value {
        let mut m = Map::new();
        m.insert("title".into(), json!(self.title));
        m.insert("description".into(), json!(self.description));
        m.insert(
            "http_status".into(),
            json!(self.status.as_u16().to_string()),
        );
        if let Some(f) = &self.fault {
            m.insert("details".into(), fault_json(f));
        }
        Value::Object(m)
    }

    /// A plain page for the dashboard: the status and description, escaped.
    fn html_body(&self) -> String {
        let code = self.status.as_u16();
        format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>{code} {title}</title><link rel=\"stylesheet\" href=\"/ui/static/app.css\">\
             </head><body><main class=\"error\"><h1>{code} {title}</h1><p id=\"error\">{desc}</p>\
             <p><a href=\"/ui/\">Back to the dashboard</a></p></main></body></html>",
            title = escape_html(&self.title),
            desc = escape_html(&self.description),
        )
    }

    fn rest_body(&self) -> Value {
        let mut m = Map::new();
        m.insert("error".into(), json!(self.description));
        if let Some(Value::Object(f)) = self.fault.as_deref().map(fault_json) {
            m.extend(f);
        }
        Value::Object(m)
    }
}

fn fault_json(f: &InputFault) -> Value {
    let mut m = Map::new();
    if let Some(i) = f.index {
        m.insert("index".into(), json!(i));
    }
    if let Some(id) = &f.id {
        m.insert("id".into(), json!(id));
    }
    if let Some(p) = &f.property {
        m.insert("property".into(), json!(p));
    }
    Value::Object(m)
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.title,
            self.description
        )
    }
}

impl IntoResponse for HttpError {
    /// A response carrying the error; the server's outer layer renders its body.
    fn into_response(self) -> Response {
        let mut resp = self.status.into_response();
        resp.extensions_mut().insert(self);
        resp
    }
}

impl From<NodeError> for HttpError {
    fn from(e: NodeError) -> Self {
        HttpError::from_node(e)
    }
}

impl From<DbError> for HttpError {
    fn from(e: DbError) -> Self {
        HttpError::from_db(e)
    }
}

/// Text made safe to put in HTML content or a quoted attribute.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}
