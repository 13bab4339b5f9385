//! A shared host's publishers (`site_knowledge`, `engine/publishers.rs`, `text::sites`): each
//! account a page names is a site of its own that learns its own furniture; a block three
//! accounts repeat becomes the host's, and goes with their pages.

use crate::common;
use crate::site_knowledge::{article, footer, ingest, page, store, WX};

use common::Rng;
use fpdb::{Document, Fpdb};

/// On a shared host each publisher is a site of its own (`text::sites`): one account's footer
/// is that account's furniture, not the host's, and three posts of one account quoting an
/// article make the article that account's furniture only. The publisher is named by the
/// URL (`__biz=`) or by the page (`Document::publisher`, an HTML page's account name); a page
/// that names none is its host's. One at a time and in one batch; without the rule the host
/// is one site, as the review found.
#[test]
fn a_shared_hosts_publishers_each_learn_their_own_furniture() {
    let url = |acct: &str, n: usize| format!("https://mp.weixin.qq.com/s?__biz={acct}&mid={n}");
    for one_batch in [false, true] {
        for on in [true, false] {
            let mut rng = Rng(43);
            let (fx, fy) = (footer(&mut rng), footer(&mut rng));
            let quoted = article(&mut rng);
            let mut docs = Vec::new();
            for i in 0..3 {
                let x = format!("{}\n{fx}", article(&mut rng));
                docs.push(page(&format!("x{i}"), &url("X", i), &x));
                let mut y = page(&format!("y{i}"), &format!("{WX}y{i}"), &article(&mut rng));
                y.text = format!("{}\n{fy}", y.text);
                y.publisher = Some("账号Y".into());
                docs.push(y);
                let bait = format!("{}\n{quoted}", article(&mut rng));
                docs.push(page(&format!("z{i}"), &url("Z", i), &bait));
            }
            let mut db = store(on);
            ingest(&mut db, &docs, one_batch);
            let left_out = |url: &str, publisher: Option<&str>, text: &str| {
                let mut p = page("probe", url, &format!("{}\n{text}", article(&mut Rng(5))));
                p.publisher = publisher.map(str::to_string);
                db.searcher().without_furniture(&p).unwrap().1
            };
            let what = format!("rule {on}, batch {one_batch}");
            // Each account's own footer is its furniture either way.
            assert_eq!(left_out(&url("X", 9), None, &fx), 1, "{what}");
            assert_eq!(
                left_out(&format!("{WX}y9"), Some("账号Y"), &fy),
                1,
                "{what}"
            );
            // Another account's page, or one naming no account, keeps those lines, and an
            // article that account Z quoted three times.
            let others = [
                left_out(&url("W", 1), None, &fx),
                left_out(&format!("{WX}w1"), None, &fy),
                left_out(&url("W", 2), None, &quoted),
            ];
            if on {
                assert_eq!(others, [0, 0, 0], "{what}");
            } else {
                assert_eq!(others, [1, 1, 7], "{what}");
            }
        }
    }
}

/// The real binary: a JSONL field names each document's publisher (`--publisher-field`,
/// default `publisher`), and `explain` of two pages read from the input leaves an account's
/// footer out of that account's page only; with the field off, the host is one site and the
/// other account's page loses it too. The same through `fpdb serve`'s POST.
#[test]
fn a_publisher_field_makes_each_account_a_site_of_its_own() {
    let mut rng = Rng(47);
    let fx = footer(&mut rng);
    let mut lines = Vec::new();
    let mut add = |id: &str, publisher: &str, rng: &mut Rng| {
        let text = format!("{}\n{fx}", article(rng));
        let url = format!("https://mp.example/s/{id}");
        lines.push(serde_json::json!({"id": id, "url": url, "publisher": publisher, "text": text}));
    };
    for i in 0..3 {
        add(&format!("x{i}"), "账号X", &mut rng);
    }
    add("w", "账号W", &mut rng);
    add("x3", "账号X", &mut rng);
    let dir = tempfile::tempdir().unwrap();
    common::write_jsonl(&dir.path().join("in.jsonl"), &lines);
    // The furniture lines `explain` leaves out of `w` and `x3`, read with `field`.
    let left_out = |db: &str, field: &str| {
        let args = [
            "--db", db, "explain", "w", "x3", "--corpus", "in.jsonl", field, "--json",
        ];
        let o = common::run(dir.path(), &args);
        let v: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
        v["furniture_lines_left_out"].clone()
    };
    for (flag, want) in [("publisher", [0, 1]), ("", [1, 1])] {
        let db = format!("db-{flag}");
        let field = format!("--publisher-field={flag}");
        let o = common::run(
            dir.path(),
            &["--db", &db, "-q", "ingest", &field, "in.jsonl"],
        );
        assert_eq!(common::code(&o), 0, "{}", common::stderr(&o));
        assert_eq!(left_out(&db, &field), serde_json::json!(want), "{flag:?}");
    }
    // The same documents through `fpdb serve`'s POST: its `publisher` field is read as the
    // command line's is; without it the host is the unit.
    for (with, want) in [(true, [0, 1]), (false, [1, 1])] {
        let db = format!("db-serve-{with}");
        let server = common::server::Server::start(dir.path(), &db, &[]);
        // One request per document: each decided after the one before.
        for mut d in lines.iter().cloned() {
            if !with {
                d.as_object_mut().unwrap().remove("publisher");
            }
            let (status, v) =
                server.post("/v1/documents", &serde_json::json!({ "documents": [d] }));
            assert_eq!(status, 200, "{v}");
        }
        assert_eq!(server.stop(), 0);
        let field = ["--publisher-field=", "--publisher-field=publisher"][usize::from(with)];
        let got = left_out(&db, field);
        assert_eq!(got, serde_json::json!(want), "serve, publisher {with}");
    }
}

/// A block every account of a shared host repeats (a disclaimer) becomes the host's furniture
/// once three accounts' sites have made it theirs, so a new account's page leaves it out (its
/// first posts would match each other on it); after two accounts it is theirs only. One at a
/// time and in one batch (`engine/publishers.rs`).
#[test]
fn a_block_three_accounts_repeat_becomes_their_hosts_furniture() {
    let url = |acct: usize, n: usize| format!("https://mp.weixin.qq.com/s?__biz=A{acct}&mid={n}");
    for one_batch in [false, true] {
        for accounts in [2, 3] {
            let mut rng = Rng(53);
            let block = footer(&mut rng);
            let mut docs = Vec::new();
            for a in 0..accounts {
                for i in 0..3 {
                    let text = format!("{}\n{block}", article(&mut rng));
                    docs.push(page(&format!("a{a}-{i}"), &url(a, i), &text));
                }
            }
            let mut db = store(true);
            ingest(&mut db, &docs, one_batch);
            let probe = page("w", &url(9, 1), &format!("{}\n{block}", article(&mut rng)));
            let left_out = db.searcher().without_furniture(&probe).unwrap().1;
            let want = usize::from(accounts == 3);
            assert_eq!(left_out, want, "{accounts} accounts, batch {one_batch}");
        }
    }
}

/// A WeChat post's URL: account `acct`'s post `n`.
fn wx(acct: usize, n: usize) -> String {
    format!("https://mp.weixin.qq.com/s?__biz=A{acct}&mid={n}")
}

/// Three posts of account `acct`, each an article and `block`.
fn posts(acct: usize, block: &str, rng: &mut Rng) -> Vec<Document> {
    (0..3)
        .map(|i| {
            let text = format!("{}\n{block}", article(rng));
            page(&format!("a{acct}-{i}"), &wx(acct, i), &text)
        })
        .collect()
}

/// A store of the posts of accounts `0..n`, each ending with `block`, ingested one at a time;
/// the posts.
fn accounts(n: usize, block: &str, rng: &mut Rng) -> (Fpdb, Vec<Document>) {
    let docs: Vec<Document> = (0..n).flat_map(|a| posts(a, block, rng)).collect();
    let mut db = store(true);
    ingest(&mut db, &docs, false);
    (db, docs)
}

/// Remove account `acct`'s three posts, then sync (the removal's sweep).
fn remove_account(db: &mut Fpdb, acct: usize) {
    for i in 0..3 {
        assert!(db.maintenance().remove(&format!("a{acct}-{i}")).unwrap());
    }
    db.sync().unwrap();
}

/// A host's line taken from three accounts goes with their pages: once one account's pages
/// are removed, the next sync leaves it to the two others (a new account's page keeps the
/// block); a third account makes it the host's again; once every page is removed and the
/// store compacted, it is no line of the host's.
#[test]
fn a_line_taken_from_three_accounts_goes_with_their_pages() {
    let mut rng = Rng(59);
    let block = footer(&mut rng);
    let (mut db, docs) = accounts(3, &block, &mut rng);
    let probe = page("w", &wx(9, 1), &format!("{}\n{block}", article(&mut rng)));
    let left_out = |db: &Fpdb| db.searcher().without_furniture(&probe).unwrap().1;
    assert_eq!(left_out(&db), 1, "three accounts: the host's");
    remove_account(&mut db, 0);
    assert_eq!(left_out(&db), 0, "two accounts left: theirs only");
    let third = posts(3, &block, &mut rng);
    ingest(&mut db, &third, false);
    assert_eq!(left_out(&db), 1, "three accounts again");
    for d in docs.iter().chain(&third) {
        db.maintenance().remove(&d.id).unwrap();
    }
    db.maintenance().compact().unwrap();
    assert_eq!(left_out(&db), 0, "no page left");
}

/// A third account's page does not promote a line with an account whose pages were removed
/// (no line of the host was promoted: the removal's sweep drops the account from the host's
/// note of the line, and a promotion counts only the accounts that still hold it).
#[test]
fn a_removed_account_does_not_count_toward_the_hosts_furniture() {
    let mut rng = Rng(61);
    let block = footer(&mut rng);
    let (mut db, _) = accounts(2, &block, &mut rng);
    remove_account(&mut db, 0);
    let third = posts(2, &block, &mut rng);
    ingest(&mut db, &third, false);
    let probe = page("w", &wx(9, 1), &format!("{}\n{block}", article(&mut rng)));
    assert_eq!(
        db.searcher().without_furniture(&probe).unwrap().1,
        0,
        "two accounts hold it now: not the host's"
    );
}
