//! The Redis Cluster store on a real cluster: 3 masters + 3 replicas on loopback, started by
//! `scripts/redis-cluster.sh` for this test binary (or the one `FPDB_REDIS_NODES` names) and
//! stopped when it exits. Without redis-server these tests print SKIPPED and pass, unless
//! `FPDB_REQUIRE_REDIS=1` (set by scripts/test.sh, which installs redis-server) makes that a
//! failure.
//!
//! Over 600 lines: one cluster per test binary (started once, ~2 s), shared by every case.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{code, fpdb, json_lines, stderr, stdout, synthetic_doc, Rng};
use fpdb::store::{Batch, Cf, Lease, RedisStore, Store};

struct Cluster {
    nodes: String,
    dir: PathBuf,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/redis-cluster.sh")
}

/// Six consecutive free loopback ports whose cluster bus ports (+10000) are free too.
fn free_ports(salt: u64) -> u16 {
    let mut base = 20000 + ((u64::from(std::process::id()) * 7 + salt * 997) % 1500) as u16 * 6;
    loop {
        let free = (0..6).all(|i| {
            [base + i, base + i + 10000]
                .iter()
                .all(|&p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
        });
        if free {
            return base;
        }
        base = if base > 28000 { 20000 } else { base + 6 };
    }
}

/// Start a cluster that stops (and is deleted) when this test process exits.
fn start_cluster(salt: u64) -> Option<Cluster> {
    let dir = std::env::temp_dir().join(format!("fpdb-redis-{}-{salt}", std::process::id()));
    let port = free_ports(salt);
    let out = Command::new(script())
        .arg("start")
        .arg(&dir)
        .arg(port.to_string())
        .output()
        .expect("run scripts/redis-cluster.sh");
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).into_owned();
        if std::env::var_os("FPDB_REQUIRE_REDIS").is_some() {
            panic!("FPDB_REQUIRE_REDIS is set but no Redis cluster could be started: {why}");
        }
        eprintln!("SKIPPED: no Redis cluster ({})", why.trim());
        return None;
    }
    // A watcher stops the cluster once this process is gone (it outlives this process on
    // purpose: never waited for).
    #[allow(clippy::zombie_processes)]
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; '{script}' stop '{dir}'; rm -rf '{dir}'",
            pid = std::process::id(),
            script = script().display(),
            dir = dir.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the cluster's watcher");
    let nodes = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some(Cluster { nodes, dir })
}

/// The cluster shared by this binary's tests (None: skipped, said on stderr).
fn cluster() -> Option<&'static Cluster> {
    static C: OnceLock<Option<Cluster>> = OnceLock::new();
    C.get_or_init(|| match std::env::var("FPDB_REDIS_NODES") {
        Ok(nodes) if !nodes.is_empty() => Some(Cluster {
            nodes,
            dir: PathBuf::new(),
        }),
        _ => start_cluster(0),
    })
    .as_ref()
}

/// A fresh namespace on `c`.
fn url(c: &Cluster, name: &str, opts: &str) -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "redis://{}/{name}-{}-{n}-{}{opts}",
        c.nodes,
        std::process::id(),
        t % 1_000_000_007
    )
}

/// `groups` planted near-duplicate groups of `copies` documents each (a copy edits a few
/// characters of its original and drops its last sentence), ids `g{group}-{copy}`, in a
/// shuffled order; one JSONL line each.
fn planted_corpus(groups: usize, copies: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    let mut lines = Vec::new();
    for g in 0..groups {
        let original = synthetic_doc(&mut rng, 8);
        for c in 0..copies {
            let mut chars: Vec<char> = original.chars().collect();
            if c > 0 {
                for _ in 0..3 {
                    let i = rng.index(chars.len());
                    if chars[i] != '。' {
                        chars[i] = '改';
                    }
                }
                let cut = chars[..chars.len() - 1]
                    .iter()
                    .rposition(|&ch| ch == '。')
                    .unwrap();
                chars.truncate(cut + 1);
            }
            let text: String = chars.into_iter().collect();
            // Later copies are dated earlier: the last is each group's original.
            let date = format!("2024-01-{:02}", 28 - c);
            lines.push(
                serde_json::json!({"id": format!("g{g}-{c}"), "text": text, "date": date})
                    .to_string(),
            );
        }
    }
    for i in (1..lines.len()).rev() {
        let j = rng.index(i + 1);
        lines.swap(i, j);
    }
    lines
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The partition of ids into clusters that `fpdb export` shows.
fn partition(db: &str) -> BTreeSet<BTreeSet<String>> {
    let o = fpdb().args(["--db", db, "export"]).output().unwrap();
    assert_eq!(code(&o), 0, "export: {}", stderr(&o));
    let mut by: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for v in json_lines(&stdout(&o)) {
        by.entry(v["similar_id"].as_u64().unwrap())
            .or_default()
            .insert(v["id"].as_str().unwrap().to_string());
    }
    by.into_values().collect()
}

fn planted_partition(groups: usize, copies: usize) -> BTreeSet<BTreeSet<String>> {
    (0..groups)
        .map(|g| (0..copies).map(|c| format!("g{g}-{c}")).collect())
        .collect()
}

fn ok(args: &[&str]) -> String {
    let o = fpdb().args(args).output().unwrap();
    assert_eq!(code(&o), 0, "fpdb {args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn redis_store_conforms() {
    let Some(c) = cluster() else { return };
    let s = RedisStore::open(&url(c, "conf", ""), false).unwrap();
    common::conformance::conformance(&s);
}

/// A writer whose connection broke (a failover) writes what no `WAIT` acknowledged yet again,
/// through its new connection, before a `WAIT` there counts: a change that a master died
/// with is back before the write is acknowledged. Without a broken connection nothing is
/// written twice.
#[test]
fn unacknowledged_writes_go_again_through_a_new_connection() {
    let Some(c) = cluster() else { return };
    let u = url(c, "again", "?wait=1");
    let batch = |value: &[u8]| {
        let mut b = Batch::new();
        for i in 0..200u64 {
            b.put(Cf::Docs, i.to_be_bytes().to_vec(), value.to_vec());
        }
        b
    };
    let gone = || {
        let mut b = Batch::new();
        for i in 0..200u64 {
            b.delete(Cf::Docs, i.to_be_bytes().to_vec());
        }
        b
    };
    let writer = RedisStore::open(&u, false).unwrap();
    let other = RedisStore::open(&u, false).unwrap();
    let reader = RedisStore::open(&u, true).unwrap();
    let at = |i: u64| reader.get(Cf::Docs, &i.to_be_bytes()).unwrap();

    // Written, then lost (as with a master that died before its replica had them), then
    // the connection broken: the sync writes them again.
    writer.write(batch(b"kept")).unwrap();
    other.write(gone()).unwrap();
    assert_eq!(at(7), None);
    writer.lose_writer_connection();
    writer.sync().unwrap();
    for i in [0u64, 7, 199] {
        assert_eq!(at(i).as_deref(), Some(&b"kept"[..]), "doc {i}");
    }

    // Acknowledged: never written again, whatever happens to the connection after.
    other.write(gone()).unwrap();
    writer.lose_writer_connection();
    writer.write(batch(b"newer")).unwrap();
    writer.sync().unwrap();
    other.write(gone()).unwrap();
    writer.lose_writer_connection();
    writer.sync().unwrap();
    assert_eq!(at(7), None, "an acknowledged write was written again");
}

/// A writer that died after writing a batch's journal but before applying it: the next
/// writer to take the lease applies the batch whole (and only then writes its own).
#[test]
fn the_next_writer_replays_a_dead_writers_journal() {
    let Some(c) = cluster() else { return };
    let u = url(c, "journal", "");
    let dead = RedisStore::open(&u, false).unwrap();
    let mut b = Batch::new();
    for i in 0..300u64 {
        b.put(
            Cf::Docs,
            i.to_be_bytes().to_vec(),
            b"from the dead writer".to_vec(),
        );
        b.put(
            Cf::Nshash,
            [i.to_be_bytes(), i.to_be_bytes()].concat(),
            vec![1],
        );
    }
    b.delete(Cf::Meta, b"gone".to_vec());
    dead.write_journal_only(&b).unwrap();
    drop(dead);
    let reader = RedisStore::open(&u, true).unwrap();
    assert_eq!(reader.get(Cf::Docs, &7u64.to_be_bytes()).unwrap(), None);
    let next = RedisStore::open(&u, false).unwrap();
    next.acquire_writer().unwrap();
    for i in [0u64, 7, 299] {
        assert_eq!(
            reader.get(Cf::Docs, &i.to_be_bytes()).unwrap().as_deref(),
            Some(&b"from the dead writer"[..])
        );
        let key = [i.to_be_bytes(), i.to_be_bytes()].concat();
        assert_eq!(reader.get(Cf::Nshash, &key).unwrap(), Some(vec![1]));
    }
    next.release_writer().unwrap();
    // Replayed once: a second writer finds no journal to apply again over newer writes.
    let mut newer = Batch::new();
    newer.put(Cf::Docs, 7u64.to_be_bytes().to_vec(), b"newer".to_vec());
    next.acquire_writer().unwrap();
    next.write(newer).unwrap();
    next.release_writer().unwrap();
    let other = RedisStore::open(&u, false).unwrap();
    other.acquire_writer().unwrap();
    other.release_writer().unwrap();
    assert_eq!(
        reader
            .get(Cf::Docs, &7u64.to_be_bytes())
            .unwrap()
            .as_deref(),
        Some(&b"newer"[..])
    );
}

/// What a writer reads before it takes the lease, while another commits batches (puts,
/// changes, deletes of what it read), is brought up to date when it takes the lease: its
/// answers then equal a fresh reader's. When more batches were committed than the store
/// keeps logs of, it reads again, with the same answers; when none was, it says so.
#[test]
fn reads_before_the_lease_brought_up_to_date_equal_reads_under_it() {
    let Some(c) = cluster() else { return };
    let key = |i: u64| [&[0xab, 0x10][..], &i.to_be_bytes()].concat();
    let (lo, hi) = (vec![0xab, 0x10], vec![0xab, 0x11]);
    let ids: Vec<Vec<u8>> = (0..60u64).map(|i| i.to_be_bytes().to_vec()).collect();
    let scan = |s: &dyn Store| {
        let mut v = Vec::new();
        s.scan(Cf::Nshash, &lo, &hi, &mut |k, val| {
            v.push((k.to_vec(), val.to_vec()));
            true
        })
        .unwrap();
        v
    };
    for batches in [0u64, 3, 40] {
        let u = url(c, "since", "");
        let writer = RedisStore::open(&u, false).unwrap();
        let mut b = Batch::new();
        for i in 0..50u64 {
            b.put(Cf::Nshash, key(i), vec![i as u8]);
            b.put(Cf::Docs, i.to_be_bytes().to_vec(), b"first".to_vec());
        }
        writer.acquire_writer().unwrap();
        writer.write(b).unwrap();
        writer.release_writer().unwrap();
        let reader = RedisStore::open(&u, false).unwrap();
        let ahead = reader.read_ahead().unwrap();
        assert!(ahead.read_before_lease().unwrap());
        ahead.prefetch(Cf::Nshash, &[(&lo, &hi)]).unwrap();
        let id_keys: Vec<&[u8]> = ids.iter().map(Vec::as_slice).collect();
        ahead.prefetch_keys(Cf::Docs, &id_keys).unwrap();
        assert_eq!(scan(&reader).len(), 50);
        writer.acquire_writer().unwrap();
        for n in 0..batches {
            let mut b = Batch::new();
            b.put(Cf::Nshash, key(50 + n), vec![1]);
            b.put(Cf::Nshash, key(n + 10), vec![2]);
            b.delete(Cf::Nshash, key(n));
            b.put(
                Cf::Docs,
                n.to_be_bytes().to_vec(),
                format!("batch {n}").into_bytes(),
            );
            b.delete(Cf::Docs, (n + 20).to_be_bytes().to_vec());
            writer.write(b).unwrap();
        }
        writer.release_writer().unwrap();
        reader.acquire_writer().unwrap();
        assert_eq!(ahead.unchanged(), batches == 0, "{batches} batches");
        let fresh = RedisStore::open(&u, true).unwrap();
        assert_eq!(scan(&reader), scan(&fresh), "{batches} batches");
        for id in &ids {
            assert_eq!(
                reader.get(Cf::Docs, id).unwrap(),
                fresh.get(Cf::Docs, id).unwrap()
            );
        }
        reader.release_writer().unwrap();
    }
}

/// A batch is applied after its writer gives the lease back, in the order batches were
/// logged. Until then the next writer reads it under the lease as if applied; a writer that
/// read while two batches were logged and neither applied brings its reads up to date with
/// both; and the batches reach the cluster in order.
#[test]
fn batches_applied_after_the_lease_are_read_as_applied_and_applied_in_order() {
    let Some(c) = cluster() else { return };
    let u = url(c, "after", "");
    let (k, x) = (b"k".to_vec(), b"x".to_vec());
    let a = RedisStore::open(&u, false).unwrap();
    a.acquire_writer().unwrap();
    let mut b1 = Batch::new();
    b1.put(Cf::Docs, k.clone(), b"1".to_vec());
    b1.put(Cf::Docs, x.clone(), b"a".to_vec());
    a.write(b1).unwrap();
    a.release_lease_only().unwrap();
    let fresh = RedisStore::open(&u, true).unwrap();
    assert_eq!(
        fresh.get(Cf::Docs, &k).unwrap(),
        None,
        "applied before its turn"
    );
    let b = RedisStore::open(&u, false).unwrap();
    b.acquire_writer().unwrap();
    assert_eq!(b.get(Cf::Docs, &k).unwrap().as_deref(), Some(&b"1"[..]));
    let mut b2 = Batch::new();
    b2.put(Cf::Docs, k.clone(), b"2".to_vec());
    b2.delete(Cf::Docs, x.clone());
    b.write(b2).unwrap();
    assert_eq!(b.get(Cf::Docs, &x).unwrap(), None);
    b.release_lease_only().unwrap();
    // Reads now: neither batch is applied.
    let r = RedisStore::open(&u, false).unwrap();
    let ahead = r.read_ahead().unwrap();
    assert!(ahead.read_before_lease().unwrap());
    ahead.prefetch_keys(Cf::Docs, &[&k, &x]).unwrap();
    // The second batch waits for the first to be applied.
    let second = std::thread::spawn(move || b.apply_left());
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        fresh.get(Cf::Docs, &k).unwrap(),
        None,
        "applied out of order"
    );
    a.apply_left().unwrap();
    second.join().unwrap().unwrap();
    assert_eq!(fresh.get(Cf::Docs, &k).unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(fresh.get(Cf::Docs, &x).unwrap(), None);
    r.acquire_writer().unwrap();
    assert_eq!(r.get(Cf::Docs, &k).unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(r.get(Cf::Docs, &x).unwrap(), None);
    r.release_writer().unwrap();
}

/// A writer that dies after logging its batch, before applying it: its claim expires, and
/// the next writer applies the batch from its log before its own; meanwhile it reads it.
#[test]
fn a_batch_whose_writer_died_before_applying_it_is_applied_by_the_next() {
    let Some(c) = cluster() else { return };
    let u = url(c, "dead", "?lease=1");
    let dead = RedisStore::open(&u, false).unwrap();
    dead.acquire_writer().unwrap();
    let mut b1 = Batch::new();
    for i in 0..100u64 {
        b1.put(Cf::Docs, i.to_be_bytes().to_vec(), b"dead".to_vec());
    }
    dead.write(b1).unwrap();
    dead.release_lease_only().unwrap();
    std::mem::forget(dead);
    let next = RedisStore::open(&u, false).unwrap();
    next.acquire_writer().unwrap();
    assert_eq!(
        next.get(Cf::Docs, &7u64.to_be_bytes()).unwrap().as_deref(),
        Some(&b"dead"[..])
    );
    let mut b2 = Batch::new();
    b2.put(Cf::Docs, 7u64.to_be_bytes().to_vec(), b"next".to_vec());
    next.write(b2).unwrap();
    let t = Instant::now();
    next.release_writer().unwrap();
    assert!(t.elapsed() < Duration::from_secs(30));
    let fresh = RedisStore::open(&u, true).unwrap();
    for (i, want) in [(0u64, "dead"), (7, "next"), (99, "dead")] {
        assert_eq!(
            fresh.get(Cf::Docs, &i.to_be_bytes()).unwrap().as_deref(),
            Some(want.as_bytes())
        );
    }
}

/// A writer that logs many batches under one lease (more than the logs kept) and dies
/// before applying the last: every batch still reaches the cluster, the earlier ones applied
/// under its lease, the last ones by the next writer from their logs.
#[test]
fn many_batches_under_one_lease_survive_their_writer() {
    let Some(c) = cluster() else { return };
    let u = url(c, "many", "?lease=1");
    let dead = RedisStore::open(&u, false).unwrap();
    dead.acquire_writer().unwrap();
    for n in 0..40u64 {
        let mut b = Batch::new();
        b.put(
            Cf::Docs,
            n.to_be_bytes().to_vec(),
            format!("batch {n}").into_bytes(),
        );
        dead.write(b).unwrap();
    }
    dead.release_lease_only().unwrap();
    std::mem::forget(dead);
    let next = RedisStore::open(&u, false).unwrap();
    next.acquire_writer().unwrap();
    let mut b = Batch::new();
    b.put(Cf::Docs, 99u64.to_be_bytes().to_vec(), b"next".to_vec());
    next.write(b).unwrap();
    next.release_writer().unwrap();
    let fresh = RedisStore::open(&u, true).unwrap();
    for n in [0u64, 8, 31, 32, 39] {
        let v = fresh.get(Cf::Docs, &n.to_be_bytes()).unwrap();
        assert_eq!(v, Some(format!("batch {n}").into_bytes()), "batch {n}");
    }
    assert!(fresh.get(Cf::Docs, &99u64.to_be_bytes()).unwrap().is_some());
}

/// `SET key value` on the cluster of `c`, through `redis-cli -c` (garbage no fpdb writes).
fn redis_set(c: &Cluster, key: &str, value: &str) {
    let port = c
        .nodes
        .split(',')
        .next()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap();
    let o = Command::new("redis-cli")
        .args(["-c", "-p", port, "SET", key, value])
        .output()
        .expect("redis-cli");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Garbage in a batch's log. Not applied yet, it stops the next writer with a message naming
/// the namespace, each time, and nothing of it is written; already applied, it only makes a
/// writer that read before it read again (its answers are a fresh reader's).
#[test]
fn a_damaged_log_is_refused_by_name_or_read_past() {
    let Some(c) = cluster() else { return };
    let u = url(c, "garbage", "");
    let ns = u.rsplit('/').next().unwrap();
    let dead = RedisStore::open(&u, false).unwrap();
    let mut b = Batch::new();
    b.put(Cf::Docs, b"k".to_vec(), b"v".to_vec());
    dead.write_journal_only(&b).unwrap();
    redis_set(c, &format!("{{{ns}}}log:1"), "not a journal");
    let next = RedisStore::open(&u, false).unwrap();
    for _ in 0..2 {
        let e = next.acquire_writer().unwrap_err().to_string();
        assert!(e.contains(ns) && e.contains("damaged"), "{e}");
    }
    assert_eq!(
        RedisStore::open(&u, true)
            .unwrap()
            .get(Cf::Docs, b"k")
            .unwrap(),
        None
    );

    let u = url(c, "garbage-read", "");
    let ns = u.rsplit('/').next().unwrap();
    let writer = RedisStore::open(&u, false).unwrap();
    let reader = RedisStore::open(&u, false).unwrap();
    let ahead = reader.read_ahead().unwrap();
    assert!(ahead.read_before_lease().unwrap());
    ahead.prefetch_keys(Cf::Docs, &[b"k"]).unwrap();
    writer.acquire_writer().unwrap();
    writer.write(b).unwrap();
    writer.release_writer().unwrap();
    redis_set(c, &format!("{{{ns}}}log:1"), "not a journal");
    reader.acquire_writer().unwrap();
    assert_eq!(
        reader.get(Cf::Docs, b"k").unwrap().as_deref(),
        Some(&b"v"[..])
    );
    reader.release_writer().unwrap();
}

#[test]
fn redis_store_scans_hashed_ids_in_order_and_is_shared_between_clients() {
    let Some(c) = cluster() else { return };
    let u = url(c, "ids", "");
    let a = RedisStore::open(&u, false).unwrap();
    let mut b = Batch::new();
    let mut ids: Vec<Vec<u8>> = (0..700u32)
        .map(|i| format!("doc-{i}").into_bytes())
        .collect();
    for id in &ids {
        b.put(Cf::DocIds, id.clone(), id.len().to_be_bytes().to_vec());
    }
    // Many keys in one nshash bucket: pages of a scan.
    for i in 0..1500u64 {
        b.put(
            Cf::Nshash,
            [&[1u8, 2][..], &i.to_be_bytes()[..]].concat(),
            vec![],
        );
    }
    a.write(b).unwrap();
    a.sync().unwrap();
    ids.sort();
    // Another client (a second process would be the same) sees everything, in order.
    let r = RedisStore::open(&u, true).unwrap();
    let mut seen = Vec::new();
    r.scan(Cf::DocIds, b"", b"\xff", &mut |k, _| {
        seen.push(k.to_vec());
        true
    })
    .unwrap();
    assert_eq!(seen, ids);
    let mut n = 0u64;
    r.scan(Cf::Nshash, &[1, 2], &[1, 3], &mut |k, _| {
        assert_eq!(k[2..], n.to_be_bytes());
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, 1500);
    let e = r.write({
        let mut b = Batch::new();
        b.put(Cf::Docs, b"x".to_vec(), b"y".to_vec());
        b
    });
    assert!(e.unwrap_err().to_string().contains("read-only"));
}

/// Ingest `input` into `db`; the writer says how long it held the write lease: never longer
/// than the run, and only on a `shared` store.
fn ingest_saying_the_lease(db: &str, input: &Path, shared: bool) {
    let out = ok(&[
        "--db",
        db,
        "--quiet",
        "ingest",
        "--json",
        input.to_str().unwrap(),
    ]);
    let sum: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lease = sum["lease_seconds"].as_f64().unwrap();
    assert!(lease <= sum["seconds"].as_f64().unwrap(), "{sum}");
    assert_eq!(lease > 0.0, shared, "{sum}");
}

/// `explain`'s text with its ingest times blanked: two stores filled a moment apart may
/// differ there only.
fn without_ingest_times(out: &str) -> String {
    let mut parts = out.split("ingested ");
    let mut same = parts.next().unwrap_or_default().to_string();
    for p in parts {
        let time_end = p.find([';', ')']).unwrap_or(p.len());
        same.push_str("ingested T");
        same.push_str(&p[time_end..]);
    }
    same
}

#[test]
fn every_command_on_redis_answers_as_on_rocksdb() {
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    write_lines(&corpus, &planted_corpus(40, 3, 7));
    let u = url(c, "cmds", "");
    let rocks = dir.path().join("r.db");
    let rocks = rocks.to_str().unwrap();
    for db in [u.as_str(), rocks] {
        for input in [common::sample(), corpus.clone()] {
            ingest_saying_the_lease(db, &input, db == u);
        }
    }
    for args in [
        &["export"][..],
        &["clusters", "--json"],
        &["verify"],
        &["query", "--json", "--file", corpus.to_str().unwrap()],
        &["explain", "g0-0", "g0-1"],
        &["explain", "g0-0", "g1-0"],
    ] {
        let on = |db: &str| {
            let mut a = vec!["--db", db];
            a.extend_from_slice(args);
            let o = fpdb().args(&a).output().unwrap();
            (
                code(&o),
                without_ingest_times(&stdout(&o).replace(db, "DB")),
            )
        };
        assert_eq!(on(&u), on(rocks), "{args:?}");
    }
    let stats = ok(&["--db", &u, "stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(v["documents"], 220, "{stats}");
    // Originals: each group's earliest-dated copy, whatever order the lines came in.
    let export = ok(&["--db", &u, "export"]);
    let line = common::json_lines(&export)
        .into_iter()
        .find(|l| l["id"] == "g0-0")
        .unwrap();
    assert_eq!(line["duplicate_of"], "g0-2", "{line}");
    // A second ingest of the same documents: already stored, as on RocksDB.
    let o = fpdb()
        .args(["--db", &u, "ingest", corpus.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("120 already stored"), "{}", stderr(&o));
    // Settings are checked against the namespace's, as against a directory's.
    let o = fpdb()
        .args([
            "--db",
            &u,
            "ingest",
            "--algos",
            "nshash",
            corpus.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("was requested"), "{}", stderr(&o));
    // backup copies the namespace into a directory store with the same export.
    let copy = dir.path().join("copy.db");
    ok(&["--db", &u, "backup", copy.to_str().unwrap()]);
    assert_eq!(
        ok(&["--db", copy.to_str().unwrap(), "export"]),
        ok(&["--db", &u, "export"])
    );
    // verify (its reads are prefetched a chunk at a time on Redis) still finds a missing
    // index entry: one simhash key removed behind fpdb's back.
    let damaged = url(c, "damaged", "");
    ok(&[
        "--db",
        &damaged,
        "--quiet",
        "ingest",
        corpus.to_str().unwrap(),
        "--algos",
        "nshash,simhash,minhash",
    ]);
    let raw = RedisStore::open(&damaged, false).unwrap();
    let mut first = None;
    raw.scan(Cf::Simhash, &[], &[0xff; 18], &mut |k, _| {
        first = Some(k.to_vec());
        false
    })
    .unwrap();
    let mut b = Batch::new();
    b.delete(Cf::Simhash, first.unwrap());
    raw.write(b).unwrap();
    let o = fpdb().args(["--db", &damaged, "verify"]).output().unwrap();
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("simhash table"), "{}", stderr(&o));
    // delete and expire write through the lease like ingest.
    ok(&["--db", &u, "delete", "g0-0"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&["--db", &u, "stats", "--json"])).unwrap();
    assert_eq!(v["documents"], 219);
    ok(&["--db", &u, "expire", "--before", "2999-01-01"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&["--db", &u, "stats", "--json"])).unwrap();
    assert_eq!(
        (v["documents"].as_u64(), v["clusters"].as_u64()),
        (Some(0), Some(0))
    );
    ok(&["--db", &u, "verify"]);
}

/// A site's furniture on Redis: the `furniture` family, read ahead for a batch, gives the
/// decisions and the export RocksDB gives at the same batch size, in one batch (where the
/// batch's pages learn their sites' furniture together) and in batches of 2.
#[test]
fn a_sites_furniture_on_redis_decides_as_on_rocksdb() {
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = common::Rng(0xf0e4_1708_0000_0018);
    let lines: Vec<String> = common::sites::round(&mut rng, 3)
        .iter()
        .map(|d| serde_json::json!({"id": d.id, "url": d.url, "text": d.text}).to_string())
        .collect();
    let corpus = dir.path().join("pages.jsonl");
    write_lines(&corpus, &lines);
    let corpus = corpus.to_str().unwrap();
    for batch in ["1024", "2"] {
        let rocks = dir.path().join(format!("r{batch}.db"));
        let rocks = rocks.to_str().unwrap();
        ok(&[
            "--db",
            rocks,
            "--quiet",
            "ingest",
            "--batch-size",
            batch,
            corpus,
        ]);
        let want = ok(&["--db", rocks, "export"]);
        // The rule is at work in this corpus: the short articles of one site are apart.
        assert_eq!(
            partition(rocks).iter().filter(|g| g.len() > 1).count(),
            2,
            "{want}"
        );
        let u = url(c, "furniture", "");
        ok(&[
            "--db",
            &u,
            "--quiet",
            "ingest",
            "--batch-size",
            batch,
            corpus,
        ]);
        assert_eq!(ok(&["--db", &u, "export"]), want, "batches of {batch}");
    }
}

/// A single Redis server without cluster mode (a common first try) is named as the problem.
#[test]
fn a_server_without_cluster_mode_is_refused_saying_so() {
    if cluster().is_none() {
        return;
    }
    let port = free_ports(2);
    let dir = tempfile::tempdir().unwrap();
    let started = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .arg("--dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn();
    let Ok(mut server) = started else { return };
    let db = format!("redis://127.0.0.1:{port}/x");
    let t = Instant::now();
    let o = loop {
        let o = fpdb().args(["--db", &db, "stats"]).output().unwrap();
        if !stderr(&o).contains("cannot connect") || t.elapsed() > Duration::from_secs(10) {
            break o;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("is it a Redis Cluster?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_redis_addresses_are_refused_with_a_clear_message() {
    for (db, says) in [
        ("redis://127.0.0.1:1/x?retry=0", "cannot connect"),
        ("redis://127.0.0.1:6379", "NAMESPACE"),
        ("redis://host-without-port/x", ":port"),
        ("redis://127.0.0.1:7000/x?wait=many", "whole number"),
        ("redis://127.0.0.1:7000/a}b", "namespace"),
    ] {
        let o = fpdb().args(["--db", db, "stats"]).output().unwrap();
        assert_eq!(code(&o), 2, "{db}");
        assert!(stderr(&o).contains(says), "{db}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{db}: {}", stderr(&o));
    }
}

/// Four `fpdb ingest` processes (with `args`) into `db` at once, each on every 4th line of
/// `lines` (slice w starting at line w, written into `dir`); every one must exit 0.
fn ingest_at_once(db: &str, lines: &[String], dir: &Path, args: &[&str]) {
    let children: Vec<_> = (0..4)
        .map(|w| {
            let slice: Vec<String> = lines.iter().skip(w).step_by(4).cloned().collect();
            let path = dir.join(format!("s{w}.jsonl"));
            write_lines(&path, &slice);
            fpdb()
                .args(["--db", db, "--quiet", "ingest"])
                .args(args)
                .arg(&path)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for ch in children {
        let o = ch.wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
}

/// Four `fpdb ingest` processes on interleaved slices of one corpus, at once: the clusters
/// are the planted groups, as a sequential RocksDB ingest finds them.
#[test]
fn concurrent_writers_find_the_planted_groups() {
    let Some(c) = cluster() else { return };
    let (groups, copies) = (150, 4);
    let lines = planted_corpus(groups, copies, 11);
    let dir = tempfile::tempdir().unwrap();
    let all = dir.path().join("all.jsonl");
    write_lines(&all, &lines);
    let u = url(c, "conc", "");
    ingest_at_once(&u, &lines, dir.path(), &["--batch-size", "16"]);
    let rocks = dir.path().join("r.db");
    ok(&[
        "--db",
        rocks.to_str().unwrap(),
        "--quiet",
        "ingest",
        all.to_str().unwrap(),
    ]);
    let want = planted_partition(groups, copies);
    assert_eq!(partition(rocks.to_str().unwrap()), want);
    assert_eq!(partition(&u), want);
    ok(&["--db", &u, "verify"]);
    // The writers took turns: in store order (seq), documents of different slices
    // alternate more often than four writers one after another would give (3 changes).
    let slice_of: BTreeMap<String, usize> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), i % 4)
        })
        .collect();
    let order: Vec<usize> = json_lines(&ok(&["--db", &u, "export"]))
        .iter()
        .map(|v| slice_of[v["id"].as_str().unwrap()])
        .collect();
    let changes = order.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(changes > 3, "writers did not interleave: {changes} changes");
    // The counters every writer reloaded and moved add up.
    let v: serde_json::Value = serde_json::from_str(&ok(&["--db", &u, "stats", "--json"])).unwrap();
    assert_eq!(v["documents"], (groups * copies) as u64);
    assert_eq!(v["clusters"], groups as u64);
}

/// Four writers at once look their batches up before they take the lease, each while
/// another writes, and bring what they read up to date under it: the store equals one
/// sequential ingest of the same documents in the order the writers stored them (lease
/// order), export for export.
#[test]
fn concurrent_writers_equal_a_sequential_ingest_in_lease_order() {
    let Some(c) = cluster() else { return };
    let lines = planted_corpus(120, 4, 23);
    let dir = tempfile::tempdir().unwrap();
    let u = url(c, "order", "");
    ingest_at_once(&u, &lines, dir.path(), &["--batch-size", "8"]);
    let shared = ok(&["--db", &u, "export"]);
    let by_id: BTreeMap<String, &String> = lines
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), l)
        })
        .collect();
    let in_order: Vec<String> = json_lines(&shared)
        .iter()
        .map(|v| by_id[v["id"].as_str().unwrap()].clone())
        .collect();
    assert_eq!(in_order.len(), lines.len());
    let sequential = dir.path().join("seq.jsonl");
    write_lines(&sequential, &in_order);
    let rocks = dir.path().join("r.db");
    let r = rocks.to_str().unwrap();
    ok(&["--db", r, "--quiet", "ingest", sequential.to_str().unwrap()]);
    assert_eq!(shared, ok(&["--db", r, "export"]));
    ok(&["--db", &u, "verify"]);
}

#[test]
fn writers_creating_one_store_at_once_agree_on_it() {
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let lines = planted_corpus(30, 2, 5);
    let u = url(c, "create", "");
    ingest_at_once(&u, &lines, dir.path(), &[]);
    assert_eq!(partition(&u), planted_partition(30, 2));
    ok(&["--db", &u, "verify"]);
}

/// Wait until `path` has at least `n` lines.
fn wait_lines(path: &Path, n: usize, limit: Duration) {
    let t = Instant::now();
    while t.elapsed() < limit {
        if std::fs::read_to_string(path).map_or(0, |s| s.lines().count()) >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never reached {n} lines", path.display());
}

/// The ids in an ingest's --output (each line is written after its batch is durable).
fn acknowledged(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

fn stored_ids(db: &str) -> BTreeSet<String> {
    partition(db).into_iter().flatten().collect()
}

/// kill -9 a writer mid-ingest: the next writer waits out its lease, replays its journal,
/// and the store is consistent, with every acknowledged document in it.
#[test]
fn a_killed_writer_leaves_a_consistent_store() {
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let lines = planted_corpus(1500, 2, 3);
    let all = dir.path().join("all.jsonl");
    write_lines(&all, &lines);
    let u = url(c, "kill", "?lease=2");
    let out = dir.path().join("o.jsonl");
    let mut child = fpdb()
        .args(["--db", &u, "--quiet", "ingest", "--batch-size", "64"])
        .arg(&all)
        .arg("--output")
        .arg(&out)
        .spawn()
        .unwrap();
    wait_lines(&out, 200, Duration::from_secs(60));
    child.kill().unwrap();
    child.wait().unwrap();
    let acked = acknowledged(&out);
    assert!(
        acked.len() < lines.len(),
        "killed too late to test anything"
    );
    // The next writer (a fresh ingest of everything) gets in after the lease runs out.
    let t = Instant::now();
    let o = fpdb()
        .args(["--db", &u, "--quiet", "ingest"])
        .arg(&all)
        .output()
        .unwrap();
    assert!(matches!(code(&o), 0 | 3), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(60));
    ok(&["--db", &u, "verify"]);
    let stored = stored_ids(&u);
    for id in &acked {
        assert!(stored.contains(id), "{id} acknowledged, then lost");
    }
    assert_eq!(stored.len(), lines.len());
    assert_eq!(partition(&u), planted_partition(1500, 2));
}

/// kill -9 a master of a cluster of its own mid-ingest (`?wait=1`: every write reached a
/// replica before it counted): its replica takes over, the ingest waits (writes are not
/// acknowledged while a master has no replica) until the old master is back as a replica,
/// goes on, and nothing acknowledged is lost.
#[test]
fn a_killed_master_fails_over_without_losing_acknowledged_documents() {
    if cluster().is_none() {
        return;
    }
    let Some(c) = start_cluster(1) else { return };
    let dir = tempfile::tempdir().unwrap();
    let lines = planted_corpus(2000, 2, 9);
    let all = dir.path().join("all.jsonl");
    write_lines(&all, &lines);
    let u = url(&c, "failover", "?wait=1");
    let out = dir.path().join("o.jsonl");
    let child = fpdb()
        .args(["--db", &u, "--quiet", "ingest", "--batch-size", "64"])
        .arg(&all)
        .arg("--output")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_lines(&out, 300, Duration::from_secs(60));
    // The first master (its pid file is in the cluster's directory).
    let first = c.nodes.split(',').next().unwrap();
    let port = first.rsplit(':').next().unwrap();
    let pid = std::fs::read_to_string(c.dir.join(port).join("redis.pid")).unwrap();
    let killed = Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    let acked_then = acknowledged(&out).len();
    // Its replica is promoted after the node timeout (2 s); the old master, started again,
    // rejoins as the new master's replica, so that writes reach a replica again.
    std::thread::sleep(Duration::from_secs(4));
    let restarted = Command::new(script())
        .arg("restart")
        .arg(&c.dir)
        .arg(port)
        .status()
        .unwrap();
    assert!(restarted.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "ingest through the failover: {}", stderr(&o));
    assert!(acked_then < lines.len(), "the ingest ended before the kill");
    // Ask the surviving nodes.
    let rest: Vec<&str> = c.nodes.split(',').skip(1).collect();
    let u2 = u.replacen(&c.nodes, &rest.join(","), 1);
    let stored = stored_ids(&u2);
    for id in acknowledged(&out) {
        assert!(stored.contains(&id), "{id} acknowledged, then lost");
    }
    assert_eq!(stored.len(), lines.len());
    ok(&["--db", &u2, "verify"]);
}

/// The simhash index on Redis against a brute-force scan (as tests/oracles/index.rs on memory
/// and RocksDB), random k, block counts and stores, some of them read back by a second open.
#[test]
fn redis_lookup_equals_brute_force() {
    use common::oracle::{corpus, lookups_and_brute_force, simhash_only, store_with};
    use fpdb::index::Permutations;
    use fpdb::Fpdb;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let Some(c) = cluster() else { return };
    let mut runner = TestRunner::new(Config::with_cases(12));
    let strategy = (any::<u64>(), 0u32..6, 1u32..4, 1usize..120, any::<bool>());
    runner
        .run(&strategy, |(seed, k, extra, n, reopen)| {
            let blocks = k + extra;
            prop_assume!(Permutations::new(k, blocks).is_ok());
            let settings = simhash_only(k, blocks);
            let u = url(c, "oracle", "");
            let mut db = Fpdb::builder().settings(settings).open(&u).unwrap();
            let fps = corpus(seed, n, k);
            store_with(&mut db, &fps);
            db.sync().unwrap();
            if reopen {
                drop(db);
                db = Fpdb::builder().read_only(true).open(&u).unwrap();
            }
            for (got, want) in lookups_and_brute_force(&db, &fps, seed, k) {
                prop_assert_eq!(got, want);
            }
            Ok(())
        })
        .unwrap();
}

/// As tests/store/reopen.rs on RocksDB: a namespace fed in two runs (two opens) answers like one
/// fed in one run, each decision equals the in-memory store's, merges survive reopening, and
/// other settings are refused naming both.
#[test]
fn redis_reopens_like_a_directory() {
    use common::export_outcomes as export;
    use fpdb::{Fpdb, OnExisting};
    let Some(c) = cluster() else { return };
    let docs = common::sample_docs();
    let u = url(c, "reopen", "");
    let mut mem = Fpdb::builder().open_in_memory().unwrap();
    let half = docs.len() / 2;
    for part in [&docs[..half], &docs[half..]] {
        let mut db = Fpdb::open(&u).unwrap();
        for d in part {
            let a = db.ingest_document(d, OnExisting::Skip).unwrap();
            let b = mem.ingest_document(d, OnExisting::Skip).unwrap();
            assert_eq!(a, b, "{}", d.id);
        }
        db.sync().unwrap();
    }
    let db = Fpdb::builder().read_only(true).open(&u).unwrap();
    assert_eq!(export(&db), export(&mem));
    assert_eq!(db.searcher().stats().documents, docs.len() as u64);
    db.searcher().verify().unwrap();
    let e = Fpdb::builder()
        .simhash_k(5)
        .open(&u)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("simhash_k") && e.contains('3') && e.contains('5'),
        "{e}"
    );
    // A namespace no one created is not found by a read-only open.
    let e = Fpdb::builder()
        .read_only(true)
        .open(url(c, "absent", ""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no fpdb store"), "{e}");
}
