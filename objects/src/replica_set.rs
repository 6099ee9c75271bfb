//! ReplicaSets as the cache keeps them: the object with its pod template's
//! spec held as JSON text.
//!
//! A decoded pod spec is most of a ReplicaSet's memory: k8s-openapi's
//! `Container`, `Volume` and `EnvVar` structs hold every optional field
//! inline, about 10 KB for a typical template against 1 to 3 KB of JSON. The
//! controllers read a cached ReplicaSet's counts, status, labels and
//! annotations all the time, and its template's spec only to create a pod
//! from it, to compare it with a Deployment's, or to write the whole object
//! back. So the cache keeps the object without `spec.template.spec` (the
//! template's metadata stays, for its labels), and the spec as the JSON
//! k8s-openapi writes for it ([`PodSpecJson`]), decoded on those three
//! occasions only.
//!
//! [`ReplicaSet`] dereferences to the k8s-openapi object, whose
//! `spec.template.spec` is always `None` in the cache: the template is read
//! through [`ReplicaSet::template`], and a write starts from
//! [`ReplicaSet::full`].

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};

/// A pod spec as the JSON text k8s-openapi writes for it: every field it
/// decoded, so decoding it again gives the same spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpecJson(Arc<str>);

impl PodSpecJson {
    /// The JSON of `spec`.
    pub fn new(spec: &PodSpec) -> Self {
        // A k8s-openapi struct always serialises: its maps have string keys.
        PodSpecJson(serde_json::to_string(spec).expect("a PodSpec serialises").into())
    }

    /// The spec, decoded again.
    pub fn decode(&self) -> PodSpec {
        // The text is what `new` wrote for a PodSpec.
        serde_json::from_str(&self.0).expect("the JSON of a PodSpec decodes as one")
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A cached ReplicaSet: the object without its template's spec, which is
/// kept as JSON ([`PodSpecJson`]). Dereferences to the k8s-openapi object.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaSet {
    object: apps::ReplicaSet,
    pod_spec: Option<PodSpecJson>,
}

impl ReplicaSet {
    /// Keeps `rs` as the cache does (without `managedFields`).
    pub fn new(mut rs: apps::ReplicaSet) -> Self {
        rs.metadata.managed_fields = None;
        let template = rs.spec.template.as_mut();
        let pod_spec = template.and_then(|t| t.spec.take()).map(|spec| PodSpecJson::new(&spec));
        ReplicaSet { object: rs, pod_spec }
    }

    /// The pod template, its spec decoded (upstream's
    /// `rs.Spec.Template`; the default template when the object has none).
    pub fn template(&self) -> PodTemplateSpec {
        let mut template = self.object.spec.template.clone().unwrap_or_default();
        template.spec = self.pod_spec.as_ref().map(PodSpecJson::decode);
        template
    }

    /// The template's spec as JSON, if it has one.
    pub fn pod_spec(&self) -> Option<&PodSpecJson> {
        self.pod_spec.as_ref()
    }

    /// The whole object, its template's spec decoded: what a write of the
    /// object starts from.
    pub fn full(&self) -> apps::ReplicaSet {
        let mut rs = self.object.clone();
        if let Some(template) = rs.spec.template.as_mut() {
            template.spec = self.pod_spec.as_ref().map(PodSpecJson::decode);
        }
        rs
    }
}

impl From<apps::ReplicaSet> for ReplicaSet {
    fn from(rs: apps::ReplicaSet) -> Self {
        ReplicaSet::new(rs)
    }
}

impl Deref for ReplicaSet {
    type Target = apps::ReplicaSet;

    fn deref(&self) -> &apps::ReplicaSet {
        &self.object
    }
}

impl DerefMut for ReplicaSet {
    fn deref_mut(&mut self) -> &mut apps::ReplicaSet {
        &mut self.object
    }
}

crate::cached::cached_trimmed!(ReplicaSet, apps::ReplicaSet);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cached;

    /// A ReplicaSet as the API server returns one: a defaulted template
    /// with a volume, an environment and probes.
    fn replica_set() -> apps::ReplicaSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-7c5ddbdf54", "namespace": "apps", "resourceVersion": "9",
                "labels": {"app": "web", "pod-template-hash": "7c5ddbdf54"},
                "annotations": {"deployment.kubernetes.io/revision": "2"},
                "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}]},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web", "pod-template-hash": "7c5ddbdf54"}},
                "spec": {
                    "containers": [{"name": "web", "image": "registry.example.com/web:2",
                        "env": [{"name": "MODE", "value": "primary"}],
                        "resources": {"requests": {"cpu": "250m"}},
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                        "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}]}],
                    "volumes": [{"name": "scratch", "emptyDir": {}}],
                    "securityContext": {}, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30}}},
            "status": {"replicas": 3, "readyReplicas": 2, "observedGeneration": 4}
        }))
        .expect("a ReplicaSet")
    }

    #[test]
    fn the_cache_keeps_the_template_spec_as_json_and_gives_the_whole_object_back() {
        let cached = ReplicaSet::from_wire(replica_set());
        let template = cached.spec.template.as_ref().expect("a template");
        assert_eq!(template.spec, None, "the decoded spec is not kept");
        assert_eq!(template.metadata, replica_set().spec.template.and_then(|t| t.metadata));
        assert_eq!(cached.metadata.managed_fields, None);
        let mut want = replica_set();
        want.metadata.managed_fields = None;
        assert_eq!(cached.full(), want, "empty objects such as emptyDir: {{}} included");
        assert_eq!(Some(cached.template()), want.spec.template);
        assert_eq!(
            (cached.namespace(), cached.name(), cached.resource_version()),
            (Some("apps"), "web-7c5ddbdf54", Some("9"))
        );
    }

    #[test]
    fn a_change_made_through_the_object_is_in_the_whole_object() {
        let mut cached = ReplicaSet::new(replica_set());
        cached.spec.replicas = Some(0);
        let full = cached.full();
        assert_eq!(full.spec.replicas, Some(0));
        assert_eq!(full.spec.template.and_then(|t| t.spec), replica_set().spec.template.and_then(|t| t.spec));
    }

    #[test]
    fn a_replica_set_without_a_template_stays_without_one() {
        let rs = apps::ReplicaSet { metadata: replica_set().metadata, ..Default::default() };
        let cached = ReplicaSet::new(rs.clone());
        assert_eq!(cached.pod_spec(), None);
        assert_eq!(cached.template(), PodTemplateSpec::default());
        let mut want = rs;
        want.metadata.managed_fields = None;
        assert_eq!(cached.full(), want);
    }
}
