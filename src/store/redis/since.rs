//! Reading before the lease: a writer reads its batch ahead while another holds the write
//! lease, then brings what it read up to date with the batches committed since, instead of
//! reading it again under the lease.
//!
//! Every batch is logged under a number before it is applied (`{NS}log:N`, `{NS}commit` = N,
//! then `{NS}applied` = N once applied, in order; the last [`KEEP_LOGS`] logs stay). A writer notes
//! `applied` before it reads; each key it then reads holds its value at some
//! moment after that. Under the lease it applies the logs of every batch after it,
//! in order, to what it read: a key a later batch changed
//! takes that batch's last change, and a key none changed still holds what it was read as.
//! So what it read then equals what a read under the lease would return. Where a log it
//! needs is gone (more than [`KEEP_LOGS`] batches were committed meanwhile), it drops what
//! it read and reads under the lease, as a writer that never read ahead.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::read::{bucket_of, has_values};
use super::{Prefetched, RedisStore};
use crate::error::Result;
use crate::store::{Cf, Op};

/// Logs of committed batches kept for the writers that read before them: a writer reads
/// about one batch of each other writer behind, so 32 covers as many writers; each is a
/// batch's compressed journal (0.57–0.65 MB for 1,024 short documents).
pub(super) const KEEP_LOGS: u64 = 32;

/// A range's start and end.
type Bounds = (Vec<u8>, Vec<u8>);

/// Where the answers kept stand: the batches applied to them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Since {
    /// Every batch up to this one is in them: read after it was applied to the cluster, or
    /// applied to them since. The batches after it (committed, maybe being applied while
    /// they were read) are applied to them from their logs.
    applied: u64,
    /// Some batch's log was applied to them since they began to be read.
    moved: bool,
}

impl Prefetched {
    /// Bring every range and key read to what they are after the batches `logs` (applied
    /// in order): a put sets a key read (and adds it to each complete range read that
    /// holds it), a delete removes it. Keys nobody read stay unknown (read when asked),
    /// except the batches' records, kept as written.
    pub(super) fn apply(&mut self, logs: &[&[Op]]) {
        let mut ranges_of: HashMap<(usize, Vec<u8>), Vec<Bounds>> = HashMap::new();
        for (cf, start, end) in self.ranges.keys() {
            ranges_of
                .entry((*cf, bucket_of(Cf::ALL[*cf], start)))
                .or_default()
                .push((start.clone(), end.clone()));
        }
        let ranged: Vec<bool> = Cf::ALL
            .iter()
            .map(|cf| ranges_of.keys().any(|(c, _)| *c == cf.index()))
            .collect();
        for op in logs.iter().copied().flatten() {
            let (cf, key, value) = match op {
                Op::Put(cf, k, v) => (*cf, k, Some(v)),
                Op::Delete(cf, k) => (*cf, k, None),
            };
            let value = value.map(|v| {
                if has_values(cf) {
                    v.clone()
                } else {
                    Vec::new()
                }
            });
            if cf == Cf::Docs {
                // The records of other writers' documents: the candidates that lookups
                // under the lease find anew.
                self.keys.insert((cf.index(), key.clone()), value.clone());
            } else if let Some(slot) = self.keys.get_mut(&(cf.index(), key.clone())) {
                slot.clone_from(&value);
            }
            if !ranged[cf.index()] {
                continue;
            }
            let Some(within) = ranges_of.get(&(cf.index(), bucket_of(cf, key))) else {
                continue;
            };
            for (start, end) in within.iter().filter(|(s, e)| s <= key && key < e) {
                let range = (cf.index(), start.clone(), end.clone());
                let Some(entries) = self.ranges.get_mut(&range) else {
                    continue;
                };
                let at = entries.binary_search_by(|(k, _)| k.as_slice().cmp(key));
                match (at, &value) {
                    (Ok(i), Some(v)) => entries[i].1.clone_from(v),
                    (Err(i), Some(v)) => entries.insert(i, (key.clone(), v.clone())),
                    (Ok(i), None) => {
                        entries.remove(i);
                    }
                    (Err(_), None) => {}
                }
            }
        }
    }
}

impl RedisStore {
    /// Note where the store stands, and keep every answer read from now on until the lease
    /// is taken ([`RedisStore::catch_up`]).
    pub(super) fn read_since_now(&self) -> Result<()> {
        self.forget_prefetched();
        let (_, applied) = self.commit_and_applied()?;
        let mut c = self.cache.lock().expect("cache");
        c.since = Some(Since {
            applied,
            moved: false,
        });
        Ok(())
    }

    /// While waiting for the lease: what was read ahead brought up to date with the
    /// batches committed so far, so that little is left to do once the lease is taken.
    /// What cannot be is dropped (read again under the lease).
    pub(super) fn catch_up_waiting(&self) {
        if self.cache.lock().expect("cache").since.is_none() {
            return;
        }
        let commit = self.ns_key("commit");
        let now = self.run("read the journals", |c| {
            redis::cmd("GET").arg(&commit).query::<Option<u64>>(c)
        });
        if self
            .catch_up_to(now.map(Option::unwrap_or_default))
            .is_err()
        {
            self.forget_prefetched();
        }
        // The newest batches may still be being applied when the lease comes: sorted now,
        // they lie over the reads under it at no cost there.
        let newest: Vec<_> = {
            let c = self.cache.lock().expect("cache");
            c.logs.values().rev().take(2).cloned().collect()
        };
        for layer in newest {
            layer.sorted();
        }
    }

    /// Under the lease just taken (after [`RedisStore::replay_older_journal`]; `older`: it
    /// replayed an older fpdb's journal): what was read ahead brought up to date with the
    /// batches committed since, and no longer kept as read; or dropped where their logs
    /// are gone. Sets whether nothing was committed since it began to be read
    /// ([`ReadAhead::unchanged`](crate::store::ReadAhead::unchanged)).
    pub(super) fn catch_up(&self, older: bool) -> Result<()> {
        if older {
            self.forget_prefetched();
            return Ok(());
        }
        self.catch_up_to(Ok(self.commit.load(Ordering::SeqCst)))?;
        let mut c = self.cache.lock().expect("cache");
        if let Some(since) = c.since.take() {
            c.unchanged = !since.moved;
        }
        Ok(())
    }

    /// The logs of the batches after those applied to what was read ahead, up to `now`
    /// (the last committed), applied to it; it is dropped where a log is gone.
    fn catch_up_to(&self, now: Result<u64>) -> Result<()> {
        let Some(since) = self.cache.lock().expect("cache").since else {
            return Ok(());
        };
        let now = now?;
        if now < since.applied {
            // The store went back (a failover lost batches): nothing read holds.
            self.forget_prefetched();
            return Ok(());
        }
        let first = since.applied + 1;
        if first > now {
            return Ok(());
        }
        let numbers: Vec<u64> = (first..=now).collect();
        let Ok(logs) = self.read_logs(&numbers) else {
            self.forget_prefetched();
            return Ok(());
        };
        let mut c = self.cache.lock().expect("cache");
        let ops: Vec<&[Op]> = logs.values().map(|l| l.as_slice()).collect();
        c.apply(&ops);
        c.logs.extend(
            logs.iter()
                .map(|(n, l)| (*n, std::sync::Arc::new(super::apply::Layer::new(l.clone())))),
        );
        c.since = Some(Since {
            applied: now,
            moved: true,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    type Model = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

    fn step(m: &mut Model, op: &Op) {
        match op {
            Op::Put(cf, k, v) => {
                let v = if has_values(*cf) {
                    v.clone()
                } else {
                    Vec::new()
                };
                m.insert((cf.index(), k.clone()), v);
            }
            Op::Delete(cf, k) => {
                m.remove(&(cf.index(), k.clone()));
            }
        }
    }

    /// What a read of `ranges` and `keys` returns from `m`.
    fn read(m: &Model, ranges: &[(Cf, Vec<u8>, Vec<u8>)], keys: &[(Cf, Vec<u8>)]) -> Prefetched {
        let mut p = Prefetched::default();
        for (cf, s, e) in ranges {
            let entries = m
                .range((cf.index(), s.clone())..(cf.index(), e.clone()))
                .map(|((_, k), v)| (k.clone(), v.clone()))
                .collect();
            p.ranges.insert((cf.index(), s.clone(), e.clone()), entries);
        }
        for (cf, k) in keys {
            p.keys.insert(
                (cf.index(), k.clone()),
                m.get(&(cf.index(), k.clone())).cloned(),
            );
        }
        p
    }

    fn op() -> impl Strategy<Value = Op> {
        let cf = prop_oneof![
            Just(Cf::Nshash),
            Just(Cf::Simhash),
            Just(Cf::Docs),
            Just(Cf::DocIds)
        ];
        // Few distinct keys in one or two buckets, so ops meet the ranges read.
        let key = (0u8..2, 0u8..24).prop_map(|(b, k)| {
            let mut key = vec![0x11, b << 4, 0, 0, 0, 0, 0, k];
            key.extend_from_slice(&[k; 8]);
            key
        });
        (cf, key, any::<bool>(), any::<u8>()).prop_map(|(cf, k, put, v)| {
            if put {
                Op::Put(cf, k, vec![v])
            } else {
                Op::Delete(cf, k)
            }
        })
    }

    proptest! {
        /// A read made at any moment between two batches' changes, brought up to date with
        /// every change since the batches began, equals a read made after them all.
        #[test]
        fn answers_brought_up_to_date_equal_answers_read_after(
            before in proptest::collection::vec(op(), 0..40),
            since in proptest::collection::vec(op(), 0..60),
            read_at in 0usize..60,
        ) {
            let mut m = Model::new();
            before.iter().for_each(|o| step(&mut m, o));
            let read_at = read_at.min(since.len());
            since[..read_at].iter().for_each(|o| step(&mut m, o));
            let ranges: Vec<(Cf, Vec<u8>, Vec<u8>)> = [Cf::Nshash, Cf::Simhash, Cf::Docs]
                .into_iter()
                .flat_map(|cf| {
                    [(0u8, 0u8, 9u8), (0, 9, 24), (1, 3, 4), (1, 0, 24)].map(|(b, lo, hi)| {
                        let s = vec![0x11, b << 4, 0, 0, 0, 0, 0, lo];
                        let e = vec![0x11, b << 4, 0, 0, 0, 0, 0, hi];
                        (cf, s, e)
                    })
                })
                .collect();
            let keys: Vec<(Cf, Vec<u8>)> = since
                .iter()
                .chain(&before)
                .map(|o| match o {
                    Op::Put(cf, k, _) | Op::Delete(cf, k) => (*cf, k.clone()),
                })
                .step_by(2)
                .collect();
            let mut cached = read(&m, &ranges, &keys);
            since[read_at..].iter().for_each(|o| step(&mut m, o));
            let (first, rest) = since.split_at(since.len() / 2);
            cached.apply(&[first, rest]);
            let fresh = read(&m, &ranges, &keys);
            prop_assert_eq!(&cached.ranges, &fresh.ranges);
            for (k, v) in &cached.keys {
                prop_assert_eq!(v, &m.get(k).cloned(), "{:?}", k);
            }
            for k in fresh.keys.keys() {
                prop_assert!(cached.keys.contains_key(k));
            }
        }
    }
}
