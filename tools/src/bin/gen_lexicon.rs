//! Builds `src/text/lexicon/jieba.fst` and `idf.values` from jieba-rs's own dictionary files
//! (the `src/data/dict.txt` and `src/data/idf.txt` of the jieba-rs version in Cargo.lock):
//!
//!     cargo run --release -p fpdb-tools --bin gen_lexicon -- ~/.cargo/registry/src/*/jieba-rs-0.11.0/src/data
//!
//! One FST maps every word of either file to `(freq + 1) << 12 | (idf + 1)`: `freq` its
//! dictionary frequency (the field is 0 for a word not in the dictionary), `idf` the index of
//! its IDF among the table's distinct values (0 for a word not in the IDF table), which follow
//! in `idf.values` as little-endian f64s. The empty key holds jieba's `total` (the sum of all
//! frequencies) and the index of the median IDF the same way. `tokenize`'s tests check it
//! against jieba-rs itself, so a jieba-rs upgrade that changes its data fails them until this
//! is rerun.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data] = args.as_slice() else {
        anyhow::bail!("usage: gen_lexicon JIEBA_RS_DATA_DIR (holding dict.txt and idf.txt)");
    };
    let data = PathBuf::from(data);
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/text/lexicon");
    std::fs::create_dir_all(&out)?;

    // Dictionary: word -> frequency; duplicates would make jieba's total differ from ours.
    let dict = std::fs::read_to_string(data.join("dict.txt"))?;
    let mut words: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total = 0u64;
    for line in dict.lines() {
        let mut it = line.split_ascii_whitespace();
        let Some(word) = it.next() else { continue };
        let freq: u64 = it.next().map_or(Ok(0), str::parse)?;
        total += freq;
        anyhow::ensure!(words.insert(word, freq).is_none(), "duplicate word {word}");
    }
    // IDF table: word -> index of its value among the distinct values (sorted), as jieba-rs
    // parses them (`split_whitespace`, `f64::from_str`, lines that do not parse skipped).
    let idf = std::fs::read_to_string(data.join("idf.txt"))?;
    let mut table: BTreeMap<&str, f64> = BTreeMap::new();
    let mut all = Vec::new();
    for line in idf.lines() {
        let mut it = line.split_whitespace();
        if let (Some(w), Some(Ok(v))) = (it.next(), it.next().map(str::parse::<f64>)) {
            anyhow::ensure!(table.insert(w, v).is_none(), "duplicate word {w}");
            all.push(v);
        }
    }
    // jieba-rs's median: select_nth_unstable at (len - 1) / 2 of all values.
    let mid = all.len().saturating_sub(1) / 2;
    all.sort_by(f64::total_cmp);
    let median = all[mid];
    let mut values: Vec<f64> = all.clone();
    values.dedup_by(|a, b| a.to_bits() == b.to_bits());
    let index = |v: f64| {
        values
            .binary_search_by(|x| x.total_cmp(&v))
            .expect("every value is listed") as u64
    };
    anyhow::ensure!(values.len() < 4095, "too many distinct IDF values");
    let mut merged: BTreeMap<&str, u64> = BTreeMap::new();
    for (w, f) in &words {
        merged.insert(w, (f + 1) << 12);
    }
    for (w, v) in &table {
        *merged.entry(w).or_insert(0) |= index(*v) + 1;
    }
    let mut b = fst::MapBuilder::memory();
    b.insert("", (total + 1) << 12 | (index(median) + 1))?;
    for (w, x) in &merged {
        b.insert(w, *x)?;
    }
    let bytes = b.into_inner()?;
    std::fs::write(out.join("jieba.fst"), &bytes)?;
    let mut f = std::fs::File::create(out.join("idf.values"))?;
    for v in &values {
        f.write_all(&v.to_le_bytes())?;
    }
    eprintln!(
        "jieba.fst: {} dictionary words (total {total}), {} IDF words, {} distinct values, median {median}, {} bytes",
        words.len(),
        table.len(),
        values.len(),
        bytes.len()
    );
    Ok(())
}
