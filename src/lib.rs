//! kcm-rs: a standalone replacement for kube-controller-manager.
//!
//! The daemon: kube-controller-manager's flags (`config`), the controller
//! table, the controllers' drivers (`drivers`: informer handlers, queues,
//! plan execution), start-up and leading (`daemon`) and `--sim`. What every
//! controller shares lives in `kcm-runtime`; the controllers' decision
//! logic in `kcm-controllers`.

pub mod config;
pub mod controllers;
pub mod daemon;
pub mod drivers;
pub mod sim;

#[cfg(test)]
mod docs;
