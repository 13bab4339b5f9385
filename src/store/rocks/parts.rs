//! A large batch written in parts at once. RocksDB inserts one write into its memtables on
//! one thread, which bounded an ingest on many cores (docs/performance.md, "Many cores");
//! writes made at once from several threads it inserts in parallel
//! (`allow_concurrent_memtable_write`). One write is atomic; a batch in parts is not, so:
//!
//! 1. the first write holds the batch's records (`docs`), its metadata and a journal: every
//!    change of the other families, encoded as one value of `meta` ([`JOURNAL_KEY`]);
//! 2. those changes then go in parts, written at once from threads of their own;
//! 3. a last write removes the journal.
//!
//! A crash between 1 and 3 leaves the journal. A writer's open applies it, with its removal
//! as one write, before anything reads the store ([`RocksStore::finish_parts`]); a reader's
//! open reads the store through it ([`Journaled`]). After any crash a store is at a batch
//! boundary, as with one write per batch.
//!
//! The records stay out of the parts: they are most of a batch's bytes, which the journal
//! would write to the log twice. The other families are many small keys (ids, postings,
//! simhash table keys, members: ~25 of a new document's ~27), most of the memtable inserts.
//!
//! Only on request (`FPDB_APPLY_PARTS=N`): measured on 16 cores, the parts shortened
//! RocksDB's apply but not the ingest, and made one of 700,025 documents ~45% slower
//! (docs/performance.md, "Many cores"). A journal that a crash left is finished whatever the
//! setting.

use super::RocksStore;
use crate::error::{Error, Result};
use crate::store::behind::{get_under, scan_ranges_under, scan_under};
use crate::store::{Batch, Cf, Entry, Store};

/// The `meta` key of an unfinished batch's journal.
pub(super) const JOURNAL_KEY: &[u8] = b"parts-journal";

/// A batch goes in parts only with at least this many changes to go in them: a small write
/// (one document, a `serve` request) costs less as one write than as three plus threads.
pub(super) const MIN_PART_ENTRIES: usize = 4096;

/// Whether `cf`'s changes go in the parts (and so in the journal).
fn in_parts(cf: Cf) -> bool {
    !matches!(cf, Cf::Meta | Cf::Docs)
}

/// The changes of `per_cf` (indexed by [`Cf::index`]) that go in parts, as one value: per
/// change its family's index, its key's length (4 bytes, little-endian) and key, then 0 for a
/// delete or 1, the value's length and value.
fn encode(per_cf: &[Vec<Entry>], out: &mut Vec<u8>) {
    out.clear();
    for (cf, k, v) in part_entries(per_cf) {
        out.push(u8::try_from(cf.index()).expect("fewer than 256 column families"));
        put_bytes(out, k);
        match v {
            Some(v) => {
                out.push(1);
                put_bytes(out, v);
            }
            None => out.push(0),
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(
        &u32::try_from(b.len())
            .expect("a key under 4 GiB")
            .to_le_bytes(),
    );
    out.extend_from_slice(b);
}

/// [`encode`]'s changes back, per column family, each family's in key order as written.
fn decode(mut b: &[u8]) -> std::result::Result<Vec<Vec<Entry>>, &'static str> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> std::result::Result<&'a [u8], &'static str> {
        if b.len() < n {
            return Err("it ends inside a change");
        }
        let (head, rest) = b.split_at(n);
        *b = rest;
        Ok(head)
    }
    fn bytes(b: &mut &[u8]) -> std::result::Result<Vec<u8>, &'static str> {
        let len = u32::from_le_bytes(take(b, 4)?.try_into().expect("4 bytes"));
        Ok(take(b, len as usize)?.to_vec())
    }
    let mut per_cf: Vec<Vec<Entry>> = vec![Vec::new(); Cf::ALL.len()];
    while !b.is_empty() {
        let cf = *Cf::ALL
            .get(usize::from(take(&mut b, 1)?[0]))
            .filter(|cf| in_parts(**cf))
            .ok_or("a change names a family the parts never hold")?;
        let key = bytes(&mut b)?;
        let value = match take(&mut b, 1)?[0] {
            0 => None,
            1 => Some(bytes(&mut b)?),
            _ => return Err("a change is neither a put nor a delete"),
        };
        let entries = &mut per_cf[cf.index()];
        if entries.last().is_some_and(|last| last.0 >= key) {
            return Err("its keys are out of order");
        }
        entries.push((key, value));
    }
    Ok(per_cf)
}

/// The changes of `per_cf` that go in parts, in family and key order.
fn part_entries(per_cf: &[Vec<Entry>]) -> impl Iterator<Item = (Cf, &[u8], Option<&[u8]>)> + Clone {
    Cf::ALL
        .iter()
        .zip(per_cf)
        .filter(|(cf, _)| in_parts(**cf))
        .flat_map(|(cf, entries)| {
            entries
                .iter()
                .map(move |(k, v)| (*cf, &k[..], v.as_deref()))
        })
}

/// Whether `per_cf` is written as one write when large batches go in `parts` parts: too few
/// of its changes would go in parts.
fn one_write(per_cf: &[Vec<Entry>], parts: usize) -> bool {
    parts < 2 || parted_len(per_cf) < MIN_PART_ENTRIES
}

/// How many of the changes of `per_cf` go in parts.
fn parted_len(per_cf: &[Vec<Entry>]) -> usize {
    Cf::ALL
        .iter()
        .zip(per_cf)
        .filter(|(cf, _)| in_parts(**cf))
        .map(|(_, e)| e.len())
        .sum()
}

/// The changes that go in parts cut into `parts` runs of about equal length, each a list of
/// (family, sorted changes).
fn split(per_cf: &[Vec<Entry>], parts: usize) -> Vec<Vec<(Cf, &[Entry])>> {
    let per = parted_len(per_cf).div_ceil(parts.max(1)).max(1);
    let mut out = vec![Vec::new()];
    let mut room = per;
    for (&cf, mut entries) in Cf::ALL.iter().zip(per_cf.iter().map(Vec::as_slice)) {
        if !in_parts(cf) {
            continue;
        }
        while !entries.is_empty() {
            if room == 0 {
                out.push(Vec::new());
                room = per;
            }
            let (head, rest) = entries.split_at(room.min(entries.len()));
            out.last_mut().expect("one at least").push((cf, head));
            room -= head.len();
            entries = rest;
        }
    }
    out
}

fn ops_of<'a>(
    per_cf: impl Iterator<Item = (Cf, &'a [Entry])> + Clone,
) -> impl Iterator<Item = (Cf, &'a [u8], Option<&'a [u8]>)> + Clone {
    per_cf.flat_map(|(cf, entries)| entries.iter().map(move |(k, v)| (cf, &k[..], v.as_deref())))
}

fn damaged(store: &RocksStore, why: &str) -> Error {
    Error::Storage(format!(
        "{}: the journal of the last batch written in parts is damaged ({why}): the store is \
         damaged; restore a backup (`fpdb backup`)",
        store.path.display()
    ))
}

/// Every change of `per_cf`, family by family.
pub(super) fn ops_of_all(
    per_cf: &[Vec<Entry>],
) -> impl Iterator<Item = (Cf, &[u8], Option<&[u8]>)> + Clone {
    ops_of(Cf::ALL.into_iter().zip(per_cf.iter().map(Vec::as_slice)))
}

impl RocksStore {
    /// Whether [`Store::write_entries`] writes `per_cf` as one write (not in parts).
    pub(super) fn in_one_write(&self, per_cf: &[Vec<Entry>]) -> bool {
        one_write(per_cf, self.parts)
    }

    /// Write `per_cf` (sorted per family, a key once) in `parts` parts at once, as the module
    /// documentation says; as one write when too few of its changes would go in parts.
    pub(super) fn write_in_parts(&self, per_cf: &[Vec<Entry>], parts: usize) -> Result<()> {
        if one_write(per_cf, parts) {
            return self.write_ops(ops_of_all(per_cf));
        }
        self.write_first(per_cf)?;
        self.write_runs(per_cf, parts)?;
        self.write_ops(std::iter::once((Cf::Meta, JOURNAL_KEY, None)))
    }

    /// The first write of a batch in parts: the changes that stay out of the parts, and the
    /// journal of those that go in them.
    fn write_first(&self, per_cf: &[Vec<Entry>]) -> Result<()> {
        // One buffer for every batch's journal (~0.8 MiB each: 798,474 bytes for a batch of
        // 1,024 zh50k documents).
        let mut journal = self
            .journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        encode(per_cf, &mut journal);
        let first = ops_of(
            Cf::ALL
                .into_iter()
                .zip(per_cf.iter().map(Vec::as_slice))
                .filter(|(cf, _)| !in_parts(*cf)),
        );
        self.write_ops(first.chain(std::iter::once((Cf::Meta, JOURNAL_KEY, Some(&journal[..])))))
    }

    /// The changes that go in parts, in `parts` writes made at once.
    fn write_runs(&self, per_cf: &[Vec<Entry>], parts: usize) -> Result<()> {
        let runs = split(per_cf, parts);
        std::thread::scope(|s| {
            let mut threads = Vec::with_capacity(runs.len());
            for run in &runs {
                let t = std::thread::Builder::new()
                    .name("fpdb-part".into())
                    .spawn_scoped(s, move || self.write_ops(ops_of(run.iter().copied())))
                    .map_err(|e| Error::Storage(format!("cannot start a thread: {e}")))?;
                threads.push(t);
            }
            let mut first_err = None;
            for t in threads {
                let r = t
                    .join()
                    .unwrap_or_else(|_| Err(Error::Storage("a part's write panicked".into())));
                if let Err(e) = r {
                    first_err.get_or_insert(e);
                }
            }
            first_err.map_or(Ok(()), Err)
        })
    }

    /// The changes of a batch whose parts may not all have been written (a crash between its
    /// first write and its last), per family and sorted, the journal's removal with them, if
    /// there is one.
    pub fn pending_parts(&self) -> Result<Option<Vec<Vec<Entry>>>> {
        let Some(journal) = self.get(Cf::Meta, JOURNAL_KEY)? else {
            return Ok(None);
        };
        let mut per_cf = decode(&journal).map_err(|why| damaged(self, why))?;
        // And the journal's own removal, the batch's last change.
        per_cf[Cf::Meta.index()].push((JOURNAL_KEY.to_vec(), None));
        Ok(Some(per_cf))
    }

    /// Write the changes of a batch left in parts by a crash, and remove its journal, as one
    /// write. Returns whether there was one.
    pub(super) fn finish_parts(&self) -> Result<bool> {
        let Some(per_cf) = self.pending_parts()? else {
            return Ok(false);
        };
        self.write_ops(ops_of(
            Cf::ALL.into_iter().zip(per_cf.iter().map(Vec::as_slice)),
        ))?;
        Ok(true)
    }
}

/// A reader's view of a store whose last batch's parts may not all have been written: reads
/// find that batch's changes in its journal first.
pub struct Journaled {
    base: Box<dyn Store>,
    pending: Vec<Vec<Entry>>,
}

impl Journaled {
    /// `base` read through `pending` ([`RocksStore::pending_parts`]).
    pub fn new(base: Box<dyn Store>, pending: Vec<Vec<Entry>>) -> Self {
        Journaled { base, pending }
    }
}

impl Store for Journaled {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_under(self.base.as_ref(), &self.pending, cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        scan_under(self.base.as_ref(), &self.pending, cf, start, end, visit)
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        scan_ranges_under(self.base.as_ref(), &self.pending, cf, ranges, visit)
    }

    fn write(&self, batch: Batch) -> Result<()> {
        self.base.write(batch)
    }

    fn sync(&self) -> Result<()> {
        self.base.sync()
    }

    crate::store::forward! {
        syncer, flush, settle, last_sequence, estimate_keys, read_only, lease, maintenance,
        read_ahead, presence_filter,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{open, Location, OpenConfig};
    use proptest::prelude::*;

    /// Changes per family, sorted, a key once: `n` in the families that go in parts, a tenth
    /// as many records and a meta key, every seventh a delete.
    fn batch(seed: u64, n: usize) -> Vec<Vec<Entry>> {
        let mut per_cf: Vec<Vec<Entry>> = vec![Vec::new(); Cf::ALL.len()];
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            x
        };
        let parted: Vec<Cf> = Cf::ALL.into_iter().filter(|cf| in_parts(*cf)).collect();
        for i in 0..n {
            let cf = parted[i % parted.len()];
            let key = next().to_be_bytes().repeat(2);
            let value = (i % 7 != 0).then(|| next().to_le_bytes()[..(i % 9)].to_vec());
            per_cf[cf.index()].push((key, value));
        }
        for i in 0..n / 10 {
            per_cf[Cf::Docs.index()]
                .push((next().to_be_bytes().to_vec(), Some(vec![b'r'; 40 + i % 50])));
        }
        per_cf[Cf::Meta.index()].push((b"counters".to_vec(), Some(seed.to_le_bytes().to_vec())));
        for entries in &mut per_cf {
            entries.sort();
            entries.dedup_by(|a, b| a.0 == b.0);
        }
        per_cf
    }

    /// Every key and value of every family of `store`.
    fn contents(store: &dyn Store) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        Cf::ALL
            .iter()
            .map(|&cf| {
                let mut all = Vec::new();
                store
                    .scan(cf, &[], &[0xff; 32], &mut |k, v| {
                        all.push((k.to_vec(), v.to_vec()));
                        true
                    })
                    .unwrap();
                all
            })
            .collect()
    }

    fn parted(per_cf: &[Vec<Entry>]) -> Vec<Vec<Entry>> {
        Cf::ALL
            .iter()
            .zip(per_cf)
            .map(|(cf, e)| if in_parts(*cf) { e.clone() } else { Vec::new() })
            .collect()
    }

    proptest! {
        #[test]
        fn a_journal_decodes_to_the_changes_it_holds(seed in any::<u64>(), n in 0usize..300) {
            let per_cf = batch(seed, n);
            let mut journal = Vec::new();
            encode(&per_cf, &mut journal);
            prop_assert_eq!(decode(&journal).unwrap(), parted(&per_cf));
            if !journal.is_empty() {
                prop_assert!(decode(&journal[..journal.len() - 1]).is_err());
            }
        }

        #[test]
        fn the_runs_hold_the_parts_changes_in_order(
            seed in any::<u64>(),
            n in 0usize..300,
            parts in 1usize..9,
        ) {
            let per_cf = batch(seed, n);
            let runs = split(&per_cf, parts);
            prop_assert!(runs.len() <= parts.max(1));
            let joined: Vec<_> = runs.iter().flat_map(|run| ops_of(run.iter().copied())).collect();
            let expected: Vec<_> = part_entries(&per_cf).collect();
            prop_assert_eq!(joined, expected);
            let per = n.div_ceil(parts);
            for run in &runs[..runs.len() - 1] {
                prop_assert_eq!(run.iter().map(|(_, e)| e.len()).sum::<usize>(), per);
            }
        }
    }

    #[test]
    fn a_batch_in_parts_leaves_what_one_write_leaves() {
        let d = tempfile::tempdir().unwrap();
        let mut parted = RocksStore::open(&d.path().join("parts"), true).unwrap();
        parted.set_write_parts(4);
        let whole = RocksStore::open(&d.path().join("whole"), true).unwrap();
        let first = batch(1, MIN_PART_ENTRIES * 2);
        // The second deletes some of the first's keys and rewrites others.
        let mut second = batch(2, MIN_PART_ENTRIES * 3);
        for (i, entries) in first.iter().enumerate() {
            for (j, (k, _)) in entries.iter().enumerate().step_by(5) {
                second[i].push((k.clone(), (j % 2 == 0).then(|| b"again".to_vec())));
            }
            second[i].sort();
            second[i].dedup_by(|a, b| a.0 == b.0);
        }
        for b in [&first, &second] {
            parted.write_entries(b).unwrap();
            whole.write_entries(b).unwrap();
        }
        assert_eq!(parted.get(Cf::Meta, JOURNAL_KEY).unwrap(), None);
        assert!(parted.pending_parts().unwrap().is_none());
        assert_eq!(contents(&parted), contents(&whole));
        let stored: usize = Cf::ALL
            .iter()
            .filter(|cf| in_parts(**cf))
            .map(|cf| contents(&whole)[cf.index()].len())
            .sum();
        assert!(
            stored > MIN_PART_ENTRIES,
            "{stored} keys: too few to go in parts"
        );
    }

    /// A crash after the first write, with one part written: a reader sees the whole batch,
    /// and the next writer's open finishes it.
    #[test]
    fn a_crash_between_the_parts_is_finished_at_the_next_open() {
        let d = tempfile::tempdir().unwrap();
        let (path, whole_path) = (d.path().join("parts"), d.path().join("whole"));
        let first = batch(3, MIN_PART_ENTRIES * 2);
        let second = batch(4, MIN_PART_ENTRIES * 2);
        {
            let mut s = RocksStore::open(&path, true).unwrap();
            s.set_write_parts(4);
            s.write_entries(&first).unwrap();
            s.write_first(&second).unwrap();
            let runs = split(&second, 4);
            s.write_ops(ops_of(runs[1].iter().copied())).unwrap();
        }
        let whole = RocksStore::open(&whole_path, true).unwrap();
        whole.write_entries(&first).unwrap();
        whole.write_entries(&second).unwrap();
        let expected = contents(&whole);

        let config = OpenConfig {
            read_only: true,
            ..OpenConfig::default()
        };
        let reader = open(&Location::Dir(path.clone()), &config).unwrap().store;
        assert_eq!(contents(reader.as_ref()), expected);
        drop(reader);
        let unfinished = RocksStore::open_read_only(&path).unwrap();
        assert_ne!(
            contents(&unfinished),
            expected,
            "the crash left the batch unfinished"
        );
        drop(unfinished);

        let writer = RocksStore::open(&path, false).unwrap();
        assert!(writer.pending_parts().unwrap().is_none());
        assert_eq!(contents(&writer), expected);
    }

    #[test]
    fn a_damaged_journal_fails_the_open_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("s");
        {
            let s = RocksStore::open(&path, true).unwrap();
            let mut b = Batch::new();
            b.put(Cf::Meta, JOURNAL_KEY.to_vec(), vec![3, 9, 0]);
            s.write(b).unwrap();
        }
        let e = RocksStore::open(&path, false).unwrap_err().to_string();
        assert!(
            e.contains("journal of the last batch written in parts is damaged"),
            "{e}"
        );
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}
