//! Runs fed as their input comes (a server's queue): each chunk told once durable without
//! waiting for the next, the store let go between chunks, each chunk decided by its own
//! replace flag, and an input that waits told to stop when the writer does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::RwLock;
use std::time::Duration;

use super::*;

/// Long enough for any chunk here; a run that waits for an input that never comes fails the
/// test after it instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

const ARTICLE: &str = "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。\
     第二条 本条例所称政府督查，是指县级以上人民政府在法定职权范围内根据工作需要组织开展的监督检查。";
const OTHER: &str = "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵和高大的树木。\
     下午我们在湖边坐了很久，看着孩子们放风筝，听着远处传来的音乐声，心情格外舒畅。";

fn chunk(docs: &[(&str, &str)], on_existing: OnExisting) -> Chunk {
    Chunk {
        records: docs
            .iter()
            .map(|(id, text)| Record::of_document("test", 0, Document::new(*id, *text)))
            .collect(),
        on_existing,
    }
}

/// Chunks as a test sends them; ends when the sender is dropped or the run ends.
struct Fed<'a> {
    rx: Receiver<Chunk>,
    ended: &'a AtomicBool,
}

impl Iterator for Fed<'_> {
    type Item = Chunk;
    fn next(&mut self) -> Option<Chunk> {
        loop {
            match self.rx.recv_timeout(Duration::from_millis(10)) {
                Ok(c) => return Some(c),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) if self.ended.load(Ordering::Relaxed) => {
                    return None
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

/// Sends each chunk's results once durable; fails the first `fail` chunks' acknowledgement
/// when asked.
struct Told<'a> {
    durable: Sender<Vec<IngestResult>>,
    ended: &'a AtomicBool,
    fail: bool,
}

impl Acknowledge for Told<'_> {
    type Error = crate::Error;
    fn decided(&mut self, _: &[Record], _: &[Result<IngestResult, String>]) {}
    fn durable(
        &mut self,
        _: &[Record],
        results: &[Result<IngestResult, String>],
    ) -> Result<(), crate::Error> {
        let results = results.iter().map(|r| r.clone().unwrap()).collect();
        let _ = self.durable.send(results);
        if self.fail {
            return Err(crate::Error::Storage("the caller could not write".into()));
        }
        Ok(())
    }
    fn ended(&mut self) {
        self.ended.store(true, Ordering::Relaxed);
    }
}

/// The store behind a lock, as `fpdb serve` holds it.
struct Locked<'a>(&'a RwLock<Fpdb>);

impl Hold for Locked<'_> {
    fn hold(&mut self) -> impl DerefMut<Target = Fpdb> + '_ {
        self.0.write().unwrap()
    }
}

fn added(r: &IngestResult) -> &Outcome {
    match r {
        IngestResult::Added { outcome, .. } => outcome,
        other => panic!("not added: {other:?}"),
    }
}

use crate::engine::Outcome;

/// The first chunk is told (and the store let go) while the run waits for the second: a
/// request is answered without waiting for the next one, and readers read in between.
#[test]
fn a_run_fed_as_chunks_come_tells_each_chunk_and_lets_the_store_go_before_the_next() {
    let db = RwLock::new(Fpdb::builder().open_in_memory().unwrap());
    let ended = AtomicBool::new(false);
    let (send, rx) = channel();
    let (durable, told) = channel();
    std::thread::scope(|s| {
        let run = s.spawn(|| {
            let fed = Fed { rx, ended: &ended };
            let mut ack = Told {
                durable,
                ended: &ended,
                fail: false,
            };
            run_chunks(Locked(&db), fed, None, &mut ack)
        });
        send.send(chunk(&[("a", ARTICLE)], OnExisting::Skip))
            .unwrap();
        let first = told
            .recv_timeout(PATIENCE)
            .expect("the first chunk is told");
        assert_eq!(added(&first[0]).id, "a");
        // Told while the run waits for its next chunk: the store is not held.
        let held = db.try_read().map(|db| db.searcher().stats().documents);
        assert_eq!(held.ok(), Some(1), "the store is let go between chunks");
        send.send(chunk(&[("b", OTHER), ("a2", ARTICLE)], OnExisting::Skip))
            .unwrap();
        let second = told
            .recv_timeout(PATIENCE)
            .expect("the second chunk is told");
        assert_eq!(added(&second[1]).duplicate_of.as_deref(), Some("a"));
        assert_ne!(added(&second[0]).similar_id, added(&second[1]).similar_id);
        drop(send);
        run.join().unwrap().unwrap();
    });
    assert!(
        ended.load(Ordering::Relaxed),
        "the input is told the run ended"
    );
}

/// Chunks of one run keep their own replace flags: the same id is skipped in one and
/// replaced in the next.
#[test]
fn each_chunk_is_decided_by_its_own_replace_flag() {
    let mut db = Fpdb::builder().open_in_memory().unwrap();
    let ended = AtomicBool::new(false);
    let (durable, told) = channel();
    let chunks = vec![
        chunk(&[("a", ARTICLE)], OnExisting::Skip),
        chunk(&[("a", OTHER)], OnExisting::Skip),
        chunk(&[("a", OTHER)], OnExisting::Replace),
    ];
    let mut ack = Told {
        durable,
        ended: &ended,
        fail: false,
    };
    run_chunks(&mut db, chunks.into_iter(), None, &mut ack).unwrap();
    let results: Vec<Vec<IngestResult>> = told.try_iter().collect();
    assert_eq!(results.len(), 3);
    assert!(matches!(
        &results[1][0],
        IngestResult::SkippedExisting {
            same_text: false,
            ..
        }
    ));
    assert!(matches!(
        &results[2][0],
        IngestResult::Added { replaced: true, .. }
    ));
    assert_eq!(db.searcher().stats().documents, 1);
}

/// A run whose caller fails tells its input so: an input that waits for more (a server's
/// queue) ends, and the run returns the caller's error instead of waiting for ever.
#[test]
fn an_input_that_waits_ends_when_the_run_stops() {
    let db = RwLock::new(Fpdb::builder().open_in_memory().unwrap());
    let ended = AtomicBool::new(false);
    let (send, rx) = channel();
    let (durable, told) = channel();
    let (done, finished) = channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let fed = Fed { rx, ended: &ended };
            let mut ack = Told {
                durable,
                ended: &ended,
                fail: true,
            };
            let _ = done.send(run_chunks(Locked(&db), fed, None, &mut ack));
        });
        send.send(chunk(&[("a", ARTICLE)], OnExisting::Skip))
            .unwrap();
        told.recv_timeout(PATIENCE).expect("the chunk is told");
        // The sender is kept: the input has no end of its own.
        let ran = finished
            .recv_timeout(PATIENCE)
            .expect("the run returns though its input never ends");
        assert!(ran.is_err());
        drop(send);
    });
}

/// Small chunks at hand leave their syncs to a later chunk's ([`SYNC_DOCS`]): every chunk is
/// still told, in order, once durable, and the reopened store holds every document told.
#[test]
fn small_chunks_at_hand_are_all_told_in_order_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let chunks: Vec<Chunk> = (0..60)
        .map(|c| Chunk {
            records: (0..10)
                .map(|i| {
                    let id = format!("c{c}-{i}");
                    let text =
                        format!("{ARTICLE}第{c}章第{i}节的内容与其他各节不同，编号为{c}{i}。");
                    Record::of_document("test", 0, Document::new(id, text))
                })
                .collect(),
            on_existing: OnExisting::Skip,
        })
        .collect();
    let ended = AtomicBool::new(false);
    let (durable, told) = channel();
    {
        let mut db = Fpdb::builder().create(true).open(&path).unwrap();
        let mut ack = Told {
            durable,
            ended: &ended,
            fail: false,
        };
        run_chunks(&mut db, chunks.into_iter(), None, &mut ack).unwrap();
    }
    let ids: Vec<String> = told
        .try_iter()
        .flatten()
        .map(|r| match r {
            IngestResult::Added { outcome, .. } => outcome.id,
            other => panic!("{other:?}"),
        })
        .collect();
    let want: Vec<String> = (0..60)
        .flat_map(|c| (0..10).map(move |i| format!("c{c}-{i}")))
        .collect();
    assert_eq!(ids, want, "every chunk told, in input order");
    let db = Fpdb::open(&path).unwrap();
    assert_eq!(db.searcher().stats().documents, 600);
}

/// Counts the chunks decided, and how far the reading ran ahead of them at most.
struct Slow<'a> {
    read: &'a std::sync::atomic::AtomicUsize,
    decided: usize,
    ahead: usize,
}

impl Acknowledge for Slow<'_> {
    type Error = crate::Error;
    fn decided(&mut self, _: &[Record], _: &[Result<IngestResult, String>]) {
        self.decided += 1;
        // A writer slower than the reading and the fingerprinting: every queue fills.
        std::thread::sleep(Duration::from_millis(10));
        let read = self.read.load(Ordering::SeqCst);
        self.ahead = self.ahead.max(read - self.decided);
    }
    fn durable(&mut self, _: &[Record], _: &[Result<IngestResult, String>]) -> crate::Result<()> {
        Ok(())
    }
}

/// Chunks that hold a full chunk's bytes each (pages waiting for extraction), behind a slow
/// writer: the reading runs ahead of the decisions by at most the next chunk the writer holds,
/// three fingerprinted chunks waiting for it, one the fingerprinting holds, and one chunk's
/// bytes waiting for the fingerprinting; the reader does not hold one more while it waits.
#[test]
fn large_chunks_are_read_no_further_ahead_than_the_queues_hold() {
    let mut db = Fpdb::builder().open_in_memory().unwrap();
    let read = std::sync::atomic::AtomicUsize::new(0);
    let chunks = (0..24).map(|i| {
        read.fetch_add(1, Ordering::SeqCst);
        let id = format!("d{i}");
        let mut c = chunk(&[(id.as_str(), ARTICLE)], OnExisting::Skip);
        c.records[0].bytes = CHUNK_BYTES;
        c
    });
    let mut ack = Slow {
        read: &read,
        decided: 0,
        ahead: 0,
    };
    run_chunks(&mut db, chunks, None, &mut ack).unwrap();
    assert_eq!(ack.decided, 24);
    assert!(ack.ahead >= 3, "the reading runs ahead: {}", ack.ahead);
    assert!(ack.ahead <= 1 + 3 + 1 + 1, "read ahead: {}", ack.ahead);
}
