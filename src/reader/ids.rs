//! What an id may be, whichever reader (or the HTTP API) read it.

/// The longest id accepted, in bytes: a long URL fits (browsers and servers stop near 8 KB);
/// longer ids would be stored with every posting's document and repeated in every answer that
/// names them.
pub const MAX_ID_BYTES: usize = 8192;

/// Ids are single-line names: not empty or blank, no control characters (a newline in an id
/// would forge lines in text outputs), at most [`MAX_ID_BYTES`] bytes. Every reader applies it,
/// and so does the HTTP API.
pub fn check_id(id: &str, field: &str) -> Result<(), String> {
    if id.trim().is_empty() {
        return Err(format!("empty id field `{field}`"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(format!(
            "id field `{field}` is {} bytes long, over the limit of {MAX_ID_BYTES}",
            id.len()
        ));
    }
    if let Some(c) = id.chars().find(|c| c.is_control()) {
        return Err(format!(
            "id field `{field}` holds a control character ({:?})",
            c
        ));
    }
    Ok(())
}
