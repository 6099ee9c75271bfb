//! The API server's admission chain, for the kinds kube-sim serves: what
//! runs on a create between decoding and the registry's strategy.
//!
//! Four plugins are implemented, each switchable as kube-apiserver's
//! `--enable-admission-plugins` / `--disable-admission-plugins` switch
//! them (`config.rs`), and all on by default as they are in kube-apiserver:
//! - NamespaceLifecycle (`namespace.rs`): no create in a namespace that
//!   does not exist or is terminating;
//! - ServiceAccount (`serviceaccount.rs`): a pod's ServiceAccount defaulted
//!   and required to exist, its token volume mounted (`token_volume.rs`),
//!   its image pull secrets added, and the secret references a mirror pod
//!   or an SA enforcing mountable secrets may not make refused
//!   (`secret_refs.rs`);
//! - StorageObjectInUseProtection (`storage_protection.rs`): new
//!   PersistentVolumeClaims get the `kubernetes.io/pvc-protection`
//!   finalizer, new PersistentVolumes `kubernetes.io/pv-protection`, new
//!   VolumeAttributesClasses `kubernetes.io/vac-protection`;
//! - TaintNodesByCondition (`node_taint.rs`): new Nodes get the
//!   `node.kubernetes.io/not-ready:NoSchedule` taint, which the
//!   node-lifecycle-controller takes off once the node is Ready.
//!
//! The visible results of the Priority and DefaultTolerationSeconds
//! plugins are applied with the pod defaults (`crate::defaults`); the
//! registry strategies' create-time resets are `crate::strategy`'s. No
//! plugin acts on updates here: the one update ServiceAccount checks is
//! the `/ephemeralcontainers` subresource, which kube-sim does not serve.

use serde_json::Value;

use crate::api::state::Api;
use crate::error::ApiResult;
use crate::resources::{Builtin, ResourceType};

mod config;
mod namespace;
mod node_taint;
mod secret_refs;
mod serviceaccount;
mod storage_protection;
mod token_volume;

pub use config::{AdmissionConfig, Plugin};
pub use storage_protection::PVC_PROTECTION_FINALIZER;

/// Runs the enabled plugins on a create of `object` (type `rt`) in
/// `namespace`; `name` is the name admission reports it by
/// ([`crate::object::admission_name`]). Mutates the object as the mutating
/// plugins do, or refuses it.
pub async fn admit_create(
    api: &Api,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    object: &mut Value,
) -> ApiResult<()> {
    let config = &api.config.admission;
    if rt.namespaced && config.enabled(Plugin::NamespaceLifecycle) {
        namespace::check_namespace_open(api, rt, namespace, name)?;
    }
    if rt.builtin == Some(Builtin::Pod) && config.enabled(Plugin::ServiceAccount) {
        serviceaccount::admit(api, rt, namespace, name, object).await?;
    }
    if rt.builtin == Some(Builtin::PersistentVolumeClaim) && config.enabled(Plugin::StorageObjectInUseProtection) {
        storage_protection::admit_claim(object);
    }
    if rt.builtin.is_none()
        && rt.group.is_empty()
        && rt.plural == "persistentvolumes"
        && config.enabled(Plugin::StorageObjectInUseProtection)
    {
        storage_protection::admit_volume(object);
    }
    if rt.builtin.is_none()
        && rt.group == "storage.k8s.io"
        && rt.plural == "volumeattributesclasses"
        && config.enabled(Plugin::StorageObjectInUseProtection)
    {
        storage_protection::admit_volume_attributes_class(object);
    }
    if rt.builtin == Some(Builtin::Node) && config.enabled(Plugin::TaintNodesByCondition) {
        node_taint::admit_node(object);
    }
    Ok(())
}
