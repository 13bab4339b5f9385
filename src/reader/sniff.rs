//! Format sniffing: what an input is, from its name and its first bytes (a leaf of the
//! readers: discovery, the WARC and ARC documents and whole-file text use it).

use std::path::Path;

use super::Format;

/// The UTF-8 byte order mark.
pub(super) const BOM: &[u8] = b"\xef\xbb\xbf";

pub(super) fn format_by_name(path: &Path) -> Format {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name
        .trim_end_matches(".gz")
        .trim_end_matches(".zst")
        .trim_end_matches(".zstd");
    let ext = name.rsplit('.').next().unwrap_or("");
    match ext {
        "jsonl" | "ndjson" | "json" => Format::Jsonl,
        "csv" => Format::Csv,
        "tsv" => Format::Tsv,
        "warc" | "wet" => Format::Warc,
        "arc" => Format::Arc,
        "html" | "htm" | "xhtml" | "shtml" => Format::Html,
        _ => Format::Auto,
    }
}

/// The containers whose first bytes name them: a WARC version line, an ARC file's
/// `filedesc://` record. They win over the file name.
pub(super) fn container_by_content(head: &[u8]) -> Option<Format> {
    let head = content_start(head);
    if head.starts_with(b"WARC/") {
        Some(Format::Warc)
    } else if head.starts_with(b"filedesc://") {
        Some(Format::Arc)
    } else {
        None
    }
}

/// `head` without a byte order mark and leading white space.
fn content_start(head: &[u8]) -> &[u8] {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let start = head
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(head.len());
    &head[start..]
}

pub(super) fn format_by_content(head: &[u8]) -> Format {
    let head = content_start(head);
    if let Some(f) = container_by_content(head) {
        return f;
    }
    if head.first() == Some(&b'{') {
        return Format::Jsonl;
    }
    let lower = String::from_utf8_lossy(&head[..head.len().min(1024)]).to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<html")
    {
        return Format::Html;
    }
    Format::Text
}

/// CSV or TSV by a header line: the first line, split at tabs or commas, names one of
/// `fields` (the text or HTML field). For inputs whose name does not say (stdin, a file
/// without an extension).
pub(super) fn delimited_by_header(head: &[u8], fields: &[&str]) -> Option<Format> {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    if matches!(head.trim_ascii_start().first(), Some(b'{' | b'<')) {
        // JSON or markup, whatever its first line holds.
        return None;
    }
    let end = head.iter().position(|&c| c == b'\n')?;
    let line = std::str::from_utf8(&head[..end])
        .ok()?
        .trim_end_matches('\r');
    let names = |sep: char| {
        line.split(sep)
            .map(|f| f.trim().trim_matches('"'))
            .any(|f| !f.is_empty() && fields.contains(&f))
    };
    if line.contains('\t') && names('\t') {
        Some(Format::Tsv)
    } else if line.contains(',') && names(',') {
        Some(Format::Csv)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_line_naming_the_text_field_is_csv_or_tsv() {
        let f = ["text", "html"];
        assert_eq!(
            delimited_by_header(b"id,text,url\n1,a,b\n", &f),
            Some(Format::Csv)
        );
        assert_eq!(
            delimited_by_header(b"\"id\",\"text\"\r\n", &f),
            Some(Format::Csv)
        );
        assert_eq!(
            delimited_by_header(b"id\thtml\n1\t<p>x\n", &f),
            Some(Format::Tsv)
        );
        assert_eq!(delimited_by_header(b"id,body\n", &f), None);
        assert_eq!(
            delimited_by_header(b"{\"id\":1,\"text\":\"a,b\"}\n", &f),
            None
        );
        // No whole line: not decided.
        assert_eq!(delimited_by_header(b"id,text", &f), None);
    }
}
