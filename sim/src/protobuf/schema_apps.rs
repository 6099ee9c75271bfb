//! Tables for `apps/v1` Deployment and ReplicaSet and their parts.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars print it.

use super::message::Ty::{Bool, Int, IntOrString, Msg, Str, Time};
use super::message::{Message, keep, list, omit, one};
use super::schema_meta::{LABEL_SELECTOR, OBJECT_META};
use super::schema_pod::POD_TEMPLATE_SPEC;

/// `Deployment`.
pub(super) static DEPLOYMENT: Message = Message {
    name: "Deployment",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&DEPLOYMENT_SPEC)),
        one(3, "status", Msg(&DEPLOYMENT_STATUS)),
    ],
};

/// `ReplicaSet`.
pub(super) static REPLICA_SET: Message = Message {
    name: "ReplicaSet",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&REPLICA_SET_SPEC)),
        one(3, "status", Msg(&REPLICA_SET_STATUS)),
    ],
};

/// `DeploymentSpec`.
static DEPLOYMENT_SPEC: Message = Message {
    name: "DeploymentSpec",
    fields: &[
        keep(1, "replicas", Int),
        one(2, "selector", Msg(&LABEL_SELECTOR)),
        one(3, "template", Msg(&POD_TEMPLATE_SPEC)),
        one(4, "strategy", Msg(&DEPLOYMENT_STRATEGY)),
        omit(5, "minReadySeconds", Int),
        keep(6, "revisionHistoryLimit", Int),
        omit(7, "paused", Bool),
        keep(9, "progressDeadlineSeconds", Int),
    ],
};

/// `DeploymentStatus`.
static DEPLOYMENT_STATUS: Message = Message {
    name: "DeploymentStatus",
    fields: &[
        omit(1, "observedGeneration", Int),
        omit(2, "replicas", Int),
        omit(3, "updatedReplicas", Int),
        omit(4, "availableReplicas", Int),
        omit(5, "unavailableReplicas", Int),
        list(6, "conditions", Msg(&DEPLOYMENT_CONDITION)),
        omit(7, "readyReplicas", Int),
        keep(8, "collisionCount", Int),
        keep(9, "terminatingReplicas", Int),
    ],
};

/// `ReplicaSetSpec`.
static REPLICA_SET_SPEC: Message = Message {
    name: "ReplicaSetSpec",
    fields: &[
        keep(1, "replicas", Int),
        one(2, "selector", Msg(&LABEL_SELECTOR)),
        one(3, "template", Msg(&POD_TEMPLATE_SPEC)),
        omit(4, "minReadySeconds", Int),
    ],
};

/// `ReplicaSetStatus`.
static REPLICA_SET_STATUS: Message = Message {
    name: "ReplicaSetStatus",
    fields: &[
        keep(1, "replicas", Int),
        omit(2, "fullyLabeledReplicas", Int),
        omit(3, "observedGeneration", Int),
        omit(4, "readyReplicas", Int),
        omit(5, "availableReplicas", Int),
        list(6, "conditions", Msg(&REPLICA_SET_CONDITION)),
        keep(7, "terminatingReplicas", Int),
    ],
};

/// `DeploymentStrategy`.
static DEPLOYMENT_STRATEGY: Message = Message {
    name: "DeploymentStrategy",
    fields: &[omit(1, "type", Str), one(2, "rollingUpdate", Msg(&ROLLING_UPDATE_DEPLOYMENT))],
};

/// `DeploymentCondition`.
static DEPLOYMENT_CONDITION: Message = Message {
    name: "DeploymentCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        omit(4, "reason", Str),
        omit(5, "message", Str),
        one(6, "lastUpdateTime", Time),
        one(7, "lastTransitionTime", Time),
    ],
};

/// `ReplicaSetCondition`.
static REPLICA_SET_CONDITION: Message = Message {
    name: "ReplicaSetCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(3, "lastTransitionTime", Time),
        omit(4, "reason", Str),
        omit(5, "message", Str),
    ],
};

/// `RollingUpdateDeployment`.
static ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "RollingUpdateDeployment",
    fields: &[one(1, "maxUnavailable", IntOrString), one(2, "maxSurge", IntOrString)],
};
