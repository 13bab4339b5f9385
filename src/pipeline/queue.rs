//! The queue between the reader and the fingerprinting stage, bounded by chunks and by bytes.
//!
//! A chunk of text documents holds a few MB, but a chunk of pages holds up to
//! [`super::CHUNK_BYTES`] of HTML until its pages are extracted. Counted in chunks alone, the
//! queue would hold four of those besides the chunk being fingerprinted and the one the reader
//! waits to hand over: ~190 MB of HTML on one core, where fingerprinting is always the slower
//! stage. Bounded by bytes too, at most [`super::CHUNK_BYTES`] wait in it, and the reader
//! reads its next chunk only once there is room ([`Sender::wait_room`]); one waiting chunk
//! is enough to keep the fingerprinting threads fed, because reading a page costs a small
//! fraction of extracting it. The chunks themselves are unchanged, so every decision and export
//! is the same.
//!
//! `std::sync::mpsc::sync_channel` bounds by count only, and no maintained crate offers a
//! blocking channel weighted by bytes, so this is a `Mutex` and a `Condvar`: one sender, one
//! receiver, each side's drop waking the other.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// A FIFO queue of at most `max_items` items and `max_bytes` bytes (an item larger than
/// `max_bytes` is taken alone, into an empty queue).
pub(super) struct Queue<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
    max_items: usize,
    max_bytes: usize,
}

struct State<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    sender_gone: bool,
    receiver_gone: bool,
}

impl<T> Queue<T> {
    /// An empty queue with these bounds (`max_items` at least 1).
    pub(super) fn new(max_items: usize, max_bytes: usize) -> Self {
        Queue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                bytes: 0,
                sender_gone: false,
                receiver_gone: false,
            }),
            changed: Condvar::new(),
            max_items: max_items.max(1),
            max_bytes,
        }
    }

    /// The queue's two ends.
    pub(super) fn split(&self) -> (Sender<'_, T>, Receiver<'_, T>) {
        (Sender(self), Receiver(self))
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // No code panics while holding the lock, and the state stays consistent between
        // statements, so a poisoned lock is taken as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State<T>>) -> MutexGuard<'a, State<T>> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The queue's sending end; dropping it ends the receiver's iteration once the queue is empty.
pub(super) struct Sender<'a, T>(&'a Queue<T>);

impl<T> Sender<'_, T> {
    /// Wait until the queue has room (fewer than `max_items` items and fewer than `max_bytes`
    /// bytes): a sender that makes its next item only then does not hold one while it waits.
    /// False when the receiver is gone.
    pub(super) fn wait_room(&self) -> bool {
        let q = self.0;
        let mut s = q.lock();
        while !s.receiver_gone && (s.items.len() >= q.max_items || s.bytes >= q.max_bytes) {
            s = q.wait(s);
        }
        !s.receiver_gone
    }

    /// Queue `item` of `bytes` bytes, waiting while the queue is full. `Err(item)` when the
    /// receiver is gone.
    pub(super) fn send(&self, item: T, bytes: usize) -> Result<(), T> {
        let q = self.0;
        let mut s = q.lock();
        while !s.receiver_gone
            && !s.items.is_empty()
            && (s.items.len() >= q.max_items || s.bytes.saturating_add(bytes) > q.max_bytes)
        {
            s = q.wait(s);
        }
        if s.receiver_gone {
            return Err(item);
        }
        s.bytes += bytes;
        s.items.push_back((item, bytes));
        q.changed.notify_all();
        Ok(())
    }
}

impl<T> Drop for Sender<'_, T> {
    fn drop(&mut self) {
        self.0.lock().sender_gone = true;
        self.0.changed.notify_all();
    }
}

/// The queue's receiving end: an iterator of the items in the order sent, ending once the
/// sender is gone and the queue is empty. Dropping it makes every later send fail.
pub(super) struct Receiver<'a, T>(&'a Queue<T>);

impl<T> Iterator for Receiver<'_, T> {
    type Item = T;

    /// The next item, waiting for one; None once the sender is gone and the queue is empty.
    fn next(&mut self) -> Option<T> {
        let q = self.0;
        let mut s = q.lock();
        loop {
            if let Some((item, bytes)) = s.items.pop_front() {
                s.bytes -= bytes;
                q.changed.notify_all();
                return Some(item);
            }
            if s.sender_gone {
                return None;
            }
            s = q.wait(s);
        }
    }
}

impl<T> Drop for Receiver<'_, T> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.receiver_gone = true;
        // Items left behind are dropped now, not when the queue is.
        s.items.clear();
        s.bytes = 0;
        drop(s);
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::{Duration, Instant};

    #[test]
    fn an_item_over_the_bytes_goes_alone_into_an_empty_queue() {
        let q = Queue::new(4, 10);
        let (tx, mut rx) = q.split();
        tx.send("big", 25).unwrap();
        assert_eq!(rx.next(), Some("big"));
        drop(tx);
        assert_eq!(rx.next(), None);
    }

    #[test]
    fn a_sender_waiting_on_a_full_queue_is_freed_when_the_receiver_goes() {
        let q = Queue::new(1, 100);
        let (tx, rx) = q.split();
        std::thread::scope(|s| {
            let sent = s.spawn(|| {
                tx.send(1, 1).unwrap();
                // Full: this waits until the receiver is dropped, then fails.
                tx.send(2, 1)
            });
            std::thread::sleep(Duration::from_millis(20));
            drop(rx);
            assert_eq!(sent.join().unwrap(), Err(2));
        });
    }

    #[test]
    fn room_is_waited_for_until_the_receiver_takes_or_goes() {
        let q = Queue::new(2, 10);
        let (tx, mut rx) = q.split();
        assert!(tx.wait_room());
        tx.send(1, 10).unwrap();
        std::thread::scope(|s| {
            let waited = s.spawn(|| {
                let t = Instant::now();
                let room = tx.wait_room();
                (room, t.elapsed())
            });
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(rx.next(), Some(1));
            let (room, after) = waited.join().unwrap();
            assert!(room);
            assert!(after >= Duration::from_millis(30), "{after:?}");
        });
        tx.send(2, 10).unwrap();
        drop(rx);
        assert!(!tx.wait_room());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every item arrives once and in order, and whenever the receiver looks, the queue
        /// holds at most `max_items` items and `max_bytes` bytes (or one item over the bytes).
        #[test]
        fn items_arrive_in_order_within_the_bounds(
            sizes in prop::collection::vec(0usize..40, 0..60),
            max_items in 1usize..5,
            max_bytes in 1usize..60,
        ) {
            let q = Queue::new(max_items, max_bytes);
            let (tx, rx) = q.split();
            let got = std::thread::scope(|s| {
                // Moved in: a failed assertion drops it, which frees a sender waiting on a
                // full queue, so the scope's join does not hang.
                let mut rx = rx;
                let sizes = &sizes;
                s.spawn(move || {
                    for (i, &b) in sizes.iter().enumerate() {
                        tx.send(i, b).unwrap();
                    }
                });
                let mut got = Vec::new();
                loop {
                    // A slow receiver: the sender fills the queue up to its bounds.
                    std::thread::yield_now();
                    let st = q.lock();
                    assert!(st.items.len() <= max_items, "{} items", st.items.len());
                    assert!(
                        st.bytes <= max_bytes || st.items.len() == 1,
                        "{} bytes in {} items",
                        st.bytes,
                        st.items.len()
                    );
                    assert_eq!(st.bytes, st.items.iter().map(|(_, b)| b).sum::<usize>());
                    drop(st);
                    let Some(i) = rx.next() else { break };
                    got.push(i);
                }
                got
            });
            prop_assert_eq!(got, (0..sizes.len()).collect::<Vec<_>>());
        }
    }
}
