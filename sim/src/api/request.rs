//! The parts of an HTTP request the handlers read, with the query
//! parameters every verb shares (selectors, flags) and the content
//! negotiation of `Accept` into a [`Representation`].

use std::collections::HashMap;

use axum::http::{HeaderMap, Method, header};
use bytes::Bytes;

use crate::error::{ApiError, ApiResult};
use crate::selectors::{FieldSelector, LabelSelector, Selector};
use crate::table::IncludeObject;

/// The parts of an HTTP request the handlers read.
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// Path without the query.
    pub path: String,
    /// Query parameters (last value wins).
    pub query: HashMap<String, String>,
    /// Request headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl Request {
    /// A query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }

    /// Whether a boolean query parameter is set (`true` or `1`).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.param(name), Some("true" | "1"))
    }

    /// Label and field selectors of a list, watch or deletecollection.
    pub fn selector(&self, kind: &str) -> ApiResult<Selector> {
        let labels = LabelSelector::parse(self.param("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse(self.param("fieldSelector").unwrap_or(""), kind)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Selector { labels, fields })
    }

    /// How the client wants objects rendered, from `Accept`.
    pub fn representation(&self) -> ApiResult<Representation> {
        let accept = self.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
        if accept.is_empty() {
            return Ok(Representation::Object);
        }
        for choice in accept.split(',') {
            let mut parts = choice.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            if !matches!(media, "application/json" | "application/*" | "*/*" | "application/yaml") {
                continue;
            }
            let params: HashMap<&str, &str> = parts.filter_map(|p| p.split_once('=')).collect();
            match (params.get("as").copied(), params.get("g").copied(), params.get("v").copied()) {
                (None, _, _) => return Ok(Representation::Object),
                (Some("Table"), Some("meta.k8s.io"), Some("v1")) => {
                    let include = IncludeObject::parse(self.param("includeObject").unwrap_or(""))
                        .map_err(|e| ApiError::bad_request(e.to_string()))?;
                    return Ok(Representation::Table(include));
                }
                (Some("PartialObjectMetadata" | "PartialObjectMetadataList"), Some("meta.k8s.io"), Some("v1")) => {
                    return Ok(Representation::Metadata);
                }
                _ => continue,
            }
        }
        Err(ApiError::not_acceptable(format!(
            "only the following media types are accepted: application/json, application/yaml (asked: {accept})"
        )))
    }
}

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// As stored.
    Object,
    /// As a `meta.k8s.io/v1` Table (server-side printing).
    Table(IncludeObject),
    /// As `PartialObjectMetadata` (metadata-only informers).
    Metadata,
}
