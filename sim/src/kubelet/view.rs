//! What the stand-in reads of a pod when it decides the pod's next step:
//! its metadata and status, and of its spec only the node it is bound to,
//! what scheduling matches against (`nodeSelector`, `affinity`,
//! `tolerations`, `schedulingGates`, `schedulerName`) and the volumes it must mount (and claim) before it
//! starts.
//! Every pod change passes through here, so the rest of the spec (the
//! containers, the bulk of a pod) is skipped rather than parsed; the
//! status writes read the whole stored pod again.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::store::Stored;

/// The fields of a pod that [`view`] keeps.
#[derive(Deserialize)]
struct PodView {
    #[serde(default)]
    metadata: Option<Value>,
    #[serde(default)]
    spec: Option<SpecView>,
    #[serde(default)]
    status: Option<Value>,
}

/// The fields of a pod's spec that [`view`] keeps.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecView {
    #[serde(default)]
    node_name: Option<Value>,
    #[serde(default)]
    node_selector: Option<Value>,
    #[serde(default)]
    affinity: Option<Value>,
    #[serde(default)]
    tolerations: Option<Value>,
    #[serde(default)]
    scheduling_gates: Option<Value>,
    #[serde(default)]
    scheduler_name: Option<Value>,
    #[serde(default)]
    volumes: Option<Value>,
}

/// The stored pod as a JSON object holding only the fields the stand-in
/// decides on (the whole pod, should it not have the shape of one).
pub(super) fn view(stored: &Stored) -> Value {
    let Ok(pod) = serde_json::from_slice::<PodView>(&stored.bytes) else {
        return stored.value();
    };
    let mut object = Map::new();
    if let Some(metadata) = pod.metadata {
        object.insert("metadata".into(), metadata);
    }
    if let Some(spec) = pod.spec {
        let mut fields = Map::new();
        let fields_kept = [
            ("nodeName", spec.node_name),
            ("nodeSelector", spec.node_selector),
            ("affinity", spec.affinity),
            ("tolerations", spec.tolerations),
            ("schedulingGates", spec.scheduling_gates),
            ("schedulerName", spec.scheduler_name),
            ("volumes", spec.volumes),
        ];
        for (name, value) in fields_kept {
            if let Some(value) = value {
                fields.insert(name.into(), value);
            }
        }
        object.insert("spec".into(), Value::Object(fields));
    }
    if let Some(status) = pod.status {
        object.insert("status".into(), status);
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::selectors::Attrs;

    fn stored(object: &Value) -> Stored {
        Stored { rv: 1, bytes: serde_json::to_vec(object).unwrap().into(), attrs: Arc::new(Attrs::of(object)) }
    }

    #[test]
    fn the_view_keeps_what_the_stand_in_reads_and_drops_the_containers() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "uid": "u", "annotations": {"a": "b"}},
            "spec": {"nodeName": "node-1", "nodeSelector": {"disk": "ssd"}, "tolerations": [{"operator": "Exists"}],
                "affinity": {"nodeAffinity": {}},
                "volumes": [{"name": "config", "configMap": {"name": "app"}}],
                "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        let mut expected = pod.clone();
        expected.as_object_mut().unwrap().retain(|k, _| k != "apiVersion" && k != "kind");
        expected["spec"].as_object_mut().unwrap().remove("containers");
        assert_eq!(view(&stored(&pod)), expected);
        let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": []}});
        assert_eq!(view(&stored(&bare)), json!({"metadata": {"name": "p"}, "spec": {}}));
    }
}
