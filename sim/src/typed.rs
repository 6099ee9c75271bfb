//! Conversion of built-in objects through their k8s-openapi types: the
//! check that a body has the API's shape (a number where a number belongs),
//! and the normalisation that drops fields the API does not declare, as
//! decoding into the API server's Go types does.

use k8s_openapi::api::{apps, coordination, core, events};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::resources::Builtin;

fn through<T: DeserializeOwned + Serialize>(object: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(object.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// The object as its k8s-openapi type reads and writes it, or why it does
/// not fit that type.
pub fn normalize(kind: Builtin, object: &Value) -> Result<Value, String> {
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
        Builtin::Deployment => through::<apps::v1::Deployment>(object),
        Builtin::ReplicaSet => through::<apps::v1::ReplicaSet>(object),
        Builtin::Lease => through::<coordination::v1::Lease>(object),
        Builtin::EventsEvent => through::<events::v1::Event>(object),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_fields_are_dropped_and_wrong_types_refused() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"k": "v"}, "bogus": 1});
        let normal = normalize(Builtin::ConfigMap, &cm).unwrap();
        assert!(normal.get("bogus").is_none());
        assert_eq!(normal["data"]["k"], "v");
        let bad = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": "three", "selector": {}, "template": {}}});
        assert!(normalize(Builtin::Deployment, &bad).is_err());
    }
}
