//! The parameters operations list: each operation's query parameters, with
//! the type and description the API server gives them, and path
//! parameters.

use serde_json::{Value, json};

/// Query parameters of a list (or watch).
pub(super) const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];

/// Query parameters of a delete of one object.
pub(super) const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];

/// Query parameters of a delete of a collection.
pub(super) const DELETE_COLLECTION_PARAMS: &[&str] = &[
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
];

/// Query parameters of a create or replace.
pub(super) const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];

/// Query parameters of a patch.
pub(super) const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];

/// A required path parameter.
pub(super) fn path_param(name: &str, description: &str) -> Value {
    json!({
        "description": description,
        "in": "path",
        "name": name,
        "required": true,
        "schema": { "type": "string", "uniqueItems": true },
    })
}

/// A query parameter the API server understands, with its type and a short
/// description.
pub(super) fn query_param(name: &str) -> Value {
    let (kind, description) = match name {
        "allowWatchBookmarks" => ("boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."),
        "continue" => ("string", "The continue option should be set when retrieving more results from the server."),
        "dryRun" => (
            "string",
            "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed",
        ),
        "fieldManager" => {
            ("string", "fieldManager is a name associated with the actor or entity that is making these changes.")
        }
        "fieldSelector" => {
            ("string", "A selector to restrict the list of returned objects by their fields. Defaults to everything.")
        }
        "fieldValidation" => (
            "string",
            "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict",
        ),
        "force" => (
            "boolean",
            "Force is going to \"force\" Apply requests. Force flag must be unset for non-apply patch requests.",
        ),
        "gracePeriodSeconds" => (
            "integer",
            "The duration in seconds before the object should be deleted. The value zero indicates delete immediately.",
        ),
        "ignoreStoreReadErrorWithClusterBreakingPotential" => (
            "boolean",
            "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.",
        ),
        "labelSelector" => {
            ("string", "A selector to restrict the list of returned objects by their labels. Defaults to everything.")
        }
        "limit" => ("integer", "limit is a maximum number of responses to return for a list call."),
        "orphanDependents" => ("boolean", "Deprecated: please use the PropagationPolicy."),
        "pretty" => ("string", "If 'true', then the output is pretty printed."),
        "propagationPolicy" => (
            "string",
            "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
        ),
        "resourceVersion" => {
            ("string", "resourceVersion sets a constraint on what resource versions a request may be served from.")
        }
        "resourceVersionMatch" => {
            ("string", "resourceVersionMatch determines how resourceVersion is applied to list calls.")
        }
        "sendInitialEvents" => (
            "boolean",
            "`sendInitialEvents=true` may be set together with `watch=true`; the watch stream begins with synthetic events for the current state.",
        ),
        "timeoutSeconds" => ("integer", "Timeout for the list/watch call."),
        "watch" => (
            "boolean",
            "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
        ),
        _ => ("string", ""),
    };
    json!({
        "description": description,
        "in": "query",
        "name": name,
        "schema": { "type": kind, "uniqueItems": true },
    })
}
