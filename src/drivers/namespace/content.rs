//! Emptying a namespace (upstream `deleteAllContent`): discovery of every
//! namespaced deletable type at its group's preferred version (one failing
//! group does not stop the others), then per type the live list and the
//! `deletecollection`, falling back to list + delete, and the re-list the
//! core judges; pods first, the other types only once no pod remains
//! (ordered namespace deletion).

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kcm_controllers::namespace::{self as core, DeletionReport, Gvr, PodGrace};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams};
use kube::{Client, ResourceExt};

use crate::drivers::api_errors::code;

/// Upstream `deleteAllContent`: discovers, then deletes each type in
/// turn and records what is left: the pods first, and the other types
/// only once the pods are settled (else the report is of the pods alone,
/// and the next pass tries again).
pub(super) async fn delete_all_content(client: &Client, ns: &Namespace) -> DeletionReport {
    let name = ns.name_any();
    let mut report = DeletionReport::default();
    let waves = core::waves(discover(client, &mut report).await);
    let deleted_at = ns.metadata.deletion_timestamp.as_ref().map(|t| t.0);
    for (gvr, resource) in waves.first {
        let outcome = delete_content(client, &name, &gvr, &resource, deleted_at).await;
        report.record(&gvr, outcome);
    }
    if !core::first_wave_settled(&report) {
        tracing::debug!(namespace = name, "pods remain; the other types wait for them");
        return report;
    }
    for (gvr, resource) in waves.rest {
        let outcome = delete_content(client, &name, &gvr, &resource, deleted_at).await;
        report.record(&gvr, outcome);
    }
    report
}

/// Every namespaced deletable type at its group's preferred version;
/// failing groups and unparsable group versions go into `report`.
async fn discover(client: &Client, report: &mut DeletionReport) -> Vec<(Gvr, Discovered)> {
    let mut group_versions = Vec::new();
    match client.list_core_api_versions().await {
        Ok(v) => group_versions.extend(v.versions.into_iter().take(1)),
        Err(e) => {
            report.discovery_failures.insert("v1".into(), e.to_string());
        }
    }
    match client.list_api_groups().await {
        Ok(groups) => group_versions.extend(groups.groups.into_iter().filter_map(|g| {
            g.preferred_version.map(|p| p.group_version).or_else(|| g.versions.first().map(|v| v.group_version.clone()))
        })),
        Err(e) => {
            report.discovery_failures.insert("apis".into(), e.to_string());
        }
    }
    let mut types = Vec::new();
    for gv in group_versions {
        let (group, version) = match core::parse_group_version(&gv) {
            Ok(parsed) => parsed,
            Err(e) => {
                report.parse_failures.push(e);
                continue;
            }
        };
        let list = if group.is_empty() {
            client.list_core_api_resources(&version).await
        } else {
            client.list_api_group_resources(&gv).await
        };
        let list = match list {
            Ok(list) => list,
            Err(e) => {
                report.discovery_failures.insert(gv.clone(), e.to_string());
                continue;
            }
        };
        for r in list.resources {
            if !core::deletable(&r.name, r.namespaced, &r.verbs) {
                continue;
            }
            let gvr = Gvr { group: group.clone(), version: version.clone(), resource: r.name.clone() };
            let resource = Discovered {
                api: ApiResource {
                    group: group.clone(),
                    version: version.clone(),
                    api_version: gv.clone(),
                    kind: r.kind.clone(),
                    plural: r.name.clone(),
                },
                collection: core::supports_delete_collection(&r.verbs),
            };
            types.push((gvr, resource));
        }
    }
    types
}

/// Upstream `deleteAllContentForGroupVersionResource`: estimate (pods),
/// delete the collection (or each object), re-list, and let the core
/// judge what is left.
///
/// One difference from upstream: a type is listed first, and an empty
/// type is done without a `deletecollection` (upstream deletes then
/// lists). The list that decides is still live and made after the
/// namespace was marked for deletion, and the API server refuses
/// creates in a terminating namespace, so this never finalizes with
/// content left; it halves the requests for the many empty types and
/// keeps failing deletes from failing passes over empty types.
async fn delete_content(
    client: &Client,
    namespace: &str,
    gvr: &Gvr,
    resource: &Discovered,
    deleted_at: Option<Timestamp>,
) -> Result<core::Remaining, String> {
    let estimate = if gvr.is_pods() { estimate_pods(client, namespace, deleted_at).await? } else { 0 };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource.api);
    // Most discovered types hold nothing: one list settles them, and a
    // pass is not failed by a delete it did not need.
    let present =
        api.list(&ListParams::default()).await.map_err(|e| format!("failed to list {gvr} in {namespace}: {e}"))?;
    if present.items.is_empty() {
        return Ok(core::Remaining::default());
    }
    let background = DeleteParams::background();
    let mut one_by_one = !resource.collection;
    if resource.collection {
        match api.delete_collection(&background, &ListParams::default()).await {
            Ok(_) => {}
            Err(e) if matches!(code(&e), Some(404 | 405)) => one_by_one = true,
            Err(e) => return Err(format!("failed to delete collection of {gvr} in {namespace}: {e}")),
        }
    }
    if one_by_one {
        let list =
            api.list(&ListParams::default()).await.map_err(|e| format!("failed to list {gvr} in {namespace}: {e}"))?;
        for item in list.items {
            match api.delete(&item.name_any(), &background).await {
                Ok(_) => {}
                Err(e) if matches!(code(&e), Some(404 | 405)) => {}
                Err(e) => return Err(format!("failed to delete {gvr} {namespace}/{}: {e}", item.name_any())),
            }
        }
    }
    let left =
        api.list(&ListParams::default()).await.map_err(|e| format!("failed to list {gvr} in {namespace}: {e}"))?;
    let items: Vec<Vec<String>> = left.items.iter().map(|o| o.finalizers().to_vec()).collect();
    core::remaining_outcome(namespace, gvr, &items, estimate)
}

/// The pods' graceful-termination estimate, from a live list.
async fn estimate_pods(client: &Client, namespace: &str, deleted_at: Option<Timestamp>) -> Result<u64, String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list =
        pods.list(&ListParams::default()).await.map_err(|e| format!("failed to list pods in {namespace}: {e}"))?;
    let grace: Vec<PodGrace> = list
        .items
        .iter()
        .map(|p| PodGrace {
            phase: p.status.as_ref().and_then(|s| s.phase.clone()),
            grace_seconds: p.spec.as_ref().and_then(|s| s.termination_grace_period_seconds),
        })
        .collect();
    Ok(core::estimate_graceful_termination(&grace, deleted_at, Timestamp::now()))
}

/// A discovered type: how to reach it and whether it takes
/// `deletecollection`.
struct Discovered {
    api: ApiResource,
    collection: bool,
}
