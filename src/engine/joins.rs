//! What a lookup's verified candidates join: the clusters a document may join or merge when
//! some links held only with a site's template lines left out (stores with `site_knowledge`)
//! or through its host's lines only (stores with `host_lines_join_one`)
//! or only as an excerpt (stores with `excerpts`), and the clusters a composite draws on.

use std::collections::{BTreeMap, BTreeSet};

use super::lookup::{sorted_intersection, Candidate, Lookup};
use crate::error::Result;

impl Lookup {
    /// A link that verified only with a site's template lines left out
    /// ([`Checked::left_out_only`](super::lookup::Checked)), or (stores with
    /// `host_lines_join_one`) one to a page of the document's own host through lines its host
    /// showed before only ([`Checked::host_lines_only`](super::lookup::Checked)), never merges
    /// the clusters of two different articles: a page holding most of two articles' lines,
    /// each shown before on its site (an aggregator's digest, or an attacker's page), would
    /// otherwise look like a copy of each to each and merge them, and a short article put in
    /// a template shares the template's lines with every other page of it. The clusters
    /// reached by links that hold whole are kept (when there are none, the one of the best
    /// such link; ties: the oldest cluster; but none of two or more reached through the
    /// host's lines only: those lines are its template, shown by two articles). A cluster
    /// reached only through such links is kept too when the sentences the document shares
    /// with it are more than half shared with a kept one (one article: a teaser of an article
    /// and its repost, met by the article's own page), a kept one reached whole for a link
    /// through the host's lines; and dropped otherwise.
    pub(super) fn left_out_joins_one(&mut self) {
        let partial = |c: &Candidate| c.left_out_only || c.host_lines_only;
        if self.roots.len() < 2 || !self.candidates.iter().any(partial) {
            return;
        }
        // Per root: the sentences shared by its best candidate, whether a link holds whole,
        // and whether every link shares only lines of the page's host.
        let mut per_root: BTreeMap<u64, (&Candidate, bool, bool)> = BTreeMap::new();
        for c in &self.candidates {
            let e = per_root.entry(c.root).or_insert((c, false, true));
            if c.overlap > e.0.overlap {
                e.0 = c;
            }
            e.1 |= !partial(c);
            e.2 &= c.host_lines_only;
        }
        let whole: BTreeSet<u64> = per_root
            .iter()
            .filter(|(_, (_, whole, _))| *whole)
            .map(|(&r, _)| r)
            .collect();
        let mut keep = whole.clone();
        if keep.is_empty() {
            // Two clusters reached through the host's lines only: those lines are the
            // host's template, shown by two articles, and join neither.
            let host_only = per_root.values().filter(|(_, _, h)| *h).count();
            let best = per_root
                .iter()
                .filter(|(_, (_, _, h))| !*h || host_only < 2)
                .max_by(|a, b| a.1 .0.overlap.total_cmp(&b.1 .0.overlap).then(b.0.cmp(a.0)))
                .map(|(&r, _)| r);
            keep.extend(best);
        }
        loop {
            let joined: Vec<u64> = per_root
                .iter()
                .filter(|(r, _)| !keep.contains(r))
                .filter(|(_, (c, _, host_only))| {
                    // Through the host's lines only: one article with a cluster reached whole.
                    let with = if *host_only { &whole } else { &keep };
                    with.iter().any(|k| {
                        let theirs = &per_root[k].0.shared;
                        let common = sorted_intersection(&c.shared, theirs).len();
                        2 * common > c.shared.len().min(theirs.len())
                    })
                })
                .map(|(&r, _)| r)
                .collect();
            if joined.is_empty() {
                break;
            }
            keep.extend(joined);
        }
        self.roots.retain(|r, _| keep.contains(r));
        self.candidates.retain(|c| keep.contains(&c.root));
    }

    /// A document that verifies against every candidate only as its excerpt (their first
    /// sentences, at most a line of its own) never merges two clusters: the opening of an
    /// article is also the opening of a page quoting it with text of its own, and would chain
    /// the two. It joins the oldest of them.
    pub(super) fn excerpt_joins_one(&mut self) {
        if self.roots.len() < 2 || !self.candidates.iter().all(|c| c.excerpt) {
            return;
        }
        let oldest = *self.roots.keys().next().expect("two roots");
        self.roots.retain(|&r, _| r == oldest);
        self.candidates.retain(|c| c.root == oldest);
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

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::super::lookup::{sorted_intersection, Candidate, Lookup, Standing};
    use crate::options::Algo;
    use crate::store::schema::ClusterRecord;

    /// A candidate of cluster `root`: (root, overlap in hundredths, through left-out lines,
    /// through its host's lines, shared sentences).
    type Spec = (u64, u32, bool, bool, BTreeSet<u32>);

    fn lookup(specs: &[Spec]) -> Lookup {
        let mut lk = Lookup::default();
        for (i, (root, overlap, left_out, host_lines, shared)) in specs.iter().enumerate() {
            lk.candidates.push(Candidate {
                seq: i as u64 + 1,
                id: format!("c{i}"),
                overlap: f64::from(*overlap) / 100.0,
                strong: false,
                left_out_only: *left_out,
                host_lines_only: *host_lines,
                shared: shared.iter().copied().collect(),
                excerpt: false,
                algo: Algo::Nshash,
                score: 1.0,
                distance: None,
                root: *root,
                standing: Standing::default(),
            });
            lk.roots.insert(
                *root,
                ClusterRecord {
                    parent: None,
                    first_seq: *root,
                    size: 1,
                    original: None,
                    pending_cites: Vec::new(),
                },
            );
        }
        lk
    }

    proptest::proptest! {
        /// The rule against its statement: a cluster reached by a link that holds whole is
        /// kept; one reached only through left-out lines or its host's lines is kept when it
        /// is the best of all when none holds whole, or when its shared sentences are more
        /// than half shared with a kept one (for a host's lines: one reached whole); two or
        /// more reached through the host's lines only, with none whole, join neither.
        #[test]
        fn a_link_through_left_out_or_host_lines_never_merges_what_it_should_not(
            specs in proptest::collection::vec(
                (
                    1u64..5,
                    60u32..100,
                    proptest::bool::ANY,
                    proptest::bool::ANY,
                    proptest::collection::btree_set(0u32..8, 1..5),
                ),
                1..7,
            ),
        ) {
            let mut lk = lookup(&specs);
            lk.left_out_joins_one();
            let kept: BTreeSet<u64> = lk.roots.keys().copied().collect();
            let partial = |s: &Spec| s.2 || s.3;
            let roots: BTreeSet<u64> = specs.iter().map(|s| s.0).collect();
            let whole: BTreeSet<u64> = specs.iter().filter(|s| !partial(s)).map(|s| s.0).collect();
            let host_only: BTreeSet<u64> = roots
                .iter()
                .copied()
                .filter(|r| specs.iter().filter(|s| s.0 == *r).all(|s| s.3))
                .collect();
            if roots.len() < 2 || !specs.iter().any(partial) {
                proptest::prop_assert_eq!(&kept, &roots);
                return Ok(());
            }
            proptest::prop_assert!(whole.is_subset(&kept));
            if whole.is_empty() && host_only.len() >= 2 {
                proptest::prop_assert!(kept.is_disjoint(&host_only));
            }
            // The best candidate's shared sentences per root (ties: the first listed).
            let mut best: BTreeMap<u64, &Spec> = BTreeMap::new();
            for s in &specs {
                let e = best.entry(s.0).or_insert(s);
                if s.1 > e.1 {
                    *e = s;
                }
            }
            let common = |a: u64, b: u64| {
                let (x, y): (Vec<u32>, Vec<u32>) = (
                    best[&a].4.iter().copied().collect(),
                    best[&b].4.iter().copied().collect(),
                );
                2 * sorted_intersection(&x, &y).len() > x.len().min(y.len())
            };
            // With none whole, the best (ties: the oldest) of those that may seed.
            let seed = whole.is_empty().then(|| {
                best.iter()
                    .filter(|(r, _)| host_only.len() < 2 || !host_only.contains(r))
                    .max_by(|a, b| a.1 .1.cmp(&b.1 .1).then(b.0.cmp(a.0)))
                    .map(|(&r, _)| r)
            });
            if let Some(Some(seed)) = seed {
                proptest::prop_assert!(kept.contains(&seed));
            }
            for &r in kept.difference(&whole) {
                let with: Vec<u64> = if host_only.contains(&r) {
                    whole.iter().copied().collect()
                } else {
                    kept.iter().copied().filter(|&k| k != r).collect()
                };
                proptest::prop_assert!(
                    seed == Some(Some(r)) || with.iter().any(|&k| common(r, k)),
                    "root {} kept with nothing to hold it: {:?}",
                    r,
                    specs
                );
            }
            for c in &lk.candidates {
                proptest::prop_assert!(kept.contains(&c.root));
            }
        }
    }
}
