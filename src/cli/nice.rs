//! Thread priorities. The CPU-bound pools that feed a one-at-a-time stage run at a lower
//! priority than that stage, so that when they fill every core the scheduler still gives the
//! stage a core at once: the fingerprinting threads of `ingest` (the writer's loop of lookups,
//! decisions and commits waits for no core, docs/performance.md "The writer first"), and the
//! threads that parse and fingerprint `serve`'s writes (queries go first).

/// How much lower the fingerprinting threads of `ingest` and of `serve`'s writes run: nice
/// +10 (a tenth of a normal thread's share of a contended core; measured against +5 in
/// docs/performance.md "The writer first").
pub(super) const FEEDER_NICE: i32 = 10;

/// Lower the calling thread's priority by `by` nice steps, from its current one (so a
/// command started under `nice` keeps its distance; at most 19). Linux only, where a
/// thread's nice value is its own; best effort: a refusal changes nothing.
pub(super) fn lower_this_thread(by: i32) {
    #[cfg(target_os = "linux")]
    if by > 0 {
        // SAFETY: plain system calls on the calling thread's id; no memory is shared.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            // -1 is a valid nice value: an error is told by errno alone.
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            if now == -1 && *libc::__errno_location() != 0 {
                return;
            }
            libc::setpriority(libc::PRIO_PROCESS, tid, (now + by).min(19));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = by;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice_of_this_thread() -> i32 {
        // SAFETY: as above.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        }
    }

    #[test]
    fn lowers_only_the_calling_thread_from_where_it_is() {
        let main_before = nice_of_this_thread();
        let (before, after, again) = std::thread::spawn(|| {
            let before = nice_of_this_thread();
            lower_this_thread(3);
            let after = nice_of_this_thread();
            lower_this_thread(FEEDER_NICE * 3);
            (before, after, nice_of_this_thread())
        })
        .join()
        .expect("the thread ran");
        assert_eq!(
            after,
            (before + 3).min(19),
            "lowered by 3 from its own value"
        );
        assert_eq!(again, 19, "never past 19");
        assert_eq!(
            nice_of_this_thread(),
            main_before,
            "other threads keep theirs"
        );
    }
}
