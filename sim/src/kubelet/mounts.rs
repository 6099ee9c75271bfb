//! The volumes a pod cannot start without: the kubelet's `MountVolume.SetUp`
//! of ConfigMap, Secret and projected (configMap and secret sources)
//! volumes fails while an object they name is missing and not `optional`,
//! so the pod stays `ContainerCreating`, with a `FailedMount` Warning event
//! (`MountVolume.SetUp failed for volume "<volume>" : configmap "<name>"
//! not found`), until the object exists.
//!
//! [`VolumeWaits`] remembers the pods waiting and the failures already
//! reported, so that the loop (`mod.rs`) looks at them again when a
//! ConfigMap or Secret of their namespace changes, and each failure is
//! reported once (the kubelet repeats it with a backoff; the Event's count
//! would grow). Other sources (token projections, downward API, emptyDir)
//! always mount; the keys a volume's `items` name are not checked.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::events::{self, Reporter};
use super::status::PodRef;
use crate::api::Api;
use crate::resources::Builtin;
use crate::store::{Store, TypeKey};

/// The event reason (`kevents.FailedMountVolume`).
const FAILED_MOUNT: &str = "FailedMount";

/// Pods whose volumes cannot be set up yet, and what was reported.
pub(super) struct VolumeWaits {
    config_map_key: TypeKey,
    secret_key: TypeKey,
    event_key: TypeKey,
    /// (namespace, name) of each waiting pod -> the failures reported.
    waiting: BTreeMap<(String, String), HashSet<String>>,
}

impl VolumeWaits {
    pub(super) fn new(api: &Api) -> Self {
        let key = |b| Api::type_key(&api.registry.builtin(b));
        VolumeWaits {
            config_map_key: key(Builtin::ConfigMap),
            secret_key: key(Builtin::Secret),
            event_key: key(Builtin::CoreEvent),
            waiting: BTreeMap::new(),
        }
    }

    /// Whether a change of this type may let a waiting pod mount.
    pub(super) fn is_source(&self, type_key: &TypeKey) -> bool {
        *type_key == self.config_map_key || *type_key == self.secret_key
    }

    /// Whether every volume of `pod` (bound to `node`) can be set up; if
    /// not, the pod waits and each failure not reported yet becomes a
    /// `FailedMount` event.
    pub(super) fn ready(&mut self, store: &Store, pod: &Value, pod_ref: &PodRef, node: &str) -> bool {
        let key = (pod_ref.namespace.clone(), pod_ref.name.clone());
        let failures = self.failures(store, pod, &pod_ref.namespace);
        if failures.is_empty() {
            self.waiting.remove(&key);
            return true;
        }
        let reported = self.waiting.entry(key).or_default();
        for message in failures {
            if reported.insert(message.clone()) {
                events::warn(store, &self.event_key, pod, pod_ref, &Reporter::Kubelet(node), FAILED_MOUNT, &message);
            }
        }
        false
    }

    /// Forgets a pod (deleted).
    pub(super) fn forget(&mut self, namespace: &str, name: &str) {
        self.waiting.remove(&(namespace.to_owned(), name.to_owned()));
    }

    /// The waiting pods of `namespace`.
    pub(super) fn waiting_in(&self, namespace: &str) -> Vec<String> {
        let from = (namespace.to_owned(), String::new());
        self.waiting
            .range(from..)
            .take_while(|((ns, _), _)| ns == namespace)
            .map(|((_, name), _)| name.clone())
            .collect()
    }

    /// The `MountVolume.SetUp` failures of the pod's volumes, one message
    /// per volume, in the spec's order.
    fn failures(&self, store: &Store, pod: &Value, namespace: &str) -> Vec<String> {
        let volumes = pod.pointer("/spec/volumes").and_then(Value::as_array).into_iter().flatten();
        volumes
            .filter_map(|volume| {
                let name = volume.get("name").and_then(Value::as_str).unwrap_or("");
                let errors = self.volume_errors(store, volume, namespace);
                let error = match errors.len() {
                    0 => return None,
                    1 => errors[0].clone(),
                    // `utilerrors.NewAggregate` of several.
                    _ => format!("[{}]", errors.join(", ")),
                };
                Some(format!("MountVolume.SetUp failed for volume \"{name}\" : {error}"))
            })
            .collect()
    }

    /// Why one volume cannot be set up: the objects it needs that are
    /// missing (as the kubelet's watch-based managers name them).
    fn volume_errors(&self, store: &Store, volume: &Value, namespace: &str) -> Vec<String> {
        let mut errors = Vec::new();
        let mut need = |key: &TypeKey, kind: &str, source: &Value, name_field: &str| {
            let optional = source.get("optional").and_then(Value::as_bool).unwrap_or(false);
            let name = source.get(name_field).and_then(Value::as_str).unwrap_or("");
            if !optional && store.get(key, namespace, name).is_none() {
                let error = format!("{kind} \"{name}\" not found");
                if !errors.contains(&error) {
                    errors.push(error);
                }
            }
        };
        if let Some(source) = volume.get("configMap") {
            need(&self.config_map_key, "configmap", source, "name");
        }
        if let Some(source) = volume.get("secret") {
            need(&self.secret_key, "secret", source, "secretName");
        }
        let sources = volume.pointer("/projected/sources").and_then(Value::as_array).into_iter().flatten();
        for source in sources {
            if let Some(config_map) = source.get("configMap") {
                need(&self.config_map_key, "configmap", config_map, "name");
            }
            if let Some(secret) = source.get("secret") {
                need(&self.secret_key, "secret", secret, "name");
            }
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::api::ApiConfig;
    use crate::resources::Registry;

    fn pod(volumes: Value) -> Value {
        json!({"metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
            "spec": {"nodeName": "node-1", "volumes": volumes}})
    }

    #[test]
    fn missing_sources_fail_their_volume_and_optional_ones_do_not() {
        let api = Arc::new(Api::new(Registry::default(), Store::default(), ApiConfig::default()));
        let mut waits = VolumeWaits::new(&api);
        let pod = pod(json!([
            {"name": "kube-api-access-abcde", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt"}},
                {"secret": {"name": "creds"}},
                {"configMap": {"name": "maybe", "optional": true}},
            ]}},
            {"name": "config", "configMap": {"name": "app"}},
            {"name": "tls", "secret": {"secretName": "tls", "optional": true}},
            {"name": "scratch", "emptyDir": {}},
        ]));
        assert_eq!(
            waits.failures(&api.store, &pod, "ns"),
            [
                "MountVolume.SetUp failed for volume \"kube-api-access-abcde\" : \
                 [configmap \"kube-root-ca.crt\" not found, secret \"creds\" not found]",
                "MountVolume.SetUp failed for volume \"config\" : configmap \"app\" not found",
            ]
        );
        let pod_ref = PodRef { namespace: "ns".into(), name: "p".into(), uid: "u".into() };
        assert!(!waits.ready(&api.store, &pod, &pod_ref, "node-1"));
        assert!(!waits.ready(&api.store, &pod, &pod_ref, "node-1"));
        let (events, _) = api.store.list(&waits.event_key, Some("ns"));
        assert_eq!(events.len(), 2, "each failure is reported once");
        let event = events[0].1.value();
        assert_eq!(
            (&event["reason"], &event["type"], &event["source"]["host"]),
            (&json!("FailedMount"), &json!("Warning"), &json!("node-1"))
        );
        assert_eq!(waits.waiting_in("ns"), ["p"]);
        assert!(waits.waiting_in("other").is_empty());

        for (key, name) in
            [(&waits.config_map_key, "kube-root-ca.crt"), (&waits.config_map_key, "app"), (&waits.secret_key, "creds")]
        {
            api.store.create(key, "ns", name, json!({"metadata": {"name": name, "namespace": "ns"}})).unwrap();
        }
        assert!(waits.ready(&api.store, &pod, &pod_ref, "node-1"));
        assert!(waits.waiting_in("ns").is_empty());
    }
}
