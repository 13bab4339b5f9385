//! The site-knowledge part of the engine: what the store learned of each site's pages, read
//! for a page (`furniture.rs`) and changed by it (`learn.rs`, `publishers.rs`).

use super::records::Records;
use super::Fpdb;
use crate::fingerprint::Fingerprinter;
use crate::options::Options;
use crate::store::Staged;

/// The site-knowledge part of the engine: what the store learned of each site's pages (its
/// furniture, the lines its pages showed, the sites of a shared host), read for a page and
/// the changes a page makes to it; its rules are in `furniture.rs`, `learn.rs` and
/// `publishers.rs`.
/// Borrowed from an [`Fpdb`] ([`Fpdb::sites`]).
#[derive(Clone, Copy)]
pub(super) struct Sites<'a> {
    pub(super) store: &'a Staged,
    pub(super) opts: &'a Options,
    pub(super) fingerprinter: &'a Fingerprinter,
}

impl<'a> Sites<'a> {
    /// The records the rules read (a page's cluster and its members).
    pub(super) fn records(&self) -> Records<'a> {
        Records { store: self.store }
    }
}

impl Fpdb {
    /// The site-knowledge part, reading this handle's store.
    pub(super) fn sites(&self) -> Sites<'_> {
        Sites {
            store: &self.store,
            opts: &self.opts,
            fingerprinter: &self.fingerprinter,
        }
    }
}
