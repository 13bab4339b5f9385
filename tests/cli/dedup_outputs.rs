//! `dedup`'s outputs hold every record: the unique ones in `-o`, the near-duplicates in
//! `--duplicates-out`, and the records that were not read or not stored in `--rejects-out`,
//! each as it was read (a file's byte order mark stays on its first line), in both the
//! two-pass and the streaming mode.

use crate::common;

use common::{code, run, run_stdin, stderr};

/// The review's `ddin.py` shapes: valid records, a near-duplicate, and bad records of every
/// kind a line can be (malformed JSON, no text, a number as text, a blank id, an id with a
/// newline, a float id, an id over 8,192 bytes, invalid UTF-8, a raw NUL).
fn input() -> (Vec<u8>, Vec<Vec<u8>>) {
    let text = |seed| common::synthetic_doc(&mut common::Rng(seed), 8);
    let good = |id: &str, t: &str| {
        serde_json::json!({"id": id, "text": t})
            .to_string()
            .into_bytes()
    };
    let a = text(1);
    let mut lines: Vec<Vec<u8>> = vec![
        good("a", &a),
        good("b", &text(2)),
        good("a-copy", &a),
        b"{\"id\": \"m1\", \"text\": ".to_vec(),
        b"{\"id\": \"m2\"}".to_vec(),
        b"{\"id\": \"m3\", \"text\": 42}".to_vec(),
        b"{\"id\": \"  \", \"text\": \"blank id\"}".to_vec(),
        b"{\"id\": \"x\\ny\", \"text\": \"newline in the id\"}".to_vec(),
        b"{\"id\": 1.5, \"text\": \"a float id\"}".to_vec(),
        format!(
            "{{\"id\": \"{}\", \"text\": \"long id\"}}",
            "i".repeat(9000)
        )
        .into_bytes(),
        b"{\"id\": \"u\", \"text\": \"\xff\xfe not UTF-8\"}".to_vec(),
        b"{\"id\": \"n\", \"text\": \"a raw \x00 NUL\"}".to_vec(),
        good("c", &text(3)),
    ];
    let file = file_with_bom(&mut lines);
    (file, lines)
}

fn lines_of(path: &std::path::Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// A JSONL file of `lines` with a byte order mark before the first, which then stays with
/// that line (as `dedup` writes it back).
fn file_with_bom(lines: &mut [Vec<u8>]) -> Vec<u8> {
    let mut file = b"\xef\xbb\xbf".to_vec();
    for l in lines.iter() {
        file.extend_from_slice(l);
        file.push(b'\n');
    }
    lines[0].splice(0..0, b"\xef\xbb\xbf".iter().copied());
    file
}

/// One `dedup` run: its mode, the lines of `-o`, `--duplicates-out` and `--rejects-out`, and
/// its stderr.
type Run = (&'static str, [Vec<Vec<u8>>; 3], String);

/// `dedup` of `file` in each mode (two passes over a file, `--stream`, stdin), each of which
/// must exit 3 (records rejected).
fn dedup_in_every_mode(file: &[u8]) -> Vec<Run> {
    let mut runs = Vec::new();
    for mode in ["two passes", "stream", "stdin"] {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("in.jsonl"), file).unwrap();
        let mut args = vec!["--db", "s.db", "dedup", "-o", "u.jsonl"];
        args.extend(["--duplicates-out", "d.jsonl", "--rejects-out", "r.jsonl"]);
        let o = match mode {
            "stdin" => run_stdin(d.path(), &[&args[..], &["-"]].concat(), file),
            "stream" => run(d.path(), &[&args[..], &["--stream", "in.jsonl"]].concat()),
            _ => run(d.path(), &[&args[..], &["in.jsonl"]].concat()),
        };
        assert_eq!(code(&o), 3, "{mode}: {}", stderr(&o));
        let outputs = ["u.jsonl", "d.jsonl", "r.jsonl"].map(|f| lines_of(&d.path().join(f)));
        runs.push((mode, outputs, stderr(&o)));
    }
    runs
}

#[test]
fn every_record_is_in_one_output_as_read_with_the_files_byte_order_mark() {
    let (file, lines) = input();
    for (mode, [u, dup, r], err) in dedup_in_every_mode(&file) {
        assert_eq!(
            u,
            [lines[0].clone(), lines[1].clone(), lines[12].clone()],
            "{mode}: unique"
        );
        assert_eq!(dup, [lines[2].clone()], "{mode}: duplicates");
        assert_eq!(r, &lines[3..12], "{mode}: rejects");
        assert!(
            err.contains("9 not read or not stored written to --rejects-out"),
            "{err}"
        );
    }
}

/// JSONL pages (an HTML field, extracted on the fingerprinting threads) come out of `dedup` as
/// they were read, in every mode: the line of each unique page byte for byte (the file's byte
/// order mark on the first, JSON escapes kept as written), the repost under another id among
/// the duplicates, a page whose HTML field is no string among the rejects.
#[test]
fn pages_come_out_as_read_in_every_mode() {
    let page = |seed| {
        let body = common::synthetic_doc(&mut common::Rng(seed), 8).replace('。', "。\n");
        let paras: String = body.lines().map(|l| format!("<p>{l}</p>")).collect();
        format!("<html><head><title>t{seed}</title></head><body><article>{paras}</article></body></html>")
    };
    let line = |id: &str, html: &str| {
        // "\/" for "/", as some crawlers write it: the line is written as read, not as parsed.
        let html = serde_json::to_string(html).unwrap().replace('/', "\\/");
        format!("{{\"id\": \"{id}\", \"html\": {html}}}").into_bytes()
    };
    let a = page(11);
    let mut lines = vec![
        line("a", &a),
        line("b", &page(12)),
        line("a-repost", &a),
        b"{\"id\": \"bad\", \"html\": 5}".to_vec(),
        line("c", &page(13)),
    ];
    let file = file_with_bom(&mut lines);
    for (mode, [u, dup, r], _) in dedup_in_every_mode(&file) {
        assert_eq!(
            u,
            [lines[0].clone(), lines[1].clone(), lines[4].clone()],
            "{mode}: unique"
        );
        assert_eq!(dup, [lines[2].clone()], "{mode}: duplicates");
        assert_eq!(r, [lines[3].clone()], "{mode}: rejects");
    }
}
