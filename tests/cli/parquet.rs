//! Parquet input: files written by the `parquet` crate (and by pyarrow when Python has it),
//! read back through the reader and the CLI: the same documents as the same rows in JSONL,
//! nested and dictionary-encoded columns, row numbers as ids, bad rows and damaged files
//! located.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{StringBuilder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int64Array, LargeStringArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field};
use fpdb::reader::{Fields, Format, Inputs, ReadOptions, Record};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

fn read(paths: &[PathBuf], fields: Fields) -> Vec<Record> {
    Inputs::new(
        paths,
        ReadOptions {
            format: Format::Auto,
            fields,
            ..Default::default()
        },
    )
    .collect()
}

/// A string column of `values`.
fn utf8<S: AsRef<str>>(values: impl IntoIterator<Item = S>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// Write `batch` as Parquet, `rows_per_group` rows per row group.
fn write_parquet(path: &Path, batch: &RecordBatch, rows_per_group: usize) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let f = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// The sample corpus as (id, title, text) rows.
fn sample_rows() -> Vec<(String, String, String)> {
    std::fs::read_to_string(common::sample())
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (s("id"), s("title"), s("text"))
        })
        .collect()
}

/// The sample corpus written as a directory of Parquet shards (several row groups each) and
/// ingested gives the store the JSONL gives: the same export and output, byte for byte.
#[test]
fn a_parquet_dump_ingests_like_the_same_rows_as_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let rows = sample_rows();
    let shards = dir.path().join("dump");
    std::fs::create_dir(&shards).unwrap();
    for (i, part) in rows.chunks(rows.len() / 2 + 1).enumerate() {
        let batch = RecordBatch::try_from_iter([
            ("id", utf8(part.iter().map(|r| &r.0))),
            ("title", utf8(part.iter().map(|r| &r.1))),
            (
                "text",
                Arc::new(LargeStringArray::from_iter_values(
                    part.iter().map(|r| r.2.as_str()),
                )) as ArrayRef,
            ),
        ])
        .unwrap();
        write_parquet(&shards.join(format!("part-{i}.parquet")), &batch, 7);
    }
    let a = common::run(
        dir.path(),
        &["ingest", "--db", "a", "-o", "a.jsonl", "dump"],
    );
    assert_eq!(common::code(&a), 0, "{}", common::stderr(&a));
    let b = common::run(
        dir.path(),
        &[
            "ingest",
            "--db",
            "b",
            "-o",
            "b.jsonl",
            common::sample().to_str().unwrap(),
        ],
    );
    assert_eq!(common::code(&b), 0, "{}", common::stderr(&b));
    let export = |db: &str| common::stdout(&common::run(dir.path(), &["export", "--db", db]));
    let (ea, eb) = (export("a"), export("b"));
    assert_eq!(ea.lines().count(), rows.len());
    assert_eq!(ea, eb, "Parquet and JSONL stores differ");
    let out = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
    assert_eq!(out("a.jsonl"), out("b.jsonl"));
}

/// Integer ids, struct columns addressed by dotted names, dictionary-encoded text, row numbers
/// as ids without an id column, a file recognized by its first bytes, null and empty texts
/// located as `file#row`.
#[test]
fn columns_of_every_string_kind_nested_fields_and_bad_rows() {
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        Some("第一行的正文内容，讲的是一件事情。"),
        None,
        Some("   "),
        Some("第四行的正文内容，讲的是另一件事情。"),
    ];
    let mut dict = StringDictionaryBuilder::<Int32Type>::new();
    for t in texts {
        match t {
            Some(t) => {
                dict.append_value(t);
            }
            None => dict.append_null(),
        }
    }
    let mut url = StringBuilder::new();
    for i in 0..4 {
        url.append_value(format!("http://p.cn/{i}"));
    }
    let meta = StructArray::from(vec![(
        Arc::new(Field::new("url", DataType::Utf8, true)),
        Arc::new(url.finish()) as ArrayRef,
    )]);
    let batch = RecordBatch::try_from_iter([
        (
            "doc_id",
            Arc::new(Int64Array::from(vec![10, 11, 12, 13])) as ArrayRef,
        ),
        ("body", Arc::new(dict.finish()) as ArrayRef),
        ("meta", Arc::new(meta) as ArrayRef),
    ])
    .unwrap();
    // No extension: Parquet by its first bytes.
    let p = dir.path().join("shard-00001");
    write_parquet(&p, &batch, 2);
    let fields = Fields {
        id: "doc_id".into(),
        text: "body".into(),
        url: "meta.url".into(),
        ..Default::default()
    };
    let recs = read(std::slice::from_ref(&p), fields.clone());
    assert_eq!(recs.len(), 4, "{recs:?}");
    let d0 = recs[0].doc.as_ref().unwrap();
    assert_eq!(
        (d0.id.as_str(), d0.url.as_deref()),
        ("10", Some("http://p.cn/0"))
    );
    assert_eq!(d0.text, texts[0].unwrap());
    let src = p.display().to_string();
    assert_eq!(recs[1].location(), format!("{src}#2"));
    assert!(
        recs[1]
            .doc
            .as_ref()
            .unwrap_err()
            .contains("missing text field `body`"),
        "{:?}",
        recs[1].doc
    );
    assert!(
        recs[2]
            .doc
            .as_ref()
            .unwrap_err()
            .contains("empty document `12`"),
        "{:?}",
        recs[2].doc
    );
    assert_eq!(recs[3].doc.as_ref().unwrap().id, "13");

    // Without an id column the rows are numbered.
    let numbered = read(
        std::slice::from_ref(&p),
        Fields {
            id: "id".into(),
            ..fields.clone()
        },
    );
    assert_eq!(numbered[3].doc.as_ref().unwrap().id, format!("{src}#4"));

    // A column that is not text is refused by name, for the whole file.
    let recs = read(
        std::slice::from_ref(&p),
        Fields {
            text: "doc_id".into(),
            ..fields.clone()
        },
    );
    assert_eq!(recs.len(), 1);
    assert!(
        recs[0]
            .doc
            .as_ref()
            .unwrap_err()
            .contains("column `doc_id` is Int64, not a string column"),
        "{:?}",
        recs[0].doc
    );
}

/// Garbage after the magic number, a file cut in half: located errors, exit 3, and the good
/// input next to them is stored.
#[test]
fn damaged_parquet_files_are_located_and_the_rest_ingested() {
    let dir = tempfile::tempdir().unwrap();
    let rows = sample_rows();
    let batch = RecordBatch::try_from_iter([
        ("id", utf8(rows.iter().map(|r| &r.0))),
        ("text", utf8(rows.iter().map(|r| &r.2))),
    ])
    .unwrap();
    let good = dir.path().join("good.parquet");
    write_parquet(&good, &batch, 10);
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(dir.path().join("cut.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    let mut garbage = b"PAR1".to_vec();
    garbage.extend((0..5000u32).map(|i| ((i * 2654435761u32) >> 24) as u8));
    std::fs::write(dir.path().join("garbage.parquet"), &garbage).unwrap();
    let o = common::run(
        dir.path(),
        &[
            "ingest",
            "--db",
            "db",
            "cut.parquet",
            "garbage.parquet",
            "good.parquet",
        ],
    );
    assert_eq!(common::code(&o), 3, "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(
        err.contains("cut.parquet#0: not a readable Parquet file"),
        "{err}"
    );
    assert!(
        err.contains("garbage.parquet#0: not a readable Parquet file"),
        "{err}"
    );
    let stats = common::stdout(&common::run(dir.path(), &["stats", "--db", "db", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(v["documents"], rows.len(), "{stats}");
}

/// The `--json` summary of ingesting `file` into a new store in `dir`.
fn ingest_json(dir: &Path, db: &str, file: &str) -> serde_json::Value {
    let o = common::run(dir, &["ingest", "--db", db, file, "--json"]);
    serde_json::from_str(common::stdout(&o).trim()).unwrap()
}

/// Pages with a CRC are verified: one altered byte in the text of `tests/fixtures/crc.parquet`
/// (pyarrow's `write_page_checksum`, `scripts/make_crc_parquet.py`) costs its row group,
/// counted as lost, and no altered text is stored. Pages without one (every page arrow-rs
/// writes) are read as decoded and counted in `unchecked_pages`, and the summary says so.
#[test]
fn parquet_page_crcs_are_verified_and_pages_without_one_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crc.parquet");
    let bytes = std::fs::read(&fixture).unwrap();
    std::fs::write(dir.path().join("crc.parquet"), &bytes).unwrap();
    let v = ingest_json(dir.path(), "a", "crc.parquet");
    assert_eq!(
        (&v["added"], &v["unchecked_pages"], &v["lost_to_damage"]),
        (&3.into(), &0.into(), &0.into()),
        "{v}"
    );

    let mut bad = bytes.clone();
    let at = bad
        .windows(7)
        .position(|w| w == b"library")
        .expect("the fixture's text is stored plain");
    bad[at] ^= 0x20;
    std::fs::write(dir.path().join("bad.parquet"), &bad).unwrap();
    let o = common::run(dir.path(), &["ingest", "--db", "b", "bad.parquet"]);
    let err = common::stderr(&o);
    assert!(
        err.contains("bad.parquet#1: corrupt Parquet data") && err.contains("CRC"),
        "{err}"
    );
    assert!(err.contains("3 lost to damaged input"), "{err}");
    assert!(!dir.path().join("b").exists(), "nothing was stored: {err}");

    let rows = sample_rows();
    let batch = RecordBatch::try_from_iter([
        ("id", utf8(rows.iter().map(|r| &r.0))),
        ("text", utf8(rows.iter().map(|r| &r.2))),
    ])
    .unwrap();
    write_parquet(&dir.path().join("plain.parquet"), &batch, 10);
    let groups = rows.len().div_ceil(10);
    let v = ingest_json(dir.path(), "c", "plain.parquet");
    // Each row group has at least one page of each of the two columns read.
    let pages = v["unchecked_pages"].as_u64().unwrap();
    assert!(pages >= 2 * groups as u64, "{v}");
    let o = common::run(dir.path(), &["ingest", "--db", "d", "plain.parquet"]);
    assert!(
        common::stderr(&o).contains(&format!("{pages} Parquet pages carry no CRC")),
        "{}",
        common::stderr(&o)
    );
}

/// A Parquet file written by pyarrow (another writer: dictionary encoding, large strings,
/// snappy), when Python with pyarrow is there (`FPDB_TEST_PYTHON`, or `python3`).
#[test]
fn parquet_written_by_pyarrow() {
    let python = std::env::var("FPDB_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has = std::process::Command::new(&python)
        .args(["-c", "import pyarrow"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        eprintln!("SKIPPED parquet_written_by_pyarrow: {python} has no pyarrow (scripts/test.sh installs it when it can)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import pyarrow as pa, pyarrow.parquet as pq, sys
t = pa.table({
    "id": pa.array(["a", "b", "c"]),
    "content": pa.array([{"body": "第一篇文章的正文。"}, {"body": "第二篇文章的正文。"}, None]),
    "lang": pa.array(["zh", "zh", "zh"]).dictionary_encode(),
    "big": pa.array(["大字段一", "大字段二", "大字段三"], type=pa.large_string()),
})
pq.write_table(t, sys.argv[1], compression="snappy", row_group_size=2)
"#;
    let path = dir.path().join("py.parquet");
    let o = std::process::Command::new(&python)
        .args(["-c", script, path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = read(
        std::slice::from_ref(&path),
        Fields {
            text: "content.body".into(),
            title: "big".into(),
            url: "lang".into(),
            ..Default::default()
        },
    );
    assert_eq!(recs.len(), 3, "{recs:?}");
    let d = recs[1].doc.as_ref().unwrap();
    assert_eq!(
        (d.id.as_str(), d.text.as_str()),
        ("b", "第二篇文章的正文。")
    );
    assert_eq!(d.title.as_deref(), Some("大字段二"));
    assert_eq!(d.url.as_deref(), Some("zh"));
    assert!(recs[2]
        .doc
        .as_ref()
        .unwrap_err()
        .contains("missing text field"));
}

/// Damaged Parquet files never take the reader down: flipped bytes anywhere in a valid file
/// (footer, page headers, data) give located errors or rows, never a panic.
#[test]
fn flipped_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let rows = sample_rows();
    let batch = RecordBatch::try_from_iter([
        ("id", utf8(rows.iter().take(20).map(|r| &r.0))),
        (
            "text",
            utf8(
                rows.iter()
                    .take(20)
                    .map(|r| r.2.chars().take(100).collect::<String>()),
            ),
        ),
    ])
    .unwrap();
    let good = dir.path().join("good.parquet");
    write_parquet(&good, &batch, 5);
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("bad.parquet");
    let mut rng = common::Rng(0x5eed_1234_5678_9abc);
    let mut caught = 0;
    for case in 0..2000 {
        let mut b = bytes.clone();
        for _ in 0..1 + case % 4 {
            // Half the flips land in the last 512 bytes (footer and metadata).
            let n = b.len();
            let i = if rng.next().is_multiple_of(2) {
                n - 1 - (rng.next() as usize % 512.min(n))
            } else {
                rng.next() as usize % n
            };
            b[i] ^= 1 << (rng.next() % 8);
        }
        std::fs::write(&bad, &b).unwrap();
        let recs = read(std::slice::from_ref(&bad), Fields::default());
        // At most the 20 rows and one error: a damaged chunk ends the file. (A flip in the
        // magic number at the start makes it a binary file, also located.)
        assert!(recs.len() <= 21, "case {case}: {} records", recs.len());
        for r in recs.iter().filter(|r| r.doc.is_err()) {
            assert!(r.location().contains("bad.parquet"), "case {case}: {r:?}");
            caught += usize::from(
                r.doc
                    .as_ref()
                    .is_err_and(|e| e.contains("the Parquet reader failed")),
            );
        }
    }
    // Some damaged files make the parquet crate panic (an assertion on column offsets): those
    // are among the cases, caught and located.
    assert!(caught > 0, "no case reached a panic of the parquet crate");
    eprintln!("{caught} of 2000 damaged files made the parquet crate panic (caught, located)");
}

/// A row group of small rows and one over `--max-doc-bytes` passes the column sizes' average
/// (8 MB over 60 rows), but the page that holds the big value says so in its header: the
/// group is skipped before it is decoded, named, and the next group is read.
#[test]
fn a_page_over_the_bound_a_value_skips_its_row_group_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let small = |i: usize| format!("row {i} {}", "短文本。".repeat(24));
    let mut texts: Vec<String> = (0..60).map(small).collect();
    texts[30] = "大".repeat(8_000_000 / 3);
    let ids: Vec<String> = (0..60).map(|i| format!("r{i}")).collect();
    let more: Vec<String> = (60..70).map(small).collect();
    let more_ids: Vec<String> = (60..70).map(|i| format!("r{i}")).collect();
    let batch = |ids: &[String], texts: &[String]| {
        RecordBatch::try_from_iter([("id", utf8(ids)), ("text", utf8(texts))]).unwrap()
    };
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(60))
        .set_data_page_size_limit(1024)
        .set_write_batch_size(1)
        .set_dictionary_enabled(false)
        .build();
    let path = dir.path().join("wide.parquet");
    let first = batch(&ids, &texts);
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        first.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&first).unwrap();
    w.write(&batch(&more_ids, &more)).unwrap();
    w.close().unwrap();
    let o = common::run(
        dir.path(),
        &[
            "ingest",
            "--db",
            "db",
            "wide.parquet",
            "--max-doc-bytes",
            "1000000",
            "--json",
        ],
    );
    let err = common::stderr(&o);
    assert!(
        err.contains("wide.parquet#1: row group 0: a page of")
            && err.contains("(--max-doc-bytes) a value"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(common::stdout(&o).trim()).unwrap();
    assert_eq!(v["added"], 10, "{v}");
}

/// A `publisher` column is read when it is text and passed over when it is not (the field
/// came after data were written: a number there is no error of the file); `--publisher-field`
/// names another column, and a CSV's is read as any other.
#[test]
fn a_publisher_column_is_read_as_text_and_passed_over_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let text = utf8(["第一篇正文。", "第二篇正文。"]);
    let named = dir.path().join("named.parquet");
    let batch = RecordBatch::try_from_iter([
        ("text", text.clone()),
        ("publisher", utf8(["账号A", "账号B"])),
        (
            "account",
            Arc::new(Int64Array::from(vec![7, 8])) as ArrayRef,
        ),
    ])
    .unwrap();
    write_parquet(&named, &batch, 2);
    let publishers = |fields: Fields| -> Vec<Option<String>> {
        read(std::slice::from_ref(&named), fields)
            .into_iter()
            .map(|r| r.doc.expect("read").publisher)
            .collect()
    };
    assert_eq!(
        publishers(Fields::default()),
        [Some("账号A".to_string()), Some("账号B".to_string())]
    );
    let numbers = Fields {
        publisher: "account".into(),
        ..Default::default()
    };
    assert_eq!(publishers(numbers), [None, None]);
    let csv = dir.path().join("pages.csv");
    std::fs::write(
        &csv,
        "id,text,publisher\na,第一篇正文。,账号C\nb,第二篇正文。,\n",
    )
    .unwrap();
    let recs = read(&[csv], Fields::default());
    let got: Vec<Option<String>> = recs.into_iter().map(|r| r.doc.unwrap().publisher).collect();
    assert_eq!(got, [Some("账号C".to_string()), None]);
}

/// A `date` column (`--time-field`) dates the rows, as it does a JSONL line or a CSV row.
#[test]
fn a_time_column_dates_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dated.parquet");
    let batch = RecordBatch::try_from_iter([
        ("text", utf8(["第一篇正文。", "第二篇正文。"])),
        ("date", utf8(["2024-05-26", "2001-02-03T04:05:06Z"])),
    ])
    .unwrap();
    write_parquet(&p, &batch, 2);
    let got: Vec<Option<i64>> = read(&[p], Fields::default())
        .into_iter()
        .map(|r| r.doc.expect("read").published)
        .collect();
    assert_eq!(got, [Some(1_716_681_600), Some(981_173_106)]);
}
