//! DaemonSets, StatefulSets and ControllerRevisions through kubectl, as a
//! user (or `kubectl rollout`) meets them on a cluster whose controllers
//! are not running: what the API server stores, prints and refuses.

use std::path::Path;

use kube_sim::testing::{kubeconfig, kubectl, kubectl_ok, kubectl_ok_with_stdin, kubectl_with_stdin};
use serde_json::{Value, json};

use super::util::{self, failure, get_json, table};

// === utils ===

/// A DaemonSet `agent` running `image`.
fn daemon_set_yaml(image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n    matchLabels: {{app: agent}}\n  \
         template:\n    metadata:\n      labels: {{app: agent}}\n    spec:\n      nodeSelector: {{role: edge}}\n      \
         containers:\n      - name: agent\n        image: {image}\n"
    )
}

/// A StatefulSet `db` of one replica with a claim template.
const STATEFUL_SET_YAML: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  \
    serviceName: db\n  selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    \
    spec:\n      containers:\n      - name: db\n        image: postgres:16\n  volumeClaimTemplates:\n  - metadata:\n      \
    name: data\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources:\n        requests:\n          storage: 1Gi\n";

/// Creates, as the DaemonSet or StatefulSet controller does, revision
/// `number` of `owner` (its current pod template, with `image`): named
/// `<owner>-<number>`, labelled as the pods, controlled by the owner, its
/// `data` the patch that restores the template.
async fn create_revision(sim: &kube_sim::Sim, owner: &Value, number: i64, image: &str) {
    let kind = owner["kind"].as_str().expect("kind");
    let name = owner["metadata"]["name"].as_str().expect("name");
    let mut template = owner["spec"]["template"].clone();
    template["spec"]["containers"][0]["image"] = json!(image);
    template["$patch"] = json!("replace");
    let revision = json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {
            "name": format!("{name}-{number}"),
            "labels": owner["spec"]["selector"]["matchLabels"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": name,
                "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}],
        },
        "data": {"spec": {"template": template}},
        "revision": number,
    });
    let client = sim.client().expect("client");
    util::create(&client, "/apis/apps/v1/namespaces/default/controllerrevisions", &revision).await;
}

/// `kubectl patch <what> --subresource=status` with a merge patch.
async fn patch_status(config: &Path, what: &[&str], status: Value) {
    let patch = json!({ "status": status }).to_string();
    let mut args = vec!["patch"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["--subresource=status", "--type=merge", "-p", &patch]);
    kubectl_ok(config, &args).await;
}

/// The template generation a DaemonSet carries.
fn template_generation(ds: &Value) -> &Value {
    &ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"]
}

// === tests ===

#[tokio::test]
async fn discovery_names_the_apps_kinds_as_upstream() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let rows = table(&kubectl_ok(&config, &["api-resources", "--api-group=apps", "--no-headers"]).await);
    let names: Vec<Vec<&str>> = rows.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
    assert_eq!(
        names,
        [
            vec!["controllerrevisions", "apps/v1", "true", "ControllerRevision"],
            vec!["daemonsets", "ds", "apps/v1", "true", "DaemonSet"],
            vec!["deployments", "deploy", "apps/v1", "true", "Deployment"],
            vec!["replicasets", "rs", "apps/v1", "true", "ReplicaSet"],
            vec!["statefulsets", "sts", "apps/v1", "true", "StatefulSet"],
        ]
    );
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &daemon_set_yaml("agent:1")).await;
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], STATEFUL_SET_YAML).await;
    let all = kubectl_ok(&config, &["get", "all", "-o", "name"]).await;
    assert!(all.contains("daemonset.apps/agent") && all.contains("statefulset.apps/db"), "{all}");
}

#[tokio::test]
async fn daemon_sets_are_defaulted_printed_and_keep_their_template_generation() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out = kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &daemon_set_yaml("agent:1")).await;
    assert_eq!(out.trim(), "daemonset.apps/agent created");
    let ds = get_json(&config, &["ds", "agent"]).await;
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!((&ds["spec"]["revisionHistoryLimit"], &ds["metadata"]["generation"]), (&json!(10), &json!(1)));
    assert_eq!(template_generation(&ds), "1");
    assert_eq!(ds["status"], json!({}), "reset on create");

    let rows = table(&kubectl_ok(&config, &["get", "ds"]).await);
    assert_eq!(
        rows,
        [
            ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE"]
                .map(String::from)
                .to_vec(),
            ["agent", "0", "0", "0", "0", "0", "role=edge", &rows[1][7]].map(String::from).to_vec(),
        ]
    );

    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &daemon_set_yaml("agent:2")).await;
    let updated = get_json(&config, &["ds", "agent"]).await;
    assert_eq!((template_generation(&updated), &updated["metadata"]["generation"]), (&json!("2"), &json!(2)));
    kubectl_ok(&config, &["annotate", "ds", "agent", "--overwrite", "deprecated.daemonset.template.generation=7"])
        .await;
    assert_eq!(template_generation(&get_json(&config, &["ds", "agent"]).await), "2", "the server's to keep");
    let garbled =
        kubectl(&config, &["annotate", "ds", "agent", "--overwrite", "deprecated.daemonset.template.generation=two"])
            .await;
    assert!(
        !garbled.ok && garbled.stderr.contains("strconv.ParseInt: parsing \"two\": invalid syntax"),
        "{}",
        failure(&garbled)
    );

    let moved = kubectl(
        &config,
        &["patch", "ds", "agent", "--type=merge", "-p", r#"{"spec":{"selector":{"matchLabels":{"app":"x"}}}}"#],
    )
    .await;
    assert!(!moved.ok, "{}", failure(&moved));
    assert!(
        moved.stderr.contains("The DaemonSet \"agent\" is invalid: ")
            && moved.stderr.contains("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"x\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"),
        "{}",
        failure(&moved)
    );
}

#[tokio::test]
async fn rollout_history_undo_restart_and_status_of_a_daemon_set() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &daemon_set_yaml("agent:1")).await;
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &daemon_set_yaml("agent:2")).await;
    let ds = get_json(&config, &["ds", "agent"]).await;
    create_revision(&sim, &ds, 1, "agent:1").await;
    create_revision(&sim, &ds, 2, "agent:2").await;

    let rows = table(&kubectl_ok(&config, &["get", "controllerrevisions"]).await);
    assert_eq!(rows[0], ["NAME", "CONTROLLER", "REVISION", "AGE"]);
    assert_eq!(
        (&rows[1][..3], &rows[2][..3]),
        (
            &["agent-1", "daemonset.apps/agent", "1"].map(String::from)[..],
            &["agent-2", "daemonset.apps/agent", "2"].map(String::from)[..]
        )
    );

    let history = table(&kubectl_ok(&config, &["rollout", "history", "ds/agent"]).await);
    assert_eq!(
        history[1..],
        [["REVISION", "CHANGE-CAUSE"], ["1", "<none>"], ["2", "<none>"]].map(|r| r.map(String::from).to_vec())
    );

    let out = kubectl_ok(&config, &["rollout", "undo", "ds/agent", "--to-revision=1"]).await;
    assert_eq!(out.trim(), "daemonset.apps/agent rolled back");
    let undone = get_json(&config, &["ds", "agent"]).await;
    assert_eq!(undone["spec"]["template"]["spec"]["containers"][0]["image"], "agent:1");
    assert_eq!((template_generation(&undone), &undone["metadata"]["generation"]), (&json!("3"), &json!(3)));

    let out = kubectl_ok(&config, &["rollout", "restart", "ds/agent"]).await;
    assert_eq!(out.trim(), "daemonset.apps/agent restarted");
    let restarted = get_json(&config, &["ds", "agent"]).await;
    assert!(
        restarted["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"].is_string(),
        "{restarted}"
    );
    assert_eq!(template_generation(&restarted), "4");

    let generation = restarted["metadata"]["generation"].clone();
    patch_status(
        &config,
        &["ds", "agent"],
        json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "updatedNumberScheduled": 2,
            "numberReady": 2, "numberAvailable": 2, "observedGeneration": generation}),
    )
    .await;
    let out = kubectl_ok(&config, &["rollout", "status", "ds/agent", "--timeout=10s"]).await;
    assert_eq!(out.trim(), "daemon set \"agent\" successfully rolled out");
    let rows = table(&kubectl_ok(&config, &["get", "ds", "agent", "--no-headers"]).await);
    assert_eq!(rows[0][..6], ["agent", "2", "2", "2", "2", "2"]);
}

#[tokio::test]
async fn stateful_sets_scale_refuse_fixed_fields_and_roll_out() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out = kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], STATEFUL_SET_YAML).await;
    assert_eq!(out.trim(), "statefulset.apps/db created");
    let sts = get_json(&config, &["sts", "db"]).await;
    assert_eq!(sts["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        sts["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}})
    );
    assert_eq!(
        sts["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    let claim = &sts["spec"]["volumeClaimTemplates"][0];
    assert_eq!(
        (&claim["kind"], &claim["spec"]["volumeMode"], &claim["status"]["phase"]),
        (&json!("PersistentVolumeClaim"), &json!("Filesystem"), &json!("Pending"))
    );

    let rows = table(&kubectl_ok(&config, &["get", "sts"]).await);
    assert_eq!(
        (&rows[0], &rows[1][..2]),
        (&["NAME", "READY", "AGE"].map(String::from).to_vec(), &["db", "0/1"].map(String::from)[..])
    );

    let out = kubectl_ok(&config, &["scale", "sts", "db", "--replicas=3"]).await;
    assert_eq!(out.trim(), "statefulset.apps/db scaled");
    let scale: Value = serde_json::from_str(
        &kubectl_ok(&config, &["get", "--raw", "/apis/apps/v1/namespaces/default/statefulsets/db/scale"]).await,
    )
    .expect("a Scale");
    assert_eq!((&scale["spec"]["replicas"], &scale["status"]["selector"]), (&json!(3), &json!("app=db")));
    assert_eq!(get_json(&config, &["sts", "db"]).await["metadata"]["generation"], 2);

    let renamed = kubectl(&config, &["patch", "sts", "db", "-p", r#"{"spec":{"serviceName":"other"}}"#]).await;
    assert!(!renamed.ok, "{}", failure(&renamed));
    assert!(
        renamed.stderr.contains(
            "The StatefulSet \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than \
             'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', \
             'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
        ),
        "{}",
        failure(&renamed)
    );

    let out = kubectl_ok(&config, &["rollout", "restart", "sts/db"]).await;
    assert_eq!(out.trim(), "statefulset.apps/db restarted");
    let restarted = get_json(&config, &["sts", "db"]).await;
    assert_eq!(restarted["metadata"]["generation"], 3);
    create_revision(&sim, &restarted, 1, "postgres:15").await;
    create_revision(&sim, &restarted, 2, "postgres:16").await;
    let out = kubectl_ok(&config, &["rollout", "undo", "sts/db", "--to-revision=1"]).await;
    assert_eq!(out.trim(), "statefulset.apps/db rolled back");
    let undone = get_json(&config, &["sts", "db"]).await;
    assert_eq!(undone["spec"]["template"]["spec"]["containers"][0]["image"], "postgres:15");

    patch_status(
        &config,
        &["sts", "db"],
        json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3,
            "updatedReplicas": 3, "currentRevision": "db-1", "updateRevision": "db-1",
            "observedGeneration": undone["metadata"]["generation"]}),
    )
    .await;
    let after = get_json(&config, &["sts", "db"]).await;
    assert_eq!(
        (&after["spec"], &after["metadata"]["generation"]),
        (&undone["spec"], &undone["metadata"]["generation"])
    );
    let out = kubectl_ok(&config, &["rollout", "status", "sts/db", "--timeout=10s"]).await;
    assert!(out.contains("partitioned roll out complete: 3 new pods have been updated"), "{out}");
    let rows = table(&kubectl_ok(&config, &["get", "sts", "db", "--no-headers"]).await);
    assert_eq!(rows[0][1], "3/3");
}

#[tokio::test]
async fn controller_revision_data_is_immutable() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &daemon_set_yaml("agent:1")).await;
    let ds = get_json(&config, &["ds", "agent"]).await;
    create_revision(&sim, &ds, 1, "agent:1").await;
    kubectl_ok(&config, &["label", "controllerrevision", "agent-1", "note=kept"]).await;
    let changed =
        kubectl(&config, &["patch", "controllerrevision", "agent-1", "--type=merge", "-p", r#"{"data":{"a":1}}"#])
            .await;
    assert!(!changed.ok, "{}", failure(&changed));
    assert!(
        changed
            .stderr
            .contains("The ControllerRevision \"agent-1\" is invalid: data: Invalid value: runtime.RawExtension{")
            && changed.stderr.contains("field is immutable"),
        "{}",
        failure(&changed)
    );
    let missing = kubectl_with_stdin(
        &config,
        &["create", "-f", "-"],
        Some("apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: empty\nrevision: 1\n"),
    )
    .await;
    assert!(
        !missing.ok
            && missing
                .stderr
                .contains("The ControllerRevision \"empty\" is invalid: data: Required value: data is mandatory"),
        "{}",
        failure(&missing)
    );
}
