//! kube-sim end to end: real HTTP clients (kube-rs and the real kubectl)
//! against an in-process simulator. One test binary; one module per area.

mod sim {
    /// Discovery, OpenAPI and server-side printing as clients see them.
    mod discovery;
    /// get, list, watch: selectors, pagination, bookmarks, 410.
    mod reads;
    /// create, update, patch, subresources, validation.
    mod writes;
    /// delete, deletecollection, finalizers, grace, namespace lifecycle.
    mod deletion;
    /// The kubelet and scheduler stand-in and node controls.
    mod kubelet;
    /// Faults, restarts, dropped watches, stats, custom resources.
    mod controls;
    /// The real kubectl against kube-sim.
    mod kubectl;
    /// Shared fixtures.
    pub mod util;
}
