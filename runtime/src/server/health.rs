//! What the server shows: the Prometheus registry at `/metrics` and the
//! health checks at `/healthz`, `/livez` and `/readyz` (`ok`, or HTTP 500
//! naming the failed checks; `/<probe>/<check>` runs one check;
//! `?verbose` lists every check and `?exclude=name` skips one, as the
//! apiserver-style healthz handlers do). Who may see them is the guard's
//! business (`guard.rs`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus::{Encoder, Registry, TextEncoder};

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

/// `/metrics`: the registry in Prometheus text format.
pub(super) async fn metrics(State(endpoints): State<Arc<Endpoints>>) -> Response {
    let encoder = TextEncoder::new();
    let mut body = Vec::new();
    match encoder.encode(&endpoints.registry.gather(), &mut body) {
        Ok(()) => ([(header::CONTENT_TYPE, encoder.format_type().to_owned())], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot encode metrics: {e}")).into_response(),
    }
}

/// The three probes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Probe {
    Healthz,
    Livez,
    Readyz,
}

/// A probe's answer: all its checks, or only `only`.
pub(super) async fn health(
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
