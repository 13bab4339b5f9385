//! In-memory [`Store`]: one ordered map per column family behind a lock. Same semantics as
//! the RocksDB store except durability (nothing survives the process).

use std::collections::BTreeMap;
use std::sync::RwLock;

use super::{Batch, Cf, Op, Store};
use crate::error::{Error, Result};

type Maps = Vec<BTreeMap<Vec<u8>, Vec<u8>>>;

/// An in-memory store, for tests and for `fpdb eval`-style throwaway runs.
#[derive(Debug)]
pub struct MemoryStore {
    maps: RwLock<Maps>,
    read_only: bool,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            maps: RwLock::new(vec![BTreeMap::new(); Cf::ALL.len()]),
            read_only: false,
        }
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Store for MemoryStore {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self
            .maps
            .read()
            .expect("lock")
            .get(cf.index())
            .and_then(|m| m.get(key).cloned()))
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
        let maps = self.maps.read().expect("lock");
        let range = maps[cf.index()].range::<[u8], _>((
            std::ops::Bound::Included(start),
            std::ops::Bound::Excluded(end),
        ));
        for (k, v) in range {
            if !visit(k, v) {
                break;
            }
        }
        Ok(())
    }

    fn write(&self, batch: Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        let mut maps = self.maps.write().expect("lock");
        for op in batch.ops {
            match op {
                Op::Put(cf, k, v) => {
                    maps[cf.index()].insert(k, v);
                }
                Op::Delete(cf, k) => {
                    maps[cf.index()].remove(&k);
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn read_only(&self) -> bool {
        self.read_only
    }
}
