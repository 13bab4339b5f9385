//! The HTTP API (`/v1/...`, documented in `openapi.json`, served at `/v1/openapi.json`).
//!
//! Bodies are JSON objects; documents are read as JSONL lines are (`id`, `text` or `html`,
//! `title`, `url`). Every error is `{"error": message, "field"?: where}` with a 4xx status for
//! the client's mistakes and 5xx for the server's. CPU work runs on thread pools, never on the
//! HTTP threads (but a short query's, when no write holds the store): reads on `fpdb-read-N`,
//! the parsing and fingerprints of write requests on `fpdb-write-N` at a lower priority. A
//! panic there fails one request, not the server.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Path, RawQuery, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::{Json, Router};
use rayon::prelude::*;
use serde_json::Value;

use fpdb::{Document, OnExisting, Outcome};

use super::error::found_or_404;
use super::error::{internal_error, json, short_match_ids, too_large, Answer, ApiError};
use super::pools::{on_cpu, on_write_cpu, read_db};
use super::request::{cluster_id, limit};
use super::request::{documents, flag, object, params, parse_document, read_body};
use super::views;
use super::writer::{Job, Work};
use super::Shared;

/// The OpenAPI document of this API.
pub(super) const OPENAPI: &str = include_str!("openapi.json");

/// Members listed by `GET /v1/clusters/{similar_id}` unless `?limit=` says otherwise.
const DEFAULT_MEMBERS: usize = 1000;

type Db = Arc<Shared>;

/// Every route: (path, handlers).
fn routes() -> Vec<(&'static str, MethodRouter<Db>)> {
    vec![
        ("/healthz", get(healthz)),
        ("/metrics", get(metrics)),
        ("/v1/openapi.json", get(openapi)),
        ("/v1/query", post(query)),
        ("/v1/query/batch", post(query_batch)),
        ("/v1/documents", post(ingest)),
        ("/v1/documents/{id}", get(document)),
        ("/v1/clusters/{similar_id}", get(cluster)),
        (
            "/v1/clusters/{similar_id}/members",
            get(views::cluster_members),
        ),
        ("/v1/stats", get(stats)),
        ("/v1/report", get(views::report)),
    ]
}

pub(super) fn router(shared: Db) -> Router {
    let mut r = Router::new();
    for (path, handlers) in routes().into_iter().chain(super::ui::routes()) {
        r = r.route(path, handlers);
    }
    r.route_layer(middleware::from_fn_with_state(shared.clone(), track))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(shared.max_body_bytes))
        .with_state(shared)
}

/// Authorization (every route but /healthz, when a token is set; without one, what
/// [`super::guard`] refuses) and metrics.
async fn track(State(s): State<Db>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(String::new, |m| m.as_str().to_string());
    let method = req.method().to_string();
    let allowed = route == "/healthz"
        || super::ui::is_page(&route)
        || s.token.as_deref().is_none_or(|token| {
            req.headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(bearer)
                .is_some_and(|given| same(given.as_bytes(), token.as_bytes()))
        });
    // A body declared too large is refused before it is read.
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let refused = (s.token.is_none() && route != "/healthz")
        .then(|| super::guard::refusal(req.method(), req.headers(), s.listen))
        .flatten();
    let resp = if let Some(why) = refused {
        ApiError::new(StatusCode::FORBIDDEN, why).into_response()
    } else if allowed && declared.is_some_and(|n| n > s.max_body_bytes as u64) {
        too_large(s.max_body_bytes).into_response()
    } else if allowed {
        next.run(req).await
    } else {
        let mut r = ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token (Authorization: Bearer TOKEN)",
        )
        .into_response();
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        r
    };
    s.metrics.request(
        &route,
        &method,
        resp.status().as_u16(),
        start.elapsed().as_secs_f64(),
    );
    resp
}

/// The credentials of an `Authorization: Bearer TOKEN` value. The scheme is compared without
/// regard to case (RFC 7235 section 2.1: `bearer` and `BEARER` name it too).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once([' ', '\t'])?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// Equal byte strings, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such route (see /v1/openapi.json)",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this route does not take this method (see /v1/openapi.json)",
    )
}

/// Texts up to this size are looked up on the HTTP thread that received them (`POST
/// /v1/query`), unless a write holds the store.
const INLINE_TEXT_BYTES: usize = 16 << 10;

/// `fpdb query` for one document.
fn look_up(s: &Shared, doc: &Document) -> fpdb::Result<Outcome> {
    let fps = s.fingerprinter.fingerprint_with(&doc.text, doc.meta());
    let db =
        s.db.read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    db.searcher().query("", &db.searcher().furnish(doc, fps)?)
}

async fn healthz(State(s): State<Db>) -> Response {
    if s.writer_failed.load(Ordering::Relaxed) {
        let body = serde_json::json!({"status": "failing", "error": super::writer::WRITER_FAILED});
        (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
    } else {
        Json(serde_json::json!({"status": "ok"})).into_response()
    }
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn metrics(State(s): State<Db>) -> Answer {
    let (stats, reads) = read_db(s.clone(), |db| {
        Ok((db.searcher().stats(), db.meters().lookups))
    })
    .await?;
    let text = s.metrics.encode(&stats, reads);
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

async fn stats(State(s): State<Db>) -> Answer {
    let stats = read_db(s, |db| Ok(db.searcher().stats())).await?;
    json(&stats)
}

/// `POST /v1/query`: `{text | html, title?, url?}` -> what `fpdb query --json` prints.
async fn query(State(s): State<Db>, raw: Body) -> Answer {
    let mut obj = object(&read_body(&s, raw).await?)?;
    obj.entry("id")
        .or_insert_with(|| Value::String("query".into()));
    let sentences = match obj.remove("sentences") {
        Some(v) => flag(&v, "sentences")?,
        None => false,
    };
    // A page is extracted on the reads' pool: its cost grows with its size, and the HTTP threads
    // must stay free for every other client.
    let doc = if obj.contains_key("html") {
        on_cpu(move || parse_document(&obj, "")).await??
    } else {
        parse_document(&obj, "")?
    };
    // The page's paste box asks for the text's sentences marked with the matches holding them.
    let keep = sentences.then(|| (s.clone(), doc.text.clone()));
    let o = if doc.text.len() <= INLINE_TEXT_BYTES {
        // A short text is looked up on this thread when no write holds the store: two
        // thread hand-offs cost more than its fingerprint and lookup.
        let inline = catch_unwind(AssertUnwindSafe(|| {
            let fps = s.fingerprinter.fingerprint_with(&doc.text, doc.meta());
            match s.db.try_read() {
                Ok(db) => Ok(db
                    .searcher()
                    .furnish(&doc, fps)
                    .and_then(|f| db.searcher().query("", &f))),
                // The fingerprints go to the pool, which waits for the store.
                Err(_) => Err(Box::new(fps)),
            }
        }));
        match inline {
            Ok(Ok(found)) => found,
            Ok(Err(fps)) => {
                let doc = doc.clone();
                on_cpu(move || {
                    let db =
                        s.db.read()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                    db.searcher()
                        .furnish(&doc, *fps)
                        .and_then(|f| db.searcher().query("", &f))
                })
                .await?
            }
            Err(_) => return Err(internal_error()),
        }
    } else {
        on_cpu(move || look_up(&s, &doc)).await?
    }
    .map_err(ApiError::store)?;
    let mut o = o;
    short_match_ids(&mut o);
    if let Some((s, text)) = keep {
        let marked = on_cpu(move || views::marked(&s, &text, &o).map(|m| (o, m)))
            .await?
            .map_err(ApiError::store)?;
        let (o, m) = marked;
        let mut v = serde_json::to_value(o.answer(None)).map_err(|_| internal_error())?;
        v["sentences"] = serde_json::to_value(m).map_err(|_| internal_error())?;
        return json(&v);
    }
    json(&o.answer(None))
}

/// `POST /v1/query/batch`: `{"documents": [...]}` -> `{"results": [...]}`, one per document in
/// order, each with its id (the index when it has none).
async fn query_batch(State(s): State<Db>, raw: Body) -> Answer {
    let body = read_body(&s, raw).await?;
    let max = s.max_request_docs;
    let docs = on_cpu(move || {
        let obj = object(&body)?;
        documents(&obj, Some(&|i| i.to_string()), max)
    })
    .await??;
    let found = on_cpu(move || {
        let fps: Vec<fpdb::Fingerprints> = docs
            .par_iter()
            .map(|d| s.fingerprinter.fingerprint_with(&d.text, d.meta()))
            .collect();
        let db =
            s.db.read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Pages without their site's furniture, as the store knows it.
        let fps = docs
            .par_iter()
            .zip(fps)
            .map(|(d, f)| db.searcher().furnish(d, f))
            .collect::<fpdb::Result<Vec<_>>>();
        let outcomes = fps.and_then(|fps| {
            let looked: Vec<(&str, &fpdb::Fingerprints)> = fps.iter().map(|f| ("", f)).collect();
            db.searcher()
                .query_many(&looked)
                .into_iter()
                .collect::<fpdb::Result<Vec<Outcome>>>()
        });
        drop(db);
        outcomes.map(|o| (docs, o))
    })
    .await?
    .map_err(ApiError::store)?;
    let (docs, mut outcomes) = found;
    outcomes.iter_mut().for_each(short_match_ids);
    let results: Vec<fpdb::QueryAnswer> = docs
        .iter()
        .zip(&outcomes)
        .map(|(d, o)| o.answer(Some(&d.id)))
        .collect();
    json(&serde_json::json!({ "results": results }))
}

/// `POST /v1/documents`: one document, or `{"documents": [...]}`; `"replace": true` in the
/// body or `?replace=true` replaces stored ids. Answers `{"results": [...]}` (the lines `ingest --output`
/// writes) once every document is durable.
async fn ingest(State(s): State<Db>, RawQuery(q): RawQuery, raw: Body) -> Answer {
    let mut replace = false;
    for (k, v) in params(&q) {
        if k == "replace" {
            replace = match v.as_str() {
                "true" | "1" | "" => true,
                "false" | "0" => false,
                _ => {
                    return Err(ApiError::bad(
                        format!("query parameter `replace` must be true or false, not `{v}`"),
                        Some("replace"),
                    ))
                }
            };
        }
    }
    // A few write requests at a time are read and worked on; the others wait before their
    // bodies are read (the client's own connection holds them), so memory is bounded by the
    // permits, not by the number of writers.
    let _permit = s.write_slots.acquire().await.map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        )
    })?;
    let body = read_body(&s, raw).await?;
    let max = s.max_request_docs;
    // JSON and pages are read on the writes' pool, not on the HTTP threads.
    let (docs, replace) = on_write_cpu(move || -> Result<_, ApiError> {
        let obj = object(&body)?;
        let mut replace = replace;
        if let Some(v) = obj.get("replace") {
            replace |= flag(v, "replace")?;
        }
        let docs = if obj.contains_key("documents") {
            documents(&obj, None, max)?
        } else {
            vec![parse_document(&obj, "")?]
        };
        Ok((docs, replace))
    })
    .await??;
    let on_existing = if replace {
        OnExisting::Replace
    } else {
        OnExisting::Skip
    };
    // The writer cuts the request into chunks, each decided under one hold of the store
    // (reads run between them), and answers once every document is durable.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job = Job {
        work: Work { docs, on_existing },
        reply: tx,
    };
    let sent = match &*s
        .writer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        Some(w) => w.send(job).is_ok(),
        None => false,
    };
    if !sent {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down; this request was not written",
        ));
    }
    let mut done = match rx.await {
        Ok(Ok(results)) => results,
        Ok(Err(e)) => return Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e)),
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the store writer stopped before answering; these documents may not be stored",
            ))
        }
    };
    for r in &mut done {
        if let fpdb::IngestResult::Added { outcome, .. } = r {
            short_match_ids(outcome);
        }
    }
    let lines: Vec<fpdb::ResultLine> = done
        .iter()
        .map(|r| fpdb::ResultLine::of(r, || None))
        .collect();
    json(&serde_json::json!({ "results": lines }))
}

/// `GET /v1/documents/{id}`: the stored document (fingerprints, cluster, what it matched).
async fn document(State(s): State<Db>, id: Result<Path<String>, PathRejection>) -> Answer {
    let Path(id) = id.map_err(|e| ApiError::bad(format!("bad document id: {e}"), Some("id")))?;
    let shown = id.clone();
    let found = read_db(s, move |db| db.searcher().stored_document(&id)).await?;
    found_or_404(found, || format!("no stored document has the id `{shown}`"))
}

/// `GET /v1/clusters/{similar_id}?limit=N`: the cluster's current similar_id, size and
/// members (the first N, 1000 by default).
async fn cluster(
    State(s): State<Db>,
    id: Result<Path<u64>, PathRejection>,
    RawQuery(q): RawQuery,
) -> Answer {
    let id = cluster_id(id)?;
    let limit = limit(&q, DEFAULT_MEMBERS)?;
    let found = read_db(s, move |db| db.searcher().cluster_members(id, limit)).await?;
    found_or_404(found, || format!("no cluster has the similar_id {id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_openapi_document_lists_every_route_with_its_methods() {
        let doc: Value = serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
        let paths = doc["paths"].as_object().expect("paths");
        let mut documented: Vec<&str> = paths.keys().map(String::as_str).collect();
        let mut served: Vec<&str> = routes().into_iter().map(|(p, _)| p).collect();
        documented.sort_unstable();
        served.sort_unstable();
        assert_eq!(documented, served);
        for (path, ops) in paths {
            for (method, op) in ops.as_object().expect("operations") {
                assert!(
                    ["get", "post"].contains(&method.as_str()),
                    "{path}: {method}"
                );
                assert!(op["responses"].is_object(), "{path} {method}: responses");
            }
        }
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for v in ["Bearer abc", "bearer abc", "BEARER  abc ", "BeArEr\tabc"] {
            assert_eq!(bearer(v), Some("abc"), "{v}");
        }
        for v in ["Basic abc", "Bearerabc", "abc", ""] {
            assert_eq!(bearer(v), None, "{v}");
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abcdefgh", b"abcdefgh"));
        assert!(!same(b"abcdefgh", b"abcdefgx"));
        assert!(!same(b"abcdefgh", b"abcdefg"));
        assert!(!same(b"", b"a"));
    }
}
