//! Validation of the core/v1 kinds other than pods, nodes and services:
//! ConfigMap and Secret keys and immutability, and Namespace finalizer
//! names and status phase.

use serde_json::Value;

use super::access::{at, map, semantic_eq, text};
use super::errors::Errors;
use super::render::go_quote;
use super::syntax::{config_map_key, qualified_name};

/// Keys of the ConfigMap or Secret map `field` (`IsConfigMapKey`).
pub(super) fn data_keys(errs: &mut Errors, object: &Value, field: &str) {
    for key in map(object, field).keys() {
        for msg in config_map_key(key) {
            errs.invalid(&format!("{field}[{key}]"), go_quote(key), &msg);
        }
    }
}

/// The `immutable: true` rules of ConfigMap and Secret updates.
pub(super) fn immutable_data(errs: &mut Errors, old: &Value, new: &Value, fields: &[&str]) {
    if at(old, "immutable") != &Value::Bool(true) {
        return;
    }
    const DETAIL: &str = "field is immutable when `immutable` is set";
    if at(new, "immutable") != &Value::Bool(true) {
        errs.forbidden("immutable", DETAIL);
    }
    for field in fields {
        if !semantic_eq(at(old, field), at(new, field)) {
            errs.forbidden(field, DETAIL);
        }
    }
}

/// The finalizer names a namespace's `spec.finalizers` may hold without a
/// domain (upstream `IsStandardFinalizerName`).
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// Namespace `validateFinalizerName`: a qualified name, and a standard one
/// unless it has a domain.
pub(super) fn finalizer_name(errs: &mut Errors, name: &str, path: &str) {
    for msg in qualified_name(name) {
        errs.invalid(path, go_quote(name), &msg);
    }
    if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
        errs.invalid(path, go_quote(name), "name is neither a standard finalizer name nor is it fully qualified");
    }
}

/// `ValidateNamespaceStatusUpdate`: the phase is `Active` until the
/// namespace is being deleted, then `Terminating` (upstream's field path is
/// `status.Phase`).
pub(super) fn namespace_phase(errs: &mut Errors, namespace: &Value) {
    let phase = text(at(namespace, "status"), "phase");
    let deleting = !at(at(namespace, "metadata"), "deletionTimestamp").is_null();
    match (deleting, phase) {
        (false, "Active") | (true, "Terminating") => {}
        (false, _) => {
            errs.invalid("status.Phase", go_quote(phase), "may only be 'Active' if `deletionTimestamp` is empty")
        }
        (true, _) => errs.invalid(
            "status.Phase",
            go_quote(phase),
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        ),
    }
}
