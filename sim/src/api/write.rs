//! `create`, `update` and `patch`: the request's body decoded
//! (`body.rs`), dry runs, admission, optimistic concurrency under the
//! store's lock, and the answer with its warnings. What the object becomes
//! (server-owned metadata, subresources, generation, defaulting and
//! validation) is `crate::strategy`'s.

use std::sync::Arc;

use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::body::{FieldValidation, check_schema, check_type, parse_body};
use super::identity::{check_name, check_uid_precondition};
use super::request::Request;
use super::response::{bytes_response, json_response, render, with_warnings};
use super::route::Target;
use super::scale::scale_of;
use super::state::Api;
use crate::admission;
use crate::clusterip::Lease;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::patch::{self, PatchError, PatchType, Patched};
use crate::resources::{Builtin, ResourceType, Subresource};
use crate::store::{StoreError, Stored, UpdateError};
use crate::strategy::{self, next_state, should_delete_after_update};

fn is_dry_run(req: &Request) -> ApiResult<bool> {
    match req.param("dryRun") {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!("unsupported dry run option {other:?}: only All"))),
    }
}

/// `POST` to a collection.
pub async fn create(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let rt = &target.rt;
    let fv = FieldValidation::of(req)?;
    let dry_run = is_dry_run(req)?;
    let mut object = parse_body(req, rt.builtin)?;
    check_type(rt, &mut object, &rt.kind, &rt.api_version())?;
    let mut warnings = Vec::new();
    let mut object = check_schema(rt, object, fv, &mut warnings)?;
    let admission_name = object::admission_name(&object).to_owned();
    let name = strategy::before_create(rt, target.ns(), &mut object)?;
    admission::admit_create(api, rt, target.ns(), &admission_name, &mut object).await?;
    // Held until the new service is stored (`beginCreate`).
    let lease = cluster_ip_lease(api, rt);
    if let Some(lease) = &lease {
        lease.allocate_create(&mut object).map_err(|r| r.into_api_error(rt, &name))?;
    }
    strategy::prepare_for_create(rt, &name, &mut object)?;
    if dry_run {
        return Ok(with_warnings(json_response(StatusCode::CREATED, &object), &warnings));
    }
    // Upstream's CheckGeneratedNameError: any generateName makes a taken
    // name the server's failure to generate one.
    let generated = object.pointer("/metadata/generateName").and_then(Value::as_str).is_some_and(|g| !g.is_empty());
    let stored = api.store.create(&target.key(), target.ns(), &name, object).map_err(|e| match e {
        StoreError::AlreadyExists if generated => ApiError::generate_name_conflict(rt, &name),
        StoreError::AlreadyExists => ApiError::already_exists(rt, &name),
        other => ApiError::internal(other.to_string()),
    })?;
    let repr = req.representation()?;
    Ok(with_warnings(bytes_response(StatusCode::CREATED, render(rt, repr, &stored.bytes)), &warnings))
}

/// For a Service write, the cluster IP allocator's [`Lease`]: held until
/// the write is stored.
fn cluster_ip_lease<'a>(api: &'a Api, rt: &ResourceType) -> Option<Lease<'a>> {
    (rt.builtin == Some(Builtin::Service)).then(|| {
        api.cluster_ips.lease(|| {
            let (stored, _) = api.store.list(&Api::type_key(rt), None);
            stored.iter().map(|(_, s)| s.value()).collect()
        })
    })
}

/// `PUT` of an object or a subresource.
pub fn update(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let rt = &target.rt;
    let fv = FieldValidation::of(req)?;
    let mut incoming = parse_body(req, rt.builtin.filter(|_| target.sub != Some(Subresource::Scale)))?;
    match target.sub {
        Some(Subresource::Scale) => check_type(rt, &mut incoming, "Scale", "autoscaling/v1")?,
        _ => check_type(rt, &mut incoming, &rt.kind, &rt.api_version())?,
    }
    check_name(target, &incoming)?;
    let mut warnings = Vec::new();
    if target.sub != Some(Subresource::Scale) {
        incoming = check_schema(rt, incoming, fv, &mut warnings)?;
    }
    commit(api, req, target, &warnings, move |current| {
        check_uid_precondition(target, current, &incoming)?;
        Ok(incoming)
    })
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
        let (base, patched_type) = match (sub, rt.builtin) {
            (Some(Subresource::Scale), _) => (scale_of(current), Patched::Scale),
            (_, Some(kind)) => (current.clone(), Patched::Builtin(kind)),
            (_, None) => (current.clone(), Patched::Custom),
        };
        let patched = patch::apply(patch_type, patched_type, &base, &body).map_err(|e| match e {
            PatchError::Malformed(m) => ApiError::bad_request(m),
            PatchError::Failed(m) => {
                ApiError::invalid(&rt, object::name(current), &[("FieldValueInvalid".into(), m, String::new())])
            }
            PatchError::Unsupported(m) => ApiError::unsupported_media_type(m),
        })?;
        check_name(target, &patched)?;
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
    // Only the main resource allocates (a `/status` write keeps the spec).
    let lease = target.sub.is_none().then(|| cluster_ip_lease(api, rt)).flatten();
    let result = api.store.update(&key, target.ns(), &name, |current: &Stored| {
        let current = current.value();
        let mut incoming = transform(&current)?;
        if let Some(lease) = &lease {
            lease.allocate_update(&current, &mut incoming).map_err(|r| r.into_api_error(rt, &name))?;
        }
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
        bytes::Bytes::from(scale_of(&value).to_string())
    } else {
        render(rt, repr, &stored.bytes)
    };
    Ok(with_warnings(bytes_response(StatusCode::OK, body), warnings))
}
