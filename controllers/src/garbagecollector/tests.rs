//! Table tests of the garbage collector's rules: the graph's effects and
//! the `attemptToDelete` decisions, with upstream's cases.

use std::collections::{HashMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde_json::json;

use super::decide::{self, Decision, Fetched, Live, Lookup, Propagation, attempt_to_delete};
use super::graph::{DependentView, Effect, Graph, NodeView};
use super::{FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN, Identity, REASON_OWNER_REF_INVALID_NAMESPACE};

// === utils ===

const RS: (&str, &str) = ("apps/v1", "ReplicaSet");
const POD: (&str, &str) = ("v1", "Pod");
const NODE: (&str, &str) = ("v1", "Node");

fn owner(kind: (&str, &str), name: &str, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: kind.0.into(),
        kind: kind.1.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        controller: Some(true),
        block_owner_deletion: block.then_some(true),
    }
}

fn meta(ns: &str, name: &str, owners: Vec<OwnerReference>) -> ObjectMeta {
    ObjectMeta {
        namespace: (!ns.is_empty()).then(|| ns.to_owned()),
        name: Some(name.into()),
        uid: Some(format!("uid-{name}")),
        resource_version: Some("7".into()),
        owner_references: (!owners.is_empty()).then_some(owners),
        ..ObjectMeta::default()
    }
}

fn deleting(mut m: ObjectMeta, finalizer: &str) -> ObjectMeta {
    m.deletion_timestamp = Some(Time(jiff::Timestamp::from_second(1).unwrap()));
    m.finalizers = Some(vec![finalizer.to_owned()]);
    m
}

fn ident(kind: (&str, &str), ns: &str, name: &str) -> Identity {
    Identity {
        api_version: kind.0.into(),
        kind: kind.1.into(),
        namespace: ns.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}

fn del(name: &str) -> Effect {
    Effect::AttemptToDelete(format!("uid-{name}"))
}

fn observe(graph: &mut Graph, kind: (&str, &str), m: ObjectMeta) -> Vec<Effect> {
    graph.observe(kind.0, kind.1, &m).expect("has a uid")
}

fn set(effects: Vec<Effect>) -> HashSet<String> {
    effects.into_iter().map(|e| format!("{e:?}")).collect()
}

// === graph ===

#[test]
fn a_dependent_of_an_unseen_owner_creates_a_virtual_owner_queued_for_verification() {
    let mut g = Graph::new();
    let fx = observe(&mut g, POD, meta("ns", "p", vec![owner(RS, "rs", true)]));
    assert_eq!(fx, [del("rs")]);
    let rs = g.node("uid-rs").unwrap();
    assert!(!rs.observed);
    assert_eq!(rs.identity, ident(RS, "ns", "rs"));
    assert_eq!(rs.dependents.len(), 1);
    assert!(rs.dependents[0].blocks_owner);
    // Observing the owner makes it real and queues nothing.
    assert_eq!(observe(&mut g, RS, meta("ns", "rs", vec![])), []);
    assert!(g.node("uid-rs").unwrap().observed);
    assert_eq!(g.len(), 2);
}

#[test]
fn an_observed_owner_deleted_queues_its_dependents_and_is_recorded_absent() {
    let mut g = Graph::new();
    observe(&mut g, RS, meta("ns", "rs", vec![]));
    assert_eq!(observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)])), []);
    observe(&mut g, POD, meta("ns", "b", vec![owner(RS, "rs", true)]));
    let fx = g.observe_delete(RS.0, RS.1, &meta("ns", "rs", vec![])).unwrap();
    assert_eq!(set(fx), set(vec![del("a"), del("b")]));
    assert!(!g.contains("uid-rs"));
    assert!(g.absent_owners().contains(&ident(RS, "ns", "rs")));
    // The dependents keep their references: nothing else changed.
    assert_eq!(g.node("uid-a").unwrap().owners.len(), 1);
}

#[test]
fn a_deleted_dependent_requeues_an_owner_deleting_its_dependents() {
    let mut g = Graph::new();
    observe(&mut g, RS, meta("ns", "rs", vec![]));
    observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), FINALIZER_DELETE_DEPENDENTS));
    let fx = g.observe_delete(POD.0, POD.1, &meta("ns", "a", vec![owner(RS, "rs", true)])).unwrap();
    assert_eq!(fx, [del("rs")]);
    assert!(g.node("uid-rs").unwrap().dependents.is_empty());
}

#[test]
fn deletion_transitions_queue_as_upstream() {
    // (finalizer, expected effects when the owner starts being deleted)
    let cases = [
        (FINALIZER_ORPHAN, vec![Effect::AttemptToOrphan("uid-rs".into())]),
        (FINALIZER_DELETE_DEPENDENTS, vec![del("a"), del("rs")]),
        ("example.com/other", vec![]),
    ];
    for (finalizer, want) in cases {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        let fx = observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), finalizer));
        assert_eq!(fx, want, "{finalizer}");
        assert_eq!(g.node("uid-rs").unwrap().deleting_dependents, finalizer == FINALIZER_DELETE_DEPENDENTS);
        // The same state observed again is no new transition.
        assert_eq!(observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), finalizer)), [], "{finalizer}");
    }
}

#[test]
fn an_object_first_seen_being_deleted_with_a_finalizer_transitions_at_once() {
    let mut g = Graph::new();
    let fx = observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), FINALIZER_ORPHAN));
    assert_eq!(fx, [Effect::AttemptToOrphan("uid-rs".into())]);
}

#[test]
fn removing_or_unblocking_a_blocking_reference_requeues_the_owner() {
    let blocking = owner(RS, "rs", true);
    let unblocked = OwnerReference { block_owner_deletion: Some(false), ..blocking.clone() };
    // (new references of the dependent, expected effects)
    let cases = [(vec![], vec![del("rs")]), (vec![unblocked], vec![del("rs")]), (vec![blocking.clone()], vec![])];
    for (after, want) in cases {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        observe(&mut g, POD, meta("ns", "a", vec![blocking.clone()]));
        let fx = observe(&mut g, POD, meta("ns", "a", after.clone()));
        assert_eq!(fx, want, "{after:?}");
        assert_eq!(g.node("uid-rs").unwrap().dependents.len(), after.len());
    }
}

#[test]
fn a_reference_to_an_observed_owner_in_another_namespace_is_reported_and_verified() {
    let mut g = Graph::new();
    observe(&mut g, RS, meta("other", "rs", vec![]));
    let fx = observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    assert_eq!(
        fx,
        [
            Effect::Warning {
                regarding: ident(POD, "ns", "a"),
                reason: REASON_OWNER_REF_INVALID_NAMESPACE,
                message: "ownerRef [apps/v1/ReplicaSet, namespace: ns, name: rs, uid: uid-rs] does not exist in \
                          namespace \"ns\""
                    .into(),
            },
            del("a"),
        ]
    );
}

#[test]
fn the_owner_observed_after_a_dependent_in_another_namespace_reports_it() {
    let mut g = Graph::new();
    observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    let fx = observe(&mut g, RS, meta("other", "rs", vec![]));
    assert_eq!(fx.len(), 2, "{fx:?}");
    assert!(matches!(&fx[0], Effect::Warning { reason: REASON_OWNER_REF_INVALID_NAMESPACE, .. }));
    assert_eq!(fx[1], del("a"));
}

#[test]
fn namespaced_dependents_of_cluster_scoped_owners_are_valid_once_the_owner_is_observed() {
    let mut g = Graph::new();
    observe(&mut g, NODE, meta("", "n1", vec![]));
    assert_eq!(observe(&mut g, POD, meta("ns", "a", vec![owner(NODE, "n1", false)])), []);
    // A virtual cluster-scoped owner first named from a namespace: a second
    // namespaced dependent is verified (upstream #98040).
    let mut g = Graph::new();
    observe(&mut g, POD, meta("ns", "a", vec![owner(NODE, "n1", false)]));
    assert_eq!(observe(&mut g, POD, meta("other", "b", vec![owner(NODE, "n1", false)])), [del("b")]);
}

#[test]
fn references_with_other_coordinates_than_the_owner_are_verified() {
    let mut g = Graph::new();
    observe(&mut g, RS, meta("ns", "rs", vec![]));
    let wrong_name = OwnerReference { name: "other".into(), ..owner(RS, "rs", true) };
    assert_eq!(observe(&mut g, POD, meta("ns", "a", vec![wrong_name])), [del("a")]);
}

#[test]
fn a_virtual_delete_removes_a_virtual_owner_and_queues_its_dependents() {
    let mut g = Graph::new();
    observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    let fx = g.virtual_delete(&ident(RS, "ns", "rs"));
    assert_eq!(fx, [del("a")]);
    assert!(!g.contains("uid-rs"));
    assert!(g.absent_owners().contains(&ident(RS, "ns", "rs")));
}

#[test]
fn a_virtual_delete_keeps_a_virtual_owner_other_dependents_name_differently() {
    let mut g = Graph::new();
    observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    let as_deployment = OwnerReference { kind: "Deployment".into(), ..owner(RS, "rs", true) };
    observe(&mut g, POD, meta("ns", "b", vec![as_deployment]));
    let fx = g.virtual_delete(&ident(RS, "ns", "rs"));
    assert_eq!(fx, [del("a"), Effect::AttemptToDeleteRateLimited("uid-rs".into())]);
    // The node now carries the other identity, to be verified in turn.
    assert_eq!(g.node("uid-rs").unwrap().identity.kind, "Deployment");
}

#[test]
fn a_virtual_delete_never_removes_an_observed_node() {
    let mut g = Graph::new();
    observe(&mut g, RS, meta("ns", "rs", vec![]));
    observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    let stale = Identity { name: "old-name".into(), ..ident(RS, "ns", "rs") };
    assert_eq!(g.virtual_delete(&stale), []);
    assert!(g.contains("uid-rs"));
}

#[test]
fn a_relist_removes_the_observed_nodes_of_its_type_it_did_not_name() {
    let mut g = Graph::new();
    observe(&mut g, RS, meta("ns", "rs", vec![]));
    observe(&mut g, RS, meta("ns", "kept", vec![]));
    observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
    let listed = HashSet::from(["uid-kept".to_owned()]);
    assert_eq!(g.remove_unlisted(RS.0, RS.1, &listed), [del("a")]);
    assert!(!g.contains("uid-rs") && g.contains("uid-kept") && g.contains("uid-a"));
}

#[test]
fn objects_without_a_uid_are_refused() {
    let mut g = Graph::new();
    let mut m = meta("ns", "a", vec![]);
    m.uid = None;
    assert!(g.observe(POD.0, POD.1, &m).is_err());
    assert!(g.is_empty());
}

// === decisions ===

fn view(deps: Vec<DependentView>) -> NodeView {
    NodeView {
        identity: ident(POD, "ns", "item"),
        observed: true,
        being_deleted: false,
        deleting_dependents: false,
        owners: vec![],
        dependents: deps,
    }
}

fn dep(name: &str, blocks: bool, deleting_dependents: bool) -> DependentView {
    DependentView { identity: ident(POD, "ns", name), deleting_dependents, blocks_owner: blocks }
}

fn live(owners: Vec<OwnerReference>, finalizers: &[&str]) -> Fetched {
    Fetched::Found(Live {
        uid: "uid-item".into(),
        resource_version: Some("7".into()),
        owner_references: owners,
        finalizers: finalizers.iter().map(|f| f.to_string()).collect(),
        being_deleted: false,
    })
}

fn lookups(pairs: &[(&str, Lookup)]) -> HashMap<String, Lookup> {
    pairs.iter().map(|(n, l)| (format!("uid-{n}"), *l)).collect()
}

const SOLID: Lookup = Lookup::Found { deleting_dependents: false };
const WAITING: Lookup = Lookup::Found { deleting_dependents: true };

fn delete(propagation: Propagation, owners: Vec<OwnerReference>, unblock_first: bool) -> Decision {
    Decision::Delete { propagation, resource_version: Some("7".into()), owner_references: owners, unblock_first }
}

/// (case, item, fetched, lookups, decision)
type Case = (&'static str, NodeView, Fetched, HashMap<String, Lookup>, Decision);

#[test]
fn attempt_to_delete_follows_upstream() {
    let a = owner(RS, "a", true);
    let b = owner(RS, "b", false);
    let uids = |names: &[&str]| names.iter().map(|n| format!("uid-{n}")).collect::<Vec<_>>();
    let being_deleted = NodeView { being_deleted: true, ..view(vec![]) };
    let with_deps = view(vec![dep("d", true, false)]);
    let with_cycle = view(vec![dep("d", true, true)]);
    let cases: Vec<Case> = vec![
        (
            "being deleted: wait for it to go",
            being_deleted,
            Fetched::NotYet,
            lookups(&[]),
            Decision::Nothing("being deleted"),
        ),
        ("first read it live", view(vec![]), Fetched::NotYet, lookups(&[]), Decision::Fetch),
        ("gone: virtual delete", view(vec![]), Fetched::Absent, lookups(&[]), Decision::VirtualDelete),
        (
            "replaced (other uid): virtual delete",
            view(vec![]),
            Fetched::Found(Live { uid: "uid-new".into(), ..Live::default() }),
            lookups(&[]),
            Decision::VirtualDelete,
        ),
        ("no owner", view(vec![]), live(vec![], &[]), lookups(&[]), Decision::Nothing("no owner")),
        (
            "owners unknown: look them up",
            view(vec![]),
            live(vec![a.clone(), b.clone()], &[]),
            lookups(&[("a", SOLID)]),
            Decision::LookUp(vec![b.clone()]),
        ),
        (
            "owner present (e.g. not yet watched): keep",
            view(vec![]),
            live(vec![a.clone()], &[]),
            lookups(&[("a", SOLID)]),
            Decision::Nothing("at least one owner exists"),
        ),
        (
            "owner absent: background delete",
            view(vec![]),
            live(vec![a.clone()], &[]),
            lookups(&[("a", Lookup::Absent)]),
            delete(Propagation::Background, vec![a.clone()], false),
        ),
        (
            "one owner left: drop the dangling reference only",
            view(vec![]),
            live(vec![a.clone(), b.clone()], &[]),
            lookups(&[("a", Lookup::Absent), ("b", SOLID)]),
            Decision::RemoveOwnerReferences(uids(&["a"])),
        ),
        (
            "solid and waiting owner: drop the waiting reference",
            view(vec![]),
            live(vec![a.clone(), b.clone()], &[]),
            lookups(&[("a", WAITING), ("b", SOLID)]),
            Decision::RemoveOwnerReferences(uids(&["a"])),
        ),
        (
            "all owners gone: delete",
            view(vec![]),
            live(vec![a.clone(), b.clone()], &[]),
            lookups(&[("a", Lookup::Absent), ("b", Lookup::Absent)]),
            delete(Propagation::Background, vec![a.clone(), b.clone()], false),
        ),
        (
            "owner waiting, item without dependents: background",
            view(vec![]),
            live(vec![a.clone()], &[]),
            lookups(&[("a", WAITING)]),
            delete(Propagation::Background, vec![a.clone()], false),
        ),
        (
            "owner waiting, item with dependents: foreground",
            with_deps,
            live(vec![a.clone()], &[]),
            lookups(&[("a", WAITING)]),
            delete(Propagation::Foreground, vec![a.clone()], false),
        ),
        (
            "owner and a dependent waiting: unblock, then foreground",
            with_cycle,
            live(vec![a.clone()], &[]),
            lookups(&[("a", WAITING)]),
            delete(Propagation::Foreground, vec![a.clone()], true),
        ),
        (
            "orphan finalizer on the item is honoured",
            view(vec![]),
            live(vec![a.clone()], &[FINALIZER_ORPHAN]),
            lookups(&[("a", Lookup::Absent)]),
            delete(Propagation::Orphan, vec![a.clone()], false),
        ),
        (
            "foreground finalizer on the item is honoured",
            view(vec![]),
            live(vec![a.clone()], &[FINALIZER_DELETE_DEPENDENTS]),
            lookups(&[("a", Lookup::Absent)]),
            delete(Propagation::Foreground, vec![a.clone()], false),
        ),
        (
            "cluster-scoped item, namespaced owner: invalid",
            view(vec![]),
            live(vec![a.clone()], &[]),
            lookups(&[("a", Lookup::NamespacedOwnerOfClusterScoped)]),
            Decision::Invalid("cluster-scoped objects cannot refer to namespaced owners"),
        ),
    ];
    for (case, item, fetched, lookups, want) in cases {
        assert_eq!(attempt_to_delete(&item, &fetched, &lookups), want, "{case}");
    }
}

#[test]
fn an_item_deleting_its_dependents_waits_for_the_blocking_ones() {
    let deleting = |deps| NodeView { being_deleted: true, deleting_dependents: true, ..view(deps) };
    let found = live(vec![], &[FINALIZER_DELETE_DEPENDENTS]);
    // (dependents, decision)
    let cases = [
        (vec![], Decision::RemoveFinalizer(FINALIZER_DELETE_DEPENDENTS)),
        (vec![dep("x", false, false)], Decision::RemoveFinalizer(FINALIZER_DELETE_DEPENDENTS)),
        (vec![dep("x", true, false), dep("y", false, false)], Decision::AttemptDependents(vec!["uid-x".into()])),
        (vec![dep("x", true, true)], Decision::Nothing("every blocking dependent is deleting its own dependents")),
    ];
    for (deps, want) in cases {
        let item = deleting(deps.clone());
        assert_eq!(attempt_to_delete(&item, &found, &HashMap::new()), want, "{deps:?}");
    }
}

#[test]
fn patch_bodies_are_upstream_s() {
    let a = owner(RS, "a", true);
    let b = owner(RS, "b", false);
    let l = Live {
        uid: "uid-item".into(),
        resource_version: Some("7".into()),
        owner_references: vec![a.clone(), b.clone()],
        finalizers: vec![FINALIZER_ORPHAN.into(), "x".into()],
        being_deleted: true,
    };
    assert_eq!(
        decide::delete_owner_refs_strategic("uid-item", &["uid-a".into()]),
        json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "uid-a"}], "uid": "uid-item"}})
    );
    assert_eq!(
        decide::delete_owner_refs_merge(&l, &["uid-a".into()]),
        json!({"metadata": {"ownerReferences": [b], "resourceVersion": "7"}})
    );
    let unblocked = OwnerReference { block_owner_deletion: Some(false), ..a.clone() };
    assert_eq!(
        decide::unblock_owner_refs_strategic("uid-item", &l.owner_references),
        json!({"metadata": {"ownerReferences": [unblocked.clone()], "uid": "uid-item"}})
    );
    assert_eq!(
        decide::unblock_owner_refs_merge(&l),
        json!({"metadata": {"ownerReferences": [unblocked, b], "resourceVersion": "7"}})
    );
    assert_eq!(
        decide::remove_finalizer_merge(&l, FINALIZER_ORPHAN),
        Some(json!({"metadata": {"finalizers": ["x"], "resourceVersion": "7"}}))
    );
    assert_eq!(decide::remove_finalizer_merge(&l, FINALIZER_DELETE_DEPENDENTS), None);
}
