//! `Fpdb::ingest_batch` (parallel lookups, decisions against the batch in memory, one commit)
//! against its oracle, `Fpdb::ingest` one document at a time. Both decide each document with
//! the same function (`Fpdb::decide`); what this tests is that the batch's in-memory index of
//! its earlier documents, its shared reads and its lookups ahead give each decision what the
//! store would give it one document at a time: the same stream of documents
//! (near copies inside and across batches, chains that merge clusters, reused ids, texts with
//! nothing to match on) in random batch sizes must give the same result per document and the
//! same store, for nshash alone, simhash alone and both, with skip and with replace, on the
//! memory store and on RocksDB.

use crate::common;

use common::{export_outcomes as export, Rng};
use fpdb::{Document, Fpdb, IngestResult, OnExisting, Settings};

/// A stream of documents: bases, their near copies (a sentence dropped, one appended, one
/// changed), chains (each shares half its sentences with the one before, so clusters merge),
/// unrelated texts, and ids reused now and then.
fn stream(rng: &mut Rng, n: usize) -> Vec<Document> {
    let mut texts: Vec<String> = Vec::new();
    let mut docs = Vec::new();
    for i in 0..n {
        let text = match (rng.below(8), texts.is_empty()) {
            (0..=2, false) => {
                let base = &texts[rng.below(texts.len() as u64) as usize];
                let mut s: Vec<String> = base.split_inclusive('。').map(String::from).collect();
                match rng.below(3) {
                    0 if s.len() > 2 => {
                        s.remove(rng.below(s.len() as u64) as usize);
                    }
                    1 => s.push(common::synthetic_doc(rng, 1)),
                    _ => {
                        let j = rng.below(s.len() as u64) as usize;
                        s[j] = common::synthetic_doc(rng, 1);
                    }
                }
                s.concat()
            }
            (3, false) => {
                let base = &texts[rng.below(texts.len() as u64) as usize];
                let s: Vec<&str> = base.split_inclusive('。').collect();
                format!(
                    "{}{}",
                    s[..s.len() / 2].concat(),
                    common::synthetic_doc(rng, 4)
                )
            }
            (4, _) => "😀 ……".repeat(1 + rng.below(3) as usize),
            _ => {
                let n = 2 + rng.below(8) as usize;
                common::synthetic_doc(rng, n)
            }
        };
        texts.push(text.clone());
        let id = if i > 0 && rng.below(10) == 0 {
            format!("d{}", rng.below(i as u64))
        } else {
            format!("d{i}")
        };
        let mut doc = Document::new(id, text);
        // Titles from a small pool, so that documents share them (punct-title, two-stage).
        if rng.below(3) == 0 {
            doc.title = Some(format!("标题 {} title", rng.below(4)));
        }
        docs.push(doc);
    }
    docs
}

fn settings(algos: u64) -> Settings {
    Settings {
        nshash: Some(algos != 1),
        simhash: Some(algos != 0),
        // With both: the literature's exact-key algorithms too.
        key_algos: (algos == 2).then(|| {
            fpdb::KeyAlgos(vec![
                fpdb::KeyAlgo::imatch(),
                fpdb::KeyAlgo::keywords(),
                fpdb::KeyAlgo::keywords_pct(),
                fpdb::KeyAlgo::segments(),
                fpdb::KeyAlgo::keywords_check(),
                fpdb::KeyAlgo::keywords_con_check(),
                fpdb::KeyAlgo::PunctTitle,
                fpdb::KeyAlgo::two_stage(),
            ])
        }),
        ..Default::default()
    }
}

/// Ingest `docs` one at a time into `a` and in random batches into `b`; compare.
fn compare(a: &mut Fpdb, b: &mut Fpdb, docs: &[Document], on: OnExisting, rng: &mut Rng) {
    let mut one: Vec<IngestResult> = Vec::new();
    for d in docs {
        one.push(a.ingest_document(d, on).unwrap());
        if rng.below(50) == 0 {
            a.sync().unwrap();
        }
    }
    a.sync().unwrap();
    // Random batch sizes; each batch's lookups run while the one before is decided, or
    // not; syncs between some batches.
    let mut batches: Vec<&[Document]> = Vec::new();
    let mut i = 0;
    while i < docs.len() {
        let n = (1 + rng.below(90) as usize).min(docs.len() - i);
        batches.push(&docs[i..i + n]);
        i += n;
    }
    let (ahead, syncs): (Vec<bool>, Vec<bool>) = (0..batches.len())
        .map(|_| (rng.below(4) != 0, rng.below(3) == 0))
        .unzip();
    let before = b.meters().batches_looked_up_ahead;
    let batched = common::ingest_ahead(b, &batches, on, &mut |i| ahead[i], &mut |db, i| {
        if syncs[i] {
            db.sync().unwrap();
        }
    });
    if on == OnExisting::Skip && ahead.iter().rev().skip(1).any(|&a| a) && common::looks_ahead() {
        // Replacing batches are ingested one document at a time: no lookups ahead.
        assert!(b.meters().batches_looked_up_ahead > before);
    }
    b.sync().unwrap();
    for (k, (x, y)) in one.iter().zip(&batched).enumerate() {
        assert_eq!(x, y, "document {k} ({})", docs[k].id);
    }
    assert_eq!(export(a), export(b));
    assert_eq!(
        a.searcher().stats().documents,
        b.searcher().stats().documents
    );
    assert_eq!(a.searcher().stats().clusters, b.searcher().stats().clusters);
    b.searcher().verify().unwrap();
    query_many_is_query(b, docs, rng);
}

/// `Fpdb::query_many` (the postings and simhash tables of all its documents read at once, in
/// key order) answers as `Fpdb::query` does one document at a time, and counts what those
/// lookups would have read: stored texts, new ones and edited copies.
fn query_many_is_query(db: &Fpdb, docs: &[Document], rng: &mut Rng) {
    let mut probe: Vec<Document> = docs.iter().step_by(3).cloned().collect();
    probe.extend(stream(rng, 60));
    let fps: Vec<_> = probe.iter().map(|d| db.fingerprint_document(d)).collect();
    let s0 = db.meters().lookups;
    let one: Vec<_> = probe
        .iter()
        .zip(&fps)
        .map(|(d, f)| db.searcher().query(&d.id, f).unwrap())
        .collect();
    let s1 = db.meters().lookups;
    let asked: Vec<(&str, &fpdb::Fingerprints)> = probe
        .iter()
        .zip(&fps)
        .map(|(d, f)| (d.id.as_str(), f))
        .collect();
    let many: Vec<_> = db
        .searcher()
        .query_many(&asked)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let s2 = db.meters().lookups;
    assert_eq!(one, many);
    for ((name, a0), ((_, a1), (_, a2))) in s0
        .counts()
        .into_iter()
        .zip(s1.counts().into_iter().zip(s2.counts()))
    {
        assert_eq!(a1 - a0, a2 - a1, "lookup counter {name}");
    }
}

/// [`compare`] on two fresh in-memory stores of settings `s`.
fn in_memory(s: Settings, docs: &[Document], on: OnExisting, rng: &mut Rng) {
    let mut a = Fpdb::builder()
        .settings(s.clone())
        .open_in_memory()
        .unwrap();
    let mut b = Fpdb::builder().settings(s).open_in_memory().unwrap();
    compare(&mut a, &mut b, docs, on, rng);
}

#[test]
fn batches_decide_like_one_document_at_a_time_in_memory() {
    for seed in 1..=12u64 {
        let mut rng = Rng((seed * 0x9e37_79b9_7f4a_7c15) | 1);
        let docs = stream(&mut rng, 300);
        let on = if seed % 3 == 0 {
            OnExisting::Replace
        } else {
            OnExisting::Skip
        };
        let s = settings(seed % 3);
        in_memory(s, &docs, on, &mut rng);
    }
}

/// The same with pages: the stream's documents given URLs on a few sites, so that their
/// lookups read a sentence's other holders (`other_holders`) and learn their sites' lines;
/// without `batch_furniture`, whose batches learn a new site's furniture together on purpose.
#[test]
fn batches_of_pages_decide_like_one_page_at_a_time() {
    for seed in 1..=8u64 {
        let mut rng = Rng((seed * 0x5851_f42d_4c95_7f2d) | 1);
        let docs: Vec<Document> = stream(&mut rng, 240)
            .into_iter()
            .enumerate()
            .map(|(i, d)| Document {
                url: Some(format!("https://site{}.example/{i}", i % 4)),
                ..d
            })
            .collect();
        let on = if seed % 4 == 0 {
            OnExisting::Replace
        } else {
            OnExisting::Skip
        };
        let s = Settings {
            batch_furniture: Some(false),
            ..settings(2 * (seed % 2))
        };
        in_memory(s, &docs, on, &mut rng);
    }
}

#[test]
fn batches_decide_like_one_document_at_a_time_on_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 1..=4u64 {
        let mut rng = Rng((seed * 0x2545_f491_4f6c_dd1d) | 1);
        let on = if seed == 4 {
            OnExisting::Replace
        } else {
            OnExisting::Skip
        };
        let s = settings(seed % 3);
        let pa = dir.path().join(format!("a{seed}"));
        let pb = dir.path().join(format!("b{seed}"));
        // Two runs into the same stores: the second batches look up what the first stored.
        for run in 0..2 {
            let docs = stream(&mut rng, 250);
            let docs: Vec<Document> = docs
                .into_iter()
                .map(|mut d| {
                    d.id = format!("{}-{run}", d.id);
                    d
                })
                .collect();
            let open = |p: &std::path::Path| {
                Fpdb::builder()
                    .settings(s.clone())
                    .create(true)
                    .open(p)
                    .unwrap()
            };
            let (mut a, mut b) = (open(&pa), open(&pb));
            compare(&mut a, &mut b, &docs, on, &mut rng);
        }
    }
}

#[test]
fn a_batch_on_a_read_only_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    drop(Fpdb::open(&p).unwrap());
    let mut db = Fpdb::builder().read_only(true).open(&p).unwrap();
    let d = Document::new("x", "一段足够长的句子用来测试只读的存储。");
    let fp = db.fingerprint(&d.text);
    let r = db.ingest_batch(vec![(&d, fp)], OnExisting::Skip);
    assert!(r.results.is_empty());
    assert!(matches!(r.error, Some(fpdb::Error::ReadOnly)));
}

/// The in-memory presence filters (`Builder::presence_filters`) skip only lookups that would
/// find nothing: the same stream gives the same results, store and query answers with and
/// without them, half of it written before the filters were built (found by their scan at
/// open), half after (inserted as written).
#[test]
fn presence_filters_change_no_result() {
    for seed in [3u64, 4, 5] {
        let mut rng = Rng((seed * 0x9e37_79b9_7f4a_7c15) | 1);
        let docs = stream(&mut rng, 400);
        let on = if seed % 3 == 0 {
            OnExisting::Replace
        } else {
            OnExisting::Skip
        };
        let dir = tempfile::tempdir().unwrap();
        let run = |name: &str,
                   filters: bool|
         -> (Vec<IngestResult>, Vec<fpdb::Outcome>, Vec<fpdb::Outcome>) {
            let path = dir.path().join(name);
            let mut results = Vec::new();
            for (half, part) in docs.chunks(docs.len() / 2 + 1).enumerate() {
                let mut db = Fpdb::builder()
                    .create(true)
                    .presence_filters(filters && half == 1)
                    .open(&path)
                    .unwrap();
                for chunk in part.chunks(37) {
                    let batch: Vec<_> = chunk
                        .iter()
                        .map(|d| (d, db.fingerprint_document(d)))
                        .collect();
                    let r = db.ingest_batch(batch, on);
                    assert!(r.error.is_none());
                    results.extend(r.results);
                    db.sync().unwrap();
                }
            }
            let db = Fpdb::builder()
                .presence_filters(filters)
                .open(&path)
                .unwrap();
            let queries = docs
                .iter()
                .map(|d| {
                    db.searcher()
                        .query("", &db.fingerprint(&format!("{}。补充一句新的话", d.text)))
                        .unwrap()
                })
                .collect();
            db.searcher().verify().unwrap();
            (results, export(&db), queries)
        };
        let plain = run("plain", false);
        let filtered = run("filtered", true);
        assert_eq!(plain.0, filtered.0, "seed {seed}: ingest results");
        assert_eq!(plain.1, filtered.1, "seed {seed}: stores");
        assert_eq!(plain.2, filtered.2, "seed {seed}: query answers");
        assert!(
            plain.2.iter().any(fpdb::Outcome::is_duplicate),
            "the queries find something"
        );
    }
}

/// Many copies of two boilerplate texts (a cookie notice, a "page not found"), exact and with a
/// visitor number appended, among other texts: past `SIMHASH_MOST` copies of one simhash each
/// lookup is bounded, and batches still decide as one document at a time does (the bound of
/// the store's candidates and then of those plus the batch's is the bound of all of them).
#[test]
fn copies_past_the_simhash_bound_decide_alike() {
    const NOTICES: [&str; 2] = [
        "本网站使用Cookie来改善您的浏览体验。继续浏览即表示您同意我们使用Cookie。了解更多请阅读我们的隐私政策和用户协议。",
        "很抱歉，您访问的页面不存在或已被删除。请检查您输入的网址是否正确，或返回首页继续浏览其他内容。",
    ];
    for seed in 1..=3u64 {
        let mut rng = Rng((seed * 0x5851_f42d_4c95_7f2d) | 1);
        let docs: Vec<Document> = (0..260)
            .map(|i| {
                let text = match rng.below(10) {
                    0..=4 => NOTICES[rng.below(2) as usize].to_string(),
                    5..=6 => format!(
                        "{}您是第{}位访客。",
                        NOTICES[rng.below(2) as usize],
                        rng.below(1000)
                    ),
                    _ => common::synthetic_doc(&mut rng, 3),
                };
                Document::new(format!("d{i}"), text)
            })
            .collect();
        let s = settings(seed % 3);
        let mut a = Fpdb::builder()
            .settings(s.clone())
            .open_in_memory()
            .unwrap();
        let mut b = Fpdb::builder().settings(s).open_in_memory().unwrap();
        compare(&mut a, &mut b, &docs, OnExisting::Skip, &mut rng);
        assert!(
            a.meters().lookups.records_read <= 260 * (fpdb::SIMHASH_MOST as u64 + 8),
            "{:?}",
            a.meters().lookups
        );
    }
}
