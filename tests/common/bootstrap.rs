//! What a node joining the cluster does through the API, as `kubeadm
//! join` and a kubelet do it: bootstrap token Secrets, the bindings kubeadm
//! makes for their group, a client authenticating with a token, and a
//! kubelet's client certificate request. Used by the CSR tests and the
//! join test, on the testbed.

use std::path::PathBuf;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{CertificateSigningRequest, CertificateSigningRequestSpec};
use kube::api::ObjectMeta;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_sim::testing::kubectl_ok_with_stdin;

use super::Env;

/// The cluster-scoped objects a test makes on the shared testbed, deleted
/// (with kubectl) when it drops: at the test's end, or when it fails.
pub struct Made {
    /// The admin's kubeconfig.
    pub kubeconfig: PathBuf,
    /// `(kind, namespace, name)`, in creation order.
    pub objects: Vec<(&'static str, Option<&'static str>, String)>,
}

impl Drop for Made {
    fn drop(&mut self) {
        for (kind, namespace, name) in self.objects.iter().rev() {
            let mut args = vec!["delete", kind, name.as_str(), "--ignore-not-found", "--wait=false"];
            if let Some(ns) = namespace {
                args.extend(["-n", ns]);
            }
            let out = std::process::Command::new("kubectl").args(&args).env("KUBECONFIG", &self.kubeconfig).output();
            if !out.as_ref().is_ok_and(|o| o.status.success()) && !std::thread::panicking() {
                panic!("kubectl did not delete the shared testbed's {kind} {name}: {out:?}");
            }
        }
    }
}

/// `n` random characters of `[a-z0-9]`, as bootstrap token parts are.
pub fn token_part(n: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n).map(|_| char::from(CHARS[rand::random_range(0..CHARS.len())])).collect()
}

/// A bootstrap token Secret (`<id>.<secret>`) allowed to authenticate,
/// in `system:bootstrappers` and `extra_group` if any; its token.
pub async fn bootstrap_token(env: &Env, made: &mut Made, extra_group: Option<&str>) -> String {
    let (id, secret) = (token_part(6), token_part(16));
    let extra = extra_group.map(|g| format!("  auth-extra-groups: {g}\n")).unwrap_or_default();
    let name = format!("bootstrap-token-{id}");
    let manifest = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: kube-system\n\
         type: bootstrap.kubernetes.io/token\nstringData:\n  token-id: {id}\n  token-secret: {secret}\n  \
         usage-bootstrap-authentication: \"true\"\n{extra}"
    );
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest).await;
    made.objects.push(("secret", Some("kube-system"), name));
    format!("{id}.{secret}")
}

/// A ClusterRoleBinding `name` of `group` to `role`.
pub async fn bind_group(env: &Env, made: &mut Made, name: String, group: &str, role: &str) {
    let manifest = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {name}\n\
         roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {role}\n\
         subjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: {group}\n"
    );
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest).await;
    made.objects.push(("clusterrolebinding", None, name));
}

/// A client of the testbed authenticating with bootstrap `token`.
pub async fn token_client(env: &Env, token: &str) -> kube::Client {
    let mut kubeconfig = Kubeconfig::read_from(&env.kubeconfig).expect("the admin's kubeconfig");
    for named in &mut kubeconfig.auth_infos {
        named.auth_info = Some(serde_json::from_value(serde_json::json!({"token": token})).expect("token auth"));
    }
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.expect("config");
    kube::Client::try_from(config).expect("client")
}

/// A kubelet's client certificate request for node `node` (an ECDSA key:
/// no key encipherment), of `signer`, named `name`.
pub fn kubelet_client_request(name: &str, node: &str, signer: &str) -> CertificateSigningRequest {
    kubelet_client_request_with_key(name, node, signer).0
}

/// [`kubelet_client_request`], and its private key (PEM), as a kubelet
/// keeps it to use the certificate it gets.
pub fn kubelet_client_request_with_key(name: &str, node: &str, signer: &str) -> (CertificateSigningRequest, String) {
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, format!("system:node:{node}"));
    params.distinguished_name.push(rcgen::DnType::OrganizationName, "system:nodes");
    let key = rcgen::KeyPair::generate().expect("key");
    let pem = params.serialize_request(&key).expect("request").pem().expect("PEM");
    let csr = CertificateSigningRequest {
        metadata: ObjectMeta { name: Some(name.to_owned()), ..ObjectMeta::default() },
        spec: CertificateSigningRequestSpec {
            request: ByteString(pem.into_bytes()),
            signer_name: signer.to_owned(),
            usages: Some(vec!["digital signature".to_owned(), "client auth".to_owned()]),
            ..CertificateSigningRequestSpec::default()
        },
        ..CertificateSigningRequest::default()
    };
    (csr, key.serialize_pem())
}

/// The detached JWS `kubeadm join` checks `cluster-info` with, for the
/// token `id`/`secret`, computed without kcm-rs's code: base64url of the
/// protected header, two dots, base64url of HMAC-SHA256 over
/// `header "." base64url(content)`.
pub fn expected_signature(content: &str, id: &str, secret: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"HS256","kid":"{id}"}}"#));
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(content));
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    format!("{header}..{}", URL_SAFE_NO_PAD.encode(ring::hmac::sign(&key, signing_input.as_bytes()).as_ref()))
}
