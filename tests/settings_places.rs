//! A store setting is written in several places that must agree: `Options` (what a store
//! keeps), `Settings` and its names (`each_setting!` in `engine/settings.rs`, which the Python
//! package sets by), the command line's flags, `fpdb stats` and the reference's list of
//! settings. A field added to `Options` and forgotten in one of them fails here, with the place
//! named (ARCHITECTURE.md, "Adding a setting").

mod common;

/// The command-line flag that sets `Options` field `name`: its name without `_pct`, `_` as
/// `-`, but for the few set another way.
fn flag(name: &str) -> String {
    match name {
        // Which algorithms run: `--algos`.
        "nshash" | "simhash" | "key_algos" => "--algos".into(),
        "simhash_idf" => "--idf".into(),
        n => format!(
            "--{}",
            n.strip_suffix("_pct").unwrap_or(n).replace('_', "-")
        ),
    }
}

/// What `fpdb stats` prints field `name` as (`key=` on its line of the store's settings).
fn stats_key(name: &str) -> String {
    match name {
        "nshash" | "simhash" | "key_algos" => "algorithms".into(),
        "nshash_n" => " n=".into(),
        "nshash_hash" => " hash=".into(),
        "nshash_min_shared" => " min_shared=".into(),
        "simhash_k" => " k=".into(),
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
    let fields: Vec<&String> = opts.as_object().unwrap().keys().collect();
    assert!(fields.len() >= 30, "{fields:?}");
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
    for f in fields {
        // The IDF table is set by hand (`Settings::simhash_idf` holds a table read from a
        // file, not a value a name could carry).
        assert!(
            names.contains(&f.as_str()) || f == "simhash_idf",
            "`{f}` is an Options field but not a setting name (each_setting! in engine/settings.rs)"
        );
        let flag = flag(f);
        assert!(
            help.lines()
                .any(|l| l.trim_start().split([' ', '=', '[']).next() == Some(flag.as_str())),
            "`{f}`: no `{flag}` in `fpdb ingest --help` (cli/args.rs SettingsArgs)"
        );
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
