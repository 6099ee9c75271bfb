//! Template identity: the pod-template hash that names a new ReplicaSet
//! and a DaemonSet's revisions (upstream `controller.ComputeHash`) and
//! template equality ignoring that hash (upstream `EqualIgnoreHash`), which
//! is how a Deployment finds its current revision's ReplicaSet and a
//! StatefulSet compares revisions.
//!
//! Both work on a canonical form of the template: its JSON with nulls, empty
//! arrays and empty objects removed (upstream's semantic equality treats nil
//! and empty maps and slices as equal), object keys sorted, and, for
//! equality, the `pod-template-hash` label dropped.
//!
//! # Stability
//! The hash is 32-bit FNV-1a over the canonical JSON bytes, followed, when
//! `collisionCount` is set, by the count as a little-endian `u32` and four
//! zero bytes (upstream's rule: an unset count and a count of 0 hash
//! differently). The decimal digits of the result are spelled in upstream's
//! alphabet (`SafeEncodeString`). The value is a function of the template's
//! JSON only, so it is the same in every process and every kcm-rs version
//! as long as k8s-openapi serialises a template the same way (fields with a
//! zero value that it starts emitting would change it; a changed hash only
//! names a *new* ReplicaSet differently, it never loses track of an existing
//! one, because ReplicaSets are found by template equality). It is not
//! upstream's value, which hashes a go-spew dump of the Go struct.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kcm_objects::Template;
use serde_json::Value;

use super::hash::{FNV32_OFFSET, fnv32a, safe_encode};
use super::semantic::prune;

/// The label that tells a Deployment's ReplicaSets (and their pods) apart
/// (upstream `DefaultDeploymentUniqueLabelKey`).
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";

/// The pod-template hash of `template` with `collision_count` (upstream
/// `ComputeHash`): 1 to 10 characters of `[bcdfghjklmnpqrstvwxz2456789]`.
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut bytes = Vec::new();
    write_canonical(&canonical(template, false), &mut bytes);
    let mut hash = fnv32a(FNV32_OFFSET, &bytes);
    if let Some(count) = collision_count {
        let mut extra = [0u8; 8];
        extra[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hash = fnv32a(hash, &extra);
    }
    safe_encode(hash)
}

/// Whether two templates are equal once the `pod-template-hash` label is
/// dropped from both, nil and empty counting as equal (upstream
/// `EqualIgnoreHash`).
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    canonical(a, true) == canonical(b, true)
}

/// What [`equal_ignore_hash`] compares of a cached Deployment's or
/// ReplicaSet's template, read from its JSON texts without decoding them.
pub fn cached_canonical_ignoring_hash(template: &Template) -> Value {
    let mut value = serde_json::json!({});
    if let Some(meta) = template.metadata_json() {
        value["metadata"] = serde_json::from_str(meta).unwrap_or(Value::Null);
    }
    if let Some(spec) = template.spec() {
        value["spec"] = serde_json::from_str(spec.as_str()).unwrap_or(Value::Null);
    }
    ignoring_hash(value)
}

/// The template as pruned JSON, optionally without the hash label.
fn canonical(template: &PodTemplateSpec, drop_hash_label: bool) -> Value {
    let value = serde_json::to_value(template).unwrap_or(Value::Null);
    if drop_hash_label {
        return ignoring_hash(value);
    }
    let mut value = value;
    prune(&mut value);
    value
}

/// A template's JSON pruned, without the hash label.
fn ignoring_hash(mut value: Value) -> Value {
    if let Some(labels) = value.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
        labels.remove(POD_TEMPLATE_HASH_LABEL);
    }
    prune(&mut value);
    value
}

/// JSON with object keys in byte order, whatever the map's own order.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(v, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::common::hash::SAFE_ALPHABET;

    fn template(image: &str, labels: &[(&str, &str)]) -> PodTemplateSpec {
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container { name: "c".into(), image: Some(image.into()), ..Default::default() }],
                ..Default::default()
            }),
        }
    }

    /// Scenario 26: stable, in the alphabet, 1–10 characters; the count
    /// changes it, and an unset count differs from 0.
    #[test]
    fn hash_is_stable_and_safe() {
        let t = template("nginx", &[("app", "web")]);
        let h = compute_hash(&t, None);
        assert_eq!(h, compute_hash(&t.clone(), None));
        assert!((1..=10).contains(&h.len()), "{h}");
        assert!(h.bytes().all(|c| SAFE_ALPHABET.contains(&c)), "{h}");
        assert_ne!(h, compute_hash(&t, Some(0)));
        assert_ne!(compute_hash(&t, Some(0)), compute_hash(&t, Some(1)));
        assert_ne!(h, compute_hash(&template("nginx:2", &[("app", "web")]), None));
    }

    /// A cached template, its spec held as JSON, compares as the decoded
    /// template does.
    #[test]
    fn a_cached_templates_form_is_the_decoded_ones() {
        let web = template("nginx", &[("app", "web"), (POD_TEMPLATE_HASH_LABEL, "abc")]);
        let cached = cached_canonical_ignoring_hash(&Template::new(&web));
        assert_eq!(cached, canonical(&web, true));
        assert_eq!(cached, canonical(&template("nginx", &[("app", "web")]), true));
        assert_ne!(cached, canonical(&template("nginx:2", &[("app", "web")]), true));
        let empty = cached_canonical_ignoring_hash(&Template::default());
        assert_eq!(empty, canonical(&PodTemplateSpec::default(), true));
    }

    /// The value itself is part of the contract (names must not change
    /// between kcm-rs versions): pinned.
    #[test]
    fn hash_value_is_pinned() {
        assert_eq!(compute_hash(&template("nginx", &[("app", "web")]), None), "5776f98846");
        assert_eq!(compute_hash(&template("nginx", &[("app", "web")]), Some(1)), "7fdf679775");
    }

    #[test]
    fn equality_ignores_the_hash_label_and_empty_fields() {
        let a = template("nginx", &[("app", "web")]);
        let b = template("nginx", &[("app", "web"), (POD_TEMPLATE_HASH_LABEL, "abc")]);
        assert!(equal_ignore_hash(&a, &b));
        let mut c = a.clone();
        c.metadata.as_mut().unwrap().annotations = Some(BTreeMap::new());
        c.spec.as_mut().unwrap().volumes = Some(vec![]);
        assert!(equal_ignore_hash(&a, &c), "nil and empty are equal");
        assert!(!equal_ignore_hash(&a, &template("nginx:2", &[("app", "web")])));
        assert!(!equal_ignore_hash(&a, &template("nginx", &[("app", "web"), ("x", "y")])));
    }
}
