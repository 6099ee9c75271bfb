//! kcm-rs: a standalone replacement for kube-controller-manager.
//!
//! The runtime every controller shares (shared informers, workqueues, leader
//! election, metrics and health serving) will live in this crate; the
//! controllers' decision logic lives in `kcm-controllers`. Today the crate
//! holds only the command line: no controller runs yet.

pub mod client;
pub mod config;
pub mod daemon;
pub mod events;
pub mod informer;
pub mod leader;
pub mod manager;
pub mod server;
pub mod sim;
pub mod workqueue;
