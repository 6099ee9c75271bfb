//! HTTPS serving of `/metrics` and the health endpoints, as
//! kube-controller-manager serves them on `--secure-port` (10257), behind
//! its delegated authentication and authorization.
//!
//! - `/metrics`: the process registry in Prometheus text format.
//! - `/healthz`, `/livez`, `/readyz`: `ok`, or HTTP 500 naming the failed
//!   checks (`health.rs`). `/healthz` holds `ping`, `leaderElection` and
//!   one check per running controller; `/livez` only `ping`; `/readyz`
//!   adds what readiness needs (caches synced, leading or standing by).
//!   Upstream kube-controller-manager serves `/healthz` only; `/livez`
//!   and `/readyz` are ours, for probes.
//!
//! Every request passes the guard (`guard.rs`): who it is (`authn.rs`:
//! front-proxy headers, client certificates, bearer tokens reviewed by
//! the API server, else anonymous) and whether that user may `get` the
//! path (`authz.rs`: always-allowed groups and paths, else a
//! SubjectAccessReview); answers are cached (`cache.rs`). What the guard
//! knows is built at start-up from the flags (`delegation.rs`); under
//! kcm-rs's `--sim` access is [`Access::Open`]. Certificates, client
//! certificate chains and the TLS parameters are `tls.rs`'s and
//! `x509.rs`'s.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::Path;
use axum::routing::get;
use axum::{Extension, Router};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

mod authn;
mod authz;
mod cache;
mod delegation;
mod guard;
mod health;
mod tls;
mod x509;

pub use authn::{ANONYMOUS, AUTHENTICATED, Authenticator, RequestHeader, TokenReviewer, UNAUTHENTICATED, User};
pub use authz::{
    AccessReviewer, Authorizer, DEFAULT_ALWAYS_ALLOW_GROUPS, DEFAULT_ALWAYS_ALLOW_PATHS, Decision, PathRules, verb,
};
pub use delegation::{DelegationSettings, RequestHeaderSettings, delegated};
pub use guard::{Access, Delegation, PeerCertificates};
pub use health::{Check, Checks, Endpoints};
pub use tls::{PAIR_NAME, TlsSettings, TlsSource, tls_config};
pub use x509::ClientCa;

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
    /// The generated certificate could not be read back.
    #[error("cannot read the generated self-signed certificate")]
    SelfSignedPem(#[source] rustls::pki_types::pem::Error),
    /// The generated pair could not be written to `--cert-dir`.
    #[error("cannot write {path} (--cert-dir)")]
    CertDir {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The certificate and key do not make a TLS configuration.
    #[error("invalid TLS certificate or key")]
    Tls(#[source] rustls::Error),
    /// `--tls-cipher-suites` names a suite Go or kcm-rs does not know.
    #[error("--tls-cipher-suites: {0}")]
    CipherSuite(String),
    /// `--tls-min-version` is not one of Go's version names.
    #[error("--tls-min-version: {0}")]
    TlsVersion(String),
    /// A CA bundle flag's file is unreadable or holds no certificate.
    #[error("--{flag}: unable to load client CA file {path}: {reason}")]
    CaFile {
        /// The flag.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A kubeconfig flag's file cannot be used.
    #[error("--{flag}: failed to get delegated kubeconfig from {path}")]
    Kubeconfig {
        /// The flag.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// A client for a kubeconfig flag could not be built.
    #[error("--{flag}: cannot build the API client")]
    Client {
        /// The flag.
        flag: &'static str,
        /// The cause.
        #[source]
        source: kube::Error,
    },
    /// A flag's value is invalid.
    #[error("--{flag}: {reason}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// Why.
        reason: String,
    },
    /// The request-header configuration could not be looked up in the
    /// cluster, and `--authentication-tolerate-lookup-failure` is off.
    #[error(
        "unable to load configmap based request-header-client-ca-file: {0} (set \
         --authentication-tolerate-lookup-failure=true to start without it)"
    )]
    Lookup(String),
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// The routes, behind `access`.
pub fn router(endpoints: Endpoints, access: Access) -> Router {
    use health::{Probe, health, metrics};
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|s, q| health(s, q, Probe::Healthz, None)))
        .route("/healthz/{check}", get(|s, q, Path(c): Path<String>| health(s, q, Probe::Healthz, Some(c))))
        .route("/livez", get(|s, q| health(s, q, Probe::Livez, None)))
        .route("/livez/{check}", get(|s, q, Path(c): Path<String>| health(s, q, Probe::Livez, Some(c))))
        .route("/readyz", get(|s, q| health(s, q, Probe::Readyz, None)))
        .route("/readyz/{check}", get(|s, q, Path(c): Path<String>| health(s, q, Probe::Readyz, Some(c))))
        .with_state(Arc::new(endpoints))
        .layer(axum::middleware::from_fn_with_state(access, guard::guard))
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|source| Error::Bind { addr, source })
}

/// Serves HTTPS on `listener` until `shutdown` turns true; each request
/// carries its connection's client certificates ([`PeerCertificates`]).
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
        let app = app.clone();
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let certs = tls.get_ref().1.peer_certificates().unwrap_or_default();
            let certs = PeerCertificates(certs.iter().map(|c| c.clone().into_owned()).collect());
            let service = TowerToHyperService::new(app.layer(Extension(certs)));
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
    use axum::http::StatusCode;
    use http_body_util::BodyExt;
    use prometheus::Registry;
    use tower::ServiceExt;

    use super::*;

    fn endpoints() -> Endpoints {
        let registry = Registry::new();
        let counter = prometheus::IntCounter::new("kcm_test_total", "A test counter.").unwrap();
        registry.register(Box::new(counter.clone())).unwrap();
        counter.inc();
        Endpoints { registry, healthz: Checks::with_ping(), livez: Checks::with_ping(), readyz: Checks::with_ping() }
    }

    async fn call_as(app: &Router, uri: &str, agent: &str) -> (StatusCode, String) {
        let request = axum::http::Request::get(uri).header("user-agent", agent).body(Body::empty()).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    async fn call(app: &Router, uri: &str) -> (StatusCode, String) {
        call_as(app, uri, "test").await
    }

    /// kube-controller-manager's defaults with no kubeconfigs: only the
    /// always-allowed paths and groups pass.
    fn delegated_without_kubeconfigs() -> Access {
        let paths: Vec<String> = DEFAULT_ALWAYS_ALLOW_PATHS.iter().map(|p| (*p).to_owned()).collect();
        Access::Delegated(Arc::new(Delegation {
            authenticator: Authenticator::default(),
            authorizer: Authorizer {
                always_allow_groups: vec!["system:masters".to_owned()],
                always_allow_paths: PathRules::new(&paths).unwrap(),
                reviews: None,
            },
        }))
    }

    #[tokio::test]
    async fn metrics_are_prometheus_text() {
        let app = router(endpoints(), Access::Open);
        let (status, body) = call(&app, "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("# TYPE kcm_test_total counter\nkcm_test_total 1\n"), "{body}");
    }

    #[tokio::test]
    async fn health_is_ok_until_a_check_fails_and_names_it() {
        let e = endpoints();
        let app = router(e.clone(), Access::Open);
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
        let app = router(endpoints(), Access::Open);
        assert_eq!(call(&app, "/readyz?verbose").await.1, "[+]ping ok\nreadyz check passed\n");
    }

    #[tokio::test]
    async fn an_anonymous_caller_sees_health_but_is_forbidden_metrics() {
        let app = router(endpoints(), delegated_without_kubeconfigs());
        assert_eq!(call(&app, "/healthz").await, (StatusCode::OK, "ok".to_owned()));
        assert_eq!(call(&app, "/healthz/ping").await.0, StatusCode::FORBIDDEN, "only the exact path is allowed");
        let (status, body) = call(&app, "/metrics").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(
            body,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"forbidden: \
             User \\\"system:anonymous\\\" cannot get path \\\"/metrics\\\"\",\"reason\":\"Forbidden\",\"details\":{},\
             \"code\":403}\n"
        );
        let (_, pretty) = call_as(&app, "/metrics", "curl/8.5.0").await;
        assert!(pretty.starts_with("{\n  \"kind\": \"Status\",\n"), "indented for curl: {pretty}");
    }

    #[tokio::test]
    async fn an_unreachable_api_server_fails_the_request_not_the_process() {
        let nowhere = || {
            let url: http::Uri = "https://127.0.0.1:1".parse().unwrap();
            kube::Client::try_from(kube::Config::new(url)).unwrap()
        };
        let ttl = std::time::Duration::from_secs(10);
        let access = Access::Delegated(Arc::new(Delegation {
            authenticator: Authenticator {
                tokens: Some(TokenReviewer::new(nowhere(), ttl)),
                ..Authenticator::default()
            },
            authorizer: Authorizer { reviews: Some(AccessReviewer::new(nowhere(), ttl, ttl)), ..Authorizer::default() },
        }));
        let app = router(endpoints(), access);
        let request = axum::http::Request::get("/metrics").header("authorization", "Bearer abc").body(Body::empty());
        let response = app.clone().oneshot(request.unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "a token that cannot be reviewed");
        let (status, body) = call(&app, "/metrics").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(body.starts_with("Internal Server Error: \"/metrics\": SubjectAccessReview failed"), "{body}");
    }
}
