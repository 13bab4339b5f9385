//! Write-behind over a store: [`Store::write`] hands the batch to a thread of its own
//! (`fpdb-commit`) and returns; until that thread has applied it, reads find its changes in
//! memory (an overlay of the one batch in flight, sorted per column family), so the engine
//! sees its writes at once. The writer thread of an ingest then looks up and decides the next
//! batch while RocksDB inserts the previous one into its log and memtables (which bounded an
//! ingest of short documents: a fifth of all CPU, on the writer's thread).
//!
//! At most one batch is in flight: the next write, and every call that needs the base to hold
//! what was written (sync, flush, the last sequence number, checkpoints, compaction), first
//! waits for it. A batch reaches the base store atomically (one write), so a crash
//! leaves exactly the batches the base store applied, as before. A failed write fails every later write and sync
//! (what was decided after it was decided on changes the base store does not hold); the
//! store must be reopened.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use arc_swap::ArcSwapOption;

use super::staged::{scan_over, scan_ranges_over, Entries};
use super::{Batch, Cf, Entry, Lease, Maintenance, Prepared, Store, Syncer};
use crate::error::{Error, Result};

/// One batch's changes per column family (indexed by [`Cf::index`]), each sorted by key, a
/// key once (the batch's last change to it; `None`: deleted).
pub(super) type Overlay = Vec<Entries>;

#[derive(Default)]
struct State {
    /// Batches handed over / applied so far.
    issued: u64,
    applied: u64,
    /// The first failed write's error (the store is unusable for writes after it).
    failed: Option<String>,
}

struct Shared {
    /// The batch in flight, until the base store has applied it: read without a lock, by
    /// every lookup thread of an ingest for every read.
    overlay: ArcSwapOption<Overlay>,
    state: Mutex<State>,
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wait until the base store has applied batch `ticket` (and every one before it).
    fn wait_for(&self, ticket: u64) -> Result<()> {
        let mut s = self.lock();
        while s.applied < ticket {
            s = self
                .done
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        match &s.failed {
            Some(e) => Err(failed(e)),
            None => Ok(()),
        }
    }
}

fn failed(e: &str) -> Error {
    Error::Storage(format!(
        "{e} (an earlier write failed; nothing after it was stored: reopen the store)"
    ))
}

/// A batch for the commit thread: its changes (read meanwhile) and the base store's own form
/// of their write, when it has one ([`Store::prepare_entries`]).
type Job = (Arc<Overlay>, Option<Prepared>);

/// See the module documentation.
pub struct WriteBehind {
    base: Arc<dyn Store>,
    shared: Arc<Shared>,
    /// Nanoseconds the commit thread has spent applying batches to the base store.
    busy: Arc<AtomicU64>,
    jobs: Mutex<Option<SyncSender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl WriteBehind {
    /// Wrap `base` (a writer; a read-only store needs no write-behind but works).
    pub fn new(base: Box<dyn Store>) -> Result<Self> {
        let base: Arc<dyn Store> = Arc::from(base);
        let shared = Arc::new(Shared {
            overlay: ArcSwapOption::empty(),
            state: Mutex::new(State::default()),
            done: Condvar::new(),
        });
        // One batch in flight, so the channel never holds more than one.
        let (tx, rx) = sync_channel::<Job>(1);
        let busy = Arc::new(AtomicU64::new(0));
        let (b, sh, clock) = (base.clone(), shared.clone(), busy.clone());
        let thread = std::thread::Builder::new()
            .name("fpdb-commit".into())
            .spawn(move || {
                for (overlay, prepared) in rx {
                    let start = Instant::now();
                    let r = b.write_prepared(&overlay, prepared);
                    let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    clock.fetch_add(ns, Ordering::Relaxed);
                    let mut s = sh.lock();
                    s.applied += 1;
                    if let Err(e) = r {
                        // Its message alone: `failed` names it a storage error once.
                        let message = match e {
                            crate::Error::Storage(m) => m,
                            e => e.to_string(),
                        };
                        s.failed.get_or_insert(message);
                    }
                    // Only now: a read that found no overlay must find the changes in the base.
                    sh.overlay.store(None);
                    drop(s);
                    sh.done.notify_all();
                    // The batch's keys and values are freed off this thread, which bounds an
                    // ingest on many cores (a tenth of its work was freeing them).
                    rayon::spawn(move || drop(overlay));
                }
            })
            .map_err(|e| Error::Storage(format!("cannot start the commit thread: {e}")))?;
        Ok(WriteBehind {
            base,
            shared,
            busy,
            jobs: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The time its thread has spent applying batches to the base store, in nanoseconds
    /// (read while it runs: the store's own stage of an ingest).
    pub fn busy_clock(&self) -> Arc<AtomicU64> {
        self.busy.clone()
    }

    /// Wait until the base store holds every write handed over so far.
    fn settle(&self) -> Result<()> {
        let ticket = self.shared.lock().issued;
        self.shared.wait_for(ticket)
    }

    /// The batch in flight, if any (taken before reading the base store: a batch applied in
    /// between is then found in both, never in neither).
    fn overlay(&self) -> arc_swap::Guard<Option<Arc<Overlay>>> {
        self.shared.overlay.load()
    }
}

/// [`Store::get`] of `base` under `overlay` (a batch's changes per column family, each sorted
/// by key, a key once: they hide the base's).
pub(super) fn get_under(
    base: &dyn Store,
    overlay: &[Entries],
    cf: Cf,
    key: &[u8],
) -> Result<Option<Vec<u8>>> {
    let entries = &overlay[cf.index()];
    match entries.binary_search_by(|e| e.0.as_slice().cmp(key)) {
        Ok(i) => Ok(entries[i].1.clone()),
        Err(_) => base.get(cf, key),
    }
}

/// [`Store::scan`] of `base` under `overlay` ([`get_under`]).
pub(super) fn scan_under(
    base: &dyn Store,
    overlay: &[Entries],
    cf: Cf,
    start: &[u8],
    end: &[u8],
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    let staged = range(&overlay[cf.index()], start, end);
    scan_over(base, cf, start, end, staged, visit)
}

/// [`Store::scan_ranges`] of `base` under `overlay` ([`get_under`]).
pub(super) fn scan_ranges_under(
    base: &dyn Store,
    overlay: &[Entries],
    cf: Cf,
    ranges: &[(&[u8], &[u8])],
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    let entries = &overlay[cf.index()];
    if entries.is_empty() {
        return base.scan_ranges(cf, ranges, visit);
    }
    let staged: Vec<&[Entry]> = ranges.iter().map(|(s, e)| range(entries, s, e)).collect();
    scan_ranges_over(base, cf, ranges, &staged, visit)
}

/// The entries of `entries` (sorted) in `[start, end)`.
pub(super) fn range<'a>(entries: &'a [Entry], start: &[u8], end: &[u8]) -> &'a [Entry] {
    if start >= end {
        return &[];
    }
    let lo = entries.partition_point(|e| e.0.as_slice() < start);
    let hi = lo + entries[lo..].partition_point(|e| e.0.as_slice() < end);
    &entries[lo..hi]
}

impl Store for WriteBehind {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match &*self.overlay() {
            Some(o) => get_under(self.base.as_ref(), o, cf, key),
            None => self.base.get(cf, key),
        }
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        match &*self.overlay() {
            Some(o) => scan_under(self.base.as_ref(), o, cf, start, end, visit),
            None => self.base.scan(cf, start, end, visit),
        }
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        match &*self.overlay() {
            Some(o) => scan_ranges_under(self.base.as_ref(), o, cf, ranges, visit),
            None => self.base.scan_ranges(cf, ranges, visit),
        }
    }

    fn write(&self, batch: Batch) -> Result<()> {
        if self.base.read_only() {
            return Err(Error::ReadOnly);
        }
        // Writers one at a time; the batch before must be in the base first (one in flight).
        let jobs = self
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Made while the batch before is still being applied.
        // Sorted by key in each family: the base store then takes the inserts in key order,
        // which its memtable takes fastest.
        let overlay = (!batch.is_empty()).then(|| Arc::new(batch.into_sorted()));
        // And the base store's own form of the write, built here too: a copy of every key
        // and value that the commit thread, the one thread an ingest on many cores waits
        // for, no longer makes.
        let prepared = overlay.as_ref().and_then(|o| self.base.prepare_entries(o));
        self.settle()?;
        let Some(overlay) = overlay else {
            return Ok(());
        };
        let Some(tx) = jobs.as_ref() else {
            return Err(Error::Storage("the store is closing".into()));
        };
        {
            let mut s = self.shared.lock();
            s.issued += 1;
            self.shared.overlay.store(Some(overlay.clone()));
        }
        if tx.send((overlay, prepared)).is_err() {
            // The commit thread is gone (it panicked): nothing more can be written.
            let mut s = self.shared.lock();
            self.shared.overlay.store(None);
            s.applied = s.issued;
            s.failed
                .get_or_insert_with(|| "the commit thread stopped".into());
            return Err(failed("the commit thread stopped"));
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.settle()?;
        self.base.sync()
    }

    fn settle(&self) -> Result<()> {
        WriteBehind::settle(self)
    }

    /// The base store's syncer, run once the base holds every write handed over before this
    /// call (the batch in flight included).
    fn syncer(&self) -> Option<Syncer> {
        let base = self.base.syncer()?;
        let ticket = self.shared.lock().issued;
        let shared = self.shared.clone();
        Some(Arc::new(move || {
            shared.wait_for(ticket)?;
            base()
        }))
    }

    fn flush(&self) -> Result<()> {
        self.settle()?;
        self.base.flush()
    }

    fn last_sequence(&self) -> Option<u64> {
        // The state the base store is in once it holds every write (a failed one changed
        // nothing there).
        let _ = self.settle();
        self.base.last_sequence()
    }

    /// Its own, when the base has one: the base's, letting other writers in only once the
    /// write being applied is in it.
    fn lease(&self) -> Option<&dyn Lease> {
        self.base.lease().map(|_| self as &dyn Lease)
    }

    /// Its own, when the base has one: the base's, after the write being applied.
    fn maintenance(&self) -> Option<&dyn Maintenance> {
        self.base.maintenance().map(|_| self as &dyn Maintenance)
    }

    // Passed to the base store as they are.
    crate::store::forward! {
        estimate_keys, read_only, read_ahead, presence_filter,
    }
}

/// The base store's [`Lease`], given back once the write being applied is in the base.
impl Lease for WriteBehind {
    fn acquire_writer(&self) -> Result<()> {
        super::base_lease(&*self.base).acquire_writer()
    }

    fn acquired_at(&self) -> Option<std::time::Instant> {
        super::base_lease(&*self.base).acquired_at()
    }

    fn released_at(&self) -> Option<std::time::Instant> {
        super::base_lease(&*self.base).released_at()
    }

    fn release_writer(&self) -> Result<()> {
        self.settle()?;
        super::base_lease(&*self.base).release_writer()
    }
}

/// The base store's [`Maintenance`], once the write being applied is in it.
impl Maintenance for WriteBehind {
    fn checkpoint(&self, dir: &std::path::Path) -> Result<()> {
        self.settle()?;
        super::base_maintenance(&*self.base).checkpoint(dir)
    }

    fn compact(&self) -> Result<()> {
        self.settle()?;
        super::base_maintenance(&*self.base).compact()
    }

    fn verify_checksums(&self) -> Result<()> {
        let _ = self.settle();
        super::base_maintenance(&*self.base).verify_checksums()
    }

    fn cf_sizes(&self) -> Vec<(&'static str, u64)> {
        let _ = self.settle();
        super::base_maintenance(&*self.base).cf_sizes()
    }

    fn disk_size(&self) -> u64 {
        let _ = self.settle();
        super::base_maintenance(&*self.base).disk_size()
    }
}

impl Drop for WriteBehind {
    /// The batch in flight reaches the base store before it closes.
    fn drop(&mut self) {
        drop(
            self.jobs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
        if let Some(t) = self
            .thread
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    /// A store whose writes wait at a gate until the test opens it, or fail.
    struct Gated {
        inner: Arc<MemoryStore>,
        open: Arc<(Mutex<bool>, Condvar)>,
        fail: bool,
    }

    impl Store for Gated {
        fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
            self.inner.get(cf, key)
        }
        fn scan(
            &self,
            cf: Cf,
            start: &[u8],
            end: &[u8],
            visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
        ) -> Result<()> {
            self.inner.scan(cf, start, end, visit)
        }
        fn write(&self, batch: Batch) -> Result<()> {
            let (m, c) = &*self.open;
            let mut open = m.lock().unwrap();
            while !*open {
                open = c.wait(open).unwrap();
            }
            if self.fail {
                return Err(Error::Storage("disk full".into()));
            }
            // Slow, so that a drop or a read finds the batch still in flight.
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.inner.write(batch)
        }
        fn sync(&self) -> Result<()> {
            Ok(())
        }
        fn syncer(&self) -> Option<Syncer> {
            Some(Arc::new(|| Ok(())))
        }
        fn read_only(&self) -> bool {
            false
        }
    }

    type Gate = Arc<(Mutex<bool>, Condvar)>;

    /// A write-behind over a gated store (closed), the gate and the store behind it.
    fn gated(fail: bool) -> (WriteBehind, Gate, Arc<MemoryStore>) {
        let open = Arc::new((Mutex::new(false), Condvar::new()));
        let inner = Arc::new(MemoryStore::new());
        let g = Box::new(Gated {
            inner: inner.clone(),
            open: open.clone(),
            fail,
        });
        (WriteBehind::new(g).unwrap(), open, inner)
    }

    fn release(open: &(Mutex<bool>, Condvar)) {
        *open.0.lock().unwrap() = true;
        open.1.notify_all();
    }

    fn keys(s: &dyn Store, cf: Cf) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        s.scan(cf, b"", &[0xff; 9], &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn reads_see_a_write_before_the_base_store_applies_it() {
        let (wb, open, inner) = gated(false);
        let mut b = Batch::new();
        b.put(Cf::Docs, b"b".to_vec(), b"1".to_vec());
        b.put(Cf::Docs, b"a".to_vec(), b"old".to_vec());
        b.put(Cf::Docs, b"a".to_vec(), b"new".to_vec());
        b.put(Cf::Nshash, b"x".to_vec(), b"2".to_vec());
        wb.write(b).unwrap();
        // The base store has nothing yet (its write waits at the gate) ...
        assert!(inner.get(Cf::Docs, b"a").unwrap().is_none());
        // ... but reads through the layer see the batch, the last change to a key winning.
        assert_eq!(
            wb.get(Cf::Docs, b"a").unwrap().as_deref(),
            Some(&b"new"[..])
        );
        assert_eq!(
            keys(&wb, Cf::Docs),
            [
                (b"a".to_vec(), b"new".to_vec()),
                (b"b".to_vec(), b"1".to_vec())
            ]
        );
        let mut seen = Vec::new();
        wb.scan_ranges(Cf::Nshash, &[(b"a", b"c"), (b"w", b"y")], &mut |k, _| {
            seen.push(k.to_vec());
            true
        })
        .unwrap();
        assert_eq!(seen, [b"x".to_vec()]);
        // A sync waits for the base store (here: until the gate opens).
        let syncer = wb.syncer().unwrap();
        let t = std::thread::spawn(move || syncer());
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!t.is_finished());
        release(&open);
        t.join().unwrap().unwrap();
        assert_eq!(
            inner.get(Cf::Docs, b"a").unwrap().as_deref(),
            Some(&b"new"[..])
        );
        // A delete in a later batch hides the key at once.
        let mut b = Batch::new();
        b.delete(Cf::Docs, b"a".to_vec());
        wb.write(b).unwrap();
        assert!(wb.get(Cf::Docs, b"a").unwrap().is_none());
        assert_eq!(keys(&wb, Cf::Docs), [(b"b".to_vec(), b"1".to_vec())]);
        wb.sync().unwrap();
        assert!(inner.get(Cf::Docs, b"a").unwrap().is_none());
    }

    #[test]
    fn a_failed_write_fails_its_sync_and_every_later_write() {
        let (wb, open, _) = gated(true);
        let mut b = Batch::new();
        b.put(Cf::Docs, b"a".to_vec(), b"1".to_vec());
        wb.write(b.clone()).unwrap();
        let syncer = wb.syncer().unwrap();
        release(&open);
        let e = syncer().unwrap_err().to_string();
        assert!(e.contains("disk full"), "{e}");
        assert_eq!(e.matches("storage error").count(), 1, "{e}");
        assert!(wb.write(b).unwrap_err().to_string().contains("disk full"));
        assert!(wb.sync().is_err());
        assert!(wb.flush().is_err());
    }

    #[test]
    fn dropping_the_store_applies_the_batch_in_flight() {
        let (wb, open, inner) = gated(false);
        release(&open);
        let mut b = Batch::new();
        b.put(Cf::Meta, b"k".to_vec(), b"v".to_vec());
        wb.write(b).unwrap();
        drop(wb);
        assert_eq!(
            inner.get(Cf::Meta, b"k").unwrap().as_deref(),
            Some(&b"v"[..])
        );
    }
}
