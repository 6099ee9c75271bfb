//! The reconciler's cases of upstream's `reconciler_test.go`, the
//! multi-attach messages of `Test_ReportWaitingOnDetach`, and the volume
//! resolution of `util.CreateVolumeSpec`, told through one node's plan.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kcm_objects::Pod;
use serde_json::{Value, json};

use super::plan::*;
use super::view::*;
use super::volume::*;
use super::wanted::Resolutions;
use crate::testing::ts;

const NODE: &str = "node-1";
const MAX_WAIT: SignedDuration = SignedDuration::from_mins(6);

fn settings(force_detach_on_timeout: bool) -> Settings {
    Settings { max_wait_unmount: MAX_WAIT, force_detach_on_timeout }
}

fn csi(pv: &str, handle: &str, multi_attach: bool) -> Attachable {
    Attachable {
        unique: format!("kubernetes.io/csi/ebs.csi.aws.com^{handle}"),
        pv_name: pv.into(),
        attacher: Attacher::Csi { driver: "ebs.csi.aws.com".into(), handle: handle.into() },
        multi_attach,
    }
}

fn pod(ns: &str, name: &str) -> PodRef {
    PodRef { namespace: ns.into(), name: name.into(), uid: format!("{name}-uid") }
}

fn wanted(volume: Attachable, pods: &[PodRef]) -> Wanted {
    Wanted { volume, pods: pods.to_vec() }
}

fn healthy(in_use: &[&str], reported: &[&str]) -> NodeFacts {
    NodeFacts {
        ready: true,
        out_of_service: false,
        in_use: in_use.iter().map(|s| s.to_string()).collect(),
        reported: reported.iter().map(|s| (s.to_string(), String::new())).collect(),
    }
}

fn view(facts: Option<NodeFacts>, wanted: Vec<Wanted>, attachments: Vec<Attachment>, now: Timestamp) -> NodeView {
    NodeView {
        node: NODE.into(),
        facts,
        wanted,
        attachments,
        elsewhere: BTreeMap::new(),
        settings: settings(true),
        now,
    }
}

fn attachment(volume: &Attachable, attached: bool) -> Attachment {
    let Attacher::Csi { driver, handle } = &volume.attacher else { unreachable!() };
    Attachment {
        name: attachment_name(handle, driver, NODE),
        unique: volume.unique.clone(),
        attached,
        error: None,
        deleting: false,
    }
}

fn reported(plan: &Plan) -> Option<Vec<&str>> {
    plan.report.as_ref().map(|r| r.iter().map(|(name, _)| name.as_str()).collect())
}

fn messages(plan: &Plan) -> Vec<String> {
    let kind = |warning| if warning { "Warning" } else { "Normal" };
    plan.events.iter().map(|e| format!("{} {} {}", kind(e.warning), e.reason, e.message)).collect()
}

#[test]
fn attachment_names_are_upstreams_hash_of_handle_driver_and_node() {
    assert_eq!(
        attachment_name("vol-1", "ebs.csi.aws.com", "node-1"),
        "csi-58932ddfc9a6504f794af09a26429db947138ba3d683dee3d975aa932cb39f48"
    );
    assert_eq!(csi_parts("kubernetes.io/csi/ebs.csi.aws.com^vol-1"), Some(("ebs.csi.aws.com", "vol-1")));
    assert_eq!(csi_parts("kubernetes.io/iscsi/10.0.0.1:3260:iqn:0"), None);
}

#[test]
fn nothing_wanted_and_nothing_attached_writes_nothing() {
    let plan = plan(&view(Some(healthy(&[], &[])), vec![], vec![], ts(0)), &mut Memory::default());
    assert_eq!(plan, Plan::default());
}

#[test]
fn a_wanted_volume_is_attached_then_reported_once_with_an_event() {
    let volume = csi("pv-1", "vol-1", false);
    let pods = [pod("ns", "web-0")];
    let mut memory = Memory::default();

    let first = plan(&view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &pods)], vec![], ts(0)), &mut memory);
    let expected = NewAttachment {
        name: attachment_name("vol-1", "ebs.csi.aws.com", NODE),
        driver: "ebs.csi.aws.com".into(),
        pv_name: "pv-1".into(),
    };
    assert_eq!(first.create, [expected]);
    assert_eq!(first.report, None, "not reported before the attacher says attached");
    assert!(first.events.is_empty());

    let waiting = vec![attachment(&volume, false)];
    let second = plan(&view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &pods)], waiting, ts(5)), &mut memory);
    assert!(second.create.is_empty() && second.report.is_none() && second.events.is_empty());

    let attached = vec![attachment(&volume, true)];
    let third =
        plan(&view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &pods)], attached.clone(), ts(9)), &mut memory);
    assert_eq!(reported(&third), Some(vec![volume.unique.as_str()]));
    assert_eq!(messages(&third), ["Normal SuccessfulAttachVolume AttachVolume.Attach succeeded for volume \"pv-1\" "]);

    let facts = healthy(&[], &[&volume.unique]);
    let fourth = plan(&view(Some(facts), vec![wanted(volume, &pods)], attached, ts(10)), &mut memory);
    assert_eq!(fourth.report, None);
    assert!(fourth.events.is_empty() && fourth.create.is_empty() && fourth.delete.is_empty());
}

#[test]
fn an_unwanted_unmounted_volume_leaves_the_report_and_is_detached_at_once() {
    let volume = csi("pv-1", "vol-1", false);
    let va = attachment(&volume, true);
    let facts = healthy(&[], &[&volume.unique]);
    let plan = plan(&view(Some(facts), vec![], vec![va.clone()], ts(0)), &mut Memory::default());
    assert_eq!(reported(&plan), Some(vec![]));
    assert_eq!(plan.delete, [va.name]);
    assert!(plan.forced.is_empty());
}

#[test]
fn a_mounted_volume_waits_for_its_unmount_and_is_forced_off_an_unhealthy_node_after_the_longest_wait() {
    let volume = csi("pv-1", "vol-1", false);
    let va = vec![attachment(&volume, true)];
    let mut memory = Memory::default();
    let mounted = healthy(&[&volume.unique], &[&volume.unique]);

    let first = plan(&view(Some(mounted.clone()), vec![], va.clone(), ts(0)), &mut memory);
    assert!(first.delete.is_empty() && first.report.is_none(), "still reported while mounted");
    let recheck = first.recheck_after.expect("waits on the clock");
    assert!(recheck > MAX_WAIT && recheck <= MAX_WAIT + SignedDuration::from_secs(1));

    let healthy_late = plan(&view(Some(mounted.clone()), vec![], va.clone(), ts(7 * 60)), &mut memory);
    assert!(healthy_late.delete.is_empty(), "a healthy node keeps a mounted volume");

    let unhealthy = NodeFacts { ready: false, ..mounted };
    let forced = plan(&view(Some(unhealthy), vec![], va.clone(), ts(7 * 60 + 1)), &mut memory);
    assert_eq!(forced.delete, [va[0].name.clone()]);
    assert_eq!(forced.forced, [ForceReason::Timeout]);
    assert_eq!(reported(&forced), Some(vec![]));
}

#[test]
fn disabled_force_detach_keeps_a_mounted_volume_on_an_unhealthy_node() {
    let volume = csi("pv-1", "vol-1", false);
    let va = vec![attachment(&volume, true)];
    let mut memory = Memory::default();
    let unhealthy = NodeFacts { ready: false, ..healthy(&[&volume.unique], &[&volume.unique]) };
    let mut v = view(Some(unhealthy), vec![], va, ts(0));
    v.settings = settings(false);
    assert!(plan(&v, &mut memory).delete.is_empty());
    v.now = ts(60 * 60);
    let late = plan(&v, &mut memory);
    assert!(late.delete.is_empty() && late.forced.is_empty());
}

#[test]
fn the_out_of_service_taint_detaches_a_mounted_volume_at_once() {
    let volume = csi("pv-1", "vol-1", false);
    let va = attachment(&volume, true);
    let tainted = NodeFacts { ready: false, out_of_service: true, ..healthy(&[&volume.unique], &[&volume.unique]) };
    let plan = plan(&view(Some(tainted), vec![], vec![va.clone()], ts(0)), &mut Memory::default());
    assert_eq!(plan.delete, [va.name]);
    assert_eq!(plan.forced, [ForceReason::OutOfService]);
}

#[test]
fn a_gone_node_counts_its_volumes_mounted_until_the_longest_wait_then_forces_them_off() {
    let volume = csi("pv-1", "vol-1", false);
    let va = vec![attachment(&volume, true)];
    let mut memory = Memory::default();
    let waiting = plan(&view(None, vec![], va.clone(), ts(0)), &mut memory);
    assert!(waiting.delete.is_empty() && waiting.report.is_none());
    let forced = plan(&view(None, vec![], va.clone(), ts(6 * 60 + 1)), &mut memory);
    assert_eq!(forced.delete, [va[0].name.clone()]);
    assert_eq!(forced.report, None, "a gone node's status is not written");
}

#[test]
fn a_gone_node_that_had_unmounted_its_volume_has_it_detached_at_once() {
    let volume = csi("pv-1", "vol-1", false);
    let va = vec![attachment(&volume, true)];
    let mut memory = Memory::default();
    let mounted = healthy(&[&volume.unique], &[&volume.unique]);
    let w = vec![wanted(volume.clone(), &[pod("ns", "web-0")])];
    plan(&view(Some(mounted), w, va.clone(), ts(0)), &mut memory);
    plan(&view(Some(healthy(&[], &[&volume.unique])), vec![], va.clone(), ts(1)), &mut memory);
    let gone = plan(&view(None, vec![], va.clone(), ts(2)), &mut memory);
    assert_eq!(gone.delete, [va[0].name.clone()]);
}

#[test]
fn a_single_node_volume_attached_elsewhere_is_refused_once() {
    let volume = csi("pv-1", "vol-1", false);
    let mut memory = Memory::default();
    let mut v = view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &[pod("ns1", "pod1")])], vec![], ts(0));
    v.elsewhere
        .insert(volume.unique.clone(), Elsewhere { nodes: vec!["node-2".into()], pods: vec![pod("ns1", "pod2")] });
    let first = plan(&v, &mut memory);
    assert!(first.create.is_empty());
    assert_eq!(
        messages(&first),
        ["Warning FailedAttachVolume Waiting for detach for volume \"pv-1\" Volume is already used by pod(s) pod2"]
    );
    assert!(plan(&v, &mut memory).events.is_empty(), "reported once");

    v.elsewhere.clear();
    assert_eq!(plan(&v, &mut memory).create.len(), 1, "attached once the other node let go");
}

#[test]
fn a_multi_node_volume_attaches_beside_another_node() {
    let volume = csi("pv-1", "vol-1", true);
    let mut v = view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &[pod("ns1", "pod1")])], vec![], ts(0));
    v.elsewhere
        .insert(volume.unique.clone(), Elsewhere { nodes: vec!["node-2".into()], pods: vec![pod("ns1", "pod2")] });
    let plan = plan(&v, &mut Memory::default());
    assert_eq!(plan.create.len(), 1);
    assert!(plan.events.is_empty());
}

#[test]
fn waiting_on_detach_messages_name_local_pods_and_count_the_others() {
    let cases: [(&[(&str, &str)], &str); 4] = [
        (
            &[],
            "Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node",
        ),
        (&[("ns1", "pod2")], "Volume is already used by pod(s) pod2"),
        (&[("ns2", "pod2")], "Volume is already used by 1 pod(s) in different namespaces"),
        (
            &[("ns2", "pod2"), ("ns1", "pod3")],
            "Volume is already used by pod(s) pod3 and 1 pod(s) in different namespaces",
        ),
    ];
    for (others, detail) in cases {
        let volume = csi("volume-name", "vol-1", false);
        let mut v = view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &[pod("ns1", "pod1")])], vec![], ts(0));
        let pods = others.iter().map(|(ns, name)| pod(ns, name)).collect();
        v.elsewhere.insert(volume.unique.clone(), Elsewhere { nodes: vec!["node2".into()], pods });
        let expected = format!("Warning FailedAttachVolume Waiting for detach for volume \"volume-name\" {detail}");
        assert_eq!(messages(&plan(&v, &mut Memory::default())), [expected]);
    }
}

#[test]
fn an_attach_error_is_recorded_once_per_message() {
    let volume = csi("pv-1", "vol-1", false);
    let pods = [pod("ns", "web-0")];
    let mut memory = Memory::default();
    let failing = |message: &str| Attachment { error: Some(message.into()), ..attachment(&volume, false) };
    let run = |va: Attachment, memory: &mut Memory| {
        plan(&view(Some(healthy(&[], &[])), vec![wanted(volume.clone(), &pods)], vec![va], ts(1)), memory)
    };
    let first = run(failing("rpc error: disk busy"), &mut memory);
    assert_eq!(
        messages(&first),
        ["Warning FailedAttachVolume AttachVolume.Attach failed for volume \"pv-1\" : rpc error: disk busy"]
    );
    assert!(run(failing("rpc error: disk busy"), &mut memory).events.is_empty());
    assert_eq!(run(failing("rpc error: quota"), &mut memory).events.len(), 1);
}

#[test]
fn an_attacher_silent_for_two_minutes_is_reported_as_timed_out() {
    let volume = csi("pv-1", "vol-1", false);
    let pods = [pod("ns", "web-0")];
    let mut memory = Memory::default();
    let w = || vec![wanted(volume.clone(), &pods)];
    plan(&view(Some(healthy(&[], &[])), w(), vec![], ts(0)), &mut memory);
    let early = plan(&view(Some(healthy(&[], &[])), w(), vec![attachment(&volume, false)], ts(60)), &mut memory);
    assert!(early.events.is_empty());
    assert_eq!(early.recheck_after, Some(SignedDuration::from_secs(60)));
    let late = plan(&view(Some(healthy(&[], &[])), w(), vec![attachment(&volume, false)], ts(120)), &mut memory);
    assert_eq!(
        messages(&late),
        ["Warning FailedAttachVolume AttachVolume.Attach failed for volume \"pv-1\" : timed out waiting for \
          external-attacher of ebs.csi.aws.com CSI driver to attach volume vol-1"]
    );
}

#[test]
fn an_attachment_being_deleted_is_waited_for_before_attaching_again() {
    let volume = csi("pv-1", "vol-1", false);
    let deleting = Attachment { deleting: true, ..attachment(&volume, true) };
    let w = vec![wanted(volume.clone(), &[pod("ns", "web-0")])];
    let plan = plan(&view(Some(healthy(&[], &[&volume.unique])), w, vec![deleting], ts(0)), &mut Memory::default());
    assert!(plan.create.is_empty());
    assert_eq!(reported(&plan), Some(vec![]));
    assert_eq!(
        messages(&plan),
        [
            "Warning FailedAttachVolume AttachVolume.Attach failed for volume \"pv-1\" : volume attachment is being deleted"
        ]
    );
}

#[test]
fn fibre_channel_and_iscsi_volumes_are_reported_as_soon_as_wanted() {
    let iscsi = pv(json!({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2026-01.io.example:disk", "lun": 0}}));
    let Resolved::Attachable(volume) = attachable(&iscsi, |_| true) else { panic!("iscsi attaches") };
    assert_eq!(volume.unique, "kubernetes.io/iscsi/10.0.0.1:3260:iqn.2026-01.io.example:disk:0");
    let plan = plan(
        &view(Some(healthy(&[], &[])), vec![wanted(volume, &[pod("ns", "db-0")])], vec![], ts(0)),
        &mut Memory::default(),
    );
    assert!(plan.create.is_empty());
    assert_eq!(reported(&plan), Some(vec!["kubernetes.io/iscsi/10.0.0.1:3260:iqn.2026-01.io.example:disk:0"]));
    assert_eq!(messages(&plan).len(), 1);

    let fc = pv(json!({"fc": {"targetWWNs": ["500a0981891b8dc5", "500a0981991b8dc5"], "lun": 2}}));
    let Resolved::Attachable(volume) = attachable(&fc, |_| true) else { panic!("fc attaches") };
    assert_eq!(volume.unique, "kubernetes.io/fc/[500a0981891b8dc5 500a0981991b8dc5]:2");
}

fn pv(source: Value) -> PersistentVolume {
    let mut spec = json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
        "claimRef": {"namespace": "ns", "name": "data", "uid": "claim-uid"}});
    spec.as_object_mut().unwrap().extend(source.as_object().unwrap().clone());
    serde_json::from_value(json!({"metadata": {"name": "pv-1"}, "spec": spec})).unwrap()
}

fn claim(phase: &str, volume: &str) -> PersistentVolumeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": "data", "namespace": "ns", "uid": "claim-uid"},
        "spec": {"volumeName": volume},
        "status": {"phase": phase},
    }))
    .unwrap()
}

fn csi_source() -> Value {
    json!({"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}})
}

#[test]
fn claims_resolve_to_their_bound_volumes_as_upstreams_volume_spec() {
    let bound = Arc::new(pv(csi_source()));
    let lookup = |name: &str| (name == "pv-1").then(|| bound.clone());
    assert_eq!(
        resolve("ns/data", Some(&claim("Bound", "pv-1")), lookup, |_| true),
        Resolved::Attachable(csi("pv-1", "vol-1", false))
    );

    assert!(matches!(resolve("ns/data", None, lookup, |_| true), Resolved::Pending(_)));
    assert!(matches!(resolve("ns/data", Some(&claim("Pending", "")), lookup, |_| true), Resolved::Pending(_)));
    assert!(matches!(resolve("ns/data", Some(&claim("Bound", "pv-2")), lookup, |_| true), Resolved::Pending(_)));
    let mut other = claim("Bound", "pv-1");
    other.metadata.uid = Some("another-uid".into());
    assert!(
        matches!(resolve("ns/data", Some(&other), lookup, |_| true), Resolved::Pending(m) if m.contains("does not point to claim.UID"))
    );

    assert_eq!(
        resolve("ns/data", Some(&claim("Bound", "pv-1")), lookup, |_| false),
        Resolved::NotAttachable,
        "attachRequired: false"
    );
}

#[test]
fn access_modes_decide_multi_attach_and_other_sources_attach_nothing_or_are_refused() {
    let mut rwx = pv(csi_source());
    rwx.spec.as_mut().unwrap().access_modes = Some(vec!["ReadWriteMany".into()]);
    assert!(matches!(attachable(&rwx, |_| true), Resolved::Attachable(v) if v.multi_attach));
    let mut none = pv(csi_source());
    none.spec.as_mut().unwrap().access_modes = None;
    assert!(matches!(attachable(&none, |_| true), Resolved::Attachable(v) if v.multi_attach));

    let nfs = pv(json!({"nfs": {"server": "nfs.example", "path": "/exports"}}));
    assert_eq!(attachable(&nfs, |_| true), Resolved::NotAttachable);
    let ebs = pv(json!({"awsElasticBlockStore": {"volumeID": "vol-1"}}));
    assert!(matches!(attachable(&ebs, |_| true), Resolved::Unsupported(m) if m.contains("kubernetes.io/aws-ebs")));
}

fn scheduled_pod(name: &str, uid: &str, extra: Value) -> Pod {
    let mut value = json!({
        "metadata": {"name": name, "namespace": "ns", "uid": uid},
        "spec": {"nodeName": NODE, "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
        "status": {"phase": "Running"},
    });
    json_merge(&mut value, extra);
    serde_json::from_value(value).unwrap()
}

fn json_merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                json_merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

#[test]
fn a_running_pod_keeps_its_volume_while_its_claim_briefly_fails_to_resolve_and_a_terminated_one_lets_go() {
    let mut resolutions = Resolutions::default();
    let running = scheduled_pod("web-0", "web-0-uid", json!({}));
    let volume = csi("pv-1", "vol-1", false);
    let found = resolutions.wanted(&[&running], |_, _| Resolved::Attachable(volume.clone()));
    assert_eq!(found.wanted, [wanted(volume.clone(), &[pod("ns", "web-0")])]);

    let pending = resolutions.wanted(&[&running], |_, _| Resolved::Pending("PV missing".into()));
    assert_eq!(pending.wanted, found.wanted, "the last answer holds");

    let done = scheduled_pod("web-0", "web-0-uid", json!({"status": {"phase": "Succeeded"}}));
    assert!(resolutions.wanted(&[&done], |_, _| Resolved::Attachable(volume.clone())).wanted.is_empty());
    assert!(resolutions.is_empty());

    let unsupported = resolutions.wanted(&[&running], |_, _| Resolved::Unsupported("in-tree".into()));
    assert!(unsupported.wanted.is_empty());
    assert_eq!(unsupported.unsupported, [(pod("ns", "web-0"), "in-tree".to_string())]);
}

#[test]
fn the_gauges_count_in_use_volumes_by_node_and_plugin_and_each_nodes_wanted_and_attached_volumes() {
    let running = scheduled_pod("web-0", "web-0-uid", json!({}));
    let done = scheduled_pod("web-1", "web-1-uid", json!({"status": {"phase": "Succeeded"}}));
    let unscheduled = scheduled_pod("web-2", "web-2-uid", json!({"spec": {"nodeName": null}}));
    let bound = Arc::new(pv(csi_source()));
    let in_use = super::count::volumes_in_use([&running, &done, &unscheduled], |_, _| Some(bound.clone()));
    let key = (NODE.to_string(), "kubernetes.io/csi:ebs.csi.aws.com".to_string());
    assert_eq!(in_use, BTreeMap::from([(key, 2)]), "terminated pods count, as upstream's");

    let iscsi = pv(json!({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2026-01.io.example:disk", "lun": 0}}));
    let Resolved::Attachable(iscsi) = attachable(&iscsi, |_| true) else { panic!("iscsi attaches") };
    let ebs = csi("pv-1", "vol-1", false);
    let detaching = csi("pv-2", "vol-2", false);
    let w = vec![wanted(ebs.clone(), &[pod("ns", "web-0")]), wanted(iscsi, &[pod("ns", "db-0")])];
    let v = view(
        Some(healthy(&[], &[&detaching.unique])),
        w,
        vec![attachment(&ebs, false), attachment(&detaching, true)],
        ts(0),
    );
    let (desired, actual) = super::count::node_totals(&v);
    let by = |pairs: &[(&str, i64)]| pairs.iter().map(|(p, n)| (p.to_string(), *n)).collect::<BTreeMap<_, _>>();
    assert_eq!(desired, by(&[("kubernetes.io/csi:ebs.csi.aws.com", 1), ("kubernetes.io/iscsi", 1)]));
    assert_eq!(actual, by(&[("kubernetes.io/csi:ebs.csi.aws.com", 2), ("kubernetes.io/iscsi", 1)]));
}
