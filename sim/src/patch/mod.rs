//! The three patch formats of `PATCH` requests, applied to a stored object.
//!
//! kube-sim keeps objects as schemaless JSON, so a patch is a function from
//! the stored [`Value`] and the request body to the new [`Value`]:
//!
//! - [`PatchType::Json`]: RFC 6902 JSON patch (`application/json-patch+json`),
//!   through the `json-patch` crate.
//! - [`PatchType::Merge`]: RFC 7386 JSON merge patch
//!   (`application/merge-patch+json`), also through `json-patch`.
//! - [`PatchType::Strategic`]: Kubernetes strategic merge patch
//!   (`application/strategic-merge-patch+json`), implemented here as the API
//!   server applies it to built-in types: maps merge recursively, `null`
//!   deletes, and a list either merges element by element or is replaced,
//!   depending on the Go type's `patchStrategy`/`patchMergeKey` struct tags.
//!   Those tags are recorded in [`PATCH_META`]; the merge walks the object
//!   alongside the k8s-openapi schemas to know which type (and so which
//!   tags) it is in. The directives `$patch` (`replace`, `delete`),
//!   `$retainKeys`, `$setElementOrder/<list>` and
//!   `$deleteFromPrimitiveList/<list>` are honoured.
//! - [`PatchType::Apply`]: server-side apply, which kube-sim does not
//!   implement.
//!
//! This module only computes the patched object. Checking that the result
//! is still valid (name, namespace, `resourceVersion` preconditions, schema)
//! and turning a [`PatchError`] into a `Status` answer belong to the API
//! layer; [`PatchError::status_code`] says which HTTP code the real API
//! server answers.
//!
//! Where the list order after a strategic merge is concerned this follows
//! `k8s.io/apimachinery/pkg/util/strategicpatch`: items named in the patch
//! take the patch's order (or `$setElementOrder`'s), items only on the
//! server keep theirs, and an item new to the list goes *before* the
//! server's remaining items — so `kubectl patch` adding a container shows it
//! first, as a real cluster does.

use serde_json::Value;

use crate::resources::Builtin;

mod json;
mod meta;
mod strategic;
#[cfg(test)]
mod tests;

pub use meta::PATCH_META;

use json::{apply_json_patch, apply_merge_patch};
use strategic::apply_strategic;

/// Errors from applying a patch. Each variant maps to the HTTP status the
/// real API server uses for it (see [`PatchError::status_code`]).
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The body is not a patch of the declared type: not JSON, not the
    /// expected shape, or a directive that is badly formed. 400 BadRequest.
    #[error("malformed patch: {0}")]
    Malformed(String),
    /// The patch is well formed but cannot be applied to this object (a
    /// failing JSON patch `test`, a path that does not exist, a list of
    /// lists). 422 Unprocessable Entity (reason Invalid).
    #[error("the patch could not be applied: {0}")]
    Failed(String),
    /// The patch type is not supported for this resource (strategic merge
    /// patch on a custom resource, server-side apply). 415 Unsupported
    /// Media Type.
    #[error("{0}")]
    Unsupported(String),
}

impl PatchError {
    /// The HTTP status code the real API server answers with.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Malformed(_) => 400,
            PatchError::Failed(_) => 422,
            PatchError::Unsupported(_) => 415,
        }
    }
}

/// Result alias of this module.
type Result<T, E = PatchError> = std::result::Result<T, E>;

/// The patch formats of the `Content-Type` of a `PATCH` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch, `application/json-patch+json`.
    Json,
    /// RFC 7386 JSON merge patch, `application/merge-patch+json`.
    Merge,
    /// Kubernetes strategic merge patch,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// Server-side apply, `application/apply-patch+yaml` (not supported).
    Apply,
}

impl PatchType {
    /// Parses a `Content-Type` header value, ignoring parameters such as
    /// `; charset=utf-8`. `None` for anything that is not a patch type
    /// (the caller answers 415).
    pub fn from_content_type(ct: &str) -> Option<PatchType> {
        let essence = ct.split(';').next().unwrap_or_default().trim();
        let types = [
            ("application/json-patch+json", PatchType::Json),
            ("application/merge-patch+json", PatchType::Merge),
            ("application/strategic-merge-patch+json", PatchType::Strategic),
            ("application/apply-patch+yaml", PatchType::Apply),
        ];
        types.into_iter().find(|(name, _)| essence.eq_ignore_ascii_case(name)).map(|(_, t)| t)
    }

    /// The media type naming this patch format.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// Applies a patch body to `original` and returns the patched object.
/// `kind` is the built-in type of the object, or `None` for a custom
/// resource (which has no strategic merge metadata).
///
/// # Errors
///
/// [`PatchError::Malformed`] when the body cannot be read as a patch of
/// `patch_type`, [`PatchError::Failed`] when it cannot be applied, and
/// [`PatchError::Unsupported`] for server-side apply and for strategic
/// merge patch on custom resources.
pub fn apply(patch_type: PatchType, kind: Option<Builtin>, original: &Value, body: &[u8]) -> Result<Value> {
    match patch_type {
        PatchType::Json => apply_json_patch(original, body),
        PatchType::Merge => apply_merge_patch(original, body),
        PatchType::Strategic => {
            let Some(kind) = kind else {
                return Err(PatchError::Unsupported(
                    "strategic merge patch is not supported for custom resources: use a JSON \
                     merge patch (kubectl patch --type=merge) or a JSON patch (--type=json)"
                        .to_owned(),
                ));
            };
            apply_strategic(kind, original, body)
        }
        PatchType::Apply => Err(PatchError::Unsupported(
            "server-side apply (application/apply-patch+yaml) is not supported by kube-sim: \
             use client-side apply (kubectl apply without --server-side)"
                .to_owned(),
        )),
    }
}
