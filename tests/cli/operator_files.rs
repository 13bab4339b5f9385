//! The paths and files an operator gives: a directory walk never reads the store inside it
//! (`fpdb ingest .`), `idf` never writes its table over its corpus, and the files of lines
//! (`--ids-from`, `--files-from`, `--idf`, `serve --token-file`) are read with a bound per
//! line, so `/dev/zero` is a clear, located error at once, not gigabytes read into memory.

use crate::common;

use common::{code, run, stderr, stdout};

fn corpus(dir: &std::path::Path, name: &str) {
    let lines: Vec<serde_json::Value> = (0..3)
        .map(|i| {
            serde_json::json!({
                "id": format!("d{i}"),
                "text": common::synthetic_doc(&mut common::Rng(100 + i), 6),
            })
        })
        .collect();
    common::write_jsonl(&dir.join(name), &lines);
}

#[test]
fn ingest_of_the_directory_holding_the_store_never_reads_the_store() {
    let d = tempfile::tempdir().unwrap();
    corpus(d.path(), "a.jsonl");
    for round in 0..2 {
        // The default store, ./fpdb.db, lies inside the walked directory.
        let o = run(d.path(), &["-q", "ingest", "."]);
        assert_eq!(code(&o), 0, "round {round}: {}", stderr(&o));
    }
    let ids = common::stored_ids(d.path(), "fpdb.db");
    assert_eq!(ids, ["d0", "d1", "d2"], "{ids:?}");
}

#[test]
fn idf_refuses_to_write_its_table_over_its_corpus() {
    let d = tempfile::tempdir().unwrap();
    corpus(d.path(), "c.jsonl");
    let before = std::fs::read(d.path().join("c.jsonl")).unwrap();
    std::os::unix::fs::symlink("c.jsonl", d.path().join("link.jsonl")).unwrap();
    for out in ["c.jsonl", "link.jsonl"] {
        let o = run(d.path(), &["idf", "c.jsonl", "-o", out]);
        assert_eq!(code(&o), 2, "{out}: {}", stderr(&o));
        assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
        assert_eq!(std::fs::read(d.path().join("c.jsonl")).unwrap(), before);
    }
    // A table written into the corpus's directory is not read as part of it.
    let o = run(d.path(), &["idf", ".", "-o", "table.txt"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn operator_files_of_lines_are_read_with_a_bound() {
    let d = tempfile::tempdir().unwrap();
    corpus(d.path(), "a.jsonl");
    let o = run(d.path(), &["-q", "ingest", "a.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cases: [&[&str]; 4] = [
        &["delete", "--ids-from", "/dev/zero"],
        &["--db", "other.db", "ingest", "--files-from", "/dev/zero"],
        &[
            "--db",
            "other.db",
            "ingest",
            "--idf",
            "/dev/zero",
            "a.jsonl",
        ],
        &[
            "serve",
            "--token-file",
            "/dev/zero",
            "--listen",
            "127.0.0.1:0",
        ],
    ];
    for args in cases {
        let start = std::time::Instant::now();
        let o = run(d.path(), args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("/dev/zero, line 1: over"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(start.elapsed().as_secs() < 30, "{args:?}");
    }
    assert!(!d.path().join("other.db").exists());
    // A list of ids with CRLF line ends deletes them.
    std::fs::write(d.path().join("ids"), "d0\r\nd1\r\n").unwrap();
    let o = run(d.path(), &["delete", "--ids-from", "ids", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        common::stored_ids(d.path(), "fpdb.db"),
        ["d2"],
        "{}",
        stdout(&o)
    );
}

#[test]
fn an_output_through_a_dangling_link_into_the_store_is_refused() {
    let d = tempfile::tempdir().unwrap();
    corpus(d.path(), "a.jsonl");
    let o = run(d.path(), &["-q", "--db", "s.db", "ingest", "a.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    std::os::unix::fs::symlink("s.db/newfile", d.path().join("dang.lnk")).unwrap();
    for args in [
        &["--db", "s.db", "export", "-o", "dang.lnk"][..],
        &["--db", "s.db", "report", "-o", "dang.lnk"][..],
    ] {
        let o = run(d.path(), args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("inside the store directory"),
            "{}",
            stderr(&o)
        );
        assert!(!d.path().join("s.db/newfile").exists(), "{args:?}");
    }
}
