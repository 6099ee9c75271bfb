//! kcm-rs as kubeadm runs kube-controller-manager: the command of
//! `deploy/static-pod/kube-controller-manager.yaml` (kubeadm's manifest,
//! with kind's values and kcm-rs's image), run by the name
//! `kube-controller-manager`, against kubeadm's files laid out as kubeadm
//! lays them out (`pki/`, `controller-manager.conf`; the keys and the
//! kubeconfig readable by their owner only), on a testbed of its own with
//! kube-apiserver's audit log. The kubelet's probe passes; `/metrics` is
//! refused without credentials and served to a token RBAC allows; a
//! workload that keeps every controller busy converges; kcm-rs is refused
//! nothing, and the audit log shows each controller's requests made as
//! `system:serviceaccount:kube-system:<its name>`
//! (`--use-service-account-credentials`): kcm-rs needs no grant beyond
//! upstream's bootstrap roles (`system:controller:<name>`), which
//! kube-apiserver creates at start. An identity that may not ask for
//! tokens gets a named, retried error.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, PersistentVolumeClaim, Secret, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams, PostParams};
use kube_sim::testing::{Patience, kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::Value;
use tokio::process::{Child, Command};

use crate::common::testbed::Testbed;
use crate::common::{free_port, https_get, spawn_logged, static_pod_command};

/// Where kubeadm keeps its files; the manifest's paths start with it.
const KUBERNETES_DIR: &str = "/etc/kubernetes";

const NS: &str = "creds";

/// Long enough for a CronJob's first minute to come round.
const CRON_PATIENCE: Patience = Patience { deadline: Duration::from_secs(150), recheck: Duration::from_secs(1) };

const PATIENCE: Patience = crate::common::PATIENCE;

/// The controllers the workload makes write, each by its upstream client
/// name (the ServiceAccount it acts as).
const WRITERS: &[&str] = &[
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "daemon-set-controller",
    "job-controller",
    "cronjob-controller",
    "ttl-after-finished-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "generic-garbage-collector",
    "namespace-controller",
    "service-account-controller",
    "root-ca-cert-publisher",
    "ttl-controller",
    "bootstrap-signer",
    "token-cleaner",
    // The API server's own `kubernetes` ServiceCIDR: its finalizer and
    // Ready condition.
    "service-cidrs-controller",
    // scratch's claim; gold's finalizer taken off once it is deleted.
    "ephemeral-volume-controller",
    "volumeattributesclass-protection-controller",
    // ebs's resizer, once its request is raised.
    "expand-controller",
    // attached's VolumeAttachment on creds-node.
    "attachdetach-controller",
];

/// kubeadm's `cluster-info` and bootstrap tokens: one signing, one expired.
const BOOTSTRAP: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-info, namespace: kube-public}
data: {kubeconfig: "apiVersion: v1\nkind: Config\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: bootstrap-token-abcdef, namespace: kube-system}
type: bootstrap.kubernetes.io/token
data: {token-id: YWJjZGVm, token-secret: MDEyMzQ1Njc4OWFiY2RlZg==, usage-bootstrap-signing: dHJ1ZQ==}
---
apiVersion: v1
kind: Secret
metadata: {name: bootstrap-token-old000, namespace: kube-system}
type: bootstrap.kubernetes.io/token
data: {token-id: b2xkMDAw, token-secret: MDEyMzQ1Njc4OWFiY2RlZg==, expiration: MjAwMC0wMS0wMVQwMDowMDowMFo=}
"#;

/// Clients upstream keeps on the `--kubeconfig` identity.
const ROOT_CLIENTS: &[&str] = &["shared-informers", "tokens-controller"];

/// What kubeadm's `controller-manager.conf` authenticates as.
const ROOT_USER: &str = "system:kube-controller-manager";

/// Every controller's pods, on kwok's nodes: a Deployment behind a
/// Service, a StatefulSet, a DaemonSet, two Jobs (one deleted once
/// finished), a CronJob, and a ServiceAccount with a legacy token Secret.
const WORKLOAD: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot}
---
apiVersion: v1
kind: Secret
metadata:
  name: robot-token
  annotations: {kubernetes.io/service-account.name: robot}
type: kubernetes.io/service-account-token
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec: {template: {metadata: {annotations: {kube-sim.io/exit-after: 1s}}, spec: {restartPolicy: Never, containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: brief}
spec: {ttlSecondsAfterFinished: 0, template: {metadata: {annotations: {kube-sim.io/exit-after: 1s}}, spec: {restartPolicy: Never, containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "* * * * *"
  jobTemplate: {spec: {template: {metadata: {annotations: {kube-sim.io/exit-after: 1s}}, spec: {restartPolicy: Never, containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: scratch}
spec:
  schedulerName: no-such-scheduler
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  volumes: [{name: tmp, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: gold}
driverName: csi.example.com
parameters: {iops: "3000"}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: creds-expandable}
provisioner: kubernetes.io/no-provisioner
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: creds-ebs}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: creds-expandable
  persistentVolumeReclaimPolicy: Retain
  awsElasticBlockStore: {volumeID: vol-creds}
  claimRef: {namespace: creds, name: ebs}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ebs}
spec: {accessModes: [ReadWriteOnce], storageClassName: creds-expandable, volumeName: creds-ebs, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Node
metadata: {name: creds-node, annotations: {volumes.kubernetes.io/controller-managed-attach-detach: "true"}}
spec: {taints: [{key: kcm-rs.test/volumes-only, effect: NoSchedule}]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: creds-csi}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  persistentVolumeReclaimPolicy: Retain
  csi: {driver: csi.example.com, volumeHandle: vol-creds}
  claimRef: {namespace: creds, name: attached}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: attached}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", volumeName: creds-csi, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: attached}
spec:
  nodeName: creds-node
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: attached}}]
"#;

// === utils ===

/// `Ok` when `done`, else `Err` with `seen` (what [`wait_for`] reports).
fn when(done: bool, seen: impl FnOnce() -> String) -> Result<(), String> {
    if done { Ok(()) } else { Err(seen()) }
}

/// The audit log's events, as JSON.
fn audit_events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

fn field<'a>(event: &'a Value, pointer: &str) -> &'a str {
    event.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The users kcm-rs's client `name` made requests as.
fn users_of(events: &[Value], name: &str) -> Vec<String> {
    let agent = format!("kcm-rs/{}/{name}", env!("CARGO_PKG_VERSION"));
    let mut users: Vec<String> = events
        .iter()
        .filter(|e| field(e, "/userAgent") == agent)
        .map(|e| field(e, "/user/username").to_owned())
        .collect();
    users.sort();
    users.dedup();
    users
}

/// Lays out kubeadm's files under `etc` from the testbed's: `pki/` (the
/// cluster and front-proxy CAs, the CA's key, the service-account key)
/// and `controller-manager.conf`; the keys and the kubeconfig mode 0600,
/// as kubeadm writes them.
fn lay_out(bed: &Testbed, etc: &Path) {
    let pki = etc.join("pki");
    std::fs::create_dir_all(&pki).expect("pki/");
    for (file, mode) in [("ca.crt", 0o644), ("ca.key", 0o600), ("sa.key", 0o600), ("front-proxy-ca.crt", 0o644)] {
        std::fs::copy(bed.pki.join(file), pki.join(file)).expect("copied");
        std::fs::set_permissions(pki.join(file), std::fs::Permissions::from_mode(mode)).expect("mode set");
    }
    let conf = etc.join("controller-manager.conf");
    std::fs::copy(&bed.controller_manager, &conf).expect("copied");
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o600)).expect("mode set");
}

/// Starts the binary by the name kubeadm's manifest runs, with its
/// arguments pointing at `etc` instead of `/etc/kubernetes`, serving on
/// `port` (the one flag added: tests run side by side), its log in `log`.
fn start(etc: &Path, port: u16, log: &Path) -> Child {
    let command = static_pod_command();
    assert_eq!(command[0], "kube-controller-manager", "kubeadm runs the binary by that name");
    let bin = etc.join("kube-controller-manager");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kcm-rs"), &bin).expect("linked");
    let args = command[1..].iter().map(|a| a.replace(KUBERNETES_DIR, &etc.display().to_string()));
    Command::new(&bin)
        .args(args)
        .arg(format!("--secure-port={port}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log file"))
        .kill_on_drop(true)
        .spawn()
        .expect("kube-controller-manager (kcm-rs) starts")
}

/// `GET https://127.0.0.1:<port><path>` with a bearer token: the status.
async fn get_with_token(port: u16, path: &str, token: &str) -> u16 {
    let out = Command::new("curl")
        .args(["-sk", "-o", "/dev/null", "-w", "%{http_code}", "-H"])
        .arg(format!("Authorization: Bearer {token}"))
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .await
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
}

/// A token for ServiceAccount `name` in `ns` (made here), which the
/// ClusterRole `role`, when given, is bound to.
async fn token_for(bed: &Testbed, ns: &str, name: &str, role: Option<&str>) -> String {
    let client = bed.client().await;
    let accounts: Api<ServiceAccount> = Api::namespaced(client, ns);
    let account = ServiceAccount {
        metadata: kube::api::ObjectMeta { name: Some(name.to_owned()), ..Default::default() },
        ..Default::default()
    };
    accounts.create(&PostParams::default(), &account).await.expect("ServiceAccount created");
    if let Some(role) = role {
        let subject = format!("--serviceaccount={ns}:{name}");
        kubectl_ok(&bed.admin, &["create", "clusterrolebinding", name, &format!("--clusterrole={role}"), &subject])
            .await;
    }
    let request = TokenRequest { spec: Some(TokenRequestSpec::default()), ..Default::default() };
    let made = accounts.create_token_request(name, &PostParams::default(), &request).await.expect("a token");
    made.status.and_then(|s| s.token).expect("the token")
}

// === the tests ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeadms_static_pod_runs_kcm_rs_with_only_the_image_swapped() {
    let bed = Testbed::start(3, true).await;
    bed.initialize_nodes().await;
    let audit = bed.audit_log.clone().expect("the testbed's audit log");
    let dir = tempfile::tempdir().expect("temp dir");
    let etc = dir.path().join("kubernetes");
    lay_out(&bed, &etc);
    let port = free_port();
    let log = dir.path().join("kcm-rs.log");
    let _daemon = start(&etc, port, &log);

    // The kubelet's probes: an anonymous HTTPS GET /healthz.
    wait_for(&bed, PATIENCE, "/healthz answering the kubelet's probe", || async {
        let (code, body) = https_get(port, "/healthz").await;
        when(code == 200 && body == "ok", || {
            format!("{code} {body}; log:\n{}", std::fs::read_to_string(&log).unwrap_or_default())
        })
    })
    .await;

    let client = bed.client().await;
    kubectl_ok(&bed.admin, &["create", "namespace", NS]).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), NS);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "the namespace's default ServiceAccount and kube-root-ca.crt", || async {
        let account = accounts.get_opt("default").await.map_err(|e| e.to_string())?;
        let ca = config_maps.get_opt("kube-root-ca.crt").await.map_err(|e| e.to_string())?;
        when(account.is_some() && ca.is_some(), || format!("default: {}, CA: {}", account.is_some(), ca.is_some()))
    })
    .await;
    kubectl_ok_with_stdin(&bed.admin, &["-n", NS, "apply", "-f", "-"], WORKLOAD).await;
    kubectl_ok(&bed.admin, &["delete", "volumeattributesclass", "gold", "--wait=false"]).await;

    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "robot-token's token (tokens controller)", || async {
        let secret = secrets.get("robot-token").await.map_err(|e| e.to_string())?;
        let filled = secret.data.is_some_and(|d| d.contains_key("token"));
        when(filled, || "no token yet".to_owned())
    })
    .await;

    // ebs bound by the binder, then grown: the expander names its resizer.
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "claim ebs bound", || async {
        let claim = claims.get("ebs").await.map_err(|e| e.to_string())?;
        let phase = claim.status.and_then(|s| s.phase).unwrap_or_default();
        when(phase == "Bound", || phase)
    })
    .await;
    let grow = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
    kubectl_ok(&bed.admin, &["-n", NS, "patch", "pvc", "ebs", "--type=merge", "-p", grow]).await;
    wait_for(&bed, PATIENCE, "ebs's resizer (expander)", || async {
        let claim = claims.get("ebs").await.map_err(|e| e.to_string())?;
        let annotations = claim.metadata.annotations.unwrap_or_default();
        let resizer = annotations.get("volume.kubernetes.io/storage-resizer").cloned();
        when(resizer.as_deref() == Some("ebs.csi.aws.com"), || format!("{resizer:?}"))
    })
    .await;

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
    let rolled_out = |generation: i64| {
        let deployments = deployments.clone();
        async move {
            let d = deployments.get("web").await.map_err(|e| e.to_string())?;
            let status = d.status.unwrap_or_default();
            let done = status.observed_generation == Some(generation)
                && status.updated_replicas == Some(2)
                && status.available_replicas == Some(2)
                && status.replicas == Some(2);
            when(done, || format!("{status:?}"))
        }
    };
    wait_for(&bed, PATIENCE, "web rolled out", || rolled_out(1)).await;
    let patch = r#"{"spec":{"template":{"metadata":{"annotations":{"rollout":"2"}}}}}"#;
    kubectl_ok(&bed.admin, &["-n", NS, "patch", "deployment", "web", "--type=merge", "-p", patch]).await;
    wait_for(&bed, PATIENCE, "web's second rollout", || rolled_out(2)).await;

    let statefulsets: Api<StatefulSet> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "db's 2 pods Ready", || async {
        let status = statefulsets.get("db").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        when(status.ready_replicas == Some(2), || format!("{status:?}"))
    })
    .await;
    let daemonsets: Api<DaemonSet> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "agent Ready on the 3 nodes", || async {
        let status = daemonsets.get("agent").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        when(status.number_ready == 3 && status.desired_number_scheduled == 3, || format!("{status:?}"))
    })
    .await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "once succeeded, brief deleted once finished", || async {
        let once = jobs.get("once").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        let brief = jobs.get_opt("brief").await.map_err(|e| e.to_string())?;
        when(once.succeeded == Some(1) && brief.is_none(), || {
            format!("once: {once:?}; brief there: {}", brief.is_some())
        })
    })
    .await;
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), NS);
    let endpoints: Api<Endpoints> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "web's 2 endpoints, in its EndpointSlice and Endpoints", || async {
        let listed = slices.list(&ListParams::default().labels("kubernetes.io/service-name=web")).await;
        let in_slices: usize =
            listed.map_err(|e| e.to_string())?.items.iter().map(|s| s.endpoints.as_ref().map_or(0, Vec::len)).sum();
        let subsets = endpoints.get_opt("web").await.map_err(|e| e.to_string())?.and_then(|e| e.subsets);
        let addresses: usize =
            subsets.unwrap_or_default().iter().map(|s| s.addresses.as_ref().map_or(0, Vec::len)).sum();
        when(in_slices == 2 && addresses == 2, || format!("{in_slices} in slices, {addresses} in Endpoints"))
    })
    .await;
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, CRON_PATIENCE, "tick's first run", || async {
        let status = cronjobs.get("tick").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        when(status.last_successful_time.is_some(), || format!("{status:?}"))
    })
    .await;

    // kubeadm's cluster-info signed by its token, an expired token deleted,
    // each controller under its namespaced bootstrap Roles.
    kubectl_ok_with_stdin(&bed.admin, &["apply", "-f", "-"], BOOTSTRAP).await;
    let cluster_info: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-public");
    let tokens: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    wait_for(&bed, PATIENCE, "cluster-info signed, the expired token deleted", || async {
        let data = cluster_info.get("cluster-info").await.map_err(|e| e.to_string())?.data.unwrap_or_default();
        let expired = tokens.get_opt("bootstrap-token-old000").await.map_err(|e| e.to_string())?;
        let signed = data.contains_key("jws-kubeconfig-abcdef");
        when(signed && expired.is_none(), || format!("signed {signed}, expired token there {}", expired.is_some()))
    })
    .await;

    // A cascading delete: the garbage collector takes web's ReplicaSets.
    kubectl_ok(&bed.admin, &["-n", NS, "delete", "deployment", "web"]).await;
    let replicasets: Api<ReplicaSet> = Api::namespaced(client.clone(), NS);
    wait_for(&bed, PATIENCE, "web's ReplicaSets gone", || async {
        let left = replicasets.list(&ListParams::default().labels("app=web")).await.map_err(|e| e.to_string())?;
        when(left.items.is_empty(), || format!("{} left", left.items.len()))
    })
    .await;
    // A namespace deleted, with content.
    kubectl_ok(&bed.admin, &["create", "namespace", "doomed"]).await;
    kubectl_ok(&bed.admin, &["-n", "doomed", "create", "configmap", "c", "--from-literal=a=b"]).await;
    kubectl_ok(&bed.admin, &["delete", "namespace", "doomed", "--wait=false"]).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    wait_for(&bed, PATIENCE, "namespace doomed gone", || async {
        let left = namespaces.get_opt("doomed").await.map_err(|e| e.to_string())?;
        when(left.is_none(), || format!("{:?}", left.and_then(|n| n.status)))
    })
    .await;

    // The audit log is written in batches: wait until every controller's
    // requests are in it.
    let events = wait_for(&bed, PATIENCE, "every controller's requests in the audit log", || async {
        let events = audit_events(&audit);
        let missing: Vec<&str> = WRITERS.iter().copied().filter(|n| users_of(&events, n).is_empty()).collect();
        if missing.is_empty() { Ok(events) } else { Err(format!("none yet from {missing:?}")) }
    })
    .await;
    for name in WRITERS {
        assert_eq!(
            users_of(&events, name),
            [format!("system:serviceaccount:kube-system:{name}")],
            "the users {name}'s client made requests as"
        );
    }
    for name in ROOT_CLIENTS {
        assert_eq!(users_of(&events, name), [ROOT_USER], "the users {name}'s client made requests as");
    }
    // RBAC's decision on each request (a create refused in a namespace
    // being deleted is a 403 too, but RBAC allowed it).
    let refused: Vec<String> = events
        .iter()
        .filter(|e| field(e, "/userAgent").starts_with("kcm-rs/"))
        .filter(|e| field(e, "/annotations/authorization.k8s.io~1decision") != "allow")
        .map(|e| {
            let (agent, verb, uri) = (field(e, "/userAgent"), field(e, "/verb"), field(e, "/requestURI"));
            format!("{agent} {verb} {uri} as {}", field(e, "/user/username"))
        })
        .collect();
    assert!(refused.is_empty(), "RBAC refused kcm-rs:\n{}", refused.join("\n"));
    for name in WRITERS {
        // A ClusterRole, or the Roles of the bootstrap signer and token cleaner.
        let role = format!("Role \"system:controller:{name}\"");
        let by_role = events.iter().any(|e| field(e, "/annotations/authorization.k8s.io~1reason").contains(&role));
        assert!(by_role, "no request of {name} allowed by its bootstrap role {role}");
    }

    // /metrics as upstream serves it: 403 without credentials or with a
    // token RBAC does not allow; 200 with one upstream's system:monitoring
    // role allows.
    assert_eq!(https_get(port, "/metrics").await.0, 403, "/metrics without credentials");
    let allowed = token_for(&bed, NS, "prometheus", Some("system:monitoring")).await;
    let denied = token_for(&bed, NS, "nobody", None).await;
    assert_eq!(get_with_token(port, "/metrics", &allowed).await, 200, "/metrics with system:monitoring's grant");
    assert_eq!(get_with_token(port, "/metrics", &denied).await, 403, "/metrics without a grant");

    // It says which of kubeadm's choices it does not act on; the two
    // controllers kubeadm adds to `*` run.
    let text = std::fs::read_to_string(&log).expect("kcm-rs's log");
    for named in ["persistentvolume-binder-controller", "--enable-hostpath-provisioner"] {
        assert!(text.contains(named), "kcm-rs's log does not name {named}:\n{text}");
    }
    let not_running = text.lines().find(|l| l.contains("controllers kcm-rs does not implement")).unwrap_or_default();
    for runs in ["bootstrap-signer-controller", "token-cleaner-controller"] {
        assert!(!not_running.contains(runs), "{runs} named as not running: {not_running}");
    }
    let forbidden: Vec<&str> =
        text.lines().filter(|l| l.to_lowercase().contains("forbidden") && !l.contains("being terminated")).collect();
    assert!(forbidden.is_empty(), "kcm-rs's log tells of refusals:\n{}", forbidden.join("\n"));
}

/// An identity that may not ask for tokens (`deploy/`'s `kube-system/kcm-rs`,
/// which has no `serviceaccounts/token` grant): the controller's requests
/// fail, naming its ServiceAccount, and are retried; kcm-rs keeps running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_request_fails_the_controllers_writes_naming_its_service_account() {
    let bed = crate::common::testbed::shared().await;
    let _turn = bed.turn().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("kcm-rs.log");
    let args = ["--use-service-account-credentials", "--controllers=deployment-controller"];
    let mut daemon = spawn_logged(&bed.kcm_rs, free_port(), &args, Some(&log));
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: refused-tokens}\nspec:\n  selector: \
                    {matchLabels: {app: refused-tokens}}\n  template: {metadata: {labels: {app: refused-tokens}}, \
                    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}\n";
    kubectl_ok_with_stdin(&bed.admin, &["-n", "default", "apply", "-f", "-"], manifest).await;

    let failed = "failed to get token for kube-system/deployment-controller";
    let waited = wait_for(&*bed, PATIENCE, "a sync failed for want of a token, twice", || async {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let retried = text.lines().filter(|l| l.contains("sync failed") && l.contains(failed)).count();
        when(retried >= 2, || format!("{retried} failed syncs naming the account; log:\n{text}"))
    })
    .await;
    kubectl_ok(&bed.admin, &["-n", "default", "delete", "deployment", "refused-tokens"]).await;
    assert!(matches!(daemon.try_wait(), Ok(None)), "kcm-rs exited: {:?}", daemon.try_wait());
    let text = std::fs::read_to_string(&log).expect("kcm-rs's log");
    assert!(!text.contains("panicked"), "kcm-rs panicked:\n{text}");
    waited
}
