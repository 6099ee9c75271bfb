//! How to write a custom controller on kcm-runtime: one small operator,
//! for a `Widget` custom resource, built the way kcm-rs's own controllers
//! are. Copy this crate to start one.
//!
//! The operator reads `spec.replicas`, grants at most
//! [`MAX_REPLICAS`](core::MAX_REPLICAS), and reports in the Widget's
//! status: `replicas` (granted), `observedGeneration`, and a `Ready`
//! condition. It is small on purpose; every step below is one a real
//! controller takes.
//!
//! # 1. Declare the resource ([`widget`])
//! A spec struct with kube's `CustomResource` derive (kube's `derive`
//! feature, and `schemars`) gives the [`Widget`](widget::Widget) type, its
//! `kube::Resource` impl and its CustomResourceDefinition
//! (`Widget::crd()`). The shared informers take any type whose
//! `Resource::DynamicType` is `()` (the
//! [`Cached`](kcm_runtime::informer::Cached) bound): derived custom
//! resources qualify as k8s-openapi types do; `DynamicObject` does not.
//! Declare `status` so the CRD serves `/status`: spec writes then never
//! touch the status, status writes never touch the spec, and only spec
//! changes bump `metadata.generation`.
//!
//! # 2. Decide without I/O ([`core`])
//! The decisions are one pure function, [`core::plan`]: a
//! [`Snapshot`](core::Snapshot) of what it reads (the cached object, plus
//! `now`: no clock inside) in, a [`Plan`](core::Plan) of writes out. It
//! compares what it wants with what the object already says and plans
//! nothing when they agree, so the update event caused by its own write
//! ends in a no-op rather than a loop. Table tests sit at the bottom of
//! the file. A controller reading more caches (owned objects, say) puts
//! them in the snapshot; one with several writes returns them in order.
//!
//! # 3. Drive it ([`controller`])
//! [`WidgetController::new`](controller::WidgetController::new), before
//! the factory starts:
//! - `factory.informer::<Widget>()`: the process's one list+watch of
//!   Widgets, shared with any other controller asking for it;
//! - `WorkQueue::new(name, default_controller_rate_limiter(), metrics)`:
//!   keys (`namespace/name`) with dedup, per-key backoff, and no key held
//!   by two workers;
//! - `informer.add_handler(..)`: an
//!   [`EventHandler`](kcm_runtime::informer::EventHandler), here the
//!   runtime's [`Enqueue`](kcm_runtime::informer::Enqueue), which only
//!   queues `key_of(obj)` on add, update and delete (level-based: the
//!   sync reads the latest state, never the event's);
//! - a [`Reconcile`](kcm_runtime::runner::Reconcile) impl, the per-key
//!   sync: get the object from the informer's `Store` (gone: done), build
//!   the snapshot, ask the core, execute the plan (here a merge patch of
//!   `/status`, made conditional on the cached `resourceVersion`), and
//!   return `Ok(Next::Done)`, `Ok(Next::After(delay))` to look again
//!   later, or an error to be retried with backoff.
//!
//! # 4. Run it
//! Build the controller, `factory.start()`, then run it as every kcm-rs
//! controller runs: it implements
//! [`Controller`](kcm_runtime::controller::Controller), and its `run` is
//! handed a [`RunContext`](kcm_runtime::controller::RunContext) (the
//! factory, a worker count, the sync metrics and a stop signal) whose
//! `run_when_synced` waits for the informer and the handler registration
//! (so no worker reads a half-filled cache), then runs the worker pool
//! (panics caught, retries bounded by `max_retries`, drained on stop):
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use kcm_example_operator::controller::WidgetController;
//! use kcm_runtime::controller::{self, Controller, RunContext};
//! use kcm_runtime::informer::SharedInformerFactory;
//! use kcm_runtime::runner::SyncMetrics;
//!
//! let registry = prometheus::Registry::new();
//! let factory = SharedInformerFactory::new(client.clone());
//! let controller = Box::new(WidgetController::new(&factory, client, None));
//! factory.start();
//! let stop = controller::stop_on(async { tokio::signal::ctrl_c().await.unwrap_or_default() });
//! let metrics = SyncMetrics::register(&registry)?;
//! let cx = RunContext { name: "widget-controller", factory: factory.clone(), workers: 2, metrics, stop };
//! controller.run(cx).await;
//! factory.shutdown();
//! # Ok(()) }
//! ```
//!
//! `src/main.rs` is that, against the current kubeconfig context.
//!
//! # 5. Test it against kube-sim
//! `tests/tests.rs` starts kube-sim in-process, serves the Widget type
//! there (with `/status`), runs the controller, creates and edits a
//! Widget through the API, and waits on `sim.changes()` (with a deadline,
//! never a fixed sleep) until the status says what the core decides.
//!
//! # What a larger controller adds
//! Events (`kcm_runtime::events::EventRecorder`), leader election
//! (`kcm_runtime::leader`), `/metrics` and health endpoints
//! (`kcm_runtime::server`), a rate-limited client with `rest_client_*`
//! metrics (`kcm_runtime::client::build`), more informers and their
//! indexes (`SharedInformer::add_index`), and a finalizer when deleting
//! must clean something up.

pub mod controller;
pub mod core;
pub mod widget;
