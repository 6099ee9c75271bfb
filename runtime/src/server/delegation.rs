//! Building [`Access::Delegated`] from its settings at start-up, as
//! upstream's `DelegatingAuthenticationOptions` and
//! `DelegatingAuthorizationOptions` apply themselves with
//! kube-controller-manager's `RemoteKubeConfigFileOptional`:
//!
//! - each kubeconfig is the flag's file, else the in-cluster
//!   configuration, else none (no token reviews; no access reviews, so
//!   only always-allowed paths and groups pass);
//! - a CA not given by its flag is looked up (unless
//!   `--authentication-skip-lookup`) in the `kube-system/
//!   extension-apiserver-authentication` ConfigMap the API server
//!   publishes: `client-ca-file`, and `requestheader-client-ca-file` with
//!   the `requestheader-*` names and headers beside it. A failed
//!   request-header lookup stops start-up unless
//!   `--authentication-tolerate-lookup-failure`; a ConfigMap that does not
//!   exist is no failure.
//!
//! Files and the ConfigMap are read once, at start (upstream reloads
//! them when they change).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::authn::{Authenticator, RequestHeader, TokenReviewer};
use super::authz::{AccessReviewer, Authorizer, PathRules};
use super::guard::{Access, Delegation};
use super::x509::ClientCa;
use super::{Error, Result};

/// The ConfigMap the API server publishes its client CAs in.
const AUTHENTICATION_CONFIGMAP: (&str, &str) = ("kube-system", "extension-apiserver-authentication");

/// The request-header flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestHeaderSettings {
    /// `--requestheader-client-ca-file`.
    pub client_ca_file: Option<PathBuf>,
    /// `--requestheader-allowed-names`.
    pub allowed_names: Vec<String>,
    /// `--requestheader-username-headers`.
    pub username_headers: Vec<String>,
    /// `--requestheader-uid-headers`.
    pub uid_headers: Vec<String>,
    /// `--requestheader-group-headers`.
    pub group_headers: Vec<String>,
    /// `--requestheader-extra-headers-prefix`.
    pub extra_headers_prefixes: Vec<String>,
}

/// The authentication and authorization flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelegationSettings {
    /// `--authentication-kubeconfig`.
    pub authentication_kubeconfig: Option<PathBuf>,
    /// `--authentication-skip-lookup`.
    pub skip_lookup: bool,
    /// `--authentication-tolerate-lookup-failure`.
    pub tolerate_lookup_failure: bool,
    /// `--authentication-token-webhook-cache-ttl`.
    pub token_cache_ttl: Duration,
    /// `--client-ca-file`.
    pub client_ca_file: Option<PathBuf>,
    /// `--requestheader-*`.
    pub request_header: RequestHeaderSettings,
    /// `--authorization-kubeconfig`.
    pub authorization_kubeconfig: Option<PathBuf>,
    /// `--authorization-always-allow-paths`.
    pub always_allow_paths: Vec<String>,
    /// Groups allowed everything (upstream's `AlwaysAllowGroups`).
    pub always_allow_groups: Vec<String>,
    /// `--authorization-webhook-cache-authorized-ttl`.
    pub authorized_ttl: Duration,
    /// `--authorization-webhook-cache-unauthorized-ttl`.
    pub unauthorized_ttl: Duration,
}

/// Delegated access as `settings` describe it.
///
/// # Errors
///
/// A CA file or kubeconfig that cannot be read, a bad always-allowed
/// path, a failed lookup not tolerated: each naming its flag.
pub async fn delegated(settings: &DelegationSettings) -> Result<Access> {
    let always_allow_paths = PathRules::new(&settings.always_allow_paths)
        .map_err(|reason| Error::Flag { flag: "authorization-always-allow-paths", reason })?;
    let authn_client = client("authentication-kubeconfig", settings.authentication_kubeconfig.as_deref()).await?;
    let authz_client = client("authorization-kubeconfig", settings.authorization_kubeconfig.as_deref()).await?;
    if authz_client.is_none() {
        tracing::warn!(
            "No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work."
        );
    }
    let header = &settings.request_header;
    let wants_lookup = settings.client_ca_file.is_none() || header.client_ca_file.is_none();
    let published = match (&authn_client, settings.skip_lookup || !wants_lookup) {
        (_, true) => Ok(None),
        (None, false) => {
            tracing::warn!(
                "No authentication-kubeconfig provided in order to lookup client-ca-file and \
                 requestheader-client-ca-file in configmap/{} in {}, so client certificate authentication won't work.",
                AUTHENTICATION_CONFIGMAP.1,
                AUTHENTICATION_CONFIGMAP.0
            );
            Ok(None)
        }
        (Some(client), false) => Api::<ConfigMap>::namespaced(client.clone(), AUTHENTICATION_CONFIGMAP.0)
            .get_opt(AUTHENTICATION_CONFIGMAP.1)
            .await
            .map(|cm| cm.and_then(|cm| cm.data)),
    };

    let client_ca = match &settings.client_ca_file {
        Some(path) => Some(ca_file("client-ca-file", path)?),
        None => match &published {
            Ok(Some(data)) => data.get("client-ca-file").and_then(|pem| match ClientCa::from_pem(pem.as_bytes()) {
                Ok(ca) => Some(ca),
                Err(reason) => {
                    tracing::warn!(%reason, "ignoring client-ca-file of configmap/extension-apiserver-authentication");
                    None
                }
            }),
            _ => None,
        },
    };
    let request_header = match &header.client_ca_file {
        Some(path) => Some(RequestHeader {
            ca: ca_file("requestheader-client-ca-file", path)?,
            allowed_names: header.allowed_names.clone(),
            username_headers: header.username_headers.clone(),
            uid_headers: header.uid_headers.clone(),
            group_headers: header.group_headers.clone(),
            extra_headers_prefixes: header.extra_headers_prefixes.clone(),
        }),
        None => match published.map_err(|e| e.to_string()).and_then(|data| published_request_header(data.as_ref())) {
            Ok(found) => found,
            Err(reason) if settings.tolerate_lookup_failure => {
                tracing::warn!(%reason, "Error looking up in-cluster authentication configuration");
                tracing::warn!(
                    "Continuing without authentication configuration. This may treat all requests as anonymous."
                );
                tracing::warn!(
                    "To require authentication configuration lookup to succeed, set \
                     --authentication-tolerate-lookup-failure=false"
                );
                None
            }
            Err(reason) => return Err(Error::Lookup(reason)),
        },
    };

    let authenticator = Authenticator {
        request_header,
        client_ca,
        tokens: authn_client.map(|c| TokenReviewer::new(c, settings.token_cache_ttl)),
    };
    let authorizer = Authorizer {
        always_allow_groups: settings.always_allow_groups.clone(),
        always_allow_paths,
        reviews: authz_client.map(|c| AccessReviewer::new(c, settings.authorized_ttl, settings.unauthorized_ttl)),
    };
    Ok(Access::Delegated(Arc::new(Delegation { authenticator, authorizer })))
}

/// The request-header authentication the ConfigMap's data describes
/// (none without its CA).
fn published_request_header(
    data: Option<&std::collections::BTreeMap<String, String>>,
) -> std::result::Result<Option<RequestHeader>, String> {
    let Some(data) = data else { return Ok(None) };
    let Some(pem) = data.get("requestheader-client-ca-file").filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let list = |key: &str| -> std::result::Result<Vec<String>, String> {
        match data.get(key).map(String::as_str) {
            None | Some("") => Ok(Vec::new()),
            Some(json) => serde_json::from_str(json).map_err(|e| format!("{key}: {e}")),
        }
    };
    Ok(Some(RequestHeader {
        ca: ClientCa::from_pem(pem.as_bytes()).map_err(|e| format!("requestheader-client-ca-file: {e}"))?,
        allowed_names: list("requestheader-allowed-names")?,
        username_headers: list("requestheader-username-headers")?,
        uid_headers: list("requestheader-uid-headers")?,
        group_headers: list("requestheader-group-headers")?,
        extra_headers_prefixes: list("requestheader-extra-headers-prefix")?,
    }))
}

fn ca_file(flag: &'static str, path: &Path) -> Result<ClientCa> {
    let pem = std::fs::read(path).map_err(|e| Error::CaFile { flag, path: path.to_owned(), reason: e.to_string() })?;
    ClientCa::from_pem(&pem).map_err(|reason| Error::CaFile { flag, path: path.to_owned(), reason })
}

/// A client for `--<flag>`'s kubeconfig, else the in-cluster
/// configuration, else none.
async fn client(flag: &'static str, path: Option<&Path>) -> Result<Option<kube::Client>> {
    let config = match path {
        Some(path) => {
            let kubeconfig = |source| Error::Kubeconfig { flag, path: path.to_owned(), source };
            let file = Kubeconfig::read_from(path).map_err(kubeconfig)?;
            kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default()).await.map_err(kubeconfig)?
        }
        None => match kube::Config::incluster() {
            Ok(config) => config,
            Err(error) => {
                let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
                    && std::env::var_os("KUBERNETES_SERVICE_PORT").is_some();
                if in_cluster {
                    tracing::warn!(%error, "failed to read in-cluster kubeconfig for --{flag}");
                }
                return Ok(None);
            }
        },
    };
    kube::Client::try_from(config).map(Some).map_err(|source| Error::Client { flag, source })
}

#[cfg(test)]
mod tests {
    use super::super::x509::tests::signed_client;
    use super::*;

    #[test]
    fn the_published_request_header_configuration_is_read() {
        let (ca, _) = signed_client("front-proxy-client", &[]);
        let data: std::collections::BTreeMap<String, String> = [
            ("requestheader-client-ca-file", ca.as_str()),
            ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
            ("requestheader-username-headers", r#"["X-Remote-User"]"#),
            ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
            ("requestheader-extra-headers-prefix", r#"["X-Remote-Extra-"]"#),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let found = published_request_header(Some(&data)).unwrap().unwrap();
        assert_eq!(found.allowed_names, ["front-proxy-client"]);
        assert_eq!(found.username_headers, ["X-Remote-User"]);
        assert!(found.uid_headers.is_empty());
        assert!(published_request_header(None).unwrap().is_none());
        let mut bad = data.clone();
        bad.insert("requestheader-group-headers".into(), "X-Remote-Group".into());
        assert!(published_request_header(Some(&bad)).is_err());
    }

    #[tokio::test]
    async fn a_bad_ca_file_names_its_flag() {
        let settings = DelegationSettings {
            client_ca_file: Some("/nonexistent/ca.crt".into()),
            skip_lookup: true,
            ..DelegationSettings::default()
        };
        let error = delegated(&settings).await.unwrap_err().to_string();
        assert!(error.contains("--client-ca-file") && error.contains("/nonexistent/ca.crt"), "{error}");
    }
}
