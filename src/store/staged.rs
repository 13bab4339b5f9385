//! A write-staging layer over any [`Store`]: writes land in memory and reach the underlying
//! store as one atomic batch on [`Store::sync`] (group commit). Reads see staged writes first,
//! so the engine reads its own writes. After a crash the store holds exactly the batches that
//! were committed: every document of a committed group, none of an uncommitted one.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::{Batch, Cf, Entry, Maintenance, Op, Store};
use crate::error::Result;

type Pending = Vec<BTreeMap<Vec<u8>, Option<Vec<u8>>>>;

/// Staged writes over `base`.
pub struct Staged {
    base: std::sync::Arc<dyn Store>,
    pending: Mutex<Pending>,
    /// Whether anything is staged (set under the lock): reads of a store with nothing staged,
    /// such as the lookups of an ingest on all cores, go to the base without taking the lock.
    any: AtomicBool,
    /// Writes staged or committed through this layer so far ([`Staged::writes`]).
    writes: AtomicU64,
}

impl Staged {
    /// Wrap `base`.
    pub fn new(base: Box<dyn Store>) -> Self {
        Staged {
            base: std::sync::Arc::from(base),
            pending: Mutex::new(vec![BTreeMap::new(); Cf::ALL.len()]),
            any: AtomicBool::new(false),
            writes: AtomicU64::new(0),
        }
    }

    /// A layer of its own over the same base: it reads what was committed through `self`,
    /// never what `self` has staged.
    pub fn over_committed(&self) -> Self {
        Staged {
            base: std::sync::Arc::clone(&self.base),
            pending: Mutex::new(vec![BTreeMap::new(); Cf::ALL.len()]),
            any: AtomicBool::new(false),
            writes: AtomicU64::new(0),
        }
    }

    /// Whether anything is staged (not committed yet).
    pub fn any_staged(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// How many writes (staged or committed) went through this layer: equal numbers at two
    /// times mean nothing was written through it between them.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Acquire)
    }

    /// The store under the staged writes: what was committed, for readers on other threads
    /// (they never see the staged writes).
    pub fn committed(&self) -> std::sync::Arc<dyn Store> {
        std::sync::Arc::clone(&self.base)
    }

    /// Number of staged keys.
    pub fn staged(&self) -> usize {
        self.pending
            .lock()
            .expect("lock")
            .iter()
            .map(std::collections::BTreeMap::len)
            .sum()
    }

    /// Write every staged change to the base store as one batch (not synced).
    pub fn commit(&self) -> Result<()> {
        self.commit_with(Batch::new())
    }

    /// Write every staged change, then `extra` (changes never read before this commit), to
    /// the base store as one batch (not synced).
    pub fn commit_with(&self, extra: Batch) -> Result<()> {
        let mut pending = self.pending.lock().expect("lock");
        if pending.iter().all(std::collections::BTreeMap::is_empty) && extra.is_empty() {
            return Ok(());
        }
        let mut b = Batch::new();
        for (i, m) in pending.iter_mut().enumerate() {
            let cf = Cf::ALL[i];
            for (k, v) in std::mem::take(m) {
                match v {
                    Some(v) => b.put(cf, k, v),
                    None => b.delete(cf, k),
                }
            }
        }
        b.append(extra);
        self.writes.fetch_add(1, Ordering::AcqRel);
        let written = self.base.write(b);
        // Only now, with the base holding the changes (or the write failed): a read that
        // skips the lock must find them there.
        self.any.store(false, Ordering::Release);
        written
    }

    /// Drop every staged change.
    pub fn discard(&self) {
        let mut pending = self.pending.lock().expect("lock");
        for m in pending.iter_mut() {
            m.clear();
        }
        self.writes.fetch_add(1, Ordering::AcqRel);
        self.any.store(false, Ordering::Release);
    }
}

/// Visit the union of `base` and `staged` (both sorted by key) in key order; a staged entry
/// replaces the base entry with the same key, and a staged `None` hides it. Stops when `visit`
/// returns false.
fn merge(
    base: &[(Vec<u8>, Vec<u8>)],
    staged: &[Entry],
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) {
    let (mut i, mut j) = (0, 0);
    while i < base.len() || j < staged.len() {
        let take_staged = j < staged.len() && (i >= base.len() || staged[j].0 <= base[i].0);
        let keep_going = if take_staged {
            if i < base.len() && staged[j].0 == base[i].0 {
                i += 1;
            }
            let (k, v) = &staged[j];
            j += 1;
            v.as_ref().is_none_or(|v| visit(k, v))
        } else {
            let (k, v) = &base[i];
            i += 1;
            visit(k, v)
        };
        if !keep_going {
            return;
        }
    }
}

/// Changes of one column family, sorted by key (`None`: deleted).
pub(super) type Entries = Vec<Entry>;

/// [`Store::scan`] of `base` with `staged` (the changes in `[start, end)`, sorted) over it.
pub(super) fn scan_over(
    base: &dyn Store,
    cf: Cf,
    start: &[u8],
    end: &[u8],
    staged: &[Entry],
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    if start >= end {
        return Ok(());
    }
    if staged.is_empty() {
        return base.scan(cf, start, end, visit);
    }
    // Merge the base range with the staged one; staged entries win.
    let mut found = Vec::new();
    base.scan(cf, start, end, &mut |k, v| {
        found.push((k.to_vec(), v.to_vec()));
        true
    })?;
    merge(&found, staged, visit);
    Ok(())
}

/// [`Store::scan_ranges`] of `base` with `staged[i]` (the changes in `ranges[i]`, sorted) over
/// it.
pub(super) fn scan_ranges_over(
    base: &dyn Store,
    cf: Cf,
    ranges: &[(&[u8], &[u8])],
    staged: &[&[Entry]],
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    if staged.iter().all(|s| s.is_empty()) {
        return base.scan_ranges(cf, ranges, visit);
    }
    // One pass over the base store for every range (ranges are visited in order, so a key
    // belongs to the first range at or after the current one that contains it), then a
    // merge per range with the staged entries.
    let mut found: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); ranges.len()];
    let mut cur = 0;
    base.scan_ranges(cf, ranges, &mut |k, v| {
        while cur < ranges.len() && !(ranges[cur].0 <= k && k < ranges[cur].1) {
            cur += 1;
        }
        if let Some(b) = found.get_mut(cur) {
            b.push((k.to_vec(), v.to_vec()));
        }
        true
    })?;
    for (b, st) in found.iter().zip(staged) {
        merge(b, st, visit);
    }
    Ok(())
}

impl Store for Staged {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if !self.any.load(Ordering::Acquire) {
            return self.base.get(cf, key);
        }
        if let Some(v) = self.pending.lock().expect("lock")[cf.index()].get(key) {
            return Ok(v.clone());
        }
        self.base.get(cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        if !self.any.load(Ordering::Acquire) {
            return self.base.scan(cf, start, end, visit);
        }
        let staged: Entries = self.pending.lock().expect("lock")[cf.index()]
            .range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        scan_over(self.base.as_ref(), cf, start, end, &staged, visit)
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if !self.any.load(Ordering::Acquire) {
            return self.base.scan_ranges(cf, ranges, visit);
        }
        let staged: Vec<Entries> = {
            let pending = self.pending.lock().expect("lock");
            let m = &pending[cf.index()];
            if m.is_empty() {
                drop(pending);
                return self.base.scan_ranges(cf, ranges, visit);
            }
            ranges
                .iter()
                .map(|(s, e)| {
                    if s >= e {
                        return Vec::new();
                    }
                    m.range::<[u8], _>((Bound::Included(*s), Bound::Excluded(*e)))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .collect()
        };
        let staged: Vec<&[Entry]> = staged.iter().map(|e| &e[..]).collect();
        scan_ranges_over(self.base.as_ref(), cf, ranges, &staged, visit)
    }

    fn write(&self, batch: Batch) -> Result<()> {
        if self.base.read_only() {
            return Err(crate::error::Error::ReadOnly);
        }
        let mut pending = self.pending.lock().expect("lock");
        if !batch.is_empty() {
            self.any.store(true, Ordering::Release);
            self.writes.fetch_add(1, Ordering::AcqRel);
        }
        for op in batch.ops {
            match op {
                Op::Put(cf, k, v) => {
                    pending[cf.index()].insert(k, Some(v));
                }
                Op::Delete(cf, k) => {
                    pending[cf.index()].insert(k, None);
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.commit()?;
        self.base.sync()
    }

    /// The base store's: it covers what was committed ([`Staged::commit`]), not what is
    /// still staged.
    fn flush(&self) -> Result<()> {
        self.commit()?;
        self.base.flush()
    }

    /// Its own, when the base has one: a copy and a compaction cover what is staged too.
    fn maintenance(&self) -> Option<&dyn Maintenance> {
        self.base.maintenance().map(|_| self as &dyn Maintenance)
    }

    // Passed to the base store as they are.
    crate::store::forward! {
        settle, syncer, last_sequence, read_only, lease, read_ahead, presence_filter,
    }
}

/// The base store's [`Maintenance`]; a copy and a compaction commit what is staged first.
impl Maintenance for Staged {
    fn checkpoint(&self, dir: &std::path::Path) -> Result<()> {
        self.commit()?;
        super::base_maintenance(&*self.base).checkpoint(dir)
    }

    fn compact(&self) -> Result<()> {
        self.commit()?;
        super::base_maintenance(&*self.base).compact()
    }

    fn verify_checksums(&self) -> Result<()> {
        super::base_maintenance(&*self.base).verify_checksums()
    }

    fn cf_sizes(&self) -> Vec<(&'static str, u64)> {
        super::base_maintenance(&*self.base).cf_sizes()
    }

    fn disk_size(&self) -> u64 {
        super::base_maintenance(&*self.base).disk_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryStore, RocksStore};

    /// A store without files offers no maintenance, staged or not (nor a lease: one writer);
    /// a staged store over RocksDB offers its own, whose copy holds what was staged and not
    /// yet committed.
    #[test]
    fn a_copy_through_the_staged_store_holds_what_is_staged() {
        assert!(MemoryStore::new().maintenance().is_none());
        let memory = Staged::new(Box::new(MemoryStore::new()));
        assert!(memory.maintenance().is_none() && memory.lease().is_none());
        let tmp = tempfile::tempdir().unwrap();
        let base = RocksStore::open(&tmp.path().join("store"), true).unwrap();
        let staged = Staged::new(Box::new(base));
        let mut batch = Batch::new();
        batch.put(Cf::Meta, b"staged".to_vec(), b"yes".to_vec());
        staged.write(batch).unwrap();
        let m = staged.maintenance().expect("a staged store over RocksDB");
        m.checkpoint(&tmp.path().join("copy")).unwrap();
        let copy = RocksStore::open_read_only(&tmp.path().join("copy")).unwrap();
        assert_eq!(
            copy.get(Cf::Meta, b"staged").unwrap(),
            Some(b"yes".to_vec())
        );
        assert!(m.disk_size() > 0);
    }
}
