//! One conformance suite for every `Store`: the engine relies on exactly these semantics.

use fpdb::store::{Batch, Cf, MemoryStore, ReadAhead, RocksStore, Store};

use crate::common;
use common::conformance::{collect, conformance};

#[test]
fn memory_store_conforms() {
    conformance(&MemoryStore::new());
}

#[test]
fn staged_store_conforms_before_and_after_commit() {
    use fpdb::store::Staged;
    let dir = tempfile::tempdir().unwrap();
    let staged = Staged::new(Box::new(
        RocksStore::open(&dir.path().join("db"), true).unwrap(),
    ));
    conformance(&staged);
    // Reads merge staged and committed data: commit, stage more, scan across both.
    staged.commit().unwrap();
    let mut b = Batch::new();
    b.put(Cf::Docs, b"k25".to_vec(), b"staged".to_vec());
    b.delete(Cf::Docs, b"k3".to_vec());
    staged.write(b).unwrap();
    let keys: Vec<Vec<u8>> = collect(&staged, Cf::Docs, b"k", b"l")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, [b"k2".to_vec(), b"k25".to_vec()]);
    staged.discard();
    assert_eq!(collect(&staged, Cf::Docs, b"k", b"l").len(), 2);
}

#[test]
fn rocks_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    conformance(&RocksStore::open(&dir.path().join("db"), true).unwrap());
}

#[test]
fn write_behind_store_conforms_and_reopens_with_every_write() {
    use fpdb::store::WriteBehind;
    let dir = tempfile::tempdir().unwrap();
    conformance(
        &WriteBehind::new(Box::new(
            RocksStore::open(&dir.path().join("c"), true).unwrap(),
        ))
        .unwrap(),
    );
    let p = dir.path().join("db");
    {
        let s = WriteBehind::new(Box::new(RocksStore::open(&p, true).unwrap())).unwrap();
        // Many batches in a row, each read back at once (from memory or RocksDB, whichever
        // holds it then), the last one still in flight when the store is dropped.
        for i in 0..200u32 {
            let mut b = Batch::new();
            b.put(Cf::Docs, i.to_be_bytes().to_vec(), b"v".to_vec());
            if i > 0 {
                b.delete(Cf::Docs, (i - 1).to_be_bytes().to_vec());
            }
            s.write(b).unwrap();
            let keys: Vec<Vec<u8>> = collect(&s, Cf::Docs, &[0; 4], &[0xff; 4])
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            assert_eq!(keys, [i.to_be_bytes().to_vec()], "after batch {i}");
        }
    }
    let s = RocksStore::open_read_only(&p).unwrap();
    let keys: Vec<Vec<u8>> = collect(&s, Cf::Docs, &[0; 4], &[0xff; 4])
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, [199u32.to_be_bytes().to_vec()]);
}

#[test]
fn rocks_store_keeps_synced_writes_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    {
        let s = RocksStore::open(&p, true).unwrap();
        let mut b = Batch::new();
        b.put(Cf::Meta, b"k".to_vec(), b"v".to_vec());
        s.write(b).unwrap();
        s.sync().unwrap();
    }
    let s = RocksStore::open_read_only(&p).unwrap();
    assert_eq!(s.get(Cf::Meta, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(s.read_only());
    assert!(matches!(s.write(Batch::new()), Err(fpdb::Error::ReadOnly)));
}

#[test]
fn second_writer_is_refused_as_locked() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let _first = RocksStore::open(&p, true).unwrap();
    match RocksStore::open(&p, true) {
        Err(fpdb::Error::Locked { path }) => assert_eq!(path, p),
        other => panic!("expected Locked, got {other:?}"),
    }
    // Readers are not blocked by the writer.
    RocksStore::open_read_only(&p).unwrap();
}

#[test]
fn missing_store_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        RocksStore::open(&dir.path().join("nope"), false),
        Err(fpdb::Error::NotFound { .. })
    ));
}

#[test]
fn presence_filter_store_conforms_and_finds_every_prefix() {
    use fpdb::store::{schema, Presence};
    conformance(&Presence::new(Box::new(MemoryStore::new())).unwrap());
    // Keys written before the filter exists are found through its scan, keys written after
    // through `write`; an absent prefix finds nothing; total-order ranges pass through.
    let base = MemoryStore::new();
    let posting = |h: u64, seq: u64| {
        let mut k = h.to_be_bytes().to_vec();
        k.extend(seq.to_be_bytes());
        k
    };
    let mut b = Batch::new();
    for h in [1u64, 1 << 40, u64::MAX - 3] {
        b.put(Cf::Nshash, posting(h, 7), b"c".to_vec());
    }
    base.write(b).unwrap();
    let s = Presence::new(Box::new(base)).unwrap();
    let mut b = Batch::new();
    b.put(Cf::Nshash, posting(99, 8), b"d".to_vec());
    s.write(b).unwrap();
    let found = |h: u64| {
        let (start, end) = schema::nshash_range(h);
        let mut n = 0;
        s.scan_ranges(Cf::Nshash, &[(&start[..], &end[..])], &mut |_, _| {
            n += 1;
            true
        })
        .unwrap();
        n
    };
    for h in [1u64, 1 << 40, u64::MAX - 3, 99] {
        assert_eq!(found(h), 1, "hash {h}");
    }
    assert_eq!(found(2), 0);
    assert_eq!(collect(&s, Cf::Nshash, b"", &[0xff; 17]).len(), 4);
}

/// A store a round trip away, as the engine sees it: a memory store whose [`ReadAhead`]
/// records what it was told to read ahead and when it was told to drop it.
#[derive(Default)]
struct ReadsAhead {
    base: MemoryStore,
    told: std::sync::Mutex<Vec<(Cf, Vec<u8>)>>,
    ended: std::sync::atomic::AtomicUsize,
}

impl ReadAhead for ReadsAhead {
    fn prefetch(&self, cf: Cf, ranges: &[(&[u8], &[u8])]) -> fpdb::Result<()> {
        let mut told = self.told.lock().unwrap();
        told.extend(ranges.iter().map(|(s, _)| (cf, s.to_vec())));
        Ok(())
    }
    fn prefetch_keys(&self, cf: Cf, keys: &[&[u8]]) -> fpdb::Result<()> {
        let mut told = self.told.lock().unwrap();
        told.extend(keys.iter().map(|k| (cf, k.to_vec())));
        Ok(())
    }
    fn end_prefetch(&self) {
        self.ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Shares its state with the test through an `Arc`, as the engine owns the store.
struct Shared(std::sync::Arc<ReadsAhead>);

impl Store for Shared {
    fn get(&self, cf: Cf, key: &[u8]) -> fpdb::Result<Option<Vec<u8>>> {
        self.0.base.get(cf, key)
    }
    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> fpdb::Result<()> {
        self.0.base.scan(cf, start, end, visit)
    }
    fn write(&self, batch: Batch) -> fpdb::Result<()> {
        self.0.base.write(batch)
    }
    fn sync(&self) -> fpdb::Result<()> {
        self.0.base.sync()
    }
    fn read_only(&self) -> bool {
        false
    }
    fn read_ahead(&self) -> Option<&dyn ReadAhead> {
        Some(&*self.0)
    }
}

#[test]
fn a_store_that_reads_ahead_is_told_each_batchs_reads_through_the_wrappers() {
    // The wrappers pass the capability on; a store without it offers none.
    let remote = std::sync::Arc::new(ReadsAhead::default());
    let staged = fpdb::store::Staged::new(Box::new(Shared(remote.clone())));
    assert!(staged.read_ahead().is_some());
    assert!(fpdb::store::Staged::new(Box::new(MemoryStore::new()))
        .read_ahead()
        .is_none());
    assert!(MemoryStore::new().read_ahead().is_none());

    // A batch's ingest tells it the batch's ids and lookups first, and drops them after.
    let mut db = fpdb::Fpdb::builder()
        .open_store(Box::new(Shared(remote.clone())))
        .unwrap();
    let docs: Vec<fpdb::Document> = ["first-doc", "second-doc"]
        .iter()
        .map(|id| {
            fpdb::Document::new(
                *id,
                format!(
                    "{id} 这是一篇用来测试预读的文章，内容足够长，可以算出指纹。第二句话也在这里。"
                ),
            )
        })
        .collect();
    let batch: Vec<_> = docs
        .iter()
        .map(|d| (d, db.fingerprint_document(d)))
        .collect();
    let ended_before = remote.ended.load(std::sync::atomic::Ordering::SeqCst);
    let out = db.ingest_batch(batch, fpdb::OnExisting::Skip);
    assert!(out.error.is_none(), "{:?}", out.error);
    let told = remote.told.lock().unwrap().clone();
    for id in ["first-doc", "second-doc"] {
        assert!(
            told.contains(&(Cf::DocIds, id.as_bytes().to_vec())),
            "{id} was not read ahead: {told:?}"
        );
    }
    assert!(told.iter().any(|(cf, _)| *cf == Cf::Nshash));
    assert!(remote.ended.load(std::sync::atomic::Ordering::SeqCst) > ended_before);
}
