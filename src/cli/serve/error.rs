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
pub(super) fn found_or_404<T: Serialize>(
    found: Option<T>,
    missing: impl FnOnce() -> String,
) -> Answer {
    match found {
        Some(v) => Ok(Json(v).into_response()),
        None => Err(ApiError::new(StatusCode::NOT_FOUND, missing())),
    }
}
