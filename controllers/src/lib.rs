//! The decision logic of kcm-rs's controllers.
//!
//! Each controller's core is a pure function from a snapshot of cached state
//! (plus `now` and the controller's own remembered state) to a [`Plan`] of
//! intended API writes. Nothing here performs I/O, reads a clock or spawns a
//! task; the runtime in the `kcm-rs` crate executes the plans.
//!
//! # Layout
//! - [`plan`]: the [`Plan`] every core returns, and the executor's contract;
//! - [`attachdetach`]: the attach/detach controller (the
//!   VolumeAttachments of the volumes scheduled pods mount, detached once
//!   unmounted, and each node's `status.volumesAttached`);
//! - [`bootstrap`]: bootstrap tokens (the token cleaner deleting expired
//!   ones, the bootstrap signer signing `cluster-info` with them);
//! - [`clusterroleaggregation`]: the ClusterRole aggregation controller
//!   (the rules an `aggregationRule` gathers, in upstream's order);
//! - [`common`]: what controllers share (selectors, controller refs and
//!   claims, pod readiness, deletion ranking, pods from templates, the
//!   ControllerRevision history DaemonSets and StatefulSets keep); no
//!   controller imports another controller's module;
//! - [`cronjob`]: the CronJob controller (schedules as upstream's parser
//!   reads them, missed runs, concurrency policies, history limits);
//! - [`csrapproving`]: the CSR approving controller (kubelet client
//!   certificate requests approved after SubjectAccessReviews);
//! - [`csrcleaner`]: the CSR cleaner (requests deleted once old enough,
//!   or their certificate expired);
//! - [`csrsigning`]: the CSR signing controller (approved
//!   CertificateSigningRequests of the built-in signers validated and
//!   signed by their CA);
//! - [`daemonset`]: the DaemonSet controller (which nodes run a daemon
//!   pod, rolling update with maxUnavailable or maxSurge, history, status);
//! - [`deployment`]: the Deployment controller (rolling update, recreate,
//!   proportional scaling, revisions and rollback, progress conditions);
//! - [`endpoint`]: the endpoints controller (a selector Service's pods as
//!   its Endpoints' addresses);
//! - [`endpointslice`]: the EndpointSlice controller (pods to endpoints,
//!   packing into slices, hints, the stale-cache tracker);
//! - [`endpointslicemirroring`]: the EndpointSlice mirroring controller
//!   (the Endpoints of selector-less Services as EndpointSlices);
//! - [`ephemeralvolume`]: the ephemeral volume controller (the claims of
//!   a pod's generic ephemeral volumes, created from their templates);
//! - [`expand`]: the volume expander (a grown claim's migrated in-tree
//!   volume handed to its CSI driver's external resizer);
//! - [`garbagecollector`]: the garbage collector (dependency graph of
//!   ownerReferences, what to delete, orphan or unblock);
//! - [`job`]: the Job controller (pods run to completion, counted through
//!   the tracking finalizer; Indexed Jobs, backoff limits, the pod failure
//!   and success policies);
//! - [`legacytokencleaner`]: the legacy service account token cleaner
//!   (unused legacy token Secrets labelled invalid, then deleted);
//! - [`namespace`]: the Namespace controller (deletion conditions,
//!   graceful-termination estimate, when to finalize);
//! - [`node`]: the node lifecycle controller (node health, zone states,
//!   the rate-limited taint queues, condition taints);
//! - [`nodeipam`]: the node IPAM controller (pod CIDRs cut from the
//!   cluster CIDRs for nodes, upstream's cidrset arithmetic);
//! - [`podgc`]: the pod garbage collector (terminated pods beyond the
//!   threshold, orphaned, unscheduled and out-of-service terminating pods);
//! - [`pvcprotection`]: the PVC protection controller (a claim being
//!   deleted keeps its finalizer while a pod uses it; the `Unused`
//!   condition of bound claims);
//! - [`pvprotection`]: the PV protection controller (a volume being
//!   deleted keeps its finalizer while bound);
//! - [`replicaset`]: the ReplicaSet controller (expectations, manage
//!   replicas, status);
//! - [`rootcacertpublisher`]: the root CA certificate publisher (the
//!   `kube-root-ca.crt` ConfigMap of every namespace);
//! - [`servicecidrs`]: the ServiceCIDR controller (the finalizer held
//!   while an allocated IPAddress would be orphaned, the `Ready` condition);
//! - [`serviceaccount`]: the ServiceAccounts controller (`default` in every
//!   active namespace);
//! - [`serviceaccounttoken`]: the service account token controller
//!   (legacy token Secrets filled, and deleted with their ServiceAccount);
//! - [`statefulset`]: the StatefulSet controller (stable identities and
//!   storage, ordered or parallel pod management, rolling updates with
//!   partition and maxUnavailable, claim retention, revision history);
//! - [`ttlafterfinished`]: the TTL-after-finished controller (when a
//!   finished Job's `ttlSecondsAfterFinished` runs out);
//! - [`ttl`]: the TTL controller (every node's
//!   `node.alpha.kubernetes.io/ttl` by cluster size);
//! - [`vacprotection`]: the VolumeAttributesClass protection controller
//!   (a class being deleted keeps its finalizer while a claim or volume
//!   refers to it).

pub mod attachdetach;
pub mod bootstrap;
pub mod clusterroleaggregation;
pub mod common;
pub mod cronjob;
pub mod csrapproving;
pub mod csrcleaner;
pub mod csrsigning;
pub mod daemonset;
pub mod deployment;
pub mod endpoint;
pub mod endpointslice;
pub mod endpointslicemirroring;
pub mod ephemeralvolume;
pub mod expand;
pub mod garbagecollector;
pub mod job;
pub mod legacytokencleaner;
pub mod namespace;
pub mod node;
pub mod nodeipam;
pub mod plan;
pub mod podgc;
pub mod protocol;
pub mod pvbinder;
pub mod pvcprotection;
pub mod pvprotection;
pub mod replicaset;
pub mod rootcacertpublisher;
pub mod serviceaccount;
pub mod serviceaccounttoken;
pub mod servicecidrs;
pub mod statefulset;
pub mod ttl;
pub mod ttlafterfinished;
pub mod vacprotection;

#[cfg(test)]
#[allow(missing_docs)]
mod testing;

pub use plan::Plan;
