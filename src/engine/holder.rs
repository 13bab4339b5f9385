//! A posting's holders as a lookup reads them: the oldest, and (a page's lookups, with
//! `other_holders`; a band key's, with `band_holders`) the later ones among its first
//! [`HOLDERS_READ`], read in seq order from the store, then from the batch before and the
//! batch itself ([`Holder::then`]).

use foldhash::HashMap;

use crate::store::schema;

/// The holders of a posting read past its oldest: the first [`HOLDERS_READ`] entries (in seq
/// order), among which the first of another cluster than the oldest's is kept
/// ([`Holder::next`]).
pub(in crate::engine) const HOLDERS_READ: u8 = 4;

/// The oldest document holding a posting (sentence hash, band or exact key), and the cluster
/// it was in at its ingest (a root is found from it); with `next`, the first later holder
/// among the posting's first [`HOLDERS_READ`] whose cluster at its ingest was another, and
/// the later ones read (`later`; [`Holder::same`], the first of the oldest's cluster, is the
/// first of them when it is not `next`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) struct Holder {
    /// The document's seq.
    pub(in crate::engine) seq: u64,
    /// Its cluster when it was ingested.
    pub(in crate::engine) cluster: u64,
    /// The first later holder of another cluster at its ingest (seq, cluster), among the
    /// first [`HOLDERS_READ`] holders (seq 0: none; seqs start at 1), and its place among
    /// them (1-based): [`Holder::next`]. Kept flat: a batch holds one per posting.
    other: (u64, u64),
    other_at: u8,
    /// Holders counted, at most [`HOLDERS_READ`].
    count: u8,
    /// The later holders counted, in seq order, each once and never the oldest (0: none):
    /// [`Holder::later`].
    later: [u64; HOLDERS_READ as usize - 1],
}

impl Holder {
    /// The posting's first holder.
    pub(in crate::engine) fn first(seq: u64, cluster: u64) -> Holder {
        Holder {
            seq,
            cluster,
            other: (0, 0),
            other_at: 0,
            count: 1,
            later: [0; HOLDERS_READ as usize - 1],
        }
    }

    /// The later holders counted (seq order): those of the oldest's cluster at their ingest,
    /// then [`Holder::next`]'s when it was among them. A band key proposes each of them
    /// (`band_holders`): a copy may verify against a later holder of a band and not against
    /// its oldest.
    pub(in crate::engine) fn later(&self) -> impl Iterator<Item = u64> + '_ {
        self.later.iter().copied().take_while(|&s| s != 0)
    }

    /// `seq` kept as a later holder, unless it is the oldest or kept already (a holder read
    /// twice: the store's holders and the batch before's, when the batch was looked up after
    /// that one's commit).
    fn keep_later(&mut self, seq: u64) {
        if seq != self.seq && !self.later.contains(&seq) {
            if let Some(slot) = self.later.iter_mut().find(|s| **s == 0) {
                *slot = seq;
            }
        }
    }

    /// The first later holder of another cluster at its ingest (seq, cluster at its ingest),
    /// among the posting's first [`HOLDERS_READ`].
    pub(in crate::engine) fn next(&self) -> Option<(u64, u64)> {
        (self.other.0 != 0).then_some(self.other)
    }

    /// The first later holder of the oldest's cluster at its ingest, among the posting's first
    /// [`HOLDERS_READ`] read before [`Holder::next`]'s: two copies of an article's opening in
    /// one cluster, the older of them a page whose template lines keep it from verifying.
    pub(in crate::engine) fn same(&self) -> Option<u64> {
        // The reading stops at the first holder of another cluster: every later holder kept
        // before it is of the oldest's cluster.
        self.later().next().filter(|&s| s != self.other.0)
    }

    /// Whether a later holder can change what it keeps.
    pub(in crate::engine) fn open(&self) -> bool {
        self.other.0 == 0 && self.count < HOLDERS_READ
    }

    /// A later holder of the posting (seq order), counted.
    pub(in crate::engine) fn add(&mut self, seq: u64, cluster: u64) {
        if self.open() {
            self.count += 1;
            self.keep_later(seq);
            if cluster != self.cluster {
                (self.other, self.other_at) = ((seq, cluster), self.count);
            }
        }
    }

    /// The holders of `self` followed by those of `later` (all of them later in seq order),
    /// as one posting's: what [`Holder::add`] of each of them in turn keeps.
    pub(in crate::engine) fn then(mut self, later: &Holder) -> Holder {
        if !self.open() {
            return self;
        }
        let room = HOLDERS_READ - self.count;
        // `later`'s holders in order, as many as `self` has room for (none after one of
        // another cluster: it closes `self`). Within `later` each is distinct, so its kept
        // later holders are its 2nd, 3rd, ... counted.
        let more = if later.cluster == self.cluster {
            usize::from(room)
        } else {
            1
        };
        for seq in std::iter::once(later.seq).chain(later.later()).take(more) {
            self.keep_later(seq);
        }
        if later.cluster != self.cluster {
            (self.other, self.other_at) = ((later.seq, later.cluster), self.count + 1);
        } else if later.other.0 != 0 && later.other_at <= room {
            (self.other, self.other_at) = (later.other, self.count + later.other_at);
        }
        self.count = (self.count + later.count).min(HOLDERS_READ);
        self
    }
}

impl From<schema::Posting> for Holder {
    fn from(p: schema::Posting) -> Holder {
        Holder::first(p.seq.0, p.cluster.0)
    }
}

/// Posting -> its oldest holder.
pub(in crate::engine) type Holders = HashMap<u64, Holder>;

/// Posting `h` of `holders` held by `seq` too (of `cluster` at its ingest), later in seq
/// order than its holders there: its first, or counted ([`Holder::add`]).
pub(in crate::engine) fn hold(
    holders: &mut Holders,
    h: u64,
    seq: u64,
    cluster: u64,
) -> &mut Holder {
    holders
        .entry(h)
        .and_modify(|v| v.add(seq, cluster))
        .or_insert(Holder::first(seq, cluster))
}
#[cfg(test)]
mod tests {
    use super::Holder;

    /// A posting's holders (seq order, each with its cluster at ingest) counted one by one.
    fn held(holders: &[(u64, u64)]) -> Holder {
        let (&(seq, cluster), rest) = holders.split_first().expect("a holder");
        let mut h = Holder::first(seq, cluster);
        for &(seq, cluster) in rest {
            h.add(seq, cluster);
        }
        h
    }

    proptest::proptest! {
        /// The holders of the store, then those of a batch ([`Holder::then`]), keep what the
        /// holders counted one by one keep: a batch decides as a sequential ingest does.
        #[test]
        fn then_keeps_what_one_by_one_keeps(
            clusters in proptest::collection::vec(0u64..3, 2..9),
            cut in 1usize..8,
            again in proptest::prelude::any::<bool>(),
        ) {
            let mut holders: Vec<(u64, u64)> =
                clusters.iter().enumerate().map(|(i, &c)| (i as u64 + 1, c)).collect();
            let cut = cut.min(holders.len() - 1);
            if again {
                // The batch's holders start with the store's last one again (a batch looked
                // up after the one before it was committed).
                holders.insert(cut, holders[cut - 1]);
            }
            let whole = held(&holders);
            let parts = held(&holders[..cut]).then(&held(&holders[cut..]));
            proptest::prop_assert_eq!(parts.seq, whole.seq);
            proptest::prop_assert_eq!(parts.next(), whole.next());
            proptest::prop_assert_eq!(parts.same(), whole.same());
            proptest::prop_assert_eq!(parts.later, whole.later);
        }
    }

    #[test]
    fn the_same_clusters_later_holder_is_kept_before_another_clusters() {
        let h = held(&[(1, 7), (2, 7), (3, 9), (4, 7)]);
        assert_eq!(h.same(), Some(2));
        assert_eq!(h.next(), Some((3, 9)));
        // The oldest read twice is no later holder.
        let h = held(&[(1, 7), (1, 7), (3, 7)]);
        assert_eq!(h.same(), Some(3));
        // Another cluster's holder first: the reading stops there.
        let h = held(&[(1, 7), (2, 9), (3, 7)]);
        assert_eq!(h.same(), None);
        assert_eq!(h.next(), Some((2, 9)));
        assert_eq!(h.later().collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn later_holders_are_kept_in_order_up_to_the_first_of_another_cluster() {
        let h = held(&[(1, 7), (2, 7), (3, 7), (4, 7), (5, 7)]);
        assert_eq!(h.later().collect::<Vec<_>>(), vec![2, 3, 4]);
        let h = held(&[(1, 7), (1, 7), (2, 7), (3, 9), (4, 7)]);
        assert_eq!(h.later().collect::<Vec<_>>(), vec![2, 3]);
        let h = held(&[(1, 7), (2, 7), (2, 7), (3, 7)]);
        assert_eq!(h.later().collect::<Vec<_>>(), vec![2, 3]);
    }
}
