//! The page at `/` and its files (`/ui/...`), from the binary. They hold no data, so they are
//! served without the token; the page's calls to `/v1/...` bring it. A policy header lets the
//! page load only its own scripts and styles and talk only to this server: a title or URL of a
//! crawled page can never run as script.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, MethodRouter};

use super::Shared;
use crate::cli::web;

/// The policy of the page and its files.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                      img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page's routes: (path, handler).
pub(super) fn routes() -> Vec<(&'static str, MethodRouter<std::sync::Arc<Shared>>)> {
    vec![
        (
            "/",
            get(|| async { file("text/html; charset=utf-8", web::INDEX_HTML) }),
        ),
        (
            "/ui/style.css",
            get(|| async { file("text/css; charset=utf-8", web::STYLE_CSS) }),
        ),
        (
            "/ui/render.js",
            get(|| async { file("text/javascript; charset=utf-8", web::RENDER_JS) }),
        ),
        (
            "/ui/page.js",
            get(|| async { file("text/javascript; charset=utf-8", web::PAGE_JS) }),
        ),
    ]
}

/// Whether `route` is one of the page's (served without the token).
pub(super) fn is_page(route: &str) -> bool {
    route == "/" || route.starts_with("/ui/")
}

fn file(kind: &'static str, body: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}
