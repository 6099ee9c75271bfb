//! The pod template of one index of an Indexed Job (upstream
//! `indexed_job_utils.go` `addCompletionIndex*`, `podGenerateNameWithIndex`
//! and the index part of `manageJob`).
//!
//! Every container and init container gets `JOB_COMPLETION_INDEX` from the
//! pod's `batch.kubernetes.io/job-completion-index` label (downward API;
//! a variable the template already defines is left alone). A pod of index
//! 3 of Job `pi` is named `pi-3-xxxxx`, has hostname `pi-3`, and carries
//! its index as that annotation and label; `spec.subdomain` stays as the
//! template has it, so with a headless Service of that name the pod is
//! reachable as `pi-3.<subdomain>`. With `backoffLimitPerIndex` it also
//! carries the failure counts of its index (see
//! [`new_index_failure_counts`]).

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, EnvVar, EnvVarSource, ObjectFieldSelector, PodTemplateSpec};

use super::indexed::{
    JOB_COMPLETION_INDEX_ANNOTATION, JOB_INDEX_FAILURE_COUNT_ANNOTATION, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
    has_backoff_limit_per_index, new_index_failure_counts,
};
use kcm_objects::Pod;

/// The variable holding a container's completion index
/// (upstream `completionIndexEnvName`).
pub const COMPLETION_INDEX_ENV_NAME: &str = "JOB_COMPLETION_INDEX";

/// The longest `generateName` the API server completes with its five
/// random characters (`names.MaxGeneratedNameLength`, 63 - 5).
const MAX_GENERATED_NAME_LENGTH: usize = 58;

/// Gives every container and init container of an Indexed Job's template
/// `JOB_COMPLETION_INDEX` (upstream `addCompletionIndexEnvVariables`).
pub fn add_completion_index_env_variables(template: &mut PodTemplateSpec) {
    let Some(spec) = template.spec.as_mut() else { return };
    for container in spec.init_containers.iter_mut().flatten().chain(spec.containers.iter_mut()) {
        add_completion_index_env_variable(container);
    }
}

/// Adds `JOB_COMPLETION_INDEX` from the index label, unless the container
/// already defines it.
fn add_completion_index_env_variable(container: &mut Container) {
    let env = container.env.get_or_insert_default();
    if env.iter().any(|v| v.name == COMPLETION_INDEX_ENV_NAME) {
        return;
    }
    env.push(EnvVar {
        name: COMPLETION_INDEX_ENV_NAME.into(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: None,
                field_path: format!("metadata.labels['{JOB_COMPLETION_INDEX_ANNOTATION}']"),
            }),
            ..Default::default()
        }),
    });
}

/// The template of the pod for `index`: `template` (already given the
/// index variable) with the index annotation and label, hostname
/// `<job>-<index>`, and, with `backoffLimitPerIndex`, the failure counts
/// carried on from `replaced`, the index's last failed pod.
pub fn template_for_index(
    template: &PodTemplateSpec,
    job: &Job,
    index: i32,
    replaced: Option<&Pod>,
) -> PodTemplateSpec {
    let mut template = template.clone();
    let job_name = job.metadata.name.as_deref().unwrap_or_default();
    let metadata = template.metadata.get_or_insert_default();
    let annotations = metadata.annotations.get_or_insert_default();
    annotations.insert(JOB_COMPLETION_INDEX_ANNOTATION.into(), index.to_string());
    if has_backoff_limit_per_index(job) {
        let (counted, ignored) = new_index_failure_counts(job, replaced);
        annotations.insert(JOB_INDEX_FAILURE_COUNT_ANNOTATION.into(), counted.to_string());
        if ignored > 0 {
            annotations.insert(JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION.into(), ignored.to_string());
        }
    }
    metadata.labels.get_or_insert_default().insert(JOB_COMPLETION_INDEX_ANNOTATION.into(), index.to_string());
    template.spec.get_or_insert_default().hostname = Some(format!("{job_name}-{index}"));
    template
}

/// The `generateName` of an index's pod, `<job>-<index>-`, the Job's name
/// cut so that it fits (upstream `podGenerateNameWithIndex`).
pub fn pod_generate_name_with_index(job_name: &str, index: i32) -> String {
    let suffix = format!("-{index}-");
    let mut prefix = format!("{job_name}{suffix}");
    if prefix.len() > MAX_GENERATED_NAME_LENGTH {
        let keep = MAX_GENERATED_NAME_LENGTH.saturating_sub(suffix.len());
        prefix = format!("{}{suffix}", &job_name[..floor_char_boundary(job_name, keep)]);
    }
    prefix
}

/// The largest char boundary of `s` at or below `at` (Job names are ASCII;
/// this keeps a malformed one from panicking).
fn floor_char_boundary(s: &str, at: usize) -> usize {
    (0..=at.min(s.len())).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::JobSpec;
    use k8s_openapi::api::core::v1::PodSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::testing::{PodBuilder, template};

    /// Upstream `TestPodGenerateNameWithIndex`.
    #[test]
    fn pod_generate_name_with_index_table() {
        let cases = [
            ("short job name", "indexed-job", 1, "indexed-job-1-"),
            (
                "job name exceeds MaxGeneneratedNameLength",
                "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo",
                1,
                "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
            ),
            (
                "job name with index suffix exceeds MaxGeneratedNameLength",
                "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo",
                1,
                "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
            ),
        ];
        for (name, job_name, index, want) in cases {
            assert_eq!(pod_generate_name_with_index(job_name, index), want, "{name}");
        }
    }

    fn env_names(container: &Container) -> Vec<&str> {
        container.env.iter().flatten().map(|v| v.name.as_str()).collect()
    }

    #[test]
    fn every_container_reads_its_index_from_the_label() {
        let mut template = template("busybox");
        let spec = template.spec.get_or_insert_default();
        spec.init_containers = Some(vec![Container { name: "init".into(), ..Default::default() }]);
        spec.containers.push(Container {
            name: "own".into(),
            env: Some(vec![EnvVar {
                name: COMPLETION_INDEX_ENV_NAME.into(),
                value: Some("7".into()),
                value_from: None,
            }]),
            ..Default::default()
        });
        add_completion_index_env_variables(&mut template);
        let spec = template.spec.unwrap();
        let init = &spec.init_containers.unwrap()[0];
        assert_eq!(env_names(init), [COMPLETION_INDEX_ENV_NAME]);
        let field = init.env.as_ref().unwrap()[0].value_from.as_ref().unwrap().field_ref.as_ref().unwrap();
        assert_eq!(field.field_path, "metadata.labels['batch.kubernetes.io/job-completion-index']");
        assert_eq!(env_names(&spec.containers[0]), [COMPLETION_INDEX_ENV_NAME]);
        assert_eq!(
            spec.containers[1].env.as_ref().unwrap()[0].value.as_deref(),
            Some("7"),
            "a variable of the template's own stays"
        );
    }

    #[test]
    fn an_index_pod_is_named_and_labelled_for_its_index() {
        let job = |per_index: Option<i32>| Job {
            metadata: ObjectMeta { name: Some("pi".into()), ..Default::default() },
            spec: Some(JobSpec { backoff_limit_per_index: per_index, ..Default::default() }),
            ..Default::default()
        };
        let mut base = template("busybox");
        base.spec = Some(PodSpec { subdomain: Some("workers".into()), ..base.spec.unwrap() });

        let pod = template_for_index(&base, &job(None), 3, None);
        let meta = pod.metadata.as_ref().unwrap();
        assert_eq!(
            meta.annotations.as_ref().unwrap().get(JOB_COMPLETION_INDEX_ANNOTATION).map(String::as_str),
            Some("3")
        );
        assert_eq!(meta.labels.as_ref().unwrap().get(JOB_COMPLETION_INDEX_ANNOTATION).map(String::as_str), Some("3"));
        assert_eq!(meta.labels.as_ref().unwrap().get("app").map(String::as_str), Some("web"));
        assert!(!meta.annotations.as_ref().unwrap().contains_key(JOB_INDEX_FAILURE_COUNT_ANNOTATION));
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.hostname.as_deref(), Some("pi-3"));
        assert_eq!(spec.subdomain.as_deref(), Some("workers"));

        let replaced = PodBuilder::new("pi-3-abcde")
            .phase("Failed")
            .annotation(JOB_INDEX_FAILURE_COUNT_ANNOTATION, "1")
            .annotation(JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION, "2")
            .build();
        let pod = template_for_index(&base, &job(Some(3)), 3, Some(&replaced));
        let annotations = pod.metadata.unwrap().annotations.unwrap();
        assert_eq!(annotations.get(JOB_INDEX_FAILURE_COUNT_ANNOTATION).map(String::as_str), Some("2"));
        assert_eq!(annotations.get(JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION).map(String::as_str), Some("2"));
        let first = template_for_index(&base, &job(Some(3)), 0, None).metadata.unwrap().annotations.unwrap();
        assert_eq!(first.get(JOB_INDEX_FAILURE_COUNT_ANNOTATION).map(String::as_str), Some("0"));
        assert!(!first.contains_key(JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION));
    }
}
