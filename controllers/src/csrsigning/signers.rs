//! The four built-in signers and what each accepts (upstream's
//! `signer.go` `getCSRVerificationFuncForSignerName` and
//! `pkg/apis/certificates/helpers.go` `ValidateKubeletServingCSR`,
//! `ValidateKubeletClientCSR`): a request a signer refuses gets upstream's
//! `Failed` condition with the message of [`Signer::validate`].

use std::collections::BTreeSet;

use super::request::Request;

/// The kubelet's serving certificates' signer.
pub const KUBELET_SERVING: &str = "kubernetes.io/kubelet-serving";
/// The kubelet's client certificates' signer.
pub const KUBE_APISERVER_CLIENT_KUBELET: &str = "kubernetes.io/kube-apiserver-client-kubelet";
/// API server client certificates' signer.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
/// The v1beta1 default signer.
pub const LEGACY_UNKNOWN: &str = "kubernetes.io/legacy-unknown";

/// One of the built-in signers kube-controller-manager runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Signer {
    /// `kubernetes.io/kubelet-serving`.
    KubeletServing,
    /// `kubernetes.io/kube-apiserver-client-kubelet`.
    KubeletClient,
    /// `kubernetes.io/kube-apiserver-client`.
    KubeApiServerClient,
    /// `kubernetes.io/legacy-unknown`.
    LegacyUnknown,
}

impl Signer {
    /// Every signer, in the order upstream starts them.
    pub const ALL: [Signer; 4] =
        [Signer::KubeletServing, Signer::KubeletClient, Signer::KubeApiServerClient, Signer::LegacyUnknown];

    /// Its `spec.signerName`.
    pub fn name(self) -> &'static str {
        match self {
            Signer::KubeletServing => KUBELET_SERVING,
            Signer::KubeletClient => KUBE_APISERVER_CLIENT_KUBELET,
            Signer::KubeApiServerClient => KUBE_APISERVER_CLIENT,
            Signer::LegacyUnknown => LEGACY_UNKNOWN,
        }
    }

    /// Its certificate controller's name (upstream's `New*CSRSigningController`).
    pub fn controller_name(self) -> &'static str {
        match self {
            Signer::KubeletServing => "csrsigning-kubelet-serving",
            Signer::KubeletClient => "csrsigning-kubelet-client",
            Signer::KubeApiServerClient => "csrsigning-kube-apiserver-client",
            Signer::LegacyUnknown => "csrsigning-legacy-unknown",
        }
    }

    /// Whether this signer issues `request` with `usages`; the error is the
    /// `Failed` condition's message.
    ///
    /// # Errors
    /// Upstream's message for the first check the request fails.
    pub fn validate(self, request: &Request, usages: &[String]) -> Result<(), String> {
        match self {
            Signer::KubeletServing => validate_kubelet_serving(request, usages),
            Signer::KubeletClient => validate_kubelet_client(request, usages),
            Signer::KubeApiServerClient => validate_api_server_client(usages),
            Signer::LegacyUnknown => Ok(()),
        }
    }
}

const ORGANIZATION_NOT_SYSTEM_NODES: &str = "subject organization is not system:nodes";
const COMMON_NAME_NOT_SYSTEM_NODE: &str = "subject common name does not begin with system:node:";
const EMAIL_SAN_NOT_ALLOWED: &str = "Email subjectAltNames are not allowed";
const URI_SAN_NOT_ALLOWED: &str = "URI subjectAltNames are not allowed";

/// Upstream's required usage sets: with and without `key encipherment`
/// (which only RSA keys use), the one with it named in the message.
fn usages_match(usages: &[String], required: &[&str]) -> Result<(), String> {
    let given: BTreeSet<&str> = usages.iter().map(String::as_str).collect();
    let with_rsa: BTreeSet<&str> = required.iter().copied().collect();
    let mut without_rsa = with_rsa.clone();
    without_rsa.remove("key encipherment");
    if given == with_rsa || given == without_rsa {
        return Ok(());
    }
    Err(format!("usages did not match [{}]", with_rsa.into_iter().collect::<Vec<_>>().join(" ")))
}

fn organization_is_system_nodes(request: &Request) -> Result<(), String> {
    if request.organizations != ["system:nodes"] {
        return Err(ORGANIZATION_NOT_SYSTEM_NODES.to_owned());
    }
    Ok(())
}

fn common_name_is_a_node(request: &Request) -> Result<(), String> {
    if !request.common_name.starts_with("system:node:") {
        return Err(COMMON_NAME_NOT_SYSTEM_NODE.to_owned());
    }
    Ok(())
}

/// Upstream `ValidateKubeletServingCSR`.
fn validate_kubelet_serving(request: &Request, usages: &[String]) -> Result<(), String> {
    organization_is_system_nodes(request)?;
    if request.dns_names.is_empty() && request.ip_addresses.is_empty() {
        return Err("DNS or IP subjectAltName is required".to_owned());
    }
    if !request.email_addresses.is_empty() {
        return Err(EMAIL_SAN_NOT_ALLOWED.to_owned());
    }
    if !request.uris.is_empty() {
        return Err(URI_SAN_NOT_ALLOWED.to_owned());
    }
    usages_match(usages, &["digital signature", "key encipherment", "server auth"])?;
    common_name_is_a_node(request)
}

/// Upstream `ValidateKubeletClientCSR`.
fn validate_kubelet_client(request: &Request, usages: &[String]) -> Result<(), String> {
    organization_is_system_nodes(request)?;
    if !request.dns_names.is_empty() {
        return Err("DNS subjectAltNames are not allowed".to_owned());
    }
    if !request.email_addresses.is_empty() {
        return Err(EMAIL_SAN_NOT_ALLOWED.to_owned());
    }
    if !request.ip_addresses.is_empty() {
        return Err("IP subjectAltNames are not allowed".to_owned());
    }
    if !request.uris.is_empty() {
        return Err(URI_SAN_NOT_ALLOWED.to_owned());
    }
    common_name_is_a_node(request)?;
    usages_match(usages, &["digital signature", "key encipherment", "client auth"])
}

/// Upstream `validAPIServerClientUsages`.
fn validate_api_server_client(usages: &[String]) -> Result<(), String> {
    let mut client_auth = false;
    for usage in usages {
        match usage.as_str() {
            "digital signature" | "key encipherment" => {}
            "client auth" => client_auth = true,
            other => return Err(format!("invalid usage for client certificate: {other}")),
        }
    }
    if !client_auth {
        return Err("missing required usage for client certificate: client auth".to_owned());
    }
    Ok(())
}
