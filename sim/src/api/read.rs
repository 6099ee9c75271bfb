//! `get` and `list`.
//!
//! Lists are assembled from the stored bytes without re-encoding objects.
//! Pagination (`limit`/`continue`) serves every page from the state at the
//! first page's resourceVersion (see `snapshots.rs`), in (namespace, name)
//! order, so a watch started from the list's version sees exactly the
//! changes made after it. A `continue` token whose version has been
//! compacted away, or whose snapshot is gone, gets `410 Expired`.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};

use super::request::{Representation, Request};
use super::response::{bytes_response, json_response, list_kind, render};
use super::route::Target;
use super::scale::scale_of;
use super::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::resources::Subresource;
use crate::table;

/// `GET` of one object (or its status or scale).
pub fn get(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let name = target.name.as_deref().unwrap_or("");
    let stored =
        api.store.get(&target.key(), target.ns(), name).ok_or_else(|| ApiError::not_found(&target.rt, name))?;
    if target.sub == Some(Subresource::Scale) {
        return Ok(json_response(StatusCode::OK, &scale_of(&stored.value())));
    }
    let repr = req.representation()?;
    Ok(bytes_response(StatusCode::OK, render(&target.rt, repr, &stored.bytes)))
}

/// A position in a paginated list: its version, its snapshot, and the
/// index of the next item.
struct ContinueToken {
    rv: u64,
    snapshot: u64,
    offset: usize,
}

impl ContinueToken {
    fn encode(&self) -> String {
        let text = json!({"rv": self.rv, "snapshot": self.snapshot, "offset": self.offset}).to_string();
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
            snapshot: value.get("snapshot")?.as_u64()?,
            offset: usize::try_from(value.get("offset")?.as_u64()?).ok()?,
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
    let too_old = || {
        ApiError::expired(
            "The provided continue parameter is too old to display a consistent list result. \
             You can start a new list without the continue parameter.",
        )
    };
    let token = match req.param("continue").filter(|c| !c.is_empty()) {
        Some(c) => {
            let token = ContinueToken::decode(c).ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            if !api.store.resumable(token.rv) {
                return Err(too_old());
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
    let (list_rv, items, start, snapshot) = match &token {
        Some(t) => {
            let items = api.snapshots.get(t.snapshot, t.rv).ok_or_else(too_old)?;
            (t.rv, items, t.offset, Some(t.snapshot))
        }
        None => {
            let namespace = target.namespace.as_deref().filter(|_| target.rt.namespaced);
            let (all, rv) = api.store.list(&target.key(), namespace);
            let selected: Vec<_> = all.into_iter().filter(|(_, s)| selector.matches(&s.attrs)).collect();
            (rv, Arc::new(selected), 0, None)
        }
    };
    let start = start.min(items.len());
    let end = if limit > 0 { (start + limit).min(items.len()) } else { items.len() };
    let selected = &items[start..end];
    let mut list_meta = json!({"resourceVersion": list_rv.to_string()});
    if end < items.len() {
        let id = snapshot.unwrap_or_else(|| api.snapshots.keep(list_rv, items.clone()));
        list_meta["continue"] = json!(ContinueToken { rv: list_rv, snapshot: id, offset: end }.encode());
        // Unknown (left unset) when a selector filters the list, as upstream.
        if selector.is_empty() {
            list_meta["remainingItemCount"] = json!(items.len() - end);
        }
    } else if let Some(id) = snapshot {
        api.snapshots.finish(id);
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
                (list_kind(&target.rt), target.rt.api_version())
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
        let token = ContinueToken { rv: 42, snapshot: 3, offset: 500 };
        let back = ContinueToken::decode(&token.encode()).unwrap();
        assert_eq!((back.rv, back.snapshot, back.offset), (42, 3, 500));
        assert!(ContinueToken::decode("zz").is_none());
    }
}
