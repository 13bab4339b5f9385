//! Detection quality on a labeled set: ingest a corpus in order into a fresh in-memory store,
//! then score the labeled pairs (a pair is predicted near-duplicate when both documents end
//! with the same similar_id): precision, recall, F1 overall and per kind of pair.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use crate::engine::{Document, Fpdb, OnExisting, Settings};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprinter, Fingerprints};

/// One labeled pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabeledPair {
    /// First document id.
    pub a: String,
    /// Second document id.
    pub b: String,
    /// Whether they are near-duplicates.
    pub duplicate: bool,
    /// How the pair was made (`edit_width`, `real_shared_sentence`, ...).
    pub kind: String,
}

/// Each row of the TSV file `path` but its header (a first line starting with `header`) and
/// blank lines, with its fields, to `row`, which says what is wrong with a bad one (the error
/// then names the file and line).
fn each_row(
    path: &Path,
    header: &str,
    mut row: impl FnMut(&[&str]) -> std::result::Result<(), &'static str>,
) -> Result<()> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if i == 0 && line.starts_with(header) || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        row(&fields).map_err(|reason| Error::BadInput {
            source_name: path.display().to_string(),
            line: i as u64 + 1,
            reason: reason.to_string(),
        })?;
    }
    Ok(())
}

/// Read `pairs.tsv` (header `id_a id_b label kind`).
pub fn read_pairs(path: &Path) -> Result<Vec<LabeledPair>> {
    let mut out = Vec::new();
    each_row(path, "id_a", |f| {
        if f.len() < 3 {
            return Err("expected id_a<TAB>id_b<TAB>label[<TAB>kind]");
        }
        let duplicate = match f[2].trim() {
            "1" => true,
            "0" => false,
            _ => return Err("label must be 0 or 1"),
        };
        out.push(LabeledPair {
            a: f[0].to_string(),
            b: f[1].to_string(),
            duplicate,
            kind: f.get(3).map_or("all", |k| k.trim()).to_string(),
        });
        Ok(())
    })?;
    Ok(out)
}

/// Scores for one kind of pair.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KindScore {
    /// Label of the pairs of this kind (all pairs of a kind share it).
    pub label: u8,
    /// Pairs of this kind.
    pub pairs: u64,
    /// Pairs predicted near-duplicate.
    pub predicted_duplicate: u64,
    /// Fraction predicted correctly.
    pub accuracy: f64,
}

/// The report for one configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Configuration name.
    pub algo: String,
    /// Precision over all pairs.
    pub precision: f64,
    /// Recall over all pairs.
    pub recall: f64,
    /// F1 over all pairs.
    pub f1: f64,
    /// True positives.
    pub tp: u64,
    /// False positives.
    pub fp: u64,
    /// False negatives.
    pub fn_: u64,
    /// Pairs whose documents are not both in the corpus (not scored).
    pub missing: u64,
    /// Per kind.
    pub kinds: BTreeMap<String, KindScore>,
    /// Every pair judged wrongly: missed duplicates and false merges, in pairs-file order.
    pub errors: Vec<PairError>,
    /// Every pair of documents in one cluster judged by the article each shows, when the
    /// articles are known (`fpdb eval --articles`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_pairs: Option<ClusterPairs>,
}

/// Every pair of documents that share a cluster, judged by which article each shows: the
/// measure of false merges that labeled pairs miss (a cluster of ten pages of one site holds
/// 45 pairs, and the labeled pairs name a few of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClusterPairs {
    /// Pairs in one cluster that show one article.
    pub same: u64,
    /// Pairs in one cluster that show different articles (false merges).
    pub different: u64,
    /// Pairs of documents that show one article, in one cluster or not.
    pub possible: u64,
    /// `same / (same + different)`.
    pub precision: f64,
    /// `same / possible`.
    pub recall: f64,
    /// For each two different articles that share a cluster, one document of each (the
    /// first of each by id), by cluster and article; at most [`MERGED_LISTED`]. What
    /// `fpdb explain --corpus … A B` is asked about.
    pub merged: Vec<[String; 2]>,
}

/// The most pairs of merged articles [`ClusterPairs::merged`] lists.
pub const MERGED_LISTED: usize = 1000;

/// Read `articles.tsv` (header `id article`): which article each document shows. Documents
/// it does not name are left out of the cluster pairs.
pub fn read_articles(path: &Path) -> Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    each_row(path, "id\t", |f| {
        let [id, article, ..] = f else {
            return Err("expected id<TAB>article");
        };
        out.insert((*id).to_string(), article.trim().to_string());
        Ok(())
    })?;
    Ok(out)
}

/// Judge every pair of documents of one cluster (`sid`: id → similar_id) by `articles`.
pub fn cluster_pairs(sid: &HashMap<&str, u64>, articles: &HashMap<String, String>) -> ClusterPairs {
    let pairs = |n: u64| n * n.saturating_sub(1) / 2;
    let mut by_cluster: HashMap<u64, HashMap<&str, u64>> = HashMap::new();
    let mut by_article: HashMap<&str, u64> = HashMap::new();
    // (cluster, article) -> the first document showing it, by id.
    let mut first: std::collections::BTreeMap<(u64, &str), &str> = Default::default();
    for (id, s) in sid {
        if let Some(a) = articles.get(*id) {
            *by_cluster
                .entry(*s)
                .or_default()
                .entry(a.as_str())
                .or_default() += 1;
            *by_article.entry(a.as_str()).or_default() += 1;
            let f = first.entry((*s, a.as_str())).or_insert(id);
            if *id < *f {
                *f = id;
            }
        }
    }
    let mut c = ClusterPairs {
        possible: by_article.values().map(|&n| pairs(n)).sum(),
        ..ClusterPairs::default()
    };
    for shown in by_cluster.values() {
        let all = pairs(shown.values().sum());
        let same: u64 = shown.values().map(|&n| pairs(n)).sum();
        c.same += same;
        c.different += all - same;
    }
    let shown: Vec<(&(u64, &str), &&str)> = first.iter().collect();
    for (i, ((cluster, _), a)) in shown.iter().enumerate() {
        for ((other, _), b) in &shown[i + 1..] {
            if other != cluster || c.merged.len() == MERGED_LISTED {
                break;
            }
            c.merged.push([(**a).to_string(), (**b).to_string()]);
        }
    }
    let div = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    c.precision = div(c.same, c.same + c.different);
    c.recall = div(c.same, c.possible);
    c
}

/// A labeled pair the configuration got wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairError {
    /// First document id.
    pub a: String,
    /// Second document id.
    pub b: String,
    /// Kind of pair.
    pub kind: String,
    /// The label: 1 (a missed duplicate) or 0 (a false merge).
    pub label: u8,
}

/// Fingerprint every document once with the options `settings` resolve to (every algorithm
/// on: minhash with the bands asked for, else the default ones), in parallel. The simhash
/// floor is the one a store of `settings` has ([`simhash_floor`]): a configuration without
/// MinHash keeps a simhash for every document with a term.
pub fn fingerprint_all(docs: &[Document], settings: &Settings) -> Result<Vec<Fingerprints>> {
    let opts = Settings {
        simhash_min_terms: Some(simhash_floor(settings)?.unwrap_or(1)),
        nshash: Some(true),
        simhash: Some(true),
        minhash_bands: settings.minhash_bands.filter(|&b| b > 0),
        key_algos: Some(crate::options::KeyAlgos(vec![
            crate::options::KeyAlgo::imatch(),
            crate::options::KeyAlgo::keywords(),
            crate::options::KeyAlgo::keywords_con(),
            crate::options::KeyAlgo::keywords_pct(),
            crate::options::KeyAlgo::Des,
            crate::options::KeyAlgo::Punct,
            crate::options::KeyAlgo::segments(),
            crate::options::KeyAlgo::keywords_check(),
            crate::options::KeyAlgo::keywords_con_check(),
            crate::options::KeyAlgo::PunctTitle,
            crate::options::KeyAlgo::two_stage(),
        ])),
        ..settings.clone()
    }
    .resolve()?;
    let fp = Fingerprinter::new(opts, settings.simhash_idf.clone())?;
    Ok(docs
        .par_iter()
        .map(|d| fp.fingerprint_with(&d.text, d.meta()))
        .collect())
}

/// The fewest terms a document needs for a simhash in a store of `settings`
/// (`simhash_min_terms` as the store reads it); `None` when the store has no simhash (any
/// fingerprints serve it).
pub fn simhash_floor(settings: &Settings) -> Result<Option<u32>> {
    let o = settings.resolve()?;
    Ok(o.simhash.then_some(o.simhash_min_terms))
}

/// How [`evaluate`] cuts the corpus into batches, as `fpdb ingest` cuts its input into chunks:
/// a batch ends at `docs` documents, or once its records' raw sizes (`sizes`, one per
/// document: the bytes each took in its input; empty: not counted) reach `bytes`. Pages are
/// large records, so a batch of them holds fewer than `docs`; and a site's furniture is
/// learned per batch (`batch_furniture`), so the batches change what is found.
#[derive(Debug, Clone, Copy)]
pub struct Batches<'a> {
    /// Documents per batch, at most.
    pub docs: usize,
    /// Each document's raw size in its input.
    pub sizes: &'a [usize],
    /// A batch ends once its documents' raw sizes reach this many bytes.
    pub bytes: usize,
}

impl Batches<'_> {
    /// The number of documents of each batch of a corpus of `n`, in order.
    pub fn lengths(&self, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let (mut len, mut bytes) = (0, 0);
        for i in 0..n {
            len += 1;
            bytes += self.sizes.get(i).copied().unwrap_or(0);
            if len >= self.docs.max(1) || bytes >= self.bytes {
                out.push(len);
                (len, bytes) = (0, 0);
            }
        }
        if len > 0 {
            out.push(len);
        }
        out
    }
}

/// Ingest `docs` (with precomputed full fingerprints `fps`) in the batches `fpdb ingest` would
/// cut ([`Batches`]) into a fresh in-memory store configured by `settings`, as `fpdb ingest`
/// does, then score `pairs`, and every pair of a cluster where `articles` (id → article
/// shown) is not empty.
pub fn evaluate(
    name: &str,
    (docs, fps, batches): (&[Document], &[Fingerprints], Batches<'_>),
    pairs: &[LabeledPair],
    articles: &HashMap<String, String>,
    settings: &Settings,
) -> Result<Report> {
    let mut db = Fpdb::builder()
        .settings(settings.clone())
        .open_in_memory()?;
    let (use_ns, use_sim) = (db.options().nshash, db.options().simhash);
    let use_minhash = db.options().minhash_bands > 0;
    let mut sid: HashMap<&str, u64> = HashMap::new();
    let mut lengths = batches.lengths(docs.len()).into_iter();
    let mut batch = lengths.next().unwrap_or(0);
    let mut chunk = Vec::with_capacity(batch);
    for (d, fp) in docs.iter().zip(fps) {
        let mut fp = fp.clone();
        if !use_ns {
            fp.nshash.clear();
            // A store without nshash keeps no sentence hashes to post late (`late_keys`).
            fp.highs.clear();
        }
        if !use_sim {
            fp.simhash = None;
        }
        if !use_minhash {
            fp.bands.clear();
        }
        // Only the exact-key algorithms of this configuration.
        let algos = &db.options().key_algos.0;
        fp.keys
            .retain(|&k| algos.iter().any(|a| crate::fingerprint::keys::owns(a, k)));
        chunk.push((d, fp));
        if chunk.len() == batch {
            ingest_chunk(&mut db, std::mem::take(&mut chunk))?;
            batch = lengths.next().unwrap_or(0);
        }
    }
    ingest_chunk(&mut db, chunk)?;
    let mut export = HashMap::new();
    db.searcher().export(&mut |o| {
        export.insert(o.id, o.similar_id.unwrap_or(0));
        Ok(())
    })?;
    for d in docs {
        if let Some(s) = export.get(&d.id) {
            sid.insert(d.id.as_str(), *s);
        }
    }
    let mut r = Report {
        algo: name.to_string(),
        cluster_pairs: (!articles.is_empty()).then(|| cluster_pairs(&sid, articles)),
        ..Default::default()
    };
    for p in pairs {
        let (Some(a), Some(b)) = (sid.get(p.a.as_str()), sid.get(p.b.as_str())) else {
            r.missing += 1;
            continue;
        };
        let pred = a == b;
        match (pred, p.duplicate) {
            (true, true) => r.tp += 1,
            (true, false) => r.fp += 1,
            (false, true) => r.fn_ += 1,
            (false, false) => {}
        }
        if pred != p.duplicate {
            r.errors.push(PairError {
                a: p.a.clone(),
                b: p.b.clone(),
                kind: p.kind.clone(),
                label: u8::from(p.duplicate),
            });
        }
        let k = r.kinds.entry(p.kind.clone()).or_default();
        k.label = u8::from(p.duplicate);
        k.pairs += 1;
        k.predicted_duplicate += u64::from(pred);
    }
    for k in r.kinds.values_mut() {
        let correct = if k.label == 1 {
            k.predicted_duplicate
        } else {
            k.pairs - k.predicted_duplicate
        };
        k.accuracy = correct as f64 / k.pairs.max(1) as f64;
    }
    let div = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    r.precision = div(r.tp, r.tp + r.fp);
    r.recall = div(r.tp, r.tp + r.fn_);
    r.f1 = if r.precision + r.recall == 0.0 {
        0.0
    } else {
        2.0 * r.precision * r.recall / (r.precision + r.recall)
    };
    Ok(r)
}

pub mod edits;

/// Ingest one chunk of the corpus as `fpdb ingest` does, as one batch.
fn ingest_chunk(db: &mut Fpdb, chunk: Vec<(&Document, Fingerprints)>) -> Result<()> {
    if chunk.is_empty() {
        return Ok(());
    }
    match db.ingest_batch(chunk, OnExisting::Skip).error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches end at `docs` documents or once their raw sizes reach `bytes`, the record that
    /// reaches it included (as `fpdb ingest` cuts its chunks).
    #[test]
    fn batches_end_at_their_documents_or_their_bytes() {
        let sizes = [10, 10, 10, 10, 40, 1, 1];
        let b = |docs, bytes| Batches {
            docs,
            sizes: &sizes,
            bytes,
        };
        assert_eq!(b(1024, usize::MAX).lengths(7), vec![7]);
        assert_eq!(b(3, usize::MAX).lengths(7), vec![3, 3, 1]);
        assert_eq!(b(1024, 25).lengths(7), vec![3, 2, 2]);
        assert_eq!(b(2, 25).lengths(7), vec![2, 2, 1, 2]);
        assert_eq!(b(1024, 25).lengths(0), Vec::<usize>::new());
    }

    #[test]
    fn a_bad_row_of_pairs_or_articles_names_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let pairs = dir.path().join("pairs.tsv");
        std::fs::write(
            &pairs,
            "id_a\tid_b\tlabel\tkind\na\tb\t1\tk\n\na\tc\t2\tk\n",
        )
        .unwrap();
        let e = read_pairs(&pairs).unwrap_err().to_string();
        assert!(e.contains("pairs.tsv:4: label must be 0 or 1"), "{e}");
        std::fs::write(&pairs, "a\tb\t0\n").unwrap();
        assert_eq!(read_pairs(&pairs).unwrap()[0].kind, "all");
        let articles = dir.path().join("articles.tsv");
        std::fs::write(&articles, "id\tarticle\nx\tone\ny\n").unwrap();
        let e = read_articles(&articles).unwrap_err().to_string();
        assert!(e.contains("articles.tsv:3: expected id<TAB>article"), "{e}");
        std::fs::write(&articles, "id\tarticle\nx\tone\ny\ttwo \n").unwrap();
        let a = read_articles(&articles).unwrap();
        assert_eq!((a["x"].as_str(), a["y"].as_str()), ("one", "two"));
    }

    /// Every pair of documents, judged one by one, against the counts by cluster and article.
    #[test]
    fn cluster_pairs_judge_every_pair_of_a_cluster_as_a_scan_does() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..50 {
            let n = 1 + next(30);
            let ids: Vec<String> = (0..n).map(|i| format!("d{i}")).collect();
            let sid: HashMap<&str, u64> = ids.iter().map(|i| (i.as_str(), next(5))).collect();
            // Some documents show no known article: left out.
            let mut articles: HashMap<String, String> = HashMap::new();
            for i in &ids {
                if next(6) != 0 {
                    articles.insert(i.clone(), format!("a{}", next(4)));
                }
            }
            let (mut same, mut different, mut possible) = (0, 0, 0);
            for (i, a) in ids.iter().enumerate() {
                for b in &ids[i + 1..] {
                    let (Some(x), Some(y)) = (articles.get(a), articles.get(b)) else {
                        continue;
                    };
                    let together = sid[a.as_str()] == sid[b.as_str()];
                    possible += u64::from(x == y);
                    same += u64::from(together && x == y);
                    different += u64::from(together && x != y);
                }
            }
            let c = cluster_pairs(&sid, &articles);
            // The merged articles listed: each two different articles of one cluster once, by
            // the first page of each.
            let mut want = std::collections::BTreeSet::new();
            for (i, a) in ids.iter().enumerate() {
                for b in &ids[i + 1..] {
                    if let (Some(x), Some(y)) = (articles.get(a), articles.get(b)) {
                        if sid[a.as_str()] == sid[b.as_str()] && x != y {
                            want.insert((sid[a.as_str()], x.min(y).clone(), x.max(y).clone()));
                        }
                    }
                }
            }
            let got: std::collections::BTreeSet<_> = c
                .merged
                .iter()
                .map(|[a, b]| {
                    let (x, y) = (&articles[a], &articles[b]);
                    assert_eq!(sid[a.as_str()], sid[b.as_str()]);
                    for (id, art) in [(a, x), (b, y)] {
                        let firsts = ids.iter().filter(|i| {
                            articles.get(*i) == Some(art) && sid[i.as_str()] == sid[a.as_str()]
                        });
                        assert_eq!(firsts.min(), Some(id), "the first page of its article");
                    }
                    (sid[a.as_str()], x.min(y).clone(), x.max(y).clone())
                })
                .collect();
            assert_eq!((got.len(), &got), (c.merged.len(), &want));
            assert_eq!(
                (c.same, c.different, c.possible),
                (same, different, possible)
            );
        }
    }
}
