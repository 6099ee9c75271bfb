//! The NamespaceLifecycle plugin: a create in a namespace that does not
//! exist is a 404, in one being terminated a 403 with the
//! `NamespaceTerminating` cause.

use serde_json::{Value, json};

use crate::api::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::object::is_terminating;
use crate::resources::{Builtin, ResourceType};

/// Refuses a create in `namespace` unless it exists and is not terminating;
/// `name` is the object's admission name.
pub(super) fn check_namespace_open(api: &Api, rt: &ResourceType, namespace: &str, name: &str) -> ApiResult<()> {
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
