//! Tables for the `meta/v1` messages every object shares: object
//! metadata, owner references, managed fields, label selectors and
//! conditions.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars print it.

use super::message::Ty::{Bool, Int, Msg, Raw, Str, Time};
use super::message::{Message, keep, list, map, omit, one};

/// `Condition`.
pub(super) static CONDITION: Message = Message {
    name: "Condition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        omit(3, "observedGeneration", Int),
        one(4, "lastTransitionTime", Time),
        keep(5, "reason", Str),
        keep(6, "message", Str),
    ],
};

/// `ObjectMeta`.
pub(super) static OBJECT_META: Message = Message {
    name: "ObjectMeta",
    fields: &[
        omit(1, "name", Str),
        omit(2, "generateName", Str),
        omit(3, "namespace", Str),
        omit(4, "selfLink", Str),
        omit(5, "uid", Str),
        omit(6, "resourceVersion", Str),
        omit(7, "generation", Int),
        one(8, "creationTimestamp", Time),
        one(9, "deletionTimestamp", Time),
        keep(10, "deletionGracePeriodSeconds", Int),
        map(11, "labels", Str),
        map(12, "annotations", Str),
        list(13, "ownerReferences", Msg(&OWNER_REFERENCE)),
        list(14, "finalizers", Str),
        list(17, "managedFields", Msg(&MANAGED_FIELDS_ENTRY)),
    ],
};

/// `OwnerReference`.
static OWNER_REFERENCE: Message = Message {
    name: "OwnerReference",
    fields: &[
        keep(1, "kind", Str),
        keep(3, "name", Str),
        keep(4, "uid", Str),
        keep(5, "apiVersion", Str),
        keep(6, "controller", Bool),
        keep(7, "blockOwnerDeletion", Bool),
    ],
};

/// `ManagedFieldsEntry`.
static MANAGED_FIELDS_ENTRY: Message = Message {
    name: "ManagedFieldsEntry",
    fields: &[
        omit(1, "manager", Str),
        omit(2, "operation", Str),
        omit(3, "apiVersion", Str),
        one(4, "time", Time),
        omit(6, "fieldsType", Str),
        one(7, "fieldsV1", Raw),
        omit(8, "subresource", Str),
    ],
};

/// `LabelSelector`.
pub(super) static LABEL_SELECTOR: Message = Message {
    name: "LabelSelector",
    fields: &[map(1, "matchLabels", Str), list(2, "matchExpressions", Msg(&LABEL_SELECTOR_REQUIREMENT))],
};

/// `LabelSelectorRequirement`.
static LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "LabelSelectorRequirement",
    fields: &[keep(1, "key", Str), keep(2, "operator", Str), list(3, "values", Str)],
};
