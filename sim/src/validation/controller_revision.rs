//! Validation of ControllerRevisions (`ValidateControllerRevision` and
//! `ValidateControllerRevisionUpdate`): a revision carries `data` and a
//! non-negative `revision` number, and its `data` never changes once
//! written (the DaemonSet and StatefulSet controllers, and `kubectl
//! rollout undo`, read old revisions back as they were).

use serde_json::Value;

use super::access::{at, int};
use super::errors::{Errors, IMMUTABLE, nonnegative};

/// `ValidateControllerRevision`, past the metadata.
pub(super) fn controller_revision(errs: &mut Errors, revision: &Value) {
    if at(revision, "data").is_null() {
        errs.required("data", "data is mandatory");
    }
    nonnegative(errs, Some(int(revision, "revision").unwrap_or(0)), "revision");
}

/// The `data` rule of `ValidateControllerRevisionUpdate` (upstream
/// compares the bytes; here the parsed JSON, so a re-indented copy of the
/// same data is no change).
pub(super) fn data_immutable(errs: &mut Errors, old: &Value, new: &Value) {
    let data = at(new, "data");
    if at(old, "data") != data {
        errs.invalid("data", go_raw_extension(data), IMMUTABLE);
    }
}

/// Go's `%#v` of a `runtime.RawExtension` holding `data` as its JSON
/// bytes (upstream keeps the bytes as sent; these are compact).
fn go_raw_extension(data: &Value) -> String {
    let raw = if data.is_null() {
        "[]uint8(nil)".to_owned()
    } else {
        let bytes: Vec<String> = data.to_string().bytes().map(|b| format!("{b:#x}")).collect();
        format!("[]uint8{{{}}}", bytes.join(", "))
    };
    format!("runtime.RawExtension{{Raw:{raw}, Object:runtime.Object(nil)}}")
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestValidateControllerRevision` and
    //! `TestValidateControllerRevisionUpdate` cases.

    use serde_json::json;

    use super::super::fixtures::{lines, with, without};
    use crate::resources::Builtin;
    use crate::validation::{validate_create, validate_update};

    fn revision() -> serde_json::Value {
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "web-5d8f6c9b7", "namespace": "default"},
            "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1})
    }

    #[test]
    fn validate_controller_revision() {
        let cases: Vec<(&str, serde_json::Value, Vec<&str>)> = vec![
            ("valid", revision(), vec![]),
            ("missing data", without(revision(), "/data"), vec!["data: Required value: data is mandatory"]),
            (
                "negative revision",
                with(revision(), "/revision", json!(-1)),
                vec!["revision: Invalid value: -1: must be greater than or equal to 0"],
            ),
        ];
        for (name, object, want) in cases {
            assert_eq!(lines(&validate_create(Builtin::ControllerRevision, &object)), want, "{name}");
        }
    }

    #[test]
    fn validate_controller_revision_update() {
        let old = revision();
        let relabelled = with(old.clone(), "/metadata/labels", json!({"a": "b"}));
        assert!(validate_update(Builtin::ControllerRevision, &old, &relabelled).is_empty());
        let renumbered = with(old.clone(), "/revision", json!(2));
        assert!(validate_update(Builtin::ControllerRevision, &old, &renumbered).is_empty(), "as upstream");
        let changed = with(old.clone(), "/data", json!({"a": 1}));
        assert_eq!(
            lines(&validate_update(Builtin::ControllerRevision, &old, &changed)),
            vec![
                "data: Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d}, \
                 Object:runtime.Object(nil)}: field is immutable"
            ]
        );
    }
}
