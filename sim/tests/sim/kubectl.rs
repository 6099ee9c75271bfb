//! The real kubectl against kube-sim: what a user types, and what they see.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube_sim::testing::{kubeconfig, kubectl, kubectl_ok, kubectl_ok_with_stdin, kubectl_running, kubectl_with_stdin};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::util::{self, DEADLINE, failure, get_json, table};

// === utils ===

fn deployment_yaml(replicas: u32, image: &str, labels: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {labels}\n\
         spec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      \
         labels: {{app: web}}\n    spec:\n      containers:\n      - name: app\n        image: {image}\n"
    )
}

// === tests ===

/// kubectl at the targeted release, against kube-sim: both sides say 1.37.
#[tokio::test]
async fn kubectl_version_is_1_37_on_both_sides() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let v: Value = serde_json::from_str(&kubectl_ok(&config, &["version", "-o", "json"]).await).expect("json");
    let side = |s: &str| (v[s]["major"].as_str().map(str::to_owned), v[s]["minor"].as_str().map(str::to_owned));
    let want = (Some("1".to_owned()), Some("37".to_owned()));
    assert_eq!(side("serverVersion"), want, "{v}");
    assert_eq!(
        side("clientVersion"),
        want,
        "the tests drive kube-sim with kubectl 1.37 (scripts/test installs it): {v}"
    );
}

#[tokio::test]
async fn get_nodes_shows_three_ready_nodes() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let rows = table(&kubectl_ok(&config, &["get", "nodes"]).await);
    assert_eq!(rows[0], ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
    let nodes: Vec<(&str, &str)> = rows[1..].iter().map(|r| (r[0].as_str(), r[1].as_str())).collect();
    assert_eq!(nodes, [("node-1", "Ready"), ("node-2", "Ready"), ("node-3", "Ready")]);
    assert!(rows[1..].iter().all(|r| r[4] == kube_sim::api::KUBERNETES_VERSION), "{rows:?}");
}

#[tokio::test]
async fn run_gives_a_pod_that_is_scheduled_and_becomes_ready() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out = kubectl_ok(&config, &["run", "web", "--image=nginx"]).await;
    assert_eq!(out.trim(), "pod/web created");
    let out = kubectl_ok(&config, &["wait", "--for=condition=Ready", "pod/web", "--timeout=20s"]).await;
    assert_eq!(out.trim(), "pod/web condition met");
    let rows = table(&kubectl_ok(&config, &["get", "pods", "-o", "wide"]).await);
    assert_eq!(&rows[0][..4], ["NAME", "READY", "STATUS", "RESTARTS"]);
    let web = &rows[1];
    assert_eq!(&web[..3], ["web", "1/1", "Running"], "{rows:?}");
    assert!(web[5].starts_with("10.244."), "IP column: {rows:?}");
    assert!(web[6].starts_with("node-"), "NODE column: {rows:?}");
}

#[tokio::test]
async fn create_from_stdin_then_get_as_json() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {team: a}\n\
                    data:\n  mode: fast\n";
    let out = kubectl_ok_with_stdin(&config, &["create", "-f", "-"], manifest).await;
    assert_eq!(out.trim(), "configmap/settings created");
    let cm = get_json(&config, &["configmap", "settings"]).await;
    assert_eq!(cm["kind"], "ConfigMap");
    assert_eq!(cm["data"]["mode"], "fast");
    assert_eq!(cm["metadata"]["labels"]["team"], "a");
    assert!(cm["metadata"]["uid"].is_string() && cm["metadata"]["resourceVersion"].is_string(), "{cm}");
    let again = kubectl_with_stdin(&config, &["create", "-f", "-"], Some(manifest)).await;
    assert!(!again.ok && again.stderr.contains("AlreadyExists"), "{}", failure(&again));
}

#[tokio::test]
async fn apply_creates_then_updates_bumping_generation_on_spec_and_annotation_changes_only() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out =
        kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1.27", "{app: web}")).await;
    assert_eq!(out.trim(), "deployment.apps/web created");
    let created = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(
        created["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string(),
        "{created}"
    );

    let out =
        kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1.28", "{app: web}")).await;
    assert_eq!(out.trim(), "deployment.apps/web configured");
    let updated = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(updated["metadata"]["generation"], 2);
    assert_eq!(updated["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.28");

    let out = kubectl_ok_with_stdin(
        &config,
        &["apply", "-f", "-"],
        &deployment_yaml(2, "nginx:1.28", "{app: web, tier: front}"),
    )
    .await;
    assert_eq!(out.trim(), "deployment.apps/web configured");
    let relabelled = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(relabelled["metadata"]["labels"]["tier"], "front");
    // apply rewrote its last-applied annotation, and a Deployment's
    // annotations count as spec (upstream's deployment strategy).
    assert_eq!(relabelled["metadata"]["generation"], 3, "the annotation changed");
    kubectl_ok(&config, &["label", "deployment", "web", "team=a"]).await;
    let labelled = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(labelled["metadata"]["generation"], 3, "a label is not spec");

    let out = kubectl_ok_with_stdin(
        &config,
        &["apply", "-f", "-"],
        &deployment_yaml(2, "nginx:1.28", "{app: web, tier: front}"),
    )
    .await;
    assert_eq!(out.trim(), "deployment.apps/web unchanged");
}

#[tokio::test]
async fn scale_sets_replicas_and_bumps_generation() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1.27", "{app: web}")).await;
    let out = kubectl_ok(&config, &["scale", "deployment", "web", "--replicas=5"]).await;
    assert_eq!(out.trim(), "deployment.apps/web scaled");
    let scaled = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(scaled["spec"]["replicas"], 5);
    assert_eq!(scaled["metadata"]["generation"], 2);
    // With a precondition that no longer holds, scale is refused.
    let stale = kubectl(&config, &["scale", "deployment", "web", "--current-replicas=2", "--replicas=3"]).await;
    assert!(!stale.ok, "{}", failure(&stale));
}

#[tokio::test]
async fn label_adds_overwrites_and_removes_labels() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["run", "web", "--image=nginx"]).await;
    assert_eq!(kubectl_ok(&config, &["label", "pod", "web", "color=blue"]).await.trim(), "pod/web labeled");
    let refused = kubectl(&config, &["label", "pod", "web", "color=red"]).await;
    assert!(!refused.ok && refused.stderr.contains("already has a value"), "{}", failure(&refused));
    kubectl_ok(&config, &["label", "pod", "web", "color=red", "--overwrite"]).await;
    let rows = table(&kubectl_ok(&config, &["get", "pods", "-l", "color=red", "-L", "color"]).await);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[1][0].as_str(), rows[1].last().map(String::as_str)), ("web", Some("red")));
    kubectl_ok(&config, &["label", "pod", "web", "color-"]).await;
    let pod = get_json(&config, &["pod", "web"]).await;
    assert!(pod["metadata"]["labels"].get("color").is_none(), "{pod}");
    assert_eq!(pod["metadata"]["labels"]["run"], "web");
}

#[tokio::test]
async fn merge_patches_of_the_object_and_of_its_status_are_kept_apart() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1.27", "{app: web}")).await;
    let out =
        kubectl_ok(&config, &["patch", "deployment", "web", "--type=merge", "-p", r#"{"spec":{"paused":true}}"#]).await;
    assert_eq!(out.trim(), "deployment.apps/web patched");
    let patched = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(patched["spec"]["paused"], true);
    assert_eq!(patched["metadata"]["generation"], 2);

    let status = r#"{"status":{"observedGeneration":2,"replicas":2,"readyReplicas":1}}"#;
    kubectl_ok(&config, &["patch", "deployment", "web", "--subresource=status", "--type=merge", "-p", status]).await;
    let after = get_json(&config, &["deployment", "web"]).await;
    assert_eq!(after["status"]["replicas"], 2);
    assert_eq!(after["status"]["readyReplicas"], 1);
    assert_eq!(after["metadata"]["generation"], 2, "a status write is not a spec change");
    // A status patch leaves the spec alone, and the main resource ignores status.
    let sneaky = r#"{"spec":{"replicas":9},"status":{"replicas":3}}"#;
    kubectl_ok(&config, &["patch", "deployment", "web", "--subresource=status", "--type=merge", "-p", sneaky]).await;
    kubectl_ok(&config, &["patch", "deployment", "web", "--type=merge", "-p", r#"{"status":{"replicas":7}}"#]).await;
    let last = get_json(&config, &["deployment", "web"]).await;
    assert_eq!((last["spec"]["replicas"].as_i64(), last["status"]["replicas"].as_i64()), (Some(2), Some(3)), "{last}");
}

#[tokio::test]
async fn replace_with_a_stale_object_is_a_conflict() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1.27", "{app: web}")).await;
    let stale = kubectl_ok(&config, &["get", "deployment", "web", "-o", "yaml"]).await;
    kubectl_ok(&config, &["label", "deployment", "web", "touched=yes"]).await;
    let out = kubectl_with_stdin(&config, &["replace", "-f", "-"], Some(&stale)).await;
    assert!(!out.ok, "{}", failure(&out));
    assert!(
        out.stderr.contains("Conflict") && out.stderr.contains("the object has been modified"),
        "{}",
        failure(&out)
    );
    let fresh = kubectl_ok(&config, &["get", "deployment", "web", "-o", "yaml"]).await;
    let out = kubectl_ok_with_stdin(&config, &["replace", "-f", "-"], &fresh.replace("nginx:1.27", "nginx:1.28")).await;
    assert_eq!(out.trim(), "deployment.apps/web replaced");
}

#[tokio::test]
async fn delete_waits_until_the_pod_is_gone() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["run", "web", "--image=nginx"]).await;
    kubectl_ok(&config, &["wait", "--for=condition=Ready", "pod/web", "--timeout=20s"]).await;
    let out = kubectl_ok(&config, &["delete", "pod", "web", "--wait=true", "--timeout=20s"]).await;
    assert_eq!(out.trim(), r#"pod "web" deleted from default namespace"#);
    // Gone by the time kubectl returns, not merely terminating.
    let pods: kube::Api<Pod> = kube::Api::namespaced(sim.client().expect("client"), "default");
    assert!(pods.get_opt("web").await.expect("read").is_none());
    let gone = kubectl(&config, &["get", "pod", "web"]).await;
    assert!(!gone.ok && gone.stderr.contains("NotFound"), "{}", failure(&gone));
}

#[tokio::test]
async fn get_pods_watch_shows_a_pod_appear_and_start() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["run", "first", "--image=nginx"]).await;
    let mut child = kubectl_running(&config, &["get", "pods", "-w", "--request-timeout=60s"]);
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let mut seen = Vec::new();
    let mut next_line = async || {
        let line = tokio::time::timeout(DEADLINE, lines.next_line()).await;
        match line {
            Ok(Ok(Some(line))) => line,
            other => panic!("kubectl get -w: no more output ({other:?})"),
        }
    };
    // The listing first: header and the existing pod.
    loop {
        let line = next_line().await;
        seen.push(line.clone());
        if line.starts_with("first ") {
            break;
        }
    }
    assert!(seen[0].starts_with("NAME "), "{seen:?}");
    kubectl_ok(&config, &["run", "second", "--image=nginx"]).await;
    let mut second = Vec::new();
    loop {
        let row: Vec<String> = next_line().await.split_whitespace().map(str::to_owned).collect();
        if row.first().map(String::as_str) != Some("second") {
            continue;
        }
        let done = row[1] == "1/1" && row[2] == "Running";
        second.push(row[2].clone());
        if done {
            break;
        }
    }
    child.start_kill().expect("kubectl stopped");
    let _ = child.wait().await;
    assert_eq!(second.first().map(String::as_str), Some("Pending"), "{second:?}");
    assert_eq!(second.last().map(String::as_str), Some("Running"), "{second:?}");
}

#[tokio::test]
async fn describe_pod_shows_node_state_conditions_and_tolerations() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["run", "web", "--image=nginx", "--labels=app=web"]).await;
    kubectl_ok(&config, &["wait", "--for=condition=Ready", "pod/web", "--timeout=20s"]).await;
    let out = kubectl_ok(&config, &["describe", "pod", "web"]).await;
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")).map(|v| v.trim().to_owned()))
            .unwrap_or_else(|| panic!("no {name:?} in:\n{out}"))
    };
    assert_eq!(field("Name"), "web");
    assert_eq!(field("Namespace"), "default");
    assert_eq!(field("Status"), "Running");
    assert!(field("Node").starts_with("node-"), "{out}");
    assert!(field("IP").starts_with("10.244."), "{out}");
    assert_eq!(field("Labels"), "app=web");
    assert_eq!(field("QoS Class"), "BestEffort");
    assert!(out.contains("node.kubernetes.io/not-ready:NoExecute op=Exists for 300s"), "{out}");
    let ready = out.lines().find(|l| l.trim_start().starts_with("Ready ")).unwrap_or("");
    assert!(ready.contains("True"), "{out}");
}

#[tokio::test]
async fn get_all_lists_pods_and_deployments() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["run", "solo", "--image=nginx"]).await;
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1.27", "{app: web}")).await;
    let rows = table(&kubectl_ok(&config, &["get", "all"]).await);
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert!(names.contains(&"pod/solo"), "{rows:?}");
    assert!(names.contains(&"deployment.apps/web"), "{rows:?}");
}

#[tokio::test]
async fn explain_reads_the_openapi_schema() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out = kubectl_ok(&config, &["explain", "deployment.spec.replicas"]).await;
    assert!(out.contains("KIND:       Deployment") && out.contains("VERSION:    v1"), "{out}");
    assert!(out.contains("FIELD: replicas <integer>"), "{out}");
    assert!(out.contains("Number of desired pods"), "{out}");
}

/// Generator commands send protobuf request bodies.
#[tokio::test]
async fn create_deployment_makes_a_deployment() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out = kubectl_ok(&config, &["create", "deployment", "web", "--image=nginx:1.27", "--replicas=3"]).await;
    assert_eq!(out.trim(), "deployment.apps/web created");
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(sim.client().expect("client"), "default");
    let web = deployments.get("web").await.expect("deployment web");
    let spec = web.spec;
    assert_eq!(spec.replicas, Some(3));
    let containers = spec.template.spec.expect("pod spec").containers;
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1.27"));
    assert_eq!(web.metadata.labels.and_then(|l| l.get("app").cloned()).as_deref(), Some("web"));
}

/// A ReplicaSet shaped as the deployment controller writes it for
/// Deployment `web` (uid `owner`): revision `revision`, image `image`.
fn owned_replica_set(owner: &str, hash: &str, revision: u32, image: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-{hash}\n  \
         labels: {{app: web, pod-template-hash: {hash}}}\n  annotations:\n    \
         deployment.kubernetes.io/revision: \"{revision}\"\n    deployment.kubernetes.io/desired-replicas: \"2\"\n    \
         deployment.kubernetes.io/max-replicas: \"3\"\n  ownerReferences:\n  - {{apiVersion: apps/v1, kind: Deployment, \
         name: web, uid: {owner}, controller: true, blockOwnerDeletion: true}}\nspec:\n  replicas: {replicas}\n  \
         selector:\n    matchLabels: {{app: web, pod-template-hash: {hash}}}\n  template:\n    metadata:\n      \
         labels: {{app: web, pod-template-hash: {hash}}}\n    spec:\n      containers:\n      - name: app\n        \
         image: {image}\n"
    )
}

/// `kubectl rollout` reads the ReplicaSets a deployment controller made
/// and patches or watches the Deployment: the objects are made by hand
/// here, as a controller would.
#[tokio::test]
async fn rollout_history_undo_pause_resume_and_status_work_on_hand_made_revisions() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &deployment_yaml(2, "nginx:1", "{app: web}")).await;
    let uid = kubectl_ok(&config, &["get", "deploy", "web", "-o", "jsonpath={.metadata.uid}"]).await;
    kubectl_ok_with_stdin(&config, &["create", "-f", "-"], &owned_replica_set(&uid, "aaaa", 1, "nginx:1", 0)).await;
    kubectl_ok_with_stdin(&config, &["create", "-f", "-"], &owned_replica_set(&uid, "bbbb", 2, "nginx:2", 2)).await;
    let out = kubectl_ok(&config, &["set", "image", "deploy/web", "app=nginx:2"]).await;
    assert_eq!(out.trim(), "deployment.apps/web image updated");

    let rows = table(&kubectl_ok(&config, &["rollout", "history", "deploy/web"]).await);
    assert_eq!(rows[1..], [["REVISION", "CHANGE-CAUSE"], ["1", "<none>"], ["2", "<none>"]], "{rows:?}");
    let one = kubectl_ok(&config, &["rollout", "history", "deploy/web", "--revision=1"]).await;
    assert!(one.contains("Image:\tnginx:1"), "{one}");

    let out = kubectl_ok(&config, &["rollout", "undo", "deploy/web"]).await;
    assert_eq!(out.trim(), "deployment.apps/web rolled back");
    let template = get_json(&config, &["deploy", "web"]).await["spec"]["template"].clone();
    assert_eq!(template["spec"]["containers"][0]["image"], "nginx:1");
    assert_eq!(template["metadata"]["labels"], serde_json::json!({"app": "web"}), "the hash label is not copied");

    assert_eq!(kubectl_ok(&config, &["rollout", "pause", "deploy/web"]).await.trim(), "deployment.apps/web paused");
    assert_eq!(get_json(&config, &["deploy", "web"]).await["spec"]["paused"], true);
    let refused = kubectl(&config, &["rollout", "undo", "deploy/web"]).await;
    assert!(!refused.ok && refused.stderr.contains("you cannot rollback a paused deployment"), "{}", failure(&refused));
    assert_eq!(kubectl_ok(&config, &["rollout", "resume", "deploy/web"]).await.trim(), "deployment.apps/web resumed");
    assert!(get_json(&config, &["deploy", "web"]).await["spec"].get("paused").is_none_or(|p| p == false));

    // rollout status watches: it waits while the status lags, and ends
    // when a status write says the rollout is complete.
    let mut child = kubectl_running(&config, &["rollout", "status", "deploy/web", "--timeout=60s"]);
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let first = tokio::time::timeout(DEADLINE, lines.next_line()).await.expect("kubectl waits").expect("output");
    assert!(first.as_deref().is_some_and(|l| l.starts_with("Waiting for deployment")), "{first:?}");
    let generation = get_json(&config, &["deploy", "web"]).await["metadata"]["generation"].clone();
    let status = serde_json::json!({"status": {"observedGeneration": generation, "replicas": 2, "updatedReplicas": 2,
        "readyReplicas": 2, "availableReplicas": 2}});
    kubectl_ok(&config, &["patch", "deploy", "web", "--subresource=status", "--type=merge", "-p", &status.to_string()])
        .await;
    let mut rest = Vec::new();
    while let Ok(Ok(Some(line))) = tokio::time::timeout(DEADLINE, lines.next_line()).await {
        rest.push(line);
    }
    let out = tokio::time::timeout(DEADLINE, child.wait_with_output()).await.expect("kubectl ends").expect("ran");
    assert!(out.status.success(), "{:?} {rest:?} {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert_eq!(rest.last().map(String::as_str), Some("deployment \"web\" successfully rolled out"), "{rest:?}");

    // A Progressing condition with ProgressDeadlineExceeded fails it.
    kubectl_ok(&config, &["scale", "deploy", "web", "--replicas=3"]).await;
    let generation = get_json(&config, &["deploy", "web"]).await["metadata"]["generation"].clone();
    let stuck = serde_json::json!({"status": {"observedGeneration": generation, "conditions": [{"type": "Progressing", "status": "False",
        "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet \"web-aaaa\" has timed out progressing."}]}});
    kubectl_ok(&config, &["patch", "deploy", "web", "--subresource=status", "--type=merge", "-p", &stuck.to_string()])
        .await;
    let out = kubectl(&config, &["rollout", "status", "deploy/web", "--timeout=60s"]).await;
    assert!(!out.ok && out.stderr.contains("deployment \"web\" exceeded its progress deadline"), "{}", failure(&out));
}

/// A ServiceAccount, ClusterRole + binding, Role + binding and a
/// PodDisruptionBudget, as an operator's manifests hold them.
const RBAC_AND_PDB: &str = "\
apiVersion: v1
kind: ServiceAccount
metadata: {name: ctl, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: 'ctl:reader'}
rules:
- {apiGroups: [''], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: 'ctl:reader'}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: 'ctl:reader'}
subjects:
- {kind: ServiceAccount, name: ctl, namespace: kube-system}
- {kind: User, name: alice}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lease, namespace: kube-system}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], resourceNames: [ctl], verbs: [get, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lease, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lease}
subjects:
- {kind: Group, name: ops}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: ctl, namespace: kube-system}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: ctl}}
";

#[tokio::test]
async fn rbac_and_pod_disruption_budgets_apply_and_print_as_on_a_cluster() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let dry = kubectl_ok_with_stdin(&config, &["apply", "--dry-run=server", "-f", "-"], RBAC_AND_PDB).await;
    assert!(dry.contains("clusterrole.rbac.authorization.k8s.io/ctl:reader created (server dry run)"), "{dry}");
    let none = kubectl(&config, &["get", "clusterrole", "ctl:reader"]).await;
    assert!(!none.ok && none.stderr.contains("NotFound"), "a dry run stores nothing: {}", failure(&none));

    let applied = kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], RBAC_AND_PDB).await;
    for line in [
        "serviceaccount/ctl created",
        "clusterrole.rbac.authorization.k8s.io/ctl:reader created",
        "clusterrolebinding.rbac.authorization.k8s.io/ctl:reader created",
        "role.rbac.authorization.k8s.io/lease created",
        "rolebinding.rbac.authorization.k8s.io/lease created",
        "poddisruptionbudget.policy/ctl created",
    ] {
        assert!(applied.contains(line), "{line:?} missing from:\n{applied}");
    }
    let again = kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], RBAC_AND_PDB).await;
    // (The bindings whose User and Group subjects got their apiGroup
    // defaulted are patched again, their subjects being an atomic list;
    // so is the PodDisruptionBudget, whose `spec.selector` has the
    // `replace` patch strategy: kubectl's patch always carries it.)
    for unchanged in [
        "serviceaccount/ctl",
        "clusterrole.rbac.authorization.k8s.io/ctl:reader",
        "role.rbac.authorization.k8s.io/lease",
    ] {
        assert!(again.contains(&format!("{unchanged} unchanged")), "{again}");
    }
    assert!(again.contains("poddisruptionbudget.policy/ctl configured"), "{again}");

    let bindings = table(&kubectl_ok(&config, &["get", "clusterrolebinding", "ctl:reader", "-o", "wide"]).await);
    assert_eq!(bindings[0], ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]);
    assert_eq!(bindings[1][..2], ["ctl:reader", "ClusterRole/ctl:reader"]);
    assert_eq!(bindings[1][3..], ["alice", "kube-system/ctl"]);
    let pdb = table(&kubectl_ok(&config, &["get", "pdb", "-n", "kube-system"]).await);
    assert_eq!(pdb[0], ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]);
    assert_eq!(pdb[1][..4], ["ctl", "N/A", "1", "0"]);
    let roles = table(&kubectl_ok(&config, &["get", "roles", "-n", "kube-system"]).await);
    assert_eq!(roles[0], ["NAME", "CREATED", "AT"]);
    assert_eq!(roles[1][0], "lease");

    // Defaulting: each subject's apiGroup, as the API server sets it.
    let binding = get_json(&config, &["clusterrolebinding", "ctl:reader"]).await;
    assert_eq!(binding["subjects"][0].get("apiGroup"), None, "the core group is left out");
    assert_eq!(binding["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
}

#[tokio::test]
async fn invalid_pod_disruption_budgets_and_rbac_names_are_refused() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let both = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: x}\n\
                spec: {minAvailable: 1, maxUnavailable: 150%}\n";
    let out = kubectl_with_stdin(&config, &["create", "-f", "-"], Some(both)).await;
    assert!(!out.ok, "{}", failure(&out));
    for (field, message) in [
        ("spec.minAvailable", "minAvailable and maxUnavailable cannot be both set"),
        ("spec.maxUnavailable", "must not be greater than 100%"),
    ] {
        let line =
            out.stderr.lines().find(|l| l.contains(field)).unwrap_or_else(|| panic!("{field}: {}", failure(&out)));
        assert!(line.ends_with(message), "{line}");
    }
    let slash = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: '..'}\n";
    let out = kubectl_with_stdin(&config, &["create", "-f", "-"], Some(slash)).await;
    assert!(
        !out.ok && out.stderr.contains("metadata.name: Invalid value: \"..\": may not be '..'"),
        "{}",
        failure(&out)
    );
}

const ENDPOINT_SLICE: &str = "\
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports:
- {name: http, port: 80}
- {name: metrics, port: 9090, protocol: TCP}
endpoints:
- addresses: [10.244.0.5]
  conditions: {ready: true}
  nodeName: node-1
  deprecatedTopology: {kubernetes.io/hostname: node-1}
- addresses: [10.244.1.7]
";

#[tokio::test]
async fn endpoint_slices_apply_print_and_keep_their_address_type() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let applied = kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], ENDPOINT_SLICE).await;
    assert!(applied.contains("endpointslice.discovery.k8s.io/web-abcde created"), "{applied}");
    let rows = table(&kubectl_ok(&config, &["get", "endpointslices"]).await);
    assert_eq!(rows[0], ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]);
    assert_eq!(rows[1][..4], ["web-abcde", "IPv4", "80,9090", "10.244.0.5,10.244.1.7"]);

    // Defaulted port name and protocol; the v1 API drops deprecatedTopology.
    let slice = get_json(&config, &["endpointslice", "web-abcde"]).await;
    assert_eq!(slice["ports"][0], serde_json::json!({"name": "http", "port": 80, "protocol": "TCP"}));
    assert_eq!(slice["endpoints"][0].get("deprecatedTopology"), None);
    assert_eq!(slice["metadata"]["generation"], 1);

    // A label change bumps the generation, as the endpoints do.
    kubectl_ok(&config, &["label", "endpointslice", "web-abcde", "endpointslice.kubernetes.io/managed-by=me"]).await;
    let slice = get_json(&config, &["endpointslice", "web-abcde"]).await;
    assert_eq!(slice["metadata"]["generation"], 2);

    let fqdn = ENDPOINT_SLICE.replace("addressType: IPv4", "addressType: FQDN").replace("10.244.", "web.x");
    let out = kubectl_with_stdin(&config, &["apply", "-f", "-"], Some(&fqdn)).await;
    assert!(
        !out.ok && out.stderr.contains("addressType: Invalid value: \"FQDN\": field is immutable"),
        "{}",
        failure(&out)
    );
    let bad = ENDPOINT_SLICE.replace("web-abcde", "web-bad").replace("10.244.1.7", "127.0.0.1");
    let out = kubectl_with_stdin(&config, &["create", "-f", "-"], Some(&bad)).await;
    assert!(
        !out.ok
            && out.stderr.contains(
                "The EndpointSlice \"web-bad\" is invalid: endpoints[1].addresses[0]: Invalid value: \
                 \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
            ),
        "{}",
        failure(&out)
    );
}
