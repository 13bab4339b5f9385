//! Error answers of the HTTP API: `{"error": message, "field"?: where}` with a 4xx status for
//! the client's mistakes and 5xx for the server's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// An error answer: `{"error": ..., "field": ...}`.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    message: String,
    field: Option<String>,
}

impl ApiError {
    pub(super) fn bad(message: impl Into<String>, field: Option<&str>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            field: field.map(str::to_string),
        }
    }

    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            field: None,
        }
    }

    pub(super) fn store(e: fpdb::Error) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body {
            error: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            field: Option<String>,
        }
        let body = Body {
            error: self.message,
            field: self.field,
        };
        (self.status, Json(body)).into_response()
    }
}

/// A handler's answer.
pub(super) type Answer = Result<Response, ApiError>;

/// The answer to a request whose work panicked (that request only fails).
pub(super) fn internal_error() -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error while answering this request (the server log has the details)",
    )
}

pub(super) fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "request body larger than {limit} bytes (the server's --max-body-bytes); send fewer documents per request"
        ),
    )
}

/// `found` as JSON, or a 404 saying `missing`.
/// The most bytes one answer may hold: a larger one is refused (413) before it is built
/// whole, so that no request makes the server hold more than this for its answer.
pub(super) const MAX_ANSWER_BYTES: usize = 64 << 20;

// The longest id, in characters, an answer repeats in a query's matches, as in a member's
// links: a longer one is cut and ends with `…`. The member list of the match's cluster
// (`GET /v1/clusters/{similar_id}/members`) gives it whole.
use fpdb::report::MAX_LINK_ID_CHARS;

/// `v` as a JSON answer, at most [`MAX_ANSWER_BYTES`] (else 413, with what to ask instead).
pub(super) fn json<T: Serialize + ?Sized>(v: &T) -> Answer {
    let mut out = Capped(Vec::new());
    match serde_json::to_writer(&mut out, v) {
        Ok(()) => Ok((
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            out.0,
        )
            .into_response()),
        Err(e) if e.is_io() => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the answer would be over {MAX_ANSWER_BYTES} bytes: ask for fewer (a smaller \
                 `limit`, fewer documents per request)"
            ),
        )),
        Err(_) => Err(internal_error()),
    }
}

/// A buffer that refuses to grow past [`MAX_ANSWER_BYTES`].
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_ANSWER_BYTES {
            return Err(std::io::Error::other("answer too large"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `id` cut to [`MAX_LINK_ID_CHARS`] (its last character `…` when cut), as member lists cut
/// their links' ids.
pub(super) fn short_id(id: &mut String) {
    *id = fpdb::report::cut(std::mem::take(id), MAX_LINK_ID_CHARS);
}

/// `o` with its matches' ids cut ([`short_id`]).
pub(super) fn short_match_ids(o: &mut fpdb::Outcome) {
    for m in &mut o.matches {
        short_id(&mut m.id);
    }
}

pub(super) fn found_or_404<T: Serialize>(
    found: Option<T>,
    missing: impl FnOnce() -> String,
) -> Answer {
    match found {
        Some(v) => json(&v),
        None => Err(ApiError::new(StatusCode::NOT_FOUND, missing())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_over_the_bound_is_refused_before_it_is_built_whole() {
        let big = vec!["x".repeat(1024); MAX_ANSWER_BYTES / 1024 + 1];
        match json(&big) {
            Err(e) => assert_eq!(e.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", e.message),
            Ok(_) => panic!("an answer over {MAX_ANSWER_BYTES} bytes was built"),
        }
        assert!(json(&vec!["x"; 10]).is_ok());
    }

    #[test]
    fn long_ids_are_cut_to_the_bound_and_short_ones_kept() {
        let mut id = "标".repeat(300);
        short_id(&mut id);
        assert_eq!(id.chars().count(), MAX_LINK_ID_CHARS);
        assert!(id.ends_with('…'));
        let mut id = "a".repeat(MAX_LINK_ID_CHARS);
        short_id(&mut id);
        assert_eq!(id, "a".repeat(MAX_LINK_ID_CHARS));
    }
}
