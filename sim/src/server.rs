//! The HTTP listener: plain HTTP/1.1 on a loopback address, one task per
//! connection, and the two ways connections end besides the client: a
//! simulated API server restart (every connection dropped, state kept) and
//! shutdown.

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Accepts connections until `shutdown` turns true; every change of
/// `restarts` drops every open connection.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    restarts: watch::Receiver<u64>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.changed() => return,
        };
        let Ok((stream, _)) = accepted else {
            // Accept errors (e.g. too many open files) are transient.
            tokio::task::yield_now().await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut restarts = restarts.clone();
        // A clone starts from what the accept loop's receiver has seen (never
        // updated), so without this every connection accepted after a
        // restart would see that restart and be dropped at once.
        restarts.mark_unchanged();
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            let conn = http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                // Errors are the client's (reset, malformed request): nothing
                // to do but close.
                _ = conn => {}
                _ = restarts.changed() => {}
                _ = shutdown.changed() => {}
            }
        });
    }
}
