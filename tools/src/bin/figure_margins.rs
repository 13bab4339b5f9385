//! The margins of the template-instance rule ([`fpdb::fingerprint::figures`]) on labeled sets:
//! every labeled pair's figures compared as a default store compares them, the pairs split in
//! two halves by the group of their first document (the template of the templated set, the id
//! before any `#edit` suffix otherwise; crc32 parity, as `scripts/accuracy.sh` splits them).
//! For each half: the near-duplicates' lowest shared share and, among those under the share
//! threshold, the highest density of differing figures; the other pairs' highest shared share
//! and lowest density among those under it; and how many pairs of each label the rule calls
//! template instances.
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin figure_margins -- ../shared/data/dev/templated ../shared/data/dev/en_20news
//! ```

use std::collections::HashMap;
use std::path::Path;

use fpdb::fingerprint::figures::{self, FigureCheck, MIN_FIGURES, SHARED_SHARE};
use fpdb::fingerprint::Fingerprinter;
use fpdb_tools::crc32;

fn group(id: &str) -> &str {
    let b = id.as_bytes();
    let templated =
        b.len() > 4 && (id.starts_with("en-t") || id.starts_with("zh-t")) && b[4].is_ascii_digit();
    if templated {
        let end = 4 + b[4..].iter().take_while(|c| c.is_ascii_digit()).count();
        return &id[..end];
    }
    id.split('#').next().unwrap_or(id)
}

#[derive(Default)]
struct Side {
    pairs: usize,
    with_figures: usize,
    caught: usize,
    /// Lowest (dups) or highest (others) shared share.
    share: Option<f64>,
    /// Among pairs under the share threshold: highest (dups) or lowest (others) density.
    density: Option<f64>,
}

/// `f64::min` or `f64::max`: the side of a margin a half keeps.
type Pick = fn(f64, f64) -> f64;

fn main() {
    let sets: Vec<String> = std::env::args().skip(1).collect();
    if sets.is_empty() {
        eprintln!("usage: figure_margins DEV_SET_DIR...");
        std::process::exit(2);
    }
    let fp = Fingerprinter::new(fpdb::Options::default(), None).expect("default settings");
    println!("| set | half | label | pairs (with ≥ {MIN_FIGURES} figures) | template instances | shared share (lowest dup / highest other) | differing per 1,000 chars under the share threshold (highest dup / lowest other) |");
    println!("|---|---|---|---:|---:|---:|---:|");
    for set in &sets {
        let dir = Path::new(set);
        let corpus = std::fs::read_to_string(dir.join("corpus.jsonl")).expect("corpus.jsonl");
        let mut docs: HashMap<String, fpdb::fingerprint::Fingerprints> = HashMap::new();
        for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let id = v["id"].as_str().expect("id").to_string();
            docs.insert(id, fp.fingerprint(v["text"].as_str().expect("text")));
        }
        let pairs = std::fs::read_to_string(dir.join("pairs.tsv")).expect("pairs.tsv");
        let mut sides: HashMap<(u32, bool), Side> = HashMap::new();
        for line in pairs.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let (a, b, dup) = (&docs[f[0]], &docs[f[1]], f[2] == "1");
            let half = crc32(group(f[0])) % 2;
            let s = sides.entry((half, dup)).or_default();
            s.pairs += 1;
            let Some(c) = figures::compare(&a.figures, a.chars, &b.figures, b.chars) else {
                continue;
            };
            if c.compared < MIN_FIGURES {
                continue;
            }
            s.with_figures += 1;
            s.caught += usize::from(c.template());
            let share = c.shared as f64 / c.compared as f64;
            let density = density(&c);
            let (pick_share, pick_density): (Pick, Pick) = if dup {
                (f64::min, f64::max)
            } else {
                (f64::max, f64::min)
            };
            s.share = Some(s.share.map_or(share, |x| pick_share(x, share)));
            if share < SHARED_SHARE {
                s.density = Some(s.density.map_or(density, |x| pick_density(x, density)));
            }
        }
        let name = dir
            .file_name()
            .map_or(set.clone(), |n| n.to_string_lossy().into());
        for half in 0..2 {
            for dup in [true, false] {
                let s = sides.remove(&(half, dup)).unwrap_or_default();
                let f = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{x:.3}"));
                println!(
                    "| {name} | {half} | {} | {} ({}) | {} | {} | {} |",
                    if dup { "dup" } else { "not dup" },
                    s.pairs,
                    s.with_figures,
                    s.caught,
                    f(s.share),
                    f(s.density)
                );
            }
        }
    }
}

fn density(c: &FigureCheck) -> f64 {
    c.differ() as f64 * 1000.0 / c.chars.max(1) as f64
}
