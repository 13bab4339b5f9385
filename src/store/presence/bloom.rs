//! The filters themselves: Bloom filters set with atomic ORs (readers take no lock), in
//! layers that double as they fill, up to a most memory per family.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

/// Hash positions per key (~1% false positives at 10 bits per key).
pub(super) const PROBES: u64 = 7;

/// Keys the first layer of a filter started on an empty store is sized for (~1.3 MB).
pub(super) const FIRST_LAYER_KEYS: u64 = 1 << 20;

/// Most memory the filter of one family takes (both: twice that). Layers of 1.3, 2.6, 5.2, ...
/// MB stop at 78.6 MB (63 million prefixes at full selectivity: ~5 million article-length
/// documents, whose ~13 postings and 10 simhash keys each fill the two families alike);
/// past it the newest layer takes the further keys and answers "maybe" ever more often.
pub(super) const MAX_FAMILY_BYTES: u64 = 80 << 20;

/// A Bloom filter whose bits are set with atomic ORs, so readers need no lock.
pub(super) struct Bloom {
    pub(super) words: Vec<AtomicU64>,
    /// Bits in `words`.
    pub(super) bits: u64,
    /// Keys it is sized for, and keys inserted (repeats counted: a layer fills early, never late).
    pub(super) capacity: u64,
    pub(super) inserted: AtomicU64,
}

impl Bloom {
    /// Words of a filter sized for `keys`.
    pub(super) fn words_for(keys: u64) -> u64 {
        // Not rounded to a power of two (up to twice the memory): positions are mapped onto
        // the bits by a multiply-shift instead of a mask.
        keys.saturating_mul(10).max(1 << 16).div_ceil(64)
    }

    /// Bytes of a filter sized for `keys`.
    pub(super) fn bytes_for(keys: u64) -> u64 {
        Self::words_for(keys) * 8
    }

    pub(super) fn bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    pub(super) fn with_capacity(keys: u64) -> Bloom {
        let words = Self::words_for(keys);
        Bloom {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            bits: words * 64,
            capacity: keys.max(1),
            inserted: AtomicU64::new(0),
        }
    }

    pub(super) fn full(&self) -> bool {
        self.inserted.load(Ordering::Relaxed) >= self.capacity
    }

    pub(super) fn positions(&self, prefix: &[u8]) -> impl Iterator<Item = u64> + '_ {
        // splitmix64 of the prefix bytes (at most 8 are used: the prefixes are 4 and 8 bytes).
        let mut x = prefix.len() as u64;
        for &b in prefix.iter().take(8) {
            x = (x << 8) | u64::from(b);
        }
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        let (h1, h2) = (x, (x >> 32) | 1);
        let bits = u128::from(self.bits);
        (0..PROBES).map(move |i| {
            let x = h1
                .wrapping_add(i.wrapping_mul(h2))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
            ((u128::from(x) * bits) >> 64) as u64
        })
    }

    pub(super) fn insert(&self, prefix: &[u8]) {
        for p in self.positions(prefix) {
            self.words[(p >> 6) as usize].fetch_or(1 << (p & 63), Ordering::Relaxed);
        }
        self.inserted.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn may_contain(&self, prefix: &[u8]) -> bool {
        self.positions(prefix)
            .all(|p| self.words[(p >> 6) as usize].load(Ordering::Relaxed) & (1 << (p & 63)) != 0)
    }
}

/// Bloom filters of growing size: a key is in the newest; a lookup asks them all. They stop
/// growing at `max_bytes`: past it the newest takes every further key beyond its size, so
/// memory stays bounded whatever the store's size and the filter stays exact (a Bloom filter
/// filled past its size answers "maybe" more often, never "no" for a key it holds).
pub(super) struct Layers {
    pub(super) layers: RwLock<Vec<Bloom>>,
    pub(super) max_bytes: u64,
    /// No layer is added any more (`max_bytes` reached).
    pub(super) capped: AtomicBool,
}

impl Layers {
    pub(super) fn new(first: Bloom) -> Layers {
        Self::with_max(first, MAX_FAMILY_BYTES)
    }

    pub(super) fn with_max(first: Bloom, max_bytes: u64) -> Layers {
        Self::of(vec![first], max_bytes)
    }

    pub(super) fn of(layers: Vec<Bloom>, max_bytes: u64) -> Layers {
        Layers {
            layers: RwLock::new(layers),
            max_bytes,
            capped: AtomicBool::new(false),
        }
    }

    pub(super) fn insert(&self, prefix: &[u8]) {
        {
            let layers = self
                .layers
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let last = layers.last().expect("one layer at least");
            if !last.full() || self.capped.load(Ordering::Relaxed) {
                last.insert(prefix);
                return;
            }
        }
        let mut layers = self
            .layers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let last = layers.last().expect("one layer at least");
        if last.full() && !self.capped.load(Ordering::Relaxed) {
            let keys = last.capacity.saturating_mul(2);
            let have: u64 = layers.iter().map(Bloom::bytes).sum();
            if have.saturating_add(Bloom::bytes_for(keys)) <= self.max_bytes {
                layers.push(Bloom::with_capacity(keys));
            } else {
                self.capped.store(true, Ordering::Relaxed);
            }
        }
        layers.last().expect("one layer at least").insert(prefix);
    }

    /// [`Layers::insert`] of each of `prefixes`, the layers locked once for all of them
    /// while the newest has room (every insert of a lock of its own was a point the threads
    /// inserting a batch together all met).
    pub(super) fn insert_all<'a>(&self, prefixes: impl Iterator<Item = &'a [u8]>) {
        let mut prefixes = prefixes.peekable();
        while prefixes.peek().is_some() {
            {
                let layers = self
                    .layers
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let last = layers.last().expect("one layer at least");
                while let Some(p) =
                    prefixes.next_if(|_| !last.full() || self.capped.load(Ordering::Relaxed))
                {
                    last.insert(p);
                }
            }
            // The newest layer is full: the next prefix may add one.
            if let Some(p) = prefixes.next() {
                self.insert(p);
            }
        }
    }

    pub(super) fn may_contain(&self, prefix: &[u8]) -> bool {
        let layers = self
            .layers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        layers.iter().rev().any(|b| b.may_contain(prefix))
    }

    pub(super) fn bytes(&self) -> u64 {
        let layers = self
            .layers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        layers.iter().map(Bloom::bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posting(i: u64) -> Vec<u8> {
        let mut k = i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes().to_vec();
        k.extend_from_slice(&i.to_be_bytes());
        k
    }

    #[test]
    pub(super) fn layers_grow_and_keep_every_key() {
        let layers = Layers::new(Bloom::with_capacity(1000));
        for i in 0..20_000u64 {
            layers.insert(&posting(i)[..8]);
        }
        let n = layers.layers.read().unwrap().len();
        assert!(n >= 4, "{n} layers for 20x the first layer's keys");
        assert!((0..20_000u64).all(|i| layers.may_contain(&posting(i)[..8])));
        // Selective after growing: a filter of one saturated layer answers yes to everything.
        let fp = (1_000_000..1_020_000u64)
            .filter(|&i| layers.may_contain(&posting(i)[..8]))
            .count();
        assert!(fp < 20_000 / 20, "{fp} false positives in 20,000");
    }

    #[test]
    fn inserting_many_at_once_grows_the_layers_as_one_at_a_time() {
        let (one, all) = (
            Layers::new(Bloom::with_capacity(1000)),
            Layers::new(Bloom::with_capacity(1000)),
        );
        let keys: Vec<Vec<u8>> = (0..20_000u64).map(posting).collect();
        for k in &keys {
            one.insert(&k[..8]);
        }
        all.insert_all(keys.iter().map(|k| &k[..8]));
        let words = |l: &Layers| -> Vec<Vec<u64>> {
            let layers = l.layers.read().unwrap();
            layers
                .iter()
                .map(|b| b.words.iter().map(|w| w.load(Ordering::Relaxed)).collect())
                .collect()
        };
        assert!(words(&all).len() >= 4);
        assert!(words(&one) == words(&all), "the same layers, bit for bit");
    }

    #[test]
    pub(super) fn layers_stop_growing_at_their_most_memory_and_keep_every_key() {
        // Room for the first two layers (8 KiB at the smallest size, then 15 KB) but not a
        // third (30 KB).
        let layers = Layers::with_max(Bloom::with_capacity(6000), 24 << 10);
        for i in 0..200_000u64 {
            layers.insert(&posting(i)[..8]);
        }
        assert_eq!(layers.layers.read().unwrap().len(), 2);
        assert!(layers.bytes() <= 24 << 10, "{}", layers.bytes());
        // Filled far past its size: no key is ever missed, most absent ones are "maybe".
        assert!((0..200_000u64).all(|i| layers.may_contain(&posting(i)[..8])));
        let fp = (1_000_000..1_010_000u64)
            .filter(|&i| layers.may_contain(&posting(i)[..8]))
            .count();
        assert!(fp > 9_000, "{fp}");
    }
}
