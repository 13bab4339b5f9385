//! Build a labeled robustness set from a corpus: each chosen document (over 300 characters,
//! not itself an edited copy: no `#` in its id) with copies that real reposts make and the dev
//! sets do not: line breaks moved (`edit_join_lines`: paragraphs joined into one line;
//! `edit_rewrap`: re-wrapped at 50 columns, 40 characters in Chinese) and, for Chinese text,
//! traditional characters (`edit_traditional`: OpenCC s2t; `edit_traditional_tw`: s2twp,
//! Taiwan characters and vocabulary); plus random distinct pairs. Score it with `fpdb eval`:
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin robustness_set -- ../shared/data/dev/zh_laws/corpus.jsonl /tmp/robust-zh 300
//! fpdb eval --corpus /tmp/robust-zh/corpus.jsonl --pairs /tmp/robust-zh/pairs.tsv
//! ```

use std::io::Write;
use std::path::PathBuf;

use ferrous_opencc::{config::BuiltinConfig, OpenCC};
use fpdb_tools::rng::Rng;

use fpdb::eval::edits;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: robustness_set CORPUS.jsonl OUT_DIR [N=300]");
        std::process::exit(2);
    }
    let (corpus, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let n: usize = args.get(3).map_or(300, |s| s.parse().expect("N"));
    let mut docs: Vec<(String, String)> = fpdb::reader::Inputs::new(&[corpus], Default::default())
        .filter_map(|r| r.doc.ok())
        .filter(|d| !d.id.contains('#') && d.text.chars().count() > 300)
        .map(|d| (d.id, d.text))
        .collect();
    // Deterministic shuffle, then the first n.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in (1..docs.len()).rev() {
        docs.swap(i, rng.index(i + 1));
    }
    docs.truncate(n);
    std::fs::create_dir_all(&out).expect("create output dir");
    let mut c = std::io::BufWriter::new(std::fs::File::create(out.join("corpus.jsonl")).unwrap());
    let mut p = std::io::BufWriter::new(std::fs::File::create(out.join("pairs.tsv")).unwrap());
    writeln!(p, "id_a\tid_b\tlabel\tkind").unwrap();
    let mut line = |id: &str, text: &str| {
        let o = serde_json::json!({ "id": id, "text": text });
        writeln!(c, "{o}").unwrap();
    };
    let s2t = OpenCC::from_config(BuiltinConfig::S2t).expect("OpenCC s2t");
    let s2twp = OpenCC::from_config(BuiltinConfig::S2twp).expect("OpenCC s2twp");
    for (id, text) in &docs {
        line(id, text);
        line(&format!("{id}#join"), &edits::join_lines(text));
        line(&format!("{id}#wrap"), &edits::rewrap_default(text));
        writeln!(p, "{id}\t{id}#join\t1\tedit_join_lines").unwrap();
        writeln!(p, "{id}\t{id}#wrap\t1\tedit_rewrap").unwrap();
        if edits::has_chinese(text) {
            for (conv, suffix, kind) in [
                (&s2t, "trad", "edit_traditional"),
                (&s2twp, "tw", "edit_traditional_tw"),
            ] {
                line(&format!("{id}#{suffix}"), &conv.convert(text));
                writeln!(p, "{id}\t{id}#{suffix}\t1\t{kind}").unwrap();
            }
        }
    }
    for _ in 0..docs.len() {
        let (a, b) = (
            (rng.next() % docs.len() as u64) as usize,
            (rng.next() % docs.len() as u64) as usize,
        );
        if a != b {
            writeln!(p, "{}\t{}\t0\trandom_distinct", docs[a].0, docs[b].0).unwrap();
        }
    }
    eprintln!("{} documents -> {}", docs.len(), out.display());
}
