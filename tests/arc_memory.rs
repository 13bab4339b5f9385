//! A huge ARC record is streamed past, not buffered: reading an ARC file (one gzip member per
//! record) whose records include a 200 MB video and a 200 MB page raises this process's peak
//! memory by far less than a record. Alone in its test binary so that no other test's
//! allocations count.

use std::io::Write;

mod common;
use common::read_all_measuring;

/// One gzip member holding one ARC v1 record of `head`, `body_len` zero bytes and `tail`.
fn member(url: &str, content_type: &str, head: &[u8], body_len: usize, tail: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let len = head.len() + body_len + tail.len();
    writeln!(gz, "{url} 192.0.2.1 20010915120000 {content_type} {len}").unwrap();
    gz.write_all(head).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut left = body_len;
    while left > 0 {
        let n = left.min(zeros.len());
        gz.write_all(&zeros[..n]).unwrap();
        left -= n;
    }
    gz.write_all(tail).unwrap();
    gz.write_all(b"\n").unwrap();
    gz.finish().unwrap()
}

#[test]
fn huge_arc_records_are_streamed_past() {
    const HUGE: usize = 200 << 20;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.arc.gz");
    let mut file = member(
        "filedesc://big.arc",
        "text/plain",
        b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n",
        0,
        b"",
    );
    file.extend(member(
        "http://a/video",
        "video/mp4",
        b"HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\n\r\n",
        HUGE,
        b"",
    ));
    file.extend(member(
        "http://a/huge-page",
        "text/html",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>",
        HUGE,
        b"</body></html>",
    ));
    file.extend(member(
        "http://a/page",
        "text/plain",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
        0,
        "一篇正常大小的文章。".as_bytes(),
    ));
    std::fs::write(&path, &file).unwrap();
    assert!(file.len() < 4 << 20);
    drop(file);
    let (recs, grew_mib) = read_all_measuring(path);
    // The file description and the video are not documents. The huge page is reported,
    // located.
    assert_eq!(recs.len(), 2, "{recs:?}");
    let err = recs[0].doc.as_ref().unwrap_err();
    assert!(err.contains("larger than"), "{err}");
    assert!(
        recs[0].location().ends_with("big.arc.gz#3"),
        "{}",
        recs[0].location()
    );
    assert_eq!(recs[1].doc.as_ref().unwrap().id, "http://a/page");
    assert_eq!(recs[1].doc.as_ref().unwrap().text, "一篇正常大小的文章。");
    assert!(grew_mib < 50, "peak memory grew by {grew_mib} MiB");
}
