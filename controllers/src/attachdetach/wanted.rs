//! What a node's pods want attached (upstream's desired state of the
//! world, `util.ProcessPodVolumes` and the populator).
//!
//! A pod counts when it is bound to the node and not terminated (upstream
//! `DetermineVolumeAction`). Each of its claims, named or a generic
//! ephemeral volume's, is resolved through the cache. Upstream adds a
//! pod's volumes once and keeps them until the pod is deleted or
//! terminates, so a claim that stops resolving for a moment (its volume
//! briefly missing from the cache) does not detach a volume in use: the
//! [`Resolutions`] keep each pod volume's last attachable answer for as
//! long as the pod counts.

use std::collections::{BTreeMap, BTreeSet};

use kcm_objects::Pod;

use super::view::{PodRef, Wanted};
use super::volume::{Attachable, Resolved};
use crate::common::ephemeral::volume_claim_name;
use crate::common::pod::is_pod_terminated;

/// A claim one of a pod's volumes mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodClaim {
    /// The pod volume's name.
    pub volume: String,
    /// The claim's name, in the pod's namespace.
    pub claim: String,
    /// Whether it is a generic ephemeral volume's claim (then it must be
    /// the pod's own).
    pub ephemeral: bool,
}

/// Whether the pod's volumes count on its node.
pub fn counts(pod: &Pod) -> bool {
    pod.node_name().is_some() && !is_pod_terminated(pod)
}

/// The claims the pod's volumes mount, in order.
pub fn pod_claims(pod: &Pod) -> Vec<PodClaim> {
    let named = (pod.spec.rare().claim_volumes.iter()).map(|v| PodClaim {
        volume: v.name.to_string(),
        claim: v.claim_name.to_string(),
        ephemeral: false,
    });
    let ephemeral = (pod.spec.rare().ephemeral_volumes.iter()).map(|v| PodClaim {
        volume: v.name.to_string(),
        claim: volume_claim_name(pod, &v.name),
        ephemeral: true,
    });
    named.chain(ephemeral).collect()
}

/// What [`Resolutions::wanted`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gathered {
    /// The volumes to attach, each with the pods that use it.
    pub wanted: Vec<Wanted>,
    /// Pod volumes kcm-rs cannot attach, with the reason (logged by the
    /// driver).
    pub unsupported: Vec<(PodRef, String)>,
}

fn pod_ref(pod: &Pod) -> PodRef {
    PodRef {
        namespace: pod.metadata.namespace.to_string(),
        name: pod.metadata.name.to_string(),
        uid: pod.metadata.uid.to_string(),
    }
}

/// Each counted pod volume's last attachable answer, by pod uid and
/// volume name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolutions {
    by_pod: BTreeMap<String, BTreeMap<String, Attachable>>,
}

impl Resolutions {
    /// The volumes the node's `pods` want, resolving each pod claim with
    /// `resolve`; a pod whose claim does not resolve now keeps its last
    /// answer. Pods no longer given are forgotten.
    pub fn wanted(&mut self, pods: &[&Pod], mut resolve: impl FnMut(&Pod, &PodClaim) -> Resolved) -> Gathered {
        let mut wanted: BTreeMap<String, Wanted> = BTreeMap::new();
        let mut unsupported = Vec::new();
        let mut seen = BTreeSet::new();
        for pod in pods.iter().filter(|p| counts(p)) {
            let uid = pod.metadata.uid.to_string();
            seen.insert(uid.clone());
            let remembered = self.by_pod.entry(uid).or_default();
            for claim in pod_claims(pod) {
                let volume = match resolve(pod, &claim) {
                    Resolved::Attachable(volume) => {
                        remembered.insert(claim.volume.clone(), volume.clone());
                        volume
                    }
                    Resolved::Pending(_) => match remembered.get(&claim.volume) {
                        Some(volume) => volume.clone(),
                        None => continue,
                    },
                    Resolved::NotAttachable => {
                        remembered.remove(&claim.volume);
                        continue;
                    }
                    Resolved::Unsupported(why) => {
                        remembered.remove(&claim.volume);
                        unsupported.push((pod_ref(pod), why));
                        continue;
                    }
                };
                let pod_ref = pod_ref(pod);
                let entry = wanted.entry(volume.unique.clone()).or_insert_with(|| Wanted { volume, pods: Vec::new() });
                if !entry.pods.contains(&pod_ref) {
                    entry.pods.push(pod_ref);
                }
            }
        }
        self.by_pod.retain(|uid, volumes| seen.contains(uid) && !volumes.is_empty());
        Gathered { wanted: wanted.into_values().collect(), unsupported }
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.by_pod.is_empty()
    }
}
