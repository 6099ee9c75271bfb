//! The sans-IO core: what the operator decides, as a pure function from a
//! [`Snapshot`] (the cached Widget, and `now`) to a [`Plan`].
//!
//! No client, no cache, no clock: the driver (`controller.rs`) reads those
//! and hands them in, so every decision is tested below by a table of
//! inputs and expected plans, without a cluster.
//!
//! The decision: grant `spec.replicas` up to [`MAX_REPLICAS`]; report it in
//! `status.replicas`, `status.observedGeneration`, and a `Ready` condition
//! whose `lastTransitionTime` moves only when its status changes. A Widget
//! whose status already says all that needs no write: [`Plan::UpToDate`].
//! That check is what keeps the controller from looping on the update
//! event its own status write causes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use crate::widget::{Widget, WidgetStatus};

/// Most replicas a Widget is granted.
pub const MAX_REPLICAS: i32 = 10;

/// The type of the one condition the operator maintains.
pub const READY: &str = "Ready";

/// What one sync decides from.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    /// The Widget, as cached.
    pub widget: &'a Widget,
    /// The time to stamp a condition transition with.
    pub now: Timestamp,
}

/// What one sync decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// The status already says what it should: write nothing.
    UpToDate,
    /// Replace the Widget's status with this one.
    WriteStatus(WidgetStatus),
}

/// Decides the Widget's status.
pub fn plan(snapshot: &Snapshot<'_>) -> Plan {
    let widget = snapshot.widget;
    let requested = widget.spec.replicas;
    let (granted, ready, reason, message) = match requested {
        r if r < 0 => (0, "False", "InvalidReplicas", format!("spec.replicas is {r}; it must not be negative")),
        r if r > MAX_REPLICAS => {
            (MAX_REPLICAS, "False", "TooManyReplicas", format!("{r} replicas asked, {MAX_REPLICAS} granted"))
        }
        r => (r, "True", "Granted", format!("{r} replicas granted")),
    };
    let current = widget.status.as_ref();
    let previous = current.and_then(|s| s.conditions.iter().find(|c| c.type_ == READY));
    let last_transition_time = match previous {
        Some(c) if c.status == ready => c.last_transition_time.clone(),
        _ => Time(snapshot.now),
    };
    let generation = widget.metadata.generation;
    let desired = WidgetStatus {
        observed_generation: generation,
        replicas: granted,
        conditions: vec![Condition {
            type_: READY.to_owned(),
            status: ready.to_owned(),
            reason: reason.to_owned(),
            message,
            observed_generation: generation,
            last_transition_time,
        }],
    };
    if current == Some(&desired) { Plan::UpToDate } else { Plan::WriteStatus(desired) }
}

#[cfg(test)]
mod tests {
    use kube::api::ObjectMeta;

    use super::*;
    use crate::widget::WidgetSpec;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn widget(generation: i64, replicas: i32, status: Option<WidgetStatus>) -> Widget {
        let metadata = ObjectMeta { name: Some("w".into()), generation: Some(generation), ..ObjectMeta::default() };
        Widget { metadata, spec: WidgetSpec { replicas }, status }
    }

    fn status(generation: i64, replicas: i32, ready: &str, reason: &str, message: &str, since: i64) -> WidgetStatus {
        WidgetStatus {
            observed_generation: Some(generation),
            replicas,
            conditions: vec![Condition {
                type_: READY.into(),
                status: ready.into(),
                reason: reason.into(),
                message: message.into(),
                observed_generation: Some(generation),
                last_transition_time: Time(at(since)),
            }],
        }
    }

    #[test]
    fn plans() {
        let granted_3 = status(1, 3, "True", "Granted", "3 replicas granted", 100);
        let too_many = "12 replicas asked, 10 granted";
        let negative = "spec.replicas is -1; it must not be negative";
        // (what, the cached Widget, now, the plan)
        let cases = [
            (
                "a new Widget gets its status, stamped now",
                widget(1, 3, None),
                100,
                Plan::WriteStatus(granted_3.clone()),
            ),
            ("a status that says it all is not rewritten", widget(1, 3, Some(granted_3.clone())), 900, Plan::UpToDate),
            (
                "a new generation, still ready: the transition time stays",
                widget(2, 5, Some(granted_3.clone())),
                900,
                Plan::WriteStatus(status(2, 5, "True", "Granted", "5 replicas granted", 100)),
            ),
            (
                "too many replicas: capped, and not ready from now on",
                widget(2, 12, Some(granted_3.clone())),
                200,
                Plan::WriteStatus(status(2, 10, "False", "TooManyReplicas", too_many, 200)),
            ),
            (
                "negative replicas: none granted, not ready",
                widget(1, -1, None),
                200,
                Plan::WriteStatus(status(1, 0, "False", "InvalidReplicas", negative, 200)),
            ),
            (
                "from invalid to too many: still not ready, the transition time stays",
                widget(3, 12, Some(status(2, 0, "False", "InvalidReplicas", negative, 150))),
                900,
                Plan::WriteStatus(status(3, 10, "False", "TooManyReplicas", too_many, 150)),
            ),
            (
                "exactly the maximum is granted",
                widget(1, 10, Some(status(1, 10, "True", "Granted", "10 replicas granted", 7))),
                900,
                Plan::UpToDate,
            ),
            (
                "zero is granted",
                widget(1, 0, None),
                100,
                Plan::WriteStatus(status(1, 0, "True", "Granted", "0 replicas granted", 100)),
            ),
        ];
        for (what, widget, now, expected) in cases {
            assert_eq!(plan(&Snapshot { widget: &widget, now: at(now) }), expected, "{what}");
        }
    }
}
