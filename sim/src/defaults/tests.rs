//! Tests of server-side defaulting: each kind's defaults, checked against
//! what a real API server stores, and idempotence.

use super::*;

// === utils ===

/// What `kubectl create deployment web --image=nginx` sends.
fn kubectl_create_deployment() -> Value {
    json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "web", "creationTimestamp": null, "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}
            },
            "strategy": {}
        },
        "status": {}
    })
}

/// What `kubectl run web --image=nginx` sends.
fn kubectl_run_pod() -> Value {
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "web", "creationTimestamp": null, "labels": {"run": "web"}},
        "spec": {
            "containers": [{"name": "web", "image": "nginx", "resources": {}}],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always"
        },
        "status": {}
    })
}

fn defaulted(kind: Builtin, mut object: Value) -> Value {
    apply(kind, &mut object);
    object
}

// === tests ===

#[test]
fn deployment_spec_equals_what_a_real_cluster_stores() {
    // `kubectl get deploy web -o json` on a real cluster right after
    // `kubectl create deployment web --image=nginx` (spec only; metadata
    // and status are the store's and the controller's).
    let stored_spec = json!({
        "progressDeadlineSeconds": 600,
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            "type": "RollingUpdate"
        },
        "template": {
            "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {
                "containers": [{
                    "image": "nginx",
                    "imagePullPolicy": "Always",
                    "name": "nginx",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File"
                }],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30
            }
        }
    });
    let object = defaulted(Builtin::Deployment, kubectl_create_deployment());
    assert_eq!(object["spec"], stored_spec);
}

#[test]
fn pod_spec_equals_what_a_real_cluster_shows_for_kubectl_run() {
    // `kubectl get pod web -o json` after `kubectl run web --image=nginx`,
    // without the scheduler's nodeName and the service account token
    // volume (not emulated).
    let shown_spec = json!({
        "containers": [{
            "image": "nginx",
            "imagePullPolicy": "Always",
            "name": "web",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"
        }],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": true,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
             "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
             "operator": "Exists", "tolerationSeconds": 300}
        ]
    });
    let object = defaulted(Builtin::Pod, kubectl_run_pod());
    assert_eq!(object["spec"], shown_spec);
}

#[test]
fn defaulting_is_idempotent() {
    let cases = [
        (Builtin::Deployment, kubectl_create_deployment()),
        (Builtin::Pod, kubectl_run_pod()),
        (
            Builtin::ReplicaSet,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a:1",
                "ports": [{"containerPort": 80}],
                "livenessProbe": {"httpGet": {"port": 80}}}],
                "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "s"}}]}}}}),
        ),
        (
            Builtin::Pod,
            json!({"spec": {"hostNetwork": true, "serviceAccount": "builder",
                "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "a", "image": "a@sha256:00",
                "resources": {"limits": {"cpu": "1"}}, "ports": [{"containerPort": 8080}]}]}}),
        ),
        (
            Builtin::Service,
            json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP",
                "ports": [{"port": 80}]}}),
        ),
        (Builtin::Namespace, json!({"metadata": {"name": "team-a"}})),
        (Builtin::Node, json!({"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}})),
        (Builtin::Secret, json!({"metadata": {"name": "s"}})),
        (Builtin::Endpoints, json!({"subsets": [{"ports": [{"port": 80}]}]})),
        (Builtin::PodTemplate, json!({"template": {"spec": {"containers": [{"name": "a"}]}}})),
    ];
    for (kind, object) in cases {
        let once = defaulted(kind, object);
        let twice = defaulted(kind, once.clone());
        assert_eq!(once, twice, "{kind:?}");
    }
}

#[test]
fn deployment_keeps_what_the_user_set() {
    let object = defaulted(
        Builtin::Deployment,
        json!({"spec": {"replicas": 0, "revisionHistoryLimit": 0,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}}}),
    );
    assert_eq!(object["spec"]["replicas"], 0);
    assert_eq!(object["spec"]["revisionHistoryLimit"], 0);
    assert_eq!(object["spec"]["strategy"]["rollingUpdate"], json!({"maxSurge": 0, "maxUnavailable": "25%"}));
}

#[test]
fn recreate_strategy_gets_no_rolling_update() {
    let object = defaulted(Builtin::Deployment, json!({"spec": {"strategy": {"type": "Recreate"}}}));
    assert_eq!(object["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn image_pull_policy_follows_the_tag() {
    let cases = [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.k8s.io/pause:3.10", "IfNotPresent"),
        ("localhost:5000/app", "Always"),
        ("localhost:5000/app:v1", "IfNotPresent"),
        ("nginx@sha256:0123", "IfNotPresent"),
        ("nginx:latest@sha256:0123", "Always"),
        ("Nginx", "IfNotPresent"),
        ("", "IfNotPresent"),
    ];
    for (image, want) in cases {
        assert_eq!(image_pull_policy(image), want, "{image}");
    }
}

#[test]
fn templates_do_not_get_pod_only_defaults() {
    let object = defaulted(
        Builtin::ReplicaSet,
        json!({"spec": {"template": {"spec": {
        "containers": [{"name": "a", "image": "a", "resources": {"limits": {"cpu": "1"}}}]}}}}),
    );
    let spec = &object["spec"]["template"]["spec"];
    assert_eq!(object["spec"]["replicas"], 1);
    for field in ["enableServiceLinks", "priority", "tolerations", "serviceAccountName"] {
        assert!(spec.get(field).is_none(), "{field}");
    }
    assert!(spec["containers"][0]["resources"].get("requests").is_none());
}

#[test]
fn pod_only_defaults() {
    let object = defaulted(
        Builtin::Pod,
        json!({"spec": {"hostNetwork": true, "priorityClassName": "system-node-critical",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                "effect": "NoExecute"}],
            "containers": [{"name": "a", "image": "a",
                "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
                "ports": [{"containerPort": 8080}]}]}}),
    );
    let spec = &object["spec"];
    assert_eq!(spec["priority"], 2_000_001_000);
    assert_eq!(spec["containers"][0]["resources"]["requests"], json!({"cpu": "1", "memory": "1Gi"}));
    assert_eq!(spec["containers"][0]["ports"][0]["hostPort"], 8080);
    assert_eq!(spec["containers"][0]["ports"][0]["protocol"], "TCP");
    let tolerations = spec["tolerations"].as_array().map(Vec::len);
    assert_eq!(tolerations, Some(2), "only unreachable is added");
}

#[test]
fn volumes_and_probes() {
    let object = defaulted(
        Builtin::PodTemplate,
        json!({"template": {"spec": {
            "volumes": [
                {"name": "scratch"},
                {"name": "cm", "configMap": {"name": "c"}},
                {"name": "hp", "hostPath": {"path": "/x"}},
                {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}
            ],
            "containers": [{"name": "a", "image": "a",
                "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                "readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5},
                "livenessProbe": {"grpc": {"port": 9000}}}]}}}),
    );
    let spec = &object["template"]["spec"];
    assert_eq!(spec["volumes"][0]["emptyDir"], json!({}));
    assert_eq!(spec["volumes"][1]["configMap"]["defaultMode"], 420);
    assert_eq!(spec["volumes"][2]["hostPath"]["type"], "");
    assert_eq!(
        spec["volumes"][3]["projected"],
        json!({"defaultMode": 420, "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}]})
    );
    let container = &spec["containers"][0];
    assert_eq!(container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    assert_eq!(
        container["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "periodSeconds": 5,
            "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(container["livenessProbe"]["grpc"]["service"], "");
}

#[test]
fn service_defaults() {
    let object = defaulted(
        Builtin::Service,
        json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}, {"port": 443, "targetPort": "https"}]}}),
    );
    assert_eq!(
        object["spec"],
        json!({
            "selector": {"app": "web"},
            "ports": [
                {"port": 80, "protocol": "TCP", "targetPort": 80},
                {"port": 443, "protocol": "TCP", "targetPort": "https"}
            ],
            "sessionAffinity": "None",
            "type": "ClusterIP",
            "internalTrafficPolicy": "Cluster",
            "ipFamilyPolicy": "SingleStack",
            "ipFamilies": ["IPv4"]
        })
    );
    let lb = defaulted(
        Builtin::Service,
        json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 80}]}}),
    );
    assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(lb["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800);
    let headless = defaulted(Builtin::Service, json!({"spec": {"clusterIP": "None"}}));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
    let external = defaulted(Builtin::Service, json!({"spec": {"type": "ExternalName", "externalName": "a.b"}}));
    assert!(external["spec"].get("internalTrafficPolicy").is_none());
    assert!(external["spec"].get("ipFamilyPolicy").is_none());
}

#[test]
fn namespace_node_secret() {
    let mut ns = defaulted(Builtin::Namespace, json!({"metadata": {"name": "team-a"}}));
    assert_eq!(ns["metadata"]["labels"][LABEL_METADATA_NAME], "team-a");
    assert_eq!(ns["status"]["phase"], "Active");
    assert!(ns.get("spec").is_none(), "finalizers are create-only");

    let node = defaulted(Builtin::Node, json!({"status": {"capacity": {"cpu": "4", "pods": "110"}}}));
    assert_eq!(node["status"]["allocatable"], json!({"cpu": "4", "pods": "110"}));

    let secret = defaulted(Builtin::Secret, json!({"type": ""}));
    assert_eq!(secret["type"], "Opaque");
    let typed = defaulted(Builtin::Secret, json!({"type": "kubernetes.io/tls"}));
    assert_eq!(typed["type"], "kubernetes.io/tls");
}

#[test]
fn malformed_objects_are_left_alone() {
    for kind in [Builtin::Deployment, Builtin::Pod, Builtin::Service, Builtin::Namespace] {
        for object in [json!("x"), json!({"spec": 3})] {
            let out = defaulted(kind, object.clone());
            if kind != Builtin::Namespace || object.is_string() {
                assert_eq!(out, object, "{kind:?}");
            }
        }
    }
    // Wrong-typed lists inside an otherwise fine spec do not panic.
    for kind in [Builtin::Pod, Builtin::PodTemplate, Builtin::Deployment] {
        let mut object = json!({"spec": {"containers": "no", "volumes": 1, "template": 2}});
        apply(kind, &mut object);
    }
}
