//! `watch`: a chunked stream of newline-delimited watch events.
//!
//! Where it starts:
//! - no `resourceVersion`, or `"0"`: every current object as ADDED, then
//!   changes (with `sendInitialEvents=true`, followed by the BOOKMARK
//!   annotated `k8s.io/initial-events-end`);
//! - a version: the retained changes after it, then live ones; a version
//!   older than the retained history gets an ERROR event carrying a
//!   `410 Expired` Status, as the API server sends.
//!
//! With a selector, an object that stops matching is sent as DELETED and one
//! that starts matching as ADDED. Bookmarks (when asked for) carry the
//! version of the last change this watch has passed, whatever its type, so
//! resuming from one never skips a change. A change of a resource whose
//! watches are held ([`WatchHolds`]) waits for its release. The stream
//! ends after `timeoutSeconds`, when the client goes away, or when the
//! watch falls too far behind the change feed (the client then resumes
//! from its last version).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

use super::request::{Representation, Request};
use super::response::render;
use super::route::Target;
use super::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::faults::WatchHolds;
use crate::resources::ResourceType;
use crate::selectors::Selector;
use crate::store::{Change, ChangeKind, StoreError, Stored, WatchStart};

/// Everything a running watch needs to filter and encode events.
struct WatchSpec {
    rt: Arc<ResourceType>,
    namespace: Option<String>,
    selector: Selector,
    repr: Representation,
    bookmarks: bool,
    holds: WatchHolds,
}

impl WatchSpec {
    fn in_scope(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// The event type to send for a change, if any.
    fn event_type(&self, change: &Change) -> Option<&'static str> {
        let now = self.selector.matches(&change.object.attrs);
        let before = change.previous.as_deref().is_some_and(|p| self.selector.matches(p));
        match change.kind {
            ChangeKind::Added => now.then_some("ADDED"),
            ChangeKind::Deleted => before.then_some("DELETED"),
            ChangeKind::Modified => match (before, now) {
                (true, true) => Some("MODIFIED"),
                (false, true) => Some("ADDED"),
                (true, false) => Some("DELETED"),
                (false, false) => None,
            },
        }
    }

    fn line(&self, event_type: &str, object: &Stored) -> Bytes {
        let object = render(&self.rt, self.repr, &object.bytes);
        encode_line(event_type, &object)
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut object = json!({
            "kind": self.rt.kind,
            "apiVersion": self.rt.api_version(),
            "metadata": {"resourceVersion": rv.to_string()},
        });
        if initial_end {
            object["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        encode_line("BOOKMARK", object.to_string().as_bytes())
    }
}

fn encode_line(event_type: &str, object: &[u8]) -> Bytes {
    let mut line = BytesMut::with_capacity(object.len() + 32);
    line.put_slice(br#"{"type":""#);
    line.put_slice(event_type.as_bytes());
    line.put_slice(br#"","object":"#);
    line.put_slice(object);
    line.put_slice(b"}\n");
    line.freeze()
}

/// `GET` with `watch=true`.
pub fn watch(api: &Arc<Api>, req: &Request, target: &Target) -> ApiResult<Response> {
    let spec = WatchSpec {
        rt: target.rt.clone(),
        namespace: target.namespace.clone().filter(|_| target.rt.namespaced),
        selector: req.selector(&target.rt.kind)?,
        repr: req.representation()?,
        bookmarks: req.flag("allowWatchBookmarks"),
        holds: api.watch_holds.clone(),
    };
    let send_initial = req.flag("sendInitialEvents");
    let from = match req.param("resourceVersion").filter(|rv| !rv.is_empty() && *rv != "0") {
        Some(rv) => {
            Some(rv.parse::<u64>().map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?)
        }
        None => None,
    };
    if send_initial && (req.param("resourceVersionMatch") != Some("NotOlderThan") || !spec.bookmarks) {
        return Err(ApiError::invalid(
            &target.rt,
            "",
            &[(
                "FieldValueForbidden".into(),
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true".into(),
                "sendInitialEvents".into(),
            )],
        ));
    }
    let timeout = req
        .param("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(api.config.max_watch, Duration::from_secs);
    // With sendInitialEvents the watch starts from a snapshot even when a
    // version is given ("not older than" it).
    let start = api.store.watch(&target.key(), if send_initial { None } else { from });
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(256);
    match start {
        Err(StoreError::Expired { requested, oldest }) => {
            let status = ApiError::expired(format!("too old resource version: {requested} ({oldest})")).status();
            let line = encode_line("ERROR", status.to_string().as_bytes());
            tokio::spawn(async move {
                let _ = tx.send(Ok(line)).await;
            });
        }
        Err(e) => return Err(ApiError::internal(e.to_string())),
        Ok((start, changes)) => {
            let type_key = target.key();
            let interval = api.config.bookmark_interval;
            let mut epoch = api.watch_epoch.subscribe();
            tokio::spawn(async move {
                let run = stream(spec, type_key, start, changes, send_initial, interval, tx);
                // The stream ends at the timeout or when watches are
                // dropped; dropping the sender closes the response.
                tokio::select! {
                    _ = tokio::time::timeout(timeout, run) => {}
                    _ = epoch.changed() => {}
                }
            });
        }
    }
    let mut response = Response::new(Body::from_stream(ReceiverStream::new(rx)));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    Ok(response)
}

type Sender = mpsc::Sender<Result<Bytes, std::io::Error>>;

async fn stream(
    spec: WatchSpec,
    type_key: crate::store::TypeKey,
    start: WatchStart,
    mut changes: broadcast::Receiver<Arc<Change>>,
    send_initial: bool,
    bookmark_interval: Duration,
    tx: Sender,
) {
    // Version of the last change passed, of any type: safe to resume from.
    let mut passed = 0u64;
    match start {
        WatchStart::Snapshot(objects, rv) => {
            for (namespace, stored) in objects {
                let selected = spec.in_scope(&namespace) && spec.selector.matches(&stored.attrs);
                if selected && tx.send(Ok(spec.line("ADDED", &stored))).await.is_err() {
                    return;
                }
            }
            passed = rv;
            if send_initial && tx.send(Ok(spec.bookmark(rv, true))).await.is_err() {
                return;
            }
        }
        WatchStart::History(history) => {
            for change in history {
                passed = change.rv();
                if !send_change(&spec, &type_key, &change, &tx).await {
                    return;
                }
            }
        }
    }
    let mut ticker = tokio::time::interval(bookmark_interval);
    ticker.tick().await;
    loop {
        tokio::select! {
            received = changes.recv() => match received {
                Ok(change) => {
                    if change.rv() <= passed {
                        continue;
                    }
                    passed = change.rv();
                    if !send_change(&spec, &type_key, &change, &tx).await {
                        return;
                    }
                }
                // Fell behind the feed or the store is gone: end the watch;
                // the client resumes from its last version.
                Err(_) => return,
            },
            _ = ticker.tick(), if spec.bookmarks => {
                if tx.send(Ok(spec.bookmark(passed, false))).await.is_err() {
                    return;
                }
            }
            () = tx.closed() => return,
        }
    }
}

async fn send_change(spec: &WatchSpec, type_key: &crate::store::TypeKey, change: &Change, tx: &Sender) -> bool {
    if change.type_key != *type_key || !spec.in_scope(&change.namespace) {
        return true;
    }
    let Some(event_type) = spec.event_type(change) else { return true };
    tokio::select! {
        () = spec.holds.pass(&spec.rt.plural, change.rv()) => {}
        () = tx.closed() => return false,
    }
    tx.send(Ok(spec.line(event_type, &change.object))).await.is_ok()
}

/// The object of a watch event line, for tests.
#[cfg(test)]
fn parse_line(line: &[u8]) -> (String, serde_json::Value) {
    let v: serde_json::Value = serde_json::from_slice(line).unwrap();
    (v["type"].as_str().unwrap().to_owned(), v["object"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::{Attrs, LabelSelector};

    fn spec(selector: &str) -> WatchSpec {
        let registry = crate::resources::Registry::default();
        WatchSpec {
            rt: registry.builtin(crate::resources::Builtin::Pod),
            namespace: None,
            selector: Selector { labels: LabelSelector::parse(selector).unwrap(), ..Selector::default() },
            repr: Representation::Object,
            bookmarks: true,
            holds: WatchHolds::default(),
        }
    }

    fn change(kind: ChangeKind, before: Option<&str>, after: &str) -> Change {
        let attrs = |app: &str| Arc::new(Attrs::of(&json!({"metadata": {"labels": {"app": app}}})));
        Change {
            type_key: Arc::from("/pods"),
            namespace: "default".into(),
            name: "p".into(),
            kind,
            object: Stored { rv: 1, bytes: Bytes::from_static(b"{}"), attrs: attrs(after) },
            previous: before.map(attrs),
            writer: None,
        }
    }

    #[test]
    fn selector_transitions_become_added_and_deleted() {
        let s = spec("app=web");
        assert_eq!(s.event_type(&change(ChangeKind::Modified, Some("web"), "web")), Some("MODIFIED"));
        assert_eq!(s.event_type(&change(ChangeKind::Modified, Some("db"), "web")), Some("ADDED"));
        assert_eq!(s.event_type(&change(ChangeKind::Modified, Some("web"), "db")), Some("DELETED"));
        assert_eq!(s.event_type(&change(ChangeKind::Modified, Some("db"), "db")), None);
        assert_eq!(s.event_type(&change(ChangeKind::Added, None, "db")), None);
        assert_eq!(s.event_type(&change(ChangeKind::Deleted, Some("web"), "web")), Some("DELETED"));
    }

    #[test]
    fn bookmarks_carry_the_version_and_the_initial_events_marker() {
        let (ty, object) = parse_line(&spec("").bookmark(17, true));
        assert_eq!(ty, "BOOKMARK");
        assert_eq!(object["metadata"]["resourceVersion"], "17");
        assert_eq!(object["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
        assert_eq!(object["kind"], "Pod");
    }
}
