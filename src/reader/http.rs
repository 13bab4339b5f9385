//! HTTP payloads inside WARC `response` records: status line and headers, chunked transfer
//! coding, content encodings, and which content types can be text.

use std::borrow::Cow;
use std::io::Read;

/// An HTTP payload: its Content-Type and its body (borrowed when nothing had to be undone).
pub(super) type Payload<'a> = (String, Cow<'a, [u8]>);

/// An HTTP response's Content-Type and payload, with `Transfer-Encoding: chunked` and
/// `Content-Encoding: gzip` / `deflate` undone (the payload is decompressed up to `max` bytes).
/// Archives differ in whether they store payloads decoded while keeping the headers, so a
/// payload that does not parse as chunks or compressed data is taken as it is. `Err` for an
/// encoding that cannot be undone (`br`, `zstd`, ...) or a payload over `max` once expanded.
pub(super) fn split_http(body: &[u8], max: usize) -> Option<Result<Payload<'_>, String>> {
    let (
        HttpHead {
            ct,
            chunked,
            encoding,
        },
        start,
    ) = http_head(body)?;
    let mut payload = Cow::Borrowed(&body[start..]);
    if chunked {
        if let Some(p) = dechunk(&payload) {
            payload = Cow::Owned(p);
        }
    }
    match encoding.as_str() {
        "" | "identity" => {}
        "gzip" | "x-gzip" | "deflate" => {
            let gzip = payload.starts_with(&[0x1f, 0x8b]);
            let mut out = Vec::new();
            let read = if gzip {
                flate2::read::MultiGzDecoder::new(&payload[..])
                    .take(max as u64 + 1)
                    .read_to_end(&mut out)
            } else if encoding == "deflate" {
                // "deflate" is zlib-wrapped by the standard, raw in some servers.
                let zlib = flate2::read::ZlibDecoder::new(&payload[..])
                    .take(max as u64 + 1)
                    .read_to_end(&mut out);
                if zlib.is_err() {
                    out.clear();
                    flate2::read::DeflateDecoder::new(&payload[..])
                        .take(max as u64 + 1)
                        .read_to_end(&mut out)
                } else {
                    zlib
                }
            } else {
                Err(std::io::ErrorKind::InvalidData.into()) // stored decoded already
            };
            match read {
                Ok(_) if out.len() > max => {
                    return Some(Err(format!(
                        "{encoding} payload larger than {max} bytes once decompressed"
                    )))
                }
                Ok(_) => payload = Cow::Owned(out),
                Err(_) if gzip => return Some(Err(format!("corrupt {encoding} payload"))),
                Err(_) => {}
            }
        }
        other => return Some(Err(format!("unsupported Content-Encoding `{other}`"))),
    }
    Some(Ok((ct, payload)))
}

/// Whether a payload of this (lower-case) Content-Type can be a document: HTML, `text/*`, or
/// undeclared.
pub(super) fn may_be_text(ct: &str) -> bool {
    ct.is_empty() || ct.contains("html") || ct.starts_with("text/")
}

/// The headers of an HTTP response that decide how its payload is read.
pub(super) struct HttpHead {
    /// Content-Type.
    pub(super) ct: String,
    /// Transfer-Encoding: chunked.
    pub(super) chunked: bool,
    /// Content-Encoding, lower case.
    pub(super) encoding: String,
}

/// Parse the head of an HTTP response: its headers and where the payload starts.
pub(super) fn http_head(body: &[u8]) -> Option<(HttpHead, usize)> {
    let end = body.windows(4).position(|w| w == b"\r\n\r\n")?;
    let mut h = HttpHead {
        ct: String::new(),
        chunked: false,
        encoding: String::new(),
    };
    for l in String::from_utf8_lossy(&body[..end]).lines().skip(1) {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim(), v.trim());
            if k.eq_ignore_ascii_case("content-type") {
                h.ct = v.to_string();
            } else if k.eq_ignore_ascii_case("transfer-encoding") {
                h.chunked = v.to_ascii_lowercase().contains("chunked");
            } else if k.eq_ignore_ascii_case("content-encoding") {
                h.encoding = v.to_ascii_lowercase();
            }
        }
    }
    Some((h, end + 4))
}

/// The body of a `Transfer-Encoding: chunked` payload, or `None` when it is not one.
pub(super) fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let eol = data.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&data[..eol]).ok()?;
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        data = &data[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size..)?;
        data = data.strip_prefix(b"\r\n").unwrap_or(data);
    }
}
