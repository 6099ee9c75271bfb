//! What a sync does after a pass (upstream `Delete` after
//! `deleteAllContent`): fail, requeue after half the estimate, or finalize,
//! and the finalizers left once finalized.

use std::time::Duration;

use super::FINALIZER_KUBERNETES;
use super::remaining::DeletionReport;

/// What a sync does after deleting content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextStep {
    /// Some step failed: retry with backoff (the message is the sync's
    /// error, upstream's aggregate).
    Fail(String),
    /// Content is still terminating: look again after this long
    /// (upstream `ResourcesRemainingError`: estimate / 2 + 1 seconds).
    Requeue(Duration),
    /// Nothing remains: remove the `kubernetes` finalizer.
    Finalize,
}

/// Decides the step after a pass (upstream `Delete` after
/// `deleteAllContent`): errors first, then a remaining estimate, else
/// finalize. Content is never finalized away while anything is left.
///
/// Example: a 30 s pod estimate requeues after 16 s.
pub fn next_step(report: &DeletionReport) -> NextStep {
    let errors = report.errors();
    if !errors.is_empty() {
        return NextStep::Fail(errors.join(", "));
    }
    if report.estimate > 0 {
        return NextStep::Requeue(Duration::from_secs(report.estimate / 2 + 1));
    }
    if !report.remaining.is_empty() {
        // Unreachable through remaining_outcome (remaining content has an
        // estimate or is an error), kept as the invariant's guard.
        return NextStep::Fail("content remains in the namespace".into());
    }
    NextStep::Finalize
}

/// `spec.finalizers` after finalizing: the old set minus `kubernetes`,
/// sorted and deduplicated.
pub fn finalized(finalizers: &[String]) -> Vec<String> {
    let mut out: Vec<String> = finalizers.iter().filter(|f| *f != FINALIZER_KUBERNETES).cloned().collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::testing::strings;

    #[test]
    fn finalizing_removes_only_kubernetes() {
        assert_eq!(finalized(&strings(&["kubernetes", "b", "a", "b"])), strings(&["a", "b"]));
        assert_eq!(finalized(&strings(&["kubernetes"])), Vec::<String>::new());
    }
}
