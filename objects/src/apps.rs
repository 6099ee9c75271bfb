//! Deployments and ReplicaSets as the cache keeps them: k8s-openapi's
//! object with the metadata as a [`WholeMeta`] (every field, its maps and
//! owner list shared), the selector as a [`SelectorSpec`] (`matchLabels`
//! shared) and the template as a [`Template`] (its metadata and spec as
//! JSON text).
//!
//! The structs mirror k8s-openapi's field by field (same names, same
//! types) but for those three, so a controller reads `rs.spec.replicas` as
//! it would of the API's type, and [`ReplicaSet::full`] gives that type
//! back whole: a write of the object starts from it and loses nothing the
//! API server served (but `managedFields`). Without k8s-openapi's template,
//! whose absent pod spec is 1,488 bytes inline, and its `ObjectMeta`, a
//! cached ReplicaSet is 2,360 -> 432 bytes inline and a Deployment
//! 2,472 -> 536.

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::selector::SelectorSpec;
use crate::template::Template;
use crate::whole_meta::WholeMeta;

/// A cached ReplicaSet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplicaSet {
    /// `metadata`, without `managedFields`.
    pub metadata: WholeMeta,
    /// `spec`.
    pub spec: ReplicaSetSpec,
    /// `status`.
    pub status: Option<apps::ReplicaSetStatus>,
}

/// A cached ReplicaSet's spec: k8s-openapi's, the template kept as the
/// cache keeps templates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplicaSetSpec {
    /// `spec.minReadySeconds`.
    pub min_ready_seconds: Option<i32>,
    /// `spec.replicas`.
    pub replicas: Option<i32>,
    /// `spec.selector`.
    pub selector: SelectorSpec,
    /// `spec.template`.
    pub template: Option<Template>,
}

impl ReplicaSet {
    /// Keeps `rs` as the cache does.
    pub fn new(rs: apps::ReplicaSet) -> Self {
        let apps::ReplicaSet { metadata, spec, status } = rs;
        let metadata = WholeMeta::new(&metadata);
        let apps::ReplicaSetSpec { min_ready_seconds, replicas, selector, template } = spec;
        let spec = ReplicaSetSpec {
            min_ready_seconds,
            replicas,
            selector: SelectorSpec::new(&selector),
            template: template.as_ref().map(Template::new),
        };
        ReplicaSet { metadata, spec, status }
    }

    /// The pod template, its spec decoded (the default template when the
    /// ReplicaSet has none).
    pub fn template(&self) -> PodTemplateSpec {
        self.spec.template.as_ref().map(Template::decode).unwrap_or_default()
    }

    /// The whole object, its template's spec decoded: what a write of the
    /// object starts from.
    pub fn full(&self) -> apps::ReplicaSet {
        let ReplicaSetSpec { min_ready_seconds, replicas, selector, template } = &self.spec;
        apps::ReplicaSet {
            metadata: self.metadata.to_object_meta(),
            spec: apps::ReplicaSetSpec {
                min_ready_seconds: *min_ready_seconds,
                replicas: *replicas,
                selector: selector.to_label_selector(),
                template: template.as_ref().map(Template::decode),
            },
            status: self.status.clone(),
        }
    }
}

/// A cached Deployment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Deployment {
    /// `metadata`, without `managedFields`.
    pub metadata: WholeMeta,
    /// `spec`.
    pub spec: DeploymentSpec,
    /// `status`.
    pub status: Option<apps::DeploymentStatus>,
}

/// A cached Deployment's spec: k8s-openapi's, the template kept as the
/// cache keeps templates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeploymentSpec {
    /// `spec.minReadySeconds`.
    pub min_ready_seconds: Option<i32>,
    /// `spec.paused`.
    pub paused: Option<bool>,
    /// `spec.progressDeadlineSeconds`.
    pub progress_deadline_seconds: Option<i32>,
    /// `spec.replicas`.
    pub replicas: Option<i32>,
    /// `spec.revisionHistoryLimit`.
    pub revision_history_limit: Option<i32>,
    /// `spec.selector`.
    pub selector: SelectorSpec,
    /// `spec.strategy`.
    pub strategy: Option<apps::DeploymentStrategy>,
    /// `spec.template`.
    pub template: Template,
}

impl Deployment {
    /// Keeps `deployment` as the cache does.
    pub fn new(deployment: apps::Deployment) -> Self {
        let apps::Deployment { metadata, spec, mut status } = deployment;
        let metadata = WholeMeta::new(&metadata);
        // Decoding grows the list to four slots; a Deployment has two
        // conditions (about 290 bytes of slack each).
        if let Some(conditions) = status.as_mut().and_then(|s| s.conditions.as_mut()) {
            conditions.shrink_to_fit();
        }
        let apps::DeploymentSpec {
            min_ready_seconds,
            paused,
            progress_deadline_seconds,
            replicas,
            revision_history_limit,
            selector,
            strategy,
            template,
        } = spec;
        let spec = DeploymentSpec {
            min_ready_seconds,
            paused,
            progress_deadline_seconds,
            replicas,
            revision_history_limit,
            selector: SelectorSpec::new(&selector),
            strategy,
            template: Template::new(&template),
        };
        Deployment { metadata, spec, status }
    }

    /// The pod template, its spec decoded.
    pub fn template(&self) -> PodTemplateSpec {
        self.spec.template.decode()
    }

    /// Replaces the template (a rollback's), its spec kept as JSON.
    pub fn set_template(&mut self, template: PodTemplateSpec) {
        self.spec.template = Template::new(&template);
    }

    /// The whole object, its template's spec decoded: what a write of the
    /// object starts from.
    pub fn full(&self) -> apps::Deployment {
        let DeploymentSpec {
            min_ready_seconds,
            paused,
            progress_deadline_seconds,
            replicas,
            revision_history_limit,
            selector,
            strategy,
            template,
        } = &self.spec;
        apps::Deployment {
            metadata: self.metadata.to_object_meta(),
            spec: apps::DeploymentSpec {
                min_ready_seconds: *min_ready_seconds,
                paused: *paused,
                progress_deadline_seconds: *progress_deadline_seconds,
                replicas: *replicas,
                revision_history_limit: *revision_history_limit,
                selector: selector.to_label_selector(),
                strategy: strategy.clone(),
                template: template.decode(),
            },
            status: self.status.clone(),
        }
    }
}

crate::cached::cached_whole!(ReplicaSet, apps::ReplicaSet);
crate::cached::cached_whole!(Deployment, apps::Deployment);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cached, PodSpecJson};

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
        let want_template = replica_set().spec.template.expect("a template");
        assert_eq!(template.spec().map(PodSpecJson::decode), want_template.spec, "kept as JSON");
        assert_eq!(template.metadata(), want_template.metadata, "kept as JSON");
        assert_eq!(Some(template.labels()), want_template.metadata.and_then(|m| m.labels));
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
        assert_eq!(cached.spec.template.spec().map(PodSpecJson::decode), d.spec.template.spec);
        assert_eq!(cached.spec.template.metadata(), d.spec.template.metadata);
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
        let rs_spec = rs.spec.template.as_ref().and_then(Template::spec).expect("a spec");
        let d_spec = d.spec.template.spec().expect("a spec");
        assert!(std::ptr::eq(rs_spec.as_str(), d_spec.as_str()), "one text for both");
        let mut changed = template;
        changed.spec.as_mut().expect("a spec").containers[0].image = Some("registry.example.com/web:3".into());
        let mut rolled = d.clone();
        rolled.set_template(changed.clone());
        assert!(!std::ptr::eq(rolled.spec.template.spec().expect("a spec").as_str(), rs_spec.as_str()));
        assert_eq!(rolled.template(), changed, "a different spec keeps its own text");
    }

    #[test]
    fn a_replica_set_without_a_template_stays_without_one() {
        let rs = apps::ReplicaSet { metadata: replica_set().metadata, ..Default::default() };
        let cached = ReplicaSet::new(rs.clone());
        assert_eq!(cached.spec.template.as_ref().and_then(Template::spec), None);
        assert_eq!(cached.template(), PodTemplateSpec::default());
        let mut want = rs;
        want.metadata.managed_fields = None;
        assert_eq!(cached.full(), want);
    }
}
