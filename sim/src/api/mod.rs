//! The Kubernetes REST API over the store: the request pipeline (route,
//! fault injection, dispatch to a verb, stats) and the parts it is made of.
//!
//! A request path is parsed into a `Route` (`route.rs`); resource requests
//! become a [`Target`] (type, namespace, name, subresource) plus a verb, and
//! go to `read.rs` (get, list), `watch.rs`, `write.rs` (create, update,
//! patch) or `delete.rs`. Request bodies are decoded in `body.rs`, answers
//! and the representations of objects built in `response.rs` (the Scale
//! view in `scale.rs`), and what an object becomes on a write is
//! `crate::strategy`'s. Discovery and OpenAPI documents are in
//! `discovery.rs` and `crate::openapi`. Every answer that is not a success
//! is an [`ApiError`](crate::error::ApiError), serialised as a `Status`.
//!
//! This file only dispatches: the modules it names never import it.

mod body;
mod delete;
mod discovery;
mod identity;
mod read;
mod request;
mod response;
mod route;
mod scale;
mod snapshots;
pub(crate) mod state;
mod watch;
mod write;

use std::sync::Arc;

use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::error::{ApiError, ApiResult};
use crate::faults::RequestKind;
use crate::writer::{Writer, written_by};
use response::{bytes_response, json_response};
use route::{Route, route};

pub use discovery::KUBERNETES_VERSION;
pub use request::{Representation, Request};
pub use route::Target;
pub use state::{Api, ApiConfig};

/// Answers one HTTP request to the Kubernetes API paths.
pub async fn handle(api: Arc<Api>, req: Request) -> Response {
    let route = match route(&api.registry, &req.path) {
        Ok(route) => route,
        Err(e) => return e.into_response(),
    };
    let kind = request_kind(&req, &route);
    if let Some(err) = api.faults.inject(&kind.verb, &kind.resource).await {
        api.stats.record(&kind, err.code);
        return err.into_response();
    }
    let writer = Arc::new(Writer { user: kind.user.clone(), user_agent: kind.user_agent.clone() });
    let response = match written_by(writer, dispatch(&api, &req, route, &kind.verb)).await {
        Ok(response) => response,
        Err(err) => err.into_response(),
    };
    api.stats.record(&kind, response.status().as_u16());
    response
}

/// The header naming the user a request acts as (kubectl's `--as`, a
/// kubeconfig's `as:`).
const IMPERSONATE_USER: &str = "impersonate-user";

/// Who asked for what, as stats and fault rules see a request.
fn request_kind(req: &Request, route: &Route) -> RequestKind {
    let text = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let (user_agent, user) = (text(header::USER_AGENT.as_str()), text(IMPERSONATE_USER));
    let (verb, resource) = verb_and_resource(req, route);
    let (group, namespace) = match route {
        Route::Resource(t) => (t.rt.group.clone(), t.namespace.clone().unwrap_or_default()),
        _ => (String::new(), String::new()),
    };
    RequestKind { user_agent, user, verb, group, resource, namespace }
}

fn verb_and_resource(req: &Request, route: &Route) -> (String, String) {
    let Route::Resource(t) = route else {
        return (req.method.as_str().to_lowercase(), req.path.clone());
    };
    let verb = match (&req.method, t.name.is_some()) {
        (&Method::GET, false) if req.flag("watch") => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, false) => "deletecollection",
        (&Method::DELETE, true) => "delete",
        (m, _) => return (m.as_str().to_lowercase(), t.resource_label()),
    };
    (verb.to_owned(), t.resource_label())
}

async fn dispatch(api: &Arc<Api>, req: &Request, route: Route, verb: &str) -> ApiResult<Response> {
    match route {
        Route::Version => Ok(json_response(StatusCode::OK, &discovery::version())),
        Route::Health => Ok((StatusCode::OK, "ok").into_response()),
        Route::CoreVersions => Ok(json_response(StatusCode::OK, &discovery::core_versions())),
        Route::Groups => Ok(json_response(StatusCode::OK, &discovery::groups(&api.registry))),
        Route::Group(g) => discovery::group(&api.registry, &g).map(|v| json_response(StatusCode::OK, &v)),
        Route::GroupVersion(g, v) => {
            discovery::resources(&api.registry, &g, &v).map(|v| json_response(StatusCode::OK, &v))
        }
        Route::OpenApiIndex => {
            let api = api.clone();
            let bytes = tokio::task::spawn_blocking(move || Bytes::copy_from_slice(api.openapi().index()))
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?;
            Ok(bytes_response(StatusCode::OK, bytes))
        }
        Route::OpenApiDoc(path) => {
            let api = api.clone();
            let doc =
                tokio::task::spawn_blocking(move || api.openapi().group_version(&path).map(Bytes::copy_from_slice))
                    .await
                    .map_err(|e| ApiError::internal(e.to_string()))?;
            doc.map(|b| bytes_response(StatusCode::OK, b)).ok_or_else(|| ApiError::no_route(&req.path))
        }
        Route::Resource(target) if target.sub.is_none() && !target.rt.serves(verb) => {
            Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({} {})",
                req.method, req.path
            )))
        }
        Route::Resource(target) => match verb {
            "get" => read::get(api, req, &target),
            "list" => read::list(api, req, &target),
            "watch" => watch::watch(api, req, &target),
            "create" if target.name.is_none() => write::create(api, req, &target).await,
            "update" if target.name.is_some() => write::update(api, req, &target),
            "patch" if target.name.is_some() => write::patch(api, req, &target),
            "delete" if target.sub.is_none() => delete::delete(api, req, &target),
            "deletecollection" => delete::delete_collection(api, req, &target),
            _ => Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({} {})",
                req.method, req.path
            ))),
        },
    }
}
