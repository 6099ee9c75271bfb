//! The plain (non-pointer) scalar fields tagged `omitempty` in the Go
//! types of the API groups kube-sim serves: their zero value (`0`, `""`,
//! `false`) is never written, as Go's encoding/json omits it, so the API
//! server never returns one (a DaemonSet status's `updatedNumberScheduled:
//! 0`, a Deployment status's `replicas: 0`). The OpenAPI schemas cannot
//! tell these from pointers, whose zero is written (`terminatingReplicas:
//! 0`), hence this table.
//!
//! Taken from the struct tags of k8s.io/api v0.37.2 (apps, batch,
//! coordination, core, discovery, events, policy and rbac, v1) and
//! k8s.io/apimachinery v0.37.2's meta/v1: every field whose tag has
//! `omitempty` and whose type is `string`, `bool`, an integer or a named
//! type over one. Sorted, for [`is_zero_omitted`]'s binary search.
//! Sorted, for [`is_zero_omitted`]'s binary search: core/v1's fields in
//! `core.rs`, the other groups' and meta/v1's in `groups.rs`.

mod core;
mod groups;

pub(super) use self::core::CORE as ZERO_OMITTED_CORE;
pub(super) use self::groups::GROUPS as ZERO_OMITTED_GROUPS;

/// Whether field `key` of the definition `definition` is a plain scalar
/// tagged `omitempty`, whose zero value is not written.
pub(super) fn is_zero_omitted(definition: &str, key: &str) -> bool {
    let table = if definition.starts_with("io.k8s.api.core.v1.") { ZERO_OMITTED_CORE } else { ZERO_OMITTED_GROUPS };
    table.binary_search(&(definition, key)).is_ok()
}
