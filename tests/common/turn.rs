//! A test's turn on the shared testbed: its namespace, its kcm-rs (as the
//! `kube-system/kcm-rs` ServiceAccount, under `deploy/rbac.yaml`'s grants
//! only), and what the test leaves behind taken away when it ends, so that
//! each test finds the testbed as the one before found it.

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{Cluster, DaemonConfig, Env, crd, default_service_account, elects, free_port, spawn_logged, testbed};

/// The Lease kcm-rs elects its leader with (upstream's default
/// `--leader-elect-resource-name`, the only one `deploy/rbac.yaml` grants).
const LEASE: &str = "kube-controller-manager";

/// Namespaces handed out on the testbed.
static NAMESPACES: AtomicUsize = AtomicUsize::new(0);

/// Takes a turn on the testbed, makes the test's namespace, and starts
/// `kcm-rs` there as the `kube-system/kcm-rs` ServiceAccount with these
/// extra flags; returns once the namespace has its `default`
/// ServiceAccount (made by kcm-rs), as upstream's e2e framework waits. A
/// kcm-rs whose `--controllers` leave out the serviceaccount-controller
/// makes none: then the admin provisions the namespace, as
/// [`kube_sim::testing::provision_namespace`] does on kube-sim.
pub async fn start_on_testbed(args: &[&str]) -> Env {
    let bed = testbed::shared().await;
    let turn = bed.turn().await;
    let client = bed.client().await;
    let ns = format!("e2e-{}", NAMESPACES.fetch_add(1, Ordering::Relaxed) + 1);
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    let namespace = k8s_openapi::api::core::v1::Namespace {
        metadata: kube::api::ObjectMeta { name: Some(ns.clone()), ..Default::default() },
        ..Default::default()
    };
    namespaces.create(&kube::api::PostParams::default(), &namespace).await.expect("test namespace created");
    let dir = tempfile::tempdir().expect("temp dir");
    let log = Some(dir.path().join("kcm-rs.log"));
    let ca = std::fs::read_to_string(bed.pki.join("ca.crt")).expect("the testbed's ca.crt");
    let deletes_namespaces = runs_controller(args, "namespace-controller", "namespace");
    let daemon_config =
        DaemonConfig { kubeconfig: bed.kcm_rs.clone(), args: bed.daemon_args(), log, deletes_namespaces };
    let port = free_port();
    let mut all: Vec<&str> = daemon_config.args.iter().map(String::as_str).collect();
    all.extend_from_slice(args);
    let daemon = spawn_logged(&daemon_config.kubeconfig, port, &all, daemon_config.log.as_deref());
    let kubeconfig = dir.path().join("admin.conf");
    write_with_namespace(&bed.admin, &kubeconfig, &ns);
    let env = Env {
        kubeconfig,
        cluster: Cluster::Testbed { _bed: bed, _turn: turn },
        _dir: Some(dir),
        daemon_config,
        daemon,
        port,
        client,
        ns,
        served: std::sync::Mutex::default(),
        extra_namespaces: std::sync::Mutex::default(),
        elected: AtomicBool::new(elects(args)),
    };
    if runs_controller(args, "serviceaccount-controller", "serviceaccount") {
        default_service_account(&env.cluster, &env.client, &env.ns).await;
    } else {
        // What the controller manager that ran before would have made,
        // with the testbed's CA.
        kube_sim::testing::provision_namespace_with(&env.client, &env.ns, &ca).await;
    }
    env
}

/// Copies the kubeconfig at `from` to `to`, its contexts set to
/// `namespace`: kubectl then works in the test's namespace unless told
/// otherwise, as it works in `default` on kube-sim.
fn write_with_namespace(from: &Path, to: &Path, namespace: &str) {
    let text = std::fs::read_to_string(from).expect("kubeconfig read");
    let mut config: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig parses");
    let contexts = config.get_mut("contexts").and_then(serde_yaml::Value::as_sequence_mut).expect("contexts");
    for context in contexts {
        if let Some(serde_yaml::Value::Mapping(inner)) = context.get_mut("context") {
            inner.insert("namespace".into(), namespace.into());
        }
    }
    std::fs::write(to, serde_yaml::to_string(&config).expect("kubeconfig serializes")).expect("kubeconfig written");
}

/// Whether a `kcm-rs` started with these flags runs the controller `name`
/// (or `alias`), as `--controllers` selects: every controller on by
/// default when the flag is not given, and `*` too.
fn runs_controller(args: &[&str], name: &str, alias: &str) -> bool {
    let Some(list) = args.iter().rev().find_map(|a| a.strip_prefix("--controllers=")) else { return true };
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    let named = |item: &str| item == name || item == alias;
    if items.iter().any(|i| i.strip_prefix('-').is_some_and(named)) {
        return false;
    }
    items.iter().any(|i| named(i) || *i == "*")
}

impl Drop for Env {
    /// On the testbed, kcm-rs runs under `deploy/rbac.yaml`'s grants only:
    /// a test whose kcm-rs was refused anything fails, with the refusals.
    ///
    /// Its namespaces ([`Env::ns`] and its extra ones) are deleted, by its
    /// own kcm-rs, before the next test's turn: each test finds the shared
    /// testbed as the one before found it.
    /// Its pods go at once (no new pod is admitted once the namespace is
    /// terminating), as the namespace controller would otherwise wait for
    /// their grace periods. Then the CustomResourceDefinitions it served
    /// go, with their objects (cluster-scoped ones too), and the Lease its
    /// kcm-rs elected on, if it did.
    fn drop(&mut self) {
        let Some(log) = &self.daemon_config.log else { return };
        // A create refused in a namespace being deleted (NamespaceLifecycle)
        // is a 403 too, and no missing grant: a finished test's namespace
        // may still be going while the next test's kcm-rs starts.
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let refused: Vec<&str> = text
            .lines()
            .filter(|l| (l.contains("forbidden") || l.contains("Forbidden")) && !l.contains("being terminated"))
            .collect();
        let mut namespaces = vec![self.ns.clone()];
        namespaces.extend(self.extra_namespaces.lock().map(|extra| extra.clone()).unwrap_or_default());
        let kubectl = |args: &[&str]| {
            let status = std::process::Command::new("kubectl")
                .args(args)
                .env("KUBECONFIG", &self.kubeconfig)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            status.is_ok_and(|s| s.success())
        };
        // An extra namespace may never have been made (the test failed
        // before): not found is deleted.
        let mut left: Vec<&str> = namespaces
            .iter()
            .map(String::as_str)
            .filter(|ns| {
                let deleting = kubectl(&["delete", "namespace", ns, "--wait=false", "--ignore-not-found"]);
                !(deleting
                    && kubectl(&["delete", "pods", "--all", "-n", ns, "--force", "--grace-period=0", "--wait=false"]))
            })
            .collect();
        // Its own kcm-rs empties them, when it runs the namespace
        // controller; else the next test's does.
        let emptied_here = self.daemon_config.deletes_namespaces && matches!(self.daemon.try_wait(), Ok(None));
        if emptied_here {
            let deleting: Vec<&str> = namespaces.iter().map(String::as_str).filter(|ns| !left.contains(ns)).collect();
            left.extend(
                deleting
                    .into_iter()
                    .filter(|ns| !kubectl(&["wait", "--for=delete", &format!("namespace/{ns}"), "--timeout=120s"])),
            );
        }
        let removed = crd::remove_served(self);
        if self.elected.load(Ordering::Relaxed) {
            // Its processes are gone first (the test's own ones dropped
            // before its Env), or one would take the Lease again.
            stop(&mut self.daemon);
            kubectl(&["delete", "lease", LEASE, "-n", "kube-system", "--ignore-not-found"]);
        }
        if std::thread::panicking() {
            return;
        }
        assert!(refused.is_empty(), "kcm-rs was refused (403) on the testbed:\n{}", refused.join("\n"));
        assert!(left.is_empty(), "the test namespaces {left:?} were not deleted within 120 s");
        assert!(removed, "the CustomResourceDefinitions the test served were not deleted within 120 s");
    }
}

/// Kills `daemon` and waits (up to 10 s) for it to be gone. Called from
/// `Drop`, on the test's multi-threaded runtime.
fn stop(daemon: &mut tokio::process::Child) {
    drop(daemon.start_kill());
    let exited = tokio::time::timeout(std::time::Duration::from_secs(10), daemon.wait());
    drop(tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(exited)));
}
