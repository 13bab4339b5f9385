//! The journal of a batch written in parts: how a store that an earlier fpdb left unfinished
//! is read and finished.
//!
//! An earlier fpdb could write a large batch in parts at once, on request
//! (`FPDB_APPLY_PARTS=N`), so that RocksDB inserted them into its memtables on several
//! threads: a first write held the batch's records, its metadata and a journal (every change
//! of the other families, encoded as one value of `meta`, [`JOURNAL_KEY`]); the parts
//! followed; a last write removed the journal. It made no ingest faster (on 16 cores none
//! faster and one of 700,025 documents ~45% slower; on 2 cores ~5% more CPU), so every batch
//! is now one write. A store a crash left between a batch's first write and its last still
//! holds the journal: a writer's open applies it, with its removal, as one write before
//! anything reads the store ([`RocksStore::finish_parts`]), and a reader's open reads the
//! store through it ([`Journaled`]), so the store is at a batch boundary either way.

use super::RocksStore;
use crate::error::{Error, Result};
use crate::store::behind::{get_under, scan_ranges_under, scan_under};
use crate::store::{Batch, Cf, Entry, Store};

/// The `meta` key of an unfinished batch's journal.
pub(super) const JOURNAL_KEY: &[u8] = b"parts-journal";

/// Whether `cf`'s changes went in the parts (and so in the journal).
fn in_parts(cf: Cf) -> bool {
    !matches!(cf, Cf::Meta | Cf::Docs)
}

/// A journal's changes, per column family, each family's in key order as written: per change
/// its family's index, its key's length (4 bytes, little-endian) and key, then 0 for a delete
/// or 1, the value's length and value.
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
        self.write_ops(ops_of_all(&per_cf))?;
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

    /// Changes per family, sorted, a key once: `n` in the families that went in parts, a
    /// tenth as many records and a meta key, every seventh a delete.
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

    /// The changes of `per_cf` in the parts' families only.
    fn parted(per_cf: &[Vec<Entry>]) -> Vec<Vec<Entry>> {
        Cf::ALL
            .iter()
            .zip(per_cf)
            .map(|(cf, e)| if in_parts(*cf) { e.clone() } else { Vec::new() })
            .collect()
    }

    /// The journal of `per_cf` as the earlier writer encoded it (the layout [`decode`] reads).
    fn encode(per_cf: &[Vec<Entry>]) -> Vec<u8> {
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, b: &[u8]| {
            out.extend_from_slice(&u32::try_from(b.len()).unwrap().to_le_bytes());
            out.extend_from_slice(b);
        };
        for (cf, k, v) in ops_of_all(&parted(per_cf)) {
            out.push(u8::try_from(cf.index()).unwrap());
            put(&mut out, k);
            match v {
                Some(v) => {
                    out.push(1);
                    put(&mut out, v);
                }
                None => out.push(0),
            }
        }
        out
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

    proptest! {
        #[test]
        fn a_journal_decodes_to_the_changes_it_holds(seed in any::<u64>(), n in 0usize..300) {
            let per_cf = batch(seed, n);
            let journal = encode(&per_cf);
            prop_assert_eq!(decode(&journal).unwrap(), parted(&per_cf));
            if !journal.is_empty() {
                prop_assert!(decode(&journal[..journal.len() - 1]).is_err());
            }
        }
    }

    /// A store left as a crash between a batch's parts left it (its first write with the
    /// journal, one part of three): a reader sees the whole batch, and the next writer's open
    /// finishes it.
    #[test]
    fn a_crash_between_the_parts_is_finished_at_the_next_open() {
        let d = tempfile::tempdir().unwrap();
        let (path, whole_path) = (d.path().join("parts"), d.path().join("whole"));
        let (first, second) = (batch(3, 8192), batch(4, 8192));
        {
            let s = RocksStore::open(&path, true).unwrap();
            s.write_entries(&first).unwrap();
            let kept = Cf::ALL.into_iter().zip(second.iter().map(Vec::as_slice));
            let kept = kept.filter(|(cf, _)| !in_parts(*cf));
            let journal = encode(&second);
            let with_journal = std::iter::once((Cf::Meta, JOURNAL_KEY, Some(&journal[..])));
            s.write_ops(ops_of(kept).chain(with_journal)).unwrap();
            let one_part: Vec<Vec<Entry>> = parted(&second)
                .into_iter()
                .map(|e| e[..e.len() / 3].to_vec())
                .collect();
            s.write_entries(&one_part).unwrap();
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
