//! kube-sim end to end: real HTTP clients (kube-rs and the real kubectl)
//! against an in-process simulator. One test binary; one module per area.

mod sim {
    /// Admission: the ServiceAccount plugin, on and off.
    mod admission;
    /// DaemonSets, StatefulSets and ControllerRevisions, and `kubectl rollout` on them.
    mod apps;
    /// Jobs and CronJobs: discovery, defaults, the generated selector, writes, tables, delete.
    mod batch;
    /// PersistentVolumeClaims: rules, the simulated provisioner, pods waiting for claims.
    mod claims;
    /// Containers that run to completion: exit codes, restart policies, phases.
    mod completion;
    /// Faults, restarts, dropped and held watches, stats, custom resources.
    mod controls;
    /// delete, deletecollection, finalizers, grace, namespace lifecycle.
    mod deletion;
    /// Discovery, OpenAPI and server-side printing as clients see them.
    mod discovery;
    /// The real kubectl against kube-sim.
    mod kubectl;
    /// The kubelet and scheduler stand-in and node controls.
    mod kubelet;
    /// Volumes the kubelet stand-in waits for: ConfigMaps, Secrets, projected sources.
    mod mounts;
    /// get, list, watch: selectors, pagination, bookmarks, 410.
    mod reads;
    /// The scheduler stand-in's filters and verdicts; nodes joining and leaving.
    mod scheduling;
    /// Service cluster IP allocation and immutability.
    mod services;
    /// What an update or patch may change: scale patches, server-owned and
    /// immutable metadata and spec, pod updates, empty optional fields.
    mod updates;
    /// Shared fixtures.
    pub mod util;
    /// Validation beyond the specs: status, owners, finalizers, taints, tolerations.
    mod validation;
    /// create, update, patch, subresources, validation.
    mod writes;
}
