//! Deployments, ReplicaSets and Jobs as the cache keeps them: the object
//! with its pod template's spec held as JSON text.
//!
//! A decoded pod spec is most of a Deployment's or a ReplicaSet's memory:
//! k8s-openapi's `Container`, `Volume` and `EnvVar` structs hold every
//! optional field inline, about 10 KB for a typical template against 1 to
//! 3 KB of JSON. The controllers read a cached object's counts, status,
//! labels and annotations all the time, and its template's spec only to
//! create an object from it, to hash or compare it, or to write the whole
//! object back. So the cache keeps the object without
//! `spec.template.spec` (the template's metadata stays, for its labels),
//! and the spec as the JSON k8s-openapi writes for it ([`PodSpecJson`]),
//! decoded only to create from or to write.
//!
//! [`Templated`] dereferences to the k8s-openapi object, whose
//! `spec.template.spec` is always `None` in the cache: the template is read
//! through [`Templated::template`] (or compared from
//! [`Templated::pod_spec`]'s JSON), and a write starts from
//! [`Templated::full`].

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, LazyLock};

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::atom::Pool;

/// The pool of every [`PodSpecJson`]'s text.
static SPECS: LazyLock<Pool<str>> = LazyLock::new(Pool::new);

/// A pod spec as the JSON text k8s-openapi writes for it: every field it
/// decoded, so decoding it again gives the same spec. Equal texts share
/// one allocation: a Deployment and its ReplicaSets of the same template,
/// and the Jobs of one CronJob, hold their template's spec once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpecJson(Arc<str>);

impl PodSpecJson {
    /// The JSON of `spec`.
    pub fn new(spec: &PodSpec) -> Self {
        // A k8s-openapi struct always serialises: its maps have string keys.
        let text = serde_json::to_string(spec).expect("a PodSpec serialises");
        PodSpecJson(SPECS.intern(&text))
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

/// A kind with a pod template (`spec.template`).
pub trait HasPodTemplate: Clone {
    /// Its template, if it has one.
    fn pod_template(&self) -> Option<&PodTemplateSpec>;

    /// Its template, to change, if it has one.
    fn pod_template_mut(&mut self) -> Option<&mut PodTemplateSpec>;
}

impl HasPodTemplate for apps::ReplicaSet {
    fn pod_template(&self) -> Option<&PodTemplateSpec> {
        self.spec.template.as_ref()
    }

    fn pod_template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        self.spec.template.as_mut()
    }
}

impl HasPodTemplate for apps::Deployment {
    fn pod_template(&self) -> Option<&PodTemplateSpec> {
        Some(&self.spec.template)
    }

    fn pod_template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        Some(&mut self.spec.template)
    }
}

impl HasPodTemplate for batch::Job {
    fn pod_template(&self) -> Option<&PodTemplateSpec> {
        self.spec.as_ref().map(|s| &s.template)
    }

    fn pod_template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        self.spec.as_mut().map(|s| &mut s.template)
    }
}

/// A cached object of kind `K`: the object without its template's spec,
/// which is kept as JSON ([`PodSpecJson`]). Dereferences to the
/// k8s-openapi object.
#[derive(Clone, Debug, PartialEq)]
pub struct Templated<K> {
    object: K,
    pod_spec: Option<PodSpecJson>,
}

/// A cached ReplicaSet.
pub type ReplicaSet = Templated<apps::ReplicaSet>;

/// A cached Deployment.
pub type Deployment = Templated<apps::Deployment>;

/// A cached Job.
pub type Job = Templated<batch::Job>;

impl<K: HasPodTemplate> Templated<K> {
    /// Keeps `object` as the cache does: without `managedFields`, its
    /// template's spec as JSON.
    fn keep(mut object: K) -> Self
    where
        K: Metadata<Ty = ObjectMeta>,
    {
        object.metadata_mut().managed_fields = None;
        let pod_spec = object.pod_template_mut().and_then(|t| t.spec.take()).map(|spec| PodSpecJson::new(&spec));
        Templated { object, pod_spec }
    }

    /// The pod template, its spec decoded (the default template when the
    /// object has none).
    pub fn template(&self) -> PodTemplateSpec {
        let mut template = self.object.pod_template().cloned().unwrap_or_default();
        template.spec = self.pod_spec.as_ref().map(PodSpecJson::decode);
        template
    }

    /// The template's spec as JSON, if it has one.
    pub fn pod_spec(&self) -> Option<&PodSpecJson> {
        self.pod_spec.as_ref()
    }

    /// The whole object, its template's spec decoded: what a write of the
    /// object starts from.
    pub fn full(&self) -> K {
        let mut object = self.object.clone();
        if let Some(template) = object.pod_template_mut() {
            template.spec = self.pod_spec.as_ref().map(PodSpecJson::decode);
        }
        object
    }
}

impl ReplicaSet {
    /// Keeps `rs` as the cache does.
    pub fn new(rs: apps::ReplicaSet) -> Self {
        Templated::keep(rs)
    }
}

impl Deployment {
    /// Keeps `deployment` as the cache does.
    pub fn new(deployment: apps::Deployment) -> Self {
        Templated::keep(deployment)
    }

    /// Replaces the template (a rollback's), its spec kept as JSON.
    pub fn set_template(&mut self, mut template: PodTemplateSpec) {
        self.pod_spec = template.spec.take().map(|spec| PodSpecJson::new(&spec));
        self.object.spec.template = template;
    }
}

impl Job {
    /// Keeps `job` as the cache does.
    pub fn new(job: batch::Job) -> Self {
        Templated::keep(job)
    }

    /// The template's `restartPolicy`, read from its JSON without decoding
    /// the rest of the spec.
    pub fn restart_policy(&self) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct RestartPolicy {
            #[serde(rename = "restartPolicy")]
            restart_policy: Option<String>,
        }
        let text = self.pod_spec.as_ref()?.as_str();
        serde_json::from_str::<RestartPolicy>(text).ok()?.restart_policy
    }
}

impl<K> Deref for Templated<K> {
    type Target = K;

    fn deref(&self) -> &K {
        &self.object
    }
}

impl<K> DerefMut for Templated<K> {
    fn deref_mut(&mut self) -> &mut K {
        &mut self.object
    }
}

crate::cached::cached_trimmed!(ReplicaSet, apps::ReplicaSet);
crate::cached::cached_trimmed!(Deployment, apps::Deployment);
crate::cached::cached_trimmed!(Job, batch::Job);

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
    fn a_deployment_keeps_its_template_spec_as_json_too() {
        let rs = replica_set();
        let d = apps::Deployment {
            metadata: rs.metadata.clone(),
            spec: apps::DeploymentSpec {
                replicas: Some(3),
                selector: rs.spec.selector.clone(),
                template: rs.spec.template.clone().expect("a template"),
                ..Default::default()
            },
            status: None,
        };
        let cached = Deployment::from_wire(d.clone());
        assert_eq!(cached.spec.template.spec, None);
        assert_eq!(cached.spec.template.metadata, d.spec.template.metadata);
        let mut want = d;
        want.metadata.managed_fields = None;
        assert_eq!(cached.template(), want.spec.template);
        assert_eq!(cached.full(), want);
        let mut rolled_back = cached.clone();
        let mut other = want.spec.template.clone();
        other.spec.as_mut().expect("a spec").containers[0].image = Some("registry.example.com/web:1".into());
        rolled_back.set_template(other.clone());
        assert_eq!((rolled_back.template(), rolled_back.full().spec.template), (other.clone(), other));
    }

    #[test]
    fn a_deployment_and_its_replica_set_hold_their_template_spec_once() {
        let rs = ReplicaSet::new(replica_set());
        let template = replica_set().spec.template.expect("a template");
        let d = Deployment::new(apps::Deployment {
            metadata: replica_set().metadata,
            spec: apps::DeploymentSpec { template: template.clone(), ..Default::default() },
            status: None,
        });
        let (rs_spec, d_spec) = (rs.pod_spec().expect("a spec"), d.pod_spec().expect("a spec"));
        assert!(std::ptr::eq(rs_spec.as_str(), d_spec.as_str()), "one text for both");
        let mut changed = template;
        changed.spec.as_mut().expect("a spec").containers[0].image = Some("registry.example.com/web:3".into());
        let mut rolled = d.clone();
        rolled.set_template(changed.clone());
        assert!(!std::ptr::eq(rolled.pod_spec().expect("a spec").as_str(), rs_spec.as_str()));
        assert_eq!(rolled.template(), changed, "a different spec keeps its own text");
    }

    #[test]
    fn a_job_keeps_its_template_spec_as_json_and_reads_its_restart_policy_from_it() {
        let rs = replica_set();
        let mut template = rs.spec.template.clone().expect("a template");
        template.spec.as_mut().expect("a spec").restart_policy = Some("OnFailure".into());
        let job = batch::Job {
            metadata: rs.metadata.clone(),
            spec: Some(batch::JobSpec { template, backoff_limit: Some(2), ..Default::default() }),
            status: Some(batch::JobStatus { active: Some(1), ..Default::default() }),
        };
        let cached = Job::from_wire(job.clone());
        assert_eq!(cached.spec.as_ref().map(|s| s.template.spec.is_none()), Some(true));
        assert_eq!(cached.restart_policy().as_deref(), Some("OnFailure"));
        let mut want = job;
        want.metadata.managed_fields = None;
        assert_eq!(cached.full(), want);
        assert_eq!(Some(cached.template()), want.spec.map(|s| s.template));
        let without = Job::new(batch::Job { metadata: replica_set().metadata, ..Default::default() });
        assert_eq!((without.restart_policy(), without.pod_spec()), (None, None));
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
