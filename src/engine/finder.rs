//! The lookup part of the engine: a document's candidates read from the index, verified
//! against their records (with what the store learned of their sites), and the clusters they
//! propose (`lookup.rs`). Reads only; the writer decides on what it finds.

use super::postings::Index;
use super::records::Records;
use super::sites::Sites;
use super::{Fpdb, LookupCounters};
use crate::fingerprint::Fingerprinter;
use crate::index::Permutations;
use crate::options::Options;
use crate::store::Staged;

/// What a lookup reads, borrowed from an [`Fpdb`] ([`Fpdb::finder`]).
#[derive(Clone, Copy)]
pub(super) struct Finder<'a> {
    pub(super) store: &'a Staged,
    pub(super) opts: &'a Options,
    pub(super) fingerprinter: &'a Fingerprinter,
    pub(super) perms: &'a Permutations,
    pub(super) reads: &'a LookupCounters,
    /// A batch's pages learn their sites' furniture together ([`Fpdb::set_batch_furniture`]).
    pub(super) batch_pages: bool,
}

impl<'a> Finder<'a> {
    /// The postings and simhash tables.
    pub(super) fn index(&self) -> Index<'a> {
        Index {
            store: self.store,
            perms: self.perms,
            simhash_k: self.opts.simhash_k,
            other_holders: self.opts.other_holders,
            band_holders: self.opts.band_holders,
            reads: self.reads,
        }
    }

    /// The documents' and clusters' records.
    pub(super) fn records(&self) -> Records<'a> {
        Records { store: self.store }
    }

    /// What the store learned of the candidates' sites.
    pub(super) fn sites(&self) -> Sites<'a> {
        Sites {
            store: self.store,
            opts: self.opts,
            fingerprinter: self.fingerprinter,
        }
    }
}

impl Fpdb {
    /// The lookup part, reading this handle's store.
    pub(super) fn finder(&self) -> Finder<'_> {
        Finder {
            store: &self.store,
            opts: &self.opts,
            fingerprinter: &self.fingerprinter,
            perms: &self.perms,
            reads: &self.reads,
            batch_pages: self.batch_pages,
        }
    }
}
