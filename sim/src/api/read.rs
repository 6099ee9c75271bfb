//! `get` and `list`.
//!
//! Lists are assembled from the stored bytes without re-encoding objects.
//! Pagination (`limit`/`continue`) pages through the current state in
//! (namespace, name) order; the list's resourceVersion is the one of the
//! first page, so a watch started from it replays every change made while
//! the pages were read (an informer applies them idempotently). A
//! `continue` token whose version has been compacted away gets `410 Gone`,
//! as etcd's compaction causes on a real cluster.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};

use super::meta::{self, render};
use super::{Api, ApiError, ApiResult, Representation, Request, Target, bytes_response, json_response};
use crate::resources::Subresource;
use crate::table;

/// `GET` of one object (or its status or scale).
pub fn get(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let name = target.name.as_deref().unwrap_or("");
    let stored =
        api.store.get(&target.key(), target.ns(), name).ok_or_else(|| ApiError::not_found(&target.rt, name))?;
    if target.sub == Some(Subresource::Scale) {
        return Ok(json_response(StatusCode::OK, &meta::scale_of(&stored.value())));
    }
    let repr = req.representation()?;
    Ok(bytes_response(StatusCode::OK, render(&target.rt, repr, &stored.bytes)))
}

/// A position in a paginated list.
struct ContinueToken {
    rv: u64,
    after: (String, String),
}

impl ContinueToken {
    fn encode(&self) -> String {
        let text = json!({"rv": self.rv, "ns": self.after.0, "name": self.after.1}).to_string();
        text.bytes().fold(String::with_capacity(text.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
    }

    fn decode(token: &str) -> Option<ContinueToken> {
        let bytes: Option<Vec<u8>> = (0..token.len())
            .step_by(2)
            .map(|i| token.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
            .collect();
        let value: Value = serde_json::from_slice(&bytes?).ok()?;
        Some(ContinueToken {
            rv: value.get("rv")?.as_u64()?,
            after: (value.get("ns")?.as_str()?.to_owned(), value.get("name")?.as_str()?.to_owned()),
        })
    }
}

/// `GET` of a collection.
pub fn list(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let repr = req.representation()?;
    let selector = req.selector(&target.rt.kind)?;
    let limit = match req.param("limit") {
        Some(l) => l.parse::<usize>().map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?,
        None => 0,
    };
    let token = match req.param("continue").filter(|c| !c.is_empty()) {
        Some(c) => {
            let token = ContinueToken::decode(c).ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            if !api.store.resumable(token.rv) {
                return Err(ApiError::expired(
                    "The provided continue parameter is too old to display a consistent list result. \
                     You can start a new list without the continue parameter.",
                ));
            }
            Some(token)
        }
        None => None,
    };
    if req.param("resourceVersionMatch") == Some("Exact") {
        let current = api.store.current_rv().to_string();
        if req.param("resourceVersion") != Some(current.as_str()) {
            return Err(ApiError::expired("kube-sim serves lists only at the current resourceVersion"));
        }
    }
    let namespace = target.namespace.as_deref().filter(|_| target.rt.namespaced);
    let (items, rv) = api.store.list(&target.key(), namespace, token.as_ref().map(|t| &t.after));
    let list_rv = token.as_ref().map_or(rv, |t| t.rv);
    let mut selected = Vec::new();
    let mut next = None;
    let mut remaining = 0usize;
    for (key, stored) in items {
        if !selector.matches(&stored.attrs) {
            continue;
        }
        if limit > 0 && selected.len() == limit {
            if next.is_none() {
                next = selected.last().map(|(k, _): &((String, String), _)| k.clone());
            }
            remaining += 1;
            continue;
        }
        selected.push((key, stored));
    }
    let mut list_meta = json!({"resourceVersion": list_rv.to_string()});
    if let Some(after) = next {
        list_meta["continue"] = json!(ContinueToken { rv: list_rv, after }.encode());
        // Unknown (left unset) when a selector filters the list, as upstream.
        if selector.is_empty() {
            list_meta["remainingItemCount"] = json!(remaining);
        }
    }
    match repr {
        Representation::Table(include) => {
            let objects: Vec<Value> = selected.iter().map(|(_, s)| s.value()).collect();
            let t = table::table(target.rt.builtin, &objects, include, jiff::Timestamp::now(), list_meta);
            Ok(json_response(StatusCode::OK, &t))
        }
        Representation::Object | Representation::Metadata => {
            let (kind, api_version) = if repr == Representation::Metadata {
                ("PartialObjectMetadataList".to_owned(), "meta.k8s.io/v1".to_owned())
            } else {
                (meta::list_kind(&target.rt), target.rt.api_version())
            };
            let mut body =
                BytesMut::with_capacity(selected.iter().map(|(_, s)| s.bytes.len() + 1).sum::<usize>() + 256);
            body.put_slice(
                format!(r#"{{"kind":"{kind}","apiVersion":"{api_version}","metadata":{list_meta},"items":["#)
                    .as_bytes(),
            );
            for (i, (_, stored)) in selected.iter().enumerate() {
                if i > 0 {
                    body.put_u8(b',');
                }
                body.put_slice(&render(&target.rt, repr, &stored.bytes));
            }
            body.put_slice(b"]}");
            Ok(bytes_response(StatusCode::OK, Bytes::from(body)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let token = ContinueToken { rv: 42, after: ("ns".into(), "pod-7".into()) };
        let back = ContinueToken::decode(&token.encode()).unwrap();
        assert_eq!((back.rv, back.after), (42, ("ns".to_owned(), "pod-7".to_owned())));
        assert!(ContinueToken::decode("zz").is_none());
    }
}
