//! One conformance suite for every `Store`: the engine relies on exactly these semantics.

use fpdb::store::{Batch, Cf, MemoryStore, RocksStore, Store};

mod common;
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
