//! Permuted-prefix tables (Manku, Jain, Das Sarma, WWW 2007): every fingerprint within Hamming
//! distance k of a query shares the prefix of at least one table with it.
//!
//! The 64 bits are cut into `b` blocks (b > k). Two fingerprints at distance <= k differ in at
//! most k blocks, so at least b - k blocks are equal. There is one table per choice of b - k
//! blocks; a table's permutation moves those blocks to the top (in block order), followed by the
//! remaining blocks. A query scans, in each table, only the stored keys whose top
//! `prefix_bits(t)` bits equal its own. Permutations are bijections that move bits, so they
//! preserve Hamming distance: the distance check runs on permuted values directly.

use crate::error::{Error, Result};

/// Most tables an index may have (C(b, k) grows fast).
pub const MAX_TABLES: usize = 1024;

/// Number of blocks for `k` and an expected number of fingerprints: the smallest `b` whose
/// shortest table prefix is at least log2(expected) - 2 bits (so a query meets a handful of
/// candidates per table), within [`MAX_TABLES`].
pub fn choose_blocks(k: u32, expected: u64) -> u32 {
    let target = (64 - expected.max(2).leading_zeros())
        .saturating_sub(2)
        .max(8);
    let mut best = k + 1;
    for b in (k + 1)..=64 {
        if binomial(b, k) > MAX_TABLES as u64 {
            break;
        }
        best = b;
        if min_prefix_bits(k, b) >= target {
            break;
        }
    }
    best
}

fn binomial(n: u32, k: u32) -> u64 {
    let k = u64::from(k.min(n - k));
    (0..k).fold(1u64, |acc, i| {
        acc.saturating_mul(u64::from(n) - i) / (i + 1)
    })
}

fn block_sizes(b: u32) -> Vec<u32> {
    (0..b).map(|j| 64 / b + u32::from(j < 64 % b)).collect()
}

fn min_prefix_bits(k: u32, b: u32) -> u32 {
    let mut s = block_sizes(b);
    s.sort_unstable();
    s[..(b - k) as usize].iter().sum()
}

/// One table: the block order of its permutation and the length of its prefix.
#[derive(Debug, Clone)]
struct Table {
    order: Vec<usize>,
    prefix_bits: u32,
}

/// The permutations of an index with `b` blocks and distance `k`.
#[derive(Debug, Clone)]
pub struct Permutations {
    k: u32,
    /// (offset from the most significant bit, length) of each block.
    blocks: Vec<(u32, u32)>,
    tables: Vec<Table>,
}

#[inline]
fn extract(fp: u64, start: u32, len: u32) -> u64 {
    (fp << start) >> (64 - len)
}

#[inline]
fn place(bits: u64, pos: u32, len: u32) -> u64 {
    bits << (64 - pos - len)
}

impl Permutations {
    /// The tables for distance `k` with `b` blocks (`k < b <= 64`).
    pub fn new(k: u32, b: u32) -> Result<Self> {
        if b <= k || b > 64 {
            return Err(Error::InvalidOption(format!(
                "simhash blocks = {b} must be greater than k = {k} and at most 64"
            )));
        }
        if binomial(b, k) > MAX_TABLES as u64 {
            return Err(Error::InvalidOption(format!(
                "simhash blocks = {b} with k = {k} needs {} tables (max {MAX_TABLES})",
                binomial(b, k)
            )));
        }
        let sizes = block_sizes(b);
        let mut blocks = Vec::with_capacity(b as usize);
        let mut off = 0;
        for s in sizes {
            blocks.push((off, s));
            off += s;
        }
        let keep = (b - k) as usize;
        let mut tables = Vec::new();
        let mut combo: Vec<usize> = (0..keep).collect();
        loop {
            let mut order = combo.clone();
            order.extend((0..b as usize).filter(|j| !combo.contains(j)));
            let prefix_bits = combo.iter().map(|&j| blocks[j].1).sum();
            tables.push(Table { order, prefix_bits });
            // Next combination in lexicographic order.
            let mut i = keep;
            loop {
                if i == 0 {
                    return Ok(Permutations { k, blocks, tables });
                }
                i -= 1;
                if combo[i] < b as usize - keep + i {
                    break;
                }
            }
            combo[i] += 1;
            for j in i + 1..keep {
                combo[j] = combo[j - 1] + 1;
            }
        }
    }

    /// Maximum Hamming distance the tables guarantee to find.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Always false: there is at least one table.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Number of leading bits of table `t` a candidate must share with the query.
    pub fn prefix_bits(&self, t: usize) -> u32 {
        self.tables[t].prefix_bits
    }

    /// `fp` permuted for table `t`.
    pub fn permute(&self, t: usize, fp: u64) -> u64 {
        let mut out = 0;
        let mut pos = 0;
        for &j in &self.tables[t].order {
            let (start, len) = self.blocks[j];
            out |= place(extract(fp, start, len), pos, len);
            pos += len;
        }
        out
    }

    /// Inverse of [`Permutations::permute`].
    pub fn unpermute(&self, t: usize, p: u64) -> u64 {
        let mut out = 0;
        let mut pos = 0;
        for &j in &self.tables[t].order {
            let (start, len) = self.blocks[j];
            out |= place(extract(p, pos, len), start, len);
            pos += len;
        }
        out
    }

    /// Inclusive range of permuted values sharing table `t`'s prefix with `fp`.
    pub fn range(&self, t: usize, fp: u64) -> (u64, u64) {
        let p = self.permute(t, fp);
        let free = 64 - self.tables[t].prefix_bits;
        let low_mask = if free == 64 {
            u64::MAX
        } else {
            (1u64 << free) - 1
        };
        (p & !low_mask, p | low_mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_counts_are_binomial() {
        assert_eq!(Permutations::new(3, 4).unwrap().len(), 4);
        assert_eq!(Permutations::new(3, 5).unwrap().len(), 10);
        assert_eq!(Permutations::new(3, 6).unwrap().len(), 20);
        assert_eq!(Permutations::new(0, 1).unwrap().len(), 1);
        assert!(Permutations::new(3, 3).is_err());
    }

    #[test]
    fn blocks_grow_with_expected_size() {
        assert_eq!(choose_blocks(3, 100_000), 4);
        assert_eq!(choose_blocks(3, 10_000_000), 5);
        assert!(choose_blocks(3, 1 << 40) >= 6);
        assert_eq!(choose_blocks(0, 1000), 1);
    }
}
