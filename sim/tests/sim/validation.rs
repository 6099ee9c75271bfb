//! Validation as clients see it (422 Invalid, causes, message) for the
//! rules beyond a kind's spec: workload and namespace status writes, owner
//! references, finalizer names, node taints and pod tolerations, role
//! rules and aggregation rules.

use serde_json::json;

use super::util::{self, Answer, call, create, get, merge, workload};

// === utils ===

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICASETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const PODS: &str = "/api/v1/namespaces/default/pods";
const NODES: &str = "/api/v1/nodes";
const NAMESPACES: &str = "/api/v1/namespaces";

/// Asserts a 422 Invalid with `message`, and returns its causes as
/// `field: message` lines.
fn invalid(answer: &Answer, message: &str) -> Vec<String> {
    assert_eq!(answer.code(), 422, "{}", answer.body);
    let status = answer.json();
    assert_eq!(status["reason"], "Invalid", "{status}");
    assert_eq!(status["message"], message, "{status}");
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| format!("{}: {}", c["field"].as_str().unwrap_or(""), c["message"].as_str().unwrap_or("")))
        .collect()
}

// === status ===

#[tokio::test]
async fn replica_set_status_counts_are_validated() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(&client, REPLICASETS, &workload("ReplicaSet", "rs", 3)).await;
    let status = format!("{REPLICASETS}/rs/status");

    let answer =
        merge(&client, &status, json!({"status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2}})).await;
    assert_eq!(
        invalid(
            &answer,
            "ReplicaSet.apps \"rs\" is invalid: status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"
        ),
        ["status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"]
    );
    let answer = merge(
        &client,
        &status,
        json!({"status": {"replicas": 1, "fullyLabeledReplicas": 2, "observedGeneration": -1}}),
    )
    .await;
    assert_eq!(
        invalid(
            &answer,
            "ReplicaSet.apps \"rs\" is invalid: [status.observedGeneration: Invalid value: -1: must be greater than or \
             equal to 0, status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas]"
        ),
        [
            "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
            "status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas",
        ]
    );
    let answer = merge(&client, &status, json!({"status": {"replicas": 1, "terminatingReplicas": -1}})).await;
    invalid(
        &answer,
        "ReplicaSet.apps \"rs\" is invalid: status.terminatingReplicas: Invalid value: -1: must be greater than or equal to 0",
    );

    // A consistent status is stored, terminatingReplicas included.
    let answer = merge(
        &client,
        &status,
        json!({"status": {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 1,
            "observedGeneration": 1, "terminatingReplicas": 2}}),
    )
    .await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    let stored = get(&client, &format!("{REPLICASETS}/rs")).await.json();
    assert_eq!(
        (&stored["status"]["terminatingReplicas"], &stored["status"]["availableReplicas"]),
        (&json!(2), &json!(1))
    );
}

#[tokio::test]
async fn deployment_status_counts_and_collision_count_are_validated() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(&client, DEPLOYMENTS, &workload("Deployment", "web", 3)).await;
    let status = format!("{DEPLOYMENTS}/web/status");

    let answer = merge(
        &client,
        &status,
        json!({"status": {"replicas": 1, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}}),
    )
    .await;
    assert_eq!(
        invalid(
            &answer,
            "Deployment.apps \"web\" is invalid: status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas"
        ),
        ["status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas"]
    );
    let answer = merge(&client, &status, json!({"status": {"unavailableReplicas": -1}})).await;
    invalid(
        &answer,
        "Deployment.apps \"web\" is invalid: status.unavailableReplicas: Invalid value: -1: must be greater than or equal to 0",
    );

    let ok = merge(&client, &status, json!({"status": {"replicas": 3, "collisionCount": 2, "terminatingReplicas": 1}}))
        .await;
    assert_eq!(ok.code(), 200, "{}", ok.body);
    assert_eq!(ok.json()["status"]["terminatingReplicas"], 1);
    let answer = merge(&client, &status, json!({"status": {"collisionCount": 1}})).await;
    invalid(
        &answer,
        "Deployment.apps \"web\" is invalid: status.collisionCount: Invalid value: 1: cannot be decremented",
    );
    let answer = merge(&client, &status, json!({"status": {"collisionCount": null}})).await;
    invalid(
        &answer,
        "Deployment.apps \"web\" is invalid: status.collisionCount: Invalid value: 0: cannot be decremented",
    );
    let stored = get(&client, &format!("{DEPLOYMENTS}/web")).await.json();
    assert_eq!((&stored["status"]["collisionCount"], &stored["status"]["terminatingReplicas"]), (&json!(2), &json!(1)));
}

#[tokio::test]
async fn namespace_status_phase_follows_the_deletion_timestamp() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(&client, NAMESPACES, &json!({"metadata": {"name": "team"}})).await;
    let status = format!("{NAMESPACES}/team/status");

    let answer = merge(&client, &status, json!({"status": {"phase": "Terminating"}})).await;
    assert_eq!(
        invalid(
            &answer,
            "Namespace \"team\" is invalid: status.Phase: Invalid value: \"Terminating\": may only be 'Active' if \
             `deletionTimestamp` is empty"
        ),
        ["status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"]
    );
    // A main-resource write cannot change the phase at all.
    let answer = merge(&client, &format!("{NAMESPACES}/team"), json!({"status": {"phase": "Terminating"}})).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["status"]["phase"], "Active");

    let answer = call(&client, "DELETE", &format!("{NAMESPACES}/team"), &[], None).await;
    assert!(answer.status.is_success(), "{}", answer.body);
    let answer = merge(&client, &status, json!({"status": {"phase": "Active"}})).await;
    invalid(
        &answer,
        "Namespace \"team\" is invalid: status.Phase: Invalid value: \"Active\": may only be 'Terminating' if \
         `deletionTimestamp` is not empty",
    );
    let answer = merge(
        &client,
        &status,
        json!({"status": {"conditions": [{"type": "NamespaceContentRemaining",
        "status": "True"}]}}),
    )
    .await;
    assert_eq!(answer.code(), 200, "a Terminating namespace takes status writes: {}", answer.body);
}

#[tokio::test]
async fn pod_status_writes_keep_the_qos_class_and_check_conditions() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    // The kubelet stand-in leaves the pod's containers alone for an hour.
    let pod = json!({"metadata": {"name": "p", "annotations": {"kube-sim.io/start-delay": "1h"}},
        "spec": {"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "i"}]}});
    create(&client, PODS, &pod).await;
    let status = format!("{PODS}/p/status");

    let answer = merge(&client, &status, json!({"status": {"qosClass": "Guaranteed"}})).await;
    assert_eq!(
        invalid(&answer, "Pod \"p\" is invalid: status.qosClass: Invalid value: \"Guaranteed\": field is immutable"),
        ["status.qosClass: Invalid value: \"Guaranteed\": field is immutable"]
    );
    let answer =
        merge(&client, &status, json!({"status": {"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.9"}]}})).await;
    invalid(
        &answer,
        "Pod \"p\" is invalid: status.hostIPs[0].ip: Invalid value: \"10.0.0.9\": must be equal to `hostIP`",
    );
    let answer =
        merge(&client, &status, json!({"status": {"conditions": [{"type": "not valid", "status": "True"}]}})).await;
    assert_eq!(answer.code(), 422, "{}", answer.body);
    assert_eq!(answer.json()["details"]["causes"][0]["field"], "metadata.conditions[0].Type");

    // Under restartPolicy Never, a terminated container stays terminated.
    let done = json!({"status": {"containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": false,
        "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}]}});
    let answer = merge(&client, &status, done).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    let again = json!({"status": {"containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": true,
        "restartCount": 1, "state": {"running": {}}}]}});
    let answer = merge(&client, &status, again).await;
    invalid(
        &answer,
        "Pod \"p\" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
    );
}

// === metadata ===

#[tokio::test]
async fn owner_references_are_validated_on_create_and_update() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let owner = |kind: &str, name: &str, controller: bool| json!({"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": format!("{name}-uid"), "controller": controller});
    let two = json!({"metadata": {"name": "two", "ownerReferences": [
        owner("ReplicaSet", "a", true), owner("ReplicaSet", "b", false), owner("Deployment", "c", true)]}});
    let answer = call(&client, "POST", CONFIGMAPS, &[], Some(&two)).await;
    let shown = "[]v1.OwnerReference{\
        v1.OwnerReference{APIVersion:\"apps/v1\", Kind:\"ReplicaSet\", Name:\"a\", UID:\"a-uid\", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}, \
        v1.OwnerReference{APIVersion:\"apps/v1\", Kind:\"ReplicaSet\", Name:\"b\", UID:\"b-uid\", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}, \
        v1.OwnerReference{APIVersion:\"apps/v1\", Kind:\"Deployment\", Name:\"c\", UID:\"c-uid\", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}}";
    let detail = "Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/a and \
                  Deployment/c";
    assert_eq!(
        invalid(
            &answer,
            &format!("ConfigMap \"two\" is invalid: metadata.ownerReferences: Invalid value: {shown}: {detail}")
        ),
        [format!("metadata.ownerReferences: Invalid value: {shown}: {detail}")]
    );

    let incomplete = json!({"metadata": {"name": "incomplete", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Event", "name": "e"}]}});
    let answer = call(&client, "POST", CONFIGMAPS, &[], Some(&incomplete)).await;
    let event = "v1.OwnerReference{APIVersion:\"v1\", Kind:\"Event\", Name:\"e\", UID:\"\", Controller:(*bool)(nil), \
                 BlockOwnerDeletion:(*bool)(nil)}";
    assert_eq!(
        invalid(
            &answer,
            &format!(
                "ConfigMap \"incomplete\" is invalid: [metadata.ownerReferences.uid: Invalid value: \"\": must not be \
                 empty, metadata.ownerReferences: Invalid value: {event}: /v1, Kind=Event is disallowed from being an owner]"
            )
        ),
        [
            "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty".to_owned(),
            format!(
                "metadata.ownerReferences: Invalid value: {event}: /v1, Kind=Event is disallowed from being an owner"
            ),
        ]
    );

    // Updates are held to the same rules, on any kind.
    create(&client, PODS, &json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}))
        .await;
    let answer = merge(
        &client,
        &format!("{PODS}/p"),
        json!({"metadata": {"ownerReferences": [owner("ReplicaSet", "a", true), owner("ReplicaSet", "b", true)]}}),
    )
    .await;
    assert_eq!(answer.code(), 422, "{}", answer.body);
    assert!(
        answer.json()["message"].as_str().unwrap_or("").ends_with("ReplicaSet/a and ReplicaSet/b"),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn finalizer_names_are_validated_on_every_kind() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let bad = json!({"metadata": {"name": "bad", "finalizers": ["example.com/ok", "no/t/qualified"]}});
    let answer = call(&client, "POST", CONFIGMAPS, &[], Some(&bad)).await;
    let msg = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with \
               an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
               '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. \
               'example.com/MyName')";
    assert_eq!(
        invalid(
            &answer,
            &format!("ConfigMap \"bad\" is invalid: metadata.finalizers: Invalid value: \"no/t/qualified\": {msg}")
        ),
        [format!("metadata.finalizers: Invalid value: \"no/t/qualified\": {msg}")]
    );
    let both = json!({"metadata": {"name": "both", "finalizers": ["orphan", "foregroundDeletion"]}});
    let answer = call(&client, "POST", NAMESPACES, &[], Some(&both)).await;
    invalid(
        &answer,
        "Namespace \"both\" is invalid: metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: \
         finalizer orphan and foregroundDeletion cannot be both set",
    );
    // A name without a domain is accepted in metadata (upstream only warns).
    create(&client, CONFIGMAPS, &json!({"metadata": {"name": "plain", "finalizers": ["cleanup"]}})).await;
    let answer = merge(&client, &format!("{CONFIGMAPS}/plain"), json!({"metadata": {"finalizers": ["a/b/c"]}})).await;
    assert_eq!(answer.code(), 422, "updates too: {}", answer.body);
    // A namespace's spec.finalizers take the standard names.
    create(&client, NAMESPACES, &json!({"metadata": {"name": "std"}, "spec": {"finalizers": ["orphan"]}})).await;
}

// === scheduling ===

#[tokio::test]
async fn node_taints_are_validated_on_create_update_and_status() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let node = json!({"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}});
    let answer = call(&client, "POST", NODES, &[], Some(&node)).await;
    assert_eq!(
        invalid(
            &answer,
            "Node \"n1\" is invalid: metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \
             \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
        ),
        ["metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \
          \"PreferNoSchedule\", \"NoExecute\""]
    );
    create(
        &client,
        NODES,
        &json!({"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}),
    )
    .await;
    let twice = json!({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "x",
        "effect": "NoSchedule"}]}});
    let answer = merge(&client, &format!("{NODES}/n1"), twice).await;
    invalid(
        &answer,
        "Node \"n1\" is invalid: metadata.taints[1]: Duplicate value: core.Taint{Key:\"a\", Value:\"x\", \
         Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
    );
    let answer = merge(&client, &format!("{NODES}/n1"), json!({"spec": {"taints": [{"key": "a"}]}})).await;
    invalid(&answer, "Node \"n1\" is invalid: metadata.taints[0].effect: Required value");
    let addresses = json!({"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
        {"type": "InternalIP", "address": "10.0.0.1"}]}});
    let answer = merge(&client, &format!("{NODES}/n1/status"), addresses).await;
    invalid(
        &answer,
        "Node \"n1\" is invalid: status.addresses[1]: Duplicate value: core.NodeAddress{Type:\"InternalIP\", \
         Address:\"10.0.0.1\"}",
    );
}

#[tokio::test]
async fn tolerations_are_validated_on_pods_and_templates() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [
        {"key": "k", "operator": "Exists", "value": "v"},
        {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 10},
        {"operator": "Equal"},
        {"key": "k", "operator": "Gte"}]}});
    let answer = call(&client, "POST", PODS, &[], Some(&pod)).await;
    let causes = [
        "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
        "spec.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when \
         `tolerationSeconds` is set",
        "spec.tolerations[2].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which \
         means \"match all values and all keys\"",
        "spec.tolerations[3].operator: Unsupported value: \"Gte\": supported values: \"Equal\", \"Exists\"",
    ];
    assert_eq!(invalid(&answer, &format!("Pod \"p\" is invalid: [{}]", causes.join(", "))), causes);

    let mut deployment = workload("Deployment", "web", 3);
    deployment["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists", "value": "v"}]);
    let answer = call(&client, "POST", DEPLOYMENTS, &[], Some(&deployment)).await;
    invalid(
        &answer,
        "Deployment.apps \"web\" is invalid: spec.template.spec.tolerations[0].operator: Invalid value: \"v\": value \
         must be empty when `operator` is 'Exists'",
    );
    let mut rs = workload("ReplicaSet", "rs", 3);
    rs["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "bad key", "operator": "Exists"}]);
    let answer = call(&client, "POST", REPLICASETS, &[], Some(&rs)).await;
    assert_eq!(answer.code(), 422, "{}", answer.body);
    assert_eq!(answer.json()["details"]["causes"][0]["field"], "spec.template.spec.tolerations[0].key");
}

// === rbac ===

#[tokio::test]
async fn cluster_role_rules_and_aggregation_rules_are_validated() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    let empty = json!({"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": []}});
    let answer = call(&client, "POST", roles, &[], Some(&empty)).await;
    let required = "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required \
                    if aggregationRule is non-nil";
    assert_eq!(
        invalid(&answer, &format!("ClusterRole.rbac.authorization.k8s.io \"agg\" is invalid: {required}")),
        [required]
    );
    let aggregating = json!({"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}});
    create(&client, roles, &aggregating).await;
    // The aggregation controller's write: rules gathered from other roles.
    let rules = json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
    assert_eq!(merge(&client, &format!("{roles}/agg"), rules).await.code(), 200);
    let verbless = json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]});
    let answer = merge(&client, &format!("{roles}/agg"), verbless).await;
    let verbs = "rules[0].verbs: Required value: verbs must contain at least one value";
    assert_eq!(
        invalid(&answer, &format!("ClusterRole.rbac.authorization.k8s.io \"agg\" is invalid: {verbs}")),
        [verbs]
    );
}
