//! The API server's admission chain, for the kinds kube-sim serves: what
//! runs on a create between decoding and the registry's strategy.
//!
//! Four plugins are implemented, each switchable as kube-apiserver's
//! `--enable-admission-plugins` / `--disable-admission-plugins` switch
//! them, and all on by default as they are in kube-apiserver:
//! - NamespaceLifecycle (`namespace.rs`): no create in a namespace that
//!   does not exist or is terminating;
//! - ServiceAccount (`serviceaccount.rs`): a pod's ServiceAccount defaulted
//!   and required to exist, its token volume mounted (`token_volume.rs`),
//!   its image pull secrets added, and the secret references a mirror pod
//!   or an SA enforcing mountable secrets may not make refused
//!   (`secret_refs.rs`);
//! - StorageObjectInUseProtection (`storage_protection.rs`): new
//!   PersistentVolumeClaims get the `kubernetes.io/pvc-protection`
//!   finalizer;
//! - TaintNodesByCondition (`node_taint.rs`): new Nodes get the
//!   `node.kubernetes.io/not-ready:NoSchedule` taint, which the
//!   node-lifecycle-controller takes off once the node is Ready.
//!
//! The visible results of the Priority and DefaultTolerationSeconds
//! plugins are applied with the pod defaults (`crate::defaults`); the
//! registry strategies' create-time resets are `crate::strategy`'s. No
//! plugin acts on updates here: the one update ServiceAccount checks is
//! the `/ephemeralcontainers` subresource, which kube-sim does not serve.

use std::str::FromStr;

use serde_json::Value;

use crate::api::state::Api;
use crate::error::ApiResult;
use crate::resources::{Builtin, ResourceType};

mod namespace;
mod node_taint;
mod secret_refs;
mod serviceaccount;
mod storage_protection;
mod token_volume;

pub use storage_protection::PVC_PROTECTION_FINALIZER;

/// An admission plugin kube-sim implements, by its kube-apiserver name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Plugin {
    /// `NamespaceLifecycle`.
    NamespaceLifecycle,
    /// `ServiceAccount`.
    ServiceAccount,
    /// `StorageObjectInUseProtection`.
    StorageObjectInUseProtection,
    /// `TaintNodesByCondition`.
    TaintNodesByCondition,
}

impl Plugin {
    /// Every plugin kube-sim implements.
    pub const ALL: [Plugin; 4] = [
        Plugin::NamespaceLifecycle,
        Plugin::ServiceAccount,
        Plugin::StorageObjectInUseProtection,
        Plugin::TaintNodesByCondition,
    ];

    /// The name kube-apiserver's flags use.
    pub fn name(self) -> &'static str {
        match self {
            Plugin::NamespaceLifecycle => "NamespaceLifecycle",
            Plugin::ServiceAccount => "ServiceAccount",
            Plugin::StorageObjectInUseProtection => "StorageObjectInUseProtection",
            Plugin::TaintNodesByCondition => "TaintNodesByCondition",
        }
    }
}

impl FromStr for Plugin {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Plugin::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Plugin::ALL.iter().map(|p| p.name()).collect();
            format!("admission plugin {name:?} is not one kube-sim implements ({})", known.join(", "))
        })
    }
}

/// Which admission plugins run: all of them, as kube-apiserver enables
/// them by default, unless disabled.
#[derive(Debug, Clone, Default)]
pub struct AdmissionConfig {
    disabled: Vec<Plugin>,
}

impl AdmissionConfig {
    /// The same configuration with `plugin` off
    /// (`--disable-admission-plugins`).
    pub fn disable(mut self, plugin: Plugin) -> Self {
        if !self.disabled.contains(&plugin) {
            self.disabled.push(plugin);
        }
        self
    }

    /// Whether `plugin` runs.
    pub fn enabled(&self, plugin: Plugin) -> bool {
        !self.disabled.contains(&plugin)
    }
}

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
    if rt.builtin == Some(Builtin::Node) && config.enabled(Plugin::TaintNodesByCondition) {
        node_taint::admit_node(object);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_are_named_and_disabled_as_kube_apiserver_names_them() {
        assert_eq!("ServiceAccount".parse::<Plugin>(), Ok(Plugin::ServiceAccount));
        assert!("PodSecurity".parse::<Plugin>().unwrap_err().contains("NamespaceLifecycle, ServiceAccount"));
        let config = AdmissionConfig::default();
        assert!(Plugin::ALL.iter().all(|p| config.enabled(*p)), "every plugin is on by default");
        let config = config.disable(Plugin::ServiceAccount);
        assert!(!config.enabled(Plugin::ServiceAccount));
        assert!(config.enabled(Plugin::NamespaceLifecycle));
    }
}
