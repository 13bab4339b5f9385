//! `fpdb stats`: store-wide numbers and settings.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use fpdb::Algo;

use super::output::{open_read_only, EXIT_OK};

pub(super) fn stats(path: &PathBuf, json: bool) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let s = db.searcher().stats();
    if json {
        outln!("{}", serde_json::to_string(&s)?);
    } else {
        outln!("store        {}", path.display());
        outln!("documents    {}", s.documents);
        outln!("clusters     {}", s.clusters);
        outln!("duplicates   {}", s.duplicates);
        if fpdb::store::Location::parse(path).is_redis() {
            // Redis counts memory per server, not per namespace.
            outln!("memory       on the Redis Cluster (INFO memory on its masters)");
        } else {
            outln!(
                "disk         {:.1} MiB",
                s.disk_bytes as f64 / f64::from(1 << 20)
            );
            let cfs: Vec<String> = s
                .column_family_bytes
                .iter()
                .map(|(cf, n)| format!("{cf} {:.1}", *n as f64 / f64::from(1 << 20)))
                .collect();
            outln!("tables MiB   {}", cfs.join(", "));
            match s.presence_filter {
                Some(f) if f.current && f.documents_since == 0 => outln!(
                    "filter       saved, matches the store ({:.1} MiB): writers and query --batch load it",
                    f.bytes as f64 / f64::from(1 << 20)
                ),
                Some(f) if f.current => outln!(
                    "filter       saved ({:.1} MiB) before the last {} document(s): writers and query --batch load it and read those into it",
                    f.bytes as f64 / f64::from(1 << 20),
                    f.documents_since
                ),
                Some(_) => outln!(
                    "filter       saved for another state (unused): `ingest --memory-filters` or `compact` rebuilds it"
                ),
                None => outln!("filter       none saved (`ingest --memory-filters` or `compact` builds one)"),
            }
        }
        print_settings(&s)?;
    }
    Ok(EXIT_OK)
}

/// The store's settings, a line per part.
fn print_settings(s: &fpdb::Stats) -> anyhow::Result<()> {
    let o = &s.options;
    let mut algos: Vec<&str> = [
        (o.nshash, Algo::Nshash),
        (o.simhash, Algo::Simhash),
        (o.minhash_bands > 0, Algo::Minhash),
    ]
    .iter()
    .filter(|a| a.0)
    .map(|a| a.1.name())
    .collect();
    algos.extend(o.key_algos.0.iter().map(fpdb::KeyAlgo::name));
    outln!("algorithms   {}", algos.join(" "));
    outln!(
        "nshash       n={} hash={} min_sentence_chars={} min_shared={}",
        o.nshash_n,
        o.nshash_hash,
        o.min_sentence_chars,
        o.nshash_min_shared
    );
    outln!(
        "simhash      k={} min_terms={} blocks={} tables={} expected_docs={}",
        o.simhash_k,
        o.simhash_min_terms,
        o.simhash_blocks,
        s.simhash_tables,
        o.expected_docs
    );
    if !o.key_algos.0.is_empty() {
        outln!("keys         {}", o.key_algos);
    }
    if o.minhash_bands > 0 {
        outln!(
            "minhash      bands={} rows={} (4-gram minima, one-permutation hashing)",
            o.minhash_bands,
            o.minhash_rows
        );
    }
    outln!(
        "terms        features={} segmenter={} stopwords={} idf={}",
        o.simhash_features,
        o.segmenter,
        o.simhash_stopwords,
        o.simhash_idf
    );
    outln!(
        "rules        version {} {}",
        o.rules_version(),
        rules_line(o)?
    );
    Ok(())
}

/// Settings the lines before "rules" show (by a name of their own).
const SHOWN_APART: &[&str] = &[
    "nshash",
    "simhash",
    "key_algos",
    "nshash_n",
    "nshash_hash",
    "min_sentence_chars",
    "nshash_min_shared",
    "simhash_k",
    "simhash_min_terms",
    "simhash_blocks",
    "expected_docs",
    "minhash_bands",
    "minhash_rows",
    "simhash_features",
    "segmenter",
    "simhash_stopwords",
    "simhash_idf",
];

/// Every other setting of the table, in its order, as `name=value` (a percentage without
/// `_pct`, with `%`): a new setting shows here without code of its own.
fn rules_line(o: &fpdb::Options) -> anyhow::Result<String> {
    let values = serde_json::to_value(o)?;
    let mut parts = Vec::new();
    for row in fpdb::SETTING_TABLE {
        if SHOWN_APART.contains(&row.name) {
            continue;
        }
        let v = match &values[row.name] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        parts.push(match row.name.strip_suffix("_pct") {
            Some(name) => format!("{name}={v}%"),
            None => format!("{}={v}", row.name),
        });
    }
    Ok(parts.join(" "))
}
