//! RocksDB's own form of a write: a `WriteBatch`, a copy of every key and value. The
//! write-behind store has it built by the thread that hands it a batch, ahead of its commit
//! thread ([`crate::store::Store::prepare_entries`]); other writes build it themselves.

use rocksdb::{WriteBatch, WriteOptions};

use super::{map_err, RocksStore};
use crate::error::Result;
use crate::store::Cf;

impl RocksStore {
    /// RocksDB's batch of `ops`: a copy of every key and value.
    pub(super) fn batch_of<'a>(
        &self,
        ops: impl Iterator<Item = (Cf, &'a [u8], Option<&'a [u8]>)> + Clone,
    ) -> WriteBatch {
        let bytes: usize = ops
            .clone()
            .map(|(_, k, v)| k.len() + v.map_or(8, |v| v.len() + 12))
            .sum();
        let mut wb = WriteBatch::with_capacity_bytes(bytes + 16);
        // The handles once per write, not by name per key (a map search each).
        let handles = Cf::ALL.map(|cf| self.handle(cf));
        for (cf, k, v) in ops {
            match v {
                Some(v) => wb.put_cf(handles[cf.index()], k, v),
                None => wb.delete_cf(handles[cf.index()], k),
            }
        }
        wb
    }

    /// Write `wb` (not synced).
    pub(super) fn write_batch(&self, wb: WriteBatch) -> Result<()> {
        let mut wo = WriteOptions::default();
        wo.set_sync(false);
        // Each write's keys are sorted: when RocksDB inserts several writes at once (a batch
        // in parts), each keeps its place in the skip list from one key to the next, as a
        // write inserted alone does (without it a part's inserts searched from the top each
        // time and cost half as much again).
        wo.set_memtable_insert_hint_per_batch(true);
        self.db
            .write_opt(wb, &wo)
            .map_err(|e| map_err(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Entry, Store};

    /// Changes in every family, sorted, a key once: `n` per family, every fifth a delete.
    fn changes(n: usize) -> Vec<Vec<Entry>> {
        let mut x = 7u64;
        Cf::ALL
            .iter()
            .map(|_| {
                let mut entries: Vec<Entry> = (0..n)
                    .map(|i| {
                        x = x
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        let value = (i % 5 != 0).then(|| x.to_le_bytes()[..i % 9].to_vec());
                        (x.to_be_bytes().to_vec(), value)
                    })
                    .collect();
                entries.sort();
                entries.dedup_by(|a, b| a.0 == b.0);
                entries
            })
            .collect()
    }

    #[test]
    fn a_prepared_write_stores_its_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = RocksStore::open(dir.path(), true).unwrap();
        let per_cf = changes(2000);
        let prepared = store.prepare_entries(&per_cf);
        assert!(prepared.is_some());
        store.write_prepared(&per_cf, prepared).unwrap();
        for (&cf, entries) in Cf::ALL.iter().zip(&per_cf) {
            for (k, v) in entries {
                assert_eq!(store.get(cf, k).unwrap().as_ref(), v.as_ref(), "{cf:?}");
            }
        }
    }
}
