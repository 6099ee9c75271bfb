//! Tables for `batch/v1` Job and CronJob and their parts.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars (pointers, and fields without `omitempty`)
//! print it.

use super::message::Ty::{Bool, Int, Msg, Str, Time};
use super::message::{Message, keep, list, omit, one};
use super::schema_core::OBJECT_REFERENCE;
use super::schema_meta::{LABEL_SELECTOR, OBJECT_META};
use super::schema_pod::POD_TEMPLATE_SPEC;

/// `Job`.
pub(super) static JOB: Message = Message {
    name: "Job",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&JOB_SPEC)),
        one(3, "status", Msg(&JOB_STATUS)),
    ],
};

/// `CronJob`.
pub(super) static CRON_JOB: Message = Message {
    name: "CronJob",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&CRON_JOB_SPEC)),
        one(3, "status", Msg(&CRON_JOB_STATUS)),
    ],
};

/// `JobSpec`.
static JOB_SPEC: Message = Message {
    name: "JobSpec",
    fields: &[
        keep(1, "parallelism", Int),
        keep(2, "completions", Int),
        keep(3, "activeDeadlineSeconds", Int),
        one(4, "selector", Msg(&LABEL_SELECTOR)),
        keep(5, "manualSelector", Bool),
        one(6, "template", Msg(&POD_TEMPLATE_SPEC)),
        keep(7, "backoffLimit", Int),
        keep(8, "ttlSecondsAfterFinished", Int),
        keep(9, "completionMode", Str),
        keep(10, "suspend", Bool),
        one(11, "podFailurePolicy", Msg(&POD_FAILURE_POLICY)),
        keep(12, "backoffLimitPerIndex", Int),
        keep(13, "maxFailedIndexes", Int),
        keep(14, "podReplacementPolicy", Str),
        keep(15, "managedBy", Str),
        one(16, "successPolicy", Msg(&SUCCESS_POLICY)),
    ],
};

/// `JobStatus`.
static JOB_STATUS: Message = Message {
    name: "JobStatus",
    fields: &[
        list(1, "conditions", Msg(&JOB_CONDITION)),
        one(2, "startTime", Time),
        one(3, "completionTime", Time),
        omit(4, "active", Int),
        omit(5, "succeeded", Int),
        omit(6, "failed", Int),
        omit(7, "completedIndexes", Str),
        one(8, "uncountedTerminatedPods", Msg(&UNCOUNTED_TERMINATED_PODS)),
        keep(9, "ready", Int),
        keep(10, "failedIndexes", Str),
        keep(11, "terminating", Int),
    ],
};

/// `JobCondition`.
static JOB_CONDITION: Message = Message {
    name: "JobCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(3, "lastProbeTime", Time),
        one(4, "lastTransitionTime", Time),
        omit(5, "reason", Str),
        omit(6, "message", Str),
    ],
};

/// `UncountedTerminatedPods`.
static UNCOUNTED_TERMINATED_PODS: Message =
    Message { name: "UncountedTerminatedPods", fields: &[list(1, "succeeded", Str), list(2, "failed", Str)] };

/// `PodFailurePolicy`.
static POD_FAILURE_POLICY: Message =
    Message { name: "PodFailurePolicy", fields: &[list(1, "rules", Msg(&POD_FAILURE_POLICY_RULE))] };

/// `PodFailurePolicyRule`.
static POD_FAILURE_POLICY_RULE: Message = Message {
    name: "PodFailurePolicyRule",
    fields: &[
        keep(1, "action", Str),
        one(2, "onExitCodes", Msg(&ON_EXIT_CODES)),
        list(3, "onPodConditions", Msg(&ON_POD_CONDITIONS_PATTERN)),
    ],
};

/// `PodFailurePolicyOnExitCodesRequirement`.
static ON_EXIT_CODES: Message = Message {
    name: "PodFailurePolicyOnExitCodesRequirement",
    fields: &[keep(1, "containerName", Str), keep(2, "operator", Str), list(3, "values", Int)],
};

/// `PodFailurePolicyOnPodConditionsPattern`.
static ON_POD_CONDITIONS_PATTERN: Message =
    Message { name: "PodFailurePolicyOnPodConditionsPattern", fields: &[keep(1, "type", Str), omit(2, "status", Str)] };

/// `SuccessPolicy`.
static SUCCESS_POLICY: Message =
    Message { name: "SuccessPolicy", fields: &[list(1, "rules", Msg(&SUCCESS_POLICY_RULE))] };

/// `SuccessPolicyRule`.
static SUCCESS_POLICY_RULE: Message =
    Message { name: "SuccessPolicyRule", fields: &[keep(1, "succeededIndexes", Str), keep(2, "succeededCount", Int)] };

/// `CronJobSpec`.
static CRON_JOB_SPEC: Message = Message {
    name: "CronJobSpec",
    fields: &[
        keep(1, "schedule", Str),
        keep(2, "startingDeadlineSeconds", Int),
        omit(3, "concurrencyPolicy", Str),
        keep(4, "suspend", Bool),
        one(5, "jobTemplate", Msg(&JOB_TEMPLATE_SPEC)),
        keep(6, "successfulJobsHistoryLimit", Int),
        keep(7, "failedJobsHistoryLimit", Int),
        keep(8, "timeZone", Str),
    ],
};

/// `CronJobStatus`.
static CRON_JOB_STATUS: Message = Message {
    name: "CronJobStatus",
    fields: &[
        list(1, "active", Msg(&OBJECT_REFERENCE)),
        one(4, "lastScheduleTime", Time),
        one(5, "lastSuccessfulTime", Time),
    ],
};

/// `JobTemplateSpec`.
static JOB_TEMPLATE_SPEC: Message = Message {
    name: "JobTemplateSpec",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "spec", Msg(&JOB_SPEC))],
};

#[cfg(test)]
mod tests {
    //! Bodies captured from kubectl 1.37's generators, decoded and compared
    //! with the JSON the same command builds (`--dry-run=client -o json`;
    //! the zero `creationTimestamp`s print as `null`, as Go's protobuf
    //! decoding leaves a `metav1.Time` the API server then encodes).

    use serde_json::{Value, json};

    use crate::resources::Builtin;

    /// `kubectl create job pi --image=perl:5.34 -- perl -e 'print 1'`.
    const JOB_PI: &[u8] = b"k8s\x00\x0a\x0f\x0a\x08batch/v1\x12\x03Job\x12\x8f\x01\x0a\x12\x0a\x02pi\
      \x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12o2m\x0a\x10\x0a\x00\x12\x00\
      \x1a\x00\"\x00*\x002\x008\x00B\x00\x12Y\x126\x0a\x02pi\x12\x09perl:5.34\
      \x1a\x04perl\x1a\x02-e\x1a\x07print\x201*\x00B\x00j\x00r\x00\x80\x01\x00\
      \x88\x01\x00\x90\x01\x00\xa2\x01\x00\x1a\x05Never2\x00B\x00J\x00R\x00X\x00\
      `\x00h\x00\x82\x01\x00\x8a\x01\x00\x9a\x01\x00\xc2\x01\x00\x1a\x08\x20\x00\
      (\x000\x00:\x00\x1a\x00\"\x00";

    /// `kubectl create cronjob hello --image=busybox --schedule='*/5 * * * *' -- date`.
    const CRON_JOB_HELLO: &[u8] = b"k8s\x00\x0a\x13\x0a\x08batch/v1\x12\x07CronJob\x12\xae\x01\x0a\x15\x0a\x05\
      hello\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x92\x01\x0a\x0b*/5\x20\
      *\x20*\x20*\x20*\x1a\x00*\x80\x01\x0a\x15\x0a\x05hello\x12\x00\x1a\x00\"\
      \x00*\x002\x008\x00B\x00\x12g2e\x0a\x10\x0a\x00\x12\x00\x1a\x00\"\x00*\x00\
      2\x008\x00B\x00\x12Q\x12*\x0a\x05hello\x12\x07busybox\x1a\x04date*\x00B\
      \x00j\x00r\x00\x80\x01\x00\x88\x01\x00\x90\x01\x00\xa2\x01\x00\x1a\x09OnFa\
      ilure2\x00B\x00J\x00R\x00X\x00`\x00h\x00\x82\x01\x00\x8a\x01\x00\x9a\x01\
      \x00\xc2\x01\x00\x1a\x00\x1a\x00\"\x00";

    /// The pod template kubectl builds around one container.
    fn template(container: Value, restart: &str) -> Value {
        json!({"metadata": {"creationTimestamp": null},
            "spec": {"containers": [container], "restartPolicy": restart}})
    }

    #[test]
    fn kubectl_create_job() {
        let container =
            json!({"name": "pi", "image": "perl:5.34", "command": ["perl", "-e", "print 1"], "resources": {}});
        let expected = json!({"kind": "Job", "apiVersion": "batch/v1",
            "metadata": {"name": "pi", "creationTimestamp": null},
            "spec": {"template": template(container, "Never")}, "status": {}});
        assert_eq!(super::super::decode(Builtin::Job, JOB_PI).expect("decodes"), expected);
    }

    #[test]
    fn kubectl_create_cronjob() {
        let container = json!({"name": "hello", "image": "busybox", "command": ["date"], "resources": {}});
        let expected = json!({"kind": "CronJob", "apiVersion": "batch/v1",
            "metadata": {"name": "hello", "creationTimestamp": null},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {
                "metadata": {"name": "hello", "creationTimestamp": null},
                "spec": {"template": template(container, "OnFailure")}}},
            "status": {}});
        assert_eq!(super::super::decode(Builtin::CronJob, CRON_JOB_HELLO).expect("decodes"), expected);
    }
}
