//! `fpdb stats`: store-wide numbers and settings.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use fpdb::Algo;

use super::output::{open_read_only, EXIT_OK};

pub(super) fn stats(path: &PathBuf, json: bool) -> anyhow::Result<u8> {
    let db = open_read_only(path)?;
    let s = db.stats();
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
        "text         t2s={} tw_phrases={} reflow={} verify_overlap={}% verify_resemblance={}% tight_clusters={} strong_resemblance={}% link_shape={} template_figures={} originals={} digests={} teasers={} reordered_lines={} furniture={} page_teasers={} site_templates={} batch_furniture={} same_site_templates={} site_knowledge={} excerpts={}",
        o.t2s,
        o.tw_phrases,
        o.reflow,
        o.verify_overlap_pct,
        o.verify_resemblance_pct,
        o.tight_clusters,
        o.strong_resemblance_pct,
        o.link_shape,
        o.template_figures,
        o.originals,
        o.digests,
        o.teasers,
        o.reordered_lines,
        o.furniture,
        o.page_teasers,
        o.site_templates,
        o.batch_furniture,
        o.same_site_templates,
        o.site_knowledge,
        o.excerpts
    );
    Ok(())
}
