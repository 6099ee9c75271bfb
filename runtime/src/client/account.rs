//! `--use-service-account-credentials`: each controller's client acts as a
//! ServiceAccount of its own, `kube-system/<its client name>`, as
//! kube-controller-manager's `DynamicControllerClientBuilder` makes it act
//! (controller-manager's `pkg/clientbuilder/client_builder_dynamic.go`).
//! The API server's bootstrap policy binds each such account to its
//! ClusterRole `system:controller:<name>`.
//!
//! [`ServiceAccounts`] holds the root client (the `--kubeconfig` identity,
//! which may create ServiceAccounts and request their tokens) and one
//! [`TokenSource`] per account, shared by every client of that name. Each
//! attempt at a token (`token.rs` schedules them) first makes sure the
//! account exists, as upstream: get it; when it is missing, create the
//! namespace if that is missing too (its failure only logged: the root
//! identity may not create namespaces), then the account (someone else
//! creating it first is fine); then asks for a token of an hour through
//! the TokenRequest API.
//!
//! Where upstream differs: kube-controller-manager also makes sure of the
//! account when a controller's client is built, and exits if that fails;
//! kcm-rs builds clients without a request, so the first request of each
//! controller does it, and a failure fails that request (its controller
//! retries it, as any failed write) with an error naming the account.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{Api, ObjectMeta, PostParams};
use kube::core::Status;
use tower::BoxError;

use super::token::{Fetch, Issued, TokenSource};

/// Where the controllers' ServiceAccounts live (upstream's
/// `metav1.NamespaceSystem`).
pub const NAMESPACE: &str = "kube-system";

/// The lifetime kcm-rs asks for (upstream's `defaultExpirationSeconds`).
pub const EXPIRATION_SECONDS: i64 = 3600;

/// The controllers' ServiceAccounts and their tokens, obtained with the
/// root client; cheap to clone (clones share the tokens).
#[derive(Clone)]
pub struct ServiceAccounts {
    /// The `--kubeconfig` identity's client: ServiceAccounts and
    /// TokenRequests.
    root: kube::Client,
    /// One source per account name, so that two clients of one controller
    /// share a token (upstream's `roundTripperFuncMap`).
    sources: Arc<Mutex<HashMap<String, Arc<TokenSource>>>>,
}

impl fmt::Debug for ServiceAccounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccounts").finish_non_exhaustive()
    }
}

impl ServiceAccounts {
    /// Accounts in [`NAMESPACE`], created and asked for tokens with `root`.
    pub fn new(root: kube::Client) -> ServiceAccounts {
        ServiceAccounts { root, sources: Arc::default() }
    }

    /// The token source of `kube-system/<name>`, made on first use.
    pub fn source(&self, name: &str) -> Arc<TokenSource> {
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        sources
            .entry(name.to_owned())
            .or_insert_with(|| {
                let root = self.root.clone();
                let owned = name.to_owned();
                let fetch: Fetch = Arc::new(move || Box::pin(issue(root.clone(), owned.clone())));
                Arc::new(TokenSource::new(format!("{NAMESPACE}/{name}"), fetch))
            })
            .clone()
    }
}

/// One attempt: the account made sure of, then a token for it.
async fn issue(root: kube::Client, name: String) -> Result<Issued, BoxError> {
    let accounts: Api<ServiceAccount> = Api::namespaced(root.clone(), NAMESPACE);
    get_or_create(&root, &accounts, &name).await?;
    let request = TokenRequest {
        spec: Some(TokenRequestSpec { expiration_seconds: Some(EXPIRATION_SECONDS), ..TokenRequestSpec::default() }),
        ..TokenRequest::default()
    };
    let answer = accounts.create_token_request(&name, &PostParams::default(), &request).await?;
    let status = answer.status.ok_or("the TokenRequest has no status")?;
    let token = status.token.filter(|t| !t.is_empty()).ok_or("the TokenRequest has no token")?;
    let expires = status.expiration_timestamp.ok_or("the TokenRequest has no expiration timestamp")?;
    let left = expires.0.duration_since(jiff::Timestamp::now());
    let lifetime = Duration::try_from(left).unwrap_or(Duration::ZERO);
    Ok(Issued { token, lifetime })
}

/// Upstream's `getOrCreateServiceAccount`.
async fn get_or_create(root: &kube::Client, accounts: &Api<ServiceAccount>, name: &str) -> Result<(), kube::Error> {
    match accounts.get(name).await {
        Ok(_) => return Ok(()),
        Err(e) if !answered(&e, Status::is_not_found) => return Err(e),
        Err(_) => {}
    }
    let namespaces: Api<Namespace> = Api::all(root.clone());
    if let Err(e) = namespaces.get(NAMESPACE).await
        && answered(&e, Status::is_not_found)
    {
        let namespace = Namespace {
            metadata: ObjectMeta { name: Some(NAMESPACE.to_owned()), ..ObjectMeta::default() },
            ..Namespace::default()
        };
        if let Err(e) = namespaces.create(&PostParams::default(), &namespace).await
            && !answered(&e, Status::is_already_exists)
        {
            tracing::info!(namespace = NAMESPACE, error = %e, "create non-exist namespace");
        }
    }
    let account = ServiceAccount {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    match accounts.create(&PostParams::default(), &account).await {
        Ok(_) => Ok(()),
        // Created by someone else meanwhile: read it back, as upstream.
        Err(e) if answered(&e, Status::is_already_exists) => accounts.get(name).await.map(drop),
        Err(e) => Err(e),
    }
}

/// Whether the API server answered `error` with a status `is` accepts.
fn answered(error: &kube::Error, is: fn(&Status) -> bool) -> bool {
    matches!(error, kube::Error::Api(status) if is(status))
}
