//! The custom resource: `widgets.example.kcm-rs.io/v1`, kind `Widget`,
//! namespaced, with a `/status` subresource.
//!
//! kube's `CustomResource` derive turns [`WidgetSpec`] into the [`Widget`]
//! type (`metadata`, `spec`, `status`), implements `kube::Resource` for it
//! with a static `DynamicType = ()` (what
//! [`Cached`](kcm_runtime::informer::Cached) asks for, so the
//! shared informer factory serves it like any k8s-openapi type), and
//! `Widget::crd()` (`kube::CustomResourceExt`) builds the
//! CustomResourceDefinition to install in a cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the user asks of a Widget.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.kcm-rs.io", version = "v1", kind = "Widget", namespaced)]
#[kube(status = "WidgetStatus", shortname = "wg", doc = "A Widget: asks for replicas, the operator grants them.")]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    // Signed on purpose: a negative value must still deserialise (an
    // object the informer cannot decode never reaches the controller) so
    // that the core can report it as invalid. (`///` comments become the
    // CRD's field descriptions, shown by `kubectl explain`.)
    /// Replicas asked for: 0 to 10 are granted, more are capped at 10.
    pub replicas: i32,
}

/// What the operator reports (written through the status subresource).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Replicas granted: spec.replicas, capped at 10 (0 when negative).
    #[serde(default)]
    pub replicas: i32,
    /// The Ready condition: True when spec.replicas is granted in full.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use kube::CustomResourceExt;

    use super::*;
    use crate::core::MAX_REPLICAS;

    #[test]
    fn the_crd_serves_status_and_describes_the_cap() {
        let crd = Widget::crd();
        assert_eq!(crd.metadata.name.as_deref(), Some("widgets.example.kcm-rs.io"));
        let version = &crd.spec.versions[0];
        assert!(version.subresources.as_ref().and_then(|s| s.status.as_ref()).is_some(), "/status is served");
        let crd = serde_json::to_value(&crd).unwrap();
        let replicas = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]
            ["description"];
        assert!(replicas.as_str().unwrap().contains(&format!("capped at {MAX_REPLICAS}")), "{replicas}");
    }
}
