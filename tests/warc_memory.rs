//! A huge WARC record is streamed past, not buffered: reading a WARC whose first record is a
//! 200 MB video (gzip-compressed, so the file is small) raises this process's peak memory by
//! far less than the record. Alone in its test binary so that no other test's allocations
//! count.

use std::io::Write;

mod common;
use common::read_all_measuring;

fn record(kind: &str, uri: &str, head: &[u8], body_len: usize, tail: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
        head.len() + body_len + tail.len()
    )
    .into_bytes();
    r.extend_from_slice(head);
    r.resize(r.len() + body_len, 0);
    r.extend_from_slice(tail);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

#[test]
fn huge_records_are_streamed_past() {
    const HUGE: usize = 200 << 20;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.warc.gz");
    {
        let f = std::fs::File::create(&path).unwrap();
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        gz.write_all(&record(
            "response",
            "http://a/video",
            b"HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\n\r\n",
            HUGE,
            b"",
        ))
        .unwrap();
        gz.write_all(&record(
            "response",
            "http://a/huge-page",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>",
            HUGE,
            b"</body></html>",
        ))
        .unwrap();
        gz.write_all(&record(
            "response",
            "http://a/page",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
            0,
            "一篇正常大小的文章。".as_bytes(),
        ))
        .unwrap();
        gz.finish().unwrap();
    }
    assert!(std::fs::metadata(&path).unwrap().len() < 4 << 20);
    let (recs, grew_mib) = read_all_measuring(path);
    // The video is not a document: skipped silently. The huge page is reported, located.
    assert_eq!(recs.len(), 2, "{recs:?}");
    let err = recs[0].doc.as_ref().unwrap_err();
    assert!(err.contains("larger than"), "{err}");
    assert!(
        recs[0].location().ends_with("big.warc.gz#2"),
        "{}",
        recs[0].location()
    );
    assert_eq!(recs[1].doc.as_ref().unwrap().id, "http://a/page");
    assert!(grew_mib < 50, "peak memory grew by {grew_mib} MiB");
}
