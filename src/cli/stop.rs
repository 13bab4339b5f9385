//! How an `ingest` or `dedup` run ends: SIGINT and SIGTERM (stop reading, commit what was
//! read, say so; a second one ends the process at once), and the exit status with the line on
//! stderr that says why it is not 0.

use std::path::PathBuf;

use super::output::{EXIT_OK, EXIT_SKIPPED};
use super::summary::Summary;

/// The exit status of a run that read `files` and counted `sum`, stopped by signal `sig` (0:
/// none), saying on stderr why it is not 0.
pub(super) fn exit_status(sig: usize, sum: &Summary, files: &[PathBuf]) -> u8 {
    if sig != 0 {
        let name = if sig == signal_hook::consts::SIGINT as usize {
            "SIGINT"
        } else {
            "SIGTERM"
        };
        let rerun = match (sum.dedup.is_some(), sum.resumed_job, sum.streamed) {
            (true, true, false) => {
                "run the same command again to go on: it reads on after them and writes the \
                 records of one uninterrupted run"
            }
            (true, true, true) => {
                "run the same command again to go on: it reads on after them, then writes its \
                 outputs anew, whole, as dedup without --stream does (one record per cluster)"
            }
            (true, false, _) => {
                "the unique ones are in this run's -o; to go on, run it again over the input \
                 with other output files: the records already stored are counted as \
                 near-duplicates, never written as unique again"
            }
            (false, ..) => {
                "run the same command again to go on: the records already stored are counted as \
                 such"
            }
        };
        eprintln!(
            "fpdb: interrupted by {name}: the {} records read before it are committed and \
             durable (the summary above); {rerun}",
            sum.records
        );
        return u8::try_from(128 + sig).unwrap_or(super::output::EXIT_ERROR);
    }
    if sum.records == 0 && sum.resumed > 0 {
        // A finished dedup job run again: its records were read by its earlier runs.
        return EXIT_OK;
    }
    if sum.records == 0 {
        eprintln!(
            "fpdb: error: nothing to ingest: {} held no records",
            if files.iter().any(|f| f.as_os_str() == "-") {
                "stdin".to_string()
            } else {
                files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        return super::output::EXIT_ERROR;
    }
    if sum.skipped_bad_input + sum.lost_to_damage == sum.records {
        // Not a partial success: nothing could be read (a wrong field name, a CSV without
        // its header line, a file of another format).
        eprintln!(
            "fpdb: error: nothing was ingested: all {} records were skipped as unreadable (the \
             first reasons are above)",
            sum.records
        );
        return super::output::EXIT_ERROR;
    }
    if sum.skipped > 0 {
        EXIT_SKIPPED
    } else {
        EXIT_OK
    }
}

/// The signal number of the first SIGINT or SIGTERM received from now on (0 until then); a
/// second one ends the process at once, with one line saying so and the usual 128 + signal
/// status.
pub(super) fn stop_on_signals() -> anyhow::Result<std::sync::Arc<std::sync::atomic::AtomicUsize>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let got = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let again = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Registered first: runs before the flag below is set, so only a second signal ends
        // it, with one line saying so (write(2) and _exit(2): safe in a signal handler).
        let second = std::sync::Arc::clone(&again);
        let line: &'static [u8] = if sig == SIGINT {
            b"\nfpdb: a second SIGINT: stopped at once; the batches committed before it are durable, the one in flight is not (run the same command again to go on)\n"
        } else {
            b"\nfpdb: a second SIGTERM: stopped at once; the batches committed before it are durable, the one in flight is not (run the same command again to go on)\n"
        };
        // SAFETY: the handler only reads an atomic, writes a static buffer to stderr and
        // ends the process, all async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                if second.load(std::sync::atomic::Ordering::SeqCst) {
                    libc::write(2, line.as_ptr().cast(), line.len());
                    signal_hook::low_level::exit(128 + sig);
                }
            })?;
        }
        signal_hook::flag::register(sig, std::sync::Arc::clone(&again))?;
        signal_hook::flag::register_usize(sig, std::sync::Arc::clone(&got), usize::try_from(sig)?)?;
    }
    Ok(got)
}

/// The error `e` that ended a `dedup` job's run (`job`) before its end: when a cause is an I/O
/// error (a full disk, a failing device: not a pipe closed by its reader), which may pass, it
/// says how to go on. The records
/// committed before it are durable and the job's run is left open, as a killed one's is.
pub(super) fn failed(e: anyhow::Error, job: bool) -> anyhow::Error {
    let passes = super::io_kind(&e).is_some_and(|k| k != std::io::ErrorKind::BrokenPipe);
    if job && passes {
        anyhow::anyhow!(
            "{}; the records committed before it are durable: once it is mended, run the same \
             command again to go on: it reads on after them and writes its outputs anew, whole",
            super::message(&e)
        )
    } else {
        e
    }
}
