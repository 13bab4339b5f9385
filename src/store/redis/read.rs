//! Reads: the bucket layout of each family (see the module's key layout), range scans
//! page by page (many buckets' first pages in one pipeline), and answers read ahead for a
//! batch's lookups.

use redis::cluster::{cluster_pipe, ClusterPipeline};

use super::{storage, Entries, RedisStore, PAGE, PIPE, SCAN_BUCKETS};
use crate::error::{Error, Result};
use crate::store::{Cf, ReadAhead};

/// How a family is cut into buckets.
pub(super) fn bucket_of(cf: Cf, key: &[u8]) -> Vec<u8> {
    if cf == Cf::DocIds {
        return vec![(crate::hash::fingerprint64(key) >> 56) as u8];
    }
    let (n, last) = prefix_of(cf);
    let mut b = key[..key.len().min(n)].to_vec();
    if b.len() == n && n > 0 {
        b[n - 1] &= last;
    }
    b
}

/// The bucket prefix of an ordered family: its length in bytes and the mask of its last
/// byte. Bits, not bytes, set the size: 4,096 buckets of `nshash` and 4,096 per simhash
/// table hold a batch's postings in a few hundred per bucket at most, so a batch is a few
/// thousand ZADD/HSET commands of many members each rather than one per posting (65,536
/// buckets per family cost the servers 30% more CPU and 1.8x the memory at 10^4 documents),
/// while 10^7 documents still leave each bucket a few MB and spread a table over 4,096 slots.
pub(super) fn prefix_of(cf: Cf) -> (usize, u8) {
    match cf {
        Cf::Meta | Cf::DocIds | Cf::Furniture => (0, 0xff),
        Cf::Docs | Cf::Clusters | Cf::Members => (7, 0xff),
        Cf::Nshash => (2, 0xf0),
        Cf::Simhash => (3, 0xf0),
    }
}

/// Whether a family's buckets are key prefixes (so buckets in key order hold keys in key
/// order); `doc_ids` and `furniture` are bucketed by hash.
pub(super) fn ordered(cf: Cf) -> bool {
    !matches!(cf, Cf::DocIds | Cf::Furniture)
}

/// Whether a family stores values (the others store keys only: no hash per bucket).
pub(super) fn has_values(cf: Cf) -> bool {
    !matches!(cf, Cf::Simhash | Cf::Members)
}

/// The one bucket holding every key of `[start, end)` when both bounds share it (a lookup's
/// range: one posting list, one simhash prefix), so no registry read is needed.
pub(super) fn single_bucket(cf: Cf, start: &[u8], end: &[u8]) -> Option<Vec<u8>> {
    if !ordered(cf) {
        return None;
    }
    let b = bucket_of(cf, start);
    let n = prefix_of(cf).0;
    (start.len() >= n && end.len() >= n && bucket_of(cf, end) == b).then_some(b)
}

/// Keys of a page, and their values (empty for key-only families).
pub(super) type Page = (Vec<Vec<u8>>, Vec<Option<Vec<u8>>>);

/// Visit `entries` in order until `visit` returns false.
pub(super) fn visit_all(entries: &Entries, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
    for (k, v) in entries {
        if !visit(k, v) {
            break;
        }
    }
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `[` + bytes: an inclusive lexicographic bound; `(` exclusive.
pub(super) fn lex(incl: bool, b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + 1);
    v.push(if incl { b'[' } else { b'(' });
    v.extend_from_slice(b);
    v
}

impl RedisStore {
    /// Buckets of `cf` that may hold keys in `[start, end)`, in order.
    pub(super) fn buckets(&self, cf: Cf, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>> {
        let reg = self.registry(cf);
        let (lo, hi) = if ordered(cf) {
            // Masking is monotone: a key in [start, end) has a bucket in
            // [bucket(start), bucket(end)] (short bounds are their own prefixes).
            (
                lex(true, &bucket_of(cf, start)),
                lex(true, &bucket_of(cf, end)),
            )
        } else {
            (b"-".to_vec(), b"+".to_vec())
        };
        self.run("list buckets", |c| {
            redis::cmd("ZRANGE")
                .arg(&reg)
                .arg(&lo)
                .arg(&hi)
                .arg("BYLEX")
                .query(c)
        })
    }

    /// The command reading one page of a bucket's keys: from `lo` (a lexicographic bound)
    /// below `end`.
    pub(super) fn page_cmd(&self, cf: Cf, bucket: &[u8], lo: &[u8], end: &[u8]) -> redis::Cmd {
        let mut c = redis::cmd("ZRANGE");
        c.arg(self.zkey(cf, bucket))
            .arg(lo)
            .arg(lex(false, end))
            .arg("BYLEX")
            .arg("LIMIT")
            .arg(0)
            .arg(PAGE);
        c
    }

    /// Visit a page; returns Some(next lower bound) when the bucket may hold more, None when
    /// it is done or `visit` asked to stop (`stopped` tells which).
    pub(super) fn visit_page(
        page: &Page,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
        stopped: &mut bool,
    ) -> Option<Vec<u8>> {
        let (keys, values) = page;
        for (i, k) in keys.iter().enumerate() {
            let v = match values.get(i) {
                Some(Some(v)) => v.as_slice(),
                // A key whose value is gone: deleted between the two reads.
                Some(None) => continue,
                None => &[],
            };
            if !visit(k, v) {
                *stopped = true;
                return None;
            }
        }
        match keys.last() {
            Some(last) if keys.len() == PAGE => Some(lex(false, last)),
            _ => None,
        }
    }

    /// Keys (and values) of one bucket in `[start, end)`, a page at a time, until `visit`
    /// returns false; returns whether to go on.
    pub(super) fn scan_bucket(
        &self,
        cf: Cf,
        bucket: &[u8],
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        self.scan_bucket_from(cf, bucket, lex(true, start), end, visit)
    }

    pub(super) fn scan_bucket_from(
        &self,
        cf: Cf,
        bucket: &[u8],
        mut lo: Vec<u8>,
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        loop {
            let mut p: ClusterPipeline = cluster_pipe();
            p.add_command(self.page_cmd(cf, bucket, &lo, end));
            let page = self
                .pipelined_pages(cf, &[bucket], &p)?
                .pop()
                .unwrap_or_default();
            let mut stopped = false;
            match Self::visit_page(&page, visit, &mut stopped) {
                Some(next) => lo = next,
                None => return Ok(!stopped),
            }
        }
    }

    /// The pages a pipeline of [`RedisStore::page_cmd`]s (one per bucket of `buckets`)
    /// returns, in order, with their values read in a second pipeline (plain commands, not a
    /// script: a Lua call cost the server ~5x a ZRANGE). A value deleted between the two
    /// reads comes back as None and is skipped.
    pub(super) fn pipelined_pages(
        &self,
        cf: Cf,
        buckets: &[&[u8]],
        p: &ClusterPipeline,
    ) -> Result<Vec<Page>> {
        if p.cmd_iter().next().is_none() {
            return Ok(Vec::new());
        }
        let keys: Vec<Vec<Vec<u8>>> = self.run("scan", |c| p.query(c))?;
        if !has_values(cf) {
            return Ok(keys.into_iter().map(|k| (k, Vec::new())).collect());
        }
        let mut hp: ClusterPipeline = cluster_pipe();
        for (b, ks) in buckets.iter().zip(&keys).filter(|(_, ks)| !ks.is_empty()) {
            let mut c = redis::cmd("HMGET");
            c.arg(self.hkey(cf, b));
            for k in ks {
                c.arg(k.as_slice());
            }
            hp.add_command(c);
        }
        let mut values: std::vec::IntoIter<Vec<Option<Vec<u8>>>> = if hp.cmd_iter().next().is_some()
        {
            self.run("scan", |c| hp.query::<Vec<Vec<Option<Vec<u8>>>>>(c))?
                .into_iter()
        } else {
            Vec::new().into_iter()
        };
        keys.into_iter()
            .map(|ks| {
                let vs = if ks.is_empty() {
                    Vec::new()
                } else {
                    values.next().ok_or_else(|| {
                        Error::Storage("redis: a pipelined read lost a reply".into())
                    })?
                };
                Ok((ks, vs))
            })
            .collect()
    }

    pub(super) fn forget_prefetched(&self) {
        let mut c = self.cache.lock().expect("cache");
        c.ranges.clear();
        c.keys.clear();
        c.since = None;
        c.unchanged = false;
    }

    /// A prefetched range's entries, if `[start, end)` was read ahead.
    pub(super) fn prefetched(&self, cf: Cf, start: &[u8], end: &[u8]) -> Option<Entries> {
        let c = self.cache.lock().expect("cache");
        if c.ranges.is_empty() {
            return None;
        }
        c.ranges
            .get(&(cf.index(), start.to_vec(), end.to_vec()))
            .cloned()
    }

    /// [`RedisStore::scan_bucket`] of many buckets in order, their first pages read in
    /// pipelines of [`SCAN_BUCKETS`] buckets (a full scan of `simhash` is up to 40,960 buckets: one
    /// round trip per bucket made `verify` crawl). Returns whether to go on.
    pub(super) fn scan_buckets(
        &self,
        cf: Cf,
        buckets: &[Vec<u8>],
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        for chunk in buckets.chunks(SCAN_BUCKETS) {
            let mut p: ClusterPipeline = cluster_pipe();
            for b in chunk {
                p.add_command(self.page_cmd(cf, b, &lex(true, start), end));
            }
            let names: Vec<&[u8]> = chunk.iter().map(std::vec::Vec::as_slice).collect();
            let pages = self.pipelined_pages(cf, &names, &p)?;
            for (b, page) in chunk.iter().zip(pages) {
                let mut stopped = false;
                if let Some(next) = Self::visit_page(&page, visit, &mut stopped) {
                    if !self.scan_bucket_from(cf, b, next, end, visit)? {
                        return Ok(false);
                    }
                }
                if stopped {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// Reads as the cluster answers them (with what was read ahead), under no overlay.
impl RedisStore {
    pub(super) fn get_applied(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        {
            let c = self.cache.lock().expect("cache");
            if let Some(v) = c.keys.get(&(cf.index(), key.to_vec())) {
                return Ok(v.clone());
            }
        }
        let bucket = bucket_of(cf, key);
        let v = if has_values(cf) {
            let h = self.hkey(cf, &bucket);
            self.run("get", |c| redis::cmd("HGET").arg(&h).arg(key).query(c))?
        } else {
            let z = self.zkey(cf, &bucket);
            let score: Option<f64> =
                self.run("get", |c| redis::cmd("ZSCORE").arg(&z).arg(key).query(c))?;
            score.map(|_| Vec::new())
        };
        let mut c = self.cache.lock().expect("cache");
        if c.since.is_some() && cf != Cf::Meta {
            c.keys.insert((cf.index(), key.to_vec()), v.clone());
        }
        Ok(v)
    }

    pub(super) fn scan_applied(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        if let Some(entries) = self.prefetched(cf, start, end) {
            visit_all(&entries, visit);
            return Ok(());
        }
        if let Some(b) = single_bucket(cf, start, end) {
            self.scan_bucket(cf, &b, start, end, visit)?;
            return Ok(());
        }
        let buckets = self.buckets(cf, start, end)?;
        if ordered(cf) {
            self.scan_buckets(cf, &buckets, start, end, visit)?;
            return Ok(());
        }
        // Hash buckets: gather, then visit in key order.
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        self.scan_buckets(cf, &buckets, start, end, &mut |k, v| {
            all.push((k.to_vec(), v.to_vec()));
            true
        })?;
        all.sort_unstable();
        visit_all(&all, visit);
        Ok(())
    }

    /// The first page of every single-bucket range in one pipelined round trip (one per
    /// node); the rest as [`Store::scan`](crate::store::Store::scan) would.
    pub(super) fn scan_ranges_applied(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let cached: Vec<Option<Entries>> = ranges
            .iter()
            .map(|(s, e)| self.prefetched(cf, s, e))
            .collect();
        let buckets: Vec<Option<Vec<u8>>> = ranges
            .iter()
            .zip(&cached)
            .map(|((s, e), hit)| {
                (s < e && hit.is_none())
                    .then(|| single_bucket(cf, s, e))
                    .flatten()
            })
            .collect();
        let mut p: ClusterPipeline = cluster_pipe();
        for ((start, end), b) in ranges.iter().zip(&buckets) {
            if let Some(b) = b {
                p.add_command(self.page_cmd(cf, b, &lex(true, start), end));
            }
        }
        let piped: Vec<&[u8]> = buckets
            .iter()
            .flatten()
            .map(std::vec::Vec::as_slice)
            .collect();
        let mut pages = self.pipelined_pages(cf, &piped, &p)?.into_iter();
        for (((start, end), b), hit) in ranges.iter().zip(&buckets).zip(cached) {
            if let Some(entries) = hit {
                visit_all(&entries, visit);
                continue;
            }
            match b {
                Some(b) => {
                    let page = pages.next().ok_or_else(|| {
                        Error::Storage("redis: a pipelined scan lost a reply".into())
                    })?;
                    let mut stopped = false;
                    if let Some(next) = Self::visit_page(&page, visit, &mut stopped) {
                        self.scan_bucket_from(cf, b, next, end, visit)?;
                    }
                }
                None => self.scan_applied(cf, start, end, visit)?,
            }
        }
        Ok(())
    }
}

/// A batch's lookups read ahead in one pipeline per node; the answers serve those reads until
/// the next write or the lease is let go.
impl ReadAhead for RedisStore {
    fn prefetch(&self, cf: Cf, ranges: &[(&[u8], &[u8])]) -> Result<()> {
        let known = |s: &[u8], e: &[u8]| {
            let c = self.cache.lock().expect("cache");
            c.ranges.contains_key(&(cf.index(), s.to_vec(), e.to_vec()))
        };
        let wanted: Vec<(&[u8], &[u8], Vec<u8>)> = ranges
            .iter()
            .filter(|(s, e)| s < e && !known(s, e))
            .filter_map(|&(s, e)| single_bucket(cf, s, e).map(|b| (s, e, b)))
            .collect();
        for chunk in wanted.chunks(PIPE) {
            let mut p: ClusterPipeline = cluster_pipe();
            for (s, e, b) in chunk {
                p.add_command(self.page_cmd(cf, b, &lex(true, s), e));
            }
            let piped: Vec<&[u8]> = chunk.iter().map(|(_, _, b)| b.as_slice()).collect();
            let pages = self.pipelined_pages(cf, &piped, &p)?;
            let mut c = self.cache.lock().expect("cache");
            for ((s, e, _), (keys, values)) in chunk.iter().zip(pages) {
                if keys.len() >= PAGE {
                    continue; // not complete: scanned when asked
                }
                let entries = keys
                    .into_iter()
                    .enumerate()
                    .filter_map(|(i, k)| match values.get(i) {
                        Some(Some(v)) => Some((k, v.clone())),
                        Some(None) => None,
                        None => Some((k, Vec::new())),
                    })
                    .collect();
                c.ranges
                    .insert((cf.index(), s.to_vec(), e.to_vec()), entries);
            }
        }
        Ok(())
    }

    fn prefetch_keys(&self, cf: Cf, keys: &[&[u8]]) -> Result<()> {
        let keys: Vec<&[u8]> = {
            let c = self.cache.lock().expect("cache");
            keys.iter()
                .copied()
                .filter(|k| !c.keys.contains_key(&(cf.index(), k.to_vec())))
                .collect()
        };
        for chunk in keys.chunks(PIPE) {
            let mut p: ClusterPipeline = cluster_pipe();
            for k in chunk {
                let b = bucket_of(cf, k);
                if has_values(cf) {
                    p.cmd("HGET").arg(self.hkey(cf, &b)).arg(*k);
                } else {
                    p.cmd("ZSCORE").arg(self.zkey(cf, &b)).arg(*k);
                }
            }
            let replies: Vec<redis::Value> = self.run("get", |c| p.query(c))?;
            let mut c = self.cache.lock().expect("cache");
            for (k, v) in chunk.iter().zip(replies) {
                let v = match v {
                    redis::Value::Nil => None,
                    v if has_values(cf) => Some(
                        redis::from_redis_value::<Vec<u8>>(v)
                            .map_err(|e| storage(&self.url, "get", e.into()))?,
                    ),
                    _ => Some(Vec::new()),
                };
                c.keys.insert((cf.index(), k.to_vec()), v);
            }
        }
        Ok(())
    }

    fn end_prefetch(&self) {
        self.forget_prefetched();
    }

    fn read_before_lease(&self) -> Result<bool> {
        if self.read_only || self.leased.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(false);
        }
        self.read_since_now()?;
        Ok(true)
    }

    fn unchanged(&self) -> bool {
        self.cache.lock().expect("cache").unchanged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_of_ordered_families_are_monotone_and_at_most_the_key() {
        // What scans rely on: keys in order have buckets in order, and a key's bucket is
        // not above it (so [bucket(start), bucket(end)] covers every key of [start, end)).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for cf in Cf::ALL.into_iter().filter(|&cf| ordered(cf)) {
            let mut keys: Vec<Vec<u8>> = (0..2000)
                .map(|i| {
                    let len = (next() % 18) as usize;
                    let mut k: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                    if i % 3 == 0 && !k.is_empty() {
                        k[0] = 7; // shared prefixes
                    }
                    k
                })
                .collect();
            keys.sort();
            for w in keys.windows(2) {
                assert!(bucket_of(cf, &w[0]) <= bucket_of(cf, &w[1]), "{cf:?} {w:?}");
            }
            for k in &keys {
                assert!(bucket_of(cf, k).as_slice() <= k.as_slice(), "{cf:?} {k:?}");
            }
        }
    }
}
