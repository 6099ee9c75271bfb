//! The Job controller end to end: the real `kcm-rs` binary against
//! kube-sim, Jobs driven with kubectl.

/// Upstream's `job.go` scenarios under the parallelism and counting invariants.
mod e2e;
