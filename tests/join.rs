//! A node joins, end to end on the testbed, as `kubeadm join` and a
//! kubelet do it through the API, with the real `kcm-rs` binary running
//! the controllers a join needs (bootstrap signer, CSR approving and
//! signing, node IPAM) under `deploy/rbac.yaml`'s grants:
//!
//! 1. a bootstrap token Secret, as `kubeadm token create` writes it, and
//!    `kube-public/cluster-info`, as `kubeadm init` writes it: kcm-rs signs
//!    `cluster-info` with the token, and the signature verifies as
//!    `kubeadm join` verifies it (a detached HS256 JWS keyed by the token's
//!    secret, computed here independently);
//! 2. the kubelet's client certificate request, made with that token
//!    (whose group kubeadm binds to the node bootstrapper and to
//!    auto-approval): kcm-rs approves it and signs it with the cluster CA,
//!    and the certificate verifies against `ca.crt`;
//! 3. the kubelet, with that certificate, registers its Node (the API
//!    server's Node authorizer and NodeRestriction admission let it):
//!    kcm-rs gives it a pod CIDR; a second node gets a different one; the
//!    first node deleted, a third gets its CIDR again.
//!
//! kube-sim serves neither bootstrap token authentication nor
//! SubjectAccessReviews, so this runs on the testbed only.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::api::{Api, DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_sim::testing::{kubectl_ok_with_stdin, wait_for};
use serde_json::json;
use x509_parser::prelude::{FromDer, X509Certificate};

use crate::common::bootstrap::{
    Made, bind_group, bootstrap_token, expected_signature, kubelet_client_request_with_key, token_client,
};
use crate::common::{Backend, Env, PATIENCE, run_on, start_on_testbed, testbed};

/// The controllers a join needs, as kubeadm spells the bootstrap ones, and
/// node IPAM with two node CIDRs free: of the four /18s of the cluster
/// CIDR, the first two (where the testbed's own nodes' CIDRs are) are held
/// by the service range. With both taken, the only CIDR the third node can
/// get is one given back.
const FLAGS: &[&str] = &[
    "--controllers=bootstrapsigner,tokencleaner,csrapproving,csrsigning,nodeipam",
    "--allocate-node-cidrs",
    "--cluster-cidr=10.244.0.0/16",
    "--node-cidr-mask-size=18",
    "--service-cluster-ip-range=10.244.0.0/17",
];

const KUBELET_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";

mod a_node_joins_with_a_bootstrap_token_and_gets_its_certificate_and_pod_cidr {
    /// Named as `on_both!`'s testbed twins are, for `::testbed` filters.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn testbed() {
        super::run_on(super::Backend::Testbed, super::joins()).await;
    }
}

// === utils ===

/// `cluster-info` as `kubeadm init` writes it (the cluster's server and
/// CA in a kubeconfig), removed when the test ends: the testbed has none of
/// its own.
struct ClusterInfo {
    kubeconfig: std::path::PathBuf,
}

impl ClusterInfo {
    async fn write(env: &Env, kubeconfig: &str) -> ClusterInfo {
        let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cluster-info", "namespace": "kube-public"}, "data": {"kubeconfig": kubeconfig}});
        kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest.to_string()).await;
        ClusterInfo { kubeconfig: env.kubeconfig.clone() }
    }
}

impl Drop for ClusterInfo {
    fn drop(&mut self) {
        let args = ["delete", "configmap", "cluster-info", "-n", "kube-public", "--ignore-not-found"];
        let out = std::process::Command::new("kubectl").args(args).env("KUBECONFIG", &self.kubeconfig).output();
        if !out.as_ref().is_ok_and(|o| o.status.success()) && !std::thread::panicking() {
            panic!("kubectl did not delete kube-public/cluster-info: {out:?}");
        }
    }
}

/// A client of the testbed authenticating with a client certificate and
/// key (PEM), as a kubelet does once its request is signed.
async fn certificate_client(env: &Env, cert: &[u8], key: &str) -> kube::Client {
    let mut kubeconfig = Kubeconfig::read_from(&env.kubeconfig).expect("the admin's kubeconfig");
    let auth = json!({"client-certificate-data": STANDARD.encode(cert), "client-key-data": STANDARD.encode(key)});
    for named in &mut kubeconfig.auth_infos {
        named.auth_info = Some(serde_json::from_value(auth.clone()).expect("certificate auth"));
    }
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.expect("config");
    kube::Client::try_from(config).expect("client")
}

/// Registers Node `name` as its kubelet: with the node's own credentials.
async fn register(client: &kube::Client, name: &str) {
    let node: Node = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}))
    .expect("a node");
    Api::<Node>::all(client.clone()).create(&PostParams::default(), &node).await.expect("node registered");
}

/// Waits until Node `name` has a pod CIDR, and returns it (as both
/// `podCIDR` and the one entry of `podCIDRs`).
async fn pod_cidr(env: &Env, name: &str) -> String {
    let nodes: Api<Node> = Api::all(env.client.clone());
    wait_for(&env.cluster, PATIENCE, &format!("{name} given a pod CIDR"), || async {
        let spec = nodes.get(name).await.map_err(|e| e.to_string())?.spec.unwrap_or_default();
        match (spec.pod_cidr, spec.pod_cidrs.unwrap_or_default().as_slice()) {
            (Some(cidr), [only]) if *only == cidr => Ok(cidr),
            seen => Err(format!("{seen:?}")),
        }
    })
    .await
}

/// Which kubelet identity a join makes: its node, its request and the
/// certificate it gets.
struct Kubelet {
    node: String,
    certificate: Vec<u8>,
    key: String,
}

/// A kubelet bootstrapping with `token`: its client certificate request,
/// approved and signed by kcm-rs.
async fn bootstrap(env: &Env, made: &mut Made, token: &str, node: &str) -> Kubelet {
    let name = format!("{node}-client");
    let (csr, key) = kubelet_client_request_with_key(&name, node, KUBELET_CLIENT_SIGNER);
    let as_bootstrapper: Api<CertificateSigningRequest> = Api::all(token_client(env, token).await);
    as_bootstrapper.create(&PostParams::default(), &csr).await.expect("request made with the bootstrap token");
    made.objects.push(("csr", None, name.clone()));
    let certificate = wait_for(&env.cluster, PATIENCE, &format!("{name} approved and signed"), || async {
        let status = as_bootstrapper.get(&name).await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        let approved = status.conditions.unwrap_or_default().iter().any(|c| c.type_ == "Approved");
        match status.certificate {
            Some(cert) if approved && !cert.0.is_empty() => Ok(cert.0),
            other => Err(format!("approved: {approved}, certificate: {}", other.is_some())),
        }
    })
    .await;
    Kubelet { node: node.to_owned(), certificate, key }
}

// === the test ===

async fn joins() {
    let env = start_on_testbed(FLAGS).await;
    let mut made = Made { kubeconfig: env.kubeconfig.clone(), objects: Vec::new() };
    let suffix = env.ns.clone();

    // 1. The token, its group bound as kubeadm binds system:bootstrappers:kubeadm:default-node-token.
    let group = format!("system:bootstrappers:{suffix}");
    let token = bootstrap_token(&env, &mut made, Some(&group)).await;
    let (id, secret) = token.split_once('.').expect("<id>.<secret>");
    let secret_name = format!("bootstrap-token-{id}");
    let signing = json!({"data": {"usage-bootstrap-signing": STANDARD.encode("true")}});
    kubectl_ok_with_stdin(
        &env.kubeconfig,
        &["patch", "secret", &secret_name, "-n", "kube-system", "--patch-file", "/dev/stdin"],
        &signing.to_string(),
    )
    .await;
    bind_group(&env, &mut made, format!("{suffix}-kubelet-bootstrap"), &group, "system:node-bootstrapper").await;
    let autoapprove = "system:certificates.k8s.io:certificatesigningrequests:nodeclient";
    bind_group(&env, &mut made, format!("{suffix}-node-autoapprove-bootstrap"), &group, autoapprove).await;

    // `cluster-info` carries the token's signature, as `kubeadm join` checks it.
    let bed = testbed::shared().await;
    let ca_pem = std::fs::read(bed.pki.join("ca.crt")).expect("ca.crt");
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: {}\n    \
         server: https://127.0.0.1:6443\n  name: \"\"\ncontexts: null\ncurrent-context: \"\"\npreferences: {{}}\n\
         users: null\n",
        STANDARD.encode(&ca_pem)
    );
    let _cluster_info = ClusterInfo::write(&env, &kubeconfig).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client.clone(), "kube-public");
    let key = format!("jws-kubeconfig-{id}");
    let signature = wait_for(&env.cluster, PATIENCE, "cluster-info signed with the token", || async {
        let data = config_maps.get("cluster-info").await.map_err(|e| e.to_string())?.data.unwrap_or_default();
        data.get(&key).cloned().ok_or_else(|| format!("no {key} in {:?}", data.keys().collect::<Vec<_>>()))
    })
    .await;
    assert_eq!(signature, expected_signature(&kubeconfig, id, secret), "the JWS kubeadm join verifies");

    // 2. The kubelet's client certificate: approved, signed by the cluster CA.
    let first = bootstrap(&env, &mut made, &token, &format!("{suffix}-join-a")).await;
    let ca_der = pem::parse(&ca_pem).expect("PEM").into_contents();
    let (_, ca) = X509Certificate::from_der(&ca_der).expect("the CA");
    let cert_der = pem::parse(&first.certificate).expect("a PEM certificate").into_contents();
    let (_, cert) = X509Certificate::from_der(&cert_der).expect("a certificate");
    cert.verify_signature(Some(ca.public_key())).expect("signed by the cluster CA");
    assert_eq!(cert.subject().to_string(), format!("O=system:nodes, CN=system:node:{}", first.node));

    // 3. The kubelet registers its Node with that certificate: it gets a pod CIDR.
    let as_first = certificate_client(&env, &first.certificate, &first.key).await;
    register(&as_first, &first.node).await;
    made.objects.push(("node", None, first.node.clone()));
    let first_cidr = pod_cidr(&env, &first.node).await;

    // A second node joins with the same token: a different CIDR.
    let second = bootstrap(&env, &mut made, &token, &format!("{suffix}-join-b")).await;
    register(&certificate_client(&env, &second.certificate, &second.key).await, &second.node).await;
    made.objects.push(("node", None, second.node.clone()));
    let second_cidr = pod_cidr(&env, &second.node).await;
    assert_ne!(first_cidr, second_cidr, "two nodes, two pod CIDRs");

    // The first node leaves: the next node to join gets its CIDR, the only one free.
    Api::<Node>::all(env.client.clone()).delete(&first.node, &DeleteParams::default()).await.expect("node deleted");
    let third = bootstrap(&env, &mut made, &token, &format!("{suffix}-join-c")).await;
    register(&certificate_client(&env, &third.certificate, &third.key).await, &third.node).await;
    made.objects.push(("node", None, third.node.clone()));
    assert_eq!(pod_cidr(&env, &third.node).await, first_cidr, "the deleted node's CIDR is used again");
}
