//! The gate in front of every route: authenticate (`authn.rs`), then
//! authorize (`authz.rs`), answering as upstream's filters do:
//!
//! - not authenticated: 401 with the `Unauthorized` Status;
//! - denied: 403 with the `Forbidden` Status, `forbidden: User "<name>"
//!   cannot <verb> path "<path>"` (`: <reason>` when the reviewer gave
//!   one);
//! - the authorization review failed: 500, `Internal Server Error:
//!   "<uri>": <error>` in plain text.
//!
//! Status bodies are JSON, indented for curl, Wget and browsers (or with
//! `?pretty=true`) as the apiserver's negotiation does.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rustls::pki_types::CertificateDer;

use super::authn::Authenticator;
use super::authz::{Authorizer, Decision, verb};

/// Who may see what the server shows.
#[derive(Debug, Clone)]
pub enum Access {
    /// Everyone sees everything: kcm-rs's `--sim`, whose embedded API
    /// server reviews no tokens or access.
    Open,
    /// Upstream's delegated authentication and authorization.
    Delegated(Arc<Delegation>),
}

/// Delegated authentication and authorization.
#[derive(Debug, Default)]
pub struct Delegation {
    /// Who a request is.
    pub authenticator: Authenticator,
    /// What it may do.
    pub authorizer: Authorizer,
}

impl Access {
    /// Whether TLS should ask clients for certificates (some client CA is
    /// known).
    pub fn wants_client_certificates(&self) -> bool {
        match self {
            Access::Open => false,
            Access::Delegated(d) => d.authenticator.client_ca.is_some() || d.authenticator.request_header.is_some(),
        }
    }
}

/// The certificate chain the client presented on this connection (empty:
/// none), put on each request by the server.
#[derive(Debug, Clone, Default)]
pub struct PeerCertificates(pub Arc<[CertificateDer<'static>]>);

/// Lets the request through, or answers 401, 403 or 500.
pub(super) async fn guard(State(access): State<Access>, request: Request, next: Next) -> Response {
    let Access::Delegated(delegation) = access else {
        return next.run(request).await;
    };
    let certs = request.extensions().get::<PeerCertificates>().cloned().unwrap_or_default();
    let pretty = pretty(&request);
    let user = match delegation.authenticator.authenticate(request.headers(), &certs.0).await {
        Ok(user) => user,
        Err(reasons) => {
            tracing::debug!(?reasons, "unable to authenticate the request");
            return status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized".to_owned(), false, pretty);
        }
    };
    let verb = verb(request.method());
    let path = request.uri().path().to_owned();
    match delegation.authorizer.authorize(&user, &verb, &path).await {
        Ok(Decision::Allow) => next.run(request).await,
        Ok(Decision::Forbid { reason }) => {
            let mut message = format!("forbidden: User {:?} cannot {verb} path {path:?}", user.name);
            if !reason.is_empty() {
                message.push_str(&format!(": {reason}"));
            }
            let message = message.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
            status(StatusCode::FORBIDDEN, "Forbidden", message, true, pretty)
        }
        Err(error) => {
            tracing::error!(%error, %path, "authorization failed");
            let body = format!("Internal Server Error: {:?}: {error}\n", request.uri().to_string());
            let mut response = (StatusCode::INTERNAL_SERVER_ERROR, body).into_response();
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
            response.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
            response
        }
    }
}

/// Whether the caller reads with its eyes: `?pretty=<bool>`, else a
/// curl, Wget or browser user agent.
fn pretty(request: &Request) -> bool {
    let query = request.uri().query().unwrap_or_default();
    if let Some(value) = query.split('&').find_map(|kv| kv.strip_prefix("pretty=")).filter(|v| !v.is_empty()) {
        return matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True");
    }
    let agent = request.headers().get(header::USER_AGENT).and_then(|a| a.to_str().ok()).unwrap_or_default();
    ["curl", "Wget", "Mozilla/5.0"].iter().any(|p| agent.starts_with(p))
}

/// A failure `Status`, its fields in the apiserver's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Status<'a> {
    kind: &'a str,
    api_version: &'a str,
    metadata: Empty,
    status: &'a str,
    message: String,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Empty>,
    code: u16,
}

/// `{}`.
#[derive(serde::Serialize)]
struct Empty {}

/// A failure `Status` response, as the apiserver writes it.
fn status(code: StatusCode, reason: &str, message: String, details: bool, pretty: bool) -> Response {
    let body = Status {
        kind: "Status",
        api_version: "v1",
        metadata: Empty {},
        status: "Failure",
        message,
        reason,
        details: details.then_some(Empty {}),
        code: code.as_u16(),
    };
    let text = if pretty { serde_json::to_string_pretty(&body) } else { serde_json::to_string(&body) };
    let mut response = (code, format!("{}\n", text.unwrap_or_default())).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    response
}
