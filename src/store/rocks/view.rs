//! A read-only view of a store that a writer may be changing: what the open depends on, listed
//! before and after it, so that a view torn across column families is opened again.
//!
//! RocksDB opens read-only in steps (the manifest, then the logs it replays), while a writer
//! keeps flushing, deleting logs and, when it creates the store, adding column families. Two
//! such changes tear the view:
//!
//! - a log deleted while the open ran: the families flushed in between had their new tables
//!   missing from the view and their data gone with the log;
//! - a family created while the open ran (a writer creating the store): the view opened the
//!   families listed before, and the first writes, which reach every family, went in part to
//!   families it lacks (a `query` right after an ingest began found a document's postings but
//!   not its cluster record: the `clusters` family is created after `nshash`).
//!
//! A log present before the open and after it was replayed whole; a family present before it
//! was opened whole.

use std::ffi::OsString;
use std::path::Path;

/// What a read-only open depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Listing {
    /// The names of the store's write-ahead logs.
    pub logs: Vec<OsString>,
    /// The store's column families.
    pub families: Vec<String>,
}

impl Listing {
    /// The store at `path` now (`families` as RocksDB lists them).
    pub fn of(path: &Path, families: Vec<String>) -> Self {
        Listing {
            logs: log_files(path),
            families,
        }
    }

    /// Whether a view opened between `self` (listed before) and `after` may be torn: a log
    /// of before is gone, or a family was added.
    pub fn torn_by(&self, after: &Listing) -> bool {
        self.logs.iter().any(|l| !after.logs.contains(l))
            || after.families.iter().any(|f| !self.families.contains(f))
    }
}

/// The names of the write-ahead logs in the store's directory (none if it cannot be read).
pub(super) fn log_files(path: &Path) -> Vec<OsString> {
    std::fs::read_dir(path)
        .map(|d| {
            d.filter_map(std::result::Result::ok)
                .map(|e| e.file_name())
                .filter(|n| n.to_string_lossy().ends_with(".log"))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(logs: &[&str], families: &[&str]) -> Listing {
        Listing {
            logs: logs.iter().map(OsString::from).collect(),
            families: families.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_view_is_torn_by_a_deleted_log_or_an_added_family() {
        let before = listing(&["000008.log"], &["default", "meta", "nshash"]);
        // Unchanged, or a log added (its writes came after the view's): whole.
        assert!(!before.torn_by(&before));
        let more_logs = listing(
            &["000008.log", "000009.log"],
            &["default", "meta", "nshash"],
        );
        assert!(!before.torn_by(&more_logs));
        // The log the view replayed was deleted meanwhile: torn.
        let flushed = listing(&["000009.log"], &["default", "meta", "nshash"]);
        assert!(before.torn_by(&flushed));
        // A family created meanwhile (the writer is creating the store): torn.
        let created = listing(&["000008.log"], &["default", "meta", "nshash", "clusters"]);
        assert!(before.torn_by(&created));
    }

    /// RocksDB's part of it: a read-only open of the families listed before a writer added
    /// one replays the log's writes to the others and drops those to the new one, so the view
    /// holds half of one write; listing again tells.
    #[test]
    fn a_family_added_during_a_read_only_open_tears_the_view_and_is_seen() {
        use rocksdb::{Options, WriteBatch, DB};
        let d = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let mut writer = DB::open_cf(&opts, d.path(), ["nshash"]).unwrap();
        let before = Listing::of(d.path(), DB::list_cf(&opts, d.path()).unwrap());
        writer.create_cf("clusters", &opts).unwrap();
        let mut b = WriteBatch::default();
        b.put_cf(writer.cf_handle("nshash").unwrap(), b"posting", b"1");
        b.put_cf(writer.cf_handle("clusters").unwrap(), b"1", b"cluster");
        writer.write(b).unwrap();
        let families = before.families.clone();
        let view = DB::open_cf_for_read_only(&Options::default(), d.path(), families, false);
        let view = view.unwrap();
        let get = |cf| {
            view.get_cf(view.cf_handle(cf).unwrap(), b"posting")
                .unwrap()
        };
        assert!(get("nshash").is_some());
        assert!(view.cf_handle("clusters").is_none());
        let after = Listing::of(d.path(), DB::list_cf(&opts, d.path()).unwrap());
        assert!(before.torn_by(&after));
    }

    #[test]
    fn the_logs_of_a_directory_are_its_log_files() {
        let d = tempfile::tempdir().unwrap();
        for name in ["000004.log", "000005.sst", "LOG", "CURRENT", "000007.log"] {
            std::fs::write(d.path().join(name), b"").unwrap();
        }
        let mut logs = log_files(d.path());
        logs.sort();
        assert_eq!(logs, ["000004.log", "000007.log"]);
        assert!(log_files(&d.path().join("absent")).is_empty());
    }
}
