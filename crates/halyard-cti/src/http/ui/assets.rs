//! The dashboard's static files, compiled into the binary: its own script and style sheet,
//! and the browser libraries `build.rs` copied from `web/node_modules` (uPlot for the plots,
//! Cytoscape.js for the relationship graph).

use crate::http::errors::HttpError;
use axum::extract::Path;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// Whether the browser libraries were embedded when this binary was built.
pub(crate) fn libraries_present() -> bool {
    include_str!(concat!(env!("OUT_DIR"), "/web/status")).is_empty()
}

/// `GET /ui/static/{file}`.
pub(crate) async fn serve(Path(file): Path<String>) -> Result<Response, HttpError> {
    let (body, media_type): (&'static [u8], &'static str) = match file.as_str() {
        "app.js" => (
            include_bytes!("static/app.js"),
            "text/javascript; charset=utf-8",
        ),
        "app.css" => (include_bytes!("static/app.css"), "text/css; charset=utf-8"),
        "uPlot.iife.min.js" => (
            include_bytes!(concat!(env!("OUT_DIR"), "/web/uPlot.iife.min.js")),
            "text/javascript; charset=utf-8",
        ),
        "uPlot.min.css" => (
            include_bytes!(concat!(env!("OUT_DIR"), "/web/uPlot.min.css")),
            "text/css; charset=utf-8",
        ),
        "cytoscape.min.js" => (
            include_bytes!(concat!(env!("OUT_DIR"), "/web/cytoscape.min.js")),
            "text/javascript; charset=utf-8",
        ),
        _ => return Err(HttpError::not_found("no such file")),
    };
    let mut resp = body.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    Ok(resp)
}
