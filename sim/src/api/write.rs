//! `create`, `update` and `patch`, with the API server's rules: names and
//! `generateName`, server-owned metadata (uid, creationTimestamp,
//! generation), optimistic concurrency on resourceVersion, status and scale
//! subresources separated from the main resource, defaulting, admission,
//! validation (`422 Invalid`) and `fieldValidation`.

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::meta::{self, render};
use super::{Api, Request, Target, bytes_response, json_response};
use crate::admission;
use crate::error::{ApiError, ApiResult};
use crate::patch::{self, PatchError, PatchType};
use crate::resources::{Builtin, ResourceType, Subresource};
use crate::store::{StoreError, Stored, UpdateError};
use crate::{defaults, protobuf, typed, validation};

/// How unknown fields in a request body are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

impl FieldValidation {
    fn of(req: &Request) -> ApiResult<Self> {
        match req.param("fieldValidation").unwrap_or("Warn") {
            "Ignore" => Ok(FieldValidation::Ignore),
            "Warn" | "" => Ok(FieldValidation::Warn),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn or Strict, got {other:?}"
            ))),
        }
    }
}

fn parse_body(req: &Request, kind: Option<Builtin>) -> ApiResult<Value> {
    let content_type = req.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media == protobuf::MEDIA_TYPE {
        // kubectl's generator commands send protobuf for built-in kinds.
        let Some(kind) = kind else {
            return Err(ApiError::unsupported_media_type(
                "protobuf bodies are only accepted for built-in kinds; send JSON",
            ));
        };
        return protobuf::decode(kind, &req.body).map_err(|e| match e {
            protobuf::ProtobufError::UnsupportedKind(_) => ApiError::unsupported_media_type(e.to_string()),
            other => ApiError::bad_request(format!("cannot decode the protobuf body: {other}")),
        });
    }
    if !matches!(media, "" | "application/json" | "application/yaml" | "*/*") {
        return Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json, application/yaml (got {content_type:?})"
        )));
    }
    let value: Value = serde_json::from_slice(&req.body)
        .or_else(|_| serde_yaml::from_slice(&req.body))
        .map_err(|e| ApiError::bad_request(format!("the body of the request was in an unknown format: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request("the body of the request must be a JSON object"));
    }
    Ok(value)
}

fn is_dry_run(req: &Request) -> ApiResult<bool> {
    match req.param("dryRun") {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!("unsupported dry run option {other:?}: only All"))),
    }
}

/// Checks `kind`/`apiVersion` of a body against the target and fills them
/// in when absent.
fn check_type(rt: &ResourceType, object: &mut Value, expect_kind: &str, expect_version: &str) -> ApiResult<()> {
    match object.get("apiVersion").and_then(Value::as_str) {
        Some(v) if v != expect_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expect_version})"
            )));
        }
        _ => object["apiVersion"] = json!(expect_version),
    }
    match object.get("kind").and_then(Value::as_str) {
        Some(k) if k != expect_kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({expect_kind}) for {}",
                rt.qualified_name()
            )));
        }
        _ => object["kind"] = json!(expect_kind),
    }
    Ok(())
}

/// Unknown-field handling, validation and normalisation for built-in
/// kinds. Unknown fields are dropped, as decoding into the API types does.
fn check_schema(rt: &ResourceType, object: Value, fv: FieldValidation, warnings: &mut Vec<String>) -> ApiResult<Value> {
    let Some(kind) = rt.builtin else { return Ok(object) };
    let decoded = typed::decode(kind, &object).map_err(ApiError::bad_request)?;
    if !decoded.unknown.is_empty() {
        let list: Vec<String> = decoded.unknown.iter().map(|f| format!("unknown field \"{f}\"")).collect();
        match fv {
            FieldValidation::Strict => {
                return Err(ApiError::bad_request(format!("strict decoding error: {}", list.join(", "))));
            }
            FieldValidation::Warn => warnings.extend(list),
            FieldValidation::Ignore => {}
        }
    }
    Ok(decoded.object)
}

fn invalid(rt: &ResourceType, name: &str, causes: Vec<validation::Cause>) -> ApiResult<()> {
    if causes.is_empty() {
        return Ok(());
    }
    let causes: Vec<(String, String, String)> =
        causes.into_iter().map(|c| (c.reason.to_owned(), c.message, c.field)).collect();
    Err(ApiError::invalid(rt, name, &causes))
}

/// Types whose `/status` writes also take the request's metadata (what
/// upstream's status strategies for these kinds do not reset; newer types
/// and custom resources reset all of it, `ResetObjectMetaForStatus`).
fn status_writes_metadata(rt: &ResourceType) -> bool {
    matches!(rt.builtin, Some(Builtin::Deployment | Builtin::ReplicaSet))
}

/// Types whose `metadata.generation` the API server maintains.
fn tracks_generation(rt: &ResourceType) -> bool {
    matches!(rt.builtin, None | Some(Builtin::Deployment | Builtin::ReplicaSet))
}

/// `POST` to a collection.
pub fn create(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let rt = &target.rt;
    let fv = FieldValidation::of(req)?;
    let dry_run = is_dry_run(req)?;
    let mut object = parse_body(req, rt.builtin)?;
    check_type(rt, &mut object, &rt.kind, &rt.api_version())?;
    let mut warnings = Vec::new();
    let mut object = check_schema(rt, object, fv, &mut warnings)?;
    let md = meta::metadata_mut(&mut object);
    if rt.namespaced {
        let ns = target.ns().to_owned();
        match md.get("namespace").and_then(Value::as_str) {
            Some(given) if !given.is_empty() && given != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                md.insert("namespace".into(), json!(ns));
            }
        }
    } else {
        md.remove("namespace");
    }
    let name = match md.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
        Some(name) => name.to_owned(),
        None => match md.get("generateName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            Some(prefix) => meta::generate_name(prefix),
            None => {
                return invalid(
                    rt,
                    "",
                    vec![validation::Cause {
                        reason: "FieldValueRequired",
                        message: "Required value: name or generateName is required".into(),
                        field: "metadata.name".into(),
                    }],
                )
                .map(|()| unreachable!("invalid() with a cause is an error"));
            }
        },
    };
    md.insert("name".into(), json!(name));
    md.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    md.insert("creationTimestamp".into(), json!(meta::now_rfc3339()));
    for server_owned in
        ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "managedFields"]
    {
        md.remove(server_owned);
    }
    if tracks_generation(rt) {
        md.insert("generation".into(), json!(1));
    } else {
        md.remove("generation");
    }
    if rt.namespaced {
        admission::check_namespace_open(api, rt, target.ns(), &name)?;
    }
    if let Some(kind) = rt.builtin {
        defaults::apply(kind, &mut object);
        admission::on_create(kind, &mut object);
        invalid(rt, &name, validation::validate_create(kind, &object))?;
    }
    if dry_run {
        return Ok(with_warnings(json_response(StatusCode::CREATED, &object), &warnings));
    }
    let stored = api.store.create(&target.key(), target.ns(), &name, object).map_err(|e| match e {
        StoreError::AlreadyExists => ApiError::already_exists(rt, &name),
        other => ApiError::internal(other.to_string()),
    })?;
    let repr = req.representation()?;
    Ok(with_warnings(bytes_response(StatusCode::CREATED, render(rt, repr, &stored.bytes)), &warnings))
}

fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        let text = format!("299 - \"{}\"", w.replace('"', "\\\""));
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// `PUT` of an object or a subresource.
pub fn update(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let rt = &target.rt;
    let name = target.name.clone().unwrap_or_default();
    let fv = FieldValidation::of(req)?;
    let mut incoming = parse_body(req, rt.builtin.filter(|_| target.sub != Some(Subresource::Scale)))?;
    match target.sub {
        Some(Subresource::Scale) => check_type(rt, &mut incoming, "Scale", "autoscaling/v1")?,
        _ => check_type(rt, &mut incoming, &rt.kind, &rt.api_version())?,
    }
    if meta::name(&incoming) != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({name})",
            meta::name(&incoming)
        )));
    }
    let mut warnings = Vec::new();
    if target.sub != Some(Subresource::Scale) {
        incoming = check_schema(rt, incoming, fv, &mut warnings)?;
    }
    commit(api, req, target, &warnings, move |_current| Ok(incoming))
}

/// `PATCH` of an object or a subresource.
pub fn patch(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let rt = target.rt.clone();
    let content_type = req.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let patch_type = PatchType::from_content_type(content_type).ok_or_else(|| {
        ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, \
             application/strategic-merge-patch+json (got {content_type:?})"
        ))
    })?;
    let fv = FieldValidation::of(req)?;
    let body = req.body.clone();
    let sub = target.sub;
    let mut warnings = Vec::new();
    // Unknown-field checks need the patched object; run them inside the
    // transform and collect warnings through a cell.
    let warn_cell = std::cell::RefCell::new(Vec::new());
    let response = commit(api, req, target, &[], |current: &Value| {
        let (base, kind) = match sub {
            Some(Subresource::Scale) => (meta::scale_of(current), None),
            _ => (current.clone(), rt.builtin),
        };
        let patched = patch::apply(patch_type, kind, &base, &body).map_err(|e| match e {
            PatchError::Malformed(m) => ApiError::bad_request(m),
            PatchError::Failed(m) => {
                ApiError::invalid(&rt, meta::name(current), &[("FieldValueInvalid".into(), m, String::new())])
            }
            PatchError::Unsupported(m) => ApiError::unsupported_media_type(m),
        })?;
        if sub == Some(Subresource::Scale) {
            return Ok(patched);
        }
        let mut w = Vec::new();
        let checked = check_schema(&rt, patched, fv, &mut w)?;
        warn_cell.borrow_mut().extend(w);
        Ok(checked)
    })?;
    warnings.extend(warn_cell.into_inner());
    Ok(with_warnings(response, &warnings))
}

/// Applies an incoming object (from `transform` of the current one) to the
/// stored object under the store's lock, then answers with the result.
fn commit(
    api: &Arc<Api>,
    req: &Request,
    target: &Target,
    warnings: &[String],
    transform: impl FnOnce(&Value) -> ApiResult<Value>,
) -> ApiResult<Response> {
    let rt = &target.rt;
    let name = target.name.clone().unwrap_or_default();
    let dry_run = is_dry_run(req)?;
    let repr = req.representation()?;
    let key = target.key();
    let mut dry_result = None;
    let result = api.store.update(&key, target.ns(), &name, |current: &Stored| {
        let current = current.value();
        let incoming = transform(&current)?;
        let next = next_state(rt, target.sub, &current, incoming)?;
        if dry_run {
            dry_result = Some(next.unwrap_or(current));
            return Ok(None);
        }
        Ok(next)
    });
    let stored = match result {
        Ok(stored) => stored,
        Err(UpdateError::Rejected(e)) => return Err(e),
        Err(UpdateError::Store(StoreError::NotFound)) => return Err(ApiError::not_found(rt, &name)),
        Err(UpdateError::Store(e)) => return Err(ApiError::internal(e.to_string())),
    };
    if let Some(object) = dry_result {
        return Ok(with_warnings(json_response(StatusCode::OK, &object), warnings));
    }
    let value = stored.value();
    if should_delete_after_update(rt, &value) {
        // The last finalizer of an object being deleted is gone: the API
        // server deletes it as part of the same write.
        let _ = api.store.delete(&key, target.ns(), &name, Some(stored.rv));
    }
    let body = if target.sub == Some(Subresource::Scale) {
        bytes::Bytes::from(meta::scale_of(&value).to_string())
    } else {
        render(rt, repr, &stored.bytes)
    };
    Ok(with_warnings(bytes_response(StatusCode::OK, body), warnings))
}

/// Whether an update left an object with nothing holding up its deletion.
pub fn should_delete_after_update(rt: &ResourceType, object: &Value) -> bool {
    let grace_done =
        object.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).is_none_or(|g| g == 0);
    let namespace_finalized = rt.builtin != Some(Builtin::Namespace)
        || object.pointer("/spec/finalizers").and_then(Value::as_array).is_none_or(Vec::is_empty);
    meta::is_terminating(object) && meta::finalizers(object).is_empty() && grace_done && namespace_finalized
}

/// The object to store for an update of `current` with `incoming` through
/// `sub`, or `None` when nothing changes.
fn next_state(
    rt: &ResourceType,
    sub: Option<Subresource>,
    current: &Value,
    incoming: Value,
) -> ApiResult<Option<Value>> {
    let name = meta::name(current).to_owned();
    let wanted_rv = meta::resource_version(&incoming).to_owned();
    if !wanted_rv.is_empty() && wanted_rv != meta::resource_version(current) {
        return Err(ApiError::conflict(
            rt,
            &name,
            "the object has been modified; please apply your changes to the latest version and try again",
        ));
    }
    let mut next = match sub {
        Some(Subresource::Status) if status_writes_metadata(rt) => {
            // Upstream's status strategies for these kinds reset only the
            // spec (and, for Deployments, the labels): the deployment
            // controller writes its revision annotation through `/status`.
            let mut next = incoming;
            set_or_remove(&mut next, "spec", current.get("spec").cloned());
            if rt.builtin == Some(Builtin::Deployment) {
                let labels = current.pointer("/metadata/labels").cloned();
                set_or_remove(&mut next["metadata"], "labels", labels);
            }
            keep_server_metadata(rt, &mut next, current)?;
            next
        }
        Some(Subresource::Status) => {
            let mut next = current.clone();
            set_or_remove(&mut next, "status", incoming.get("status").cloned());
            next
        }
        Some(Subresource::Finalize) => {
            let mut next = current.clone();
            let finalizers = incoming.pointer("/spec/finalizers").cloned().unwrap_or_else(|| json!([]));
            next["spec"]["finalizers"] = finalizers;
            next
        }
        Some(Subresource::Scale) => {
            let replicas = incoming.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
            if replicas < 0 {
                return Err(ApiError::invalid(
                    rt,
                    &name,
                    &[(
                        "FieldValueInvalid".into(),
                        format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                        "spec.replicas".into(),
                    )],
                ));
            }
            let mut next = current.clone();
            next["spec"]["replicas"] = json!(replicas);
            next
        }
        None => {
            let mut next = incoming;
            if rt.has(Subresource::Status) {
                set_or_remove(&mut next, "status", current.get("status").cloned());
            }
            if rt.builtin == Some(Builtin::Namespace) {
                // Only `/finalize` changes a namespace's finalizers
                // (upstream namespaceStrategy.PrepareForUpdate).
                let finalizers = current.pointer("/spec/finalizers").cloned();
                if finalizers.is_some() && !next.get("spec").is_some_and(Value::is_object) {
                    next["spec"] = json!({});
                }
                if let Some(spec) = next.get_mut("spec") {
                    set_or_remove(spec, "finalizers", finalizers);
                }
            }
            keep_server_metadata(rt, &mut next, current)?;
            next
        }
    };
    if let Some(kind) = rt.builtin {
        defaults::apply(kind, &mut next);
        invalid(rt, &name, validation::validate_update(kind, current, &next))?;
    }
    let annotations_changed = || current.pointer("/metadata/annotations") != next.pointer("/metadata/annotations");
    // A Deployment's annotations are copied to its ReplicaSets, so the API
    // server counts them as spec (upstream `deploymentStrategy`); status
    // writes never bump the generation.
    let bumps = match sub {
        None if rt.builtin == Some(Builtin::Deployment) => spec_changed(current, &next) || annotations_changed(),
        None => spec_changed(current, &next),
        Some(Subresource::Scale) => spec_changed(current, &next),
        Some(_) => false,
    };
    if tracks_generation(rt) && bumps {
        let generation = current.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
        meta::metadata_mut(&mut next).insert("generation".into(), json!(generation + 1));
    }
    let mut unchanged = next.clone();
    meta::metadata_mut(&mut unchanged).insert("resourceVersion".into(), json!(meta::resource_version(current)));
    if unchanged == *current {
        return Ok(None);
    }
    Ok(Some(next))
}

fn set_or_remove(object: &mut Value, field: &str, value: Option<Value>) {
    if let Some(map) = object.as_object_mut() {
        match value {
            Some(v) => {
                map.insert(field.to_owned(), v);
            }
            None => {
                map.remove(field);
            }
        }
    }
}

/// Copies the server-owned metadata of `current` into `next` and enforces
/// what may not change during deletion (upstream `ValidateNoNewFinalizers`:
/// a 422 Invalid, not a 403).
fn keep_server_metadata(rt: &ResourceType, next: &mut Value, current: &Value) -> ApiResult<()> {
    if meta::is_terminating(current) {
        let old = meta::finalizers(current);
        let mut added: Vec<String> = meta::finalizers(next).into_iter().filter(|f| !old.contains(f)).collect();
        if !added.is_empty() {
            added.sort();
            added.dedup();
            let shown: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
            return Err(ApiError::invalid(
                rt,
                meta::name(current),
                &[(
                    validation::FIELD_VALUE_FORBIDDEN.to_owned(),
                    format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, \
                         found new finalizers []string{{{}}}",
                        shown.join(", ")
                    ),
                    "metadata.finalizers".to_owned(),
                )],
            ));
        }
    }
    let md = meta::metadata_mut(next);
    for owned in
        ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "namespace"]
    {
        match current.pointer(&format!("/metadata/{owned}")) {
            Some(v) => {
                md.insert(owned.to_owned(), v.clone());
            }
            None => {
                md.remove(owned);
            }
        }
    }
    md.remove("selfLink");
    md.remove("managedFields");
    Ok(())
}

/// Whether anything but metadata and status differs.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        v
    };
    strip(old) != strip(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Registry;

    /// A Deployment as stored: defaulted.
    fn deployment() -> Value {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1", "generation": 1, "resourceVersion": "5",
                "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            "status": {"replicas": 1}});
        defaults::apply(Builtin::Deployment, &mut d);
        d
    }

    fn rt() -> Arc<ResourceType> {
        Registry::default().builtin(Builtin::Deployment)
    }

    #[test]
    fn main_resource_writes_keep_status_and_bump_generation_on_spec_change() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["spec"]["replicas"] = json!(3);
        incoming["status"] = json!({"replicas": 99});
        let next = next_state(&rt(), None, &current, incoming).unwrap().unwrap();
        assert_eq!(next["status"], json!({"replicas": 1}));
        assert_eq!(next["metadata"]["generation"], 2);
    }

    #[test]
    fn deployment_status_writes_keep_spec_labels_and_generation() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["spec"]["replicas"] = json!(3);
        incoming["metadata"]["labels"] = json!({"x": "y"});
        incoming["status"] = json!({"replicas": 2});
        let next = next_state(&rt(), Some(Subresource::Status), &current, incoming).unwrap().unwrap();
        assert_eq!(next["spec"]["replicas"], 1);
        assert_eq!(next["metadata"]["generation"], 1);
        assert!(next["metadata"].get("labels").is_none());
        assert_eq!(next["status"]["replicas"], 2);
    }

    #[test]
    fn deployment_status_writes_take_annotations_but_not_labels() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["metadata"]["labels"] = json!({"x": "y"});
        incoming["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "2"});
        incoming["metadata"]["uid"] = json!("forged");
        incoming["status"] = json!({"replicas": 2});
        let next = next_state(&rt(), Some(Subresource::Status), &current, incoming).unwrap().unwrap();
        assert_eq!(next["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2");
        assert!(next["metadata"].get("labels").is_none());
        assert_eq!((&next["metadata"]["uid"], &next["metadata"]["generation"]), (&json!("u1"), &json!(1)));
        assert_eq!(next["status"]["replicas"], 2);
    }

    #[test]
    fn replica_set_status_writes_take_labels_and_annotations() {
        let rt = Registry::default().builtin(Builtin::ReplicaSet);
        let mut current = deployment();
        current["kind"] = json!("ReplicaSet");
        defaults::apply(Builtin::ReplicaSet, &mut current);
        let mut incoming = current.clone();
        incoming["metadata"]["labels"] = json!({"x": "y"});
        incoming["metadata"]["annotations"] = json!({"a": "b"});
        incoming["spec"]["replicas"] = json!(7);
        let next = next_state(&rt, Some(Subresource::Status), &current, incoming).unwrap().unwrap();
        assert_eq!(
            (&next["metadata"]["labels"]["x"], &next["metadata"]["annotations"]["a"]),
            (&json!("y"), &json!("b"))
        );
        assert_eq!((&next["spec"]["replicas"], &next["metadata"]["generation"]), (&json!(1), &json!(1)));
    }

    #[test]
    fn deployment_annotation_changes_bump_the_generation() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["metadata"]["annotations"] = json!({"note": "x"});
        let next = next_state(&rt(), None, &current, incoming).unwrap().unwrap();
        assert_eq!(next["metadata"]["generation"], 2);
    }

    #[test]
    fn label_changes_keep_generation_and_stale_versions_conflict() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["metadata"]["labels"] = json!({"x": "y"});
        let next = next_state(&rt(), None, &current, incoming.clone()).unwrap().unwrap();
        assert_eq!(next["metadata"]["generation"], 1);
        incoming["metadata"]["resourceVersion"] = json!("4");
        let err = next_state(&rt(), None, &current, incoming).unwrap_err();
        assert_eq!((err.code, err.reason), (409, "Conflict"));
    }

    #[test]
    fn new_finalizers_on_an_object_being_deleted_are_invalid() {
        let mut current = deployment();
        current["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        current["metadata"]["finalizers"] = json!(["a"]);
        let mut incoming = current.clone();
        incoming["metadata"]["finalizers"] = json!(["a", "b"]);
        let err = next_state(&rt(), None, &current, incoming).unwrap_err();
        assert_eq!((err.code, err.reason), (422, "Invalid"));
        assert!(err.message.ends_with("found new finalizers []string{\"b\"}"), "{}", err.message);
        let mut removing = current.clone();
        removing["metadata"]["finalizers"] = json!([]);
        assert!(next_state(&rt(), None, &current, removing).is_ok());
    }

    #[test]
    fn namespace_updates_keep_the_finalizers() {
        let rt = Registry::default().builtin(Builtin::Namespace);
        let current = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "resourceVersion": "3"},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        let mut incoming = current.clone();
        incoming["spec"]["finalizers"] = json!([]);
        incoming["metadata"]["labels"] = json!({"x": "y"});
        let next = next_state(&rt, None, &current, incoming).unwrap().unwrap();
        assert_eq!(next["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(next["metadata"]["labels"]["x"], "y");
    }

    #[test]
    fn an_identical_write_changes_nothing() {
        let current = deployment();
        assert!(next_state(&rt(), None, &current, current.clone()).unwrap().is_none());
    }
}
