//! CertificateSigningRequests, end to end on the testbed: the real
//! `kcm-rs` binary (only the CSR approving controller and the CSR cleaner
//! selected) under `deploy/rbac.yaml`'s grants. kube-sim serves neither
//! `certificates.k8s.io` nor SubjectAccessReviews, so these run on the
//! testbed only.
//!
//! The approver: two bootstrap tokens, as kubeadm makes them (a
//! `bootstrap.kubernetes.io/token` Secret in `kube-system`), both in
//! `system:bootstrappers`, which may create requests
//! (`system:node-bootstrapper`, as kubeadm's `kubeadm:kubelet-bootstrap`
//! binding); only the first's extra group may have them approved
//! (`system:certificates.k8s.io:certificatesigningrequests:nodeclient`, as
//! kubeadm's `kubeadm:node-autoapprove-bootstrap` binds its token group).
//! A kubelet client request made with the first token is approved with
//! upstream's condition; the same request made with the second stays
//! pending (its review refused, the key retried with backoff: seen as a
//! `certificate` workqueue retry); a request of another signer is left
//! alone.
//!
//! The cleaner passes once its cache syncs, then hourly, so its requests
//! are in place before the daemon starts (set up with kcm-rs stopped,
//! then started). A request's `creationTimestamp` cannot be set, but a
//! condition's `lastUpdateTime` can: one denied two hours ago is deleted,
//! one denied half an hour ago kept; an approved one issued a certificate
//! that expired in 2017 is deleted. The pending and approved-unissued ages
//! are the core's tables' (`kcm_controllers::csrcleaner`).

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, PostParams};
use kube_sim::testing::wait_for;

use crate::common::bootstrap::{Made, bind_group, bootstrap_token, kubelet_client_request, token_client};
use crate::common::{Backend, Env, PATIENCE, run_on, start_on_testbed};

/// The two controllers, as upstream names them.
const CONTROLLERS: &str =
    "--controllers=certificatesigningrequest-approving-controller,certificatesigningrequest-cleaner-controller";

const KUBELET_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";
const OTHER_SIGNER: &str = "example.com/e2e";

mod kubelet_client_requests_are_approved_and_old_requests_cleaned {
    /// Named as `on_both!`'s testbed twins are, for `::testbed` filters.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn testbed() {
        super::run_on(super::Backend::Testbed, super::approved_and_cleaned()).await;
    }
}

// === utils ===

/// Creates `csr` as `client`'s user; it is deleted when `made` drops.
async fn create(client: &kube::Client, made: &mut Made, csr: &CertificateSigningRequest) {
    let api: Api<CertificateSigningRequest> = Api::all(client.clone());
    api.create(&PostParams::default(), csr).await.expect("request created");
    made.objects.push(("csr", None, csr.metadata.name.clone().expect("named")));
}

/// A condition of `type_`, last updated `age` ago.
fn condition(type_: &str, age: SignedDuration) -> CertificateSigningRequestCondition {
    let at = Time(Timestamp::now() - age);
    CertificateSigningRequestCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        reason: Some("E2E".to_owned()),
        last_update_time: Some(at.clone()),
        last_transition_time: Some(at),
        ..CertificateSigningRequestCondition::default()
    }
}

/// Writes `conditions` through `/approval`, and then `certificate`
/// through `/status`, as the admin.
async fn decide(
    env: &Env,
    name: &str,
    conditions: Vec<CertificateSigningRequestCondition>,
    certificate: Option<String>,
) {
    let api: Api<CertificateSigningRequest> = Api::all(env.client.clone());
    let mut csr = api.get(name).await.expect("request");
    csr.status = Some(CertificateSigningRequestStatus { conditions: Some(conditions), certificate: None });
    let mut csr = api.replace_subresource("approval", name, &PostParams::default(), &csr).await.expect("decided");
    if let Some(pem) = certificate {
        csr.status.get_or_insert_default().certificate = Some(ByteString(pem.into_bytes()));
        api.replace_subresource("status", name, &PostParams::default(), &csr).await.expect("issued");
    }
}

/// A self-signed certificate that expired on 2017-10-03.
fn expired_certificate() -> String {
    let mut params = rcgen::CertificateParams::new(vec!["expired".to_owned()]).expect("params");
    params.not_before = rcgen::date_time_ymd(2017, 10, 2);
    params.not_after = rcgen::date_time_ymd(2017, 10, 3);
    let key = rcgen::KeyPair::generate().expect("key");
    params.self_signed(&key).expect("signed").pem()
}

/// `workqueue_retries_total{name="certificate"}` on the daemon.
async fn certificate_queue_retries(env: &Env) -> f64 {
    let (_, body) = env.scrape("/metrics").await;
    body.lines()
        .find_map(|l| l.strip_prefix("workqueue_retries_total{name=\"certificate\"} "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

fn conditions(csr: &CertificateSigningRequest) -> Vec<CertificateSigningRequestCondition> {
    csr.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default()
}

// === the test ===

async fn approved_and_cleaned() {
    let mut env = start_on_testbed(&[CONTROLLERS]).await;
    env.daemon.kill().await.expect("kcm-rs stopped");
    let ns = env.ns.clone();
    let mut made = Made { kubeconfig: env.kubeconfig.clone(), objects: Vec::new() };

    let approving_group = format!("system:bootstrappers:{ns}");
    let approved_token = bootstrap_token(&env, &mut made, Some(&approving_group)).await;
    let refused_token = bootstrap_token(&env, &mut made, None).await;
    bind_group(&env, &mut made, format!("{ns}-kubelet-bootstrap"), "system:bootstrappers", "system:node-bootstrapper")
        .await;
    let nodeclient = "system:certificates.k8s.io:certificatesigningrequests:nodeclient";
    bind_group(&env, &mut made, format!("{ns}-node-autoapprove-bootstrap"), &approving_group, nodeclient).await;

    let bootstrapper = token_client(&env, &approved_token).await;
    let refused = token_client(&env, &refused_token).await;
    let (approved_name, refused_name, other_name) =
        (format!("{ns}-approved"), format!("{ns}-refused"), format!("{ns}-other"));
    let node = format!("{ns}-node");
    // Each create waits for the API server to see the new bindings.
    for (client, name, signer) in [
        (&bootstrapper, &approved_name, KUBELET_CLIENT_SIGNER),
        (&refused, &refused_name, KUBELET_CLIENT_SIGNER),
        (&bootstrapper, &other_name, OTHER_SIGNER),
    ] {
        let csr = kubelet_client_request(name, &node, signer);
        wait_for(&env.cluster, PATIENCE, "the bootstrap token creates a request", || async {
            Api::<CertificateSigningRequest>::all(client.clone())
                .create(&PostParams::default(), &csr)
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        made.objects.push(("csr", None, name.clone()));
    }

    let old = SignedDuration::from_hours(2);
    let recent = SignedDuration::from_mins(30);
    let (denied_old, denied_recent, expired) =
        (format!("{ns}-denied-old"), format!("{ns}-denied-recent"), format!("{ns}-expired"));
    for name in [&denied_old, &denied_recent, &expired] {
        create(&env.client, &mut made, &kubelet_client_request(name, &node, OTHER_SIGNER)).await;
    }
    decide(&env, &denied_old, vec![condition("Denied", old)], None).await;
    decide(&env, &denied_recent, vec![condition("Denied", recent)], None).await;
    decide(&env, &expired, vec![condition("Approved", recent)], Some(expired_certificate())).await;

    env.daemon = env.spawn_on(env.port, &[CONTROLLERS]);
    let csrs: Api<CertificateSigningRequest> = Api::all(env.client.clone());
    wait_for(
        &env.cluster,
        PATIENCE,
        "the bootstrap request approved, the old ones deleted, a refusal retried",
        || async {
            let approved = csrs.get(&approved_name).await.map_err(|e| e.to_string())?;
            if conditions(&approved).is_empty() {
                return Err("not approved yet".to_owned());
            }
            for gone in [&denied_old, &expired] {
                if csrs.get_opt(gone).await.map_err(|e| e.to_string())?.is_some() {
                    return Err(format!("{gone} still there"));
                }
            }
            if certificate_queue_retries(&env).await > 0.0 {
                Ok(())
            } else {
                Err("the refused request not retried yet".to_owned())
            }
        },
    )
    .await;

    let approved = conditions(&csrs.get(&approved_name).await.expect("approved request"));
    assert_eq!(approved.len(), 1, "{approved:?}");
    assert_eq!(
        (approved[0].type_.as_str(), approved[0].status.as_str(), approved[0].reason.as_deref()),
        ("Approved", "True", Some("AutoApproved"))
    );
    assert_eq!(
        approved[0].message.as_deref(),
        Some("Auto approving kubelet client certificate after SubjectAccessReview."),
        "a bootstrap user is not the node: nodeclient, not selfnodeclient"
    );
    for pending in [&refused_name, &other_name] {
        let csr = csrs.get(pending).await.expect("left alone");
        assert!(conditions(&csr).is_empty(), "{pending}: {:?}", conditions(&csr));
    }
    assert!(csrs.get_opt(&denied_recent).await.expect("read").is_some(), "denied half an hour ago: kept");
}
