//! `fpdb serve`: the store over HTTP. One process owns the store (the single writer) and
//! answers many clients at once:
//!
//! - `api.rs`: the routes (JSON in and out, errors that name the field), the bearer token, the
//!   request metrics;
//! - `writer.rs`: the one writer thread, which runs the library's ingest path over the write
//!   requests as they come (chunks in arrival order, each synced behind the next) and answers
//!   each once its documents are durable;
//! - `metrics.rs`: Prometheus counters and histograms for `/metrics`.
//!
//! Reads (queries, documents, clusters, stats) run on all cores against the store as last
//! committed; the writer holds the store exclusively only while it decides a chunk.
//! Fingerprinting runs beside that, on all cores, outside any lock.

mod api;
mod conn;
mod error;
mod guard;
mod metrics;
mod pools;
mod request;
mod ui;
mod views;
mod writer;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{bail, Context};
use clap::Args;

use fpdb::Fpdb;

use super::args::SettingsArgs;
use super::output::EXIT_OK;

#[derive(Args, Debug)]
pub(super) struct ServeArgs {
    /// Address to listen on: IP:PORT or HOST:PORT (port 0: any free port; the one chosen is
    /// printed). A host name is resolved; its first address is used
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Require `Authorization: Bearer TOKEN` on every route but /healthz, TOKEN being the
    /// first line of FILE. Without it the server listens on loopback addresses only
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve a non-loopback address without a token (anyone who reaches it can write)
    #[arg(long)]
    insecure_no_token: bool,
    /// Largest request body accepted, in bytes (larger ones get 413)
    #[arg(long, value_name = "BYTES", default_value_t = 32 << 20)]
    max_body_bytes: usize,
    /// Seconds a client has to send a request's header, and to send each next part of its body
    /// (a stalled request gets 408 or is closed), and to take each next part of its answer (a
    /// client that stops reading is dropped); idle keep-alive connections close after it
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    read_timeout: u64,
    /// Seconds a stop (ctrl-c, SIGTERM) waits for the requests in flight before it drops the
    /// connections still open; writes already handed to the store are completed and synced
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    shutdown_deadline: u64,
    /// Most documents one write or query request may carry (larger ones get 413; a write
    /// request is ingested in chunks, so reads run between them)
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_request_docs: u64,
    /// Most documents ingested together in one commit (one hold of the store, one sync; at
    /// most 256 whatever this says: a chunk is sized to hold the store about 8 ms)
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    max_group: u64,
    /// Block cache in MiB (index, filter and data blocks; memtables take up to 128 MiB more): a
    /// store larger than the cache reads most lookups from disk (or the page cache)
    #[arg(long, value_name = "MIB", default_value_t = crate::cli::SERVE_CACHE_MIB, value_parser = clap::value_parser!(u64).range(8..))]
    cache_mib: u64,
    /// Build the in-memory Bloom filter of every hash prefix by a scan at start when none
    /// saved with the store fits it (one saved by `ingest` or `compact` is used without this
    /// flag, brought up to date if the store was written since; ~10 bits per stored key):
    /// lookups of hashes no document has skip the store
    #[arg(long)]
    memory_filters: bool,
    /// Worker threads for HTTP and for fingerprinting (default: all cores)
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    settings: SettingsArgs,
}

/// Write requests read, parsed and fingerprinted at once (the rest wait, unread): a bound on
/// the memory of many large write requests. Two keep the writer fed while the next request is
/// prepared.
const WRITE_SLOTS: usize = 2;

/// What every request handler shares.
pub(super) struct Shared {
    /// The store: read by every request, written by the writer thread only.
    db: RwLock<Fpdb>,
    /// A copy of the store's fingerprinter (fingerprints are computed outside the lock).
    fingerprinter: fpdb::fingerprint::Fingerprinter,
    /// Hands write jobs to the writer thread; None once the server is shutting down.
    writer: Mutex<Option<std::sync::mpsc::Sender<writer::Job>>>,
    /// The token every request but /healthz must bring (`Authorization: Bearer TOKEN`), if set.
    token: Option<String>,
    /// The address listened on (a server without a token answers only its own Host).
    listen: std::net::SocketAddr,
    metrics: metrics::Metrics,
    max_body_bytes: usize,
    /// Most documents of one request.
    max_request_docs: usize,
    /// Write requests read and worked on at once.
    write_slots: tokio::sync::Semaphore,
    /// Longest wait for the next part of a request body.
    read_timeout: std::time::Duration,
    /// Set when the writer failed: writes are refused, /healthz says so.
    writer_failed: std::sync::atomic::AtomicBool,
    /// The last report made for `GET /v1/report` and when (one is made at a time).
    report: tokio::sync::Mutex<Option<(std::time::Instant, Arc<fpdb::report::Report>)>>,
}

pub(super) fn serve(path: &Path, a: &ServeArgs, quiet: bool) -> anyhow::Result<u8> {
    let (token, listen) = access(a)?;
    let settings = a.settings.to_settings()?;
    super::ingest::check_settings(path, &settings)?;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, std::num::NonZero::get))
        .max(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("fpdb-cpu-{i}"))
        .build_global()
        .ok();
    // The address is taken before the store is opened (or created): a busy port leaves no
    // new store behind.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("fpdb-http")
        .enable_all()
        .build()
        .context("cannot start the HTTP runtime")?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(listen))
        .with_context(|| format!("cannot listen on {listen}"))?;
    let mut db = Fpdb::builder()
        .settings(settings)
        .create(true)
        .cache_bytes((a.cache_mib as usize) << 20)
        .presence_filters(a.memory_filters)
        .open(path)?;
    // The writer cuts what clients send into batches by the time each holds the store: its
    // pages are decided as one at a time, whatever the timing.
    db.set_batch_furniture(false);
    if let (Some(n @ 1..), false) = (db.meters().memory_filter_caught_up, quiet) {
        eprintln!(
            "fpdb: presence filter brought up to date: {n} document(s) written since it was saved read into it"
        );
    }
    // The first queries would otherwise wait for jieba's dictionary.
    rayon::spawn(fpdb::text::warm_up);
    let (tx, rx) = std::sync::mpsc::channel();
    let shared = Arc::new(Shared {
        fingerprinter: db.fingerprinter().clone(),
        db: RwLock::new(db),
        writer: Mutex::new(Some(tx)),
        token,
        listen: listener.local_addr()?,
        metrics: metrics::Metrics::new(),
        max_body_bytes: a.max_body_bytes,
        max_request_docs: a.max_request_docs as usize,
        write_slots: tokio::sync::Semaphore::new(WRITE_SLOTS),
        read_timeout: std::time::Duration::from_secs(a.read_timeout),
        writer_failed: Default::default(),
        report: tokio::sync::Mutex::new(None),
    });
    let writer = {
        let shared = shared.clone();
        let max_group = a.max_group as usize;
        std::thread::Builder::new()
            .name("fpdb-writer".into())
            .spawn(move || writer::run(&shared, rx, max_group))?
    };
    let served = runtime.block_on(async {
        let local = listener.local_addr()?;
        if !quiet {
            eprintln!(
                "fpdb: serving {} on http://{local} (ctrl-c or SIGTERM stops it)",
                path.display()
            );
        } else {
            // Even when quiet: with port 0 this line is the only way to learn the port.
            eprintln!("fpdb: listening on http://{local}");
        }
        let app = api::router(shared.clone());
        let stopped = conn::serve(
            listener,
            app,
            shutdown_signal(),
            std::time::Duration::from_secs(a.read_timeout),
            std::time::Duration::from_secs(a.shutdown_deadline),
        )
        .await;
        if stopped.dropped > 0 {
            eprintln!(
                "fpdb: stopping: {} connection(s) still open after the {} s deadline dropped \
                 (their requests were not answered)",
                stopped.dropped, a.shutdown_deadline
            );
        }
        anyhow::Ok(())
    });
    let (writer_ok, flushed) = stop(&shared, writer, runtime);
    drop(shared);
    served?;
    if !writer_ok {
        bail!("the writer thread failed; acknowledged documents are stored");
    }
    flushed.context("flushing the store at shutdown")?;
    if !quiet {
        eprintln!("fpdb: stopped; {} is closed", path.display());
    }
    Ok(EXIT_OK)
}

/// The token (`--token-file`) and the address to listen on: refused when the address is not
/// a loopback one and no token guards it (unless `--insecure-no-token`).
fn access(a: &ServeArgs) -> anyhow::Result<(Option<String>, SocketAddr)> {
    let token = match &a.token_file {
        Some(f) => Some(read_token(f)?),
        None => None,
    };
    let listen = resolve_listen(&a.listen)?;
    if token.is_none() && !listen.ip().is_loopback() && !a.insecure_no_token {
        bail!(
            "{listen} is not a loopback address: give --token-file FILE so that only clients \
             with the token are served (or --insecure-no-token to serve anyone who can reach it)"
        );
    }
    Ok((token, listen))
}

/// The stop, once every connection is drained (no new write job can come): the writer
/// finishes the queue, then the store is flushed and its presence filter saved. Returns
/// whether the writer ended well and the flush's result.
fn stop(
    shared: &Shared,
    writer: std::thread::JoinHandle<()>,
    runtime: tokio::runtime::Runtime,
) -> (bool, fpdb::Result<()>) {
    shared
        .writer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let writer_ok = writer.join().is_ok();
    // Connections dropped at the deadline end with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    // A lookup whose client went away may still hold the store on rayon's pool: flush through
    // the lock rather than wait for it; the store closes with the last reference.
    let flushed = shared
        .db
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .flush();
    if flushed.is_ok() {
        let saved = shared
            .db
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .save_memory_filter();
        if let Err(e) = saved {
            eprintln!("fpdb: warning: the presence filter was not saved ({e}); the next run goes without it");
        }
    }
    (writer_ok, flushed)
}

/// `--listen`: an IP address and port, or a host name (`localhost:0`) resolved to its first
/// address.
fn resolve_listen(listen: &str) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = listen.parse::<SocketAddr>() {
        return Ok(a);
    }
    let mut found = listen.to_socket_addrs().with_context(|| {
        format!("--listen {listen}: not an address (expected IP:PORT or HOST:PORT, e.g. 127.0.0.1:8080)")
    })?;
    found
        .next()
        .with_context(|| format!("--listen {listen}: the host name has no address"))
}

fn read_token(f: &Path) -> anyhow::Result<String> {
    // A token is one line.
    let text = crate::cli::output::read_lines_capped(f, 4096, "the token file")?
        .into_iter()
        .next()
        .unwrap_or_default();
    check_token(&text).with_context(|| format!("the token file {}", f.display()))
}

/// The token of a token file's text: its first line, trimmed, without a byte order mark. It
/// must be at least 16 visible ASCII characters: a client sends it in an HTTP header, which
/// carries ASCII only, so any other character would lock every client out.
fn check_token(text: &str) -> anyhow::Result<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let token = text.lines().next().unwrap_or("").trim();
    if let Some(c) = token.chars().find(|c| !c.is_ascii_graphic()) {
        bail!(
            "the token (its first line) holds {c:?}: only visible ASCII characters (letters, \
             digits, punctuation; no spaces) can be sent in an Authorization header"
        );
    }
    if token.len() < 16 {
        bail!(
            "the token (its first line) must have at least 16 characters, not {}",
            token.len()
        );
    }
    Ok(token.to_string())
}

/// Resolves on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    eprintln!("fpdb: stopping: finishing the requests in flight");
}

#[cfg(test)]
mod tests {
    use super::check_token;

    #[test]
    fn a_token_file_with_a_byte_order_mark_gives_the_token_without_it() {
        let t = check_token("\u{feff}0123456789abcdef\nignored").unwrap();
        assert_eq!(t, "0123456789abcdef");
    }

    #[test]
    fn tokens_no_header_can_carry_or_too_short_are_refused() {
        for bad in [
            "0123456789abcdé",
            "0123456789abcdefé",
            "0123 456789abcdefgh",
            "short",
        ] {
            let e = check_token(bad).unwrap_err().to_string();
            assert!(e.contains("token"), "{bad}: {e}");
        }
        // 16 bytes but 15 characters: refused for its character, not admitted by its bytes.
        assert!(check_token("0123456789abcdé").is_err());
        assert!(check_token("  0123456789abcdef  ").is_ok());
    }
}
