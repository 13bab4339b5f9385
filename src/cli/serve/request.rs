//! Reading a request: its body within the server's limits, as a JSON object, and the
//! documents in it (read as JSONL lines are: `id`, `text` or `html`, `title`, `url`).

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::http::StatusCode;
use serde_json::{Map, Value};

use fpdb::Document;

use super::error::{too_large, ApiError};
use super::Shared;

/// The request body, read with the server's limits: more than `--max-body-bytes` is a 413,
/// and a body whose next part does not arrive within `--read-timeout` is a 408 (a client that
/// sends half a request and waits holds nothing for long).
pub(super) async fn read_body(s: &Shared, body: Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut got: Vec<u8> = Vec::new();
    loop {
        let frame = match tokio::time::timeout(s.read_timeout, body.frame()).await {
            Err(_) => {
                return Err(ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body stalled: nothing arrived for {} s (the server's --read-timeout)",
                        s.read_timeout.as_secs()
                    ),
                ))
            }
            Ok(None) => return Ok(Bytes::from(got)),
            Ok(Some(Err(e))) => {
                return Err(ApiError::bad(format!("cannot read the request body: {e}"), None))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if got.len() + data.len() > s.max_body_bytes {
                return Err(too_large(s.max_body_bytes));
            }
            got.extend_from_slice(&data);
        }
    }
}

/// The body as a JSON object.
pub(super) fn object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::bad("the body must be a JSON object", None)),
        Err(e) => Err(ApiError::bad(format!("malformed JSON: {e}"), None)),
    }
}

/// A document of a request, read as a JSONL line is; `at` names it in errors.
pub(super) fn parse_document(obj: &Map<String, Value>, at: &str) -> Result<Document, ApiError> {
    let mut doc =
        fpdb::reader::document_from_json(obj, &fpdb::reader::Fields::default(), String::new)
            .map_err(|e| {
                let field = (!at.is_empty()).then_some(at);
                let message = if at.is_empty() {
                    e
                } else {
                    format!("{at}: {e}")
                };
                ApiError::bad(message, field)
            })?;
    // A publication time outside the default window is not one (the ingest time counts).
    fpdb::reader::PublishedWindow::default().apply(&mut doc);
    Ok(doc)
}

/// `documents`: an array of objects, each read by [`parse_document`]; `default_id(i)` gives an id
/// to the ones without.
pub(super) fn documents(
    obj: &Map<String, Value>,
    default_id: Option<&dyn Fn(usize) -> String>,
    max_docs: usize,
) -> Result<Vec<Document>, ApiError> {
    let Some(Value::Array(items)) = obj.get("documents") else {
        return Err(ApiError::bad(
            "field `documents` must be an array of documents ({\"id\", \"text\" or \"html\", \"title\"?, \"url\"?})",
            Some("documents"),
        ));
    };
    if items.len() > max_docs {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "{} documents in one request, over the server's limit of {max_docs} \
                 (--max-request-docs); send fewer documents per request",
                items.len()
            ),
        ));
    }
    let mut docs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("documents[{i}]");
        let Value::Object(o) = item else {
            return Err(ApiError::bad(
                format!("{at}: a document must be a JSON object"),
                Some(&at),
            ));
        };
        let doc = match default_id {
            Some(id) if !o.contains_key("id") => {
                let mut o = o.clone();
                o.insert("id".into(), Value::String(id(i)));
                parse_document(&o, &at)?
            }
            _ => parse_document(o, &at)?,
        };
        docs.push(doc);
    }
    Ok(docs)
}

/// `name=value` pairs of a query string.
pub(super) fn params(q: &Option<String>) -> Vec<(String, String)> {
    // Percent-decoded, `+` as a space (`?limit=%31%30` is `limit=10`).
    form_urlencoded::parse(q.as_deref().unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

pub(super) fn flag(v: &Value, field: &str) -> Result<bool, ApiError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(ApiError::bad(
            format!("field `{field}` must be true or false"),
            Some(field),
        )),
    }
}

/// The `{similar_id}` of a route.
pub(super) fn cluster_id(id: Result<Path<u64>, PathRejection>) -> Result<u64, ApiError> {
    id.map(|Path(id)| id).map_err(|_| {
        ApiError::bad(
            "similar_id must be a cluster id (an unsigned integer)",
            Some("similar_id"),
        )
    })
}

/// The most members one answer lists (`?limit=`): a larger answer held the read lock for
/// as long as it took to write megabytes, and four at once slowed every write.
pub(super) const MAX_LIMIT: usize = 1000;

/// The `limit` query parameter, `default` without one; at most [`MAX_LIMIT`].
pub(super) fn limit(q: &Option<String>, default: usize) -> Result<usize, ApiError> {
    let mut limit = default;
    for (k, v) in params(q) {
        if k == "limit" {
            limit = v.parse().map_err(|_| {
                ApiError::bad(
                    format!("query parameter `limit` must be a number, not `{v}`"),
                    Some("limit"),
                )
            })?;
        }
    }
    if limit > MAX_LIMIT {
        return Err(ApiError::bad(
            format!("query parameter `limit` is at most {MAX_LIMIT}, not {limit}"),
            Some("limit"),
        ));
    }
    Ok(limit)
}
