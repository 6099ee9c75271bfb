//! Decoding of built-in objects through their k8s-openapi types, as the API
//! server decodes a request body into its Go types: a body of the wrong
//! shape (a string where a number belongs) is refused, and fields the API
//! does not declare are dropped and reported, for
//! `?fieldValidation=Strict|Warn`.

use k8s_openapi::api::{apps, batch, coordination, core, discovery, events, policy, rbac};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::resources::Builtin;

/// A body decoded into its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The object as its type reads and writes it: undeclared fields gone.
    pub object: Value,
    /// Paths (`spec.foo`, `spec.template.spec.containers[0].foo`) of the
    /// undeclared fields. Nulls and empty objects are never reported.
    pub unknown: Vec<String>,
}

/// Decodes `object` as its kind's type (one decode and encode), or says why
/// it does not fit, with the API server's message prefix.
pub fn decode(kind: Builtin, object: &Value) -> Result<Decoded, String> {
    let known = roundtrip(kind, object).and_then(|known| convert(kind, known)).map_err(|e| {
        let name = kind_name(kind);
        format!("{name} in version \"v1\" cannot be handled as a {name}: {e}")
    })?;
    let mut unknown = Vec::new();
    vanished(object, &known, "", &mut unknown);
    Ok(Decoded { object: known, unknown })
}

/// The object decoded into its k8s-openapi type and encoded again.
fn roundtrip(kind: Builtin, object: &Value) -> Result<Value, String> {
    match kind {
        Builtin::Namespace => through::<core::v1::Namespace>(object),
        Builtin::Node => through::<core::v1::Node>(object),
        Builtin::Pod => through::<core::v1::Pod>(object),
        Builtin::Service => through::<core::v1::Service>(object),
        Builtin::Endpoints => through::<core::v1::Endpoints>(object),
        Builtin::ConfigMap => through::<core::v1::ConfigMap>(object),
        Builtin::Secret => through::<core::v1::Secret>(object),
        Builtin::ServiceAccount => through::<core::v1::ServiceAccount>(object),
        Builtin::CoreEvent => through::<core::v1::Event>(object),
        Builtin::PodTemplate => through::<core::v1::PodTemplate>(object),
        Builtin::PersistentVolumeClaim => through::<core::v1::PersistentVolumeClaim>(object),
        Builtin::Deployment => through::<apps::v1::Deployment>(object),
        Builtin::ReplicaSet => through::<apps::v1::ReplicaSet>(object),
        Builtin::DaemonSet => through::<apps::v1::DaemonSet>(object),
        Builtin::StatefulSet => through::<apps::v1::StatefulSet>(object),
        Builtin::ControllerRevision => through::<apps::v1::ControllerRevision>(object),
        Builtin::Job => through::<batch::v1::Job>(object),
        Builtin::CronJob => through::<batch::v1::CronJob>(object),
        Builtin::Lease => through::<coordination::v1::Lease>(object),
        Builtin::EventsEvent => through::<events::v1::Event>(object),
        Builtin::EndpointSlice => through::<discovery::v1::EndpointSlice>(object),
        Builtin::PodDisruptionBudget => through::<policy::v1::PodDisruptionBudget>(object),
        Builtin::ClusterRole => through::<rbac::v1::ClusterRole>(object),
        Builtin::ClusterRoleBinding => through::<rbac::v1::ClusterRoleBinding>(object),
        Builtin::Role => through::<rbac::v1::Role>(object),
        Builtin::RoleBinding => through::<rbac::v1::RoleBinding>(object),
    }
}

/// What the conversion of a v1 object to the API server's internal type
/// refuses: a DaemonSet's template generation annotation that is not an
/// integer (its `Spec.TemplateGeneration` is parsed from it).
fn convert(kind: Builtin, object: Value) -> Result<Value, String> {
    if kind == Builtin::DaemonSet
        && let Some(generation) = object
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(crate::strategy::TEMPLATE_GENERATION))
            .and_then(Value::as_str)
        && generation.parse::<i64>().is_err()
    {
        return Err(format!("strconv.ParseInt: parsing {}: invalid syntax", crate::validation::go_quote(generation)));
    }
    Ok(object)
}

/// Decodes as `T` (with `apiVersion` and `kind` forced to `T`'s: the
/// request path decides them) and encodes back. The object is decoded in
/// place when it already names `T`'s (as every body does once its type is
/// checked), and from a copy with them forced otherwise.
fn through<T>(object: &Value) -> Result<Value, String>
where
    T: DeserializeOwned + Serialize + k8s_openapi::Resource,
{
    let names_t = object.get("apiVersion").and_then(Value::as_str) == Some(T::API_VERSION)
        && object.get("kind").and_then(Value::as_str) == Some(T::KIND);
    let decoded = if names_t {
        T::deserialize(object)
    } else {
        let mut input = object.clone();
        if let Some(fields) = input.as_object_mut() {
            fields.insert("apiVersion".to_owned(), Value::from(T::API_VERSION));
            fields.insert("kind".to_owned(), Value::from(T::KIND));
        }
        serde_json::from_value(input)
    };
    let decoded: T = decoded.map_err(|e| e.to_string())?;
    serde_json::to_value(&decoded).map_err(|e| e.to_string())
}

/// Collects the paths of `input` fields missing from `known`.
fn vanished(input: &Value, known: &Value, path: &str, out: &mut Vec<String>) {
    match (input, known) {
        (Value::Object(fields), Value::Object(kept)) => {
            for (key, value) in fields {
                let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match kept.get(key) {
                    Some(kept_value) => vanished(value, kept_value, &child, out),
                    None if value.is_null() || value.as_object().is_some_and(Map::is_empty) => {}
                    None => out.push(child),
                }
            }
        }
        (Value::Array(items), Value::Array(kept)) => {
            for (i, (item, kept_item)) in items.iter().zip(kept).enumerate() {
                vanished(item, kept_item, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The Kind name in messages.
fn kind_name(kind: Builtin) -> &'static str {
    match kind {
        Builtin::Namespace => "Namespace",
        Builtin::Node => "Node",
        Builtin::Pod => "Pod",
        Builtin::Service => "Service",
        Builtin::Endpoints => "Endpoints",
        Builtin::ConfigMap => "ConfigMap",
        Builtin::Secret => "Secret",
        Builtin::ServiceAccount => "ServiceAccount",
        Builtin::CoreEvent | Builtin::EventsEvent => "Event",
        Builtin::PodTemplate => "PodTemplate",
        Builtin::PersistentVolumeClaim => "PersistentVolumeClaim",
        Builtin::Deployment => "Deployment",
        Builtin::ReplicaSet => "ReplicaSet",
        Builtin::DaemonSet => "DaemonSet",
        Builtin::StatefulSet => "StatefulSet",
        Builtin::ControllerRevision => "ControllerRevision",
        Builtin::Job => "Job",
        Builtin::CronJob => "CronJob",
        Builtin::Lease => "Lease",
        Builtin::EndpointSlice => "EndpointSlice",
        Builtin::PodDisruptionBudget => "PodDisruptionBudget",
        Builtin::ClusterRole => "ClusterRole",
        Builtin::ClusterRoleBinding => "ClusterRoleBinding",
        Builtin::Role => "Role",
        Builtin::RoleBinding => "RoleBinding",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    }

    #[test]
    fn unknown_fields_are_dropped_and_reported_with_their_path() {
        let mut object = deployment();
        object["spec"]["replica"] = json!(3);
        object["spec"]["template"]["spec"]["containers"][0]["imagePolicy"] = json!("Always");
        object["metadata"]["labelz"] = json!({"a": "b"});
        let decoded = decode(Builtin::Deployment, &object).unwrap();
        assert_eq!(
            decoded.unknown,
            vec!["metadata.labelz", "spec.replica", "spec.template.spec.containers[0].imagePolicy"]
        );
        assert!(decoded.object["spec"].get("replica").is_none());
        assert_eq!(decoded.object["spec"]["replicas"], 2);
    }

    #[test]
    fn free_form_maps_nulls_timestamps_and_int_or_string_are_known() {
        let mut object = deployment();
        object["metadata"]["annotations"] = json!({"any.thing/x": "y"});
        object["metadata"]["creationTimestamp"] = json!("2025-01-02T03:04:05Z");
        object["spec"]["paused"] = json!(null);
        object["status"] = json!({"replicas": 1, "conditions": [{"type": "Available", "status": "True",
            "lastUpdateTime": "2025-01-02T03:04:05Z"}]});
        let decoded = decode(Builtin::Deployment, &object).unwrap();
        assert_eq!(decoded.unknown, Vec::<String>::new());
        assert_eq!(decoded.object["metadata"]["creationTimestamp"], "2025-01-02T03:04:05Z");
        assert_eq!(decoded.object["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0);
        let cm = json!({"metadata": {"name": "c"}, "data": {"weird key": "v"}, "binaryData": {"b": "eA=="}});
        assert!(decode(Builtin::ConfigMap, &cm).unwrap().unknown.is_empty());
        let node = json!({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}, "bogus": 1}});
        assert_eq!(decode(Builtin::Node, &node).unwrap().unknown, vec!["status.bogus"]);
    }

    #[test]
    fn a_body_naming_another_type_decodes_as_the_target_type() {
        let named = decode(Builtin::Deployment, &deployment()).unwrap();
        let mut unnamed = deployment();
        unnamed.as_object_mut().unwrap().retain(|k, _| k != "apiVersion" && k != "kind");
        assert_eq!(decode(Builtin::Deployment, &unnamed).unwrap(), named);
        let mut other = deployment();
        other["apiVersion"] = json!("extensions/v1beta1");
        assert_eq!(decode(Builtin::Deployment, &other).unwrap(), named);
        assert_eq!(named.object["apiVersion"], "apps/v1");
    }

    #[test]
    fn wrong_types_are_refused_with_the_api_server_prefix() {
        let mut wrong = deployment();
        wrong["spec"]["replicas"] = json!("3");
        let message = decode(Builtin::Deployment, &wrong).unwrap_err();
        assert!(
            message.starts_with(
                "Deployment in version \"v1\" cannot be handled as a Deployment: invalid type: string \"3\""
            ),
            "{message}"
        );
        assert!(decode(Builtin::Secret, &json!({"data": {"a": "not base64!"}})).is_err());
        let generation = json!({"metadata": {"annotations": {"deprecated.daemonset.template.generation": "two"}}});
        assert_eq!(
            decode(Builtin::DaemonSet, &generation).unwrap_err(),
            "DaemonSet in version \"v1\" cannot be handled as a DaemonSet: strconv.ParseInt: parsing \"two\": \
             invalid syntax"
        );
        // Missing required fields decode; validation reports them.
        let mut no_selector = deployment();
        no_selector["spec"].as_object_mut().unwrap().remove("selector");
        assert!(decode(Builtin::Deployment, &no_selector).is_ok());
    }
}
