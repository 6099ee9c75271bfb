//! kcm-runtime: what every kcm-rs controller shares, knowing none of them.
//!
//! A controller is a driver (informer handlers that map changes to keys, a
//! workqueue, a per-key sync) around a sans-IO core; this crate is
//! everything around the driver that is the same for all of them. It
//! depends on no controller and on no simulator, so the compiler keeps it
//! generic (kube-sim is a dev-dependency, for this crate's own tests).
//!
//! # Layout
//! - [`informer`]: one list+watch per resource type for the whole process
//!   (`SharedInformerFactory`), the cache (`Store` with indexes) and event
//!   handlers;
//! - [`workqueue`]: client-go's workqueue contract (stingy, fair,
//!   delaying, rate-limited) with upstream's `workqueue_*` metrics;
//! - [`controller`]: the one shape every controller has to the daemon
//!   ([`controller::Controller`], run with a [`controller::RunContext`]:
//!   wait for caches, then the worker pools, until stop);
//! - [`runner`]: a controller's worker pool (wait for caches, sync,
//!   forget/backoff/max retries, panics caught, drain);
//! - [`leader`]: Lease leader election as client-go's state machine;
//! - [`client`]: the API client with its QPS/burst limiter and
//!   `rest_client_*` metrics;
//! - [`events`]: the Event recorder with client-go's correlator;
//! - [`server`]: `/metrics`, `/healthz`, `/livez`, `/readyz` over HTTPS, behind
//!   kube-controller-manager's delegated authentication and authorization.

pub mod client;
pub mod controller;
pub mod events;
pub mod informer;
pub mod leader;
pub mod runner;
pub mod server;
pub mod workqueue;
