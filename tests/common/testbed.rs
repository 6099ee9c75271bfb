//! The real control plane of `testbed/` (etcd, kube-apiserver 1.37,
//! kube-scheduler, kwok's nodes). The tests share one ([`shared`]): started
//! by the first test that asks for it, stopped when the binary exits (its
//! standard input closes). Tests on it take turns ([`Testbed::turn`]), so
//! one kcm-rs at a time acts on it, and each works in a namespace of its
//! own. The side-by-side benchmark starts one per program it measures.
//!
//! kcm-rs runs there as the `kube-system/kcm-rs` ServiceAccount, bound by
//! `deploy/rbac.yaml` and nothing else, so a missing grant is a real 403.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use serde::Deserialize;
use tokio::sync::{Mutex, OnceCell, OwnedMutexGuard};

/// Where `scripts/test` builds the testbed, unless `KCM_TESTBED` names it.
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("KCM_TESTBED") {
        return PathBuf::from(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"), PathBuf::from);
    target.join("testbed").join("testbed")
}

/// `testbed.json`, as `testbed up` writes it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct State {
    server: String,
    admin_kubeconfig: PathBuf,
    controller_manager_kubeconfig: PathBuf,
    pki: PathBuf,
    #[serde(default)]
    audit_log: Option<PathBuf>,
}

/// A running testbed; dropping it stops it.
pub struct Testbed {
    /// The admin's kubeconfig (`system:masters`).
    pub admin: PathBuf,
    /// kubeadm's controller-manager kubeconfig
    /// (`system:kube-controller-manager`): the side-by-side benchmark's
    /// kube-controller-manager, kcm-rs in the kubeadm test, the delegation
    /// kubeconfig in `serving.rs`.
    pub controller_manager: PathBuf,
    /// kube-apiserver's audit log, when asked for (by the benchmark and
    /// the credentials and kubeadm tests).
    pub audit_log: Option<PathBuf>,
    /// kcm-rs's kubeconfig: the `kube-system/kcm-rs` ServiceAccount's token.
    pub kcm_rs: PathBuf,
    /// kubeadm's `pki/` directory: `ca.crt`, `sa.key`, ...
    pub pki: PathBuf,
    /// `testbed up`: its end is the testbed's. It stops when its standard
    /// input closes, with this process, and then removes its directory (a
    /// static's is never dropped), or keeps it when something failed.
    _process: std::sync::Mutex<Child>,
    turns: Arc<Mutex<()>>,
}

static TESTBED: OnceCell<Arc<Testbed>> = OnceCell::const_new();

/// The testbed, started on first use, its nodes initialized
/// ([`Testbed::initialize_nodes`]); fails (never skips) with the reason
/// when it cannot start.
pub async fn shared() -> Arc<Testbed> {
    TESTBED
        .get_or_init(|| async {
            let bed = Testbed::start(3, false).await;
            bed.initialize_nodes().await;
            Arc::new(bed)
        })
        .await
        .clone()
}

/// The taint kube-apiserver's TaintNodesByCondition admission puts on
/// every Node created, until the node-lifecycle-controller sees it Ready.
const NOT_READY: &str = "node.kubernetes.io/not-ready";

impl Testbed {
    /// Brings a testbed up with `nodes` nodes (and kube-apiserver's audit
    /// log when `audit`), with kcm-rs's ServiceAccount and RBAC applied.
    pub async fn start(nodes: usize, audit: bool) -> Testbed {
        let bin = binary();
        assert!(
            bin.exists(),
            "the testbed binary {} is missing: scripts/test builds it (go build in testbed/), or set KCM_TESTBED",
            bin.display()
        );
        let dir = tempfile::tempdir().expect("temp dir").keep();
        let stderr = std::fs::File::create(dir.join("testbed.err")).expect("stderr file");
        let mut child = Command::new(&bin)
            .args([
                "up",
                "--stop-on-stdin-eof",
                "--remove-dir",
                &format!("--nodes={nodes}"),
                &format!("--audit={audit}"),
            ])
            .arg(format!("--dir={}", dir.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let stdout = child.stdout.take().expect("stdout piped");
        let ready = tokio::task::spawn_blocking(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .find_map(|l| l.strip_prefix("testbed: ready ").map(PathBuf::from))
        })
        .await
        .expect("reader ran");
        let Some(state_path) = ready else {
            let err = std::fs::read_to_string(dir.join("testbed.err")).unwrap_or_default();
            panic!("the testbed did not start:\n{err}");
        };
        let state: State =
            serde_json::from_slice(&std::fs::read(&state_path).expect("testbed.json")).expect("testbed.json parses");
        let kcm_rs = dir.join("kcm-rs.conf");
        grant_kcm_rs(&state, &kcm_rs).await;
        Testbed {
            admin: state.admin_kubeconfig,
            controller_manager: state.controller_manager_kubeconfig,
            audit_log: state.audit_log,
            kcm_rs,
            pki: state.pki,
            _process: std::sync::Mutex::new(child),
            turns: Arc::default(),
        }
    }

    /// Leaves the nodes as a cluster's whose controller manager has run,
    /// as kube-sim seeds its own: Ready (as `testbed up` waits for) and
    /// without the `node.kubernetes.io/not-ready:NoSchedule` taint the
    /// API server gave them at registration, which the node-lifecycle-controller
    /// takes off a Ready node. Without this, the scheduler would place no
    /// pod until a test's kcm-rs ran that controller, so a test running a
    /// few controllers only would pass or not by the tests before it.
    pub async fn initialize_nodes(&self) {
        use k8s_openapi::api::core::v1::Node;
        use kube::api::{ListParams, Patch, PatchParams};
        let nodes: Api<Node> = Api::all(self.client().await);
        for node in nodes.list(&ListParams::default()).await.expect("nodes listed").items {
            let name = node.metadata.name.clone().unwrap_or_default();
            let taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
            if !taints.iter().any(|t| t.key == NOT_READY && t.effect == "NoSchedule") {
                continue;
            }
            let ready = node.status.and_then(|s| s.conditions).unwrap_or_default();
            let ready = ready.iter().any(|c| c.type_ == "Ready" && c.status == "True");
            assert!(ready, "testbed node {name} is not Ready");
            let kept: Vec<_> =
                taints.into_iter().filter(|t| !(t.key == NOT_READY && t.effect == "NoSchedule")).collect();
            let taints = if kept.is_empty() { serde_json::Value::Null } else { serde_json::json!(kept) };
            let patch = serde_json::json!({"metadata": {"resourceVersion": node.metadata.resource_version},
                "spec": {"taints": taints}});
            nodes.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("node untainted");
        }
    }

    /// Waits for this test's turn on the testbed; the turn ends when the
    /// guard drops.
    pub async fn turn(&self) -> OwnedMutexGuard<()> {
        self.turns.clone().lock_owned().await
    }

    /// A client as the admin.
    pub async fn client(&self) -> kube::Client {
        client_for(&self.admin).await
    }

    /// The flags kubeadm gives kube-controller-manager that kcm-rs needs
    /// here: the CA to publish, the key to sign legacy tokens with, and the
    /// cluster CA that signs CSRs.
    pub fn daemon_args(&self) -> Vec<String> {
        vec![
            format!("--root-ca-file={}", self.pki.join("ca.crt").display()),
            format!("--service-account-private-key-file={}", self.pki.join("sa.key").display()),
            format!("--cluster-signing-cert-file={}", self.pki.join("ca.crt").display()),
            format!("--cluster-signing-key-file={}", self.pki.join("ca.key").display()),
        ]
    }
}

/// A testbed has no change feed: [`kube_sim::testing::wait_for`] polls it.
impl kube_sim::testing::Changes for Testbed {
    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<Arc<kube_sim::store::Change>>> {
        None
    }
}

/// How long a dropped testbed may take to stop and remove its directory
/// before it is killed (which leaves the directory).
const STOP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

impl Drop for Testbed {
    /// Closes its standard input, so that it stops its components and
    /// removes its directory, and waits for its exit; a watchdog kills it
    /// if that takes longer than [`STOP_PATIENCE`] (its components die
    /// with it, the kernel kills them).
    fn drop(&mut self) {
        let Ok(child) = self._process.get_mut() else { return };
        drop(child.stdin.take());
        let pid = child.id().to_string();
        let (exited, exit_seen) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if exit_seen.recv_timeout(STOP_PATIENCE).is_err() {
                drop(Command::new("kill").args(["-KILL", &pid]).status());
            }
        });
        drop(child.wait());
        // The watchdog may have fired and gone: nobody to tell then.
        let _ = exited.send(());
        drop(watchdog.join());
    }
}

/// A client for the kubeconfig at `path`.
async fn client_for(path: &Path) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).expect("kubeconfig reads");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

/// Applies `deploy/`'s ServiceAccount and RBAC, and writes a kubeconfig for
/// that ServiceAccount (a day's token from the TokenRequest API) at `out`.
async fn grant_kcm_rs(state: &State, out: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["deploy/serviceaccount.yaml", "deploy/rbac.yaml"] {
        let path = root.join(file);
        let path = path.display().to_string();
        kube_sim::testing::kubectl_ok(&state.admin_kubeconfig, &["apply", "-n", "kube-system", "-f", &path]).await;
    }
    let accounts: Api<ServiceAccount> = Api::namespaced(client_for(&state.admin_kubeconfig).await, "kube-system");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec { expiration_seconds: Some(24 * 3600), ..Default::default() }),
        ..Default::default()
    };
    let token = accounts
        .create_token_request("kcm-rs", &PostParams::default(), &request)
        .await
        .expect("a token for kube-system/kcm-rs")
        .status
        .expect("the token")
        .token;
    let ca = std::fs::read(state.pki.join("ca.crt")).expect("ca.crt");
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "testbed", "cluster": {
            "server": state.server,
            "certificate-authority-data": base64_encode(&ca),
        }}],
        "users": [{"name": "kcm-rs", "user": {"token": token}}],
        "contexts": [{"name": "kcm-rs", "context": {"cluster": "testbed", "user": "kcm-rs"}}],
        "current-context": "kcm-rs",
    });
    std::fs::write(out, serde_json::to_vec(&kubeconfig).expect("json")).expect("kcm-rs.conf written");
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
