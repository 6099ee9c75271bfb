//! The secure port behind delegated authentication and authorization, on
//! the testbed's real kube-apiserver (kube-sim reviews no tokens or
//! access): kcm-rs started as kubeadm starts kube-controller-manager, with
//! the controller-manager kubeconfig for TokenReviews and
//! SubjectAccessReviews, the cluster CA for client certificates and the
//! front-proxy CA for request headers; then as `deploy/` runs it, its
//! ServiceAccount reviewing and the CAs looked up in the cluster. Scrapers are what an operator
//! makes: ServiceAccounts, a ClusterRole for `get` on `/metrics`, the
//! admin's client certificate and the API server's front-proxy one. Bad
//! serving input, on kube-sim, stops start-up with an error naming the
//! flag and the file.

use std::path::Path;

use kube_sim::SimConfig;
use kube_sim::testing::{kubectl_ok, wait_for};
use tokio::process::Command;

use crate::common::testbed::{self, Testbed};
use crate::common::{Cluster, PATIENCE, free_port, https_get_with, sim_with_kubeconfig};

const NAMESPACE: &str = "serving";

/// Where kcm-rs's delegation comes from.
#[derive(Debug, Clone, Copy)]
enum Delegation {
    /// As kubeadm gives kube-controller-manager: the controller-manager
    /// kubeconfig for the reviews, both CAs by flag.
    Kubeadm,
    /// As `deploy/` runs kcm-rs: its ServiceAccount (under
    /// `deploy/rbac.yaml`) for the reviews, the CAs looked up in
    /// `kube-system/extension-apiserver-authentication`.
    Deploy,
}

/// kcm-rs serving on `port` with `delegation`; one cheap controller.
fn start(bed: &Testbed, port: u16, delegation: Delegation) -> tokio::process::Child {
    let pki = |f: &str| bed.pki.join(f).display().to_string();
    let flags = match delegation {
        Delegation::Kubeadm => {
            let conf = bed.controller_manager.display().to_string();
            vec![
                format!("--authentication-kubeconfig={conf}"),
                format!("--authorization-kubeconfig={conf}"),
                format!("--client-ca-file={}", pki("ca.crt")),
                format!("--requestheader-client-ca-file={}", pki("front-proxy-ca.crt")),
            ]
        }
        Delegation::Deploy => {
            let conf = bed.kcm_rs.display().to_string();
            vec![format!("--authentication-kubeconfig={conf}"), format!("--authorization-kubeconfig={conf}")]
        }
    };
    Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .args([
            format!("--kubeconfig={}", bed.kcm_rs.display()),
            "--controllers=ttl-after-finished-controller".to_owned(),
            "--leader-elect=false".to_owned(),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={port}"),
        ])
        .args(flags)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts")
}

/// A ServiceAccount of [`NAMESPACE`] and a token for it.
async fn account(admin: &Path, name: &str) -> String {
    kubectl_ok(admin, &["create", "serviceaccount", name, "-n", NAMESPACE]).await;
    kubectl_ok(admin, &["create", "token", name, "-n", NAMESPACE]).await.trim().to_owned()
}

/// The `Forbidden` Status message for `user` getting `/metrics`.
fn forbidden(user: &str) -> String {
    format!("forbidden: User \\\"{user}\\\" cannot get path \\\"/metrics\\\"")
}

#[tokio::test]
async fn the_secure_port_authenticates_and_authorizes_as_kube_controller_manager() {
    let bed = testbed::shared().await;
    let cluster = Cluster::Testbed { _bed: bed.clone(), _turn: bed.turn().await };
    let admin = bed.admin.as_path();
    kubectl_ok(admin, &["create", "namespace", NAMESPACE]).await;
    let reader = account(admin, "metrics-reader").await;
    let stranger = account(admin, "stranger").await;
    kubectl_ok(admin, &["create", "clusterrole", "kcm-rs-metrics", "--verb=get", "--non-resource-url=/metrics"]).await;
    let binding = format!("--serviceaccount={NAMESPACE}:metrics-reader");
    kubectl_ok(admin, &["create", "clusterrolebinding", "kcm-rs-metrics", "--clusterrole=kcm-rs-metrics", &binding])
        .await;

    for delegation in [Delegation::Kubeadm, Delegation::Deploy] {
        scrape(&bed, &cluster, delegation, &reader, &stranger).await;
    }
}

/// What each kind of scraper gets from a kcm-rs delegating as `delegation`
/// says.
async fn scrape(bed: &Testbed, cluster: &Cluster, delegation: Delegation, reader: &str, stranger: &str) {
    let port = free_port();
    let _daemon = start(bed, port, delegation);
    let get = |path: &'static str, args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        https_get_with(port, path, &args).await
    };
    wait_for(cluster, PATIENCE, "kcm-rs to serve /healthz", || async {
        let (code, body) = get("/healthz", vec![]).await;
        if code == 200 { Ok(()) } else { Err(format!("{code} {body}")) }
    })
    .await;

    // Anonymous: the always-allowed health paths only.
    assert_eq!(get("/healthz", vec![]).await, (200, "ok".to_owned()));
    let (code, body) = get("/metrics", vec![]).await;
    assert_eq!(code, 403, "{body}");
    assert!(body.contains(&forbidden("system:anonymous")), "{body}");

    // Bearer tokens, reviewed by the API server; access as RBAC grants it.
    let bearer = |token: &str| vec!["-H".to_owned(), format!("Authorization: Bearer {token}")];
    let (code, body) = get("/metrics", bearer("not-a-token")).await;
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("\"reason\": \"Unauthorized\""), "{body}");
    let (code, body) = get("/metrics", bearer(reader)).await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("# TYPE process_cpu_seconds_total counter"), "{body}");
    let (code, body) = get("/metrics", bearer(stranger)).await;
    assert_eq!(code, 403, "{delegation:?}: {body}");
    assert!(body.contains(&forbidden(&format!("system:serviceaccount:{NAMESPACE}:stranger"))), "{body}");

    // The admin's client certificate: kubernetes-admin in system:masters.
    let pki = |f: &str| bed.pki.join(f).display().to_string();
    let certificate = |name: &str| {
        vec!["--cert".to_owned(), pki(&format!("{name}.crt")), "--key".to_owned(), pki(&format!("{name}.key"))]
    };
    assert_eq!(get("/metrics", certificate("admin-client")).await.0, 200, "{delegation:?}");

    // Front-proxy headers: honoured from the front-proxy client certificate,
    // ignored without it.
    let as_user = |user: &str| vec!["-H".to_owned(), format!("X-Remote-User: {user}")];
    let reader_name = format!("system:serviceaccount:{NAMESPACE}:metrics-reader");
    let proxied = |user: &str| [certificate("front-proxy-client"), as_user(user)].concat();
    assert_eq!(get("/metrics", proxied(&reader_name)).await.0, 200, "{delegation:?}");
    let (code, body) = get("/metrics", proxied("nobody")).await;
    assert_eq!(code, 403, "{body}");
    assert!(body.contains(&forbidden("nobody")), "the user is the header's: {body}");
    let (code, body) = get("/metrics", as_user(&reader_name)).await;
    assert_eq!(code, 403, "{body}");
    assert!(body.contains(&forbidden("system:anonymous")), "no certificate, no header: {body}");
}

/// kcm-rs against kube-sim with `args`: its exit status and standard error
/// (killed, and failing the test, if it is still running after a minute).
async fn refused(args: &[&str]) -> (bool, String) {
    let (_sim, _dir, kubeconfig) = sim_with_kubeconfig(SimConfig::default()).await;
    let child = Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(["--leader-elect=false", "--bind-address=127.0.0.1", &format!("--secure-port={}", free_port())])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts");
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kcm-rs {args:?} kept running"))
        .expect("kcm-rs ran");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn bad_serving_input_stops_start_up_naming_the_flag_and_the_file() {
    let cases: [(&str, &[&str]); 4] = [
        (
            "--client-ca-file: unable to load client CA file /nonexistent/ca.crt",
            &["--client-ca-file=/nonexistent/ca.crt"],
        ),
        (
            "--authorization-kubeconfig: failed to get delegated kubeconfig from /nonexistent/kc",
            &["--authorization-kubeconfig=/nonexistent/kc"],
        ),
        ("--tls-min-version: unknown tls version \"TLS12\"", &["--tls-min-version=TLS12"]),
        (
            "--tls-cipher-suites: Cipher suite TLS_NONESUCH not supported or doesn't exist",
            &["--tls-cipher-suites=TLS_NONESUCH"],
        ),
    ];
    for (message, args) in cases {
        let (ok, stderr) = refused(args).await;
        assert!(!ok && stderr.contains(message), "{args:?}: {stderr}");
    }
}
