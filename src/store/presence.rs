//! An in-memory presence filter in front of any store, for long-running processes
//! (`fpdb serve`): for the column families scanned by prefix (`nshash`, `simhash`), a Bloom
//! filter of every key prefix written, so that a scan of one prefix that no key has returns
//! at once instead of seeking every table file (RocksDB's own filters answer the same
//! question, at a few microseconds per seek; most lookups of new documents ask only such
//! questions).
//!
//! Exact by construction: every prefix in the base store was inserted when the filter was
//! built (a full scan at open) or is inserted by [`Store::write`] before the base store sees
//! the write, and Bloom filters have no false negatives; a false positive only costs the seek.
//! Deleted keys stay in the filter (a false positive). Memory: ~10 bits per key, sized at open
//! for twice the keys found (at least a million more).

use std::sync::atomic::{AtomicU64, Ordering};

use super::rocks::{prefix_len, within_prefix};
use super::{Batch, Cf, Op, Store};
use crate::error::Result;

/// Hash positions per key (~1% false positives at 10 bits per key).
const PROBES: u64 = 7;

/// A Bloom filter whose bits are set with atomic ORs, so readers need no lock.
struct Bloom {
    words: Vec<AtomicU64>,
    mask: u64,
}

impl Bloom {
    fn with_capacity(keys: u64) -> Bloom {
        let bits = (keys.saturating_mul(10)).max(1 << 16).next_power_of_two();
        Bloom {
            words: (0..bits / 64).map(|_| AtomicU64::new(0)).collect(),
            mask: bits - 1,
        }
    }

    fn positions(&self, prefix: &[u8]) -> impl Iterator<Item = u64> + '_ {
        // splitmix64 of the prefix bytes (at most 8 are used: the prefixes are 4 and 8 bytes).
        let mut x = prefix.len() as u64;
        for &b in prefix.iter().take(8) {
            x = (x << 8) | u64::from(b);
        }
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        let (h1, h2) = (x, (x >> 32) | 1);
        (0..PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) & self.mask)
    }

    fn insert(&self, prefix: &[u8]) {
        for p in self.positions(prefix) {
            self.words[(p >> 6) as usize].fetch_or(1 << (p & 63), Ordering::Relaxed);
        }
    }

    fn may_contain(&self, prefix: &[u8]) -> bool {
        self.positions(prefix)
            .all(|p| self.words[(p >> 6) as usize].load(Ordering::Relaxed) & (1 << (p & 63)) != 0)
    }
}

/// `base` with presence filters on its prefix-scanned column families.
pub struct Presence {
    base: Box<dyn Store>,
    filters: Vec<Option<Bloom>>,
}

impl Presence {
    /// Wrap `base`, reading every key of its prefix-scanned column families once (two passes:
    /// count, then insert).
    pub fn new(base: Box<dyn Store>) -> Result<Presence> {
        let mut filters = Vec::with_capacity(Cf::ALL.len());
        for cf in Cf::ALL {
            let Some(n) = prefix_len(cf) else {
                filters.push(None);
                continue;
            };
            let end = [0xffu8; 32];
            let mut keys = 0u64;
            base.scan(cf, &[], &end, &mut |_, _| {
                keys += 1;
                true
            })?;
            let bloom = Bloom::with_capacity(keys.saturating_mul(2).max(keys + (1 << 20)));
            base.scan(cf, &[], &end, &mut |k, _| {
                bloom.insert(&k[..n.min(k.len())]);
                true
            })?;
            filters.push(Some(bloom));
        }
        Ok(Presence { base, filters })
    }

    /// Whether `[start, end)` may hold a key: false only when the range lies within one prefix
    /// that was never written.
    fn may_hold(&self, cf: Cf, start: &[u8], end: &[u8]) -> bool {
        match (&self.filters[cf.index()], prefix_len(cf)) {
            (Some(bloom), Some(n)) if within_prefix(cf, start, end) => {
                bloom.may_contain(&start[..n])
            }
            _ => true,
        }
    }
}

impl Store for Presence {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.base.get(cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if !self.may_hold(cf, start, end) {
            return Ok(());
        }
        self.base.scan(cf, start, end, visit)
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let kept: Vec<(&[u8], &[u8])> = ranges
            .iter()
            .copied()
            .filter(|(s, e)| self.may_hold(cf, s, e))
            .collect();
        if kept.is_empty() {
            return Ok(());
        }
        self.base.scan_ranges(cf, &kept, visit)
    }

    fn write(&self, batch: Batch) -> Result<()> {
        // Into the filter first: a reader that sees the key in the base store finds its prefix.
        for op in batch.ops() {
            if let Op::Put(cf, k, _) = op {
                if let (Some(bloom), Some(n)) = (&self.filters[cf.index()], prefix_len(*cf)) {
                    bloom.insert(&k[..n.min(k.len())]);
                }
            }
        }
        self.base.write(batch)
    }

    fn sync(&self) -> Result<()> {
        self.base.sync()
    }

    fn syncer(&self) -> Option<super::Syncer> {
        self.base.syncer()
    }

    fn flush(&self) -> Result<()> {
        self.base.flush()
    }

    fn read_only(&self) -> bool {
        self.base.read_only()
    }

    fn shared(&self) -> bool {
        self.base.shared()
    }

    fn prefetch(&self, cf: Cf, ranges: &[(&[u8], &[u8])]) -> Result<()> {
        self.base.prefetch(cf, ranges)
    }

    fn prefetch_keys(&self, cf: Cf, keys: &[&[u8]]) -> Result<()> {
        self.base.prefetch_keys(cf, keys)
    }

    fn end_prefetch(&self) {
        self.base.end_prefetch()
    }

    fn acquire_writer(&self) -> Result<()> {
        self.base.acquire_writer()
    }

    fn release_writer(&self) -> Result<()> {
        self.base.release_writer()
    }

    fn checkpoint(&self, dir: &std::path::Path) -> Result<()> {
        self.base.checkpoint(dir)
    }

    fn compact(&self) -> Result<()> {
        self.base.compact()
    }

    fn verify_checksums(&self) -> Result<()> {
        self.base.verify_checksums()
    }

    fn cf_sizes(&self) -> Vec<(&'static str, u64)> {
        self.base.cf_sizes()
    }

    fn disk_size(&self) -> u64 {
        self.base.disk_size()
    }
}
