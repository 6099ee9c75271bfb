//! The `RollingUpdate` strategy once every slot is settled (upstream
//! `updateStatefulSet`'s tail and `updateStatefulSetAfterInvariantEstablished`):
//! pods not at the update revision are deleted, highest ordinal first, down
//! to `partition` (an index from `spec.ordinals.start`); the controller
//! recreates them at the update revision.
//!
//! - Without `MaxUnavailableStatefulSet`: one pod at a time. The highest
//!   outdated pod is deleted; an unhealthy pod above it makes the sync wait.
//! - With it: at most `maxUnavailable` (an integer, or a percentage of
//!   `replicas` rounded down, at least 1; default 1) pods are unavailable at
//!   once. Worked example, 5 replicas, `maxUnavailable: 2`, all outdated and
//!   available: `web-4` and `web-3` are deleted in one sync; once both are
//!   back and available, `web-2` and `web-1`. `OrderedReady` deletes
//!   `maxUnavailable - unavailable` pods. `Parallel` (1.37's fix of the
//!   1.35 regression) first deletes outdated pods that are already
//!   unavailable (at most `maxUnavailable` of them), then available ones
//!   within what is left of the budget, so broken pods of an old revision
//!   are replaced even when they alone exhaust the budget.

use super::control::{Control, Slot};
use super::pod_state::{is_running_and_available, is_unavailable};
use super::{Options, allows_burst, min_ready_seconds, replicas};
use crate::common::int_or_percent::scaled_value;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Why a rolling update cannot proceed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `maxUnavailable` is neither an integer nor a percentage.
    #[error("{0}")]
    MaxUnavailable(String),
}

impl Control<'_> {
    /// Plans the deletions of the rolling update.
    pub(super) fn rolling_update(&mut self, options: &Options) -> Result<(), Error> {
        let rolling = self.set.spec.update_strategy.as_ref().and_then(|s| s.rolling_update.as_ref());
        let update_min = usize::try_from(rolling.and_then(|r| r.partition).unwrap_or(0)).unwrap_or(0);
        if !options.max_unavailable {
            self.one_at_a_time(update_min);
            return Ok(());
        }
        let max_unavailable = match rolling {
            Some(r) => max_unavailable(r.max_unavailable.as_ref(), replicas(self.set))?,
            None => 1,
        };
        if allows_burst(self.set) {
            self.parallel(update_min, max_unavailable);
        } else {
            self.ordered(update_min, max_unavailable);
        }
        Ok(())
    }

    fn outdated(&self, slot: &Slot<'_>) -> bool {
        slot.pod().is_some() && slot.revision() != self.versions.update_name && !slot.terminating()
    }

    fn unavailable(&self, slot: &Slot<'_>) -> bool {
        slot.pod().is_none_or(|p| is_unavailable(p, min_ready_seconds(self.set), self.now))
    }

    /// Deletes slot `i`'s pod. It leaves `currentReplicas` by one when the
    /// pod was at the current revision. Upstream takes one off whatever
    /// the pod's revision. When a template changes again mid-rollout, the
    /// pods of the revision in between count as neither current nor
    /// updated, so upstream's count goes wrong, down to -1, which the API
    /// server refuses (422).
    fn delete_slot(&mut self, i: usize) {
        let Some(pod) = self.slots[i].pod() else { return };
        let was_current = self.slots[i].revision() == self.versions.current_name;
        let action = self.delete(pod);
        self.plan.push(action);
        if was_current {
            self.status.current_replicas = Some(self.status.current_replicas.unwrap_or(0) - 1);
        }
    }

    /// Upstream's loop without the gate.
    fn one_at_a_time(&mut self, update_min: usize) {
        for i in (update_min..self.slots.len()).rev() {
            if self.outdated(&self.slots[i]) {
                self.delete_slot(i);
                return;
            }
            if !self.slots[i].healthy() {
                return;
            }
        }
    }

    /// `OrderedReady` with the gate: `maxUnavailable - unavailable` pods.
    fn ordered(&mut self, update_min: usize, max_unavailable: usize) {
        let unavailable = self.slots.iter().filter(|s| self.unavailable(s)).count();
        let mut budget = max_unavailable.saturating_sub(unavailable);
        for i in (update_min..self.slots.len()).rev() {
            if budget == 0 {
                return;
            }
            if self.outdated(&self.slots[i]) {
                self.delete_slot(i);
                budget -= 1;
            }
        }
    }

    /// `Parallel` with the gate: outdated unavailable pods first, then
    /// outdated available ones within the remaining budget.
    fn parallel(&mut self, update_min: usize, max_unavailable: usize) {
        let unavailable = self.slots.iter().filter(|s| self.unavailable(s)).count();
        let needing_update = self.slots.iter().filter(|s| self.unavailable(s) && self.outdated(s)).count();
        if unavailable >= max_unavailable && needing_update == 0 {
            return;
        }
        let (mrs, now) = (min_ready_seconds(self.set), self.now);
        let available = |s: &Slot<'_>| s.pod().is_some_and(|p| is_running_and_available(p, mrs, now));
        let mut deleted = 0;
        for i in (update_min..self.slots.len()).rev() {
            if deleted < max_unavailable && self.outdated(&self.slots[i]) && !available(&self.slots[i]) {
                self.delete_slot(i);
                deleted += 1;
            }
        }
        let mut budget = max_unavailable.saturating_sub(unavailable);
        for i in (update_min..self.slots.len()).rev() {
            if budget > 0 && self.outdated(&self.slots[i]) && available(&self.slots[i]) {
                self.delete_slot(i);
                budget -= 1;
            }
        }
    }
}

/// `maxUnavailable` resolved against `replicas` (upstream
/// `getStatefulSetMaxUnavailable`): 1 when unset, a percentage rounded
/// down, never below 1.
pub fn max_unavailable(value: Option<&IntOrString>, replicas: i32) -> Result<usize, Error> {
    let value = value.cloned().unwrap_or(IntOrString::Int(1));
    let n = scaled_value(&value, replicas, false).map_err(|e| Error::MaxUnavailable(e.to_string()))?;
    Ok(usize::try_from(n.max(1)).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream `TestGetStatefulSetMaxUnavailable`.
    #[test]
    fn test_get_stateful_set_max_unavailable() {
        let cases = [
            (None, 10, 1),
            (Some(IntOrString::Int(3)), 10, 3),
            (Some(IntOrString::Int(0)), 10, 1),
            (Some(IntOrString::String("10%".into())), 25, 2),
            (Some(IntOrString::String("100%".into())), 5, 5),
            (Some(IntOrString::String("1%".into())), 5, 1),
        ];
        for (value, replicas, want) in cases {
            assert_eq!(max_unavailable(value.as_ref(), replicas), Ok(want), "{value:?} of {replicas}");
        }
        assert!(max_unavailable(Some(&IntOrString::String("x".into())), 5).is_err());
    }
}
