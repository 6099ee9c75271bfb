//! Jobs as the cache keeps them: k8s-openapi's object without its
//! template's spec, which is kept as JSON text ([`PodSpecJson`]). CronJobs
//! leave many Jobs behind, each with its template; a Job has too many spec
//! fields to mirror, so [`Job`] dereferences to the k8s-openapi object,
//! whose `spec.template.spec` is always `None` in the cache: the template
//! is read through [`Job::template`], and a write starts from [`Job::full`].

use std::ops::{Deref, DerefMut};

use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::template::PodSpecJson;

/// A cached Job.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    object: batch::Job,
    pod_spec: Option<PodSpecJson>,
}

impl Job {
    /// Keeps `job` as the cache does: without `managedFields`, its
    /// template's spec as JSON.
    pub fn new(mut job: batch::Job) -> Self {
        job.metadata.managed_fields = None;
        let pod_spec = job.spec.as_mut().and_then(|s| s.template.spec.take()).map(|spec| PodSpecJson::new(&spec));
        Job { object: job, pod_spec }
    }

    /// The pod template, its spec decoded (the default template when the
    /// Job has no spec).
    pub fn template(&self) -> PodTemplateSpec {
        let mut template = self.object.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
        template.spec = self.pod_spec.as_ref().map(PodSpecJson::decode);
        template
    }

    /// The template's spec as JSON, if it has one.
    pub fn pod_spec(&self) -> Option<&PodSpecJson> {
        self.pod_spec.as_ref()
    }

    /// The whole object, its template's spec decoded: what a write of the
    /// object starts from.
    pub fn full(&self) -> batch::Job {
        let mut object = self.object.clone();
        if let Some(spec) = object.spec.as_mut() {
            spec.template.spec = self.pod_spec.as_ref().map(PodSpecJson::decode);
        }
        object
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

impl Deref for Job {
    type Target = batch::Job;

    fn deref(&self) -> &batch::Job {
        &self.object
    }
}

impl DerefMut for Job {
    fn deref_mut(&mut self) -> &mut batch::Job {
        &mut self.object
    }
}

crate::cached::cached_trimmed!(Job, batch::Job);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cached;

    /// A CronJob's Job as the API server returns one: a defaulted template
    /// with a volume and an environment.
    fn job() -> batch::Job {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "report-29100000", "namespace": "batch", "resourceVersion": "9",
                "labels": {"batch.kubernetes.io/job-name": "report-29100000"},
                "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}]},
            "spec": {"backoffLimit": 2, "template": {
                "metadata": {"labels": {"batch.kubernetes.io/job-name": "report-29100000"}},
                "spec": {
                    "containers": [{"name": "report", "image": "registry.example.com/report:2",
                        "env": [{"name": "MODE", "value": "nightly"}],
                        "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}]}],
                    "volumes": [{"name": "scratch", "emptyDir": {}}],
                    "restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 30}}},
            "status": {"active": 1}
        }))
        .expect("a Job")
    }

    #[test]
    fn a_job_keeps_its_template_spec_as_json_and_reads_its_restart_policy_from_it() {
        let cached = Job::from_wire(job());
        assert_eq!(cached.spec.as_ref().map(|s| s.template.spec.is_none()), Some(true));
        assert_eq!(cached.restart_policy().as_deref(), Some("OnFailure"));
        let mut want = job();
        want.metadata.managed_fields = None;
        assert_eq!(cached.full(), want, "empty objects such as emptyDir: {{}} included");
        assert_eq!(Some(cached.template()), want.spec.map(|s| s.template));
        let without = Job::new(batch::Job { metadata: job().metadata, ..Default::default() });
        assert_eq!((without.restart_policy(), without.pod_spec()), (None, None));
    }
}
