//! Validation of batch/v1 Job specs (`pkg/apis/batch/validation`):
//! `ValidateJob` with the generated selector's labels
//! (`validateGeneratedSelector`), `ValidateJobSpec` and the
//! `validateJobSpec` a CronJob's job template shares (counts, indexed
//! completion, managedBy, the pod failure and success policies, the pod
//! replacement policy, the pod template and its restart policy).
//!
//! What an update may change is `job_update.rs`; the `/status` rules are
//! `job_status.rs`; CronJobs are `cron_job.rs`.

use serde_json::{Map, Value};

use super::access::{at, int, str_of, text};
use super::errors::{Errors, nonnegative};
use super::job_policies::{go_success_policy, pod_failure_policy, success_policy};
use super::meta::label_selector;
use super::pod::pod_template_spec;
use super::render::{go_label_selector, go_quote, go_string_map};
use super::syntax::{dns1123_label, dns1123_subdomain, regex_error};
use super::values::Selector;

/// `maxParallelismForIndexedJob`.
const MAX_PARALLELISM_INDEXED: i64 = 100_000;
/// `maxFailedIndexesForIndexedJob`.
const MAX_FAILED_INDEXES: i64 = 100_000;
/// `completionsSoftLimit`.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
/// `parallelismLimitForHighCompletions` and
/// `maxFailedIndexesLimitForHighCompletions`.
const HIGH_COMPLETIONS_LIMIT: i64 = 10_000;
/// `maxManagedByLength`.
const MAX_MANAGED_BY: usize = 63;

/// The legacy and `batch.kubernetes.io/` label keys of the generated
/// selector: (controller uid, job name).
const LEGACY_LABELS: (&str, &str) = ("controller-uid", "job-name");
const PREFIXED_LABELS: (&str, &str) = ("batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name");

/// `ValidateJob` but for the metadata (the caller's): the generated
/// selector's labels, the spec with its selector, and the pod hostnames of
/// an Indexed Job. `prefixed_labels` asks for the `batch.kubernetes.io/`
/// labels too (always on create; on update when the old Job had both).
pub(super) fn job(errs: &mut Errors, job: &Value, prefixed_labels: bool) {
    generated_selector(errs, job, prefixed_labels);
    let spec = at(job, "spec");
    job_spec_with_selector(errs, spec);
    let completions = int(spec, "completions").unwrap_or(0);
    if text(spec, "completionMode") == "Indexed" && completions > 0 {
        let name = text(at(job, "metadata"), "name");
        let hostname = format!("{name}-{}", completions - 1);
        if !dns1123_label(&hostname).is_empty() {
            let detail = format!("will not able to create pod with invalid DNS label: {hostname}");
            errs.invalid("metadata.name", go_quote(name), &detail);
        }
    }
}

/// `validateGeneratedSelector`.
fn generated_selector(errs: &mut Errors, job: &Value, prefixed_labels: bool) {
    let spec = at(job, "spec");
    if at(spec, "manualSelector").as_bool() == Some(true) || at(spec, "selector").is_null() {
        return;
    }
    let meta = at(job, "metadata");
    let (uid, name) = (text(meta, "uid"), text(meta, "name"));
    if uid.is_empty() {
        errs.required("metadata.uid", "");
    }
    let labels = at(at(at(spec, "template"), "metadata"), "labels");
    let mut expected = Map::new();
    let mut keys = vec![LEGACY_LABELS];
    if prefixed_labels {
        keys.push(PREFIXED_LABELS);
    }
    for (uid_key, name_key) in keys {
        for (key, value) in [(uid_key, uid), (name_key, name)] {
            has_label(errs, labels, key, value);
            expected.insert(key.to_owned(), Value::from(value));
        }
    }
    if let Some(selector) = Selector::parse(at(spec, "selector"))
        && !selector.matches(&Value::Object(expected))
    {
        errs.invalid("spec.selector", go_label_selector(at(spec, "selector")), "`selector` not auto-generated");
    }
}

/// `ValidateHasLabel` on the pod template's labels.
fn has_label(errs: &mut Errors, labels: &Value, key: &str, expected: &str) {
    let path = format!("spec.template.metadata.labels[{key}]");
    match labels.get(key).map(str_of) {
        None => errs.required(&path, expected),
        Some(actual) if actual != expected => errs.invalid(&path, go_string_map(labels), expected),
        Some(_) => {}
    }
}

/// `ValidateJobSpec`: [`job_spec`], then the selector, required and
/// matching the template's labels.
fn job_spec_with_selector(errs: &mut Errors, spec: &Value) {
    job_spec(errs, spec, "spec");
    let selector = at(spec, "selector");
    if selector.is_null() {
        errs.required("spec.selector", "");
    } else {
        label_selector(errs, selector, "spec.selector");
    }
    let labels = at(at(at(spec, "template"), "metadata"), "labels");
    if let Some(parsed) = Selector::parse(selector)
        && !parsed.matches(labels)
    {
        let detail = "`selector` does not match template `labels`";
        errs.invalid("spec.template.metadata.labels", go_string_map(labels), detail);
    }
}

/// `validateJobSpec`, at `path` (`spec`, or a CronJob's
/// `spec.jobTemplate.spec`).
pub(super) fn job_spec(errs: &mut Errors, spec: &Value, path: &str) {
    for field in ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"] {
        nonnegative(errs, int(spec, field), &format!("{path}.{field}"));
    }
    let per_index = int(spec, "backoffLimitPerIndex");
    let max_failed = int(spec, "maxFailedIndexes");
    nonnegative(errs, per_index, &format!("{path}.backoffLimitPerIndex"));
    if max_failed.is_some() {
        nonnegative(errs, max_failed, &format!("{path}.maxFailedIndexes"));
        if per_index.is_none() {
            errs.required(&format!("{path}.backoffLimitPerIndex"), "when maxFailedIndexes is specified");
        }
    }
    if let Some(managed_by) = at(spec, "managedBy").as_str() {
        domain_prefixed_path(errs, &format!("{path}.managedBy"), managed_by);
        if managed_by.len() > MAX_MANAGED_BY {
            errs.too_long(&format!("{path}.managedBy"), MAX_MANAGED_BY);
        }
    }
    completion_mode(errs, spec, path);
    let failure_policy = at(spec, "podFailurePolicy");
    if !failure_policy.is_null() {
        pod_failure_policy(errs, spec, failure_policy, &format!("{path}.podFailurePolicy"));
    }
    let success_policy = at(spec, "successPolicy");
    if !success_policy.is_null() {
        let success_path = format!("{path}.successPolicy");
        if text(spec, "completionMode") != "Indexed" {
            errs.invalid(&success_path, go_success_policy(success_policy), "requires indexed completion mode");
        } else {
            self::success_policy(errs, spec, success_policy, &success_path);
        }
    }
    if let Some(replacement) = at(spec, "podReplacementPolicy").as_str() {
        let allowed: &[&str] = if failure_policy.is_null() { &["Failed", "TerminatingOrFailed"] } else { &["Failed"] };
        if !allowed.contains(&replacement) {
            errs.not_supported(&format!("{path}.podReplacementPolicy"), go_quote(replacement), allowed);
        }
    }
    let template = at(spec, "template");
    pod_template_spec(errs, template, &format!("{path}.template"));
    let restart_path = format!("{path}.template.spec.restartPolicy");
    match text(at(template, "spec"), "restartPolicy") {
        "Always" | "" => errs.required(&restart_path, r#"valid values: "OnFailure", "Never""#),
        "Never" => {}
        "OnFailure" if failure_policy.is_null() => {}
        "OnFailure" => {
            let detail = r#"only "Never" is supported when podFailurePolicy is specified"#;
            errs.invalid(&restart_path, go_quote("OnFailure"), detail);
        }
        other => errs.not_supported(&restart_path, go_quote(other), &["OnFailure", "Never"]),
    }
}

/// The completion mode and the indexed-only fields.
fn completion_mode(errs: &mut Errors, spec: &Value, path: &str) {
    let mode = at(spec, "completionMode").as_str();
    let completions = int(spec, "completions");
    let parallelism = int(spec, "parallelism");
    let (per_index, max_failed) = (int(spec, "backoffLimitPerIndex"), int(spec, "maxFailedIndexes"));
    match mode {
        Some("Indexed") => {
            if completions.is_none() {
                errs.required(&format!("{path}.completions"), "when completion mode is Indexed");
            }
            if let Some(p) = parallelism.filter(|p| *p > MAX_PARALLELISM_INDEXED) {
                let detail =
                    format!("must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed");
                errs.invalid(&format!("{path}.parallelism"), p.to_string(), &detail);
            }
            if let (Some(c), Some(m)) = (completions, max_failed)
                && m > c
            {
                errs.invalid(
                    &format!("{path}.maxFailedIndexes"),
                    m.to_string(),
                    "must be less than or equal to completions",
                );
            }
            if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES) {
                let detail = format!("must be less than or equal to {MAX_FAILED_INDEXES}");
                errs.invalid(&format!("{path}.maxFailedIndexes"), m.to_string(), &detail);
            }
            if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
                high_completions(errs, parallelism, max_failed, path);
            }
        }
        Some("NonIndexed") | None => {
            for (field, value) in [("backoffLimitPerIndex", per_index), ("maxFailedIndexes", max_failed)] {
                if let Some(v) = value {
                    errs.invalid(&format!("{path}.{field}"), v.to_string(), "requires indexed completion mode");
                }
            }
        }
        Some(other) => {
            errs.not_supported(&format!("{path}.completionMode"), go_quote(other), &["NonIndexed", "Indexed"]);
        }
    }
}

/// The limits of an Indexed Job of more than 100,000 completions with a
/// backoff limit per index.
fn high_completions(errs: &mut Errors, parallelism: Option<i64>, max_failed: Option<i64>, path: &str) {
    let detail = format!(
        "must be less than or equal to {HIGH_COMPLETIONS_LIMIT} when completions are above \
         {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    );
    if max_failed.is_none() {
        let required = format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}");
        errs.required(&format!("{path}.maxFailedIndexes"), &required);
    }
    if let Some(p) = parallelism.filter(|p| *p > HIGH_COMPLETIONS_LIMIT) {
        errs.invalid(&format!("{path}.parallelism"), p.to_string(), &detail);
    }
    if let Some(m) = max_failed.filter(|m| *m > HIGH_COMPLETIONS_LIMIT) {
        errs.invalid(&format!("{path}.maxFailedIndexes"), m.to_string(), &detail);
    }
}

/// `IsDomainPrefixedPath`.
fn domain_prefixed_path(errs: &mut Errors, path: &str, value: &str) {
    if value.is_empty() {
        errs.required(path, "");
        return;
    }
    let Some((host, rest)) = value.split_once('/').filter(|(h, r)| !h.is_empty() && !r.is_empty()) else {
        errs.invalid(path, go_quote(value), r#"must be a domain-prefixed path (such as "acme.io/foo")"#);
        return;
    };
    for msg in dns1123_subdomain(host) {
        errs.invalid(path, go_quote(host), &msg);
    }
    let http_path = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(http_path) {
        let detail = regex_error("must be a valid path", r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+", &[]);
        errs.invalid(path, go_quote(rest), &detail);
    }
}

/// `ValidateJobTemplateSpec`: a CronJob's job template, whose selector the
/// Job strategy generates.
pub(super) fn job_template(errs: &mut Errors, template: &Value, path: &str) {
    let spec = at(template, "spec");
    let spec_path = format!("{path}.spec");
    job_spec(errs, spec, &spec_path);
    let selector = at(spec, "selector");
    if !selector.is_null() {
        errs.invalid(
            &format!("{spec_path}.selector"),
            go_label_selector(selector),
            "`selector` will be auto-generated",
        );
    }
    if at(spec, "manualSelector").as_bool() == Some(true) {
        errs.not_supported(&format!("{spec_path}.manualSelector"), "true".to_owned(), &["nil", "false"]);
    }
}
