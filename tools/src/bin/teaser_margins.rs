//! The margins of the teaser rule ([`fpdb::fingerprint::similarity::teaser`]) on labeled sets:
//! every labeled pair that the defaults without the rule do not verify, by set, half (crc32
//! parity of the first id before any `#`, as `figure_margins` splits) and kind: how many the
//! rule verifies, and how near the others come to it (the fewest sentences of its own the
//! smaller document has among pairs that share at least three sentences and a third of the
//! larger's, and the least of them per sentence shared, which `page_teasers` bounds; the
//! highest share of the larger's sentences among pairs where the smaller has none of its
//! own). The rule is the defaults' (with `page_teasers`).
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin teaser_margins -- target/accuracy/pages ../shared/data/dev/zh_laws
//! ```
//!
//! A set is a folder with `corpus.jsonl` (`text`, or `html` extracted as `ingest` extracts it)
//! and `pairs.tsv` (`id_a id_b label kind`).

use std::collections::BTreeMap;
use std::path::Path;

use fpdb::fingerprint::similarity::{self, TEASER_MIN_SHARED, TEASER_OWN_PARTS, TEASER_PARTS};
use fpdb::fingerprint::{Fingerprinter, Fingerprints};
use fpdb_tools::crc32;

/// One row: the pairs of a (half, kind, label).
#[derive(Default)]
struct Row {
    pairs: usize,
    /// Not verified without the rule (under the overlap, or a template instance).
    under: usize,
    /// Of those, verified by the rule (not template instances).
    teasers: usize,
    /// The fewest own sentences of the smaller, among pairs sharing enough.
    fewest_own: Option<usize>,
    /// The least own sentences of the smaller per sentence shared, among pairs sharing
    /// enough (what `page_teasers` bounds by [`TEASER_OWN_PARTS`]).
    least_own_per_shared: Option<f64>,
    /// The highest share of the larger's sentences, among pairs whose smaller has none of its own.
    highest_share: Option<f64>,
}

fn corpus(dir: &Path, fp: &Fingerprinter) -> std::collections::HashMap<String, Fingerprints> {
    let corpus = std::fs::read_to_string(dir.join("corpus.jsonl")).expect("corpus.jsonl");
    let mut docs = std::collections::HashMap::new();
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let id = v["id"].as_str().expect("id").to_string();
        let text = match v["text"].as_str() {
            Some(t) => t.to_string(),
            None => fpdb::reader::html::extract(v["html"].as_str().expect("text or html")).text,
        };
        docs.insert(id, fp.fingerprint(&text));
    }
    docs
}

fn main() {
    let sets: Vec<String> = std::env::args().skip(1).collect();
    if sets.is_empty() {
        eprintln!("usage: teaser_margins SET_DIR...");
        std::process::exit(2);
    }
    let with = fpdb::Options::default();
    let without = fpdb::Options {
        teasers: false,
        ..with.clone()
    };
    let fp = Fingerprinter::new(with.clone(), None).expect("default settings");
    let verify = f64::from(with.verify_overlap_pct) / 100.0;
    println!("| set | half | kind | label | pairs | not verified without the rule | teasers | fewest own sentences, sharing enough | least own per shared (bound 1/{TEASER_OWN_PARTS}) | highest share, none of its own |");
    println!("|---|---|---|---|---:|---:|---:|---:|---:|---:|");
    for set in &sets {
        let dir = Path::new(set);
        let docs = corpus(dir, &fp);
        let pairs = std::fs::read_to_string(dir.join("pairs.tsv")).expect("pairs.tsv");
        let mut rows: BTreeMap<(u32, String, String), Row> = BTreeMap::new();
        for line in pairs.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let (Some(a), Some(b)) = (docs.get(f[0]), docs.get(f[1])) else {
                continue;
            };
            let half = crc32(f[0].split('#').next().unwrap_or(f[0])) % 2;
            let kind = (*f.get(3).unwrap_or(&"")).to_string();
            let r = rows.entry((half, kind, f[2].to_string())).or_default();
            r.pairs += 1;
            let s = fpdb::fingerprint::similarity(&without, a.sketches(), b.sketches());
            if s >= verify {
                continue;
            }
            r.under += 1;
            r.teasers += usize::from(fpdb::fingerprint::verified_as_teaser(
                &with,
                a.sketches(),
                b.sketches(),
            ));
            let c = similarity::counts(&a.sketch, &b.sketch);
            let (small, large) = (c.a.min(c.b), c.a.max(c.b));
            let own = small - c.shared;
            let share = c.shared as f64 / large.max(1) as f64;
            if c.shared >= TEASER_MIN_SHARED && c.shared * TEASER_PARTS >= large {
                r.fewest_own = Some(r.fewest_own.map_or(own, |x| x.min(own)));
                let per = own as f64 / c.shared as f64;
                r.least_own_per_shared = Some(r.least_own_per_shared.map_or(per, |x| x.min(per)));
            }
            if own == 0 && c.shared >= TEASER_MIN_SHARED {
                r.highest_share = Some(r.highest_share.map_or(share, |x| x.max(share)));
            }
        }
        let name = dir
            .file_name()
            .map_or(set.clone(), |n| n.to_string_lossy().into());
        for ((half, kind, label), r) in rows {
            let own = r.fewest_own.map_or("–".to_string(), |x| x.to_string());
            let per = r
                .least_own_per_shared
                .map_or("–".to_string(), |x| format!("{x:.3}"));
            let share = r
                .highest_share
                .map_or("–".to_string(), |x| format!("{x:.3}"));
            println!(
                "| {name} | {half} | {kind} | {label} | {} | {} | {} | {own} | {per} | {share} |",
                r.pairs, r.under, r.teasers
            );
        }
    }
}
