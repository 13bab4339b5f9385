//! The engine's maintenance part: what changes a store besides ingesting into it. Removing
//! documents (`delete`, `expire`, `--retention`; `clusters.rs`), sweeping what removed pages
//! taught and compacting (`forget.rs`), and copying a store (`backup`). Asked of
//! [`Fpdb::maintenance`]; a new operation of this kind goes here.

use std::path::Path;

use super::Fpdb;
use crate::error::Result;
use crate::store::{Batch, Cf, Store};

/// The maintenance operations of a store ([`Fpdb::maintenance`]): removals, retention,
/// compaction and backup. Borrows the handle for as long as it lives.
pub struct Maintainer<'a> {
    db: &'a mut Fpdb,
}

impl std::ops::Deref for Maintainer<'_> {
    type Target = Fpdb;
    fn deref(&self) -> &Fpdb {
        self.db
    }
}

impl std::ops::DerefMut for Maintainer<'_> {
    fn deref_mut(&mut self) -> &mut Fpdb {
        self.db
    }
}

impl Fpdb {
    /// Removals, retention, compaction and backup of this store.
    pub fn maintenance(&mut self) -> Maintainer<'_> {
        Maintainer { db: self }
    }
}

impl Maintainer<'_> {
    /// Copy the store into the new directory `dir`; the copy opens as a store of its own
    /// (restore = open it, or move it into place). Writable: as of now (synced first), a
    /// RocksDB checkpoint (hard links to the table files: fast and small). Read-only (another
    /// process is writing): the consistent view this instance opened, copied key by key (a
    /// checkpoint of a read-only instance would mix column families flushed at different
    /// points).
    ///
    /// A shared store (Redis) is copied key by key into a RocksDB directory under its write
    /// lease (writable open), so no writer changes it meanwhile.
    pub fn backup(&self, dir: &Path) -> Result<()> {
        self.sync()?;
        if let Some(lease) = self.store.lease().filter(|_| !self.store.read_only()) {
            lease.acquire_writer()?;
            let r = self.copy_into(dir);
            return r.and(lease.release_writer());
        }
        if !self.store.read_only() {
            return match self.store.maintenance() {
                Some(m) => m.checkpoint(dir),
                None => Err(crate::error::Error::Storage(format!(
                    "{}: this store cannot be copied",
                    dir.display()
                ))),
            };
        }
        self.copy_into(dir)
    }

    /// Copy every key into a new RocksDB store at `dir`.
    fn copy_into(&self, dir: &Path) -> Result<()> {
        if dir.exists() {
            return Err(crate::error::Error::Storage(format!(
                "{}: already exists (a backup goes into a new directory)",
                dir.display()
            )));
        }
        let config = crate::store::OpenConfig {
            create: true,
            // A copy keeps no filter: the next writer of it builds or starts one.
            filters: crate::store::Filters {
                saved: Some(false),
                otherwise: None,
            },
            ..crate::store::OpenConfig::default()
        };
        let target =
            crate::store::open(&crate::store::Location::Dir(dir.to_path_buf()), &config)?.store;
        for cf in Cf::ALL {
            let mut b = Batch::new();
            let mut err = None;
            self.store.scan(cf, &[], &[0xff; 32], &mut |k, v| {
                b.put(cf, k, v);
                if b.len() >= 1 << 16 {
                    if let Err(e) = target.write(std::mem::take(&mut b)) {
                        err = Some(e);
                        return false;
                    }
                }
                true
            })?;
            if let Some(e) = err {
                return Err(e);
            }
            target.write(b)?;
        }
        target.flush()
    }
}
