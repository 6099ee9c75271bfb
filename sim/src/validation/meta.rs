//! Validation of `metadata` (name, namespace, generation, labels,
//! annotations, owner references, finalizers), its update rules (upstream
//! `ValidateObjectMetaUpdate`: immutable name, namespace, uid and deletion
//! metadata), and of label selector fields.

use serde_json::Value;

use crate::resources::Builtin;

use super::access::{at, int, list, str_of, text};
use super::errors::{Errors, IMMUTABLE, nonnegative};
use super::render::{go_owner_reference, go_owner_references, go_quote, go_string_slice, go_time};
use super::syntax::{
    dns1035_label, dns1123_label, dns1123_subdomain, label_value, mask_trailing_dash, path_segment_name, qualified_name,
};

/// Upstream `TotalAnnotationSizeLimitB`.
pub(super) const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `ValidateObjectMeta` with the name rule of `kind`.
pub(super) fn object_meta(errs: &mut Errors, kind: Builtin, meta: &Value) {
    let name_rule = match kind {
        Builtin::Namespace | Builtin::StatefulSet => dns1123_label,
        Builtin::Service => dns1035_label,
        Builtin::ClusterRole | Builtin::ClusterRoleBinding | Builtin::Role | Builtin::RoleBinding => path_segment_name,
        _ => dns1123_subdomain,
    };
    let generate_name = text(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in name_rule(&mask_trailing_dash(generate_name)) {
            errs.invalid("metadata.generateName", go_quote(generate_name), &msg);
        }
    }
    let name = text(meta, "name");
    // Upstream generates the name before validating; accept an object whose
    // name is still to be generated.
    if name.is_empty() && generate_name.is_empty() {
        errs.required("metadata.name", "name or generateName is required");
    } else if !name.is_empty() {
        for msg in name_rule(name) {
            errs.invalid("metadata.name", go_quote(name), &msg);
        }
    }
    let namespace = text(meta, "namespace");
    let cluster_scoped =
        matches!(kind, Builtin::Namespace | Builtin::Node | Builtin::ClusterRole | Builtin::ClusterRoleBinding);
    if !namespace.is_empty() && !cluster_scoped {
        for msg in dns1123_label(namespace) {
            errs.invalid("metadata.namespace", go_quote(namespace), &msg);
        }
    }
    nonnegative(errs, int(meta, "generation"), "metadata.generation");
    meta_maps(errs, meta, "metadata");
    owners_and_finalizers(errs, meta);
}

/// `ValidateObjectMetaUpdate`.
pub(super) fn object_meta_update(errs: &mut Errors, old: &Value, new: &Value) {
    if let (Some(new_generation), Some(old_generation)) = (int(new, "generation"), int(old, "generation"))
        && new_generation < old_generation
    {
        errs.invalid("metadata.generation", new_generation.to_string(), "must not be decremented");
    }
    for field in ["name", "namespace", "uid"] {
        let new_value = text(new, field);
        if !new_value.is_empty() && new_value != text(old, field) {
            errs.invalid(&format!("metadata.{field}"), go_quote(new_value), IMMUTABLE);
        }
    }
    deletion_immutable(errs, old, new);
    meta_maps(errs, new, "metadata");
    owners_and_finalizers(errs, new);
}

/// `metadata.deletionTimestamp` and `metadata.deletionGracePeriodSeconds`
/// of `new` against `old`. The registry strategy has already put back what
/// the stored object has, so only a value the stored object lacks, or
/// another grace period, is left to refuse here.
fn deletion_immutable(errs: &mut Errors, old: &Value, new: &Value) {
    let (old_stamp, new_stamp) = (at(old, "deletionTimestamp"), at(new, "deletionTimestamp"));
    if old_stamp != new_stamp {
        let shown = new_stamp.as_str().map_or_else(|| "\"null\"".to_owned(), go_time);
        errs.invalid("metadata.deletionTimestamp", shown, IMMUTABLE);
    }
    let (old_grace, new_grace) = (int(old, "deletionGracePeriodSeconds"), int(new, "deletionGracePeriodSeconds"));
    if old_grace != new_grace {
        let shown = new_grace.map_or_else(|| "\"null\"".to_owned(), |g| g.to_string());
        errs.invalid("metadata.deletionGracePeriodSeconds", shown, IMMUTABLE);
    }
}

/// Labels and annotations of an object or template metadata at `path`.
pub(super) fn meta_maps(errs: &mut Errors, meta: &Value, path: &str) {
    labels(errs, at(meta, "labels"), &format!("{path}.labels"));
    annotations(errs, at(meta, "annotations"), &format!("{path}.annotations"));
}

/// An object's (not a template's) owner references and finalizers.
fn owners_and_finalizers(errs: &mut Errors, meta: &Value) {
    owner_references(errs, list(meta, "ownerReferences"), "metadata.ownerReferences");
    finalizers(errs, list(meta, "finalizers"), "metadata.finalizers");
}

/// `ValidateLabels`: every key a qualified name, every value a label value.
pub(super) fn labels(errs: &mut Errors, labels: &Value, path: &str) {
    for (key, value) in labels.as_object().into_iter().flatten() {
        for msg in qualified_name(key) {
            errs.invalid(path, go_quote(key), &msg);
        }
        let value = str_of(value);
        for msg in label_value(value) {
            errs.invalid(path, go_quote(value), &msg);
        }
    }
}

/// `ValidateAnnotations`: keys are qualified names (checked lower-cased),
/// and all of them together stay under 256 KiB.
fn annotations(errs: &mut Errors, annotations: &Value, path: &str) {
    let mut total = 0;
    for (key, value) in annotations.as_object().into_iter().flatten() {
        for msg in qualified_name(&key.to_lowercase()) {
            errs.invalid(path, go_quote(key), &msg);
        }
        total += key.len() + str_of(value).len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT);
    }
}

/// Owners no object may have (upstream `BannedOwners`): core/v1 Events.
const BANNED_OWNERS: [(&str, &str); 1] = [("v1", "Event")];

/// `ValidateOwnerReferences`: each reference complete and not banned, and
/// at most one with `controller: true` (the second one found is reported,
/// with the first, as `Kind/name`).
fn owner_references(errs: &mut Errors, references: &[Value], path: &str) {
    let mut first_controller: Option<String> = None;
    for reference in references {
        owner_reference(errs, reference, path);
        if at(reference, "controller") != &Value::Bool(true) {
            continue;
        }
        let current = format!("{}/{}", text(reference, "kind"), text(reference, "name"));
        match &first_controller {
            Some(first) => errs.invalid(
                path,
                go_owner_references(references),
                &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
            ),
            None => first_controller = Some(current),
        }
    }
}

/// `validateOwnerReference`: version, kind, name and uid present, and the
/// owner's kind not banned.
fn owner_reference(errs: &mut Errors, reference: &Value, path: &str) {
    let api_version = text(reference, "apiVersion");
    // `schema.ParseGroupVersion`: "v1", "group/v1"; anything else has no version.
    let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] => ("", *version),
        [group, version] => (*group, *version),
        _ => ("", ""),
    };
    let kind = text(reference, "kind");
    if version.is_empty() {
        errs.invalid(&format!("{path}.apiVersion"), go_quote(api_version), "version must not be empty");
    }
    for field in ["kind", "name", "uid"] {
        let value = text(reference, field);
        if value.is_empty() {
            errs.invalid(&format!("{path}.{field}"), go_quote(value), "must not be empty");
        }
    }
    if group.is_empty() && BANNED_OWNERS.contains(&(version, kind)) {
        let gvk = format!("{group}/{version}, Kind={kind}");
        errs.invalid(path, go_owner_reference(reference), &format!("{gvk} is disallowed from being an owner"));
    }
}

/// `ValidateFinalizers`: each name a qualified name (a name without a
/// domain is accepted), and not both `orphan` and `foregroundDeletion`.
fn finalizers(errs: &mut Errors, finalizers: &[Value], path: &str) {
    for finalizer in finalizers {
        let name = str_of(finalizer);
        for msg in qualified_name(name) {
            errs.invalid(path, go_quote(name), &msg);
        }
    }
    let has = |wanted: &str| finalizers.iter().any(|f| str_of(f) == wanted);
    if has("orphan") && has("foregroundDeletion") {
        let shown = go_string_slice(&Value::Array(finalizers.to_vec()));
        errs.invalid(path, shown, "finalizer orphan and foregroundDeletion cannot be both set");
    }
}

/// `ValidateLabelSelector`.
pub(super) fn label_selector(errs: &mut Errors, selector: &Value, path: &str) {
    labels(errs, at(selector, "matchLabels"), &format!("{path}.matchLabels"));
    for (i, requirement) in list(selector, "matchExpressions").iter().enumerate() {
        let req_path = format!("{path}.matchExpressions[{i}]");
        let values = list(requirement, "values");
        let operator = text(requirement, "operator");
        match operator {
            "In" | "NotIn" if values.is_empty() => {
                errs.required(&format!("{req_path}.values"), "must be specified when `operator` is 'In' or 'NotIn'")
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.forbidden(
                &format!("{req_path}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => errs.invalid(&format!("{req_path}.operator"), go_quote(operator), "not a valid selector operator"),
        }
        let key = text(requirement, "key");
        for msg in qualified_name(key) {
            errs.invalid(&format!("{req_path}.key"), go_quote(key), &msg);
        }
        for (j, value) in values.iter().enumerate() {
            for msg in label_value(str_of(value)) {
                errs.invalid(&format!("{req_path}.values[{j}]"), go_quote(str_of(value)), &msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(old: Value, new: Value) -> Vec<String> {
        let mut errs = Errors::default();
        object_meta_update(&mut errs, &old, &new);
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn setting_deletion_metadata_on_update_is_refused_as_immutable() {
        let set = json!({"deletionTimestamp": "2026-01-02T03:04:05Z", "deletionGracePeriodSeconds": 30});
        assert_eq!(
            causes(json!({}), set.clone()),
            [
                "metadata.deletionTimestamp: Invalid value: 2026-01-02 03:04:05 +0000 UTC: field is immutable",
                "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
            ]
        );
        assert!(causes(set.clone(), set).is_empty());
    }
}
