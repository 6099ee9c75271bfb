//! Discovery documents: `/version`, `/api`, `/apis`, `/apis/{group}` and
//! the resource lists, shaped as the API server's legacy (unaggregated)
//! discovery, which kubectl and kube-rs both read.

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::resources::{Registry, ResourceType, Subresource};

/// The version kube-sim reports at `/version`, matching the k8s-openapi
/// schemas it validates against.
pub const KUBERNETES_VERSION: &str = "v1.37.0";

/// `GET /version`.
pub fn version() -> Value {
    let mut parts = KUBERNETES_VERSION.trim_start_matches('v').split('.');
    let major = parts.next().unwrap_or("1");
    let minor = parts.next().unwrap_or("0");
    json!({
        "major": major,
        "minor": minor,
        "gitVersion": KUBERNETES_VERSION,
        "gitCommit": "kube-sim",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "n/a (kube-sim, Rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

/// `GET /api`.
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
    })
}

fn group_entry(group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> =
        versions.iter().map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v})).collect();
    json!({
        "name": group,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

/// `GET /apis`.
pub fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry.groups().iter().map(|(g, vs)| group_entry(g, vs)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/{group}`.
pub fn group(registry: &Registry, group: &str) -> ApiResult<Value> {
    let (name, versions) = registry
        .groups()
        .into_iter()
        .find(|(g, _)| g == group)
        .ok_or_else(|| ApiError::no_route(&format!("/apis/{group}")))?;
    let mut entry = group_entry(&name, &versions);
    entry["kind"] = json!("APIGroup");
    entry["apiVersion"] = json!("v1");
    Ok(entry)
}

fn resource_entry(rt: &ResourceType) -> Value {
    let mut entry = json!({
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": rt.verbs,
        "storageVersionHash": storage_version_hash(rt),
    });
    if !rt.short_names.is_empty() {
        entry["shortNames"] = json!(rt.short_names);
    }
    if !rt.categories.is_empty() {
        entry["categories"] = json!(rt.categories);
    }
    entry
}

fn subresource_entry(rt: &ResourceType, sub: Subresource) -> Value {
    let (kind, group, version, verbs): (&str, Option<&str>, Option<&str>, &[&str]) = match sub {
        Subresource::Status => (&rt.kind, None, None, &["get", "patch", "update"]),
        Subresource::Scale => ("Scale", Some("autoscaling"), Some("v1"), &["get", "patch", "update"]),
        Subresource::Finalize => (&rt.kind, None, None, &["update"]),
    };
    let mut entry = json!({
        "name": format!("{}/{}", rt.plural, sub.segment()),
        "singularName": "",
        "namespaced": rt.namespaced,
        "kind": kind,
        "verbs": verbs,
    });
    if let (Some(g), Some(v)) = (group, version) {
        entry["group"] = json!(g);
        entry["version"] = json!(v);
    }
    entry
}

/// A stable, short hash of the type's identity (clients only compare it).
fn storage_version_hash(rt: &ResourceType) -> String {
    let text = format!("{}/{}/{}", rt.group, rt.version, rt.kind);
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{:011x}", hash & 0xfff_ffff_ffff)
}

/// `GET /api/v1` and `GET /apis/{group}/{version}`.
pub fn resources(registry: &Registry, group: &str, version: &str) -> ApiResult<Value> {
    let types: Vec<_> = registry.all().into_iter().filter(|t| t.group == group && t.version == version).collect();
    if types.is_empty() {
        return Err(ApiError::no_route(&if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        }));
    }
    let mut entries = Vec::new();
    for rt in &types {
        entries.push(resource_entry(rt));
        for sub in &rt.subresources {
            entries.push(subresource_entry(rt, *sub));
        }
    }
    Ok(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": types[0].api_version(),
        "resources": entries,
    }))
}
