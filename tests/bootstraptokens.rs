//! Bootstrap tokens and node TTLs, end to end: the real `kcm-rs` binary
//! against kube-sim and against the testbed, set up with kubectl.
//!
//! - bootstrap-signer-controller and token-cleaner-controller (selected by
//!   kubeadm's aliases): `kube-public/cluster-info` gets the signature of
//!   each signing token, checked here as `kubeadm join` checks it, by
//!   computing the HMAC independently; an expired token Secret is deleted;
//!   a token expiring a few seconds after it is created is deleted once it
//!   expires, and its signature then removed; a token not for signing
//!   signs nothing.
//! - ttl-controller: every node carries `node.alpha.kubernetes.io/ttl`
//!   (0 s for a cluster under 100 nodes), put back when edited.
//!
//! The testbed's API server is shared by every test: the token Secrets
//! are named with ids of this run, and they and `cluster-info` (when this
//! test made it) are removed when the test ends.

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Secret};
use kube::Api;
use kube::api::ListParams;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::bootstrap::expected_signature;
use crate::common::{PATIENCE, on_both, start_with_flags};

/// kubeadm's spelling of the two bootstrap controllers.
const BOOTSTRAP_CONTROLLERS: &str = "--controllers=bootstrapsigner,tokencleaner";

/// The TTL controller alone.
const TTL_CONTROLLER: &str = "--controllers=ttl-controller";

/// Every test token's secret.
const TOKEN_SECRET: &str = "0123456789abcdef";

const TTL_ANNOTATION: &str = "node.alpha.kubernetes.io/ttl";

/// What `cluster-info` carries for `kubeadm join` to verify.
const KUBECONFIG: &str =
    "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: \"\"\n";

/// Six characters of `[a-z0-9]` no other run uses, ending in `tag`.
fn token_id(tag: char) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").subsec_nanos();
    format!("{:05x}{tag}", (nanos ^ std::process::id()) & 0xf_ffff)
}

/// A bootstrap token Secret as kubeadm writes it, with these extra data
/// (base64 in `data`, as the API server stores it).
fn token_secret(id: &str, extra: &[(&str, String)]) -> String {
    let mut data = BTreeMap::from([("token-id", id.to_owned()), ("token-secret", TOKEN_SECRET.to_owned())]);
    data.extend(extra.iter().cloned());
    let data: BTreeMap<&str, String> = data.into_iter().map(|(k, v)| (k, STANDARD.encode(v))).collect();
    serde_json::json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("bootstrap-token-{id}"), "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token", "data": data})
    .to_string()
}

/// An RFC 3339 time `seconds` from now.
fn in_seconds(seconds: i64) -> String {
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(seconds);
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Deletes what the test made in the shared namespaces when it drops.
struct Cleanup {
    kubeconfig: PathBuf,
    /// `kind name namespace` of each object to delete.
    objects: Vec<[String; 3]>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for [kind, name, ns] in &self.objects {
            let out = std::process::Command::new("kubectl")
                .args(["delete", kind, name, "-n", ns, "--ignore-not-found", "--wait=false"])
                .env("KUBECONFIG", &self.kubeconfig)
                .output();
            if !out.as_ref().is_ok_and(|o| o.status.success()) && !std::thread::panicking() {
                panic!("kubectl did not delete {kind} {ns}/{name}: {out:?}");
            }
        }
    }
}

on_both!(
    cluster_info_is_signed_by_each_signing_token_and_expired_tokens_are_deleted,
    every_node_carries_the_ttl_annotation
);

/// kubeadm's aliases select both controllers; the signing token's
/// signature is the one `kubeadm join` computes; the expired token goes at
/// once, the short-lived one when it expires (its signature with it), and
/// the token not for signing signs nothing.
async fn cluster_info_is_signed_by_each_signing_token_and_expired_tokens_are_deleted() {
    let env = start_with_flags(&[BOOTSTRAP_CONTROLLERS]).await;
    let (signing, short_lived, expired, not_signing) = (token_id('a'), token_id('b'), token_id('c'), token_id('d'));
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client.clone(), "kube-public");
    let mut cleanup = Cleanup { kubeconfig: env.kubeconfig.clone(), objects: Vec::new() };
    if config_maps.get_opt("cluster-info").await.expect("read").is_none() {
        cleanup.objects.push(["configmap".into(), "cluster-info".into(), "kube-public".into()]);
    }
    let cluster_info = BTreeMap::from([("kubeconfig", KUBECONFIG)]);
    let cluster_info = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"}, "data": cluster_info});
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &cluster_info.to_string()).await;
    let signs = ("usage-bootstrap-signing", "true".to_owned());
    let secrets = [
        token_secret(&signing, &[signs.clone(), ("expiration", in_seconds(3600))]),
        token_secret(&short_lived, &[signs.clone(), ("expiration", in_seconds(5))]),
        token_secret(&expired, &[signs.clone(), ("expiration", in_seconds(-3600))]),
        token_secret(&not_signing, &[("usage-bootstrap-signing", "false".to_owned())]),
    ];
    for (id, secret) in [&signing, &short_lived, &expired, &not_signing].into_iter().zip(&secrets) {
        cleanup.objects.push(["secret".into(), format!("bootstrap-token-{id}"), "kube-system".into()]);
        kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], secret).await;
    }

    let tokens: Api<Secret> = Api::namespaced(env.client.clone(), "kube-system");
    let signatures = || async {
        let cm = config_maps.get("cluster-info").await.map_err(|e| e.to_string())?;
        let data = cm.data.unwrap_or_default();
        let ours = |id: &String| data.get(&format!("jws-kubeconfig-{id}")).cloned();
        Ok::<_, String>([&signing, &short_lived, &expired, &not_signing].map(ours))
    };
    let signature = wait_for(&env.cluster, PATIENCE, "cluster-info signed by the signing token", || async {
        match signatures().await? {
            [Some(signature), ..] => Ok(signature),
            other => Err(format!("signatures {other:?}")),
        }
    })
    .await;
    assert_eq!(signature, expected_signature(KUBECONFIG, &signing, TOKEN_SECRET), "as kubeadm join verifies");

    wait_for(&env.cluster, PATIENCE, "the expired and the short-lived tokens deleted", || async {
        let names: Vec<String> = tokens
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter_map(|s| s.metadata.name)
            .collect();
        let gone = |id: &String| !names.contains(&format!("bootstrap-token-{id}"));
        if gone(&expired) && gone(&short_lived) { Ok(()) } else { Err(format!("token Secrets {names:?}")) }
    })
    .await;
    wait_for(&env.cluster, PATIENCE, "only the signing token's signature left", || async {
        match signatures().await? {
            [Some(_), None, None, None] => Ok(()),
            other => Err(format!("signatures {other:?}")),
        }
    })
    .await;
    let kept =
        kubectl_ok(&env.kubeconfig, &["get", "secret", "-n", "kube-system", &format!("bootstrap-token-{not_signing}")])
            .await;
    assert!(kept.contains(&not_signing), "a token without expiration is kept: {kept}");
}

/// Every node gets a TTL of 0 s (the cluster has fewer than 100 nodes);
/// one edited to 300 is put back.
async fn every_node_carries_the_ttl_annotation() {
    let env = start_with_flags(&[TTL_CONTROLLER]).await;
    let nodes: Api<Node> = Api::all(env.client.clone());
    let ttls = || async {
        let list = nodes.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let ttls: BTreeMap<String, Option<String>> = list
            .into_iter()
            .map(|n| {
                let ttl = n.metadata.annotations.unwrap_or_default().get(TTL_ANNOTATION).cloned();
                (n.metadata.name.unwrap_or_default(), ttl)
            })
            .collect();
        Ok::<_, String>(ttls)
    };
    let all_zero = || async {
        let ttls = ttls().await?;
        let zero = !ttls.is_empty() && ttls.values().all(|t| t.as_deref() == Some("0"));
        if zero { Ok(ttls) } else { Err(format!("TTLs {ttls:?}")) }
    };
    let annotated = wait_for(&env.cluster, PATIENCE, "every node's TTL 0", all_zero).await;
    let node = annotated.keys().next().expect("a node").clone();
    kubectl_ok(&env.kubeconfig, &["annotate", "node", &node, &format!("{TTL_ANNOTATION}=300"), "--overwrite"]).await;
    wait_for(&env.cluster, PATIENCE, "the edited TTL put back", all_zero).await;
}
