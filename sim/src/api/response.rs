//! Answers: JSON responses, `Warning` headers, and objects rendered in the
//! representation the client asked for (as stored, metadata-only, or as a
//! server-side printed Table).

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use super::request::Representation;
use crate::object::resource_version;
use crate::resources::ResourceType;
use crate::table;

/// A JSON response.
pub fn json_response(code: StatusCode, value: &Value) -> Response {
    bytes_response(code, Bytes::from(value.to_string()))
}

/// A response whose body is already-encoded JSON.
pub fn bytes_response(code: StatusCode, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `response` with one `Warning: 299` header per warning.
pub fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        let text = format!("299 - \"{}\"", w.replace('"', "\\\""));
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// The `List` kind name of a type (`PodList`).
pub fn list_kind(rt: &ResourceType) -> String {
    format!("{}List", rt.kind)
}

/// The metadata-only form of an object.
pub fn partial_metadata(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// An object rendered for the client: the stored bytes as they are, or
/// transformed.
pub fn render(rt: &ResourceType, repr: Representation, bytes: &Bytes) -> Bytes {
    match repr {
        Representation::Object => bytes.clone(),
        Representation::Metadata => {
            let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            Bytes::from(partial_metadata(&value).to_string())
        }
        Representation::Table(include) => {
            let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            let meta = json!({"resourceVersion": resource_version(&value)});
            let t = table::table(rt.builtin, &[value], include, jiff::Timestamp::now(), meta);
            Bytes::from(t.to_string())
        }
    }
}
