//! Errors as the API server reports them: `meta.k8s.io/v1` `Status`
//! objects with a `reason` and an HTTP `code`.
//!
//! A leaf: every part of kube-sim that can refuse a request (the verbs,
//! admission, injected faults) builds an [`ApiError`] here, and this module
//! needs nothing but the served types' names from `resources`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::resources::ResourceType;

/// One failed request, as the client will see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason` (`NotFound`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// `Status.details`, when the API server fills them.
    pub details: Option<Value>,
    /// Seconds for the `Retry-After` header.
    pub retry_after: Option<u64>,
}

/// Shorthand for results of request handlers.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError { code, reason, message: message.into(), details: None, retry_after: None }
    }

    fn with_details(mut self, rt: &ResourceType, name: &str) -> Self {
        let mut details = json!({"kind": rt.plural});
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        if !rt.group.is_empty() {
            details["group"] = json!(rt.group);
        }
        self.details = Some(details);
        self
    }

    /// 404: the object does not exist.
    pub fn not_found(rt: &ResourceType, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", rt.qualified_name())).with_details(rt, name)
    }

    /// 404 for a path that names nothing served.
    pub fn no_route(path: &str) -> Self {
        Self::new(404, "NotFound", format!("the server could not find the requested resource ({path})"))
    }

    /// 409: the name is taken.
    pub fn already_exists(rt: &ResourceType, name: &str) -> Self {
        Self::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", rt.qualified_name()))
            .with_details(rt, name)
    }

    /// 409: the name is taken, and the object asked for a generated one
    /// (`metadata.generateName` set, whether or not it also named itself,
    /// as a StatefulSet's pods do): upstream's `NewGenerateNameConflict`,
    /// which asks the client to retry after a second.
    pub fn generate_name_conflict(rt: &ResourceType, name: &str) -> Self {
        let message = format!(
            "{} \"{name}\" already exists, the server was not able to generate a unique name for the object",
            rt.qualified_name()
        );
        let mut err = Self::new(409, "AlreadyExists", message).with_details(rt, name);
        if let Some(details) = err.details.as_mut() {
            details["retryAfterSeconds"] = json!(1);
        }
        err.retry_after = Some(1);
        err
    }

    /// 409: optimistic concurrency failure.
    pub fn conflict(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {} \"{name}\": {why}", rt.qualified_name()),
        )
        .with_details(rt, name)
    }

    /// 422: the object is invalid; `causes` are (reason, message, field).
    pub fn invalid(rt: &ResourceType, name: &str, causes: &[(String, String, String)]) -> Self {
        let summary: Vec<String> = causes.iter().map(|(_, m, f)| format!("{f}: {m}")).collect();
        let summary = match summary.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let group_kind = if rt.group.is_empty() { rt.kind.clone() } else { format!("{}.{}", rt.kind, rt.group) };
        let mut err =
            Self::new(422, "Invalid", format!("{group_kind} \"{name}\" is invalid: {summary}")).with_details(rt, name);
        if let Some(details) = err.details.as_mut() {
            details["kind"] = json!(rt.kind);
            details["causes"] = causes
                .iter()
                .map(|(reason, message, field)| json!({"reason": reason, "message": message, "field": field}))
                .collect();
        }
        err
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 403: refused, e.g. a create in a terminating namespace.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 403 from admission about one object (`apierrors.NewForbidden`):
    /// `<resource> "<name>" is forbidden: <why>`, with the object in the
    /// details.
    pub fn forbidden_object(rt: &ResourceType, name: &str, why: &str) -> Self {
        let message = match name {
            "" => format!("{} is forbidden: {why}", rt.qualified_name()),
            name => format!("{} \"{name}\" is forbidden: {why}", rt.qualified_name()),
        };
        Self::forbidden(message).with_details(rt, name)
    }

    /// 405: the verb is not supported on this path.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 406: no acceptable representation.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", message)
    }

    /// 410: the requested resourceVersion has been compacted away.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415: unsupported request body type.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 500: an injected or internal failure.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 429: an injected throttle, with Retry-After.
    pub fn too_many_requests(retry_after: u64) -> Self {
        let mut err = Self::new(
            429,
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later",
        );
        err.retry_after = Some(retry_after);
        err.details = Some(json!({"retryAfterSeconds": retry_after}));
        err
    }

    /// The `Status` object.
    pub fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (code, axum::Json(self.status())).into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
