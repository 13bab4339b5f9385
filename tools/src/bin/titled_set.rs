//! A dev set with titles: the dev sets' documents have none, so the algorithms that read a
//! title (`punct-title`, `two-stage`) would run on the text alone. This gives every document
//! the title a crawler would see on a page whose heading is its first line: the first
//! non-blank line (tabs count as line breaks, as in the 20 Newsgroups dump), without leading
//! `#` and spaces, cut to 100 characters; the text stays whole (pages repeat the title as their
//! heading). A retitled copy (`edit_retitle`, `edit_combo`) therefore has another title than
//! its original, as reposts do. The pairs are the set's own.
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin titled_set -- ../shared/data/dev/zh_laws /tmp/titled-zh
//! fpdb eval --corpus /tmp/titled-zh/corpus.jsonl --pairs /tmp/titled-zh/pairs.tsv --algo punct,punct-title
//! ```

use std::io::Write;
use std::path::PathBuf;

/// The title of a text: its first non-blank line, without leading `#` and spaces, at most
/// 100 characters.
fn title_of(text: &str) -> Option<String> {
    let line = text
        .split(['\n', '\t'])
        .map(|l| {
            l.trim_start_matches(|c: char| c == '#' || c.is_whitespace())
                .trim()
        })
        .find(|l| !l.is_empty())?;
    Some(line.chars().take(100).collect())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: titled_set DEV_SET_DIR OUT_DIR   (DEV_SET_DIR holds corpus.jsonl and pairs.tsv)");
        std::process::exit(2);
    }
    let (set, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    std::fs::create_dir_all(&out).expect("create OUT_DIR");
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(out.join("corpus.jsonl")).expect("create corpus.jsonl"),
    );
    let (mut docs, mut titled) = (0, 0);
    for rec in fpdb::reader::Inputs::new(&[set.join("corpus.jsonl")], Default::default()) {
        let location = rec.location();
        let d = match rec.doc {
            Ok(d) => d,
            Err(e) => panic!("{location}: {e}"),
        };
        let title = title_of(&d.text);
        docs += 1;
        titled += usize::from(title.is_some());
        let line = serde_json::json!({"id": d.id, "title": title, "text": d.text});
        writeln!(w, "{line}").expect("write corpus.jsonl");
    }
    w.flush().expect("write corpus.jsonl");
    std::fs::copy(set.join("pairs.tsv"), out.join("pairs.tsv")).expect("copy pairs.tsv");
    eprintln!(
        "{docs} documents, {titled} with a title -> {}",
        out.display()
    );
}
