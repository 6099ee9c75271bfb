//! The pods a Job creates (upstream `manageJob`'s creation loop): the
//! template with the tracking finalizer, the Job's controller reference,
//! `generateName` `<job>-`; for an Indexed Job also the
//! `JOB_COMPLETION_INDEX` variable in every container, the
//! completion-index annotation and label, hostname `<job>-<index>`,
//! `generateName` `<job>-<index>-` and, with `backoffLimitPerIndex`, the
//! index's failure counts.

use k8s_openapi::api::core::v1::Pod;

use super::ctx::Ctx;
use super::indexed_sync;
use super::pods::TRACKING_FINALIZER;
use crate::common::controller_ref::new_controller_ref;
use crate::common::pod_control::pod_from_template;

/// `count` pods to create, one per index of `indexes` for an Indexed Job.
pub(super) fn pods_to_create(ctx: &Ctx<'_>, count: usize, indexes: &[i32]) -> Vec<Pod> {
    let job = &ctx.job;
    let mut template = job.template();
    if ctx.indexed.is_some() {
        indexed_sync::add_completion_index_env_variables(&mut template);
    }
    let finalizers = template.metadata.get_or_insert_default().finalizers.get_or_insert_default();
    if !finalizers.iter().any(|f| f == TRACKING_FINALIZER) {
        finalizers.push(TRACKING_FINALIZER.to_owned());
    }
    let name = job.metadata.name.as_deref().unwrap_or_default();
    let controller_ref = new_controller_ref(&job.metadata, "batch/v1", "Job");
    if indexes.is_empty() {
        return (0..count).map(|_| pod_from_template(&template, name, controller_ref.clone())).collect();
    }
    indexes
        .iter()
        .map(|&index| {
            let mut indexed = template.clone();
            indexed_sync::prepare_index_template(ctx, &mut indexed, index);
            let mut pod = pod_from_template(&indexed, name, controller_ref.clone());
            pod.metadata.generate_name = Some(indexed_sync::generate_name(name, index));
            pod
        })
        .collect()
}
