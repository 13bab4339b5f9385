//! A store setting is defined by one row of the table of settings (`options/table.rs`), from
//! which `Options`, `Settings` and its names (which the Python package sets by) and the
//! command line's flags with their help and defaults are generated. The flags are checked as
//! a user reads them, and what is written by hand beside the table must agree with it:
//! `fpdb stats` and the reference's list of settings. A row forgotten in one of them fails here, with the place named
//! (ARCHITECTURE.md, "Adding a setting").

use crate::common;

/// The command-line flag that sets the table's row `r`: for a row with a flag of its own, its
/// name without `_pct`, `_` as `-`.
fn flag(r: &fpdb::SettingRow) -> String {
    use fpdb::SetBy;
    match (r.set, r.name) {
        (SetBy::Algos, _) => "--algos".into(),
        (SetBy::Hand, "simhash_idf") => "--idf".into(),
        (SetBy::Flag, n) => format!(
            "--{}",
            n.strip_suffix("_pct").unwrap_or(n).replace('_', "-")
        ),
        other => panic!("a row set another way: {other:?} (add its flag here)"),
    }
}

/// The default `fpdb ingest --help` gives for `flag`: the `[default: …]` of the first
/// paragraph of its entry.
fn help_default<'a>(help: &'a str, flag: &str) -> Option<&'a str> {
    let mut lines = help
        .lines()
        .skip_while(|l| l.trim_start().split([' ', '=', '[']).next() != Some(flag));
    lines.next()?;
    let paragraph: Vec<&str> = lines.take_while(|l| !l.trim().is_empty()).collect();
    let text = paragraph.last()?;
    let start = text.rfind("[default: ")? + "[default: ".len();
    Some(&text[start..start + text[start..].find(']')?])
}

/// What `fpdb stats` prints field `name` as (`key=` on its line of the store's settings).
fn stats_key(name: &str) -> String {
    match name {
        "nshash" | "simhash" | "key_algos" => "algorithms".into(),
        "nshash_n" => " n=".into(),
        "nshash_hash" => " hash=".into(),
        "nshash_min_shared" => " min_shared=".into(),
        "simhash_k" => " k=".into(),
        "simhash_min_terms" => " min_terms=".into(),
        "simhash_blocks" => " blocks=".into(),
        "minhash_bands" => " bands=".into(),
        "minhash_rows" => " rows=".into(),
        "simhash_features" => " features=".into(),
        "simhash_stopwords" => " stopwords=".into(),
        "simhash_idf" => " idf=".into(),
        n => format!(" {}=", n.strip_suffix("_pct").unwrap_or(n)),
    }
}

#[test]
fn every_setting_has_its_name_flag_stats_line_and_reference_entry() {
    let opts = serde_json::to_value(fpdb::Options::default()).unwrap();
    let rows = fpdb::SETTING_TABLE;
    assert!(rows.len() >= 30, "{rows:?}");
    let mut names_of_rows: Vec<&str> = rows.iter().map(|r| r.name).collect();
    names_of_rows.sort_unstable();
    assert_eq!(
        opts.as_object().unwrap().keys().collect::<Vec<_>>(),
        names_of_rows,
        "Options' fields are the table's rows"
    );
    let names = fpdb::Settings::names();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let help = common::stdout(&common::run(dir, &["ingest", "--help"]));
    std::fs::write(
        dir.join("a.jsonl"),
        "{\"id\":\"a\",\"text\":\"hello there, world\"}\n",
    )
    .unwrap();
    let o = common::run(dir, &["--db", "s.db", "ingest", "-q", "a.jsonl"]);
    assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
    let stats = common::stdout(&common::run(dir, &["--db", "s.db", "stats"]));
    let reference = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md"),
    )
    .unwrap();
    let start = reference
        .find("Settings (`--algos")
        .expect("the reference lists settings");
    let end = start
        + reference[start..]
            .find(") are fixed")
            .expect("the list ends");
    let listed = &reference[start..end];
    for r in rows {
        let f = r.name;
        // The IDF table is set by hand (`Settings::simhash_idf` holds a table read from a
        // file, not a value a name could carry).
        assert_eq!(
            names.contains(&f),
            r.set != fpdb::SetBy::Hand,
            "`{f}`: set by name unless set by hand"
        );
        let flag = flag(r);
        assert!(
            help.lines()
                .any(|l| l.trim_start().split([' ', '=', '[']).next() == Some(flag.as_str())),
            "`{f}`: no `{flag}` in `fpdb ingest --help` (cli/args.rs SettingsArgs, SettingFlags)"
        );
        if r.set == fpdb::SetBy::Flag && f != "simhash_blocks" {
            // The default the help gives is the one a new store gets (`simhash_blocks` is
            // chosen from `expected_docs`, as its help says).
            let default = match &opts[f] {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            assert_eq!(
                help_default(&help, &flag),
                Some(default.as_str()),
                "`{f}`: the help of `{flag}` gives another default than the table's"
            );
        }
        assert!(
            listed.contains(&format!("`{flag}")),
            "`{f}`: `{flag}` is not in docs/reference.md's list of settings"
        );
        let key = stats_key(f);
        assert!(
            stats.contains(&key),
            "`{f}`: `fpdb stats` prints no `{key}` (cli/stats.rs)\n{stats}"
        );
    }
}

/// The names a user types are spelled once, in the library: `--algos` and `--format` of
/// `fpdb ingest --help` list every algorithm ([`fpdb::ALGO_NAMES`]) and every input format
/// ([`fpdb::reader::Format::NAMES`]), and each name parses back to its value.
#[test]
fn the_help_lists_every_algorithm_and_format_the_library_knows() {
    let tmp = tempfile::tempdir().unwrap();
    let help = common::stdout(&common::run(tmp.path(), &["ingest", "--help"]));
    let algos = help
        .split("--algos <ALGOS>")
        .nth(1)
        .and_then(|rest| rest.split("\n      --").next())
        .expect("--algos in the help");
    let words: Vec<&str> = algos
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .collect();
    for name in fpdb::ALGO_NAMES {
        assert!(words.contains(name), "--algos help does not name `{name}`");
        assert_eq!(fpdb::Algo::by_name(name).map(fpdb::Algo::name), Some(*name));
    }
    let formats: Vec<&str> = fpdb::reader::Format::NAMES
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let listed = format!("[possible values: {}]", formats.join(", "));
    assert!(help.contains(&listed), "--format help lacks {listed}");
    for (name, format) in fpdb::reader::Format::NAMES {
        assert_eq!(name.parse::<fpdb::reader::Format>(), Ok(*format));
        assert_eq!(format.name(), *name);
    }
    assert!("xml"
        .parse::<fpdb::reader::Format>()
        .unwrap_err()
        .contains("one of: auto"));
}

/// Every flag generated from the table refuses a value of another type before any store is
/// made: exit 2, the flag named, no store directory left behind.
#[test]
fn every_generated_setting_flag_refuses_garbage_naming_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("a.jsonl"),
        "{\"id\":\"a\",\"text\":\"hello there, world\"}\n",
    )
    .unwrap();
    let mut checked = 0;
    for r in fpdb::SETTING_TABLE
        .iter()
        .filter(|r| r.set == fpdb::SetBy::Flag)
    {
        let flag = flag(r);
        let given = format!("{flag}=not-a-value");
        let o = common::run(dir, &["--db", "s.db", "ingest", "-q", &given, "a.jsonl"]);
        assert_eq!(common::code(&o), 2, "{given}");
        let err = common::stderr(&o);
        assert!(err.contains(&flag), "{given}: {err}");
        assert!(!dir.join("s.db").exists(), "{given}: a store was made");
        checked += 1;
    }
    assert!(checked >= 25, "{checked} flags");
}
