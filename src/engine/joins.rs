//! What a lookup's verified candidates join: the clusters a document may join or merge when
//! some links held only with a site's template lines left out (stores with `site_knowledge`),
//! and the clusters a composite draws on.

use std::collections::{BTreeMap, BTreeSet};

use super::lookup::{sorted_intersection, Candidate, Lookup};
use crate::error::Result;

impl Lookup {
    /// A link that verified only with a site's template lines left out
    /// ([`Checked::left_out_only`]) joins the document to one cluster at most, and never
    /// merges two: a page holding most of two articles' lines, each shown before on its
    /// site (an aggregator's digest, or an attacker's page), would otherwise look like a copy
    /// of each to each and merge them. The clusters reached only through such links are
    /// dropped when another is reached by a link that holds whole; when none is, all but the
    /// one of the best such link (ties: the oldest cluster).
    pub(super) fn left_out_joins_one(&mut self) {
        if self.roots.len() < 2 {
            return;
        }
        let whole: BTreeSet<u64> = self
            .candidates
            .iter()
            .filter(|c| !c.left_out_only)
            .map(|c| c.root)
            .collect();
        let keep: BTreeSet<u64> = if whole.is_empty() {
            let best = self
                .candidates
                .iter()
                .max_by(|a, b| a.overlap.total_cmp(&b.overlap).then(b.root.cmp(&a.root)))
                .map(|c| c.root);
            best.into_iter().collect()
        } else {
            whole
        };
        self.roots.retain(|r, _| keep.contains(r));
        self.candidates.retain(|c| keep.contains(&c.root));
    }

    /// When the document draws on two or more clusters, sharing different sentences with
    /// each, the ids of their members it draws on (one per cluster); else empty. A cluster is
    /// drawn on through its best-verified member, or a member that did not verify but has at
    /// least half of its sentences in the document (the parts of a rewrite mixing several
    /// articles, "伪原创", verify against none of them: each is a fraction of the mix).
    /// Different: for some pair, at most half of the smaller shared set in common. The rules
    /// decide, as for any document, which clusters it joins or merges. `stored` gives a
    /// verified candidate's id and sentence sketch.
    pub(super) fn composite_of(
        &self,
        sketch: &[u32],
        stored: &mut dyn FnMut(u64) -> Result<(String, Vec<u32>)>,
    ) -> Result<Vec<String>> {
        let contained_roots: BTreeSet<u64> = self.contained.iter().map(|c| c.1).collect();
        if self.roots.len() + contained_roots.len() < 2 {
            return Ok(Vec::new());
        }
        // Per root, the member drawn on most: (id, shared sentences).
        let mut per_root: BTreeMap<u64, (String, Vec<u32>)> = BTreeMap::new();
        let mut best: BTreeMap<u64, &Candidate> = BTreeMap::new();
        for c in &self.candidates {
            let e = best.entry(c.root).or_insert(c);
            if c.overlap > e.overlap {
                *e = c;
            }
        }
        for (&root, c) in &best {
            let (id, theirs) = stored(c.seq)?;
            per_root.insert(root, (id, sorted_intersection(sketch, &theirs)));
        }
        for (id, root, shared) in &self.contained {
            let e = per_root.entry(*root).or_default();
            if shared.len() > e.1.len() {
                *e = (id.clone(), shared.clone());
            }
        }
        let parts: Vec<(String, Vec<u32>)> = per_root
            .into_values()
            .filter(|(_, s)| s.len() >= 2)
            .collect();
        let differ = parts.iter().enumerate().any(|(i, (_, a))| {
            parts[i + 1..].iter().any(|(_, b)| {
                let common = sorted_intersection(a, b).len();
                2 * common <= a.len().min(b.len())
            })
        });
        Ok(if differ {
            parts.into_iter().map(|(id, _)| id).collect()
        } else {
            Vec::new()
        })
    }
}
