//! The lookup counters (`Fpdb::meters`, its `lookups`): what lookups read, counted.

use fpdb::{Document, Fpdb, LookupStats, OnExisting};

const LAW: &str = "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。\
    第二条 本条例所称政府督查，是指县级以上人民政府在法定职权范围内组织开展的监督检查。\
    第三条 政府督查工作应当坚持和加强党的领导，坚持以人民为中心，服务大局、实事求是。";
const OTHER: &str = "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵和高大的树木。";

/// The lookup counters count what was read: a first document reads no record, a copy reads
/// and verifies its original, a batch counts each of its documents, a query counts too (a
/// store with simhash, whose tables are counted too).
#[test]
fn lookup_stats_count_what_lookups_read() {
    let mut db = Fpdb::builder()
        .settings(fpdb::Settings {
            simhash: Some(true),
            ..Default::default()
        })
        .open_in_memory()
        .unwrap();
    assert_eq!(db.meters().lookups, LookupStats::default());
    db.ingest_document(&Document::new("a", LAW), OnExisting::Skip)
        .unwrap();
    let s = db.meters().lookups;
    assert_eq!((s.lookups, s.records_read, s.verified), (1, 0, 0));
    db.ingest_document(
        &Document::new("b", format!("【转载】\n{LAW}")),
        OnExisting::Skip,
    )
    .unwrap();
    let s = db.meters().lookups;
    assert_eq!(s.lookups, 2);
    assert!(s.postings_found >= 3, "{s:?}");
    // a's fingerprint is in the range of a table (the retitled copy is more than k bits
    // away: not a candidate).
    assert!(
        s.simhash_scanned >= 1 && s.simhash_candidates <= s.simhash_scanned,
        "{s:?}"
    );
    assert_eq!((s.records_read, s.verified), (1, 1), "{s:?}");

    let docs = [
        Document::new("c", format!("{LAW}\n（来源：网络）")),
        Document::new("d", OTHER),
    ];
    let batch: Vec<_> = docs.iter().map(|d| (d, db.fingerprint(&d.text))).collect();
    let out = db.ingest_batch(batch, OnExisting::Skip);
    assert!(out.error.is_none());
    let t = db.meters().lookups;
    assert_eq!(t.lookups, 4);
    // c's candidates are a, the oldest holder of every posting they share (and its
    // simhash neighbour), and b when b's simhash is within k too: one or two records
    // read, one verified (c joins a's cluster, which b is in); d has none.
    assert!(
        (1..=2).contains(&(t.records_read - s.records_read)),
        "{t:?}"
    );
    assert!((1..=2).contains(&(t.verified - s.verified)), "{t:?}");

    // A query of a's own text: a is a simhash candidate at distance 0, read and verified.
    let fps = db.fingerprint(LAW);
    db.searcher().query("q", &fps).unwrap();
    let u = db.meters().lookups;
    assert_eq!(u.lookups, 5);
    assert!(u.simhash_candidates > t.simhash_candidates, "{u:?}");
    assert!(
        u.records_read > t.records_read && u.verified > t.verified,
        "{u:?}"
    );
    assert!(
        u.records_read - t.records_read <= 3,
        "a, b, c at most: {u:?}"
    );
    // `counts` names every counter as it is serialized.
    let json = serde_json::to_value(u).unwrap();
    for (name, n) in u.counts() {
        assert_eq!(json[name].as_u64(), Some(n), "{name}");
    }
    assert_eq!(json.as_object().unwrap().len(), u.counts().len());
}

/// Copies of one text all have one simhash: each new copy used to read and verify every
/// earlier one (quadratic: 20,000 copies of a cookie notice ran for minutes). Now a lookup
/// reads at most `SIMHASH_MOST` of them (and a bounded number of table keys past them), and
/// every copy, exact or with a visitor number appended, still joins the one cluster.
#[test]
fn repeated_copies_read_a_bounded_number_of_candidates() {
    let notice = "本网站使用Cookie来改善您的浏览体验。继续浏览即表示您同意我们使用Cookie。\
                  了解更多请阅读我们的隐私政策和用户协议。";
    let dir = tempfile::tempdir().unwrap();
    let mut db = Fpdb::builder()
        .create(true)
        .open(dir.path().join("db"))
        .unwrap();
    let docs: Vec<Document> = (0..1500)
        .map(|i| {
            let text = if i % 3 == 2 {
                format!("{notice}您是第{i}位访客。")
            } else {
                notice.to_string()
            };
            Document::new(format!("c{i}"), text)
        })
        .collect();
    // The first copies one at a time (each reads the store), the rest in batches.
    for d in &docs[..100] {
        db.ingest_document(d, OnExisting::Skip).unwrap();
    }
    for chunk in docs[100..].chunks(350) {
        let batch: Vec<_> = chunk
            .iter()
            .map(|d| (d, db.fingerprint_document(d)))
            .collect();
        let out = db.ingest_batch(batch, OnExisting::Skip);
        assert!(out.error.is_none(), "{:?}", out.error);
        db.sync().unwrap();
    }
    let stats = db.searcher().stats();
    assert_eq!((stats.documents, stats.clusters), (1500, 1), "{stats:?}");
    let s = db.meters().lookups;
    let most = fpdb::SIMHASH_MOST as u64;
    assert!(s.records_read <= s.lookups * (most + 4), "{s:?}");
    // Unbounded, every lookup read every earlier copy in each of the 20 tables: about 20 ×
    // 750 keys on average here.
    assert!(
        s.simhash_scanned <= s.lookups * 20 * (2 * most + 20),
        "{s:?}"
    );
    db.searcher().verify().unwrap();
}
