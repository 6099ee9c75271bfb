//! CertificateSigningRequests signed end to end, on the testbed's real
//! kube-apiserver (kube-sim serves no `certificates.k8s.io`): the real
//! `kcm-rs` binary, only `certificatesigningrequest-signing-controller`
//! selected, with the testbed's `pki/ca.crt` and `ca.key` as
//! `--cluster-signing-{cert,key}-file` (as kubeadm passes them). CSRs are
//! made with rcgen and approved with `kubectl certificate approve` (the
//! `/approval` subresource).
//!
//! A `kubernetes.io/kube-apiserver-client` CSR asking for an hour gets a
//! certificate the cluster CA signed, for its subject and usages, lasting
//! an hour (from five minutes back: a TTL under eight hours is not cut by
//! the backdate), with which the API server authenticates the user and
//! group the request named; an approved CSR of a signer kcm-rs does not run is left
//! alone; a `kubernetes.io/kubelet-serving` CSR that is not a node's gets
//! upstream's `Failed` condition. CSRs are cluster-scoped: their names
//! carry the test's namespace, and they are deleted at the end.

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{CertificateSigningRequest, CertificateSigningRequestSpec};
use kube::Api;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube_sim::testing::{kubectl_ok, wait_for};
use x509_parser::prelude::{FromDer, X509Certificate};

use crate::common::{PATIENCE, testbed};

/// The controller alone, as upstream names it.
const CONTROLLERS: &str = "--controllers=certificatesigningrequest-signing-controller";

/// A CSR named `name` for `signer`, of a fresh key with subject
/// `CN=cn, O=org`, and that key (PEM).
fn csr(
    name: &str,
    signer: &str,
    cn: &str,
    org: &str,
    usages: &[&str],
    seconds: Option<i32>,
) -> (CertificateSigningRequest, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(rcgen::DnType::CommonName, cn);
    params.distinguished_name.push(rcgen::DnType::OrganizationName, org);
    let key = rcgen::KeyPair::generate().expect("key");
    let pem = params.serialize_request(&key).expect("csr").pem().expect("pem");
    let csr = CertificateSigningRequest {
        metadata: ObjectMeta { name: Some(name.to_owned()), ..Default::default() },
        spec: CertificateSigningRequestSpec {
            signer_name: signer.to_owned(),
            request: ByteString(pem.into_bytes()),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            expiration_seconds: seconds,
            ..Default::default()
        },
        status: None,
    };
    (csr, key.serialize_pem())
}

/// Who the API server says `cert` and `key` authenticate as
/// (`kubectl auth whoami`): the user name, then the groups.
async fn whoami(env: &crate::common::Env, ca: &std::path::Path, cert: &[u8], key: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert_file, key_file) = (dir.path().join("user.crt"), dir.path().join("user.key"));
    std::fs::write(&cert_file, cert).expect("certificate written");
    std::fs::write(&key_file, key).expect("key written");
    let server =
        kubectl_ok(&env.kubeconfig, &["config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"])
            .await;
    let kubeconfig = dir.path().join("user.conf");
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: testbed\n  cluster:\n    server: {server}\n    \
         certificate-authority: {}\nusers:\n- name: user\n  user:\n    client-certificate: {}\n    client-key: {}\n\
         contexts:\n- name: user\n  context:\n    cluster: testbed\n    user: user\ncurrent-context: user\n",
        ca.display(),
        cert_file.display(),
        key_file.display()
    );
    std::fs::write(&kubeconfig, config).expect("kubeconfig written");
    let jsonpath = "jsonpath={.status.userInfo.username} {.status.userInfo.groups}";
    kubectl_ok(&kubeconfig, &["auth", "whoami", "-o", jsonpath]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_csrs_of_its_signers_are_signed_by_the_cluster_ca_and_refused_ones_failed() {
    let env = crate::common::start_on_testbed(&[CONTROLLERS]).await;
    let csrs: Api<CertificateSigningRequest> = Api::all(env.client.clone());
    let ns = &env.ns;
    let (user, other, node) = (format!("{ns}-user"), format!("{ns}-other"), format!("{ns}-not-a-node"));
    let made = [
        csr(&other, "example.com/e2e", "e2e", "e2e", &["client auth"], None),
        csr(&node, "kubernetes.io/kubelet-serving", "e2e", "e2e", &["digital signature", "server auth"], None),
        csr(&user, "kubernetes.io/kube-apiserver-client", "e2e-user", "e2e-group", &["client auth"], Some(3600)),
    ];
    for (csr, _) in &made {
        csrs.create(&PostParams::default(), csr).await.expect("CSR created");
    }
    kubectl_ok(&env.kubeconfig, &["certificate", "approve", &other, &node, &user]).await;

    let signed = wait_for(&env.cluster, PATIENCE, "the client CSR signed", || async {
        let got = csrs.get(&user).await.map_err(|e| e.to_string())?;
        got.status.and_then(|s| s.certificate).filter(|c| !c.0.is_empty()).ok_or("no certificate yet".to_owned())
    })
    .await;
    let failed = wait_for(&env.cluster, PATIENCE, "the kubelet-serving CSR failed", || async {
        let got = csrs.get(&node).await.map_err(|e| e.to_string())?;
        let conditions = got.status.and_then(|s| s.conditions).unwrap_or_default();
        conditions.into_iter().find(|c| c.type_ == "Failed").ok_or("no Failed condition yet".to_owned())
    })
    .await;

    // Signed by the cluster CA, for the request's subject and usages, for an hour.
    let ca_file = testbed::shared().await.pki.join("ca.crt");
    let ca_pem = std::fs::read(&ca_file).expect("ca.crt");
    let ca_der = pem::parse(&ca_pem).expect("PEM").into_contents();
    let (_, ca) = X509Certificate::from_der(&ca_der).expect("the CA");
    let cert_der = pem::parse(&signed.0).expect("a PEM certificate").into_contents();
    let (_, cert) = X509Certificate::from_der(&cert_der).expect("a certificate");
    cert.verify_signature(Some(ca.public_key())).expect("signed by ca.key");
    assert_eq!(cert.issuer().as_raw(), ca.subject().as_raw());
    assert_eq!(cert.subject().to_string(), "O=e2e-group, CN=e2e-user", "requested CN first, written in Go's order");
    let usages = cert.extended_key_usage().expect("ok").expect("extended key usage").value;
    assert!(usages.client_auth && !usages.server_auth, "{usages:?}");
    assert!(!cert.basic_constraints().expect("ok").expect("basic constraints").value.ca);
    let lifetime = cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
    assert_eq!(lifetime, 3600 + 300, "an hour as asked, from five minutes back");
    // The API server takes it: the user and group the request named.
    let who = whoami(&env, &ca_file, &signed.0, &made[2].1).await;
    assert_eq!(who.trim(), r#"e2e-user ["e2e-group","system:authenticated"]"#);

    // The kubelet-serving CSR is not a node's: upstream's condition.
    assert_eq!(failed.status, "True");
    assert_eq!(failed.reason.as_deref(), Some("SignerValidationFailure"));
    assert_eq!(failed.message.as_deref(), Some("subject organization is not system:nodes"));
    let refused = csrs.get(&node).await.expect("the refused CSR");
    assert!(refused.status.and_then(|s| s.certificate).is_none(), "a refused CSR gets no certificate");

    // Another signer's CSR, approved before the two above were handled, is left alone.
    let foreign = csrs.get(&other).await.expect("the foreign CSR").status.unwrap_or_default();
    assert!(foreign.certificate.is_none(), "another signer's CSR is not signed");
    assert!(foreign.conditions.unwrap_or_default().iter().all(|c| c.type_ == "Approved"), "nor failed");

    for name in [&user, &other, &node] {
        csrs.delete(name, &DeleteParams::default()).await.expect("CSR deleted");
    }
}
