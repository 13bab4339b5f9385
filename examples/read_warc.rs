//! Reading crawl archives with the library's readers, without a store: every input format the
//! command line reads (WARC, ARC, JSONL, CSV, HTML, Parquet; plain, gzip or zstd) comes out as
//! one [`Record`] per document, or a located reason why a record is not one.
//!
//! ```text
//! cargo run --release --example read_warc -- crawl.warc.gz
//! ```
//! Without an argument it writes a small WARC of its own and reads that.

use std::path::PathBuf;

use fpdb::reader::{Inputs, ReadOptions, Record};

fn main() -> std::io::Result<()> {
    let path = match std::env::args().nth(1) {
        Some(p) => PathBuf::from(p),
        None => sample_warc()?,
    };
    for record in Inputs::new(&[path], ReadOptions::default()) {
        show(&record);
    }
    Ok(())
}

fn show(r: &Record) {
    match &r.doc {
        // A response's page: its URL is the id, its title and main text extracted.
        Ok(doc) => println!(
            "{}  {:?}  {} characters",
            doc.id,
            doc.title.as_deref().unwrap_or(""),
            doc.text.chars().count()
        ),
        Err(reason) => println!("skipped {}: {reason}", r.location()),
    }
}

/// A WARC of one HTML response, in the temp directory.
fn sample_warc() -> std::io::Result<PathBuf> {
    let html = "<html><head><title>政府督查工作条例</title></head><body><article>\
                <p>第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。</p>\
                </article></body></html>";
    let http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{html}",
        html.len()
    );
    let warc = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://example.org/law/1\r\n\
         WARC-Date: 2024-05-26T10:30:00Z\r\nContent-Type: application/http; msgtype=response\r\n\
         Content-Length: {}\r\n\r\n{http}\r\n\r\n",
        http.len()
    );
    let path = std::env::temp_dir().join("fpdb-example.warc");
    std::fs::write(&path, warc)?;
    Ok(path)
}
