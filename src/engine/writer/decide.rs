//! The decision for one document: its lookups' findings completed with what the batch
//! decided before it ([`Decisions`]), the one rule set
//! ([`Finder::lookup_with`](crate::engine::finder::Finder::lookup_with)) applied, and the document
//! placed ([`Writer::place`](super::Writer::place)) with its original, composite, citations and page lines. A batch's
//! documents are decided here in input order (`batch.rs`), and a single document whose id is
//! not stored as a batch of one ([`Writer::decide_one`](super::Writer::decide_one)): each rule is written once.

use super::batch::Decisions;
use super::batch_lookup::Found;
use super::ingest::Writes;
use super::Writer;
use crate::engine::furniture::{PageLines, SeenInBatch};
use crate::engine::learn::put_seen;
use crate::engine::lookup::Checked;
use crate::engine::postings::bound_simhash;
use crate::engine::{Document, IngestResult};
use crate::error::Result;
use crate::fingerprint::Fingerprints;
use crate::store::{Batch, Store};

impl Writer<'_> {
    /// The decision for one document of a batch, in input order.
    #[expect(
        clippy::too_many_lines,
        reason = "lookup against the store and the batch, then place and index: one decision, read in order"
    )]
    pub(in crate::engine) fn decide(
        &mut self,
        doc: &Document,
        (fps, f): (Fingerprints, Found),
        (mut lines, reuse): (Option<PageLines>, Option<u64>),
        d: &mut Decisions,
    ) -> Result<IngestResult> {
        // The page's furniture as the batch's earlier documents left it: when that is not
        // what its lookups were done with, fingerprinted and looked up again.
        let (fps, f) = match &mut lines {
            Some(l) if !d.seen.is_empty() => {
                let was = (fps.left_out.clone(), fps.host_seen.clone());
                l.update(&d.seen);
                let fps = self.sites().furnished(doc, fps, l);
                if fps.left_out == was.0 && fps.host_seen == was.1 {
                    (fps, f)
                } else {
                    let f = self.finder().found(&fps, f.existing, true, None)?;
                    let f = self.finder().verify_found(&fps, f, None)?;
                    (fps, f)
                }
            }
            _ => (fps, f),
        };
        // Only OnExisting::Skip reaches here with an id already stored.
        let mut existing = f.existing.map(|(_, c, same)| (c, same)).or_else(|| {
            d.index.ids.get(&doc.id).map(|s| {
                let rec = &d.records[d.index.docs[s]].1;
                (rec.similar_id, super::ingest::same_text(rec, doc, &fps))
            })
        });
        if let Some(&seq) = d.last.as_ref().and_then(|l| l.ids.get(&doc.id)) {
            // Stored by the batch before, after this batch was looked up.
            let rec = self.records().doc(seq)?;
            existing = Some((rec.similar_id, super::ingest::same_text(&rec, doc, &fps)));
        }
        if let Some((similar_id, same_text)) = existing {
            return Ok(IngestResult::SkippedExisting {
                id: doc.id.clone(),
                similar_id: self.records().find(similar_id)?.0,
                same_text,
            });
        }
        let (mut holders, digest) = (f.holders, f.digest);
        for h in fps.lookup_postings() {
            // The holders in seq order: the store's, the batch before's, this one's.
            let later = [
                d.last.as_ref().and_then(|l| l.holders.get(&h)),
                d.index.holders.get(&h),
            ];
            for l in later.into_iter().flatten() {
                holders
                    .entry(h)
                    .and_modify(|v| *v = v.then(l))
                    .or_insert(*l);
            }
        }
        let mut simhash = f.simhash;
        for q in fps.lookup_simhashes() {
            let mut add = |seq, d| {
                let e = simhash.entry(seq).or_insert(d);
                *e = (*e).min(d);
            };
            if let Some(l) = &d.last {
                l.simhashes.near(q, &mut add);
            }
            d.index.simhashes.near(q, &mut add);
            // The store's candidates were bounded alone; bounded with the batch's, they are
            // what a sequential ingest finds.
            bound_simhash(&mut simhash);
        }
        let verified = f.verified;
        let threshold = self.opts.verify_threshold();
        let written = &d.seen;
        let verify = &mut |seq| {
            if let Some(&i) = d.index.docs.get(&seq) {
                return self.sites().checked(&fps, &d.records[i].1, written);
            }
            // Checked before the batch's earlier pages taught their sites' lines: one that
            // did not verify is checked again with what they taught (`Sites::checked`).
            let again = |v: &Checked| {
                v.overlap < threshold && self.opts.site_knowledge && !written.is_empty()
            };
            if let Some(v) = verified.get(&seq).filter(|v| !again(v)) {
                return Ok(v.clone());
            }
            self.finder().check_stored_in(&fps, seq, None, written)
        };
        let record = &mut |seq| match d.index.docs.get(&seq) {
            Some(&i) => Ok(d.records[i].1.clone()),
            None => self.records().doc(seq),
        };
        let lk = self
            .finder()
            .lookup_with(&fps, &holders, simhash, (verify, record))?;
        let saved = self.counts;
        let (mark, marked) = (d.bulk.len(), d.records.len());
        let postings: Vec<u64> = fps.postings().collect();
        let simhash = fps.simhash;
        let mut staged = Batch::new();
        let placed = self
            .place(
                doc,
                fps,
                &lk,
                reuse,
                Writes {
                    staged: &mut staged,
                    time: d.time,
                    digest,
                },
            )
            .and_then(|(mut outcome, named, record)| {
                let seq = self.counts.next_seq - 1;
                d.records.push((seq, record));
                // The id of `seq`: a document of this batch is read in place.
                let id_of = |this: &Self, d: &Decisions, seq: u64| -> Result<String> {
                    match d.index.docs.get(&seq) {
                        Some(&i) => Ok(d.records[i].1.id.clone()),
                        None => Ok(this.records().doc(seq)?.id),
                    }
                };
                if named.seq != seq {
                    outcome.duplicate_of = Some(id_of(self, d, named.seq)?);
                }
                if let Some(p) = named.previous {
                    outcome.previous_original = Some(id_of(self, d, p)?);
                }
                let sketch = &d.records.last().expect("just pushed").1.sketch;
                outcome.composite_of = lk.composite_of(sketch, &mut |seq| {
                    Ok(match d.index.docs.get(&seq) {
                        Some(&i) => (d.records[i].1.id.clone(), d.records[i].1.sketch.clone()),
                        None => {
                            let r = self.records().doc(seq)?;
                            (r.id, r.sketch)
                        }
                    })
                })?;
                // The members it cites that no document had cited: marked in their records
                // (those of this batch in place, written at its commit).
                for &c in &named.newly_cited {
                    match d.index.docs.get(&c) {
                        Some(&i) => d.records[i].1.cited = true,
                        None => self.put_cited(c, &mut d.bulk)?,
                    }
                }
                let target = outcome.similar_id.expect("a placed document has a cluster");
                let batch = (&d.records[..], &d.index.docs);
                let placed = (target, seq, &outcome.merged[..]);
                let seen = self.sites().seen_lines_in_batch(
                    lines.as_ref(),
                    placed,
                    doc,
                    batch,
                    &d.seen,
                )?;
                put_seen(&seen, &mut d.bulk);
                // The pages of the clusters that made lines furniture now, or had shown the
                // lines the batch made furniture, or show a line in a second cluster of their
                // site now (its template, `later_templates`; once a line, when it gets there):
                // looked up again after it (`late.rs`).
                if self.opts.late_links {
                    use crate::engine::furniture::Seen;
                    let page = lines.as_ref().map_or(&[][..], |l| &l.lines[..]);
                    // The page's lines seen in fewer than two clusters before it.
                    let fresh: foldhash::HashSet<u64> = if self.opts.later_templates {
                        page.iter()
                            .filter(|(_, was, _)| match was {
                                Seen::New => true,
                                Seen::In(cs) => cs.len() < 2,
                                _ => false,
                            })
                            .map(|&(k, _, _)| k)
                            .collect()
                    } else {
                        foldhash::HashSet::default()
                    };
                    for ((_, k), s) in &seen {
                        match s {
                            Seen::Made(ids) => d.made.extend(ids),
                            Seen::In(ids) if ids.len() >= 2 && fresh.contains(k) => {
                                d.made.extend(ids);
                            }
                            _ => {}
                        }
                    }
                    for (_, s, _) in page {
                        if let Seen::Batch(ids) = s {
                            d.made.extend(ids);
                        }
                    }
                }
                if !seen.is_empty() {
                    self.grown.get_mut().expect("lock").note(&seen);
                }
                self.store.write(staged)?;
                d.seen.extend(seen);
                Ok(outcome)
            });
        let outcome = match placed {
            Ok(o) => o,
            Err(e) => {
                self.counts = saved;
                d.bulk.truncate(mark);
                d.records.truncate(marked);
                return Err(e);
            }
        };
        let seq = self.counts.next_seq - 1;
        let target = outcome.similar_id.expect("a placed document has a cluster");
        for h in postings {
            crate::engine::postings::hold(&mut d.index.holders, h, seq, target);
        }
        if let Some(q) = simhash {
            d.index.simhashes.insert(seq, q);
        }
        d.index.ids.insert(doc.id.clone(), seq);
        // The record just pushed (the last), read in place by later documents of the batch.
        d.index.docs.insert(seq, d.records.len() - 1);
        Ok(IngestResult::Added {
            outcome,
            replaced: false,
        })
    }

    /// One document whose id is not stored, decided as a batch of one (the same rules, in
    /// [`Writer::decide`](super::Writer::decide)) and staged: `reuse`, an emptied cluster id to take when it matches
    /// nothing; `lines`, its page's lines.
    pub(in crate::engine) fn decide_one(
        &mut self,
        doc: &Document,
        fps: Fingerprints,
        lines: Option<&PageLines>,
        reuse: Option<u64>,
    ) -> Result<crate::engine::Outcome> {
        let f = self.finder().found(&fps, None, true, None)?;
        let size = (1, fps.postings().count(), self.opts.simhash_k);
        let mut d = Decisions::new(size, None, SeenInBatch::default());
        let decided = self.decide(doc, (fps, f), (lines.cloned(), reuse), &mut d)?;
        let IngestResult::Added { outcome, .. } = decided else {
            unreachable!("a document whose id is not stored is added");
        };
        let mut bulk = d.bulk;
        for (seq, r) in &d.records {
            self.put_record(*seq, r, &mut bulk);
        }
        self.store.write(bulk)?;
        if self.opts.late_links && !d.made.is_empty() {
            self.late_links(&d.made)?;
        }
        Ok(outcome)
    }
}
