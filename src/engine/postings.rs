//! What the store holds for a document's fingerprints: the oldest holder of each posting
//! (sentence hash, band key, exact key) and the simhash neighbours from the permuted tables,
//! read one document at a time or for a whole batch in key order ([`ReadMany`]). Never
//! writes; [`super::lookup`] decides on what this reads.

use std::collections::BTreeMap;

use foldhash::HashMap;

pub(super) use super::holder::{hold, Holder, Holders};
use super::{Fpdb, LookupCounters};
use crate::error::Result;
use crate::fingerprint::{simhash::hamming, Fingerprints};
use crate::index::Permutations;
use crate::store::schema::{self, Seq};
use crate::store::{Cf, ReadAhead, Staged, Store};

/// Table `t`'s byte in its simhash keys.
fn table_byte(t: usize) -> u8 {
    u8::try_from(t).expect("fewer than 256 simhash tables")
}

/// The postings `hashes`, each once, in order, with whether its holders are read past the
/// oldest (`true` when any of its lookups reads them: [`Index::postings_of`]).
fn nshash_bounds(hashes: impl Iterator<Item = (u64, bool)>) -> Vec<(u64, bool)> {
    let mut sorted: Vec<(u64, bool)> = hashes.collect();
    sorted.sort_unstable();
    sorted.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        kept.1 |= same && later.1;
        same
    });
    sorted
}

/// The most stored documents simhash proposes to one lookup (`bound_simhash`).
pub const SIMHASH_MOST: usize = 32;

/// Entries of one simhash value read past what [`Index::scan_simhash`] gives of it before it
/// seeks past the value (a seek costs about as much as this many keys read in order).
const SEEK_PAST: usize = 16;

/// Simhash candidates (seq -> distance) bounded: the [`SIMHASH_MOST`] closest, the oldest first
/// among equally close. Copies of one text all have one simhash: unbounded, each new copy
/// read and verified every earlier one (20,000 copies of a cookie notice ran for minutes).
/// What it keeps depends only on the set it is given, so bounding a store's candidates and
/// then those plus a batch's equals bounding all of them (a batch decides as a sequential
/// ingest does).
pub(super) fn bound_simhash(found: &mut BTreeMap<u64, u32>) {
    if found.len() <= SIMHASH_MOST {
        return;
    }
    let mut by_distance: Vec<(u32, u64)> = found.iter().map(|(&seq, &d)| (d, seq)).collect();
    by_distance.select_nth_unstable(SIMHASH_MOST - 1);
    by_distance.truncate(SIMHASH_MOST);
    *found = by_distance.into_iter().map(|(d, seq)| (seq, d)).collect();
}

/// The band keys of `fps` whose later holders a lookup proposes ([`Holder::later`]): all of
/// them in stores with `band_holders`, else none.
pub(super) fn band_keys<'f>(opts: &crate::Options, fps: &'f Fingerprints) -> &'f [u64] {
    if opts.band_holders {
        &fps.bands
    } else {
        &[]
    }
}

/// The stored documents a lookup verifies: the holders of its postings (and the later ones of
/// its band keys `bands`: [`band_keys`]) and its simhash neighbours (`simhash`); a seq may
/// come twice.
pub(super) fn candidate_seqs<'a>(
    holders: &'a Holders,
    simhash: &'a BTreeMap<u64, u32>,
    bands: &'a [u64],
) -> impl Iterator<Item = u64> + 'a {
    holders
        .values()
        .flat_map(|v| {
            std::iter::once(v.seq)
                .chain(v.next().map(|n| n.0))
                .chain(v.same())
        })
        .chain(
            bands
                .iter()
                .filter_map(|h| holders.get(h))
                .flat_map(Holder::later),
        )
        .chain(simhash.keys().copied())
}

/// What the lookups of many documents read ([`Index::read_many`]).
#[derive(Default)]
pub(super) struct ReadMany {
    /// Posting (sentence hash, band or exact key) -> its oldest holder.
    holders: Holders,
    /// The first permuted value of each simhash range read, sorted by table and value,
    /// distinct: table `t`'s are `firsts[starts[t]..starts[t + 1]]`.
    firsts: Vec<u64>,
    starts: Vec<usize>,
    /// The entries (permuted fingerprint, seq) of each range, at its index in `firsts`.
    tables: Vec<Vec<(u64, Seq)>>,
}

/// The index part of the engine: what the store holds for fingerprints (the postings and the
/// permuted simhash tables), read and never written, its reads counted. Borrowed from an
/// [`Fpdb`] ([`Fpdb::index`]); the decisions ([`super::lookup`]) work on what it reads.
pub(super) struct Index<'a> {
    pub(super) store: &'a Staged,
    pub(super) perms: &'a Permutations,
    /// The simhash distance a neighbour is within.
    pub(super) simhash_k: u32,
    /// A page's postings' holders are read past their oldest ([`Holder::next`],
    /// `other_holders`).
    pub(super) other_holders: bool,
    /// Band keys' holders are read past their oldest ([`Holder::later`], `band_holders`).
    pub(super) band_holders: bool,
    pub(super) reads: &'a LookupCounters,
}

impl<'a> Index<'a> {
    /// The postings a lookup of `fps` reads, with whether their holders are read past the
    /// oldest: a page's (`other_holders`), and band keys (`band_holders`).
    fn postings_of<'f>(&self, fps: &'f Fingerprints) -> impl Iterator<Item = (u64, bool)> + 'f {
        let page = self.other_holders && fps.is_page();
        let bands = page || self.band_holders;
        std::iter::once(fps)
            .chain(fps.whole.as_deref())
            .flat_map(move |f| {
                f.nshash
                    .iter()
                    .chain(&f.keys)
                    .map(move |&h| (h, page))
                    .chain(f.bands.iter().map(move |&h| (h, bands)))
            })
    }

    /// The simhash table keys of document `seq`, whose simhash is `q`: one per permuted table,
    /// in table order.
    pub(super) fn table_keys(&self, q: u64, seq: u64) -> impl Iterator<Item = [u8; 17]> + 'a {
        let perms = self.perms;
        (0..perms.len()).map(move |t| schema::simhash_key(t as u8, perms.permute(t, q), Seq(seq)))
    }

    /// Simhash candidates: stored (seq, distance) within k of `q`, found through every table,
    /// at most [`SIMHASH_MOST`] ([`bound_simhash`]).
    pub(super) fn simhash_candidates(&self, q: u64) -> Result<BTreeMap<u64, u32>> {
        let k = self.simhash_k;
        let bounds = self.simhash_bounds(q);
        let ranges: Vec<([u8; 17], [u8; 18])> = bounds.iter().map(|(s, e, _)| (*s, *e)).collect();
        let mut found = BTreeMap::new();
        let scanned = self.scan_simhash(
            &ranges,
            &|i, p| hamming(p, bounds[i].2) <= k,
            &mut |i, p, seq| {
                found.insert(seq, hamming(p, bounds[i].2));
            },
        )?;
        bound_simhash(&mut found);
        LookupCounters::add(&self.reads.simhash_scanned, scanned);
        LookupCounters::add(&self.reads.simhash_candidates, found.len());
        Ok(found)
    }

    /// The entries of simhash `ranges` (sorted, distinct: in one table, ranges of one prefix
    /// length are equal or disjoint), as `visit(range index, permuted fingerprint, seq)`, at
    /// most [`SIMHASH_MOST`] of each permuted value: its oldest (keys of one value sort by
    /// seq), which are all [`bound_simhash`] may keep of it. A value `wanted` refuses (too far
    /// from the fingerprint looked up) gives none. A value with more entries than it gives is
    /// left by a seek past it after [`SEEK_PAST`] more, so that a text stored 10^6 times costs
    /// a lookup a bounded read, not 10^6 keys. Returns the entries read within that bound
    /// (what [`Index::read_many`] keeps of the same ranges: both count alike).
    fn scan_simhash(
        &self,
        ranges: &[([u8; 17], [u8; 18])],
        wanted: &dyn Fn(usize, u64) -> bool,
        visit: &mut dyn FnMut(usize, u64, u64),
    ) -> Result<usize> {
        // (range index, where its scan starts): every range, then where values were left.
        let mut work: Vec<(usize, [u8; 17])> =
            ranges.iter().enumerate().map(|(i, r)| (i, r.0)).collect();
        let mut scanned = 0;
        while !work.is_empty() {
            let scan: Vec<(&[u8], &[u8])> = work
                .iter()
                .map(|(i, s)| (&s[..], &ranges[*i].1[..]))
                .collect();
            let mut again = Vec::new();
            let mut cur = 0;
            // The value being read in range `cur`: (permuted, wanted, given, passed over).
            let mut value: Option<(u64, bool, usize, usize)> = None;
            let mut err = None;
            self.store.scan_ranges(Cf::Simhash, &scan, &mut |key, _| {
                if err.is_some() {
                    return false;
                }
                // Ranges are visited in order: a key belongs to the first one not ending at or
                // before it.
                while cur < work.len() && key >= &ranges[work[cur].0].1[..] {
                    cur += 1;
                    value = None;
                }
                let (t, p, seq) = match schema::decode_simhash_key(key) {
                    Ok(e) if cur < work.len() => e,
                    Ok(_) => {
                        err = Some(schema::corrupt(
                            Cf::Simhash,
                            key,
                            "outside the ranges scanned".into(),
                        ));
                        return false;
                    }
                    Err(e) => {
                        err = Some(e);
                        return false;
                    }
                };
                let i = work[cur].0;
                let v = match &mut value {
                    Some(v) if v.0 == p => v,
                    v => v.insert((p, wanted(i, p), 0, 0)),
                };
                if v.2 < SIMHASH_MOST {
                    v.2 += 1;
                    scanned += 1;
                    if v.1 {
                        visit(i, p, seq.0);
                    }
                    return true;
                }
                v.3 += 1;
                if v.3 < SEEK_PAST {
                    return true;
                }
                // Many more of this value: seek past it (the rest of this range is scanned
                // again from there).
                if let Some(next) = p.checked_add(1) {
                    again.push((i, schema::simhash_key(t, next, Seq(0))));
                }
                value = None;
                false
            })?;
            if let Some(e) = err {
                return Err(e);
            }
            work = again;
        }
        Ok(scanned)
    }

    /// The range of every table that may hold a fingerprint within k of `q`, with `q`
    /// permuted for that table.
    pub(super) fn simhash_bounds(&self, q: u64) -> Vec<([u8; 17], [u8; 18], u64)> {
        (0..self.perms.len())
            .map(|t| {
                let (lo, hi) = self.perms.range(t, q);
                let (start, end) = schema::simhash_range(table_byte(t), lo, hi);
                (start, end, self.perms.permute(t, q))
            })
            .collect()
    }

    /// Tell a remote store ([`ReadAhead`]) everything the lookups of `docs` will read first:
    /// their ids, their posting lists, their simhash ranges.
    pub(super) fn prefetch(
        &self,
        ahead: &dyn ReadAhead,
        docs: &[(&super::Document, Fingerprints)],
    ) -> Result<()> {
        let ids: Vec<&[u8]> = docs.iter().map(|(d, _)| d.id.as_bytes()).collect();
        ahead.prefetch_keys(Cf::DocIds, &ids)?;
        let bounds: Vec<([u8; 8], [u8; 17])> =
            nshash_bounds(docs.iter().flat_map(|(_, f)| self.postings_of(f)))
                .into_iter()
                .map(|(h, _)| schema::nshash_range(h))
                .collect();
        let ranges: Vec<(&[u8], &[u8])> = bounds.iter().map(|(s, e)| (&s[..], &e[..])).collect();
        ahead.prefetch(Cf::Nshash, &ranges)?;
        let bounds: Vec<_> = docs
            .iter()
            .flat_map(|(_, f)| f.lookup_simhashes())
            .flat_map(|q| self.simhash_bounds(q))
            .collect();
        let ranges: Vec<(&[u8], &[u8])> = bounds.iter().map(|(s, e, _)| (&s[..], &e[..])).collect();
        ahead.prefetch(Cf::Simhash, &ranges)
    }

    /// The oldest stored holder of sentence hash `h`.
    pub(super) fn nshash_holder(&self, h: u64) -> Result<Option<Holder>> {
        let (start, end) = schema::nshash_range(h);
        let mut found = None;
        self.store.scan(Cf::Nshash, &start, &end, &mut |k, v| {
            found = Some(schema::decode_nshash(k, v).map(Holder::from));
            false
        })?;
        found.transpose()
    }

    /// [`Index::nshash_holder`] of every posting a lookup of `fps` reads, through one
    /// iterator (with [`Holder::next`] for a page's).
    pub(super) fn nshash_holders(&self, fps: &Fingerprints) -> Result<Holders> {
        let found = self.holders_of(&nshash_bounds(self.postings_of(fps)))?;
        LookupCounters::add(&self.reads.postings_found, found.len());
        Ok(found)
    }

    /// The oldest holder of each posting of `hashes` (sorted, distinct; those marked read up
    /// to [`HOLDERS_READ`](super::holder::HOLDERS_READ) holders: [`Index::postings_of`]),
    /// through one iterator; not counted.
    fn holders_of(&self, hashes: &[(u64, bool)]) -> Result<Holders> {
        let bounds: Vec<([u8; 8], [u8; 17])> = hashes
            .iter()
            .map(|&(h, _)| schema::nshash_range(h))
            .collect();
        let ranges: Vec<(&[u8], &[u8])> = bounds.iter().map(|(s, e)| (&s[..], &e[..])).collect();
        let more = |h: u64| {
            hashes
                .binary_search_by_key(&h, |x| x.0)
                .is_ok_and(|i| hashes[i].1)
        };
        let mut found = HashMap::with_capacity_and_hasher(bounds.len(), Default::default());
        let mut err = None;
        self.store.scan_ranges(
            Cf::Nshash,
            &ranges,
            &mut |k, v| match schema::decode_nshash(k, v) {
                Ok(p) => hold(&mut found, p.hash, p.seq.0, p.cluster.0).open() && more(p.hash),
                Err(e) => {
                    err = Some(e);
                    false
                }
            },
        )?;
        match err {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// What the lookups of many documents (`fps`) read from the postings and the simhash
    /// tables, read in key order on all cores of the current pool: each share of the sorted
    /// ranges through one iterator, so consecutive seeks land in the table files and index
    /// partitions the previous one opened (a lookup per document opened an iterator, and
    /// every seek a file of its own). The simhash ranges are gathered, sorted and
    /// deduplicated on the pool's threads too, and the tables' entries kept by position, not
    /// in a hash map: on one thread those two steps were about a quarter of a batch's lookups
    /// (zh50k), which many cores did not shorten. Not counted: [`Index::holders_in`] and
    /// [`Index::simhash_in`] count what each document's own lookup would have.
    pub(super) fn read_many(&self, fps: &[&Fingerprints]) -> Result<ReadMany> {
        use rayon::prelude::*;
        let shares = rayon::current_num_threads().max(1) * 2;
        let bounds = nshash_bounds(fps.iter().flat_map(|f| self.postings_of(f)));
        let size = bounds.len().div_ceil(shares).max(1);
        let mut holders = HashMap::default();
        for part in bounds
            .par_chunks(size)
            .map(|c| self.holders_of(c))
            .collect::<Vec<_>>()
        {
            holders.extend(part?);
        }
        // Each range as (table, first and last permuted value): integers sort as their keys
        // do (table byte, then the value big-endian), and the last value follows from the
        // first (the table's prefix), so the distinct ranges are the distinct triples.
        let perms = &self.perms;
        let mut triples: Vec<(u8, u64, u64)> = fps
            .par_iter()
            .flat_map_iter(|f| {
                f.lookup_simhashes().flat_map(move |q| {
                    (0..perms.len()).map(move |t| {
                        let (lo, hi) = perms.range(t, q);
                        (table_byte(t), lo, hi)
                    })
                })
            })
            .collect();
        triples.par_sort_unstable();
        triples.dedup();
        let ranges: Vec<([u8; 17], [u8; 18])> = triples
            .par_iter()
            .map(|&(t, lo, hi)| schema::simhash_range(t, lo, hi))
            .collect();
        let size = ranges.len().div_ceil(shares).max(1);
        let mut tables = Vec::with_capacity(ranges.len());
        let parts = ranges
            .par_chunks(size)
            .map(|c| self.simhash_entries(c))
            .collect::<Vec<_>>();
        for part in parts {
            tables.extend(part?);
        }
        let starts = (0..=perms.len())
            .map(|t| triples.partition_point(|r| usize::from(r.0) < t))
            .collect();
        let firsts = triples.into_iter().map(|(_, lo, _)| lo).collect();
        Ok(ReadMany {
            holders,
            firsts,
            starts,
            tables,
        })
    }

    /// The entries (permuted fingerprint, seq) of each simhash range of `ranges` (sorted,
    /// distinct), at most [`SIMHASH_MOST`] of each value ([`Index::scan_simhash`]).
    fn simhash_entries(&self, ranges: &[([u8; 17], [u8; 18])]) -> Result<Vec<Vec<(u64, Seq)>>> {
        let mut out = vec![Vec::new(); ranges.len()];
        self.scan_simhash(ranges, &|_, _| true, &mut |i, p, seq| {
            out[i].push((p, Seq(seq)));
        })?;
        Ok(out)
    }

    /// [`Index::nshash_holders`] of `fps`'s postings from what [`Index::read_many`] read.
    pub(super) fn holders_in(&self, fps: &Fingerprints, read: &ReadMany) -> Holders {
        let mut found = HashMap::default();
        for h in fps.lookup_postings() {
            if let Some(&v) = read.holders.get(&h) {
                found.insert(h, v);
            }
        }
        LookupCounters::add(&self.reads.postings_found, found.len());
        found
    }

    /// [`Index::simhash_candidates`] of `q` from what [`Index::read_many`] read (`None` when
    /// it did not read `q`'s ranges).
    pub(super) fn simhash_in(&self, q: u64, read: &ReadMany) -> Option<BTreeMap<u64, u32>> {
        let k = self.simhash_k;
        let mut found = BTreeMap::new();
        let mut scanned = 0;
        for t in 0..self.perms.len() {
            let (lo, _) = self.perms.range(t, q);
            let p = self.perms.permute(t, q);
            let (from, to) = (*read.starts.get(t)?, *read.starts.get(t + 1)?);
            let i = from + read.firsts[from..to].binary_search(&lo).ok()?;
            for &(e, Seq(seq)) in &read.tables[i] {
                scanned += 1;
                let d = hamming(e, p);
                if d <= k {
                    found.insert(seq, d);
                }
            }
        }
        bound_simhash(&mut found);
        LookupCounters::add(&self.reads.simhash_scanned, scanned);
        LookupCounters::add(&self.reads.simhash_candidates, found.len());
        Some(found)
    }

    /// The oldest holder of each posting of `fps` and its simhash neighbours (seq ->
    /// distance): from what [`Index::read_many`] read when given, else from the store.
    pub(super) fn holders_and_neighbours(
        &self,
        fps: &Fingerprints,
        read: Option<&ReadMany>,
    ) -> Result<(Holders, BTreeMap<u64, u32>)> {
        let holders = match read {
            Some(read) => self.holders_in(fps, read),
            None => self.nshash_holders(fps)?,
        };
        let mut simhash = BTreeMap::new();
        for q in fps.lookup_simhashes() {
            let found = match read.and_then(|r| self.simhash_in(q, r)) {
                Some(found) => found,
                None => self.simhash_candidates(q)?,
            };
            // The whole page's neighbours too, at the nearer distance (bounded again: what
            // is kept depends only on the set, as a sequential ingest's).
            for (seq, d) in found {
                let e = simhash.entry(seq).or_insert(d);
                *e = (*e).min(d);
            }
        }
        bound_simhash(&mut simhash);
        Ok((holders, simhash))
    }
}

impl Fpdb {
    /// The index part, reading this handle's store.
    pub(super) fn index(&self) -> Index<'_> {
        Index {
            store: &self.store,
            perms: &self.perms,
            simhash_k: self.opts.simhash_k,
            other_holders: self.opts.other_holders,
            band_holders: self.opts.band_holders,
            reads: &self.reads,
        }
    }
}
