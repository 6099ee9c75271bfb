//! An orphan pod's tracking finalizer (upstream `syncOrphanPod`): a pod
//! that carries the finalizer but no Job will count it any more (its
//! controller reference is gone, or its Job is gone or finished) has the
//! finalizer removed, so that it can be deleted.

use k8s_openapi::api::batch::v1::Job;
use kcm_objects::Pod;

use super::conditions::{is_finished, managed_by_external};
use super::pods::has_tracking_finalizer;

/// Whether the finalizer of `pod` is to be removed. `job` is the cached
/// Job its controller reference names, if one of that name exists.
pub fn remove_orphan_finalizer(pod: &Pod, job: Option<&Job>) -> bool {
    if !has_tracking_finalizer(pod) {
        return false;
    }
    let Some(controller) = pod.metadata.controller() else { return true };
    if &*controller.kind != "Job" || &*controller.api_version != "batch/v1" {
        // Someone else's pod: not this controller's finalizer to remove.
        return false;
    }
    let Some(job) = job.filter(|j| j.metadata.uid.as_deref() == Some(&*controller.uid)) else { return true };
    if managed_by_external(job).is_some() {
        return false;
    }
    is_finished(job)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{JobSpec, JobStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::job::conditions::new_condition;
    use crate::testing::{PodBuilder, ts};

    fn pod(owner: Option<(&str, &str)>) -> Pod {
        let mut b = PodBuilder::new("p");
        if let Some((kind, uid)) = owner {
            b = b.owned_by(uid);
            let mut built = b.build();
            let mut refs = built.metadata.owner_references.to_vec();
            refs[0].kind = kind.into();
            refs[0].api_version = if kind == "Job" { "batch/v1" } else { "apps/v1" }.into();
            built.metadata.owner_references = refs.into();
            built.metadata.set_finalizers([crate::job::pods::TRACKING_FINALIZER.into()]);
            return built;
        }
        let mut built = b.build();
        built.metadata.set_finalizers([crate::job::pods::TRACKING_FINALIZER.into()]);
        built
    }

    fn job(uid: &str, finished: bool, managed_by: Option<&str>) -> Job {
        Job {
            metadata: ObjectMeta { uid: Some(uid.into()), ..Default::default() },
            spec: Some(JobSpec { managed_by: managed_by.map(Into::into), ..Default::default() }),
            status: finished.then(|| JobStatus {
                conditions: Some(vec![new_condition("Complete", "True", "", "", ts(0))]),
                ..Default::default()
            }),
        }
    }

    /// Upstream `TestSyncOrphanPod`.
    #[test]
    fn sync_orphan_pod() {
        let running = job("j", false, None);
        let finished = job("j", true, None);
        let external = job("j", true, Some("example.com/other"));
        let cases: [(&str, Pod, Option<&Job>, bool); 7] = [
            ("orphan", pod(None), None, true),
            ("job gone", pod(Some(("Job", "j"))), None, true),
            ("job running: adopted", pod(Some(("Job", "j"))), Some(&running), false),
            ("job finished", pod(Some(("Job", "j"))), Some(&finished), true),
            ("job recreated under the name", pod(Some(("Job", "old"))), Some(&running), true),
            ("job managed by another controller", pod(Some(("Job", "j"))), Some(&external), false),
            ("owned by a ReplicaSet", pod(Some(("ReplicaSet", "j"))), None, false),
        ];
        for (name, pod, job, want) in cases {
            assert_eq!(remove_orphan_finalizer(&pod, job), want, "{name}");
        }
    }
}
