//! Whose object a write names: the checks the API server's handlers and
//! storage make before a write reaches the registry strategy.
//!
//! - The body's name must be the URL's, and its namespace (when it has one)
//!   the URL's: `400 BadRequest` otherwise (upstream `checkName`, for `PUT`
//!   on the body, for `PATCH` on the patched object).
//! - A `PUT` whose `metadata.uid` is set is a precondition on the stored
//!   object's uid: `409 Conflict` with the storage layer's message when they
//!   differ (upstream `Preconditions.Check`). A `PATCH` has no such
//!   precondition; a patched uid is refused by validation (422, "field is
//!   immutable").

use serde_json::Value;

use super::route::Target;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::resources::ResourceType;

/// Upstream `checkName`: the object's name and namespace against the URL's.
pub(super) fn check_name(target: &Target, object: &Value) -> ApiResult<()> {
    let url_name = target.name.as_deref().unwrap_or("");
    let name = object::name(object);
    if name != url_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    let namespace = object::namespace(object);
    if target.rt.namespaced && !namespace.is_empty() && namespace != target.ns() {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({namespace}) does not match the namespace on the URL ({})",
            target.ns()
        )));
    }
    Ok(())
}

/// The uid precondition of a `PUT`: the body's uid, when set, must be the
/// stored object's.
pub(super) fn check_uid_precondition(target: &Target, stored: &Value, body: &Value) -> ApiResult<()> {
    let wanted = body.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("");
    let actual = stored.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("");
    if wanted.is_empty() || wanted == actual {
        return Ok(());
    }
    let key = storage_key(&target.rt, target.ns(), object::name(stored));
    Err(ApiError::conflict(
        &target.rt,
        object::name(stored),
        &format!(
            "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: \
             Precondition failed: UID in precondition: {wanted}, UID in object meta: {actual}"
        ),
    ))
}

/// The etcd key the API server stores an object under, which its storage
/// errors show: `/registry/<prefix>/<namespace>/<name>`, the prefix being the
/// resource (with upstream's historical exceptions) for built-in types and
/// `<group>/<resource>` for custom ones.
fn storage_key(rt: &ResourceType, namespace: &str, name: &str) -> String {
    let prefix = match (rt.builtin, rt.plural.as_str()) {
        (Some(_), "services") => "services/specs".to_owned(),
        (Some(_), "endpoints") => "services/endpoints".to_owned(),
        (Some(_), "nodes") => "minions".to_owned(),
        (Some(_), plural) => plural.to_owned(),
        (None, plural) => format!("{}/{plural}", rt.group),
    };
    if namespace.is_empty() {
        format!("/registry/{prefix}/{name}")
    } else {
        format!("/registry/{prefix}/{namespace}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{Builtin, Registry};

    #[test]
    fn storage_keys_follow_upstream_prefixes() {
        let registry = Registry::default();
        let key = |kind, ns| storage_key(&registry.builtin(kind), ns, "x");
        assert_eq!(key(Builtin::Deployment, "default"), "/registry/deployments/default/x");
        assert_eq!(key(Builtin::Service, "default"), "/registry/services/specs/default/x");
        assert_eq!(key(Builtin::Endpoints, "default"), "/registry/services/endpoints/default/x");
        assert_eq!(key(Builtin::Node, ""), "/registry/minions/x");
    }
}
