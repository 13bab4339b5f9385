//! The summary of an `ingest` or `dedup` run: counted as records are decided, reported at the
//! end (JSON with `--json`, else one line on stderr).

use std::io::Write;

use anyhow::Context;

use serde::Serialize;

use fpdb::reader::Record;
use fpdb::IngestResult;

use super::output::shown;

#[derive(Serialize, Default)]
pub(super) struct Summary {
    pub(super) store: String,
    pub(super) records: u64,
    /// `dedup` over files run again: the input records its earlier runs read and committed,
    /// not read again (the run goes on after them).
    pub(super) resumed: u64,
    /// Whether the run is a job the store remembers (`dedup` over files).
    #[serde(skip)]
    pub(super) resumed_job: bool,
    /// Whether that job's run wrote its records as they were decided (`--stream`, its first
    /// run): run again, it writes them in a second pass.
    #[serde(skip)]
    pub(super) streamed: bool,
    pub(super) added: u64,
    /// The documents added that are their cluster's original at the end of the run (with
    /// `duplicates`; kept up to date as the run goes, see [`Summary::count`]).
    pub(super) originals: u64,
    /// The documents added that are not their cluster's original at the end of the run: a
    /// later document published before them, or a merge, can make an original a duplicate.
    pub(super) duplicates: u64,
    pub(super) merges: u64,
    pub(super) replaced: u64,
    pub(super) skipped: u64,
    pub(super) skipped_bad_input: u64,
    /// Records whose id is stored with another text (skipped: `--replace` replaces them).
    pub(super) skipped_existing_id: u64,
    /// Records whose id is stored with the same text (a re-run): counted, not skipped.
    pub(super) already_stored: u64,
    /// Records lost to damaged input (corrupt archive records, damaged gzip members and Parquet
    /// row groups), counted apart from bad input.
    pub(super) lost_to_damage: u64,
    /// Documents read with a publication time (a time field, WARC-Date, an ARC date, the
    /// page's own); the others' ingest time counts for them.
    pub(super) dated: u64,
    /// Documents whose input gave a time that could not be read (warned about, first
    /// [`LIST_BAD`] on stderr).
    pub(super) time_unread: u64,
    /// Documents deleted by the store's retention before this run's input.
    pub(super) expired: u64,
    /// WARC/ARC records that are not documents (requests, metadata, DNS, non-text payloads).
    pub(super) not_documents: u64,
    /// zstd frames read without a checksum: damage inside them cannot be detected.
    pub(super) unchecked_frames: u64,
    /// Parquet pages read without a CRC: damage inside them cannot be detected.
    pub(super) unchecked_pages: u64,
    pub(super) input_bytes: u64,
    pub(super) seconds: f64,
    pub(super) docs_per_second: f64,
    /// What the lookups read (totals; see [`super::output::lookup_line`]).
    pub(super) lookups: fpdb::LookupStats,
    /// Where the time went: each stage's busy time, in seconds.
    pub(super) stages: Stages,
    /// Batches whose lookups ran while the batch before them was decided (the next batch
    /// is looked up ahead when it is fingerprinted in time, on more than one thread).
    pub(super) batches_looked_up_ahead: u64,
    /// Pages that joined a cluster after their batch (`late_links`): their output lines,
    /// written before, name their own cluster.
    pub(super) late_joins: u64,
    /// Clusters split after their batch (`late_links`): pages of one host linked only
    /// through lines that became its furniture.
    pub(super) late_splits: u64,
    /// Seconds this run held a shared store's write lease (Redis; 0 otherwise).
    pub(super) lease_seconds: f64,
    /// `fpdb dedup`: the records written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) dedup: Option<super::dedup::Counts>,
    /// The store after the run: documents, clusters, and duplicates (documents that are not
    /// their cluster's original: one original per cluster), as `fpdb stats` counts them.
    pub(super) store_documents: u64,
    pub(super) store_clusters: u64,
    pub(super) store_duplicates: u64,
    /// The distinct (input, reason) of skipped records printed on stderr (at most
    /// [`LIST_BAD`]).
    #[serde(skip)]
    pub(super) bad_listed: Vec<(String, String)>,
    /// Skipped records not printed: a reason printed already for their input, or past
    /// [`LIST_BAD`] reasons.
    #[serde(skip)]
    pub(super) bad_unlisted: u64,
    /// The clusters whose original is a document of this run: root -> a hash of its id.
    #[serde(skip)]
    pub(super) run_originals: std::collections::HashMap<u64, u64>,
}

impl Summary {
    /// Take the inputs' counts, as they stand at the end of the run.
    pub(super) fn read_counts(&mut self, c: &fpdb::reader::Counts) {
        let load = |a: &fpdb::reader::Counter| a.load(std::sync::atomic::Ordering::Relaxed);
        self.not_documents = load(&c.not_documents);
        self.unchecked_frames = load(&c.unchecked_frames);
        self.unchecked_pages = load(&c.unchecked_pages);
    }
}

impl Summary {
    /// The store's totals after the run, and the run's time.
    pub(super) fn finish(&mut self, db: &fpdb::Fpdb, seconds: f64) {
        (self.store_documents, self.store_clusters) = db.searcher().totals();
        self.store_duplicates = self.store_documents.saturating_sub(self.store_clusters);
        self.lookups = db.meters().lookups;
        self.seconds = seconds;
        self.docs_per_second = if seconds > 0.0 {
            self.added as f64 / seconds
        } else {
            0.0
        };
    }

    /// The run's documents as they stand at its end, after a run that replaced documents: a
    /// removal can split a cluster or give it back an earlier original, which the outcomes
    /// [`Summary::count`] follows do not say. Then one scan of the documents stored since seq
    /// `since` counts them (a store other processes write keeps the counts as followed:
    /// their documents are there too).
    pub(super) fn settle(&mut self, db: &fpdb::Fpdb, since: u64) -> anyhow::Result<()> {
        if self.replaced > 0 && !db.is_shared() {
            (self.originals, self.duplicates) = db.searcher().originals_since(since)?;
        }
        Ok(())
    }

    /// Follow which clusters have an original of this run, through `outcome`: its cluster and
    /// the clusters it merged lose their run original unless it is still the original; it is
    /// the original of its cluster, or the cluster keeps one of theirs, or one of another run.
    fn follow(&mut self, outcome: &fpdb::Outcome) {
        let key = |id: &str| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            id.hash(&mut h);
            h.finish()
        };
        let mut was = Vec::new();
        for c in outcome.merged.iter().chain(&outcome.similar_id) {
            if let Some(h) = self.run_originals.remove(c) {
                was.push(h);
            }
        }
        let Some(root) = outcome.similar_id else {
            return;
        };
        match &outcome.duplicate_of {
            None => {
                self.run_originals.insert(root, key(&outcome.id));
            }
            Some(x) if was.contains(&key(x)) => {
                self.run_originals.insert(root, key(x));
            }
            Some(_) => {}
        }
        self.originals = self.run_originals.len() as u64;
        self.duplicates = self.added.saturating_sub(self.originals);
    }

    /// Count a record that was not read (`reason`): lost to damage or bad input, the first
    /// few distinct reasons of each input listed on stderr.
    pub(super) fn bad(&mut self, rec: &Record, reason: &str, bar: &indicatif::ProgressBar) {
        self.skipped += 1;
        if rec.lost > 0 {
            self.lost_to_damage += rec.lost;
        } else {
            self.skipped_bad_input += 1;
        }
        let listed = self
            .bad_listed
            .iter()
            .any(|(s, r)| *s == rec.source && r == reason);
        if self.bad_listed.len() < LIST_BAD && !listed {
            bar.suspend(|| eprintln!("fpdb: skipped {}: {reason}", rec.location()));
            self.bad_listed
                .push((rec.source.clone(), reason.to_string()));
        } else {
            self.bad_unlisted += 1;
        }
    }

    /// Count one ingested document; list the first few already stored ids on stderr.
    pub(super) fn count(&mut self, r: &IngestResult, rec: &Record, bar: &indicatif::ProgressBar) {
        match r {
            IngestResult::Added { outcome, replaced } => {
                self.added += 1;
                self.replaced += u64::from(*replaced);
                self.merges += outcome.merged.len() as u64;
                self.follow(outcome);
            }
            IngestResult::SkippedExisting {
                same_text: true, ..
            } => self.already_stored += 1,
            IngestResult::SkippedExisting { id, .. } => {
                self.skipped += 1;
                self.skipped_existing_id += 1;
                // A re-run of a whole file would print one line per document: list the
                // first few, count the rest.
                if self.skipped_existing_id <= LIST_EXISTING {
                    bar.suspend(|| {
                        eprintln!(
                            "fpdb: skipped {}: id `{}` is stored with another text (use --replace to replace it)",
                            rec.location(),
                            shown(id)
                        );
                    });
                }
            }
        }
    }

    /// What changed after its batch in the store (stores with `late_links`): pages joined to a
    /// cluster, clusters split.
    fn report_late(&self) {
        if self.late_joins > 0 {
            eprintln!(
                "fpdb: {} pages joined a cluster after their batch, once their sites' furniture \
                 (or that of the pages they match) was known (their output lines name their own \
                 cluster; export shows the join)",
                self.late_joins
            );
        }
        if self.late_splits > 0 {
            eprintln!(
                "fpdb: {} clusters split after their batch: pages of one site linked only \
                 through lines that became its furniture (export shows the split)",
                self.late_splits
            );
        }
    }

    /// Where the documents' times came from (when any input gave times).
    fn report_times(&self) {
        if self.dated + self.time_unread > 0 {
            eprintln!(
                "fpdb: times: {} documents dated by their input, {} without a date (their ingest time counts){}",
                self.dated,
                self.added.saturating_sub(self.dated),
                if self.time_unread > 0 {
                    format!(
                        ", {} times not readable{}",
                        self.time_unread,
                        if self.time_unread > LIST_BAD as u64 {
                            format!(" (the first {LIST_BAD} warned above)")
                        } else {
                            " (warned above)".to_string()
                        }
                    )
                } else {
                    String::new()
                }
            );
        }
    }

    /// What `fpdb dedup` wrote.
    fn report_dedup(&self) {
        if let Some(d) = &self.dedup {
            eprintln!(
                "fpdb: dedup: {} unique records written, {} near-duplicates or already stored{}{}",
                d.unique,
                d.duplicates,
                if d.rejected > 0 {
                    format!(
                        ", {} not read or not stored written to --rejects-out",
                        d.rejected
                    )
                } else {
                    String::new()
                },
                if d.kept_later_merged > 0 {
                    format!(
                        "; {} unique records were later linked to another one by a record \
                         that merged their clusters (both stay written; `fpdb clusters` lists them)",
                        d.kept_later_merged
                    )
                } else {
                    String::new()
                }
            );
            if d.kept_later_predated > 0 {
                eprintln!(
                    "fpdb: dedup: {} unique records were followed by a record published before \
                     them, now their cluster's original (both stay written)",
                    d.kept_later_predated
                );
            }
        }
    }

    /// The summary: JSON on stdout with `--json`, else one line on stderr unless quiet.
    pub(super) fn report(&self, json: bool, quiet: bool, verbose: bool) -> anyhow::Result<()> {
        if self.bad_unlisted > 0 {
            eprintln!(
                "fpdb: skipped {} more records not listed (each for a reason printed above for its \
                 input, or past {LIST_BAD} reasons; --output has one line per record)",
                self.bad_unlisted
            );
        }
        if self.skipped_existing_id > LIST_EXISTING {
            eprintln!(
                "fpdb: skipped {} more documents whose ids are stored with another text (not listed; --output has one line per document)",
                self.skipped_existing_id - LIST_EXISTING
            );
        }
        if json {
            outln!("{}", serde_json::to_string(self)?);
        } else if !quiet {
            if self.expired > 0 {
                eprintln!(
                    "fpdb: retention: {} documents older than the store's retention deleted",
                    self.expired
                );
            }
            if self.resumed > 0 {
                eprintln!(
                    "fpdb: dedup: the first {} records were read and committed by an earlier run \
                     of this command (same files, same flags): read on after them",
                    self.resumed
                );
            }
            if self.unchecked_frames > 0 {
                eprintln!(
                    "fpdb: {} zstd frames carry no checksum (written with `--no-check`, as libraries \
                     often write them): damage inside them cannot be detected, their records were \
                     read as decoded",
                    self.unchecked_frames
                );
            }
            if self.unchecked_pages > 0 {
                eprintln!(
                    "fpdb: {} Parquet pages carry no CRC (as arrow-rs and pyarrow write them by \
                     default): damage inside them cannot be detected, their rows were read as \
                     decoded",
                    self.unchecked_pages
                );
            }
            if self.not_documents > 0 {
                eprintln!(
                    "fpdb: {} WARC/ARC records are not documents (requests, metadata, DNS, images and other non-text payloads) and were passed over",
                    self.not_documents
                );
            }
            eprintln!(
                "fpdb: {} records: {} added ({} originals, {} duplicates, {} merges, {} replaced), \
                 {}{} skipped ({} bad input, {} existing id{}) in {:.2}s ({:.0} docs/s) -> {}: \
                 {} documents in {} clusters, {} duplicates",
                self.records,
                self.added,
                self.originals,
                self.duplicates,
                self.merges,
                self.replaced,
                if self.already_stored > 0 {
                    format!("{} already stored, ", self.already_stored)
                } else {
                    String::new()
                },
                self.skipped,
                self.skipped_bad_input,
                self.skipped_existing_id,
                if self.lost_to_damage > 0 {
                    format!(", {} lost to damaged input", self.lost_to_damage)
                } else {
                    String::new()
                },
                self.seconds,
                self.docs_per_second,
                self.store,
                self.store_documents,
                self.store_clusters,
                self.store_duplicates
            );
            self.report_late();
            self.report_times();
            self.report_dedup();
            if let Some(line) = super::output::lookup_line(&self.lookups).filter(|_| verbose) {
                eprintln!("{line}");
            }
            if verbose {
                eprintln!("{}", self.stages.line(self.seconds));
            }
        }
        Ok(())
    }
}

/// The busy time of each stage of a run, in seconds. The stages run at once, each on its own
/// threads, so the run takes about as long as the busiest one: that one bounds it.
#[derive(Serialize, Default, Debug, Clone, Copy)]
pub(super) struct Stages {
    /// Reading, decompressing and parsing the input (one thread).
    pub(super) read: f64,
    /// Extracting pages and fingerprinting, on all cores (the wall time of each chunk's
    /// parallel work, summed).
    pub(super) fingerprint: f64,
    /// Looking the documents up in the store and verifying candidates, on the lookup threads.
    pub(super) look_up: f64,
    /// Deciding each document in input order and staging its writes (one thread).
    pub(super) decide: f64,
    /// Applying the batches to the store: RocksDB's log and memtables, on a thread of their
    /// own (0 where the store has none: one core, Redis).
    pub(super) apply: f64,
    /// Preparing each batch's commit and handing it to the store (waiting for the batch
    /// before to be applied), waiting for its sync, and writing the outputs.
    pub(super) commit: f64,
}

impl Stages {
    /// The `--verbose` line.
    fn line(&self, seconds: f64) -> String {
        let named = [
            ("read", self.read),
            ("fingerprint", self.fingerprint),
            ("look up", self.look_up),
            ("decide", self.decide),
            ("apply", self.apply),
            ("commit", self.commit),
        ];
        let busiest = named
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("", |n| n.0);
        format!(
            "fpdb: busy seconds per stage: read {:.2}, fingerprint {:.2} (all cores), look up {:.2}, \
             decide {:.2} (one thread), apply {:.2} (one thread), commit {:.2}; the run took \
             {seconds:.2} s, bounded by the busiest stage ({busiest})",
            self.read, self.fingerprint, self.look_up, self.decide, self.apply, self.commit
        )
    }
}

/// Documents skipped for an already stored id that are listed one by one on stderr.
pub(super) const LIST_EXISTING: u64 = 10;

/// Distinct reasons for skipped records printed on stderr (a record of an input with the same
/// reason as one printed is counted, not printed: a file without the text field gives one line,
/// not one per record).
pub(super) const LIST_BAD: usize = 10;
