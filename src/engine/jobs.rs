//! Resumable jobs: what a store remembers of a job that reads one input in several runs
//! (`fpdb dedup` over files, stopped by a signal and run again), so that the runs together
//! decide as one uninterrupted run would.
//!
//! A job is named by a key its caller derives from its input (paths, sizes, modification times
//! and the flags that change what is read). Its record says which seqs its runs stored (one
//! range per run) and how many input records they read and committed, in input order. A run
//! of the job reads on from there, and a document belongs to the job when its seq is in one of
//! its ranges. The record is in the `meta` family under `job/` and the key; the
//! [`MAX_JOBS`] most recently used are kept.

use serde::{Deserialize, Serialize};

use super::Fpdb;
use crate::error::Result;
use crate::store::schema::{self, Cf};
use crate::store::{Batch, Store};

/// The most job records a store keeps: saving another removes the least recently used.
pub const MAX_JOBS: usize = 256;

/// The prefix of a job's key in `meta`.
const PREFIX: &[u8] = b"job/";

/// What a store remembers of a resumable job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// `[start, end)` of the seqs each run stored; `end` is `u64::MAX` while a run is open
    /// (a run that ended without closing it, killed, is closed by the job's next run at the
    /// seq that run starts from: what other runs stored in between counts as the job's).
    pub runs: Vec<(u64, u64)>,
    /// Input records its runs read and committed, in input order (a run killed before it
    /// recorded its end leaves the count of the run before: the next run reads its records
    /// again, and finds them stored).
    pub read: u64,
    /// Whether a run read the input to its end.
    pub finished: bool,
    /// When it was last saved, seconds since the Unix epoch (the least recently used goes
    /// first past `MAX_JOBS`).
    pub used: u64,
}

impl Job {
    /// Whether the document at `seq` was stored by one of the job's runs.
    pub fn stored(&self, seq: u64) -> bool {
        self.runs.iter().any(|&(a, b)| (a..b).contains(&seq))
    }

    /// Start a run that stores from seq `next` on: a run left open is closed at `next`.
    pub fn open_run(&mut self, next: u64) {
        for r in &mut self.runs {
            if r.1 == u64::MAX {
                r.1 = next.max(r.0);
            }
        }
        self.runs.retain(|r| r.0 < r.1);
        self.runs.push((next, u64::MAX));
    }

    /// End the open run, which stored up to seq `next` (exclusive), having read `read` input
    /// records in all (its own and those before it).
    pub fn close_run(&mut self, next: u64, read: u64, finished: bool) {
        for r in &mut self.runs {
            if r.1 == u64::MAX {
                r.1 = next.max(r.0);
            }
        }
        self.runs.retain(|r| r.0 < r.1);
        self.read = read;
        self.finished = finished;
    }
}

fn job_key(key: &[u8; 16]) -> Vec<u8> {
    [PREFIX, key].concat()
}

impl Fpdb {
    /// The record of job `key`, if the store has one.
    pub fn job(&self, key: &[u8; 16]) -> Result<Option<Job>> {
        let k = job_key(key);
        match self.store.get(Cf::Meta, &k)? {
            None => Ok(None),
            Some(v) => serde_json::from_slice(&v)
                .map(Some)
                .map_err(|e| schema::corrupt(Cf::Meta, &k, e.to_string())),
        }
    }

    /// Save the record of job `key` (stamped with the time now) and make it durable; past
    /// `MAX_JOBS` records, the least recently used is removed.
    pub fn save_job(&mut self, key: &[u8; 16], job: &Job) -> Result<()> {
        self.begin_write()?;
        let job = Job {
            used: super::now(),
            ..job.clone()
        };
        let mut b = Batch::new();
        let k = job_key(key);
        let v = serde_json::to_vec(&job).expect("a job serializes");
        b.put(Cf::Meta, k.clone(), v);
        // The others, oldest first past the limit.
        let mut others: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut end = PREFIX.to_vec();
        end.push(0xff);
        self.store.scan(Cf::Meta, PREFIX, &end, &mut |key, v| {
            if key != k.as_slice() {
                let used = serde_json::from_slice::<Job>(v).map_or(0, |j| j.used);
                others.push((used, key.to_vec()));
            }
            true
        })?;
        if others.len() >= MAX_JOBS {
            others.sort();
            for (_, key) in &others[..=others.len() - MAX_JOBS] {
                b.delete(Cf::Meta, key.clone());
            }
        }
        self.store.write(b)?;
        self.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_left_open_is_closed_where_the_next_one_starts() {
        let mut j = Job::default();
        j.open_run(10);
        assert!(j.stored(10) && j.stored(1_000_000));
        // Killed: never closed. Another run stored 20..25; this job's next run starts at 25.
        j.open_run(25);
        assert_eq!(j.runs, vec![(10, 25), (25, u64::MAX)]);
        j.close_run(40, 7, true);
        assert_eq!(j.runs, vec![(10, 25), (25, 40)]);
        assert!(j.stored(10) && j.stored(39) && !j.stored(40) && !j.stored(9));
        assert_eq!((j.read, j.finished), (7, true));
        // A run that stored nothing leaves no range.
        j.open_run(40);
        j.close_run(40, 7, true);
        assert_eq!(j.runs, vec![(10, 25), (25, 40)]);
    }

    #[test]
    fn a_damaged_job_record_is_a_located_error_not_a_panic() {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        let mut b = Batch::new();
        b.put(Cf::Meta, job_key(&[7; 16]), b"{not json".to_vec());
        db.store.write(b).unwrap();
        let err = db.job(&[7; 16]).unwrap_err().to_string();
        assert!(err.contains("corrupt") && err.contains("`meta`"), "{err}");
        // Saving another job past a damaged one still works (it counts as least recent).
        db.save_job(&[8; 16], &Job::default()).unwrap();
        assert!(db.job(&[8; 16]).unwrap().is_some());
    }

    #[test]
    fn a_job_is_saved_and_read_back_and_the_oldest_go_past_the_limit() {
        let mut db = Fpdb::builder().open_in_memory().unwrap();
        let mut first = Job::default();
        first.open_run(1);
        first.close_run(3, 2, false);
        db.save_job(&[1; 16], &first).unwrap();
        let back = db.job(&[1; 16]).unwrap().unwrap();
        assert_eq!(
            (back.runs.clone(), back.read, back.finished),
            (vec![(1, 3)], 2, false)
        );
        assert!(db.job(&[2; 16]).unwrap().is_none());
        for i in 0..MAX_JOBS as u16 {
            let mut key = [0u8; 16];
            key[..2].copy_from_slice(&(i + 2).to_be_bytes());
            db.save_job(&key, &Job::default()).unwrap();
        }
        let mut n = 0;
        db.store
            .scan(Cf::Meta, PREFIX, b"job0", &mut |_, _| {
                n += 1;
                true
            })
            .unwrap();
        assert_eq!(n, MAX_JOBS);
    }
}
