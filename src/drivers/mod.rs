//! Controller drivers: the I/O half of each controller, around its
//! sans-IO core in `kcm-controllers`.
//!
//! A driver registers event handlers on the shared informers (changes to
//! queue keys), owns its workqueue and worker pool, and per key builds the
//! core's snapshot from the caches, asks the core for a plan and executes
//! it.
//!
//! # Layout
//! - `execute`: [`Executor`](execute::Executor), the plan executor every
//!   controller shares (API writes, error classification, events);
//! - `garbagecollector`: the garbage collector
//!   ([`GarbageCollector`](garbagecollector::GarbageCollector));
//! - `namespace`: the Namespace controller
//!   ([`NamespaceController`](namespace::NamespaceController));
//! - `replicaset`: the ReplicaSet controller
//!   ([`ReplicaSetController`](replicaset::ReplicaSetController)).

pub mod execute;
pub mod garbagecollector;
pub mod namespace;
pub mod replicaset;
