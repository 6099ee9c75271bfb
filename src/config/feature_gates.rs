//! `--feature-gates`: parsed as component-base's featuregate parses it, and
//! resolved against the gates kube-controller-manager 1.37 registers (their
//! table is `gate_table.rs`).
//!
//! Stage one ([`parse_feature_gates`], clap's value parser) reads one
//! occurrence of the flag as upstream's `Set` does: `Key=bool` pairs split on
//! `,`, whitespace trimmed, empty entries skipped, a pair without `=` or with
//! a value Go's `strconv.ParseBool` rejects refused in upstream's words; then
//! a name kube-controller-manager 1.37 does not know ("unrecognized feature
//! gate: X", which removed gates are) and a locked gate set to the other
//! value ("cannot set feature gate X to false, feature is locked to true").
//!
//! Stage two ([`FeatureGates::resolve`]) merges the occurrences (a later
//! value wins), applies `AllAlpha`/`AllBeta` to every gate of that stage not
//! set by name, and takes each other gate's 1.37 default. Then it checks the
//! gates that change what kcm-rs's controllers do ([`CONTROLLER_GATES`]):
//! a value kcm-rs cannot honour is refused at start-up by name. Every other
//! gate is accepted and has no effect on kcm-rs: it belongs to a component
//! or controller kcm-rs does not run (operators pass one `--feature-gates` to
//! every component).

use std::collections::BTreeMap;

use super::gate_table::{GATES, Stage, gate};
use super::{Error, Result};

/// The special gate that sets every alpha gate not set by name.
pub const ALL_ALPHA: &str = "AllAlpha";

/// The special gate that sets every beta gate not set by name.
pub const ALL_BETA: &str = "AllBeta";

/// `DeploymentReplicaSetTerminatingReplicas` (beta, on since 1.35): the
/// Deployment and ReplicaSet controllers fill `status.terminatingReplicas`.
pub const TERMINATING_REPLICAS: &str = "DeploymentReplicaSetTerminatingReplicas";

/// `MaxUnavailableStatefulSet` (beta, on in 1.37): the StatefulSet
/// controller's rolling updates honour `rollingUpdate.maxUnavailable`.
pub const MAX_UNAVAILABLE_STATEFUL_SET: &str = "MaxUnavailableStatefulSet";

/// `PersistentVolumeClaimUnusedSinceTime` (beta, on in 1.37): the PVC
/// protection controller keeps the `Unused` condition of bound claims.
pub const PVC_UNUSED_SINCE_TIME: &str = "PersistentVolumeClaimUnusedSinceTime";

/// What kcm-rs does with a gate that changes one of its controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Honour {
    /// Either value is honoured (wired into [`Config`](super::Config)).
    Both,
    /// kcm-rs always behaves as with this value; the other is refused.
    Only(bool),
    /// Not implemented yet: kcm-rs behaves as with the gate off whatever
    /// its value, which is accepted so that 1.37's defaults start (the
    /// difference is in docs/operations.md).
    NotYet,
}

/// The gates that change what kube-controller-manager 1.37.2's deployment,
/// replicaset, statefulset, daemonset, job, node-lifecycle, taint-eviction,
/// PVC protection and garbage-collector controllers do, with what kcm-rs makes of each. The
/// controllers read no other gate (locked ones aside, such as
/// `SeparateTaintEvictionController`, whose only value is kcm-rs's).
pub const CONTROLLER_GATES: &[(&str, Honour)] = &[
    // Deployment and ReplicaSet: status.terminatingReplicas (beta, on).
    (TERMINATING_REPLICAS, Honour::Both),
    // ReplicaSet scale-down ranks by controller.kubernetes.io/pod-deletion-cost
    // (beta, on; upstream's ActivePodsWithRanks); kcm-rs always does.
    ("PodDeletionCost", Honour::Only(true)),
    // Toleration matching with the Lt/Gt operators (alpha), which the taint
    // eviction controller's matching follows; kcm-rs matches Equal and Exists only.
    ("TaintTolerationComparisonOperators", Honour::Only(false)),
    // StatefulSet rolling updates honour rollingUpdate.maxUnavailable (beta, on).
    (MAX_UNAVAILABLE_STATEFUL_SET, Honour::Both),
    // A StatefulSet's template is compared with its revisions semantically,
    // not byte for byte (beta, on); kcm-rs always does, as its revisions'
    // bytes are never kube-controller-manager's.
    ("StatefulSetSemanticRevisionComparison", Honour::Only(true)),
    // The PVC protection controller's Unused condition on bound claims (beta, on).
    (PVC_UNUSED_SINCE_TIME, Honour::Both),
    // StatefulSet updateStrategy Recreate (alpha); kcm-rs has RollingUpdate and OnDelete.
    ("StatefulSetRecreateStrategy", Honour::Only(false)),
    // Jobs of a Workload scheduled as a gang (alpha); kcm-rs's Job controller has no Workload.
    ("WorkloadWithJob", Honour::Only(false)),
    // A sync skipped until the informer has seen the controller's own last
    // writes (beta, on since 1.36, KEP-5647): kcm-rs's controllers do not
    // check that yet, and run as with the gate off (expectations guard
    // their creations and deletions, as before the gate).
    ("StaleControllerConsistencyDaemonSet", Honour::NotYet),
    ("StaleControllerConsistencyJob", Honour::NotYet),
    ("StaleControllerConsistencyReplicaSet", Honour::NotYet),
    ("StaleControllerConsistencyStatefulSet", Honour::NotYet),
    // The node lifecycle controller reads a node's Lease live before calling
    // the node unhealthy (beta, on in 1.37): kcm-rs judges from its cache,
    // as with the gate off.
    ("NodeControllerLeaseCircuitBreaker", Honour::NotYet),
];

/// The value of every gate, resolved from `--feature-gates`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureGates {
    enabled: BTreeMap<&'static str, bool>,
}

/// One `--feature-gates` occurrence: the gates it names, in order, each
/// known to kube-controller-manager 1.37 and not set against its lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateSettings(Vec<(&'static str, bool)>);

/// Parses one `--feature-gates` value (stage one; see the module docs).
///
/// # Errors
///
/// Upstream's message for a malformed pair, an unknown gate or a locked gate
/// set to the other value.
pub fn parse_feature_gates(value: &str) -> Result<GateSettings, String> {
    let mut pairs = Vec::new();
    for entry in value.split(',').filter(|e| !e.is_empty()) {
        let Some((key, raw)) = entry.split_once('=') else {
            return Err(format!("missing bool value for {}", entry.trim()));
        };
        let (key, raw) = (key.trim(), raw.trim());
        let on = super::parse_go_bool(raw).map_err(|e| format!("invalid value of {key}={raw}, err: {e}"))?;
        pairs.push((key, on));
    }
    let mut settings = Vec::new();
    for (key, on) in pairs {
        let name = known_name(key).ok_or_else(|| format!("unrecognized feature gate: {key}"))?;
        if let Some(spec) = gate(name).map(|g| g.at_target()).filter(|s| s.locked && s.default != on) {
            return Err(format!("cannot set feature gate {name} to {on}, feature is locked to {}", spec.default));
        }
        settings.push((name, on));
    }
    Ok(GateSettings(settings))
}

/// `--feature-gates`'s long help: upstream's sentence and its list of the
/// alpha and beta gates (`Name=true|false (BETA - default=true)`, sorted;
/// GA and deprecated gates are not listed), then what kcm-rs makes of them.
pub fn feature_gates_help() -> String {
    let stage_name = |stage: Stage| if stage == Stage::Alpha { "ALPHA" } else { "BETA" };
    let mut known: Vec<String> = [(ALL_ALPHA, Stage::Alpha), (ALL_BETA, Stage::Beta)]
        .into_iter()
        .map(|(name, stage)| format!("{name}=true|false ({} - default=false)", stage_name(stage)))
        .collect();
    for g in GATES {
        let spec = g.at_target();
        if matches!(spec.stage, Stage::Alpha | Stage::Beta) {
            known.push(format!("{}=true|false ({} - default={})", g.name, stage_name(spec.stage), spec.default));
        }
    }
    known.sort();
    format!(
        "A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n{}\n\
         (kcm-rs: the gates of kube-controller-manager 1.37. Those that change kcm-rs's controllers: {}; a value \
         kcm-rs cannot honour is refused. Not implemented yet, kcm-rs running as with them off: {}. Every other \
         gate is accepted and changes nothing in kcm-rs.)",
        known.join("\n"),
        gate_names(|h| h != Honour::NotYet),
        gate_names(|h| h == Honour::NotYet),
    )
}

/// The names of the controller gates `which` picks, comma-separated.
fn gate_names(which: impl Fn(Honour) -> bool) -> String {
    CONTROLLER_GATES.iter().filter(|(_, h)| which(*h)).map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// The table's spelling of a gate name, special gates included.
fn known_name(key: &str) -> Option<&'static str> {
    [ALL_ALPHA, ALL_BETA].into_iter().find(|n| *n == key).or_else(|| gate(key).map(|g| g.name))
}

impl FeatureGates {
    /// Resolves the `--feature-gates` occurrences (stage two; see the
    /// module docs).
    ///
    /// # Errors
    ///
    /// [`Error::UnimplementedFeatureGates`] naming each gate that changes a
    /// kcm-rs controller and resolves to a value kcm-rs cannot honour.
    pub fn resolve(occurrences: &[GateSettings]) -> Result<FeatureGates> {
        let explicit: BTreeMap<&'static str, bool> = occurrences.iter().flat_map(|o| o.0.iter().copied()).collect();
        let enabled = GATES
            .iter()
            .map(|g| {
                let spec = g.at_target();
                let by_stage = match spec.stage {
                    Stage::Alpha => explicit.get(ALL_ALPHA),
                    Stage::Beta => explicit.get(ALL_BETA),
                    Stage::Ga | Stage::Deprecated => None,
                };
                (g.name, explicit.get(g.name).or(by_stage).copied().unwrap_or(spec.default))
            })
            .collect();
        let gates = FeatureGates { enabled };
        let (mut requested, mut honoured) = (Vec::new(), Vec::new());
        for (name, honour) in CONTROLLER_GATES {
            let Honour::Only(value) = honour else { continue };
            if gates.enabled(name) == *value {
                continue;
            }
            let on = !value;
            let cause = if explicit.contains_key(name) {
                String::new()
            } else {
                let stage = gate(name).map(|g| g.at_target().stage);
                let all = if stage == Some(Stage::Alpha) { ALL_ALPHA } else { ALL_BETA };
                format!(" (set by {all}={on})")
            };
            requested.push(format!("{name}={on}{cause}"));
            honoured.push(format!("{name}={value}"));
        }
        if !requested.is_empty() {
            return Err(Error::UnimplementedFeatureGates { requested, honoured });
        }
        Ok(gates)
    }

    /// Whether the named gate is on (false for a name no gate has).
    pub fn enabled(&self, name: &str) -> bool {
        self.enabled.get(name).copied().unwrap_or(false)
    }
}

impl Default for FeatureGates {
    /// Every gate at its 1.37 default.
    fn default() -> Self {
        FeatureGates { enabled: GATES.iter().map(|g| (g.name, g.at_target().default)).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::gate_table::TARGET_MINOR;
    use super::*;

    // === utils ===

    fn resolve(values: &[&str]) -> Result<FeatureGates, String> {
        let parsed = values.iter().map(|v| parse_feature_gates(v)).collect::<Result<Vec<_>, _>>()?;
        FeatureGates::resolve(&parsed).map_err(|e| e.to_string())
    }

    // === tests ===

    #[test]
    fn malformed_values_get_upstreams_messages() {
        assert_eq!(parse_feature_gates("PodDeletionCost").unwrap_err(), "missing bool value for PodDeletionCost");
        assert_eq!(
            parse_feature_gates("PodDeletionCost=yes").unwrap_err(),
            r#"invalid value of PodDeletionCost=yes, err: strconv.ParseBool: parsing "yes": invalid syntax"#
        );
        // Whitespace is trimmed, empty entries skipped, Go's booleans taken.
        let parsed = parse_feature_gates(" DeploymentReplicaSetTerminatingReplicas = F ,,AllBeta=1").unwrap();
        assert_eq!(parsed.0, [(TERMINATING_REPLICAS, false), (ALL_BETA, true)]);
        assert_eq!(parse_feature_gates("").unwrap(), GateSettings::default());
    }

    #[test]
    fn unknown_and_removed_gates_are_unrecognized() {
        assert_eq!(parse_feature_gates("Frobnicate=true").unwrap_err(), "unrecognized feature gate: Frobnicate");
        // Removed by 1.37 (GA and locked before).
        for removed in ["OrderedNamespaceDeletion", "SidecarContainers", "GangScheduling", "AnyVolumeDataSource"] {
            let err = parse_feature_gates(&format!("{removed}=true")).unwrap_err();
            assert_eq!(err, format!("unrecognized feature gate: {removed}"));
        }
        // Names are case-sensitive, as upstream's.
        assert!(parse_feature_gates("poddeletioncost=true").is_err());
    }

    #[test]
    fn a_locked_gate_refuses_the_other_value() {
        assert_eq!(
            parse_feature_gates("SeparateTaintEvictionController=false").unwrap_err(),
            "cannot set feature gate SeparateTaintEvictionController to false, feature is locked to true"
        );
        assert_eq!(
            parse_feature_gates("DeclarativeValidationTakeover=true").unwrap_err(),
            "cannot set feature gate DeclarativeValidationTakeover to true, feature is locked to false"
        );
        assert!(resolve(&["SeparateTaintEvictionController=true", "DynamicResourceAllocation=true"]).is_ok());
    }

    #[test]
    fn terminating_replicas_is_on_at_1_37_and_off_on_request() {
        assert!(FeatureGates::default().enabled(TERMINATING_REPLICAS));
        assert!(resolve(&[]).unwrap().enabled(TERMINATING_REPLICAS));
        assert!(!resolve(&["DeploymentReplicaSetTerminatingReplicas=false"]).unwrap().enabled(TERMINATING_REPLICAS));
        // A later occurrence wins.
        let gates =
            resolve(&["DeploymentReplicaSetTerminatingReplicas=false", "DeploymentReplicaSetTerminatingReplicas=true"]);
        assert!(gates.unwrap().enabled(TERMINATING_REPLICAS));
    }

    #[test]
    fn all_beta_false_turns_beta_gates_off_but_not_those_set_by_name() {
        // PodDeletionCost is beta too, and kcm-rs always ranks by deletion
        // cost; likewise it always compares StatefulSet revisions semantically.
        assert_eq!(
            resolve(&["AllBeta=false"]).unwrap_err(),
            "feature gates PodDeletionCost=false (set by AllBeta=false), StatefulSetSemanticRevisionComparison=false \
             (set by AllBeta=false) are not implemented by kcm-rs; kcm-rs runs with PodDeletionCost=true, \
             StatefulSetSemanticRevisionComparison=true: remove them from --feature-gates or set them to those values"
        );
        let gates =
            resolve(&["AllBeta=false,PodDeletionCost=true,StatefulSetSemanticRevisionComparison=true"]).unwrap();
        assert!(!gates.enabled(TERMINATING_REPLICAS));
        assert!(!gates.enabled(MAX_UNAVAILABLE_STATEFUL_SET));
        assert!(!gates.enabled("WatchListClient"));
        assert!(gates.enabled("PodDeletionCost"));
        assert!(gates.enabled("InPlacePodVerticalScaling"), "GA gates are not beta");
    }

    #[test]
    fn all_alpha_true_is_refused_naming_the_alpha_gates_kcm_rs_cannot_honour() {
        assert_eq!(
            resolve(&["AllAlpha=true,StatefulSetRecreateStrategy=false,WorkloadWithJob=false"]).unwrap_err(),
            "feature gate TaintTolerationComparisonOperators=true (set by AllAlpha=true) is not implemented by \
             kcm-rs; kcm-rs runs with TaintTolerationComparisonOperators=false: remove it from --feature-gates or \
             set it to that value"
        );
        // Several at once are listed together.
        assert_eq!(
            resolve(&["AllAlpha=true,AllBeta=false"]).unwrap_err(),
            "feature gates PodDeletionCost=false (set by AllBeta=false), TaintTolerationComparisonOperators=true \
             (set by AllAlpha=true), StatefulSetSemanticRevisionComparison=false (set by AllBeta=false), \
             StatefulSetRecreateStrategy=true (set by AllAlpha=true), WorkloadWithJob=true (set by AllAlpha=true) \
             are not implemented by kcm-rs; kcm-rs runs with PodDeletionCost=true, \
             TaintTolerationComparisonOperators=false, StatefulSetSemanticRevisionComparison=true, \
             StatefulSetRecreateStrategy=false, WorkloadWithJob=false: remove them from --feature-gates or set them \
             to those values"
        );
        let gates = resolve(&[
            "AllAlpha=true,TaintTolerationComparisonOperators=false,StatefulSetRecreateStrategy=false",
            "WorkloadWithJob=false",
        ])
        .unwrap();
        assert!(gates.enabled("ClientsAllowCBOR"), "other alpha gates follow AllAlpha");
        assert!(!gates.enabled("TaintTolerationComparisonOperators"));
    }

    #[test]
    fn a_controller_gate_kcm_rs_cannot_honour_is_refused_by_name() {
        assert_eq!(
            resolve(&["TaintTolerationComparisonOperators=true"]).unwrap_err(),
            "feature gate TaintTolerationComparisonOperators=true is not implemented by kcm-rs; kcm-rs runs with \
             TaintTolerationComparisonOperators=false: remove it from --feature-gates or set it to that value"
        );
        assert!(resolve(&["TaintTolerationComparisonOperators=false,PodDeletionCost=true"]).is_ok());
        assert!(resolve(&["PodDeletionCost=false"]).is_err());
        // Not registered by the newest stored upstream: unrecognized, as there.
        assert_eq!(
            parse_feature_gates("DeploymentPodReplacementPolicy=true").unwrap_err(),
            "unrecognized feature gate: DeploymentPodReplacementPolicy"
        );
    }

    #[test]
    fn gates_of_other_components_are_accepted_and_change_nothing() {
        // Kubelet-only, apiserver-only, and controllers kcm-rs does not run.
        let gates = resolve(&["KubeletCrashLoopBackOffMax=false,NodeSwap=true", "MutatingAdmissionPolicy=false"]);
        let gates = gates.unwrap();
        assert!(!gates.enabled("KubeletCrashLoopBackOffMax"));
        assert!(gates.enabled(TERMINATING_REPLICAS));
        assert!(resolve(&["MaxUnavailableStatefulSet=false,HPAScaleToZero=true"]).is_ok());
    }

    #[test]
    fn help_lists_alpha_and_beta_gates_as_upstream() {
        let help = feature_gates_help();
        for line in [
            "Options are:\nAPIResponseCompression=true|false (BETA - default=true)\n",
            "\nAllAlpha=true|false (ALPHA - default=false)\n",
            "\nDeploymentReplicaSetTerminatingReplicas=true|false (BETA - default=true)\n",
            "\nTaintTolerationComparisonOperators=true|false (ALPHA - default=false)\n",
        ] {
            assert!(help.contains(line), "{line:?} in\n{help}");
        }
        assert!(!help.contains("DynamicResourceAllocation="), "GA gates are not listed");
    }

    #[test]
    fn defaults_at_1_37_follow_the_last_spec_at_or_below_it() {
        let spec = |name: &str| gate(name).unwrap_or_else(|| panic!("{name}")).at_target();
        assert_eq!(TARGET_MINOR, 37);
        // GA since 1.34, locked since 1.35: resourceclaim-controller runs under `*`.
        assert!(spec("DynamicResourceAllocation").default && spec("DynamicResourceAllocation").locked);
        // Alpha in the newest stored spec stays alpha; beta and on since 1.35 stays on.
        let alpha = spec("TaintTolerationComparisonOperators");
        assert_eq!((alpha.stage, alpha.default), (Stage::Alpha, false));
        assert!(spec(TERMINATING_REPLICAS).default);
        // A 1.37 entry counts.
        assert_eq!(spec("StorageCapacityScoring").stage, Stage::Beta);
        // The table is sorted and has no duplicate.
        let names: Vec<&str> = GATES.iter().map(|g| g.name).collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| (n.to_lowercase(), *n));
        sorted.dedup();
        assert_eq!(names, sorted);
        for (name, _) in CONTROLLER_GATES {
            assert!(gate(name).is_some(), "{name} is a 1.37 gate");
        }
        for g in GATES {
            assert!(g.specs.windows(2).all(|w| w[0].minor <= w[1].minor), "{} in version order", g.name);
        }
    }
}
