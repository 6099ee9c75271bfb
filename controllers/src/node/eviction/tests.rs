use super::*;

// === utils ===

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).expect("in range")
}

fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint { key: key.into(), value: (!value.is_empty()).then(|| value.into()), effect: effect.into(), time_added: None }
}

fn no_exec(key: &str) -> Taint {
    taint(key, "", NO_EXECUTE)
}

/// `key:NoExecute`, operator Exists, for `seconds` (None: for good).
fn tolerate(key: &str, seconds: Option<i64>) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(NO_EXECUTE.into()),
        toleration_seconds: seconds,
        value: None,
    }
}

const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The tolerations the API server's DefaultTolerationSeconds adds.
fn defaults() -> Vec<Toleration> {
    vec![tolerate(NOT_READY, Some(300)), tolerate(UNREACHABLE, Some(300))]
}

fn pod<'a>(node: &'a str, tolerations: &'a [Toleration]) -> PodFacts<'a> {
    PodFacts { uid: "uid-1", node_name: node, tolerations }
}

fn scheduled(node: &str, created: i64, fire: i64) -> Scheduled {
    Scheduled { uid: "uid-1".into(), node: node.into(), created_at: ts(created), fire_at: ts(fire) }
}

fn delete_at(created: i64, fire: i64) -> Decision {
    Decision::DeleteAt { created_at: ts(created), fire_at: ts(fire) }
}

// === tests ===

#[test]
fn decisions_follow_upstream() {
    let none: Vec<Toleration> = vec![];
    let defaults = defaults();
    let forever = vec![tolerate("dedicated", None)];
    let several = vec![tolerate(UNREACHABLE, Some(300)), tolerate("dedicated", None), tolerate("gpu", Some(60))];
    let zero = vec![tolerate("dedicated", Some(0))];
    let negative = vec![tolerate("dedicated", Some(-5))];
    // Only the first toleration of a taint counts, as upstream.
    let first_wins = vec![tolerate("dedicated", None), tolerate("dedicated", Some(10))];
    let wildcard = vec![Toleration { operator: Some("Exists".into()), ..Toleration::default() }];
    let huge = vec![tolerate("dedicated", Some(i64::MAX))];

    let unreachable = [no_exec(UNREACHABLE)];
    let dedicated = [no_exec("dedicated")];
    let three = [no_exec(UNREACHABLE), no_exec("dedicated"), no_exec("gpu")];
    let untainted: [Taint; 0] = [];
    let now = 1_000;

    type Case<'a> = (&'a str, Option<&'a [Taint]>, &'a [Toleration], Option<Scheduled>, Decision);
    let cases: Vec<Case<'_>> = vec![
        ("untolerated taint: delete at once", Some(&dedicated), &none, None, Decision::DeleteNow),
        ("default tolerations do not cover other taints", Some(&dedicated), &defaults, None, Decision::DeleteNow),
        (
            "untolerated taint replaces a later deletion",
            Some(&dedicated),
            &none,
            Some(scheduled("n1", 900, 1_200)),
            Decision::DeleteNow,
        ),
        ("tolerationSeconds: delete when it ends", Some(&unreachable), &defaults, None, delete_at(now, now + 300)),
        ("the minimum over the tolerations used", Some(&three), &several, None, delete_at(now, now + 60)),
        ("a toleration without seconds: never", Some(&dedicated), &forever, None, Decision::Nothing),
        (
            "... and a scheduled deletion is cancelled",
            Some(&dedicated),
            &forever,
            Some(scheduled("n1", 900, 950)),
            Decision::Cancel,
        ),
        ("the first tolerating toleration counts", Some(&dedicated), &first_wins, None, Decision::Nothing),
        ("an empty key with Exists tolerates everything", Some(&three), &wildcard, None, Decision::Nothing),
        ("tolerationSeconds 0: delete now", Some(&dedicated), &zero, None, delete_at(now, now)),
        ("negative tolerationSeconds: delete now", Some(&dedicated), &negative, None, delete_at(now, now)),
        ("seconds past the end of time: never", Some(&dedicated), &huge, None, Decision::Nothing),
        (
            "a scheduled deletion keeps its time",
            Some(&unreachable),
            &defaults,
            Some(scheduled("n1", 900, 1_200)),
            Decision::Nothing,
        ),
        (
            "a deletion scheduled at this very instant is redone from its start",
            Some(&three),
            &several,
            Some(scheduled("n1", now, now + 300)),
            delete_at(now, now + 60),
        ),
        ("taints removed: cancel", Some(&untainted), &none, Some(scheduled("n1", 900, 1_200)), Decision::Cancel),
        ("taints removed, nothing scheduled", Some(&untainted), &none, None, Decision::Nothing),
        (
            "node deleted: the scheduled deletion stands",
            None,
            &defaults,
            Some(scheduled("n1", 900, 1_200)),
            Decision::Nothing,
        ),
        ("node deleted, nothing scheduled", None, &none, None, Decision::Nothing),
    ];
    for (what, taints, tolerations, existing, want) in cases {
        let got = decide(taints, Some(&pod("n1", tolerations)), existing.as_ref(), ts(now));
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn a_gone_pod_cancels_its_deletion() {
    let taints = [no_exec("dedicated")];
    assert_eq!(decide(Some(&taints), None, Some(&scheduled("n1", 900, 1_200)), ts(1_000)), Decision::Cancel);
    assert_eq!(decide(Some(&taints), None, None, ts(1_000)), Decision::Nothing);
}

#[test]
fn a_pod_rescheduled_elsewhere_is_judged_on_its_new_node() {
    let defaults = defaults();
    let now = ts(1_000);
    let old = scheduled("n1", 900, 1_200);
    // Now on an untainted node (or one the controller does not know).
    let moved = pod("n2", &defaults);
    assert_eq!(decide(Some(&[]), Some(&moved), Some(&old), now), Decision::Cancel);
    assert_eq!(decide(None, Some(&moved), Some(&old), now), Decision::Cancel);
    // Recreated under the same name on a tainted node: its own clock.
    let recreated = PodFacts { uid: "uid-2", ..pod("n1", &defaults) };
    let unreachable = [no_exec(UNREACHABLE)];
    assert_eq!(decide(Some(&unreachable), Some(&recreated), Some(&old), now), delete_at(1_000, 1_300));
    // Not scheduled yet: nothing to do until the node is known.
    let unscheduled = pod("", &defaults);
    assert_eq!(decide(Some(&unreachable), Some(&unscheduled), None, now), Decision::Nothing);
}

#[test]
fn a_timeline_from_taint_to_removal() {
    let defaults = defaults();
    let facts = pod("n1", &defaults);
    let taints = [no_exec(UNREACHABLE)];
    // 10:00:00 the taint is seen: deletion at 10:05:00.
    let first = decide(Some(&taints), Some(&facts), None, ts(36_000));
    assert_eq!(first, delete_at(36_000, 36_300));
    let state = scheduled("n1", 36_000, 36_300);
    // 10:01:00 another look (a pod update): the time stands.
    assert_eq!(decide(Some(&taints), Some(&facts), Some(&state), ts(36_060)), Decision::Nothing);
    // 10:02:00 the taint goes: cancelled.
    assert_eq!(decide(Some(&[]), Some(&facts), Some(&state), ts(36_120)), Decision::Cancel);
}

#[test]
fn tolerations_match_as_the_api_defines() {
    let t = taint("k", "v", NO_EXECUTE);
    let tol = |key: Option<&str>, op: Option<&str>, value: Option<&str>, effect: Option<&str>| Toleration {
        key: key.map(Into::into),
        operator: op.map(Into::into),
        value: value.map(Into::into),
        effect: effect.map(Into::into),
        toleration_seconds: None,
    };
    let cases = [
        ("Equal with the value", tol(Some("k"), Some("Equal"), Some("v"), Some(NO_EXECUTE)), true),
        ("Equal is the default operator", tol(Some("k"), None, Some("v"), None), true),
        ("Equal with another value", tol(Some("k"), Some("Equal"), Some("w"), None), false),
        ("Exists ignores the value", tol(Some("k"), Some("Exists"), None, None), true),
        ("another key", tol(Some("j"), Some("Exists"), None, None), false),
        ("another effect", tol(Some("k"), Some("Exists"), None, Some("NoSchedule")), false),
        ("empty key with Exists", tol(None, Some("Exists"), None, None), true),
        ("unknown operator", tol(Some("k"), Some("Lt"), Some("v"), None), false),
    ];
    for (what, toleration, want) in cases {
        assert_eq!(tolerates(&toleration, &t), want, "{what}");
    }
}

#[test]
fn only_no_execute_taints_count() {
    let taints =
        [taint("a", "", "NoSchedule"), no_exec("b"), taint("c", "", "PreferNoSchedule"), taint("d", "x", NO_EXECUTE)];
    let kept: Vec<String> = no_execute_taints(&taints).into_iter().map(|t| t.key).collect();
    assert_eq!(kept, ["b", "d"]);
}

#[test]
fn min_toleration_time_as_upstream() {
    let t = |s: Option<i64>| tolerate("k", s);
    let (a, b, c, never) = (t(Some(300)), t(Some(60)), t(Some(0)), t(None));
    assert_eq!(min_toleration_time(&[]), Some(Duration::ZERO));
    assert_eq!(min_toleration_time(&[&a, &never, &b]), Some(Duration::from_secs(60)));
    assert_eq!(min_toleration_time(&[&a, &c]), Some(Duration::ZERO));
    assert_eq!(min_toleration_time(&[&never, &never]), None);
}

#[test]
fn the_disruption_condition_is_written_once() {
    let now = ts(2_000);
    let written = disruption_condition(&[], now).expect("absent: written");
    assert_eq!(written.type_, "DisruptionTarget");
    assert_eq!(written.status, "True");
    assert_eq!(written.reason.as_deref(), Some("DeletionByTaintManager"));
    assert_eq!(written.message.as_deref(), Some("Taint manager: deleting due to NoExecute taint"));
    assert_eq!(written.last_transition_time, Some(Time(now)));

    // Already there (an earlier try): nothing to write.
    let ready = PodCondition { type_: "Ready".into(), status: "True".into(), ..PodCondition::default() };
    assert_eq!(disruption_condition(&[ready.clone(), written.clone()], ts(2_500)), None);

    // Written by someone else with another reason: rewritten, same
    // transition time since the status did not flip.
    let other = PodCondition { reason: Some("PreemptionByScheduler".into()), ..written.clone() };
    let rewritten = disruption_condition(&[ready, other], ts(2_500)).expect("changed");
    assert_eq!(rewritten.reason.as_deref(), Some("DeletionByTaintManager"));
    assert_eq!(rewritten.last_transition_time, Some(Time(now)));

    // False before: flips, transition now.
    let off = PodCondition { status: "False".into(), ..written };
    let flipped = disruption_condition(&[off], ts(3_000)).expect("flipped");
    assert_eq!(flipped.last_transition_time, Some(Time(ts(3_000))));
}

#[test]
fn event_messages_are_upstreams() {
    assert_eq!(marking_message("default", "web-1"), "Marking for deletion Pod default/web-1");
    assert_eq!(cancelling_message("default", "web-1"), "Cancelling deletion of Pod default/web-1");
}
