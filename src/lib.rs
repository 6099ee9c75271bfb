//! kcm-rs: a standalone replacement for kube-controller-manager.
//!
//! The runtime every controller shares (shared informers, workqueues, leader
//! election, metrics and health serving) and the controllers' drivers
//! (`drivers`: informer handlers, queues, plan execution) live in this
//! crate; the controllers' decision logic lives in `kcm-controllers`.

pub mod client;
pub mod config;
pub mod daemon;
pub mod drivers;
pub mod events;
pub mod informer;
pub mod leader;
pub mod manager;
pub mod server;
pub mod sim;
pub mod workqueue;
