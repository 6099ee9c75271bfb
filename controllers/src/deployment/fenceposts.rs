//! maxSurge and maxUnavailable as numbers of pods (upstream
//! `deployment_util.go`: `ResolveFenceposts`, `MaxSurge`, `MaxUnavailable`,
//! `NewRSNewReplicas`).
//!
//! Percentages are of `spec.replicas`: rounded **up** for maxSurge and
//! **down** for maxUnavailable, so 25%/25% of 10 replicas is (3, 2) and of
//! 3 replicas is (1, 0). When both come out 0, maxUnavailable becomes 1, or
//! the rollout could never move.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::Deployment;
use kcm_objects::ReplicaSet;

use super::counts::spec_count;
use super::{Error, replicas, strategy_type};
use crate::common::int_or_percent::scaled_value;
use crate::common::replica_set::replicas as rs_replicas;

/// `(maxSurge, maxUnavailable)` in pods for `desired` replicas; an unset
/// value counts as 0, and (0, 0) becomes (0, 1) (upstream
/// `ResolveFenceposts`).
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> Result<(i32, i32), Error> {
    let zero = IntOrString::Int(0);
    let surge = scaled_value(max_surge.unwrap_or(&zero), desired, true)?;
    let unavailable = scaled_value(max_unavailable.unwrap_or(&zero), desired, false)?;
    Ok(if surge == 0 && unavailable == 0 { (0, 1) } else { (surge, unavailable) })
}

/// The Deployment's fenceposts, or `None` when it is not `RollingUpdate`.
fn fenceposts(d: &Deployment) -> Option<Result<(i32, i32), Error>> {
    if strategy_type(d) != "RollingUpdate" {
        return None;
    }
    let params = d.spec.strategy.as_ref().and_then(|s| s.rolling_update.as_ref());
    Some(resolve_fenceposts(
        params.and_then(|p| p.max_surge.as_ref()),
        params.and_then(|p| p.max_unavailable.as_ref()),
        replicas(d),
    ))
}

/// `spec.replicas + maxSurge`: the most pods a rollout runs (the
/// max-replicas annotation), saturating.
pub fn max_replicas(d: &Deployment) -> i32 {
    replicas(d).saturating_add(max_surge(d))
}

/// Pods the rollout may run above `spec.replicas` (upstream `MaxSurge`): 0
/// unless `RollingUpdate`; an invalid value counts as 0.
pub fn max_surge(d: &Deployment) -> i32 {
    fenceposts(d).and_then(Result::ok).map_or(0, |(surge, _)| surge)
}

/// Pods the rollout may run below `spec.replicas` (upstream
/// `MaxUnavailable`): 0 unless `RollingUpdate` with replicas > 0, at most
/// `spec.replicas`; an invalid value counts as 0.
pub fn max_unavailable(d: &Deployment) -> i32 {
    let desired = replicas(d);
    if desired == 0 {
        return 0;
    }
    fenceposts(d).and_then(Result::ok).map_or(0, |(_, unavailable)| unavailable.min(desired))
}

/// How many replicas the new ReplicaSet should have now (upstream
/// `NewRSNewReplicas`): `Recreate` jumps to `spec.replicas`; `RollingUpdate`
/// adds what the surge allows, up to `spec.replicas`.
///
/// Example: replicas 10, maxSurge 3, old ReplicaSets at 10 and the new one
/// at 0: 13 − 10 = 3 may be added, so 3. With the old ones at 8 and the new
/// at 3: min(13 − 11, 10 − 3) = 2 more, so 5.
pub fn new_rs_new_replicas(d: &Deployment, all: &[&ReplicaSet], new_rs: &ReplicaSet) -> Result<i32, Error> {
    match strategy_type(d) {
        "RollingUpdate" => {
            let params = d.spec.strategy.as_ref().and_then(|s| s.rolling_update.as_ref());
            let zero = IntOrString::Int(0);
            let surge = scaled_value(params.and_then(|p| p.max_surge.as_ref()).unwrap_or(&zero), replicas(d), true)?;
            let current = spec_count(all);
            let max_total = replicas(d).saturating_add(surge);
            let new_spec = rs_replicas(new_rs);
            if current >= max_total {
                return Ok(new_spec);
            }
            Ok(new_spec.saturating_add((max_total - current).min(replicas(d).saturating_sub(new_spec))))
        }
        "Recreate" => Ok(replicas(d)),
        other => Err(Error::Strategy(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, rs};

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.into())
    }

    /// Upstream `TestResolveFenceposts` and reference scenario 1.
    #[test]
    fn resolve_fenceposts_table() {
        type Case = (Option<IntOrString>, Option<IntOrString>, i32, (i32, i32));
        let cases: Vec<Case> = vec![
            (Some(pct("39%")), Some(pct("39%")), 10, (4, 3)),
            (Some(pct("0%")), Some(pct("0%")), 0, (0, 1)),
            (None, Some(pct("39%")), 10, (0, 3)),
            (Some(pct("39%")), None, 10, (4, 0)),
            (None, None, 10, (0, 1)),
            (Some(pct("25%")), Some(pct("25%")), 10, (3, 2)),
            (Some(pct("25%")), Some(pct("25%")), 4, (1, 1)),
            (Some(pct("25%")), Some(pct("25%")), 3, (1, 0)),
            (Some(pct("25%")), Some(pct("25%")), 1, (1, 0)),
            (Some(IntOrString::Int(2)), Some(IntOrString::Int(0)), 10, (2, 0)),
        ];
        for (surge, unavail, desired, want) in cases {
            assert_eq!(
                resolve_fenceposts(surge.as_ref(), unavail.as_ref(), desired).unwrap(),
                want,
                "{surge:?} {unavail:?} {desired}"
            );
        }
        assert!(resolve_fenceposts(Some(&pct("x")), None, 10).is_err());
        assert!(resolve_fenceposts(Some(&pct("5")), None, 10).is_err());
    }

    /// Upstream `TestMaxUnavailable` and reference scenario 2.
    #[test]
    fn max_unavailable_table() {
        let cases = [
            ("clamped to replicas", DeploymentBuilder::new(5).fenceposts(IntOrString::Int(0), IntOrString::Int(10)), 5),
            ("replicas 0", DeploymentBuilder::new(0).fenceposts(IntOrString::Int(0), IntOrString::Int(10)), 0),
            ("recreate", DeploymentBuilder::new(5).recreate(), 0),
            ("100%", DeploymentBuilder::new(5).fenceposts(IntOrString::Int(0), pct("100%")), 5),
            ("25% of 10", DeploymentBuilder::new(10), 2),
            ("both zero", DeploymentBuilder::new(10).fenceposts(IntOrString::Int(0), IntOrString::Int(0)), 1),
        ];
        for (name, d, want) in cases {
            assert_eq!(max_unavailable(&d.build()), want, "{name}");
        }
    }

    /// Upstream `TestNewRSNewReplicas`.
    #[test]
    fn new_rs_new_replicas_table() {
        // replicas 1, maxSurge 1, new 0, old 1: 2 − 1 = 1 more.
        let d = DeploymentBuilder::new(1).fenceposts(IntOrString::Int(1), IntOrString::Int(0)).build();
        let (new, old) = (rs("new", 0), rs("old", 1));
        assert_eq!(new_rs_new_replicas(&d, &[&new, &old], &new).unwrap(), 1);
        // replicas 5, maxSurge 1: 6 − 6 = 0 more.
        let d = DeploymentBuilder::new(5).fenceposts(IntOrString::Int(1), IntOrString::Int(0)).build();
        let (new, old) = (rs("new", 1), rs("old", 5));
        assert_eq!(new_rs_new_replicas(&d, &[&new, &old], &new).unwrap(), 1);
        // replicas 10, 25%: 13 − 10 = 3.
        let d = DeploymentBuilder::new(10).build();
        let (new, old) = (rs("new", 0), rs("old", 10));
        assert_eq!(new_rs_new_replicas(&d, &[&new, &old], &new).unwrap(), 3);
        // replicas 10, 25%, old 8, new 3: min(2, 7) = 2 more.
        let (new, old) = (rs("new", 3), rs("old", 8));
        assert_eq!(new_rs_new_replicas(&d, &[&new, &old], &new).unwrap(), 5);
        // Recreate: replicas.
        let d = DeploymentBuilder::new(3).recreate().build();
        let (new, old) = (rs("new", 0), rs("old", 3));
        assert_eq!(new_rs_new_replicas(&d, &[&new, &old], &new).unwrap(), 3);
    }
}
