//! A new user's path on the real binary: `fpdb dedup` writes the unique records as read (against
//! the store and the records before them, across runs, through a later merge, stdin to stdout,
//! CSV rows with their header, other formats as JSONL of their fields), and the usual mistakes
//! are errors instead of partial successes (a missing input file, a wrong text field name, a
//! CSV without its header line).

use crate::common;

use common::{code, run, run_stdin, stderr, stdout};

/// Distinct sentences, long enough to count, without figures.
const S: [&str; 9] = [
    "The harbour master counted every fishing boat before the storm arrived.",
    "Children from the village school painted murals along the old sea wall.",
    "A travelling circus set up its striped tents beside the railway station.",
    "The bakery on the corner sold out of rye bread before the morning rush.",
    "Volunteers planted oak saplings on the hillside above the quiet reservoir.",
    "An orchestra rehearsed a forgotten symphony in the drafty concert hall.",
    "Beekeepers gathered at the market to trade advice about the cold spring.",
    "The ferry schedule changed after engineers inspected the rusty landing pier.",
    "Librarians catalogued a donated collection of maps from distant islands.",
];

fn text(idx: &[usize]) -> String {
    idx.iter().map(|&i| S[i]).collect::<Vec<_>>().join("\n")
}

fn line(id: &str, idx: &[usize], extra: &str) -> String {
    // Keys in an unusual order, spacing and an extra field: all must come out unchanged.
    format!(
        "{{\"text\" : {},  \"id\":\"{id}\"{extra}}}\n",
        serde_json::to_string(&text(idx)).unwrap()
    )
}

#[test]
fn dedup_writes_the_unique_records_as_read_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = line(
        "a",
        &[0, 1, 2, 3, 4],
        r#", "meta": {"lang": "en", "n": [1, 2.50]}"#,
    );
    let b = line("b", &[5, 6, 7, 8], "");
    // A copy of a with one sentence dropped; a copy of b with a changed last sentence.
    let a_copy = line("a-copy", &[0, 1, 2, 3], r#", "src": "repost""#);
    let c = line("c", &[8, 7, 6, 5], "");
    let day1 = format!("{a}{b}{a_copy}");
    std::fs::write(dir.path().join("day1.jsonl"), &day1).unwrap();
    let o = run(
        dir.path(),
        &[
            "dedup",
            "day1.jsonl",
            "-o",
            "unique1.jsonl",
            "--duplicates-out",
            "dups1.jsonl",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let unique1 = std::fs::read_to_string(dir.path().join("unique1.jsonl")).unwrap();
    assert_eq!(unique1, format!("{a}{b}"));
    let dups1 = std::fs::read_to_string(dir.path().join("dups1.jsonl")).unwrap();
    assert_eq!(dups1, a_copy);
    let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(sum["dedup"]["unique"], 2);
    assert_eq!(sum["dedup"]["duplicates"], 1);
    // The next day: c (b reordered: the same sentences) is a duplicate of the stored b, d is
    // new, and a re-sent `a` is already stored.
    let d = line("d", &[2, 5, 8], "");
    std::fs::write(dir.path().join("day2.jsonl"), format!("{c}{d}{a}")).unwrap();
    let o = run(dir.path(), &["dedup", "day2.jsonl"]);
    assert_eq!(
        code(&o),
        0,
        "a re-sent record is already stored: {}",
        stderr(&o)
    );
    assert_eq!(stdout(&o), d);
    assert!(
        stderr(&o).contains("1 unique records written, 2 near-duplicates or already stored"),
        "{}",
        stderr(&o)
    );
    // The store holds what `ingest` would: 5 documents in 3 clusters.
    let stats: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    assert_eq!(stats["documents"], 5, "{stats}");
}

#[test]
fn a_later_merge_keeps_both_earlier_records_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    // x and y share 2 of 5 sentences (not near-duplicates); m shares 4 of its 6 with each and
    // joins their clusters.
    let x = line("x", &[0, 1, 2, 3, 4], "");
    let y = line("y", &[3, 4, 5, 6, 7], "");
    let m = line("m", &[1, 2, 3, 4, 5, 6], "");
    let o = run_stdin(
        dir.path(),
        &["dedup", "-", "-o", "u.jsonl", "--json"],
        format!("{x}{y}{m}").as_bytes(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = std::fs::read_to_string(dir.path().join("u.jsonl")).unwrap();
    assert_eq!(out, format!("{x}{y}"));
    let sum: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(sum["merges"], 1, "{sum}");
    assert_eq!(sum["dedup"]["kept_later_merged"], 1, "{sum}");
    assert_eq!(sum["dedup"]["unique"], 2);
    // One cluster now holds all three.
    let clusters = stdout(&run(dir.path(), &["clusters", "--min-size", "3"]));
    assert!(
        clusters.contains('x') && clusters.contains('y') && clusters.contains('m'),
        "{clusters}"
    );
}

#[test]
fn dedup_passes_csv_rows_through_with_their_header_and_other_formats_as_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let quoted = text(&[0, 1, 2]);
    let csv = format!(
        "id,text,src\r\nr1,\"{quoted}\",web\r\nr2,\"{}\",rss\r\nr3,\"{quoted}\",copy\r\n",
        text(&[5, 6, 7])
    );
    std::fs::write(dir.path().join("in.csv"), &csv).unwrap();
    let o = run(
        dir.path(),
        &[
            "dedup",
            "in.csv",
            "-o",
            "u.csv",
            "--duplicates-out",
            "d.csv",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let header = "id,text,src\r\n";
    let rows: Vec<&str> = csv[header.len()..].split_inclusive("\r\n").collect();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("u.csv")).unwrap(),
        format!("{header}{}{}", rows[0], rows[1])
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d.csv")).unwrap(),
        format!("{header}{}", rows[2])
    );
    // An HTML page: a JSONL line of the fields read.
    std::fs::write(
        dir.path().join("page.html"),
        format!(
            "<html><head><title>Harbour</title></head><body><p>{}</p><p>{}</p></body></html>",
            S[0], S[3]
        ),
    )
    .unwrap();
    let o = run(dir.path(), &["--db", "other.db", "dedup", "page.html"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["id"], "page.html");
    assert_eq!(v["title"], "Harbour");
    assert!(v["text"].as_str().unwrap().contains(S[3]), "{v}");
}

#[test]
fn a_missing_input_is_an_error_before_any_store_is_created() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["ingest", "dedup"] {
        let o = run(dir.path(), &[cmd, "nosuch.jsonl"]);
        assert_eq!(code(&o), 2, "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("cannot read input nosuch.jsonl: No such file"),
            "{}",
            stderr(&o)
        );
        assert!(
            !dir.path().join("fpdb.db").exists(),
            "{cmd} created a store"
        );
    }
}

#[test]
fn a_wrong_text_field_is_one_message_with_the_keys_found() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..3000)
        .map(|i| {
            format!(
                "{{\"id\":\"{i}\",\"body\":\"{} {i}\",\"url\":\"u\"}}\n",
                S[i % 9]
            )
        })
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    let o = run(dir.path(), &["ingest", "in.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "nothing ingested is an error: {err}");
    assert!(
        err.contains(
            "in.jsonl:1: missing text field `text` (keys: body, id, url; --text-field body?)"
        ),
        "{err}"
    );
    assert!(
        err.contains("skipped 2999 more records not listed"),
        "{err}"
    );
    assert!(err.contains("nothing was ingested"), "{err}");
    assert!(err.lines().count() <= 5, "{err}");
    // Told the field, it works.
    let o = run(dir.path(), &["ingest", "in.jsonl", "--text-field", "body"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn a_csv_without_its_header_line_names_the_columns_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rows.csv"),
        format!("1,{}\n2,{}\n", S[0], S[1]),
    )
    .unwrap();
    let o = run(dir.path(), &["ingest", "rows.csv"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains(&format!("its columns are `1`, `{}`", S[0])),
        "{err}"
    );
    assert!(err.contains("header line"), "{err}");
}

mod raw_records {
    use fpdb::reader::{Format, Inputs, ReadOptions};
    use proptest::prelude::*;

    /// A CSV field: plain, or quoted with commas, quotes, and line breaks inside.
    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ]{1,40}",
            "[a-z,\"\n ]{0,300}".prop_map(|s| format!("\"{}\"", s.replace('"', "\"\""))),
            // Long enough to cross the csv reader's buffer at any byte.
            "[a-z]{1,20}".prop_map(|s| s.repeat(700)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Kept raw, the header and the rows of a CSV file put back together are the file.
        #[test]
        fn csv_rows_kept_raw_are_the_file_byte_for_byte(
            rows in prop::collection::vec((field(), field()), 1..20),
            crlf in any::<bool>(),
            last_newline in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut file = format!("id,text,note{eol}");
            for (i, (a, b)) in rows.iter().enumerate() {
                file.push_str(&format!("r{i},{a},{b}"));
                if i + 1 < rows.len() || last_newline {
                    file.push_str(eol);
                }
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("in.csv");
            std::fs::write(&path, &file).unwrap();
            let opts = ReadOptions { format: Format::Csv, keep_raw: true, ..Default::default() };
            let recs: Vec<_> = Inputs::new(&[path], opts).collect();
            prop_assert_eq!(recs.len(), rows.len());
            let mut back = recs[0].header.as_ref().unwrap().to_vec();
            for r in &recs {
                back.extend_from_slice(r.raw.as_ref().unwrap());
            }
            prop_assert_eq!(String::from_utf8(back).unwrap(), file);
        }
    }
}

#[test]
fn the_top_level_help_has_one_short_line_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["--help"]);
    let help = stdout(&o);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(commands.len() >= 15, "{help}");
    for l in &commands {
        assert!(l.chars().count() <= 90, "too long: {l}");
    }
    assert!(
        commands
            .iter()
            .any(|l| l.trim_start().starts_with("dedup ")),
        "{help}"
    );
}

#[test]
fn a_log_gets_progress_lines_and_the_summary_says_what_the_store_holds() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..3000)
        .map(|i| {
            format!(
                "{{\"id\":\"{i}\",\"text\":\"{} number {i} of many\"}}\n",
                S[i % 9]
            )
        })
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    // stderr is a pipe here, as under nohup or cron: progress lines, every 0 s for the test.
    let o = common::fpdb()
        .current_dir(dir.path())
        .env("FPDB_PROGRESS_SECS", "0")
        .args(["ingest", "in.jsonl", "--batch-size", "500"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    let progress = err
        .lines()
        .filter(|l| l.contains(" docs (") && l.contains(" after "))
        .count();
    assert!(progress >= 2, "{err}");
    // One vocabulary with `fpdb stats`: the store's duplicates after the run.
    let stats: serde_json::Value =
        serde_json::from_str(&stdout(&run(dir.path(), &["stats", "--json"]))).unwrap();
    let expect = format!(
        "{} documents in {} clusters, {} duplicates",
        stats["documents"], stats["clusters"], stats["duplicates"]
    );
    assert!(err.contains(&expect), "{expect}: {err}");
    // Without --verbose no lookup line.
    assert!(!err.contains("per document looked up"), "{err}");
}

#[test]
fn dedup_skips_garbage_located_and_writes_only_what_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let a = line("a", &[0, 1, 2, 3], "");
    let b = line("b", &[5, 6, 7, 8], "");
    let mut jsonl = a.clone().into_bytes();
    jsonl.extend_from_slice(b"{\"id\":\"broken\",\"text\":\n");
    jsonl.extend_from_slice(b"\x00\x01\xff\xfe garbage\n");
    jsonl.extend_from_slice(b"{\"id\":\"notext\"}\n");
    jsonl.extend_from_slice(b.as_bytes());
    std::fs::write(dir.path().join("in.jsonl"), &jsonl).unwrap();
    let o = run(
        dir.path(),
        &[
            "dedup",
            "in.jsonl",
            "-o",
            "u.jsonl",
            "--duplicates-out",
            "d.jsonl",
        ],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 3, "{err}");
    for at in [
        "in.jsonl:2: malformed JSON",
        "in.jsonl:3:",
        "in.jsonl:4: missing text field",
    ] {
        assert!(err.contains(at), "{at}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("u.jsonl")).unwrap(),
        format!("{a}{b}")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d.jsonl")).unwrap(),
        ""
    );
    // CSV: a row with invalid UTF-8 and, last, a quote that never closes; kept raw, the good
    // rows come out as they were read and the bad ones nowhere.
    let good = format!("r1,\"{}\"\n", text(&[0, 1, 2]));
    let mut csv = b"id,text\n".to_vec();
    csv.extend_from_slice(good.as_bytes());
    csv.extend_from_slice(b"r2,\"bad \xff bytes\"\n");
    csv.extend_from_slice(format!("r3,\"{}\nr4,never closed\n", S[8]).as_bytes());
    std::fs::write(dir.path().join("in.csv"), &csv).unwrap();
    let o = run(
        dir.path(),
        &["--db", "csv.db", "dedup", "in.csv", "-o", "u.csv"],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 3, "{err}");
    // The good row spans lines 2-4 (its text has line breaks).
    assert!(err.contains("in.csv:5: invalid UTF-8"), "{err}");
    assert!(
        err.contains("in.csv:6: bad CSV: a quoted field opened in this row is never closed"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("u.csv")).unwrap(),
        format!("id,text\n{good}")
    );
}
