//! The semantics every `Store` must have (run by tests/store/conformance.rs and, on a Redis
//! Cluster, by tests/store/redis.rs).

use fpdb::store::{Batch, Cf, Store};

pub fn collect(s: &dyn Store, cf: Cf, start: &[u8], end: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    s.scan(cf, start, end, &mut |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    out
}

pub fn conformance(s: &dyn Store) {
    // Empty store.
    assert_eq!(s.get(Cf::Docs, b"a").unwrap(), None);
    assert!(collect(s, Cf::Docs, b"", b"\xff").is_empty());

    // Batches span column families; families are separate key spaces.
    let mut b = Batch::new();
    b.put(Cf::Docs, b"k1".to_vec(), b"d1".to_vec());
    b.put(Cf::DocIds, b"k1".to_vec(), b"i1".to_vec());
    b.put(Cf::Docs, b"k3".to_vec(), b"d3".to_vec());
    b.put(Cf::Docs, b"k2".to_vec(), b"d2".to_vec());
    s.write(b).unwrap();
    assert_eq!(s.get(Cf::Docs, b"k1").unwrap().as_deref(), Some(&b"d1"[..]));
    assert_eq!(
        s.get(Cf::DocIds, b"k1").unwrap().as_deref(),
        Some(&b"i1"[..])
    );
    assert_eq!(s.get(Cf::DocIds, b"k2").unwrap(), None);

    // Scans are ordered, start-inclusive, end-exclusive, and stop when asked.
    let all = collect(s, Cf::Docs, b"k", b"l");
    assert_eq!(
        all.iter().map(|(k, _)| k.as_slice()).collect::<Vec<_>>(),
        [b"k1", b"k2", b"k3"]
    );
    let mid = collect(s, Cf::Docs, b"k2", b"k3");
    assert_eq!(mid, vec![(b"k2".to_vec(), b"d2".to_vec())]);
    assert!(collect(s, Cf::Docs, b"k3", b"k2").is_empty());
    let mut n = 0;
    s.scan(Cf::Docs, b"", b"\xff", &mut |_, _| {
        n += 1;
        false
    })
    .unwrap();
    assert_eq!(n, 1);

    // Several ranges in one call, in order; `false` ends only the current range.
    let mut seen = Vec::new();
    s.scan_ranges(
        Cf::Docs,
        &[(b"k3", b"k4"), (b"k1", b"k3"), (b"x", b"y")],
        &mut |k, _| {
            seen.push(k.to_vec());
            k != b"k1"
        },
    )
    .unwrap();
    assert_eq!(seen, [b"k3".to_vec(), b"k1".to_vec()]);

    // Later operations in a batch win; deletes remove; empty values are kept.
    let mut b = Batch::new();
    b.put(Cf::Docs, b"k1".to_vec(), b"x".to_vec());
    b.delete(Cf::Docs, b"k1".to_vec());
    b.delete(Cf::Docs, b"k2".to_vec());
    b.put(Cf::Docs, b"k2".to_vec(), b"y".to_vec());
    b.put(Cf::Simhash, vec![0u8; 17], Vec::new());
    s.write(b).unwrap();
    assert_eq!(s.get(Cf::Docs, b"k1").unwrap(), None);
    assert_eq!(s.get(Cf::Docs, b"k2").unwrap().as_deref(), Some(&b"y"[..]));
    assert_eq!(
        s.get(Cf::Simhash, &[0u8; 17]).unwrap().as_deref(),
        Some(&b""[..])
    );

    // Binary keys order bytewise (big-endian integers order numerically).
    let mut b = Batch::new();
    for v in [300u64, 2, 70000, 1 << 40] {
        b.put(Cf::Clusters, v.to_be_bytes().to_vec(), vec![1]);
    }
    s.write(b).unwrap();
    let keys: Vec<u64> = collect(s, Cf::Clusters, &[0; 8], &[0xff; 9])
        .into_iter()
        .map(|(k, _)| u64::from_be_bytes(k.try_into().unwrap()))
        .collect();
    assert_eq!(keys, [2, 300, 70000, 1 << 40]);
    s.sync().unwrap();
    assert!(!s.read_only());
}
