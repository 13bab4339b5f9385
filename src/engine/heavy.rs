//! Heaviest keys of a stream in bounded memory: the report's host tables.

use std::collections::HashMap;
use std::hash::Hash;

/// Heaviest keys of a stream in bounded memory (Misra–Gries): at most `cap` counters; a new
/// key arriving when all are taken lowers every counter by one instead (and drops those at
/// zero). A key's count is then low by at most the number of such steps, and any key seen more
/// than n / (cap + 1) times of n is kept.
#[derive(Debug, Clone)]
pub struct Heavy<K> {
    counts: HashMap<K, u64>,
    cap: usize,
    lowered: u64,
}

impl<K: Hash + Eq + Clone + Ord> Heavy<K> {
    /// A table of at most `cap` (≥ 1) counters.
    pub fn new(cap: usize) -> Self {
        Heavy {
            counts: HashMap::new(),
            cap: cap.max(1),
            lowered: 0,
        }
    }

    /// Count one `key`.
    pub fn add(&mut self, key: K) {
        if let Some(c) = self.counts.get_mut(&key) {
            *c += 1;
        } else if self.counts.len() < self.cap {
            self.counts.insert(key, 1);
        } else {
            self.lowered += 1;
            self.counts.retain(|_, c| {
                *c -= 1;
                *c > 0
            });
        }
    }

    /// The count kept for `key` (0 when none is kept).
    pub fn count(&self, key: &K) -> u64 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// How much any count may be below the key's true count.
    pub fn max_undercount(&self) -> u64 {
        self.lowered
    }

    /// The `n` heaviest keys, most first (ties by key).
    pub fn top(&self, n: usize) -> Vec<(K, u64)> {
        let mut v: Vec<(K, u64)> = self.counts.iter().map(|(k, c)| (k.clone(), *c)).collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }
}
