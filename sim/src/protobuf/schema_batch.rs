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
