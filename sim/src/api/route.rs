//! Routing: a request path parsed into what it names (a discovery or
//! OpenAPI document, a health check, or a resource [`Target`]: type,
//! namespace, name and subresource), as the API server's mux does.

use std::sync::Arc;

use super::state::Api;
use crate::error::{ApiError, ApiResult};
use crate::resources::{Registry, ResourceType, Subresource};
use crate::store::TypeKey;

/// What a path names.
#[derive(Debug)]
pub(super) enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    GroupVersion(String, String),
    OpenApiIndex,
    OpenApiDoc(String),
    Health,
    Resource(Target),
}

/// The object or collection a resource request names.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its type.
    pub rt: Arc<ResourceType>,
    /// The namespace in the path, for namespaced types.
    pub namespace: Option<String>,
    /// The object's name; `None` for the collection.
    pub name: Option<String>,
    /// The subresource, if any.
    pub sub: Option<Subresource>,
}

impl Target {
    /// The namespace for store keys ("" for cluster-scoped types).
    pub fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    /// The store key of the type.
    pub fn key(&self) -> TypeKey {
        Api::type_key(&self.rt)
    }

    /// The verb and resource names used in stats and fault matching.
    pub(super) fn resource_label(&self) -> String {
        match self.sub {
            Some(sub) => format!("{}/{}", self.rt.plural, sub.segment()),
            None => self.rt.plural.clone(),
        }
    }
}

pub(super) fn route(registry: &Registry, path: &str) -> ApiResult<Route> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Ok(Route::Version),
        ["healthz" | "livez" | "readyz"] => Ok(Route::Health),
        ["api"] => Ok(Route::CoreVersions),
        ["apis"] => Ok(Route::Groups),
        ["openapi", "v3"] => Ok(Route::OpenApiIndex),
        ["openapi", "v3", rest @ ..] => Ok(Route::OpenApiDoc(rest.join("/"))),
        ["api", "v1"] => Ok(Route::GroupVersion(String::new(), "v1".into())),
        ["apis", group] => Ok(Route::Group((*group).to_owned())),
        ["apis", group, version] => Ok(Route::GroupVersion((*group).to_owned(), (*version).to_owned())),
        ["api", "v1", rest @ ..] => resource_route(registry, "", "v1", rest, path),
        ["apis", group, version, rest @ ..] => resource_route(registry, group, version, rest, path),
        _ => Err(ApiError::no_route(path)),
    }
}

fn resource_route(registry: &Registry, group: &str, version: &str, rest: &[&str], path: &str) -> ApiResult<Route> {
    let find = |plural: &str| registry.find(group, version, plural).ok_or_else(|| ApiError::no_route(path));
    let namespaced_type = |plural: &str| registry.find(group, version, plural).filter(|t| t.namespaced);
    let sub = |seg: &str, rt: &ResourceType| {
        Subresource::from_segment(seg).filter(|s| rt.has(*s)).ok_or_else(|| ApiError::no_route(path))
    };
    let target = |rt: Arc<ResourceType>, namespace: Option<&str>, name: Option<&str>, sub: Option<Subresource>| {
        Ok(Route::Resource(Target { rt, namespace: namespace.map(str::to_owned), name: name.map(str::to_owned), sub }))
    };
    match rest {
        ["namespaces", ns, plural, tail @ ..] if namespaced_type(plural).is_some() => {
            let rt = find(plural)?;
            match tail {
                [] => target(rt, Some(ns), None, None),
                [name] => target(rt, Some(ns), Some(name), None),
                [name, s] => {
                    let s = sub(s, &rt)?;
                    target(rt, Some(ns), Some(name), Some(s))
                }
                _ => Err(ApiError::no_route(path)),
            }
        }
        [plural] => target(find(plural)?, None, None, None),
        [plural, name] => {
            let rt = find(plural)?;
            if rt.namespaced {
                return Err(ApiError::no_route(path));
            }
            target(rt, None, Some(name), None)
        }
        [plural, name, s] => {
            let rt = find(plural)?;
            if rt.namespaced {
                return Err(ApiError::no_route(path));
            }
            let s = sub(s, &rt)?;
            target(rt, None, Some(name), Some(s))
        }
        _ => Err(ApiError::no_route(path)),
    }
}
