//! Create: `rest.BeforeCreate` and the strategies' `PrepareForCreate` and
//! `Validate`.

use serde_json::{Value, json};

use super::kinds::{reset_on_create, tracks_generation};
use crate::error::{ApiError, ApiResult};
use crate::object::{generate_name, metadata_mut, now_rfc3339};
use crate::resources::ResourceType;
use crate::{defaults, omitempty, validation};

/// Metadata only the API server writes, dropped from a create's body.
const CLEARED_ON_CREATE: [&str; 5] =
    ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "managedFields"];

/// The metadata of a new object: its namespace (the one in the path; a
/// different one in the body is a 400), its name (or one generated from
/// `generateName`; neither is a 422), a new `uid`, `creationTimestamp` now,
/// `generation` 1 for the kinds that track it, and the server-owned fields
/// cleared. Returns the name.
pub fn before_create(rt: &ResourceType, namespace: &str, object: &mut Value) -> ApiResult<String> {
    let md = metadata_mut(object);
    if rt.namespaced {
        match md.get("namespace").and_then(Value::as_str) {
            Some(given) if !given.is_empty() && given != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                md.insert("namespace".into(), json!(namespace));
            }
        }
    } else {
        md.remove("namespace");
    }
    let name = match md.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
        Some(name) => name.to_owned(),
        None => match md.get("generateName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            Some(prefix) => generate_name(prefix),
            None => {
                return invalid(
                    rt,
                    "",
                    vec![validation::Cause {
                        reason: "FieldValueRequired",
                        message: "Required value: name or generateName is required".into(),
                        field: "metadata.name".into(),
                    }],
                )
                .map(|()| unreachable!("invalid() with a cause is an error"));
            }
        },
    };
    md.insert("name".into(), json!(name));
    md.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    md.insert("creationTimestamp".into(), json!(now_rfc3339()));
    for server_owned in CLEARED_ON_CREATE {
        md.remove(server_owned);
    }
    if tracks_generation(rt) {
        md.insert("generation".into(), json!(1));
    } else {
        md.remove("generation");
    }
    Ok(name)
}

/// What a built-in kind's new object gets once admitted: the defaults, the
/// kind's create-time resets ([`reset_on_create`]), validation (a 422
/// with every cause), and its empty optional fields dropped as the API
/// server's encoding drops them.
pub fn prepare_for_create(rt: &ResourceType, name: &str, object: &mut Value) -> ApiResult<()> {
    if let Some(kind) = rt.builtin {
        defaults::apply(kind, object);
        reset_on_create(kind, object);
        invalid(rt, name, validation::validate_create(kind, object))?;
        omitempty::drop_empty(kind, object);
    }
    Ok(())
}

/// A 422 Invalid carrying `causes`, or `Ok` when there are none.
pub(super) fn invalid(rt: &ResourceType, name: &str, causes: Vec<validation::Cause>) -> ApiResult<()> {
    if causes.is_empty() {
        return Ok(());
    }
    let causes: Vec<(String, String, String)> =
        causes.into_iter().map(|c| (c.reason.to_owned(), c.message, c.field)).collect();
    Err(ApiError::invalid(rt, name, &causes))
}
