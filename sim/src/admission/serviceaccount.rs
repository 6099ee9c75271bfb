//! The ServiceAccount plugin (`plugin/pkg/admission/serviceaccount`), on
//! pod creates:
//! - a mirror pod (annotation `kubernetes.io/config.mirror`) is left as it
//!   is, but may not name a ServiceAccount, refer to Secrets or project
//!   tokens;
//! - otherwise `spec.serviceAccountName` defaults to `default`, and that
//!   ServiceAccount must exist: a missing one is a 403, `pods "<name>" is
//!   forbidden: error looking up service account <ns>/<sa>: serviceaccount
//!   "<sa>" not found`. The API server reads its informer first, then asks
//!   again (for `default` ten times, 100 to 200 ms apart, since the
//!   controller manager creates it moments after the namespace); kube-sim
//!   waits as long on its change feed for the ServiceAccount to appear;
//! - unless `automountServiceAccountToken` is false on the pod (or, when
//!   the pod says nothing, on the ServiceAccount), the token volume is
//!   mounted (`token_volume.rs`);
//! - a pod with no `imagePullSecrets` gets the ServiceAccount's;
//! - a ServiceAccount enforcing mountable secrets refuses the others
//!   (`secret_refs.rs`).
//!
//! Every refusal is `admission.NewForbidden`: a 403 naming the pod by its
//! name, or by its `generateName` prefix before a name is generated.

use std::time::Duration;

use rand::Rng;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::secret_refs::{enforces_mountable_secrets, limit_secret_references, projects_tokens, references_secrets};
use super::token_volume;
use crate::api::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::resources::{Builtin, ResourceType};
use crate::store::{ChangeKind, TypeKey};

/// The ServiceAccount a pod naming none runs as.
const DEFAULT_SERVICE_ACCOUNT_NAME: &str = "default";

/// Annotation the kubelet puts on the mirror pods of static pods.
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// How many times the API server looks the `default` ServiceAccount up
/// before refusing the pod (other ServiceAccounts: once).
const DEFAULT_LOOKUP_ATTEMPTS: u32 = 10;

/// Admits the create of `pod` in `namespace`, named `name` in refusals.
pub(super) async fn admit(api: &Api, rt: &ResourceType, namespace: &str, name: &str, pod: &mut Value) -> ApiResult<()> {
    let forbidden = |why: &str| ApiError::forbidden_object(rt, name, why);
    let is_mirror = pod.pointer("/metadata/annotations").and_then(|a| a.get(MIRROR_POD_ANNOTATION)).is_some();
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        // Not a pod spec: validation says what is wrong with it.
        return Ok(());
    };
    if is_mirror {
        return check_mirror_pod(spec).map_err(&forbidden);
    }
    let sa_name = service_account_name(spec).unwrap_or(DEFAULT_SERVICE_ACCOUNT_NAME).to_owned();
    spec.insert("serviceAccountName".into(), json!(sa_name));
    let Some(sa) = service_account(api, namespace, &sa_name).await else {
        return Err(forbidden(&format!(
            "error looking up service account {namespace}/{sa_name}: serviceaccount \"{sa_name}\" not found"
        )));
    };
    if should_automount(spec, &sa) {
        token_volume::mount(spec);
    }
    let has_pull_secrets = spec.get("imagePullSecrets").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
    if !has_pull_secrets {
        let names: Vec<Value> = sa
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| json!({"name": r.get("name").cloned().unwrap_or(json!(""))}))
            .collect();
        spec.insert("imagePullSecrets".into(), Value::Array(names));
    }
    if enforces_mountable_secrets(&sa) {
        limit_secret_references(&sa, spec).map_err(|why| forbidden(&why))?;
    }
    Ok(())
}

/// The ServiceAccount the spec names: `serviceAccountName`, or the
/// deprecated `serviceAccount` the v1 conversion reads when it is empty.
fn service_account_name(spec: &Map<String, Value>) -> Option<&str> {
    ["serviceAccountName", "serviceAccount"]
        .iter()
        .filter_map(|field| spec.get(*field).and_then(Value::as_str))
        .find(|name| !name.is_empty())
}

/// What a mirror pod may not do (the plugin's `Validate` of mirror pods).
fn check_mirror_pod(spec: &Map<String, Value>) -> Result<(), &'static str> {
    if service_account_name(spec).is_some() {
        return Err("a mirror pod may not reference service accounts");
    }
    let spec = Value::Object(spec.clone());
    if references_secrets(&spec) {
        return Err("a mirror pod may not reference secrets");
    }
    if projects_tokens(&spec) {
        return Err("a mirror pod may not use ServiceAccountToken volume projections");
    }
    Ok(())
}

/// `shouldAutomount`: the pod's `automountServiceAccountToken` wins, then
/// the ServiceAccount's; unset on both means mount.
fn should_automount(spec: &Map<String, Value>, sa: &Value) -> bool {
    spec.get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| sa.get("automountServiceAccountToken").and_then(Value::as_bool))
        .unwrap_or(true)
}

/// The ServiceAccount `namespace/name`, waiting for `default` as long as
/// the API server's repeated lookups take: nine intervals of 100 to 200 ms
/// (one interval drawn per request, as upstream draws it).
async fn service_account(api: &Api, namespace: &str, name: &str) -> Option<Value> {
    let key = Api::type_key(&api.registry.builtin(Builtin::ServiceAccount));
    if let Some(sa) = api.store.get(&key, namespace, name) {
        return Some(sa.value());
    }
    if name != DEFAULT_SERVICE_ACCOUNT_NAME {
        return None;
    }
    // Subscribed before looking again, so a create in between is not missed.
    let mut changes = api.store.subscribe();
    if let Some(sa) = api.store.get(&key, namespace, name) {
        return Some(sa.value());
    }
    let interval = Duration::from_millis(rand::rng().random_range(100..200));
    let deadline = Instant::now() + interval * (DEFAULT_LOOKUP_ATTEMPTS - 1);
    loop {
        match tokio::time::timeout_at(deadline, changes.recv()).await {
            Err(_) | Ok(Err(RecvError::Closed)) => return None,
            Ok(Ok(change)) if is_creation_of(&change, &key, namespace, name) => return Some(change.object.value()),
            Ok(Ok(_)) => {}
            Ok(Err(RecvError::Lagged(_))) => {
                if let Some(sa) = api.store.get(&key, namespace, name) {
                    return Some(sa.value());
                }
            }
        }
    }
}

fn is_creation_of(change: &crate::store::Change, key: &TypeKey, namespace: &str, name: &str) -> bool {
    change.type_key == *key
        && change.namespace == namespace
        && change.name == name
        && change.kind != ChangeKind::Deleted
}
