//! How a written chunk becomes durable and is told: its own sync on a thread of its own, a
//! later chunk's sync that covers it, or a sync in line (a store other processes write); the
//! chunks waiting for theirs, told in input order.

use super::{Acknowledge, Hold, Record, Results};

/// A chunk written to the store, not yet told: its results wait for its sync.
pub(super) struct Written<'scope, E> {
    pub(super) chunk: Vec<Record>,
    pub(super) results: Results,
    /// The store error that stopped the chunk (after the results before it).
    pub(super) fatal: Option<E>,
    pub(super) durable: Durable<'scope>,
}

/// How a written chunk becomes durable.
pub(super) enum Durable<'scope> {
    /// The sync of the store's log, running on a thread of its own.
    Syncing(std::thread::ScopedJoinHandle<'scope, crate::Result<()>>),
    /// By the sync of a chunk written after it, which covers every write before its own; its
    /// own sync when none comes.
    Deferred(crate::engine::Syncer),
    /// By `Fpdb::sync` when told (a store other processes write).
    Inline,
    /// Handing it to the store failed.
    Failed(crate::Error),
}

impl<E: From<crate::Error>> Written<'_, E> {
    /// Tell the chunk's results once `synced` says it is durable; the chunk's store error,
    /// if it had one, after that.
    fn told<A: Acknowledge<Error = E>>(
        self,
        synced: crate::Result<()>,
        ack: &mut A,
    ) -> Result<(), E> {
        // After a store error the sync of what came before it may fail too (RocksDB then
        // only says "Writer has previous error"): the first error is the one to report.
        if let Err(e) = synced {
            return Err(match self.fatal {
                Some(first) => first,
                None => e.into(),
            });
        }
        ack.durable(&self.chunk, &self.results)?;
        // The texts are freed off the writer's thread.
        rayon::spawn(move || drop(self.chunk));
        match self.fatal {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Most documents written and not yet synced while the writer has the next chunk at hand: a
/// chunk that would reach it is synced (on a thread of its own, behind the next chunk's
/// decisions), one under it leaves its sync to a later chunk's, whose sync covers it. Chunks
/// of `fpdb ingest` (1,024 documents) are each synced; `fpdb serve`'s chunks, sized to hold
/// its store's lock ~8 ms (256 documents or fewer), share a sync per 1,024 documents under a
/// steady load, where each chunk paid one of its own.
pub const SYNC_DOCS: usize = 1024;

/// The chunks written and not yet told, in input order.
pub(super) struct Waiting<'scope, E> {
    chunks: std::collections::VecDeque<Written<'scope, E>>,
}

impl<'scope, E: From<crate::Error>> Waiting<'scope, E> {
    pub(super) fn new() -> Self {
        Waiting {
            chunks: std::collections::VecDeque::new(),
        }
    }

    /// Whether a chunk of `n` documents, written with the next chunk at hand, leaves its sync
    /// to a later chunk's: the chunks deferred since the last sync started, and it, stay
    /// under [`SYNC_DOCS`].
    pub(super) fn defers(&self, n: usize) -> bool {
        let deferred: usize = self
            .chunks
            .iter()
            .rev()
            .take_while(|w| matches!(w.durable, Durable::Deferred(_)))
            .map(|w| w.chunk.len())
            .sum();
        deferred + n < SYNC_DOCS
    }

    pub(super) fn push(&mut self, w: Written<'scope, E>) {
        self.chunks.push_back(w);
    }

    /// Tell every chunk up to the last one whose sync was started (those deferred before it
    /// are covered by it); the chunks deferred after it wait.
    pub(super) fn tell_synced<A: Acknowledge<Error = E>>(
        &mut self,
        store: &mut impl Hold,
        ack: &mut A,
    ) -> Result<(), E> {
        let started = self
            .chunks
            .iter()
            .rposition(|w| !matches!(w.durable, Durable::Deferred(_)));
        match started {
            Some(last) => self.tell(last + 1, store, ack),
            None => Ok(()),
        }
    }

    /// Tell every chunk, syncing those whose sync was deferred.
    pub(super) fn tell_all<A: Acknowledge<Error = E>>(
        &mut self,
        store: &mut impl Hold,
        ack: &mut A,
    ) -> Result<(), E> {
        self.tell(self.chunks.len(), store, ack)
    }

    /// Tell the first `n` chunks in order, each once what makes it durable returns: its own
    /// sync, the sync of a later chunk of the `n` that covers it, or (for deferred chunks with
    /// no such later one) the last deferred chunk's sync, run here.
    fn tell<A: Acknowledge<Error = E>>(
        &mut self,
        n: usize,
        store: &mut impl Hold,
        ack: &mut A,
    ) -> Result<(), E> {
        let mut covered: Vec<Written<'scope, E>> = Vec::new();
        for mut w in self.chunks.drain(..n) {
            if matches!(w.durable, Durable::Deferred(_)) {
                covered.push(w);
                continue;
            }
            let synced = match std::mem::replace(&mut w.durable, Durable::Inline) {
                Durable::Deferred(_) => unreachable!("kept above"),
                Durable::Syncing(h) => h.join().unwrap_or_else(|_| {
                    Err(crate::Error::Storage("the sync thread panicked".into()))
                }),
                Durable::Inline => store.hold().sync(),
                Durable::Failed(e) => {
                    // Its commit failed: what was deferred before it is synced on its own.
                    tell_covered(std::mem::take(&mut covered), None, ack)?;
                    Err(e)
                }
            };
            tell_covered(std::mem::take(&mut covered), Some(&synced), ack)?;
            w.told(synced, ack)?;
        }
        tell_covered(covered, None, ack)
    }
}

/// Tell `chunks` (deferred, in order) once the sync that covers them returned `synced`, or,
/// with `None`, once the last one's own sync returns.
fn tell_covered<E: From<crate::Error>, A: Acknowledge<Error = E>>(
    chunks: Vec<Written<'_, E>>,
    synced: Option<&crate::Result<()>>,
    ack: &mut A,
) -> Result<(), E> {
    let own = match (synced, chunks.last().map(|w| &w.durable)) {
        (Some(_), _) | (None, None) => None,
        (None, Some(Durable::Deferred(syncer))) => Some(syncer()),
        (None, Some(_)) => unreachable!("only deferred chunks are covered"),
    };
    let result = |r: &crate::Result<()>| match r {
        Ok(()) => Ok(()),
        Err(e) => Err(crate::Error::Storage(e.to_string())),
    };
    for w in chunks {
        let synced = match (synced, &own) {
            (Some(r), _) | (None, Some(r)) => result(r),
            (None, None) => Ok(()),
        };
        w.told(synced, ack)?;
    }
    Ok(())
}
