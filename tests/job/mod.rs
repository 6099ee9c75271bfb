//! The Job controller end to end: the real `kcm-rs` binary against
//! kube-sim, Jobs driven with kubectl.

/// A Job's counts across a killed and restarted `kcm-rs`, failing creates and dropped watches.
mod restart;
