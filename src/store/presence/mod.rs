//! An in-memory presence filter in front of any store: for the column families scanned by
//! prefix (`nshash`, `simhash`), a Bloom filter of every key prefix written, so that a scan of
//! one prefix that no key has returns at once instead of seeking every table file (RocksDB's
//! own filters answer the same question, at a few microseconds per seek; most lookups of new
//! documents ask only such questions).
//!
//! Exact by construction: every prefix in the base store was inserted when the filter was
//! built (a full scan, an empty store, or a saved filter of exactly this store state) or is
//! inserted by [`Store::write`] before the base store sees the write, and Bloom filters have
//! no false negatives; a false positive only costs the seek. Deleted keys stay in the filter
//! (a false positive). Memory: ~10 bits per key.
//!
//! The filter grows in layers: when the newest layer holds as many keys as it was sized for,
//! a layer twice its size is added (a lookup asks every layer), so a filter started on an
//! empty store stays selective however many documents the store takes.
//!
//! Saved with the store (`fpdb-presence` in a RocksDB store's directory) by
//! [`PresenceFilter::save`] and when dropped, tagged with the store's state: its RocksDB
//! identity, last write sequence number and next document seq. An open uses it as it is when
//! nothing was written since the save ([`Fit::Current`]); when this same store was written
//! since (a run that was killed, or kept no filter), it holds every key of the saved state and
//! the opener reads the documents written since (seqs only grow: those from the saved next
//! seq on) into it ([`Fit::Behind`], [`PresenceFilter::note_present`]). A file of another store, of a
//! later state (a store directory put back from an older copy) or damaged is never used, and
//! is removed by the next writer.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

mod bloom;
mod file;

use bloom::{Bloom, Layers, FIRST_LAYER_KEYS, MAX_FAMILY_BYTES};
use file::{load, State};
pub use file::{remove_unusable, saved, Fit, FILE_NAME};

use super::{Batch, Cf, Op, PresenceFilter, Store};
use crate::error::{Error, Result};

/// A write of at least this many changes is inserted into the filter on several threads (a
/// batch of an ingest holds tens of thousands).
const PARALLEL_INSERTS: usize = 4096;

/// How a new [`Presence`] filter starts (a saved one is loaded by [`Presence::load_saved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Every key of the base store read once.
    Scan,
    /// Empty: the base store holds no key of the filtered families.
    Empty,
}

/// `base` with presence filters on its prefix-scanned column families.
pub struct Presence {
    base: Box<dyn Store>,
    filters: Vec<Option<Layers>>,
    /// Where the filter is saved (a RocksDB store's directory), if anywhere.
    dir: Option<PathBuf>,
    /// Whether the filter holds writes the saved file lacks.
    dirty: AtomicBool,
}

impl Presence {
    /// Wrap `base`, reading every key of its prefix-scanned column families once. Not saved
    /// anywhere.
    pub fn new(base: Box<dyn Store>) -> Result<Presence> {
        Self::start(base, None, Start::Scan)
    }

    /// Wrap `base` (a store in `dir`, where the filter is saved, when given) with a new filter
    /// started as `start` says.
    pub fn start(base: Box<dyn Store>, dir: Option<&Path>, start: Start) -> Result<Presence> {
        let filters = match start {
            // One pass per family, the families on threads of their own, each filter sized
            // from the store's estimate of its keys (layers are added if it was low).
            Start::Scan => std::thread::scope(|scope| {
                let jobs: Vec<_> = Cf::ALL
                    .iter()
                    .map(|&cf| {
                        let base = &base;
                        cf.scan_prefix().map(|n| {
                            scope.spawn(move || -> Result<Layers> {
                                let keys = base.estimate_keys(cf).unwrap_or(0);
                                // Sized for the keys and half as many more, within the
                                // family's most memory.
                                let most = MAX_FAMILY_BYTES * 8 / 10;
                                let layers = Layers::new(Bloom::with_capacity(
                                    keys.saturating_add(keys / 2)
                                        .max(FIRST_LAYER_KEYS)
                                        .min(most),
                                ));
                                let end = [0xffu8; 32];
                                base.scan(cf, &[], &end, &mut |k, _| {
                                    layers.insert(&k[..n.min(k.len())]);
                                    true
                                })?;
                                Ok(layers)
                            })
                        })
                    })
                    .collect();
                jobs.into_iter()
                    .map(|j| match j {
                        None => Ok(None),
                        Some(h) => h.join().expect("a filter scan panicked").map(Some),
                    })
                    .collect::<Result<Vec<_>>>()
            })?,
            Start::Empty => Cf::ALL
                .iter()
                .map(|&cf| {
                    cf.scan_prefix()
                        .map(|_| Layers::new(Bloom::with_capacity(FIRST_LAYER_KEYS)))
                })
                .collect(),
        };
        Ok(Presence {
            base,
            filters,
            dir: dir.map(Path::to_path_buf),
            dirty: AtomicBool::new(true),
        })
    }

    /// Wrap `base` (the store in `dir`) with the filter saved in `dir` when it fits the
    /// store's present state, with how it fits ([`Fit::Behind`]: the caller must read the
    /// documents written since into it, [`PresenceFilter::note_present`], before any lookup);
    /// `Err(base)` back otherwise. An unusable saved file is removed when `base` is writable.
    #[allow(clippy::type_complexity)]
    pub fn load_saved(
        base: Box<dyn Store>,
        dir: &Path,
    ) -> Result<std::result::Result<(Presence, Fit), Box<dyn Store>>> {
        let file = dir.join(FILE_NAME);
        match State::of(base.as_ref(), dir).and_then(|now| load(&file, &now, base.as_ref())) {
            Some((filters, fit, v2)) => Ok(Ok((
                Presence {
                    base,
                    filters,
                    dir: Some(dir.to_path_buf()),
                    // Saved again (at the new state) once caught up, and a version 2
                    // file in the present version.
                    dirty: AtomicBool::new(fit != Fit::Current || v2),
                },
                fit,
            ))),
            None => {
                remove_unusable(base.as_ref(), dir)?;
                Ok(Err(base))
            }
        }
    }

    /// Memory the filters take, in bytes.
    pub fn bytes(&self) -> u64 {
        self.filters.iter().flatten().map(Layers::bytes).sum()
    }

    /// Whether `[start, end)` may hold a key: false only when the range lies within one prefix
    /// that was never written.
    fn may_hold(&self, cf: Cf, start: &[u8], end: &[u8]) -> bool {
        match (self.filters.get(cf.index()), cf.scan_prefix()) {
            (Some(Some(layers)), Some(n)) if cf.within_prefix(start, end) => {
                layers.may_contain(&start[..n])
            }
            _ => true,
        }
    }

    /// Put the prefix of `key` (of family `cf`) into its filter, if the family has one.
    fn insert(&self, cf: Cf, key: &[u8]) {
        if let (Some(Some(layers)), Some(n)) = (self.filters.get(cf.index()), cf.scan_prefix()) {
            layers.insert(&key[..n.min(key.len())]);
        }
    }

    /// Save the filter next to the store, tagged with its present state (when it has a place
    /// and holds writes the saved file lacks). Written to a temporary file and renamed, so a
    /// crash leaves the old file or the new one, whole.
    pub fn save(&self) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        if self.base.read_only() || !self.dirty.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(state) = State::of(self.base.as_ref(), dir) else {
            return Ok(());
        };
        let file = dir.join(FILE_NAME);
        let tmp = dir.join(format!("{FILE_NAME}.tmp"));
        if let Err(e) = file::write(&tmp, &file, &state, &self.filters) {
            // The old file (if any) stays, and no longer matches the store: it is ignored.
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(&file, e));
        }
        self.dirty.store(false, Ordering::Relaxed);
        Ok(())
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        // Best effort: a filter not saved is rebuilt or done without by the next open.
        let _ = self.save();
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
        // Any write changes the store's state: the saved filter no longer matches it.
        self.dirty.store(true, Ordering::Relaxed);
        // Into the filter first: a reader that sees the key in the base store finds its prefix.
        let insert = |ops: &[Op]| {
            for (i, filter) in self.filters.iter().enumerate() {
                let (Some(layers), Some(n)) = (filter, Cf::ALL[i].scan_prefix()) else {
                    continue;
                };
                layers.insert_all(ops.iter().filter_map(|op| match op {
                    Op::Put(cf, k, _) if cf.index() == i => Some(&k[..n.min(k.len())]),
                    _ => None,
                }));
            }
        };
        // The filter's bits are atomic: a large batch is inserted on all threads of the pool
        // the caller runs on (an ingest commits on its idle lookup threads). A caller outside
        // any pool inserts alone: its work would wait behind the global pool's.
        if rayon::current_thread_index().is_some() && batch.len() >= PARALLEL_INSERTS {
            // Two shares per thread (in shares of 4,096, a batch kept 7 of 16 threads busy).
            let share = batch
                .len()
                .div_ceil(2 * rayon::current_num_threads())
                .max(512);
            batch.ops().par_chunks(share).for_each(insert);
        } else {
            insert(batch.ops());
        }
        self.base.write(batch)
    }

    fn sync(&self) -> Result<()> {
        self.base.sync()
    }

    fn presence_filter(&self) -> Option<&dyn PresenceFilter> {
        Some(self)
    }

    // Passed to the base store as they are.
    crate::store::forward! {
        settle, syncer, flush, last_sequence, read_only, lease, maintenance, read_ahead,
    }
}

impl PresenceFilter for Presence {
    fn save(&self) -> Result<()> {
        Presence::save(self)
    }

    fn bytes(&self) -> u64 {
        Presence::bytes(self)
    }

    fn note_present(&self, cf: Cf, key: &[u8]) {
        self.dirty.store(true, Ordering::Relaxed);
        self.insert(cf, key);
    }

    fn forget_saved(&self) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let file = dir.join(FILE_NAME);
        match std::fs::remove_file(&file) {
            Ok(()) => {
                self.dirty.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&file, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::file::{MAGIC, MAGIC_2};
    use super::*;
    use crate::store::schema::{self, meta};
    use crate::store::RocksStore;

    fn posting(i: u64) -> Vec<u8> {
        let mut k = i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes().to_vec();
        k.extend_from_slice(&i.to_be_bytes());
        k
    }

    fn write(s: &dyn Store, range: std::ops::Range<u64>) {
        let mut b = Batch::new();
        for i in range {
            b.put(Cf::Nshash, posting(i), Vec::new());
        }
        s.write(b).unwrap();
    }

    fn saved(dir: &Path) -> std::result::Result<Presence, Box<dyn Store>> {
        saved_fit(dir).map(|(p, _)| p)
    }

    fn saved_fit(dir: &Path) -> std::result::Result<(Presence, Fit), Box<dyn Store>> {
        let base = Box::new(RocksStore::open(dir, false).unwrap());
        Presence::load_saved(base, dir).unwrap()
    }

    /// A document `id` stored at seq `seq - 1`, and `seq` the next one.
    fn next_doc(s: &dyn Store, seq: u64, id: &str) {
        let rec = schema::DocRecord {
            id: id.into(),
            similar_id: 1,
            ..Default::default()
        };
        let mut b = Batch::new();
        b.put(Cf::Docs, schema::u64_key(seq - 1), schema::encode_doc(&rec));
        b.put(Cf::Meta, meta::NEXT_SEQ, schema::u64_key(seq).to_vec());
        s.write(b).unwrap();
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }

    #[test]
    fn saved_filter_is_used_only_for_the_state_it_was_saved_at() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        {
            let base = Box::new(RocksStore::open(path, true).unwrap());
            let p = Presence::start(base, Some(path), Start::Empty).unwrap();
            write(&p, 0..5000);
            p.flush().unwrap();
            p.save().unwrap();
        }
        assert!(path.join(FILE_NAME).exists());
        // Reopened unchanged: the saved filter, with every key written before.
        {
            let p = saved(path)
                .ok()
                .expect("the saved filter matches the store");
            for i in 0..5000 {
                let k = posting(i);
                assert!(p.may_hold(Cf::Nshash, &k[..8], &[&k[..8], &[0xff; 9][..]].concat()));
            }
            // Written through the filter, then dropped without a flush: saved again.
            write(&p, 5000..6000);
        }
        {
            let p = saved(path).ok().expect("saved when dropped");
            let k = posting(5500);
            assert!(p.may_hold(Cf::Nshash, &k[..8], &[&k[..8], &[0xff; 9][..]].concat()));
        }
        // A writer without the filter changes the store: the file is behind it, from the
        // next document seq it was saved at.
        {
            let s = RocksStore::open(path, false).unwrap();
            write(&s, 6000..6001);
            next_doc(&s, 7, "d6");
        }
        let (p, fit) = saved_fit(path)
            .ok()
            .expect("of an earlier state of this store");
        assert_eq!(
            fit,
            Fit::Behind {
                from: 1,
                documents: 6
            }
        );
        drop(p);
        assert_eq!(
            saved_fit(path).ok().map(|(_, f)| f),
            Some(Fit::Current),
            "saved caught up"
        );
    }

    #[test]
    fn a_filter_of_a_later_state_or_another_store_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let (path, early, other) = (
            dir.path().join("s"),
            dir.path().join("early"),
            dir.path().join("other"),
        );
        {
            let base = Box::new(RocksStore::open(&path, true).unwrap());
            let p = Presence::start(base, Some(&path), Start::Empty).unwrap();
            write(&p, 0..100);
            next_doc(&p, 101, "d100");
            p.flush().unwrap();
        }
        // A copy of the store as it was then, before more writes.
        copy_dir(&path, &early);
        {
            let p = saved(&path).ok().expect("current");
            write(&p, 100..200);
            next_doc(&p, 201, "d200");
            p.flush().unwrap();
        }
        let later = std::fs::read(path.join(FILE_NAME)).unwrap();
        // The later filter put into the earlier copy: its keys 100..200 are not there, and
        // the documents that copy takes next reuse those seqs. Not used, and removed.
        std::fs::write(early.join(FILE_NAME), &later).unwrap();
        assert!(saved(&early).is_err());
        assert!(!early.join(FILE_NAME).exists());
        // Nor by another store (another RocksDB identity), even at a later state.
        {
            let s = RocksStore::open(&other, true).unwrap();
            write(&s, 0..300);
            next_doc(&s, 301, "d300");
        }
        std::fs::write(other.join(FILE_NAME), &later).unwrap();
        assert!(saved(&other).is_err());
        // A copy of the store that parted from it before the save and has since gone
        // further (a later sequence number, more documents): the document it holds at the
        // saved filter's last seq is not the one the filter saw. Not used.
        {
            let s = RocksStore::open(&early, false).unwrap();
            write(&s, 1000..1300);
            next_doc(&s, 150, "other-149");
            next_doc(&s, 201, "other-200");
            next_doc(&s, 260, "other-259");
        }
        std::fs::write(early.join(FILE_NAME), &later).unwrap();
        assert!(saved(&early).is_err());
        // The same store gone further: behind it (one more read, and it is used).
        {
            let s = RocksStore::open(&path, false).unwrap();
            next_doc(&s, 260, "d259");
        }
        assert_eq!(
            saved_fit(&path).ok().map(|(_, f)| f),
            Some(Fit::Behind {
                from: 201,
                documents: 59
            })
        );
        // A writer that keeps no filter removes an unusable file too.
        std::fs::write(early.join(FILE_NAME), &later).unwrap();
        {
            let s = RocksStore::open(&early, false).unwrap();
            remove_unusable(&s, &early).unwrap();
        }
        assert!(!early.join(FILE_NAME).exists());
    }

    #[test]
    fn a_failed_save_is_an_error_and_loses_nothing_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        let base = Box::new(RocksStore::open(path, true).unwrap());
        // The temporary file's name taken by a directory: the write fails.
        let blocked = path.join(format!("{FILE_NAME}.tmp"));
        std::fs::create_dir(&blocked).unwrap();
        let p = Presence::start(base, Some(path), Start::Empty).unwrap();
        write(&p, 0..100);
        p.flush().unwrap();
        assert!(p.save().is_err());
        drop(p);
        assert!(!path.join(FILE_NAME).exists());
        assert!(blocked.is_dir(), "left as it was");
        let s = RocksStore::open(path, false).unwrap();
        let mut n = 0;
        s.scan(Cf::Nshash, &[], &[0xff; 17], &mut |_, _| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, 100);
    }

    /// A file written by the previous version (header: identity and sequence number as one
    /// tag, no document seq) loads at exactly the state it was saved at, is rewritten in the
    /// present version, and is not used once the store has changed (it cannot be caught up).
    #[test]
    fn version_2_file_loads_only_at_its_state_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        {
            let base = Box::new(RocksStore::open(path, true).unwrap());
            let p = Presence::start(base, Some(path), Start::Empty).unwrap();
            write(&p, 0..100);
            p.flush().unwrap();
            p.save().unwrap();
        }
        // The same filter with a version 2 header.
        let file = path.join(FILE_NAME);
        let v3 = std::fs::read(&file).unwrap();
        let n = u32::from_le_bytes(v3[8..12].try_into().unwrap()) as usize;
        let (identity, sequence) = (&v3[12..12 + n], &v3[12 + n..20 + n]);
        let body = &v3[12 + n + 8 + 8 + 4..v3.len() - 4];
        let mut v2 = MAGIC_2.to_vec();
        v2.extend_from_slice(&((n + 8) as u32).to_le_bytes());
        v2.extend_from_slice(identity);
        v2.extend_from_slice(sequence);
        v2.extend_from_slice(body);
        v2.extend_from_slice(&crc32fast::hash(&v2).to_le_bytes());
        std::fs::write(&file, &v2).unwrap();
        {
            let (p, fit) = saved_fit(path).ok().expect("a version 2 file at its state");
            assert_eq!(fit, Fit::Current);
            let k = posting(50);
            assert!(p.may_hold(Cf::Nshash, &k[..8], &[&k[..8], &[0xff; 9][..]].concat()));
        }
        assert_eq!(
            &std::fs::read(&file).unwrap()[..8],
            MAGIC,
            "rewritten when closed"
        );
        // A version 2 file behind the store: not used (nothing says where to catch up from).
        std::fs::write(&file, &v2).unwrap();
        {
            let s = RocksStore::open(path, false).unwrap();
            write(&s, 100..101);
        }
        assert!(saved(path).is_err());
        assert!(!file.exists());
    }

    #[test]
    fn damaged_saved_filter_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        {
            let base = Box::new(RocksStore::open(path, true).unwrap());
            let p = Presence::start(base, Some(path), Start::Empty).unwrap();
            write(&p, 0..100);
            p.flush().unwrap();
            p.save().unwrap();
        }
        let file = path.join(FILE_NAME);
        let mut bytes = std::fs::read(&file).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x10;
        std::fs::write(&file, &bytes).unwrap();
        assert!(saved(path).is_err());
        // Cut short: ignored too.
        {
            let base = Box::new(RocksStore::open(path, false).unwrap());
            let p = Presence::start(base, Some(path), Start::Scan).unwrap();
            p.flush().unwrap();
            p.save().unwrap();
        }
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 100]).unwrap();
        assert!(saved(path).is_err());
    }
}
