use std::collections::BTreeMap;

use jiff::Timestamp;

use super::*;

// === utils ===

fn gvr(group: &str, resource: &str) -> Gvr {
    Gvr { group: group.into(), version: "v1".into(), resource: resource.into() }
}

fn ts(s: &str) -> Timestamp {
    s.parse().expect("timestamp")
}

fn pod(phase: &str, grace: Option<i64>) -> PodGrace {
    PodGrace { phase: Some(phase.into()), grace_seconds: grace }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn find<'a>(cs: &'a [Condition], t: &str) -> &'a Condition {
    cs.iter().find(|c| c.type_ == t).expect("condition present")
}

// === tests ===

#[test]
fn group_versions_parse_as_go_does() {
    type Parsed = Result<(&'static str, &'static str), &'static str>;
    let cases: &[(&str, Parsed)] = &[
        ("v1", Ok(("", "v1"))),
        ("apps/v1", Ok(("apps", "v1"))),
        ("a/b/c", Err("unexpected GroupVersion string: a/b/c")),
    ];
    for (input, want) in cases {
        let got = parse_group_version(input);
        let want = want.map(|(g, v)| (g.to_owned(), v.to_owned())).map_err(str::to_owned);
        assert_eq!(got, want, "{input}");
    }
}

#[test]
fn only_namespaced_top_level_deletable_types_are_content() {
    let verbs = strings(&["get", "list", "delete", "deletecollection"]);
    assert!(deletable("pods", true, &verbs));
    assert!(!deletable("pods/status", true, &verbs));
    assert!(!deletable("nodes", false, &verbs));
    assert!(!deletable("bindings", true, &strings(&["create"])));
    assert!(supports_delete_collection(&verbs));
    assert!(!supports_delete_collection(&strings(&["list", "delete"])));
}

#[test]
fn estimate_is_the_longest_grace_of_live_pods_until_it_has_passed() {
    let deleted = ts("2026-01-01T00:00:00Z");
    let pods = [pod("Running", Some(30)), pod("Pending", Some(10)), pod("Succeeded", Some(600))];
    let cases = [
        ("2026-01-01T00:00:12Z", 30),
        ("2026-01-01T00:00:29Z", 30),
        ("2026-01-01T00:00:30Z", 0),
        ("2026-01-01T00:05:00Z", 0),
    ];
    for (now, want) in cases {
        assert_eq!(estimate_graceful_termination(&pods, Some(deleted), ts(now)), want, "at {now}");
    }
    assert_eq!(estimate_graceful_termination(&[pod("Failed", Some(30))], Some(deleted), deleted), 0);
    assert_eq!(estimate_graceful_termination(&[pod("Running", None)], Some(deleted), deleted), 0);
    assert_eq!(estimate_graceful_termination(&[], None, deleted), 0);
}

#[test]
fn leftovers_wait_on_the_estimate_then_on_finalizers_else_fail() {
    let pods = gvr("", "pods");
    assert_eq!(remaining_outcome("ns", &pods, &[], 30), Ok(Remaining::default()));
    let two = [vec![], vec![]];
    assert_eq!(
        remaining_outcome("ns", &pods, &two, 30),
        Ok(Remaining { estimate: 30, count: 2, ..Default::default() })
    );
    let held = [vec!["example.com/x".to_owned()], vec![]];
    assert_eq!(
        remaining_outcome("ns", &gvr("example.com", "widgets"), &held, 0),
        Ok(Remaining {
            estimate: FINALIZER_ESTIMATE_SECONDS,
            count: 2,
            finalizers: BTreeMap::from([("example.com/x".to_owned(), 1)]),
        })
    );
    assert_eq!(
        remaining_outcome("ns", &gvr("apps", "deployments"), &[vec![]], 0),
        Err("unexpected items still remain in namespace: ns for gvr: apps/v1, Resource=deployments".to_owned())
    );
}

#[test]
fn a_clean_pass_has_five_healthy_conditions_and_finalizes() {
    let report = DeletionReport::default();
    let cs = conditions(&report);
    let want = [
        (condition_type::DISCOVERY_FAILURE, "ResourcesDiscovered", "All resources successfully discovered"),
        (
            condition_type::GROUP_VERSION_PARSING_FAILURE,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        (
            condition_type::CONTENT_FAILURE,
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        (condition_type::CONTENT_REMAINING, "ContentRemoved", "All content successfully removed"),
        (condition_type::FINALIZERS_REMAINING, "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
    ];
    assert_eq!(cs.len(), 5);
    for (c, (t, reason, message)) in cs.iter().zip(want) {
        assert_eq!((c.type_, c.failing, c.reason, c.message.as_str()), (t, false, reason, message));
    }
    assert_eq!(next_step(&report), NextStep::Finalize);
}

#[test]
fn remaining_pods_name_their_count_and_requeue_after_half_the_estimate() {
    let mut report = DeletionReport::default();
    report.record(&gvr("", "pods"), Ok(Remaining { estimate: 30, count: 2, ..Default::default() }));
    let cs = conditions(&report);
    let c = find(&cs, condition_type::CONTENT_REMAINING);
    assert!(c.failing);
    assert_eq!(c.reason, "SomeResourcesRemain");
    assert_eq!(c.message, "Some resources are remaining: pods. has 2 resource instances");
    assert_eq!(next_step(&report), NextStep::Requeue(Duration::from_secs(16)));
}

#[test]
fn finalizers_are_tallied_and_named() {
    let mut report = DeletionReport::default();
    let held = remaining_outcome("ns", &gvr("example.com", "widgets"), &[vec!["example.com/x".to_owned()]], 0);
    report.record(&gvr("example.com", "widgets"), held);
    let cs = conditions(&report);
    let c = find(&cs, condition_type::FINALIZERS_REMAINING);
    assert_eq!((c.failing, c.reason), (true, "SomeFinalizersRemain"));
    assert_eq!(
        c.message,
        "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances"
    );
    assert_eq!(
        find(&cs, condition_type::CONTENT_REMAINING).message,
        "Some resources are remaining: widgets.example.com has 1 resource instances"
    );
    assert_eq!(next_step(&report), NextStep::Requeue(Duration::from_secs(8)));
}

#[test]
fn failures_show_in_their_conditions_and_fail_the_sync() {
    let mut report = DeletionReport::default();
    report.discovery_failures.insert("broken.example.com/v1".into(), "503 Service Unavailable".into());
    report.parse_failures.push("unexpected GroupVersion string: a/b/c".into());
    report.record(&gvr("", "secrets"), Err("b failed".into()));
    report.record(&gvr("", "configmaps"), Err("a failed".into()));
    let cs = conditions(&report);
    let d = find(&cs, condition_type::DISCOVERY_FAILURE);
    assert_eq!((d.failing, d.reason), (true, "DiscoveryFailed"));
    assert_eq!(
        d.message,
        "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: \
         broken.example.com/v1: 503 Service Unavailable"
    );
    let p = find(&cs, condition_type::GROUP_VERSION_PARSING_FAILURE);
    assert_eq!(
        (p.failing, p.reason, p.message.as_str()),
        (true, "GroupVersionParsingFailed", "unexpected GroupVersion string: a/b/c")
    );
    let c = find(&cs, condition_type::CONTENT_FAILURE);
    assert_eq!((c.failing, c.reason), (true, "ContentDeletionFailed"));
    assert_eq!(c.message, "Failed to delete all resource types, 2 remaining: a failed, b failed");
    assert!(matches!(next_step(&report), NextStep::Fail(_)));
}

#[test]
fn conditions_are_written_only_when_they_change() {
    let t0 = ts("2026-01-01T00:00:00Z");
    let t1 = ts("2026-01-01T00:01:00Z");
    let healthy = conditions(&DeletionReport::default());
    let first = merge_conditions(&[], &healthy, t0).expect("added");
    assert_eq!(first.len(), 5);
    assert_eq!(merge_conditions(&first, &healthy, t1), None, "unchanged: no write");

    let mut report = DeletionReport::default();
    report.remaining.insert("pods.".into(), 2);
    let flipped = merge_conditions(&first, &conditions(&report), t1).expect("flipped");
    let c = flipped.iter().find(|c| c.type_ == condition_type::CONTENT_REMAINING).expect("present");
    assert_eq!((c.status.as_str(), c.last_transition_time.as_ref().map(|t| t.0)), ("True", Some(t1)));

    report.remaining.insert("pods.".into(), 1);
    let reworded = merge_conditions(&flipped, &conditions(&report), ts("2026-01-01T00:02:00Z")).expect("reworded");
    let c = reworded.iter().find(|c| c.type_ == condition_type::CONTENT_REMAINING).expect("present");
    assert_eq!(c.message.as_deref(), Some("Some resources are remaining: pods. has 1 resource instances"));
    assert_eq!(c.last_transition_time.as_ref().map(|t| t.0), Some(t1), "same status: transition time kept");
}

#[test]
fn finalizing_removes_only_kubernetes() {
    assert_eq!(finalized(&strings(&["kubernetes", "b", "a", "b"])), strings(&["a", "b"]));
    assert_eq!(finalized(&strings(&["kubernetes"])), Vec::<String>::new());
}
