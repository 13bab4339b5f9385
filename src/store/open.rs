//! The storage stack a location asks for, assembled in one place: a Redis Cluster store for a
//! `redis://` address; else RocksDB in a directory, behind the write-behind store where a
//! second core can apply its batches, and behind the presence filter when one is saved or
//! asked for. The engine receives the assembled [`Store`] and knows none of this.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::{Presence, PresenceFit, PresenceStart, RocksStore, Store};
use crate::error::{Error, Result};

/// Where a store lives, parsed once from what was given (`--db`, [`crate::Builder::open`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A RocksDB store's directory.
    Dir(PathBuf),
    /// A Redis Cluster store: its `redis://host:port[,…]/NAMESPACE[?…]` address as given
    /// (read by `store::redis::RedisUrl::parse`).
    Redis(String),
}

impl Location {
    /// A `redis://` address names a Redis Cluster store; anything else is a directory.
    pub fn parse(given: &Path) -> Location {
        match given.to_str() {
            Some(s) if s.starts_with("redis://") => Location::Redis(s.to_string()),
            _ => Location::Dir(given.to_path_buf()),
        }
    }

    /// Whether it is a Redis Cluster store.
    pub fn is_redis(&self) -> bool {
        matches!(self, Location::Redis(_))
    }

    /// The directory of a RocksDB store.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            Location::Dir(d) => Some(d),
            Location::Redis(_) => None,
        }
    }
}

/// What a writer or reader does about the presence filter ([`Presence`]) of a directory store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filters {
    /// Load the filter saved with the store when it fits it (brought up to date at open when it
    /// was saved at an earlier state). `None`: a writer does, a reader does not.
    pub saved: Option<bool>,
    /// Without a saved filter that fits: start one so (a scan, or empty on a store known to
    /// hold no document), or go without (`None`).
    pub otherwise: Option<PresenceStart>,
}

/// How a store is opened; nothing of it is saved with the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenConfig {
    /// Create a directory store that does not exist.
    pub create: bool,
    /// Open read-only (no lock; writes refused).
    pub read_only: bool,
    /// Block cache of a RocksDB store.
    pub cache_bytes: usize,
    /// The presence filter.
    pub filters: Filters,
}

impl Default for OpenConfig {
    fn default() -> Self {
        OpenConfig {
            create: false,
            read_only: false,
            cache_bytes: super::BLOCK_CACHE_BYTES,
            filters: Filters::default(),
        }
    }
}

/// An assembled store.
pub struct Opened {
    /// The stack, outermost first.
    pub store: Box<dyn Store>,
    /// Nanoseconds the write-behind store's thread has spent applying batches, where it has
    /// one.
    pub applying: Option<Arc<AtomicU64>>,
    /// How a saved presence filter fit the store, when one was loaded.
    pub fit: Option<PresenceFit>,
}

/// Open the store at `location` as `config` says.
pub fn open(location: &Location, config: &OpenConfig) -> Result<Opened> {
    let path = match location {
        Location::Redis(url) => return open_redis(url, config),
        Location::Dir(path) => path.as_path(),
    };
    let mut applying = None;
    let store: Box<dyn Store> = if config.read_only {
        let rocks = RocksStore::open_read_only_with_cache(path, config.cache_bytes)?;
        // A writer killed while it wrote a batch in parts: read through its journal.
        match rocks.pending_parts()? {
            Some(pending) => Box::new(super::rocks::Journaled::new(Box::new(rocks), pending)),
            None => Box::new(rocks),
        }
    } else {
        if config.create {
            if path.metadata().is_ok_and(|m| !m.is_dir()) {
                return Err(Error::NotAStore {
                    path: path.to_path_buf(),
                });
            }
            std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
        }
        let rocks = Box::new(RocksStore::open_with_cache(
            path,
            config.create,
            config.cache_bytes,
        )?);
        // The writer's batches reach RocksDB on a thread of their own while the next is
        // looked up and decided (reads see them meanwhile): `store::WriteBehind`. Only
        // with a second core to run it: on one core the hand-over costs more than it saves
        // (docs/performance.md, "Store settings").
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        if cores >= 2 {
            let behind = super::WriteBehind::new(rocks)?;
            applying = Some(behind.busy_clock());
            Box::new(behind)
        } else {
            rocks
        }
    };
    // A writer uses the presence filter saved with the store when it fits the store (a
    // cheap read, plus the documents written since the save); otherwise it scans for one
    // when asked, starts one on a store known to be empty, or goes without. A reader loads a
    // saved one only when asked (a single `query` does not).
    let filters = config.filters;
    let saved = filters.saved.unwrap_or(!config.read_only);
    let otherwise = match filters.otherwise {
        Some(PresenceStart::Empty) if config.read_only => None,
        other => other,
    };
    let store = if saved || otherwise == Some(PresenceStart::Scan) {
        Presence::load_saved(store, path)?
    } else {
        // Not loaded, but a file that cannot serve this store goes (it must never be
        // taken for one of a later state).
        super::remove_unusable_presence(store.as_ref(), path)?;
        Err(store)
    };
    let (store, fit): (Box<dyn Store>, _) = match (store, otherwise) {
        (Ok((p, fit)), _) => (Box::new(p), Some(fit)),
        (Err(base), None) => (base, None),
        (Err(base), Some(start)) => (Box::new(Presence::start(base, Some(path), start)?), None),
    };
    Ok(Opened {
        store,
        applying,
        fit,
    })
}

/// A Redis Cluster store: no presence filter (other writers' keys would be missing from it).
#[cfg_attr(
    not(feature = "redis"),
    expect(unused_variables, reason = "no Redis store")
)]
fn open_redis(url: &str, config: &OpenConfig) -> Result<Opened> {
    #[cfg(not(feature = "redis"))]
    return Err(Error::InvalidOption(format!(
        "{url}: this build of fpdb has no Redis store (cargo feature `redis`)"
    )));
    #[cfg(feature = "redis")]
    {
        if config.filters.otherwise == Some(PresenceStart::Scan) {
            return Err(Error::Storage(
                "memory filters cannot be used with a Redis store (other writers' keys \
                 would be missing from them)"
                    .into(),
            ));
        }
        Ok(Opened {
            store: Box::new(super::RedisStore::open(url, config.read_only)?),
            applying: None,
            fit: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_is_a_redis_address_or_a_directory() {
        let r = Location::parse(Path::new("redis://127.0.0.1:7000/ns"));
        assert!(r.is_redis());
        assert_eq!(r.dir(), None);
        for d in ["store.db", "/tmp/redis://x", "./redis:/x"] {
            let l = Location::parse(Path::new(d));
            assert!(!l.is_redis(), "{d}");
            assert_eq!(l.dir(), Some(Path::new(d)));
        }
    }

    /// A reader loads no saved filter unless asked and starts no empty one; a writer on a
    /// new directory starts the empty one it is asked for.
    #[test]
    fn the_filter_a_store_starts_with_follows_the_config() {
        let d = tempfile::tempdir().unwrap();
        let loc = Location::Dir(d.path().join("s"));
        let mut config = OpenConfig {
            create: true,
            filters: Filters {
                saved: None,
                otherwise: Some(PresenceStart::Empty),
            },
            ..OpenConfig::default()
        };
        let opened = open(&loc, &config).unwrap();
        assert!(opened.store.presence_filter().is_some());
        drop(opened);
        config.create = false;
        config.filters.otherwise = None;
        config.filters.saved = Some(false);
        let opened = open(&loc, &config).unwrap();
        assert!(opened.store.presence_filter().is_none());
    }
}
