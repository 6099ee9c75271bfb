//! HTTPS serving of `/metrics` and the health endpoints, as
//! kube-controller-manager serves them on `--secure-port` (10257).
//!
//! - `/metrics`: the process registry in Prometheus text format.
//! - `/healthz`, `/livez`, `/readyz`: `ok`, or HTTP 500 naming the failed
//!   checks; `/healthz/<check>` runs one check; `?verbose` lists every
//!   check (`[+]name ok` / `[-]name failed: reason withheld`) and
//!   `?exclude=name` skips one, as the apiserver-style healthz handlers do.
//!   `/healthz` holds `ping`, `leaderElection` and one check per running
//!   controller; `/livez` only `ping` (a live process answers);
//!   `/readyz` adds what readiness needs (caches synced, leading or
//!   standing by). Upstream kube-controller-manager serves `/healthz`
//!   only; `/livez` and `/readyz` are ours, for probes.
//!
//! The certificate is the one given by `--tls-cert-file` and
//! `--tls-private-key-file`, or a self-signed one generated at start, as
//! upstream does when none is given.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use prometheus::{Encoder, Registry, TextEncoder};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

/// Why serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A certificate or key file could not be read.
    #[error("cannot read {path}")]
    ReadPem {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The self-signed certificate could not be generated.
    #[error("cannot generate a self-signed certificate")]
    SelfSigned(#[source] rcgen::Error),
    /// The certificate and key do not make a TLS configuration.
    #[error("invalid TLS certificate or key")]
    Tls(#[source] rustls::Error),
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// Where the serving certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSource {
    /// Generated at start, for `localhost` and the host name.
    SelfSigned,
    /// PEM files (`--tls-cert-file`, `--tls-private-key-file`).
    Files {
        /// Certificate chain.
        cert: PathBuf,
        /// Private key.
        key: PathBuf,
    },
}

/// Builds the rustls server configuration.
pub fn tls_config(source: &TlsSource) -> Result<Arc<rustls::ServerConfig>> {
    let (certs, key) = match source {
        TlsSource::SelfSigned => {
            let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
            if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
                names.push(host.trim().to_owned());
            }
            let generated = rcgen::generate_simple_self_signed(names).map_err(Error::SelfSigned)?;
            let key = PrivateKeyDer::Pkcs8(generated.signing_key.serialize_der().into());
            (vec![generated.cert.der().clone()], key)
        }
        TlsSource::Files { cert, key } => {
            let certs = CertificateDer::pem_file_iter(cert)
                .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|source| Error::ReadPem { path: cert.clone(), source })?;
            let key =
                PrivateKeyDer::from_pem_file(key).map_err(|source| Error::ReadPem { path: key.clone(), source })?;
            (certs, key)
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(Error::Tls)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(Error::Tls)?;
    Ok(Arc::new(config))
}

/// A named health check: `Ok` or the reason it fails (logged, never served:
/// upstream withholds reasons from unauthenticated callers).
pub type Check = Arc<dyn Fn() -> std::result::Result<(), String> + Send + Sync>;

/// A set of named checks; checks may be added after serving starts (a
/// controller adds its own when it starts). Cheap to clone.
#[derive(Clone, Default)]
pub struct Checks {
    checks: Arc<RwLock<Vec<(String, Check)>>>,
}

impl Checks {
    /// A set holding only `ping`.
    pub fn with_ping() -> Self {
        let checks = Checks::default();
        checks.add("ping", Arc::new(|| Ok(())));
        checks
    }

    /// Adds (or replaces) a check.
    pub fn add(&self, name: &str, check: Check) {
        let mut checks = self.checks.write().unwrap_or_else(|p| p.into_inner());
        checks.retain(|(n, _)| n != name);
        checks.push((name.to_owned(), check));
    }

    fn run(&self) -> Vec<(String, std::result::Result<(), String>)> {
        let checks = self.checks.read().unwrap_or_else(|p| p.into_inner()).clone();
        checks.into_iter().map(|(name, check)| (name, check())).collect()
    }
}

/// What the server shows.
#[derive(Clone)]
pub struct Endpoints {
    /// Served at `/metrics`.
    pub registry: Registry,
    /// Served at `/healthz`.
    pub healthz: Checks,
    /// Served at `/livez`.
    pub livez: Checks,
    /// Served at `/readyz`.
    pub readyz: Checks,
}

/// The routes.
pub fn router(endpoints: Endpoints) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|s, q| health(s, q, Probe::Healthz, None)))
        .route("/healthz/{check}", get(|s, q, Path(c): Path<String>| health(s, q, Probe::Healthz, Some(c))))
        .route("/livez", get(|s, q| health(s, q, Probe::Livez, None)))
        .route("/livez/{check}", get(|s, q, Path(c): Path<String>| health(s, q, Probe::Livez, Some(c))))
        .route("/readyz", get(|s, q| health(s, q, Probe::Readyz, None)))
        .route("/readyz/{check}", get(|s, q, Path(c): Path<String>| health(s, q, Probe::Readyz, Some(c))))
        .with_state(Arc::new(endpoints))
}

async fn metrics(State(endpoints): State<Arc<Endpoints>>) -> Response {
    let encoder = TextEncoder::new();
    let mut body = Vec::new();
    match encoder.encode(&endpoints.registry.gather(), &mut body) {
        Ok(()) => ([(header::CONTENT_TYPE, encoder.format_type().to_owned())], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot encode metrics: {e}")).into_response(),
    }
}

#[derive(Debug, Clone, Copy)]
enum Probe {
    Healthz,
    Livez,
    Readyz,
}

async fn health(
    State(endpoints): State<Arc<Endpoints>>,
    Query(query): Query<HashMap<String, String>>,
    probe: Probe,
    only: Option<String>,
) -> Response {
    let (checks, path) = match probe {
        Probe::Healthz => (&endpoints.healthz, "healthz"),
        Probe::Livez => (&endpoints.livez, "livez"),
        Probe::Readyz => (&endpoints.readyz, "readyz"),
    };
    let excluded: Vec<&str> = query.get("exclude").map(|e| e.split(',').collect()).unwrap_or_default();
    let mut results = checks.run();
    if let Some(name) = &only {
        results.retain(|(n, _)| n == name);
        if results.is_empty() {
            return (StatusCode::NOT_FOUND, format!("no {path} check named {name:?}\n")).into_response();
        }
    }
    results.retain(|(n, _)| !excluded.contains(&n.as_str()));
    let failed = results.iter().any(|(_, r)| r.is_err());
    for (name, result) in &results {
        if let Err(reason) = result {
            tracing::warn!(check = %name, %reason, "{path} check failed");
        }
    }
    let verbose = query.contains_key("verbose");
    let body = if verbose || failed {
        let mut text = String::new();
        for (name, result) in &results {
            match result {
                Ok(()) => text.push_str(&format!("[+]{name} ok\n")),
                Err(_) => text.push_str(&format!("[-]{name} failed: reason withheld\n")),
            }
        }
        text.push_str(&format!("{path} check {}\n", if failed { "failed" } else { "passed" }));
        text
    } else {
        "ok".to_owned()
    };
    let code = if failed { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::OK };
    (code, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|source| Error::Bind { addr, source })
}

/// Serves HTTPS on `listener` until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    app: Router,
    mut shutdown: watch::Receiver<bool>,
) {
    let acceptor = TlsAcceptor::from(tls);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.changed() => return,
        };
        let Ok((stream, peer)) = accepted else {
            // Transient accept errors (e.g. out of file descriptors).
            tokio::task::yield_now().await;
            continue;
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(app.clone());
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let conn = http1::Builder::new().serve_connection(TokioIo::new(tls), service);
            tokio::select! {
                _ = conn => {}
                _ = shutdown.changed() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    fn endpoints() -> Endpoints {
        let registry = Registry::new();
        let counter = prometheus::IntCounter::new("kcm_test_total", "A test counter.").unwrap();
        registry.register(Box::new(counter.clone())).unwrap();
        counter.inc();
        Endpoints { registry, healthz: Checks::with_ping(), livez: Checks::with_ping(), readyz: Checks::with_ping() }
    }

    async fn call(app: &Router, uri: &str) -> (StatusCode, String) {
        let response = app.clone().oneshot(axum::http::Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn metrics_are_prometheus_text() {
        let app = router(endpoints());
        let (status, body) = call(&app, "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("# TYPE kcm_test_total counter\nkcm_test_total 1\n"), "{body}");
    }

    #[tokio::test]
    async fn health_is_ok_until_a_check_fails_and_names_it() {
        let e = endpoints();
        let app = router(e.clone());
        assert_eq!(call(&app, "/healthz").await, (StatusCode::OK, "ok".to_owned()));
        e.healthz.add("leaderElection", Arc::new(|| Err("lease not renewed for 40s".into())));
        let (status, body) = call(&app, "/healthz").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body, "[+]ping ok\n[-]leaderElection failed: reason withheld\nhealthz check failed\n");
        assert_eq!(call(&app, "/healthz/ping").await.0, StatusCode::OK);
        assert_eq!(call(&app, "/healthz/leaderElection").await.0, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(call(&app, "/healthz?exclude=leaderElection").await.0, StatusCode::OK);
        assert_eq!(call(&app, "/healthz/nonesuch").await.0, StatusCode::NOT_FOUND);
        assert_eq!(call(&app, "/livez").await.0, StatusCode::OK, "livez does not hold leaderElection");
    }

    #[tokio::test]
    async fn verbose_lists_every_check() {
        let app = router(endpoints());
        assert_eq!(call(&app, "/readyz?verbose").await.1, "[+]ping ok\nreadyz check passed\n");
    }

    #[test]
    fn a_self_signed_certificate_makes_a_tls_configuration() {
        assert!(tls_config(&TlsSource::SelfSigned).is_ok());
        let missing = TlsSource::Files { cert: "/nonexistent.crt".into(), key: "/nonexistent.key".into() };
        assert!(matches!(tls_config(&missing), Err(Error::ReadPem { .. })));
    }
}
