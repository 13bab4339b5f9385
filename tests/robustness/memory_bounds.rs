//! What one document costs in memory, measured on the real binary: a long document without
//! line breaks is segmented a piece at a time (the review's `biglines.py` shapes), and a
//! Parquet row group whose text is over `--max-doc-bytes` a row is refused from its column
//! metadata, before it is decoded (the review's `pq.py` bomb). The peak is the child's own
//! (`VmHWM` read while it runs), not what it shared with this process before `exec`.

use crate::common;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// Run the binary with `args` in `dir`; its exit code, stderr and peak resident memory in MiB
/// (its `VmHWM`, read until it exits: the high-water mark of its own memory after `exec`).
fn run_measured(dir: &std::path::Path, args: &[&str]) -> (i32, String, u64) {
    let err = dir.join("stderr.txt");
    let mut child = common::fpdb()
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(&status_file) {
            let hwm = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok());
            peak_kib = peak_kib.max(hwm.unwrap_or(0));
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let stderr = std::fs::read_to_string(&err).unwrap();
    (status.code().unwrap_or(-1), stderr, peak_kib / 1024)
}

#[test]
fn one_document_costs_a_bounded_multiple_of_its_size() {
    let d = tempfile::tempdir().unwrap();
    // A Parquet file of 3 rows, one row group each, the middle one 64 MiB of 'a' (zstd: a few
    // KiB on disk).
    let big = "a".repeat(64 << 20);
    let ids: ArrayRef = Arc::new(StringArray::from(vec!["g0", "b1", "g2"]));
    let texts: ArrayRef = Arc::new(StringArray::from(vec![
        common::synthetic_doc(&mut common::Rng(1), 8),
        big,
        common::synthetic_doc(&mut common::Rng(2), 8),
    ]));
    let batch = RecordBatch::try_from_iter([("id", ids), ("text", texts)]).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(1))
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .build();
    let f = std::fs::File::create(d.path().join("bomb.parquet")).unwrap();
    let mut w = ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    drop(batch);
    let (rc, err, parquet_peak) =
        run_measured(d.path(), &["-q", "--db", "p.db", "ingest", "bomb.parquet"]);
    assert_eq!(rc, 3, "{err}");
    assert!(err.contains("not decoded"), "{err}");
    assert_eq!(common::stored_ids(d.path(), "p.db"), ["g0", "g2"]);
    assert!(parquet_peak < 200, "a 64 MiB row: {parquet_peak} MiB");
    // One document of 8 MiB of Chinese without a line break or a stop.
    let mut rng = common::Rng(3);
    let chars: Vec<char> =
        "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年"
            .chars()
            .collect();
    let text: String = (0..(8 << 20) / 3)
        .map(|_| chars[rng.index(chars.len())])
        .collect();
    let line = serde_json::json!({"id": "big", "text": text}).to_string();
    std::fs::write(d.path().join("big.jsonl"), line + "\n").unwrap();
    let (rc, err, peak) = run_measured(d.path(), &["-q", "--db", "b.db", "ingest", "big.jsonl"]);
    assert_eq!(rc, 0, "{err}");
    // The process itself (RocksDB, jieba's dictionary) is under 100 MiB; the document adds
    // at most 8 times its size.
    assert!(peak < 100 + 8 * 8, "an 8 MiB document: {peak} MiB");
    eprintln!("peaks: Parquet bomb {parquet_peak} MiB, 8 MiB document {peak} MiB");
}
