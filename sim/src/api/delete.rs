//! `delete` and `deletecollection`: `DeleteOptions` (from the body or the
//! query), preconditions, the second delete of a terminating namespace, and
//! the store writes. What a delete makes of the object (graceful deletion,
//! propagation finalizers, namespace termination) is
//! [`crate::strategy::mark_for_deletion`]'s; the garbage collector (not the
//! API server) acts on the finalizers.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use super::request::Request;
use super::response::{bytes_response, json_response, list_kind, render, with_warnings};
use super::route::Target;
use super::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::resources::{Builtin, ResourceType};
use crate::store::{StoreError, UpdateError};
use crate::strategy::{JOB_DELETE_WARNING, mark_for_deletion, orphans_by_default};

/// `DeleteOptions`, from the body or the query.
#[derive(Debug, Default)]
struct DeleteOptions {
    grace_period: Option<i64>,
    propagation: Option<String>,
    precondition_uid: Option<String>,
    precondition_rv: Option<String>,
    dry_run: bool,
}

impl DeleteOptions {
    /// The warnings a delete with these options gets: the Job storage's
    /// when no propagation policy is named and Jobs orphan by default.
    fn warnings(&self, rt: &ResourceType) -> Vec<String> {
        if self.propagation.is_none() && orphans_by_default(rt) {
            vec![JOB_DELETE_WARNING.to_owned()]
        } else {
            Vec::new()
        }
    }

    fn of(req: &Request) -> ApiResult<Self> {
        let body: Value = if req.body.is_empty() {
            json!({})
        } else {
            serde_json::from_slice(&req.body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
        };
        let grace_period = match req.param("gracePeriodSeconds") {
            Some(g) => Some(g.parse().map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds {g}")))?),
            None => body.get("gracePeriodSeconds").and_then(Value::as_i64),
        };
        let orphan = req
            .param("orphanDependents")
            .map(|o| o == "true")
            .or_else(|| body.get("orphanDependents").and_then(Value::as_bool));
        let propagation = req
            .param("propagationPolicy")
            .map(str::to_owned)
            .or_else(|| body.get("propagationPolicy").and_then(Value::as_str).map(str::to_owned))
            .or_else(|| orphan.map(|o| if o { "Orphan".into() } else { "Background".into() }));
        if let Some(p) = &propagation
            && !matches!(p.as_str(), "Orphan" | "Background" | "Foreground")
        {
            return Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: \"{p}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            )));
        }
        let dry_run = req.param("dryRun") == Some("All")
            || body.get("dryRun").and_then(Value::as_array).is_some_and(|a| a.iter().any(|v| v == "All"));
        Ok(DeleteOptions {
            grace_period,
            propagation,
            precondition_uid: body.pointer("/preconditions/uid").and_then(Value::as_str).map(str::to_owned),
            precondition_rv: body.pointer("/preconditions/resourceVersion").and_then(Value::as_str).map(str::to_owned),
            dry_run,
        })
    }
}

/// `DELETE` of one object.
pub fn delete(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let options = DeleteOptions::of(req)?;
    let name = target.name.clone().unwrap_or_default();
    let repr = req.representation()?;
    let bytes = delete_one(api, &target.rt, target.ns(), &name, &options)?;
    let response = bytes_response(StatusCode::OK, render(&target.rt, repr, &bytes));
    Ok(with_warnings(response, &options.warnings(&target.rt)))
}

/// `DELETE` of a collection: every selected object in scope, each as a
/// single delete would.
pub fn delete_collection(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    if target.sub.is_some() {
        return Err(ApiError::method_not_allowed("deletecollection is not allowed on subresources"));
    }
    let options = DeleteOptions::of(req)?;
    let selector = req.selector(&target.rt.kind)?;
    let namespace = target.namespace.as_deref().filter(|_| target.rt.namespaced);
    let (items, _) = api.store.list(&target.key(), namespace);
    let mut deleted = Vec::new();
    for ((ns, name), stored) in items {
        if !selector.matches(&stored.attrs) {
            continue;
        }
        match delete_one(api, &target.rt, &ns, &name, &options) {
            Ok(bytes) => {
                deleted.push(serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null));
            }
            // Gone in the meantime: nothing left to delete.
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let list = json!({
        "kind": list_kind(&target.rt),
        "apiVersion": target.rt.api_version(),
        "metadata": {"resourceVersion": api.store.current_rv().to_string()},
        "items": deleted,
    });
    Ok(with_warnings(json_response(StatusCode::OK, &list), &options.warnings(&target.rt)))
}

/// How many times a delete that lost a race with another write starts
/// over before it answers the conflict.
const RACE_RETRIES: usize = 16;

/// What one try at a delete came to.
enum Attempt {
    /// The object's last state: removed now, or marked and still stored.
    Done(Bytes),
    /// Another write came between the read and the delete or the mark.
    Raced,
}

/// Deletes one object. The API server retries a delete that raced with
/// another write (its store's guaranteed update) and answers a conflict
/// only for a precondition the client set; so does kube-sim.
fn delete_one(api: &Arc<Api>, rt: &ResourceType, ns: &str, name: &str, options: &DeleteOptions) -> ApiResult<Bytes> {
    for _ in 0..RACE_RETRIES {
        if let Attempt::Done(bytes) = try_delete(api, rt, ns, name, options)? {
            return Ok(bytes);
        }
    }
    Err(ApiError::conflict(
        rt,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    ))
}

fn try_delete(api: &Arc<Api>, rt: &ResourceType, ns: &str, name: &str, options: &DeleteOptions) -> ApiResult<Attempt> {
    let key = Api::type_key(rt);
    let current = api.store.get(&key, ns, name).ok_or_else(|| ApiError::not_found(rt, name))?;
    let object = current.value();
    if let Some(uid) = &options.precondition_uid {
        let actual = object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("");
        if uid != actual {
            return Err(ApiError::conflict(
                rt,
                name,
                &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
            ));
        }
    }
    if let Some(rv) = &options.precondition_rv
        && rv != object::resource_version(&object)
    {
        return Err(ApiError::conflict(
            rt,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                object::resource_version(&object)
            ),
        ));
    }
    let namespace_finalizing = rt.builtin == Some(Builtin::Namespace)
        && object::is_terminating(&object)
        && object.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
    if namespace_finalizing {
        // A second delete of a terminating namespace (upstream namespace REST
        // Delete): only emptying spec.finalizers through /finalize ends it.
        return Err(ApiError::conflict(
            rt,
            name,
            "The system is ensuring all content is removed from this namespace.  \
             Upon completion, this namespace will automatically be purged by the system.",
        ));
    }
    let marked = mark_for_deletion(rt, &object, options.propagation.as_deref(), options.grace_period);
    if options.dry_run {
        return Ok(Attempt::Done(Bytes::from(marked.unwrap_or(object).to_string())));
    }
    match marked {
        None => match api.store.delete(&key, ns, name, Some(current.rv)) {
            Ok(last) => Ok(Attempt::Done(last.bytes)),
            Err(StoreError::NotFound) => Err(ApiError::not_found(rt, name)),
            Err(StoreError::Conflict { .. }) => Ok(Attempt::Raced),
            Err(e) => Err(ApiError::internal(e.to_string())),
        },
        Some(next) => {
            let expected = current.rv;
            let mut raced = false;
            let stored = api.store.update(&key, ns, name, |now| {
                raced = now.rv != expected;
                Ok::<_, ApiError>(if raced || next == object { None } else { Some(next) })
            });
            match stored {
                _ if raced => Ok(Attempt::Raced),
                Ok(stored) => Ok(Attempt::Done(stored.bytes)),
                Err(UpdateError::Rejected(e)) => Err(e),
                Err(UpdateError::Store(_)) => Err(ApiError::not_found(rt, name)),
            }
        }
    }
}
