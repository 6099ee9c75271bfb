//! The `paths` of a document: one path per resource, collection and
//! subresource, with the operations, parameters, media types and GVK
//! extensions the real API server lists for each.

use serde_json::{Map, Value, json};

use crate::resources::{Builtin, ResourceType, Subresource};

use super::naming::{article, operation_gv, tag, to_operation_id};
use super::parameters::{
    DELETE_COLLECTION_PARAMS, DELETE_PARAMS, LIST_PARAMS, PATCH_PARAMS, WRITE_PARAMS, path_param, query_param,
};
use super::schemas::{MetaNames, REF_PREFIX, gvk};

/// Media types the built-in types are served in.
const BUILTIN_MEDIA: &[&str] = &["application/json", "application/vnd.kubernetes.protobuf", "application/yaml"];

/// Media types a built-in list (or watch) is served in.
const BUILTIN_LIST_MEDIA: &[&str] = &[
    "application/json",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/yaml",
];

/// Media types a custom resource is served in.
const CUSTOM_MEDIA: &[&str] = &["application/json", "application/yaml"];

/// Media types a custom resource list (or watch) is served in.
const CUSTOM_LIST_MEDIA: &[&str] = &["application/json", "application/json;stream=watch", "application/yaml"];

/// Request body media types of every PATCH operation.
pub(super) const PATCH_MEDIA: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// The path item of the group-version root (`/apis/apps/v1/`): discovery's
/// resource list.
pub(super) fn resources_path(group: &str, version: &str, names: &MetaNames) -> Value {
    json!({
        "get": {
            "description": "get available resources",
            "operationId": format!("get{}APIResources", operation_gv(group, version)),
            "responses": { "200": response("OK", &names.resource_list, BUILTIN_MEDIA) },
            "tags": [tag(group, version)],
        },
    })
}

/// One operation kind, named as in `x-kubernetes-action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// `GET` on a collection.
    List,
    /// `POST` on a collection.
    Post,
    /// `DELETE` on a collection.
    DeleteCollection,
    /// `GET` on an object.
    Get,
    /// `PUT` on an object.
    Put,
    /// `PATCH` on an object.
    Patch,
    /// `DELETE` on an object.
    Delete,
}

impl Action {
    /// The HTTP method, lower-case as OpenAPI path items key it.
    fn method(self) -> &'static str {
        match self {
            Action::List | Action::Get => "get",
            Action::Post => "post",
            Action::DeleteCollection | Action::Delete => "delete",
            Action::Put => "put",
            Action::Patch => "patch",
        }
    }

    /// The `x-kubernetes-action` value.
    fn name(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Post => "post",
            Action::DeleteCollection => "deletecollection",
            Action::Get => "get",
            Action::Put => "put",
            Action::Patch => "patch",
            Action::Delete => "delete",
        }
    }

    /// The verb an operation id starts with.
    fn verb(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Post => "create",
            Action::DeleteCollection | Action::Delete => "delete",
            Action::Get => "read",
            Action::Put => "replace",
            Action::Patch => "patch",
        }
    }

    /// The operation's own query parameters.
    fn params(self) -> &'static [&'static str] {
        match self {
            Action::List => LIST_PARAMS,
            Action::Post | Action::Put => WRITE_PARAMS,
            Action::DeleteCollection => DELETE_COLLECTION_PARAMS,
            Action::Get => &[],
            Action::Patch => PATCH_PARAMS,
            Action::Delete => DELETE_PARAMS,
        }
    }
}

/// Which path an operation is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The collection in one namespace (or the cluster, for cluster-scoped
    /// types).
    Collection,
    /// The collection across all namespaces (namespaced types only).
    AllNamespaces,
    /// One object, or one of its subresources.
    Object(Option<Subresource>),
}

/// Builds the paths of one resource type.
pub(super) struct Operations<'a> {
    /// The type.
    pub(super) rt: &'a ResourceType,
    /// Its definition name.
    pub(super) object: &'a str,
    /// Its list's definition name.
    pub(super) list: &'a str,
    /// The `Scale` definition name, when some type has `/scale`.
    pub(super) scale: Option<&'a str>,
    /// The meta definitions.
    pub(super) meta: &'a MetaNames,
}

impl Operations<'_> {
    /// Inserts every path of the type into `paths`.
    pub(super) fn add_paths(&self, paths: &mut Map<String, Value>) {
        use Action::{Delete, DeleteCollection, Get, List, Patch, Post, Put};
        let collection = self.rt.collection_path(Some("{namespace}"));
        let object = format!("{collection}/{{name}}");
        paths.insert(collection, self.path_item(Target::Collection, &[List, Post, DeleteCollection]));
        paths.insert(object.clone(), self.path_item(Target::Object(None), &[Get, Put, Patch, Delete]));
        if self.rt.namespaced {
            paths.insert(self.rt.collection_path(None), self.path_item(Target::AllNamespaces, &[List]));
        }
        for &sub in &self.rt.subresources {
            let actions: &[Action] = match sub {
                Subresource::Status | Subresource::Scale => &[Get, Put, Patch],
                Subresource::Finalize => &[Put],
            };
            paths.insert(format!("{object}/{}", sub.segment()), self.path_item(Target::Object(Some(sub)), actions));
        }
    }

    /// One path item: its operations plus the parameters they share.
    fn path_item(&self, target: Target, actions: &[Action]) -> Value {
        let mut item = Map::new();
        for &action in actions {
            item.insert(action.method().to_owned(), self.operation(target, action));
        }
        let mut params = Vec::new();
        if let Target::Object(sub) = target {
            let kind = match sub {
                Some(Subresource::Scale) => "Scale",
                _ => self.rt.kind.as_str(),
            };
            params.push(path_param("name", &format!("name of the {kind}")));
        }
        if self.rt.namespaced && target != Target::AllNamespaces {
            params.push(path_param("namespace", "object name and auth scope, such as for teams and projects"));
        }
        params.push(query_param("pretty"));
        item.insert("parameters".to_owned(), Value::Array(params));
        Value::Object(item)
    }

    /// One operation.
    fn operation(&self, target: Target, action: Action) -> Value {
        let rt = self.rt;
        let sub = match target {
            Target::Object(sub) => sub,
            _ => None,
        };
        let is_scale = sub == Some(Subresource::Scale);
        let object = match (is_scale, self.scale) {
            (true, Some(scale)) => scale,
            _ => self.object,
        };
        let builtin = rt.builtin.is_some();
        let (media, list_media) =
            if builtin { (BUILTIN_MEDIA, BUILTIN_LIST_MEDIA) } else { (CUSTOM_MEDIA, CUSTOM_LIST_MEDIA) };

        let mut responses = Map::new();
        let mut body = None;
        match action {
            Action::List => {
                responses.insert("200".to_owned(), response("OK", self.list, list_media));
            }
            Action::Post => {
                for (code, text) in [("200", "OK"), ("201", "Created"), ("202", "Accepted")] {
                    responses.insert(code.to_owned(), response(text, object, media));
                }
                body = Some(request_body(&["application/json"], object));
            }
            Action::Get => {
                responses.insert("200".to_owned(), response("OK", object, media));
            }
            Action::Put | Action::Patch => {
                for (code, text) in [("200", "OK"), ("201", "Created")] {
                    responses.insert(code.to_owned(), response(text, object, media));
                }
                body = Some(if action == Action::Patch {
                    request_body(PATCH_MEDIA, &self.meta.patch)
                } else {
                    request_body(&["application/json"], object)
                });
            }
            Action::DeleteCollection => {
                responses.insert("200".to_owned(), response("OK", &self.meta.status, media));
                body = Some(request_body(&["application/json"], &self.meta.delete_options));
            }
            Action::Delete => {
                // Pods and Services answer a delete with the object.
                let answer = match rt.builtin {
                    Some(Builtin::Pod | Builtin::Service) => object,
                    _ => self.meta.status.as_str(),
                };
                for (code, text) in [("200", "OK"), ("202", "Accepted")] {
                    responses.insert(code.to_owned(), response(text, answer, media));
                }
                body = Some(request_body(&["application/json"], &self.meta.delete_options));
            }
        }

        let (group, version, kind) = if is_scale {
            ("autoscaling", "v1", "Scale")
        } else {
            (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str())
        };
        let mut op = Map::new();
        op.insert("description".to_owned(), json!(self.description(action, sub)));
        op.insert("operationId".to_owned(), json!(self.operation_id(target, action)));
        let params: Vec<Value> = action.params().iter().map(|p| query_param(p)).collect();
        if !params.is_empty() {
            op.insert("parameters".to_owned(), Value::Array(params));
        }
        if let Some(body) = body {
            op.insert("requestBody".to_owned(), body);
        }
        op.insert("responses".to_owned(), Value::Object(responses));
        op.insert("tags".to_owned(), json!([tag(&rt.group, &rt.version)]));
        op.insert("x-kubernetes-action".to_owned(), json!(action.name()));
        op.insert("x-kubernetes-group-version-kind".to_owned(), gvk(group, version, kind));
        Value::Object(op)
    }

    /// The upstream operation description (`read status of the specified
    /// Deployment`).
    fn description(&self, action: Action, sub: Option<Subresource>) -> String {
        let kind = &self.rt.kind;
        let of = sub.map(|s| format!("{} of ", s.segment())).unwrap_or_default();
        match action {
            Action::List => format!("list or watch objects of kind {kind}"),
            Action::Post => format!("create {}{kind}", article(kind)),
            Action::DeleteCollection => format!("delete collection of {kind}"),
            Action::Get => format!("read {of}the specified {kind}"),
            Action::Put => format!("replace {of}the specified {kind}"),
            Action::Patch => format!("partially update {of}the specified {kind}"),
            Action::Delete => format!("delete {}{kind}", article(kind)),
        }
    }

    /// The upstream operation id (`patchAppsV1NamespacedDeploymentScale`,
    /// `listCoreV1PodForAllNamespaces`, `deleteCoreV1CollectionNamespacedPod`).
    fn operation_id(&self, target: Target, action: Action) -> String {
        let rt = self.rt;
        let mut id = format!("{}{}", action.verb(), operation_gv(&rt.group, &rt.version));
        if action == Action::DeleteCollection {
            id.push_str("Collection");
        }
        if rt.namespaced && target != Target::AllNamespaces {
            id.push_str("Namespaced");
        }
        id.push_str(&rt.kind);
        match target {
            Target::AllNamespaces => id.push_str("ForAllNamespaces"),
            Target::Object(Some(sub)) => id.push_str(&to_operation_id(sub.segment(), true)),
            _ => {}
        }
        id
    }
}

/// A response whose body is the definition `schema` in each media type.
fn response(description: &str, schema: &str, media: &[&str]) -> Value {
    json!({ "content": media_content(media, schema), "description": description })
}

/// A request body of the definition `schema` in each media type.
fn request_body(media: &[&str], schema: &str) -> Value {
    json!({ "content": media_content(media, schema) })
}

/// `{"<media>": {"schema": {"$ref": ...}}, ...}`.
fn media_content(media: &[&str], schema: &str) -> Value {
    let reference = json!({ "schema": { "$ref": format!("{REF_PREFIX}{schema}") } });
    Value::Object(media.iter().map(|m| ((*m).to_owned(), reference.clone())).collect())
}
