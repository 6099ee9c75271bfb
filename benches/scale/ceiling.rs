//! kube-sim's ceiling for a write-heavy phase: a plain kube client making
//! the same number and kind of writes kcm-rs made in the phase (its
//! [`Mix`]), on a fresh kube-sim of the same configuration with no
//! controller running, as fast as kube-sim takes them.
//!
//! The writes are spread evenly over the phase's Deployments ("slots"),
//! each slot's in kcm-rs's order (new ReplicaSets, their updates, pod
//! creates, statuses, Events, pod deletes) and with kcm-rs's shape: full
//! objects PUT for `update`, merge patches for `patch`, pods from the
//! ReplicaSet's template, graceful pod deletes. [`SLOTS_IN_FLIGHT`] slots
//! run at once (kcm-rs's 5 Deployment and 5 ReplicaSet workers), each
//! one's pod creates in parallel (a slow-start batch). A kind of write the
//! replay does not know (or has no object for) is left out and reported.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube_sim::Sim;
use serde_json::json;

use crate::common;
use crate::objects::NAMESPACE;
use crate::observe::{Mix, WriteKind};

/// Slots whose writes run at once.
const SLOTS_IN_FLIGHT: usize = 10;
/// Pod creates of one slot in flight at once.
const PODS_IN_FLIGHT: usize = 10;

/// What the replay measured.
pub struct Ceiling {
    /// Writes kube-sim answered during the replay.
    pub writes: u64,
    /// Wall time of the replay.
    pub elapsed: Duration,
    /// Writes of kcm-rs's mix the replay left out.
    pub skipped: Mix,
    /// CPU seconds of the benchmark process (kube-sim and the replaying
    /// client) during the replay.
    pub cpu: f64,
}

impl Ceiling {
    /// Writes per second.
    pub fn rate(&self) -> f64 {
        self.writes as f64 / self.elapsed.as_secs_f64()
    }
}

/// One Deployment's objects on the ceiling's kube-sim, latest versions.
pub struct Slot {
    /// The Deployment.
    pub deployment: Deployment,
    /// Its ReplicaSets, oldest first.
    pub replica_sets: Vec<ReplicaSet>,
    /// Its pods' names, oldest first.
    pub pods: VecDeque<String>,
    /// Events made about it.
    events: Vec<String>,
    /// Writes so far (names new objects, changes every update).
    step: u64,
}

impl Slot {
    /// A slot holding these objects.
    pub fn new(deployment: Deployment, replica_sets: Vec<ReplicaSet>, pods: Vec<String>) -> Slot {
        Slot { deployment, replica_sets, pods: pods.into(), events: Vec::new(), step: 0 }
    }

    fn name(&self) -> String {
        self.deployment.metadata.name.clone().unwrap_or_default()
    }
}

/// The APIs one replay writes through.
#[derive(Clone)]
struct Apis {
    deployments: Api<Deployment>,
    replica_sets: Api<ReplicaSet>,
    pods: Api<Pod>,
    events: Api<Event>,
}

/// Makes `mix`'s writes against `sim`, spread over `slots`, and measures
/// how long kube-sim takes to answer them.
pub async fn replay(sim: &Sim, slots: Vec<Slot>, mix: &Mix) -> Ceiling {
    let client = sim.client().expect("client");
    let apis = Apis {
        deployments: Api::namespaced(client.clone(), NAMESPACE),
        replica_sets: Api::namespaced(client.clone(), NAMESPACE),
        pods: Api::namespaced(client.clone(), NAMESPACE),
        events: Api::namespaced(client, NAMESPACE),
    };
    let count = slots.len().max(1);
    let skipped = Mutex::new(Mix::default());
    let before = all_writes(sim);
    let cpu_before = common::cpu_seconds(std::process::id());
    let start = Instant::now();
    futures::stream::iter(slots.into_iter().enumerate())
        .map(|(i, mut slot)| {
            let (apis, skipped) = (apis.clone(), &skipped);
            async move {
                let mut kinds: Vec<(&WriteKind, &u64)> = mix.0.iter().collect();
                kinds.sort_by_key(|(kind, _)| order(kind));
                for (kind, total) in kinds {
                    let n = *total / count as u64 + u64::from((i as u64) < *total % count as u64);
                    let done = write(&apis, &mut slot, kind, n).await;
                    if done < n {
                        let mut skipped = skipped.lock().unwrap_or_else(|p| p.into_inner());
                        *skipped.0.entry(kind.clone()).or_insert(0) += n - done;
                    }
                }
            }
        })
        .buffer_unordered(SLOTS_IN_FLIGHT)
        .collect::<Vec<_>>()
        .await;
    let elapsed = start.elapsed();
    Ceiling {
        writes: all_writes(sim) - before,
        elapsed,
        skipped: skipped.into_inner().unwrap_or_else(|p| p.into_inner()),
        cpu: common::cpu_seconds(std::process::id()) - cpu_before,
    }
}

/// Where a kind of write comes in a slot's sequence: kcm-rs's order (a
/// ReplicaSet exists before its pods, statuses follow, Events and deletes
/// last).
fn order(kind: &WriteKind) -> u8 {
    match (kind.verb.as_str(), kind.resource.as_str()) {
        ("create", "replicasets") => 0,
        (_, "replicasets") => 1,
        ("create", "pods") => 2,
        (_, "replicasets/status") => 3,
        (_, "deployments") => 4,
        (_, "deployments/status") => 5,
        ("create", "events") => 6,
        (_, "events") => 7,
        ("delete", "pods") => 8,
        _ => 9,
    }
}

/// Every write kube-sim has answered so far, from any client.
fn all_writes(sim: &Sim) -> u64 {
    let stats = sim.controls().stats();
    stats
        .iter()
        .filter(|l| ["create", "update", "patch", "delete", "deletecollection"].contains(&l.verb.as_str()))
        .map(|l| l.count)
        .sum()
}

/// Makes `n` writes of `kind` for `slot`; gives how many it could make.
async fn write(apis: &Apis, slot: &mut Slot, kind: &WriteKind, n: u64) -> u64 {
    let pp = PostParams::default();
    let patch = PatchParams::default();
    let mut done = 0;
    let (verb, resource) = (kind.verb.as_str(), kind.resource.as_str());
    if (verb, resource) == ("create", "pods") {
        return create_pods(apis, slot, n).await;
    }
    while done < n {
        slot.step += 1;
        let step = slot.step;
        match (verb, resource) {
            ("create", "replicasets") => {
                let rs = replica_set(slot, step);
                slot.replica_sets.push(apis.replica_sets.create(&pp, &rs).await.expect("ReplicaSet created"));
            }
            ("update", "replicasets" | "replicasets/status") => {
                let Some(i) = (!slot.replica_sets.is_empty()).then(|| step as usize % slot.replica_sets.len()) else {
                    break;
                };
                let mut rs = slot.replica_sets[i].clone();
                let name = rs.metadata.name.clone().unwrap_or_default();
                let updated = if resource == "replicasets" {
                    rs.metadata.annotations.get_or_insert_default().insert("ceiling/step".into(), step.to_string());
                    apis.replica_sets.replace(&name, &pp, &rs).await
                } else {
                    let n = (step % 11) as i32;
                    let status = rs.status.get_or_insert_default();
                    // Valid counts: none above `replicas`, available <= ready.
                    status.replicas = n;
                    status.fully_labeled_replicas = Some(n);
                    status.ready_replicas = Some(n);
                    status.available_replicas = Some(n);
                    status.observed_generation = rs.metadata.generation;
                    apis.replica_sets.replace_status(&name, &pp, &rs).await
                };
                slot.replica_sets[i] = updated.expect("ReplicaSet updated");
            }
            ("patch", "replicasets" | "replicasets/status") => {
                let Some(rs) = slot.replica_sets.last() else { break };
                let name = rs.metadata.name.clone().unwrap_or_default();
                let updated = if resource == "replicasets" {
                    let body = json!({"metadata": {"annotations": {"ceiling/step": step.to_string()}}});
                    apis.replica_sets.patch(&name, &patch, &Patch::Merge(body)).await
                } else {
                    let n = step % 11;
                    let body = json!({"status": {"replicas": n, "fullyLabeledReplicas": n, "readyReplicas": n,
                        "availableReplicas": n}});
                    apis.replica_sets.patch_status(&name, &patch, &Patch::Merge(body)).await
                };
                *slot.replica_sets.last_mut().expect("one") = updated.expect("ReplicaSet patched");
            }
            ("update", "deployments" | "deployments/status") => {
                let mut d = slot.deployment.clone();
                let name = slot.name();
                let updated = if resource == "deployments" {
                    d.metadata.annotations.get_or_insert_default().insert("ceiling/step".into(), step.to_string());
                    apis.deployments.replace(&name, &pp, &d).await
                } else {
                    let n = Some((step % 11) as i32);
                    let status = d.status.get_or_insert_default();
                    (status.replicas, status.updated_replicas, status.ready_replicas) = (n, n, n);
                    (status.available_replicas, status.unavailable_replicas) = (n, Some(0));
                    status.observed_generation = d.metadata.generation;
                    apis.deployments.replace_status(&name, &pp, &d).await
                };
                slot.deployment = updated.expect("Deployment updated");
            }
            ("patch", "deployments" | "deployments/status") => {
                let name = slot.name();
                let updated = if resource == "deployments" {
                    let body = json!({"metadata": {"annotations": {"ceiling/step": step.to_string()}}});
                    apis.deployments.patch(&name, &patch, &Patch::Merge(body)).await
                } else {
                    let n = step % 11;
                    let body = json!({"status": {"replicas": n, "updatedReplicas": n, "readyReplicas": n,
                        "availableReplicas": n, "unavailableReplicas": 0}});
                    apis.deployments.patch_status(&name, &patch, &Patch::Merge(body)).await
                };
                slot.deployment = updated.expect("Deployment patched");
            }
            ("create", "events") => {
                let event = event(slot, step);
                let name = event.metadata.name.clone().unwrap_or_default();
                apis.events.create(&pp, &event).await.expect("Event created");
                slot.events.push(name);
            }
            ("patch", "events") => {
                let Some(name) = slot.events.last() else { break };
                let body = json!({"count": step, "lastTimestamp": jiff::Timestamp::now().to_string()});
                apis.events.patch(name, &patch, &Patch::Strategic(body)).await.expect("Event patched");
            }
            ("delete", "pods") => {
                let Some(name) = slot.pods.pop_front() else { break };
                apis.pods.delete(&name, &DeleteParams::default()).await.expect("pod deleted");
            }
            _ => break,
        }
        done += 1;
    }
    done
}

/// Creates `n` pods from `slot`'s newest ReplicaSet, [`PODS_IN_FLIGHT`] at
/// a time; gives how many (none without a ReplicaSet).
async fn create_pods(apis: &Apis, slot: &mut Slot, n: u64) -> u64 {
    let Some(rs) = slot.replica_sets.last() else { return 0 };
    let base = slot.step;
    slot.step += n;
    let pods: Vec<Pod> = (0..n).map(|k| pod(rs, base + k)).collect();
    let names = futures::stream::iter(pods)
        .map(|pod| {
            let api = apis.pods.clone();
            async move {
                let created = api.create(&PostParams::default(), &pod).await.expect("pod created");
                created.metadata.name.unwrap_or_default()
            }
        })
        .buffer_unordered(PODS_IN_FLIGHT)
        .collect::<Vec<_>>()
        .await;
    slot.pods.extend(names);
    n
}

/// A new ReplicaSet of `slot`'s Deployment, as the Deployment controller
/// makes one (the template with a hash label, a controller reference).
fn replica_set(slot: &Slot, step: u64) -> ReplicaSet {
    let d = &slot.deployment;
    let spec = d.spec.clone();
    let hash = format!("c{step}");
    let mut template = spec.template;
    let meta = template.metadata.get_or_insert_default();
    meta.labels.get_or_insert_default().insert("pod-template-hash".into(), hash.clone());
    let mut selector = spec.selector;
    selector.match_labels.get_or_insert_default().insert("pod-template-hash".into(), hash.clone());
    let name = format!("{}-{hash}", slot.name());
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": name, "namespace": NAMESPACE, "labels": meta.labels,
            "annotations": {"deployment.kubernetes.io/desired-replicas": spec.replicas.unwrap_or(1).to_string(),
                "deployment.kubernetes.io/max-replicas": (spec.replicas.unwrap_or(1) + 1).to_string(),
                "deployment.kubernetes.io/revision": step.to_string()},
            "ownerReferences": [owner("apps/v1", "Deployment", &d.metadata)],
        },
        "spec": {"replicas": spec.replicas, "selector": selector, "template": template},
    }))
    .expect("a valid ReplicaSet")
}

/// Pod `k` of `rs`, as the ReplicaSet controller makes one.
fn pod(rs: &ReplicaSet, k: u64) -> Pod {
    let template = rs.spec.template.clone().unwrap_or_default();
    let meta = template.metadata.unwrap_or_default();
    let rs_name = rs.metadata.name.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{rs_name}-{k:05}")),
            generate_name: Some(format!("{rs_name}-")),
            labels: meta.labels,
            annotations: meta.annotations,
            owner_references: Some(vec![owner("apps/v1", "ReplicaSet", &rs.metadata)]),
            ..ObjectMeta::default()
        },
        spec: template.spec,
        status: None,
    }
}

/// A controller reference to the object of `meta`.
fn owner(api_version: &str, kind: &str, meta: &ObjectMeta) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// An Event about `slot`'s Deployment, as the Deployment controller
/// records a scaling one.
fn event(slot: &Slot, step: u64) -> Event {
    let d = &slot.deployment.metadata;
    let now = Time(jiff::Timestamp::now());
    Event {
        metadata: ObjectMeta { name: Some(format!("{}.{step:016x}", slot.name())), ..ObjectMeta::default() },
        involved_object: ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("Deployment".into()),
            name: d.name.clone(),
            namespace: Some(NAMESPACE.into()),
            uid: d.uid.clone(),
            resource_version: d.resource_version.clone(),
            ..ObjectReference::default()
        },
        reason: Some("ScalingReplicaSet".into()),
        message: Some(format!("Scaled up replica set {}-c{step} from 0 to 10", slot.name())),
        source: Some(k8s_openapi::api::core::v1::EventSource {
            component: Some("deployment-controller".into()),
            host: None,
        }),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        count: Some(1),
        type_: Some("Normal".into()),
        ..Event::default()
    }
}
