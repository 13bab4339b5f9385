//! The read side of the engine: what a store holds, asked for without changing it (query,
//! export, stats, clusters, report, a document's dates and standing, a page without its
//! site's furniture, the store verified). Its methods are in `read.rs`, `query.rs`,
//! `report.rs`, `stored_texts.rs`, `furniture.rs` and `verify.rs`.

use std::path::Path;

use super::finder::Finder;
use super::postings::Index;
use super::records::Records;
use super::sites::Sites;
use super::{Counters, Fpdb, LookupCounters};
use crate::fingerprint::Fingerprinter;
use crate::index::Permutations;
use crate::options::Options;
use crate::store::Staged;

/// The read side of an [`Fpdb`], borrowed from it ([`Fpdb::searcher`]): it sees the store as
/// the handle does (its staged writes included) and its counters as they were when it was
/// made.
pub struct Searcher<'a> {
    pub(super) store: &'a Staged,
    pub(super) opts: &'a Options,
    pub(super) fingerprinter: &'a Fingerprinter,
    pub(super) perms: &'a Permutations,
    pub(super) reads: &'a LookupCounters,
    pub(super) path: Option<&'a Path>,
    /// A format 2 store opened read-only: bare-hash `nshash` entries, no `members`.
    pub(super) legacy: bool,
    /// The handle's counters when the searcher was made.
    pub(super) counts: Counters,
}

impl<'a> Searcher<'a> {
    /// The lookup part.
    pub(super) fn finder(&self) -> Finder<'a> {
        Finder {
            store: self.store,
            opts: self.opts,
            fingerprinter: self.fingerprinter,
            perms: self.perms,
            reads: self.reads,
            batch_pages: false,
        }
    }

    /// The postings and simhash tables.
    pub(super) fn index(&self) -> Index<'a> {
        self.finder().index()
    }

    /// What the store learned of each site.
    pub(super) fn sites(&self) -> Sites<'a> {
        self.finder().sites()
    }

    /// The documents' and clusters' records.
    pub(super) fn records(&self) -> Records<'a> {
        Records { store: self.store }
    }
}

impl Fpdb {
    /// The read side: query, export, stats, clusters, report.
    pub fn searcher(&self) -> Searcher<'_> {
        Searcher {
            store: &self.store,
            opts: &self.opts,
            fingerprinter: &self.fingerprinter,
            perms: &self.perms,
            reads: &self.reads,
            path: self.path.as_deref(),
            legacy: self.legacy,
            counts: self.counts,
        }
    }
}
