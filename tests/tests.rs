//! kcm-rs end to end: the real `kcm-rs` binary (or the informers) against
//! kube-sim, driven as a user would (kubectl, `/metrics`, a real
//! Prometheus). One test binary; one module per area.
//!
//! Run one area with `cargo test --test tests <area>::`.

/// The attach/detach controller: volumes attached for scheduled pods, reported, detached once unmounted.
mod attachdetach;
/// Bootstrap tokens and node TTLs: cluster-info signed as kubeadm join verifies, expired tokens deleted, nodes'
/// `node.alpha.kubernetes.io/ttl`.
mod bootstraptokens;
/// The slim caches: fields they do not keep survive every write to a pod or node.
mod cache;
/// The seeded fault campaign: workload mixes under two electing replicas and scheduled faults, judged by safety
/// invariants on every committed change, then converged and quiet.
mod campaign;
/// Scenarios spanning several controllers: a Deployment deleted, a dead node.
mod cluster;
/// The ClusterRole aggregation controller: rules gathered and dropped as labels change.
mod clusterroleaggregation;
/// Fixtures shared by the areas: kube-sim with a `kcm-rs` against it.
mod common;
/// The CronJob controller, driven by kubectl: concurrency policies, suspend, history, missed runs, zones.
mod cronjob;
/// The CSR approving controller and cleaner, on the testbed: bootstrap-token kubelet requests approved, old ones deleted.
mod csrapproving;
/// The CSR signing controller on the testbed: approved CSRs signed by the cluster CA, refused ones failed.
mod csrsigning;
/// The `kcm-rs` binary: leader hand-over between two processes, a frozen leader fenced, serving, promtool.
mod daemon;
/// The DaemonSet controller, driven by kubectl and node controls, under a placement checker.
mod daemonset;
/// `deploy/`, the Dockerfile, the flags in the docs, links, RBAC against the daemon's calls.
mod deploy;
/// The Deployment controller, driven by kubectl, under a rollout checker.
mod deployment;
/// The endpoints controller: a Service's pods as its Endpoints, named ports, deletion with the Service.
mod endpoints;
/// The EndpointSlice controller: slices following a Service's pods, named and multiple ports.
mod endpointslice;
/// EndpointSlices under write faults, dropped watches, compaction and a killed kcm-rs.
mod endpointslicefaults;
/// The EndpointSlice mirroring controller: custom Endpoints mirrored, updated, removed.
mod endpointslicemirroring;
/// The ephemeral volume controller: the claims of pods' generic ephemeral volumes.
mod ephemeralvolume;
/// The volume expander: a grown claim's event, an in-tree volume's claim handed to its CSI resizer.
mod expand;
/// The garbage collector: background, foreground and orphan cascades, with faults.
mod garbagecollector;
/// No two production files of the workspace import each other (needs no cluster).
mod imports;
/// Shared informers against kube-sim with faults: nothing lost, nothing duplicated.
mod informer;
/// The Job controller: Jobs run to completion (NonIndexed and Indexed) or past their backoff limit, and
/// upstream's job.go scenarios under invariants on every pod event, and every pod counted once across kills;
/// no new pod for a Job written finished while its cache lags, no status refused during the backoff.
mod job;
/// A node joins on the testbed: cluster-info signed with its bootstrap token, its kubelet's certificate approved
/// and signed, its Node given a pod CIDR, a left node's CIDR given again.
mod join;
/// kubeadm's kube-controller-manager static pod with kcm-rs's image: the probe, /metrics authorization, each
/// controller as its own ServiceAccount under the bootstrap roles only.
mod kubeadm;
/// The legacy token cleaner: unused legacy token Secrets labelled invalid, then deleted.
mod legacyserviceaccounttokens;
/// The Namespace controller: a full namespace deleted, finalizers, faults.
mod namespace;
/// The node IPAM controller: pod CIDRs given to registered nodes, reused, run out of.
mod nodeipam;
/// The node lifecycle controller: dead nodes, taints, full disruption.
mod nodelifecycle;
/// The pod garbage collector: terminated, orphaned, unscheduled and out-of-service pods.
mod podgc;
/// A real Prometheus scrapes kcm-rs with `deploy/`'s scrape job.
mod prometheus;
/// The persistent volume binder: claims bound to volumes, provisioners asked, volumes released.
mod pvbinder;
/// The PVC and PV protection controllers: claims and volumes held while used or bound.
mod pvcprotection;
/// The ReplicaSet controller: scaling, adoption, replacement, with faults.
mod replicaset;
/// What every namespace gets: its `default` ServiceAccount and `kube-root-ca.crt`.
mod serviceaccounts;
/// Legacy service account token Secrets: filled, verified, deleted with their ServiceAccount.
mod serviceaccounttokens;
/// The ServiceCIDR controller on the testbed: the finalizer and Ready condition, a deleted ServiceCIDR held
/// while a Service's IP is in it.
mod servicecidrs;
/// The secure port on the testbed: anonymous, bearer tokens, client certificates, front-proxy headers;
/// bad serving flags refused at start.
mod serving;
/// The StatefulSet controller, driven by kubectl, under ordering and identity checks.
mod statefulset;
/// The taint eviction controller: pods on `NoExecute`-tainted nodes.
mod tainteviction;
/// The TTL-after-finished controller: finished Jobs deleted once their TTL runs out.
mod ttlafterfinished;
/// The command line against kube-controller-manager 1.37.2's `--help`: controllers, feature gates, flags.
mod upstream_help;
/// The VolumeAttributesClass protection controller: classes held while a claim or volume refers to them.
mod vacprotection;
