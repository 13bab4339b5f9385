//! Keys of the ordered families, and the two numbers they are built of: a document's
//! [`Seq`] and a cluster's [`ClusterId`]. Both are u64s in the same big-endian form, and a
//! `members` key holds one of each: typed, a key cannot be built with them swapped.

use std::fmt;

use super::{corrupt, Cf};
use crate::error::Result;

/// A document's sequence number: its place in ingest order (from 1), the key of its record
/// in `docs` and the holder in its postings and table keys. Seqs are never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Seq(pub u64);

/// A cluster's id: the key of its record in `clusters` (a union-find node: a merged
/// cluster's id keeps pointing at the root it was merged into) and of a root's `members`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ClusterId(pub u64);

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// u64 as 8 big-endian bytes (so byte order = numeric order).
pub fn u64_key(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}

/// Decode 8 big-endian bytes.
pub fn decode_u64(cf: Cf, key: &[u8], v: &[u8]) -> Result<u64> {
    v.try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| corrupt(cf, key, format!("expected 8 bytes, found {}", v.len())))
}

/// A `simhash` key.
pub fn simhash_key(table: u8, permuted: u64, seq: Seq) -> [u8; 17] {
    let mut k = [0u8; 17];
    k[0] = table;
    k[1..9].copy_from_slice(&permuted.to_be_bytes());
    k[9..].copy_from_slice(&seq.0.to_be_bytes());
    k
}

/// Decode a `simhash` key into (table, permuted fp, seq).
pub fn decode_simhash_key(k: &[u8]) -> Result<(u8, u64, Seq)> {
    if k.len() != 17 {
        return Err(corrupt(Cf::Simhash, k, "expected a 17-byte key".into()));
    }
    Ok((k[0], be(&k[1..9]), Seq(be(&k[9..]))))
}

/// `[start, end)` covering every key of `table` with permuted value in `lo..=hi`.
pub fn simhash_range(table: u8, lo: u64, hi: u64) -> ([u8; 17], [u8; 18]) {
    let start = simhash_key(table, lo, Seq(0));
    let mut end = [0u8; 18];
    end[..17].copy_from_slice(&simhash_key(table, hi, Seq(u64::MAX)));
    // One byte past the largest 17-byte key with this prefix: exclusive end.
    end[17] = 0;
    (start, end)
}

/// An `nshash` posting key: sentence hash, then the seq of a document holding it. Postings
/// of one hash are adjacent and ordered by seq, so the first is its oldest holder.
pub fn nshash_key(hash: u64, seq: Seq) -> [u8; 16] {
    pair_key(hash, seq.0)
}

/// Two u64s, big-endian, one after the other (ordered by the first, then the second).
fn pair_key(a: u64, b: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&a.to_be_bytes());
    k[8..].copy_from_slice(&b.to_be_bytes());
    k
}

/// 8 big-endian bytes (the caller checked the length).
fn be(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().expect("8 bytes"))
}

/// `[start, end)` covering every posting of `hash` (and a format 2 entry keyed by it alone).
/// Both bounds start with the hash, so a prefix bloom filter on 8 bytes applies.
pub fn nshash_range(hash: u64) -> ([u8; 8], [u8; 17]) {
    let mut end = [0xffu8; 17];
    end[..8].copy_from_slice(&hash.to_be_bytes());
    (hash.to_be_bytes(), end)
}

/// An `nshash` entry decoded: a sentence hash, a document holding it and the cluster the
/// document was in when it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// The sentence hash.
    pub hash: u64,
    /// The holder.
    pub seq: Seq,
    /// The holder's cluster then (any id of it: resolve it to its root).
    pub cluster: ClusterId,
}

/// Decode an `nshash` entry: a posting, or a format 2 entry (bare hash -> cluster + first
/// holder).
pub fn decode_nshash(key: &[u8], v: &[u8]) -> Result<Posting> {
    let posting = |hash, seq, cluster| Posting {
        hash,
        seq: Seq(seq),
        cluster: ClusterId(cluster),
    };
    match (key.len(), v.len()) {
        (16, 8) => Ok(posting(be(&key[..8]), be(&key[8..]), be(v))),
        (8, 16) => Ok(posting(be(key), be(&v[8..]), be(&v[..8]))),
        _ => Err(corrupt(
            Cf::Nshash,
            key,
            format!(
                "unexpected {}-byte key with {}-byte value",
                key.len(),
                v.len()
            ),
        )),
    }
}

/// A `members` key: root cluster id, then a member's seq.
pub fn members_key(root: ClusterId, seq: Seq) -> [u8; 16] {
    pair_key(root.0, seq.0)
}

/// A `furniture` key: the host's key, then the line's ([`crate::text::lines::line_key`]).
pub fn furniture_key(host: u64, line: u64) -> [u8; 16] {
    pair_key(host, line)
}

/// `[start, end)` covering every `furniture` key of `host`.
pub fn furniture_range(host: u64) -> ([u8; 8], [u8; 17]) {
    nshash_range(host)
}

/// The host of a `furniture` key.
pub fn decode_furniture_host(key: &[u8]) -> Result<u64> {
    if key.len() != 16 {
        return Err(corrupt(Cf::Furniture, key, "expected a 16-byte key".into()));
    }
    Ok(be(&key[..8]))
}

/// What a `furniture` value says of a line of a host: the clusters it was seen in (their ids
/// then), or none when it is furniture.
pub fn decode_furniture(key: &[u8], v: &[u8]) -> Result<Vec<u64>> {
    if !v.len().is_multiple_of(8) || v.len() > 64 {
        return Err(corrupt(
            Cf::Furniture,
            key,
            format!(
                "expected up to 8 cluster ids of 8 bytes, got {} bytes",
                v.len()
            ),
        ));
    }
    Ok(v.chunks_exact(8).map(be).collect())
}

/// `[start, end)` covering every member of `root`.
pub fn members_range(root: ClusterId) -> ([u8; 8], [u8; 17]) {
    nshash_range(root.0)
}

/// Decode a `members` key into (root, seq).
pub fn decode_members_key(key: &[u8]) -> Result<(ClusterId, Seq)> {
    if key.len() != 16 {
        return Err(corrupt(Cf::Members, key, "expected a 16-byte key".into()));
    }
    Ok((ClusterId(be(&key[..8])), Seq(be(&key[8..]))))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Every key decodes to what built it, and byte order is the order of its numbers
        /// (what the prefix scans and "the first posting is the oldest holder" rely on).
        #[test]
        fn keys_decode_to_what_built_them_and_sort_as_their_numbers(
            a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), d in any::<u64>(), t in any::<u8>(),
        ) {
            prop_assert_eq!(decode_members_key(&members_key(ClusterId(a), Seq(b))).unwrap(), (ClusterId(a), Seq(b)));
            prop_assert_eq!(decode_simhash_key(&simhash_key(t, a, Seq(b))).unwrap(), (t, a, Seq(b)));
            let posting = decode_nshash(&nshash_key(a, Seq(b)), &u64_key(c)).unwrap();
            prop_assert_eq!(posting, Posting { hash: a, seq: Seq(b), cluster: ClusterId(c) });
            prop_assert_eq!(
                nshash_key(a, Seq(b)).cmp(&nshash_key(c, Seq(d))),
                (a, b).cmp(&(c, d))
            );
            let (start, end) = members_range(ClusterId(a));
            let key = members_key(ClusterId(a), Seq(b));
            prop_assert!(start[..] <= key[..] && key[..] < end[..]);
            let other = members_key(ClusterId(c), Seq(d));
            prop_assert_eq!(start[..] <= other[..] && other[..] < end[..], a == c);
        }
    }

    #[test]
    fn a_format_2_entry_names_its_first_holder_and_cluster() {
        let mut v = u64_key(9).to_vec();
        v.extend_from_slice(&u64_key(4));
        let p = decode_nshash(&u64_key(7), &v).unwrap();
        assert_eq!(
            p,
            Posting {
                hash: 7,
                seq: Seq(4),
                cluster: ClusterId(9)
            }
        );
        assert!(decode_nshash(&u64_key(7), &u64_key(9)).is_err());
    }
}
