//! 64-bit Charikar simhash over weighted terms: each term's 64-bit FarmHash votes +weight on
//! its set bits and -weight on its clear bits; bit i of the fingerprint is set when the vote
//! for bit i is positive.

use crate::hash::fingerprint64;

/// Simhash of weighted terms; `None` when there are no terms (such a document has no simhash
/// and is matched by nshash only).
pub fn simhash<S: AsRef<str>>(terms: &[(S, f64)]) -> Option<u64> {
    if terms.is_empty() {
        return None;
    }
    // Votes in fixed point (2^-24 units): integer sums do not depend on the order of the terms,
    // so the same terms always give the same fingerprint.
    let mut votes = [0i64; 64];
    for (term, weight) in terms {
        let h = fingerprint64(term.as_ref().as_bytes());
        let w = (weight * (1u64 << 24) as f64)
            .round()
            .clamp(0.0, (1u64 << 40) as f64) as i64;
        for (i, v) in votes.iter_mut().enumerate() {
            if h >> i & 1 == 1 {
                *v += w;
            } else {
                *v -= w;
            }
        }
    }
    let mut fp = 0u64;
    for (i, v) in votes.iter().enumerate() {
        if *v > 0 {
            fp |= 1 << i;
        }
    }
    Some(fp)
}

/// [`simhash`] of a document with at least `min_terms` terms; `None` for fewer (a store's
/// `simhash_min_terms`: a simhash of a few terms is not a near-duplicate fingerprint, as
/// one changed term moves it by ~10 of its 64 bits).
pub fn simhash_of_at_least<S: AsRef<str>>(terms: &[(S, f64)], min_terms: u32) -> Option<u64> {
    if terms.len() < min_terms as usize {
        return None;
    }
    simhash(terms)
}

/// Number of differing bits.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_term_sets_are_close_and_different_ones_far() {
        let base: Vec<(String, f64)> = (0..200)
            .map(|i| (format!("term{i}"), 1.0 + f64::from(i % 7)))
            .collect();
        let mut near = base.clone();
        near[3].0 = "changed".into();
        let other: Vec<(String, f64)> = (0..200).map(|i| (format!("other{i}"), 1.0)).collect();
        let (a, b, c) = (
            simhash(&base).unwrap(),
            simhash(&near).unwrap(),
            simhash(&other).unwrap(),
        );
        assert!(hamming(a, b) <= 3, "near distance {}", hamming(a, b));
        assert!(hamming(a, c) > 10, "far distance {}", hamming(a, c));
        // Order does not matter (the default fingerprints take their terms unordered).
        let mut rev = base.clone();
        rev.reverse();
        assert_eq!(simhash(&rev).unwrap(), a);
        let mut shuffled = base.clone();
        shuffled.sort_by_key(|(t, _)| fingerprint64(t.as_bytes()));
        assert_eq!(simhash(&shuffled).unwrap(), a);
        assert_eq!(simhash::<String>(&[]), None);
    }
}
