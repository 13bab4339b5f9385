//! The connection loop of `fpdb serve`: accept, serve each connection with HTTP/1.1 on its own
//! task, and stop within a deadline.
//!
//! - A request's header must arrive within the read timeout (hyper's header read timeout, which
//!   needs the timer `axum::serve` does not set); an idle keep-alive connection is closed after
//!   the same time. A body that stalls is cut by the handlers (`api::read_body`).
//! - A client that stops reading its answer is dropped when a write makes no progress for the
//!   same time (the write timeout of `tokio_io_timeout`): its answer is not held for ever (12
//!   clients that asked for large answers and never read them held 3.3 GB).
//! - On shutdown, the listener closes, every connection finishes the request it is in and then
//!   closes; connections still open after the shutdown deadline (a client that sent half a
//!   request and waits) are dropped. A write the writer thread already holds still completes
//!   and is synced: only its answer is lost.

use std::future::Future;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;

/// How a stop ended.
pub(super) struct Stopped {
    /// Connections still open at the deadline, dropped.
    pub(super) dropped: usize,
}

/// Serve `app` on `listener` until `signal` resolves, then stop within `deadline`.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    signal: impl Future<Output = ()>,
    read_timeout: Duration,
    deadline: Duration,
) -> Stopped {
    let graceful = GracefulShutdown::new();
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(read_timeout);
    let mut signal = std::pin::pin!(signal);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: the error is the listener's
                        // state, not this loop's; wait a little rather than spin.
                        eprintln!("fpdb: accepting a connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(app.clone());
                let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
                stream.set_write_timeout(Some(read_timeout));
                let conn = http.serve_connection(TokioIo::new(Box::pin(stream)), service);
                let conn = graceful.watch(conn);
                let open = open.clone();
                open.fetch_add(1, Relaxed);
                tokio::spawn(async move {
                    // A client that goes away or times out ends its connection only.
                    let _ = conn.await;
                    open.fetch_sub(1, Relaxed);
                });
            }
            _ = &mut signal => break,
        }
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => Stopped { dropped: 0 },
        _ = tokio::time::sleep(deadline) => Stopped { dropped: open.load(Relaxed) },
    }
}
