//! Request bodies of `create`, `update` and `patch`: the media types
//! accepted (JSON, YAML, and protobuf for built-in kinds), `kind` and
//! `apiVersion` checked against the target, and unknown fields handled as
//! `fieldValidation` asks (`Ignore`, `Warn`, `Strict`).

use axum::http::header;
use serde_json::{Value, json};

use super::request::Request;
use crate::error::{ApiError, ApiResult};
use crate::resources::{Builtin, ResourceType};
use crate::{protobuf, typed};

/// How unknown fields in a request body are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

impl FieldValidation {
    /// The policy a request asks for (`Warn` when it names none).
    pub(super) fn of(req: &Request) -> ApiResult<Self> {
        match req.param("fieldValidation").unwrap_or("Warn") {
            "Ignore" => Ok(FieldValidation::Ignore),
            "Warn" | "" => Ok(FieldValidation::Warn),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn or Strict, got {other:?}"
            ))),
        }
    }
}

/// The body as a JSON object, decoded by its `Content-Type`; `kind` is the
/// built-in kind whose protobuf encoding is accepted, if any.
pub(super) fn parse_body(req: &Request, kind: Option<Builtin>) -> ApiResult<Value> {
    let content_type = req.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media == protobuf::MEDIA_TYPE {
        // kubectl's generator commands send protobuf for built-in kinds.
        let Some(kind) = kind else {
            return Err(ApiError::unsupported_media_type(
                "protobuf bodies are only accepted for built-in kinds; send JSON",
            ));
        };
        return protobuf::decode(kind, &req.body).map_err(|e| match e {
            protobuf::ProtobufError::UnsupportedKind(_) => ApiError::unsupported_media_type(e.to_string()),
            other => ApiError::bad_request(format!("cannot decode the protobuf body: {other}")),
        });
    }
    if !matches!(media, "" | "application/json" | "application/yaml" | "*/*") {
        return Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json, application/yaml (got {content_type:?})"
        )));
    }
    let value: Value = serde_json::from_slice(&req.body)
        .or_else(|_| serde_yaml::from_slice(&req.body))
        .map_err(|e| ApiError::bad_request(format!("the body of the request was in an unknown format: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request("the body of the request must be a JSON object"));
    }
    Ok(value)
}

/// Checks `kind`/`apiVersion` of a body against the target and fills them
/// in when absent.
pub(super) fn check_type(
    rt: &ResourceType,
    object: &mut Value,
    expect_kind: &str,
    expect_version: &str,
) -> ApiResult<()> {
    match object.get("apiVersion").and_then(Value::as_str) {
        Some(v) if v != expect_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expect_version})"
            )));
        }
        _ => object["apiVersion"] = json!(expect_version),
    }
    match object.get("kind").and_then(Value::as_str) {
        Some(k) if k != expect_kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({expect_kind}) for {}",
                rt.qualified_name()
            )));
        }
        _ => object["kind"] = json!(expect_kind),
    }
    Ok(())
}

/// Unknown-field handling, validation and normalisation for built-in
/// kinds. Unknown fields are dropped, as decoding into the API types does.
pub(super) fn check_schema(
    rt: &ResourceType,
    object: Value,
    fv: FieldValidation,
    warnings: &mut Vec<String>,
) -> ApiResult<Value> {
    let Some(kind) = rt.builtin else { return Ok(object) };
    let decoded = typed::decode(kind, &object).map_err(ApiError::bad_request)?;
    if !decoded.unknown.is_empty() {
        let list: Vec<String> = decoded.unknown.iter().map(|f| format!("unknown field \"{f}\"")).collect();
        match fv {
            FieldValidation::Strict => {
                return Err(ApiError::bad_request(format!("strict decoding error: {}", list.join(", "))));
            }
            FieldValidation::Warn => warnings.extend(list),
            FieldValidation::Ignore => {}
        }
    }
    Ok(decoded.object)
}
