//! Bytes -> text for pages of unknown encoding. Order of evidence: byte-order mark, the charset
//! declared by the transport (HTTP / WARC Content-Type), `<meta charset>` in the first 2 KiB,
//! valid UTF-8, then statistical detection (chardetng). Decoding never fails: undecodable bytes
//! become U+FFFD.

use encoding_rs::Encoding;

/// Whether `bytes` look binary (a NUL byte in the first 8 KiB, without a UTF-16 BOM).
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    Encoding::for_bom(head).is_none() && head.contains(&0)
}

/// The charset named in a Content-Type value (`text/html; charset=GBK`).
pub fn charset_of_content_type(ct: &str) -> Option<&'static Encoding> {
    let lower = ct.to_ascii_lowercase();
    let at = lower.find("charset=")?;
    let v = lower[at + 8..].trim_start_matches(['"', '\'']);
    let end = v
        .find(|c: char| c == ';' || c == '"' || c == '\'' || c.is_whitespace())
        .unwrap_or(v.len());
    Encoding::for_label(&v.as_bytes()[..end])
}

/// The charset of a `<meta charset=…>` or `<meta http-equiv content="…charset=…">` near the top.
pub fn charset_of_meta(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(at) = rest.find("<meta") {
        rest = &rest[at + 5..];
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        if let Some(c) = tag.find("charset=") {
            let v = tag[c + 8..].trim_start_matches(['"', '\'']);
            let end = v
                .find(|c: char| c == '"' || c == '\'' || c == ';' || c == '/' || c.is_whitespace())
                .unwrap_or(v.len());
            if let Some(e) = Encoding::for_label(&v.as_bytes()[..end]) {
                return Some(e);
            }
        }
    }
    None
}

/// Decode `bytes`: see the module docs for the order. Returns the text and the encoding used.
pub fn decode(
    bytes: &[u8],
    declared: Option<&'static Encoding>,
    html: bool,
) -> (String, &'static Encoding) {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return (text.into_owned(), enc);
    }
    // A declared UTF-16 is usually wrong without a BOM (the bytes were converted on the way).
    let declared = declared.filter(|e| *e != encoding_rs::UTF_16LE && *e != encoding_rs::UTF_16BE);
    let sniffed = if html { charset_of_meta(bytes) } else { None };
    let enc = match declared.or(sniffed) {
        Some(e) => e,
        None if std::str::from_utf8(bytes).is_ok() => encoding_rs::UTF_8,
        None => {
            let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
            det.feed(bytes, true);
            det.guess(None, chardetng::Utf8Detection::Allow)
        }
    };
    let (text, _) = enc.decode_without_bom_handling(bytes);
    (text.into_owned(), enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbk_is_detected_declared_or_not() {
        let text = "中华人民共和国宪法是国家的根本法，具有最高的法律效力。全国各族人民都必须以宪法为根本的活动准则。";
        let (gbk, _, _) = encoding_rs::GBK.encode(text);
        assert_eq!(decode(&gbk, None, false).0, text, "detected");
        assert_eq!(
            decode(
                &gbk,
                charset_of_content_type("text/html; charset=gb2312"),
                true
            )
            .0,
            text
        );
        let mut page = b"<html><head><meta charset=\"gbk\"></head><body>".to_vec();
        page.extend_from_slice(&gbk);
        assert!(decode(&page, None, true).0.contains(text));
    }

    #[test]
    fn big5_and_utf8_bom_and_garbage() {
        let text = "中華民國憲法，由國民大會制定，公布施行，永矢咸遵。";
        let (big5, _, _) = encoding_rs::BIG5.encode(text);
        assert_eq!(
            decode(
                &big5,
                charset_of_content_type("text/plain; charset=big5"),
                false
            )
            .0,
            text
        );
        let mut bom = vec![0xef, 0xbb, 0xbf];
        bom.extend_from_slice("你好".as_bytes());
        assert_eq!(
            decode(&bom, encoding_rs::GBK.into(), false).0,
            "你好",
            "BOM wins"
        );
        let garbage: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let _ = decode(&garbage, None, true); // never panics
        assert!(looks_binary(&garbage));
        assert!(!looks_binary("纯文本".as_bytes()));
    }
}
