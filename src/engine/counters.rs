//! What a handle counts as it works, on any thread (relaxed atomics, totals only): what its
//! lookups read, the time its batches spent in each stage, and how long it held a shared
//! store's write lease.

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(doc)]
use super::Fpdb;

/// The time a handle held a shared store's write lease: since when it holds it, and the
/// nanoseconds of the leases given back.
#[derive(Debug, Default)]
pub(super) struct Lease {
    pub(super) since: std::sync::Mutex<Option<std::time::Instant>>,
    pub(super) held_ns: AtomicU64,
}

/// Where the batches' time went, in seconds of wall time ([`Meters::batch`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchSeconds {
    /// Looking documents up: reads and verification, on all the lookup threads at once
    /// (beside the decisions of the batch before, when looked up ahead).
    pub look_up: f64,
    /// Deciding the documents in input order and staging them: the sequential stage.
    pub decide: f64,
    /// Preparing each batch's commit (records encoded, changes sorted, on the lookup
    /// threads) and handing it to the store, waiting for the batch before to be applied.
    pub commit: f64,
    /// The store's own thread applying the writes (0 without one).
    pub apply: f64,
}

/// What a handle has measured since it was opened ([`Fpdb::meters`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Meters {
    /// What its lookups read.
    pub lookups: LookupStats,
    /// The wall time its batches ([`Fpdb::ingest_batch`]) spent in each stage.
    pub batch: BatchSeconds,
    /// Batches ([`Fpdb::ingest_batch_ahead`]) decided with lookups that ran while the batch
    /// before them was decided.
    pub batches_looked_up_ahead: u64,
    /// Pages that joined a cluster after their own batch (`late_links`: looked up again once
    /// lines they hold became their site's furniture, or gathered by a cluster whose pages
    /// were). Their ingest results named their own cluster.
    pub late_joins: u64,
    /// Clusters split after a batch (`late_links`): two pages of one host whose only link was
    /// through lines that became their site's furniture.
    pub late_splits: u64,
    /// Writes that went through it: equal numbers at two times mean that what it reads did
    /// not change between them (a reader that takes the store's lock in steps checks this to
    /// know that its steps saw one state).
    pub writes: u64,
    /// Seconds it held a shared store's write lease (0 for a store of one process): the
    /// lookups, decisions and writes of its batches, which the other writers wait for.
    pub lease_seconds: f64,
    /// Memory taken by its in-memory presence filters of the store's hash prefixes, when it
    /// has them ([`crate::store::Presence`]).
    pub memory_filter_bytes: Option<u64>,
    /// Documents read into the presence filter when the store was opened: the filter had
    /// been saved before they were written (a run that did not end cleanly, or kept no
    /// filter). None when it was loaded at the store's state, built, or not kept.
    pub memory_filter_caught_up: Option<u64>,
}

/// [`LookupStats`] as counted: on every lookup thread, relaxed (totals only).
#[derive(Debug, Default)]
pub(super) struct LookupCounters {
    /// Nanoseconds [`Fpdb::ingest_batch`] spent looking its documents up (on its lookup
    /// threads; wall time of that stage), and deciding and staging them (one thread).
    pub(super) lookup_ns: AtomicU64,
    pub(super) decide_ns: AtomicU64,
    pub(super) commit_ns: AtomicU64,
    /// Batches decided with lookups that ran while the batch before was decided.
    pub(super) ahead: AtomicU64,
    /// Pages joined late ([`Meters::late_joins`]).
    pub(super) late_joins: AtomicU64,
    /// Clusters split late ([`Meters::late_splits`]).
    pub(super) late_splits: AtomicU64,
    pub(super) lookups: AtomicU64,
    pub(super) postings_found: AtomicU64,
    pub(super) simhash_scanned: AtomicU64,
    pub(super) simhash_candidates: AtomicU64,
    pub(super) records_read: AtomicU64,
    pub(super) verified: AtomicU64,
}

/// What the lookups of an [`Fpdb`] handle read since it was opened: the work that makes a
/// lookup cost more as a store grows. Per looked-up document, postings found and records read
/// stay small on text whose copies are few; simhash entries scanned grow with the store where
/// the corpus crowds the simhash space (many unrelated documents within k bits: each is a
/// record read to be rejected).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LookupStats {
    /// Documents looked up (ingested or queried against the store).
    pub lookups: u64,
    /// Their sentence hashes, band keys and exact keys found held by a stored document.
    pub postings_found: u64,
    /// Simhash table entries read in the permuted-prefix ranges of their fingerprints.
    pub simhash_scanned: u64,
    /// Stored documents found within the simhash distance k (candidates).
    pub simhash_candidates: u64,
    /// Document records read to verify candidates (and clusters' first documents).
    pub records_read: u64,
    /// Candidates that verified (stored ones and ones earlier in the same batch).
    pub verified: u64,
}

impl LookupStats {
    /// Each counter with its name (the field's, as serialized).
    pub fn counts(&self) -> [(&'static str, u64); 6] {
        [
            ("lookups", self.lookups),
            ("postings_found", self.postings_found),
            ("simhash_scanned", self.simhash_scanned),
            ("simhash_candidates", self.simhash_candidates),
            ("records_read", self.records_read),
            ("verified", self.verified),
        ]
    }
}

impl LookupCounters {
    pub(super) fn add(c: &AtomicU64, n: usize) {
        c.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Add what `other` counted of its lookups (not its times) to these counters.
    pub(super) fn add_lookups(&self, other: &LookupCounters) {
        for (to, from) in [
            (&self.lookups, &other.lookups),
            (&self.postings_found, &other.postings_found),
            (&self.simhash_scanned, &other.simhash_scanned),
            (&self.simhash_candidates, &other.simhash_candidates),
            (&self.records_read, &other.records_read),
            (&self.verified, &other.verified),
        ] {
            to.fetch_add(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }

    /// Add the time since `start` to `c`, in nanoseconds.
    pub(super) fn add_time(c: &AtomicU64, start: std::time::Instant) {
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        c.fetch_add(ns, Ordering::Relaxed);
    }
}
