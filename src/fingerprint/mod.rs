//! Fingerprints of one document, computed from its text alone (no store access), so that they
//! can be computed on all cores before the sequential store step.

mod farmhash;
pub mod nshash;
pub mod simhash;

use serde::{Deserialize, Serialize};

pub use self::farmhash::fingerprint64;
use crate::options::Options;
use crate::text;

/// Every fingerprint of one document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprints {
    /// Sentence hashes (empty when nshash is off or the text has no letters/digits).
    pub nshash: Vec<u64>,
    /// 64-bit simhash (`None` when simhash is off or the text has no terms).
    pub simhash: Option<u64>,
    /// 32-bit hashes of every qualifying sentence, sorted (see [`nshash::overlap`]); used
    /// to verify candidates from either algorithm.
    pub sketch: Vec<u32>,
    /// Characters of normalized text.
    pub chars: u64,
}

impl Fingerprints {
    /// Whether there is nothing to match this document on.
    pub fn is_empty(&self) -> bool {
        self.nshash.is_empty() && self.simhash.is_none()
    }
}

/// Compute the fingerprints of `body` with the store's settings.
pub fn fingerprint(body: &str, opts: &Options) -> Fingerprints {
    let norm = text::normalize(body);
    let (mut top, sketch) = nshash::nshash_and_sketch(&norm, opts);
    if !opts.nshash {
        top.clear();
    }
    Fingerprints {
        nshash: top,
        simhash: if opts.simhash {
            simhash::simhash(&text::weighted_terms(&norm))
        } else {
            None
        },
        sketch,
        chars: norm.chars().count() as u64,
    }
}
