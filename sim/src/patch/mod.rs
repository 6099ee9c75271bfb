//! The three patch formats of `PATCH` requests, applied to a stored object.
//!
//! kube-sim keeps objects as schemaless JSON, so a patch is a function from
//! the stored [`Value`] and the request body to the new [`Value`]:
//!
//! - [`PatchType::Json`]: RFC 6902 JSON patch (`application/json-patch+json`),
//!   through the `json-patch` crate.
//! - [`PatchType::Merge`]: RFC 7386 JSON merge patch
//!   (`application/merge-patch+json`), also through `json-patch`.
//! - [`PatchType::Strategic`]: Kubernetes strategic merge patch
//!   (`application/strategic-merge-patch+json`), implemented here as the API
//!   server applies it to built-in types: maps merge recursively, `null`
//!   deletes, and a list either merges element by element or is replaced,
//!   depending on the Go type's `patchStrategy`/`patchMergeKey` struct tags.
//!   Those tags are recorded in [`PATCH_META`]; the merge walks the object
//!   alongside the k8s-openapi schemas to know which type (and so which
//!   tags) it is in. The directives `$patch` (`replace`, `delete`),
//!   `$retainKeys`, `$setElementOrder/<list>` and
//!   `$deleteFromPrimitiveList/<list>` are honoured.
//! - [`PatchType::Apply`]: server-side apply, which kube-sim does not
//!   implement.
//!
//! This module only computes the patched object. Checking that the result
//! is still valid (name, namespace, `resourceVersion` preconditions, schema)
//! and turning a [`PatchError`] into a `Status` answer belong to the API
//! layer; [`PatchError::status_code`] says which HTTP code the real API
//! server answers.
//!
//! Where the list order after a strategic merge is concerned this follows
//! `k8s.io/apimachinery/pkg/util/strategicpatch`: items named in the patch
//! take the patch's order (or `$setElementOrder`'s), items only on the
//! server keep theirs, and an item new to the list goes *before* the
//! server's remaining items — so `kubectl patch` adding a container shows it
//! first, as a real cluster does.

use serde_json::Value;

use crate::resources::Builtin;

mod error;
mod json;
mod meta;
mod order;
mod strategic;

pub use error::PatchError;
pub use meta::PATCH_META;

use error::Result;
use json::{apply_json_patch, apply_merge_patch};
pub(crate) use meta::Ty;
use strategic::apply_strategic;

/// The patch formats of the `Content-Type` of a `PATCH` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch, `application/json-patch+json`.
    Json,
    /// RFC 7386 JSON merge patch, `application/merge-patch+json`.
    Merge,
    /// Kubernetes strategic merge patch,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// Server-side apply, `application/apply-patch+yaml` (not supported).
    Apply,
}

impl PatchType {
    /// Parses a `Content-Type` header value, ignoring parameters such as
    /// `; charset=utf-8`. `None` for anything that is not a patch type
    /// (the caller answers 415).
    pub fn from_content_type(ct: &str) -> Option<PatchType> {
        let essence = ct.split(';').next().unwrap_or_default().trim();
        let types = [
            ("application/json-patch+json", PatchType::Json),
            ("application/merge-patch+json", PatchType::Merge),
            ("application/strategic-merge-patch+json", PatchType::Strategic),
            ("application/apply-patch+yaml", PatchType::Apply),
        ];
        types.into_iter().find(|(name, _)| essence.eq_ignore_ascii_case(name)).map(|(_, t)| t)
    }

    /// The media type naming this patch format.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// What a patch is applied to, which decides whether a strategic merge
/// patch is possible and where its list strategies come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patched {
    /// An object of a built-in kind: strategies from its Go type's tags.
    Builtin(Builtin),
    /// The `autoscaling/v1` Scale of a `/scale` subresource. It is a
    /// built-in type, so the API server takes every patch type for it; it
    /// has no lists, so a strategic merge patch merges it as maps.
    Scale,
    /// A custom resource: no Go type, so no strategic merge patch.
    Custom,
}

/// Applies a patch body to `original` (what `target` says it is) and
/// returns the patched object.
///
/// # Errors
///
/// [`PatchError::Malformed`] when the body cannot be read as a patch of
/// `patch_type`, [`PatchError::Failed`] when it cannot be applied, and
/// [`PatchError::Unsupported`] for server-side apply and for strategic
/// merge patch on custom resources.
pub fn apply(patch_type: PatchType, target: Patched, original: &Value, body: &[u8]) -> Result<Value> {
    match patch_type {
        PatchType::Json => apply_json_patch(original, body),
        PatchType::Merge => apply_merge_patch(original, body),
        PatchType::Strategic => match target {
            Patched::Builtin(kind) => apply_strategic(Ty::root(kind), original, body),
            Patched::Scale => apply_strategic(Ty::scale(), original, body),
            Patched::Custom => Err(PatchError::Unsupported(
                "strategic merge patch is not supported for custom resources: use a JSON \
                 merge patch (kubectl patch --type=merge) or a JSON patch (--type=json)"
                    .to_owned(),
            )),
        },
        PatchType::Apply => Err(PatchError::Unsupported(
            "server-side apply (application/apply-patch+yaml) is not supported by kube-sim: \
             use client-side apply (kubectl apply without --server-side)"
                .to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    //! Tests of patching: content types, strategic merge cases as kubectl sends
    //! them (`set image`, three-way `apply`, ...) and their errors, JSON patch,
    //! merge patch.

    use serde_json::json;

    use super::*;

    // === utils ===

    /// A Deployment as `kubectl get -o json` shows it (trimmed).
    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "labels": {"app": "web", "tier": "front"},
                "finalizers": ["a.example.com/x", "b.example.com/y"]
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}
                },
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "app",
                                "image": "nginx:1.25",
                                "args": ["--a", "--b"],
                                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                                "ports": [{"containerPort": 80, "protocol": "TCP"}]
                            },
                            {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "inf"]}
                        ],
                        "tolerations": [{"key": "k1", "operator": "Exists"}],
                        "volumes": [{"name": "data", "emptyDir": {}}]
                    }
                }
            },
            "status": {
                "conditions": [
                    {"type": "Available", "status": "False"},
                    {"type": "Progressing", "status": "True"}
                ]
            }
        })
    }

    /// Applies a strategic merge patch, which must succeed.
    fn strategic(kind: Builtin, original: &Value, patch: &Value) -> Value {
        let body = patch.to_string();
        apply(PatchType::Strategic, Patched::Builtin(kind), original, body.as_bytes())
            .unwrap_or_else(|e| panic!("patch {patch} failed: {e}"))
    }

    /// The names (or another key) of the elements of the list at `pointer`.
    fn keys_at(doc: &Value, pointer: &str, key: &str) -> Vec<Value> {
        doc.pointer(pointer)
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|e| e[key].clone()).collect())
            .unwrap_or_default()
    }

    /// One table case: a patch, then (JSON pointer, expected value) pairs;
    /// `Value::Null` expects the pointer to be absent.
    type Case = (&'static str, Value, Vec<(&'static str, Value)>);

    /// Runs table cases against one original object.
    fn run(kind: Builtin, original: &Value, cases: Vec<Case>) {
        for (name, patch, expectations) in cases {
            let got = strategic(kind, original, &patch);
            for (pointer, want) in expectations {
                let found = got.pointer(pointer).cloned().unwrap_or(Value::Null);
                assert_eq!(found, want, "case {name:?}: {pointer} in {got:#}");
            }
        }
    }

    const CONTAINERS: &str = "/spec/template/spec/containers";

    // === tests ===

    #[test]
    fn content_types() {
        let cases = [
            ("application/json-patch+json", Some(PatchType::Json)),
            ("application/merge-patch+json", Some(PatchType::Merge)),
            ("application/strategic-merge-patch+json", Some(PatchType::Strategic)),
            ("application/apply-patch+yaml", Some(PatchType::Apply)),
            ("application/merge-patch+json; charset=utf-8", Some(PatchType::Merge)),
            ("Application/Strategic-Merge-Patch+JSON ;charset=UTF-8", Some(PatchType::Strategic)),
            ("application/json", None),
            ("", None),
        ];
        for (ct, want) in cases {
            assert_eq!(PatchType::from_content_type(ct), want, "{ct}");
            if let Some(t) = want {
                assert_eq!(PatchType::from_content_type(t.content_type()), want);
            }
        }
    }

    #[test]
    fn strategic_deployment_table() {
        let cases: Vec<Case> = vec![
            (
                "kubectl set image: one container by name, the other untouched",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}}),
                vec![
                    ("/spec/template/spec/containers/0/image", json!("nginx:1.26")),
                    ("/spec/template/spec/containers/0/args", json!(["--a", "--b"])),
                    (
                        "/spec/template/spec/containers/1",
                        deployment()["spec"]["template"]["spec"]["containers"][1].clone(),
                    ),
                ],
            ),
            (
                "kubectl label: labels merge",
                json!({"metadata": {"labels": {"env": "prod"}}}),
                vec![("/metadata/labels", json!({"app": "web", "tier": "front", "env": "prod"}))],
            ),
            (
                "kubectl label tier-: null removes a label",
                json!({"metadata": {"labels": {"tier": null, "gone": null}}}),
                vec![("/metadata/labels", json!({"app": "web"}))],
            ),
            (
                "env merges by name",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "20"}]}]}}}}),
                vec![(
                    "/spec/template/spec/containers/0/env",
                    json!([{"name": "A", "value": "1"}, {"name": "B", "value": "20"}]),
                )],
            ),
            (
                "a new env var goes before the server's (as the API server orders it)",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "C", "value": "3"}]}]}}}}),
                vec![(
                    "/spec/template/spec/containers/0/env",
                    json!([{"name": "C", "value": "3"}, {"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
                )],
            ),
            (
                "ports merge by containerPort",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80, "name": "http"}]}]}}}}),
                vec![(
                    "/spec/template/spec/containers/0/ports",
                    json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}]),
                )],
            ),
            (
                "$patch: delete removes a container",
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "sidecar"}]}}}}),
                vec![
                    ("/spec/template/spec/containers/0/name", json!("app")),
                    ("/spec/template/spec/containers/1", Value::Null),
                ],
            ),
            (
                "$setElementOrder reorders",
                json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}}}}),
                vec![
                    ("/spec/template/spec/containers/0/name", json!("sidecar")),
                    ("/spec/template/spec/containers/1/image", json!("nginx:1.25")),
                ],
            ),
            (
                "finalizers are a union without duplicates",
                json!({"metadata": {"finalizers": ["b.example.com/y", "c.example.com/z"]}}),
                vec![("/metadata/finalizers", json!(["a.example.com/x", "b.example.com/y", "c.example.com/z"]))],
            ),
            (
                "$deleteFromPrimitiveList removes a finalizer",
                json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]}}),
                vec![("/metadata/finalizers", json!(["b.example.com/y"]))],
            ),
            (
                "tolerations have no strategy: replaced",
                json!({"spec": {"template": {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}}}}),
                vec![("/spec/template/spec/tolerations", json!([{"key": "k2", "operator": "Exists"}]))],
            ),
            (
                "args have no strategy: replaced",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "args": ["--c"]}]}}}}),
                vec![("/spec/template/spec/containers/0/args", json!(["--c"]))],
            ),
            (
                "$retainKeys on the strategy drops rollingUpdate",
                json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
                vec![("/spec/strategy", json!({"type": "Recreate"}))],
            ),
            (
                "without $retainKeys the strategy merges",
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}}),
                vec![("/spec/strategy/rollingUpdate", json!({"maxSurge": 1, "maxUnavailable": "25%"}))],
            ),
            (
                "$patch: replace on a map",
                json!({"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "x": "y"}}}}}),
                vec![("/spec/template/metadata/labels", json!({"x": "y"}))],
            ),
            (
                "$patch: replace in a merging list replaces the list",
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "i", "env": null}]}}}}),
                vec![(CONTAINERS, json!([{"name": "only", "image": "i"}]))],
            ),
            (
                "$patch: delete on a map deletes it",
                json!({"spec": {"strategy": {"$patch": "delete"}}}),
                vec![("/spec/strategy", Value::Null), ("/spec/replicas", json!(2))],
            ),
            (
                "volumes: $retainKeys switches the volume source",
                json!({"spec": {"template": {"spec": {"volumes": [{"name": "data", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cfg"}}]}}}}),
                vec![("/spec/template/spec/volumes", json!([{"name": "data", "configMap": {"name": "cfg"}}]))],
            ),
            (
                "status conditions merge by type",
                json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}}),
                vec![(
                    "/status/conditions",
                    json!([{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]),
                )],
            ),
            (
                "scalars and new fields",
                json!({"spec": {"replicas": 5, "paused": true, "minReadySeconds": null}}),
                vec![
                    ("/spec/replicas", json!(5)),
                    ("/spec/paused", json!(true)),
                    ("/spec/minReadySeconds", Value::Null),
                ],
            ),
            (
                "a new field is cleaned of nulls and directives",
                json!({"spec": {"template": {"spec": {"nodeSelector": {"disk": "ssd", "zone": null}, "affinity": {"$patch": "delete"}}}}}),
                vec![
                    ("/spec/template/spec/nodeSelector", json!({"disk": "ssd"})),
                    ("/spec/template/spec/affinity", Value::Null),
                ],
            ),
        ];
        run(Builtin::Deployment, &deployment(), cases);
    }

    #[test]
    fn new_container_goes_first_like_the_api_server() {
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "debug", "image": "busybox"}]}}}});
        let got = strategic(Builtin::Deployment, &deployment(), &patch);
        assert_eq!(keys_at(&got, CONTAINERS, "name"), [json!("debug"), json!("app"), json!("sidecar")]);
    }

    #[test]
    fn kubectl_apply_three_way_patch() {
        // What kubectl apply sends after the manifest changed the image,
        // dropped env B and the sidecar, added a finalizer and switched to
        // Recreate.
        let patch = json!({
            "metadata": {
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}\n"},
                "$setElementOrder/finalizers": ["b.example.com/y", "c.example.com/z"],
                "$deleteFromPrimitiveList/finalizers": ["a.example.com/x"],
                "finalizers": ["c.example.com/z"]
            },
            "spec": {
                "strategy": {"$retainKeys": ["type"], "rollingUpdate": null, "type": "Recreate"},
                "template": {"spec": {
                    "$setElementOrder/containers": [{"name": "app"}],
                    "containers": [
                        {
                            "$setElementOrder/env": [{"name": "A"}],
                            "env": [{"$patch": "delete", "name": "B"}],
                            "image": "nginx:1.26",
                            "name": "app"
                        },
                        {"$patch": "delete", "name": "sidecar"}
                    ]
                }}
            }
        });
        let got = strategic(Builtin::Deployment, &deployment(), &patch);
        let mut want = deployment();
        want["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration": "{}\n"});
        want["metadata"]["finalizers"] = json!(["b.example.com/y", "c.example.com/z"]);
        want["spec"]["strategy"] = json!({"type": "Recreate"});
        let containers = &mut want["spec"]["template"]["spec"]["containers"];
        containers[0]["image"] = json!("nginx:1.26");
        containers[0]["env"] = json!([{"name": "A", "value": "1"}]);
        containers.as_array_mut().expect("containers is a list").truncate(1);
        assert_eq!(got, want);
    }

    #[test]
    fn kubectl_apply_adding_a_container_in_the_middle() {
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "metrics"}, {"name": "sidecar"}],
            "containers": [{"name": "metrics", "image": "exporter"}]
        }}}});
        let got = strategic(Builtin::Deployment, &deployment(), &patch);
        assert_eq!(keys_at(&got, CONTAINERS, "name"), [json!("app"), json!("metrics"), json!("sidecar")]);
    }

    #[test]
    fn strategic_other_kinds_table() {
        let node = json!({
            "metadata": {"name": "n1"},
            "spec": {"podCIDRs": ["10.0.0.0/24"], "taints": [{"key": "a", "effect": "NoSchedule"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "False"}, {"type": "MemoryPressure", "status": "False"}],
                "addresses": [{"type": "InternalIP", "address": "10.1.1.1"}]
            }
        });
        run(
            Builtin::Node,
            &node,
            vec![
                (
                    "taints have no strategy: replaced",
                    json!({"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}}),
                    vec![("/spec/taints", json!([{"key": "b", "effect": "NoExecute"}]))],
                ),
                (
                    "node conditions merge by type",
                    json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
                    vec![(
                        "/status/conditions",
                        json!([{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"}]),
                    )],
                ),
                (
                    "podCIDRs are a primitive merge list",
                    json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}}),
                    vec![("/spec/podCIDRs", json!(["10.0.0.0/24", "fd00::/64"]))],
                ),
            ],
        );

        let service = json!({"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}], "selector": {"app": "web"}}});
        run(
            Builtin::Service,
            &service,
            vec![(
                "service ports merge by port",
                json!({"spec": {"ports": [{"port": 443, "targetPort": 8443}], "selector": {"tier": "front"}}}),
                vec![
                    (
                        "/spec/ports",
                        json!([{"port": 80, "name": "http"}, {"port": 443, "name": "https", "targetPort": 8443}]),
                    ),
                    ("/spec/selector", json!({"app": "web", "tier": "front"})),
                ],
            )],
        );

        let pod = json!({
            "metadata": {"name": "p", "ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "rs1"}]},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}
        });
        run(
            Builtin::Pod,
            &pod,
            vec![
                (
                    "ownerReferences merge by uid",
                    json!({"metadata": {"ownerReferences": [{"uid": "u1", "controller": true}]}}),
                    vec![(
                        "/metadata/ownerReferences",
                        json!([{"uid": "u1", "kind": "ReplicaSet", "name": "rs1", "controller": true}]),
                    )],
                ),
                (
                    "kubelet status patch: conditions by type, podIPs new",
                    json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "podIPs": [{"ip": "10.0.0.5"}]}}),
                    vec![
                        ("/status/phase", json!("Running")),
                        (
                            "/status/conditions",
                            json!([{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]),
                        ),
                        ("/status/podIPs", json!([{"ip": "10.0.0.5"}])),
                    ],
                ),
            ],
        );

        let config_map = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        run(
            Builtin::ConfigMap,
            &config_map,
            vec![(
                "configmap data merges, null deletes",
                json!({"data": {"b": null, "c": "3"}}),
                vec![("/data", json!({"a": "1", "c": "3"}))],
            )],
        );

        let sa = json!({"metadata": {"name": "default"}, "secrets": [{"name": "t1"}]});
        run(
            Builtin::ServiceAccount,
            &sa,
            vec![(
                "service account secrets merge by name",
                json!({"secrets": [{"name": "t2"}]}),
                vec![("/secrets", json!([{"name": "t2"}, {"name": "t1"}]))],
            )],
        );
    }

    #[test]
    fn strategic_errors() {
        let d = deployment();
        let cases: Vec<(&str, &[u8], u16)> = vec![
        ("not JSON", b"{nope", 400),
        ("not an object", b"[1, 2]", 400),
        ("list element without merge key", br#"{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}"#, 400),
        ("unknown $patch", br#"{"spec":{"strategy":{"$patch":"shrug"}}}"#, 400),
        ("key outside $retainKeys", br#"{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{}}}}"#, 400),
        ("$setElementOrder without a field", br#"{"metadata":{"$setElementOrder":[]}}"#, 400),
        ("patch list out of $setElementOrder's order", br#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"sidecar"}],"containers":[{"name":"sidecar"},{"name":"app"}]}}}}"#, 400),
        ("mixed element types", br#"{"metadata":{"finalizers":[{"a":1}]}}"#, 400),
        ("list of lists", br#"{"metadata":{"finalizers":[["x"]]}}"#, 422),
    ];
        for (name, body, code) in cases {
            let err = apply(PatchType::Strategic, Patched::Builtin(Builtin::Deployment), &d, body).expect_err(name);
            assert_eq!(err.status_code(), code, "{name}: {err}");
        }
    }

    #[test]
    fn unsupported_patches() {
        let d = deployment();
        let err = apply(PatchType::Strategic, Patched::Custom, &d, b"{}").expect_err("custom resource");
        assert!(matches!(err, PatchError::Unsupported(_)), "{err}");
        assert_eq!(err.status_code(), 415);
        let err = apply(PatchType::Apply, Patched::Builtin(Builtin::Pod), &d, b"kind: Pod").expect_err("apply");
        assert!(matches!(&err, PatchError::Unsupported(m) if m.contains("server-side apply")), "{err}");
    }

    #[test]
    fn json_patch() {
        let d = deployment();
        let ok = br#"[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3},{"op":"add","path":"/metadata/labels/env","value":"prod"}]"#;
        let got = apply(PatchType::Json, Patched::Custom, &d, ok).expect("valid JSON patch");
        assert_eq!(got["spec"]["replicas"], json!(3));
        assert_eq!(got["metadata"]["labels"]["env"], json!("prod"));

        let cases: Vec<(&str, &[u8], u16)> = vec![
            ("failing test op", br#"[{"op":"test","path":"/spec/replicas","value":9}]"#, 422),
            ("remove a missing path", br#"[{"op":"remove","path":"/spec/nope"}]"#, 422),
            ("not a list", br#"{"op":"add","path":"/a","value":1}"#, 400),
            ("unknown op", br#"[{"op":"frobnicate","path":"/a"}]"#, 400),
            ("not JSON", b"[{", 400),
        ];
        for (name, body, code) in cases {
            let err = apply(PatchType::Json, Patched::Builtin(Builtin::Deployment), &d, body).expect_err(name);
            assert_eq!(err.status_code(), code, "{name}: {err}");
        }
        let err = apply(PatchType::Json, Patched::Custom, &d, br#"[{"op":"test","path":"/kind","value":"Pod"}]"#)
            .expect_err("test op");
        assert!(matches!(err, PatchError::Failed(_)), "{err}");
    }

    #[test]
    fn merge_patch() {
        let d = deployment();
        let body = br#"{"metadata":{"labels":{"tier":null,"env":"prod"}},"spec":{"template":{"spec":{"containers":[{"name":"only"}]}}}}"#;
        let got = apply(PatchType::Merge, Patched::Builtin(Builtin::Deployment), &d, body).expect("merge patch");
        assert_eq!(got["metadata"]["labels"], json!({"app": "web", "env": "prod"}));
        // RFC 7386 has no list strategies: the list is replaced.
        assert_eq!(got["spec"]["template"]["spec"]["containers"], json!([{"name": "only"}]));
        for body in [&b"{oops"[..], b"[]", b"\"x\""] {
            let err = apply(PatchType::Merge, Patched::Custom, &d, body).expect_err("malformed");
            assert!(matches!(err, PatchError::Malformed(_)), "{err}");
        }
    }
}
