//! Zstandard inputs beyond plain frames: a `.warc.zst` in the IIPC form (its dictionary in a
//! skippable frame at the start, made by the `zstd` tool: `scripts/make_dictionary_warc.sh`)
//! is read whole, from a file and from stdin; a frame that needs a window over 128 MiB is
//! named as such, not as damage.

use crate::common;

use common::{code, run, run_stdin, stderr};

fn fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dictionary.warc.zst")
}

#[test]
fn a_warc_zst_with_its_dictionary_in_a_skippable_frame_is_read_whole() {
    let d = tempfile::tempdir().unwrap();
    let f = fixture();
    let o = run(d.path(), &["--db", "f.db", "ingest", f.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("8 records: 8 added"), "{}", stderr(&o));
    let o = run_stdin(
        d.path(),
        &["--db", "s.db", "ingest", "-"],
        &std::fs::read(&f).unwrap(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        common::stored_ids(d.path(), "f.db"),
        common::stored_ids(d.path(), "s.db")
    );
    let ids = common::stored_ids(d.path(), "f.db");
    assert_eq!(ids.len(), 8, "{ids:?}");
}

#[test]
fn a_frame_with_a_window_over_128_mib_is_named_not_called_damaged() {
    let d = tempfile::tempdir().unwrap();
    let line = b"{\"id\":\"w1\",\"text\":\"a document in a frame written with a long window\"}\n";
    // A stream of unknown size keeps the window it was written with (2^28 bytes).
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    e.window_log(28).unwrap();
    e.long_distance_matching(true).unwrap();
    std::io::Write::write_all(&mut e, line).unwrap();
    let mut data = e.finish().unwrap();
    data.extend(
        zstd::encode_all(
            &b"{\"id\":\"w2\",\"text\":\"a document after it\"}\n"[..],
            3,
        )
        .unwrap(),
    );
    std::fs::write(d.path().join("long.jsonl.zst"), data).unwrap();
    let o = run(d.path(), &["--db", "l.db", "ingest", "long.jsonl.zst"]);
    let err = stderr(&o);
    assert!(err.contains("needs a window over 128 MiB"), "{err}");
    assert!(!err.contains("damaged zstd frame"), "{err}");
    assert_eq!(common::stored_ids(d.path(), "l.db"), ["w2"], "{err}");
}

/// Frames written without a checksum are read and counted (`unchecked_frames` in `--json`, a
/// line on stderr): damage inside them cannot be detected. Frames with one count nothing.
#[test]
fn frames_without_a_checksum_are_counted_and_named() {
    let d = tempfile::tempdir().unwrap();
    let frame = |id: &str, checksum: bool| {
        let line = format!("{{\"id\":\"{id}\",\"text\":\"a document of its own, number {id}\"}}\n");
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        e.include_checksum(checksum).unwrap();
        std::io::Write::write_all(&mut e, line.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    for (checksum, want) in [(false, 3), (true, 0)] {
        let data: Vec<u8> = ["a", "b", "c"]
            .iter()
            .flat_map(|id| frame(id, checksum))
            .collect();
        std::fs::write(d.path().join("f.jsonl.zst"), data).unwrap();
        let db = format!("s{checksum}.db");
        let o = run(d.path(), &["--db", &db, "ingest", "--json", "f.jsonl.zst"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
        assert_eq!(v["unchecked_frames"], want, "{v}");
        let o = run(
            d.path(),
            &["--db", &format!("t{checksum}.db"), "ingest", "f.jsonl.zst"],
        );
        let err = stderr(&o);
        assert_eq!(err.contains("carry no checksum"), want > 0, "{err}");
    }
}

/// A `.warc.zst` whose dictionary frame is cut, damaged, claims a size over the bound, or is
/// missing: a located error that names the dictionary, counted as damage, never a panic or a
/// silent "no records".
#[test]
fn a_damaged_or_missing_dictionary_is_named() {
    let d = tempfile::tempdir().unwrap();
    let whole = std::fs::read(fixture()).unwrap();
    let size = u32::from_le_bytes(whole[4..8].try_into().unwrap()) as usize;
    let mut flipped = whole.clone();
    for b in &mut flipped[20..40] {
        *b ^= 0x5a;
    }
    let mut too_big = whole.clone();
    too_big[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let cases: [(&str, Vec<u8>); 4] = [
        ("cut", whole[..100].to_vec()),
        ("flipped", flipped),
        ("too-big", too_big),
        ("missing", whole[8 + size..].to_vec()),
    ];
    for (name, bytes) in cases {
        let file = format!("{name}.warc.zst");
        std::fs::write(d.path().join(&file), bytes).unwrap();
        let o = run(d.path(), &["--db", &format!("{name}.db"), "ingest", &file]);
        let err = stderr(&o);
        assert!([2, 3].contains(&code(&o)), "{name}: {err}");
        assert!(
            err.contains(&format!("{file}#1")) && err.contains("dictionary"),
            "{name}: {err}"
        );
    }
}
