//! What the API server's admission plugins do on create, for the kinds
//! kube-sim serves: NamespaceLifecycle refuses creates in a namespace that
//! does not exist or is terminating (403 with the `NamespaceTerminating`
//! cause). The visible results of the Priority, ServiceAccount and
//! DefaultTolerationSeconds plugins are applied with the pod defaults (the
//! `defaults` module); the registry strategies' create-time resets are the
//! `strategy` module's.

use serde_json::{Value, json};

use crate::api::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::object::is_terminating;
use crate::resources::{Builtin, ResourceType};

/// Refuses a create in `namespace` unless it exists and is not terminating.
pub fn check_namespace_open(api: &Api, rt: &ResourceType, namespace: &str, name: &str) -> ApiResult<()> {
    let ns_type = api.registry.builtin(Builtin::Namespace);
    let Some(ns) = api.store.get(&Api::type_key(&ns_type), "", namespace) else {
        return Err(ApiError::not_found(&ns_type, namespace));
    };
    let ns = ns.value();
    let terminating = is_terminating(&ns) || ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating");
    if terminating {
        let message = format!("unable to create new content in namespace {namespace} because it is being terminated");
        let mut err = ApiError::forbidden(format!("{} \"{name}\" is forbidden: {message}", rt.qualified_name()));
        err.details = Some(json!({
            "name": name,
            "kind": rt.plural,
            "causes": [{"reason": "NamespaceTerminating", "message": message, "field": "metadata.namespace"}],
        }));
        return Err(err);
    }
    Ok(())
}
