//! The safety invariants, judged on every change kube-sim commits, in
//! commit order, with the client that made it (kube-sim's change feed):
//! - a Deployment's ReplicaSets never desire more than `replicas +
//!   maxSurge` (the plan only scales up, so the bound never shrinks under
//!   a controller that has not seen it yet);
//! - a DaemonSet never has two pods on a node that are not terminal
//!   (being deleted counts) without surge, and with `maxSurge: 1` never
//!   three (how many nodes surge at once is judged by `tests/daemonset`'s
//!   quiet rollout: the controller surges beyond maxSurge onto nodes whose
//!   old pod it sees unavailable, and under faults its view trails);
//! - a StatefulSet never has two pods that are not terminal with one
//!   ordinal;
//! - a Job never has more active pods than its parallelism; never more
//!   succeeded pods than completions (NonIndexed) or than one per index
//!   (Indexed); and never gets a pod once it is Complete or Failed;
//! - a controller's write comes from the replica whose lease write came
//!   last (a replica that released the lease, or never held it, writes
//!   nothing).
//!
//! Written here rather than taken from `kcm-controllers`: the oracle must
//! not share the code it judges.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kube_sim::store::{Change, ChangeKind};
use serde_json::Value;

/// The user agent of kcm-rs's leader-election client.
pub fn election_agent() -> String {
    kcm_runtime::client::user_agent(Some("leader-election"))
}

/// One controller write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The replica, its client and what it changed.
    pub line: String,
    /// Whether it wrote an Event.
    pub event: bool,
}

/// What the oracle knows of the cluster, and what it found.
pub struct Oracle {
    /// The users the replicas act as.
    replicas: BTreeSet<String>,
    election_agent: String,
    /// Every live object the invariants read, by type and namespace/name.
    objects: BTreeMap<(Arc<str>, String), Value>,
    /// Who wrote the lease last while holding it; `None` once released.
    holder: Option<String>,
    /// Jobs (by uid) seen Complete or Failed.
    finished_jobs: BTreeSet<String>,
    /// Changes judged.
    pub changes: u64,
    /// Controller writes judged, by replica.
    pub writes: BTreeMap<String, u64>,
    /// Every controller write, in commit order.
    pub written: Vec<Written>,
    /// For each lease write by its holder (renewals, and the first
    /// acquire), in commit order: how many controller writes came before
    /// it. The run counts its steps in these.
    pub renewals: Vec<usize>,
    pub violations: Vec<String>,
}

/// Types the oracle keeps.
const KEPT: [&str; 6] =
    ["/pods", "apps/replicasets", "apps/deployments", "apps/daemonsets", "batch/jobs", "apps/statefulsets"];

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn number(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The uid of the object's controller owner, if it has one.
fn controller_uid(v: &Value) -> Option<&str> {
    let owners = v.pointer("/metadata/ownerReferences")?.as_array()?;
    owners.iter().find(|o| o["controller"] == Value::Bool(true)).and_then(|o| o["uid"].as_str())
}

fn phase(pod: &Value) -> &str {
    text(pod, "/status/phase")
}

fn terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

fn deleting(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// The node a daemon pod is for: bound, or pinned by its affinity.
fn daemon_node(pod: &Value) -> String {
    let bound = text(pod, "/spec/nodeName");
    if !bound.is_empty() {
        return bound.to_owned();
    }
    let terms =
        pod.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
    let fields =
        terms.and_then(Value::as_array).into_iter().flatten().filter_map(|t| t["matchFields"].as_array()).flatten();
    fields.filter(|f| f["key"] == "metadata.name").find_map(|f| f["values"][0].as_str()).unwrap_or_default().to_owned()
}

/// Where `new` differs from `old`, as JSON pointers (objects compared
/// field by field, anything else whole; resourceVersion left out).
fn differences(old: &Value, new: &Value, at: &str) -> Vec<String> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            let keys = keys.into_iter().filter(|k| at != "/metadata" || *k != "resourceVersion");
            let null = Value::Null;
            keys.flat_map(|k| differences(a.get(k).unwrap_or(&null), b.get(k).unwrap_or(&null), &format!("{at}/{k}")))
                .collect()
        }
        _ if old == new => Vec::new(),
        _ => vec![at.to_owned()],
    }
}

/// An int-or-percent of `total`, rounded up (maxSurge's rounding).
fn resolve(v: Option<&Value>, total: i64, default: i64) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(default),
        Some(Value::String(s)) => s.trim_end_matches('%').parse::<i64>().map_or(default, |p| (p * total + 99) / 100),
        _ => default,
    }
}

impl Oracle {
    pub fn new(replicas: &[&str]) -> Oracle {
        Oracle {
            replicas: replicas.iter().map(|r| (*r).to_owned()).collect(),
            election_agent: election_agent(),
            objects: BTreeMap::new(),
            holder: None,
            finished_jobs: BTreeSet::new(),
            changes: 0,
            writes: BTreeMap::new(),
            written: Vec::new(),
            renewals: Vec::new(),
            violations: Vec::new(),
        }
    }

    /// Judges one committed change.
    pub fn see(&mut self, change: &Change) {
        self.changes += 1;
        let object = change.object.value();
        let key = (change.type_key.clone(), format!("{}/{}", change.namespace, change.name));
        let mut what =
            format!("rv {} {:?} {}{}/{}", change.rv(), change.kind, change.type_key, change.namespace, change.name);
        if let Some(before) = self.objects.get(&key).filter(|_| change.kind == ChangeKind::Modified) {
            what = format!("{what} ({})", differences(before, &object, "").join(", "));
        }
        self.judge_writer(change, &object, &what);
        if !KEPT.contains(&&*change.type_key) {
            return;
        }
        let created = change.kind == ChangeKind::Added;
        if change.kind == ChangeKind::Deleted {
            self.objects.remove(&key);
        } else {
            self.objects.insert(key, object.clone());
        }
        let found = match &*change.type_key {
            "/pods" => self.judge_pod_owner(&object, created, &what),
            "apps/replicasets" => {
                controller_uid(&object).and_then(|owner| self.judge_deployment(owner, &what)).into_iter().collect()
            }
            "apps/deployments" => self.judge_deployment(text(&object, "/metadata/uid"), &what).into_iter().collect(),
            "batch/jobs" => {
                let conditions = object.pointer("/status/conditions").and_then(Value::as_array);
                let done = conditions
                    .into_iter()
                    .flatten()
                    .any(|c| matches!(c["type"].as_str(), Some("Complete" | "Failed")) && c["status"] == "True");
                if done {
                    self.finished_jobs.insert(text(&object, "/metadata/uid").to_owned());
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        self.violations.extend(found);
    }

    /// Credits a change to a replica, and checks that replica held the
    /// lease (a lease write by a replica makes it the holder).
    fn judge_writer(&mut self, change: &Change, object: &Value, what: &str) {
        let Some(writer) = change.writer.as_deref() else { return };
        if !self.replicas.contains(&writer.user) {
            return;
        }
        if &*change.type_key == "coordination.k8s.io/leases" && change.namespace == "kube-system" {
            let held = !text(object, "/spec/holderIdentity").is_empty() && change.kind != ChangeKind::Deleted;
            self.holder = held.then(|| writer.user.clone());
            if held {
                self.renewals.push(self.written.len());
            }
            return;
        }
        if writer.user_agent == self.election_agent {
            return;
        }
        *self.writes.entry(writer.user.clone()).or_default() += 1;
        let event = &*change.type_key == "/events";
        self.written.push(Written { line: format!("{} ({}) {what}", writer.user, writer.user_agent), event });
        if self.holder.as_deref() != Some(writer.user.as_str()) {
            let holder = self.holder.clone().unwrap_or_else(|| "nobody".into());
            self.violations.push(format!(
                "{what}: written by {} ({}) while {holder} held the lease",
                writer.user, writer.user_agent
            ));
        }
    }

    fn objects_of<'a>(&'a self, ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |((t, _), _)| &**t == ty).map(|(_, v)| v)
    }

    fn find_uid<'a>(&'a self, ty: &'a str, uid: &'a str) -> Option<&'a Value> {
        self.objects_of(ty).find(|v| text(v, "/metadata/uid") == uid)
    }

    fn pods_of<'a>(&'a self, owner: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects_of("/pods").filter(move |p| controller_uid(p) == Some(owner))
    }

    fn judge_deployment(&self, uid: &str, what: &str) -> Option<String> {
        let deployment = self.find_uid("apps/deployments", uid)?;
        let replicas = number(deployment, "/spec/replicas");
        let surge = resolve(deployment.pointer("/spec/strategy/rollingUpdate/maxSurge"), replicas, 0);
        let name = text(deployment, "/metadata/name").to_owned();
        let desired: i64 = self
            .objects_of("apps/replicasets")
            .filter(|rs| controller_uid(rs) == Some(uid))
            .map(|rs| number(rs, "/spec/replicas"))
            .sum();
        (desired > replicas + surge).then(|| {
            format!("{what}: Deployment {name}'s ReplicaSets desire {desired} > replicas {replicas} + maxSurge {surge}")
        })
    }

    fn judge_pod_owner(&self, pod: &Value, created: bool, what: &str) -> Vec<String> {
        let Some(owner) = controller_uid(pod) else { return Vec::new() };
        if let Some(ds) = self.find_uid("apps/daemonsets", owner) {
            let surge = resolve(ds.pointer("/spec/updateStrategy/rollingUpdate/maxSurge"), 1, 0);
            self.judge_daemon_set(owner, text(ds, "/metadata/name"), surge, what).into_iter().collect()
        } else if let Some(set) = self.find_uid("apps/statefulsets", owner) {
            self.judge_stateful_set(owner, text(set, "/metadata/name"), what).into_iter().collect()
        } else if let Some(job) = self.find_uid("batch/jobs", owner) {
            let mut found = self.judge_job(owner, job, what);
            if created && self.finished_jobs.contains(owner) {
                let (pod_name, name) = (text(pod, "/metadata/name"), text(job, "/metadata/name"));
                found.push(format!("{what}: pod {pod_name} created for Job {name}, already finished"));
            }
            found
        } else {
            Vec::new()
        }
    }

    fn judge_daemon_set(&self, uid: &str, name: &str, surge: i64, what: &str) -> Option<String> {
        let mut by_node: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for pod in self.pods_of(uid).filter(|p| !terminal(p)) {
            let entry = by_node.entry(daemon_node(pod)).or_default();
            entry.0 += 1;
            entry.1 += usize::from(!deleting(pod));
        }
        // With surge, the controller also replaces at once every old pod it
        // sees unavailable, beyond maxSurge (upstream's rule), and under the
        // campaign's faults its view of readiness trails the API's: how
        // many nodes surge at once is not bounded, only two pods a node.
        let crowded: Vec<&String> =
            by_node.iter().filter(|(_, (all, _))| surge == 0 && *all > 1).map(|(node, _)| node).collect();
        let too_many = by_node.values().any(|(all, _)| *all > 2);
        (too_many || !crowded.is_empty())
            .then(|| format!("{what}: DaemonSet {name} (maxSurge {surge}) crowds {crowded:?}: {by_node:?}"))
    }

    fn judge_stateful_set(&self, uid: &str, name: &str, what: &str) -> Option<String> {
        let mut ordinals: BTreeMap<String, usize> = BTreeMap::new();
        for pod in self.pods_of(uid).filter(|p| !terminal(p)) {
            let pod_name = text(pod, "/metadata/name");
            let ordinal = pod_name.rsplit_once('-').map_or(pod_name, |(_, o)| o);
            *ordinals.entry(ordinal.to_owned()).or_default() += 1;
        }
        ordinals
            .values()
            .any(|n| *n > 1)
            .then(|| format!("{what}: StatefulSet {name} has two pods for one ordinal: {ordinals:?}"))
    }

    fn judge_job(&self, uid: &str, job: &Value, what: &str) -> Vec<String> {
        let mut found = Vec::new();
        let name = text(job, "/metadata/name");
        let parallelism = number(job, "/spec/parallelism");
        let completions = number(job, "/spec/completions");
        let indexed = text(job, "/spec/completionMode") == "Indexed";
        let pods: Vec<&Value> = self.pods_of(uid).collect();
        let active = pods.iter().filter(|p| !terminal(p) && !deleting(p)).count() as i64;
        if active > parallelism {
            found.push(format!("{what}: Job {name} has {active} active pods > parallelism {parallelism}"));
        }
        let succeeded: Vec<&&Value> = pods.iter().filter(|p| phase(p) == "Succeeded").collect();
        if indexed {
            let mut by_index: BTreeMap<&str, usize> = BTreeMap::new();
            for pod in &succeeded {
                *by_index
                    .entry(text(pod, "/metadata/annotations/batch.kubernetes.io~1job-completion-index"))
                    .or_default() += 1;
            }
            if by_index.values().any(|n| *n > 1) {
                found.push(format!("{what}: Job {name} ran an index to success twice: {by_index:?}"));
            }
        } else if succeeded.len() as i64 > completions {
            found
                .push(format!("{what}: Job {name} has {} succeeded pods > completions {completions}", succeeded.len()));
        }
        found
    }
}

/// The oracle itself: each invariant is shown to catch what it is for, on
/// changes made up here (a campaign that finds nothing proves little
/// unless its judge can fail).
mod judged {
    use std::sync::Arc;

    use bytes::Bytes;
    use kube_sim::selectors::Attrs;
    use kube_sim::store::{Change, ChangeKind, Stored};
    use kube_sim::writer::Writer;
    use serde_json::{Value, json};

    use super::{Oracle, election_agent};

    /// Feeds changes one at a time, each committed at the next version.
    struct Feed {
        oracle: Oracle,
        rv: u64,
    }

    impl Feed {
        fn new() -> Feed {
            Feed { oracle: Oracle::new(&["a", "b"]), rv: 0 }
        }

        fn commit(&mut self, ty: &str, kind: ChangeKind, by: Option<(&str, &str)>, object: Value) {
            self.rv += 1;
            let writer = by.map(|(user, agent)| Arc::new(Writer { user: user.into(), user_agent: agent.into() }));
            let change = Change {
                type_key: Arc::from(ty),
                namespace: object["metadata"]["namespace"].as_str().unwrap_or("").into(),
                name: object["metadata"]["name"].as_str().unwrap_or("").into(),
                kind,
                object: Stored {
                    rv: self.rv,
                    bytes: Bytes::from(object.to_string()),
                    attrs: Arc::new(Attrs::of(&object)),
                },
                previous: None,
                writer,
            };
            self.oracle.see(&change);
        }

        fn lease(&mut self, user: &str, holder: &str) {
            let lease = json!({"metadata": {"name": "kube-controller-manager", "namespace": "kube-system"},
                "spec": {"holderIdentity": holder}});
            self.commit("coordination.k8s.io/leases", ChangeKind::Modified, Some((user, &election_agent())), lease);
        }
    }

    fn owned(name: &str, owner: &str, extra: Value) -> Value {
        let mut object = json!({"metadata": {"name": name, "namespace": "default", "uid": name,
            "ownerReferences": [{"uid": owner, "controller": true}]}});
        if let (Some(o), Some(e)) = (object.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        object
    }

    #[test]
    fn a_write_from_the_replica_without_the_lease_is_caught() {
        let mut feed = Feed::new();
        feed.lease("a", "host-a");
        feed.commit(
            "/pods",
            ChangeKind::Added,
            Some(("a", "kcm-rs/replicaset-controller")),
            owned("p1", "x", json!({})),
        );
        assert!(feed.oracle.violations.is_empty(), "{:?}", feed.oracle.violations);
        feed.commit(
            "/pods",
            ChangeKind::Added,
            Some(("b", "kcm-rs/replicaset-controller")),
            owned("p2", "x", json!({})),
        );
        feed.lease("a", "");
        feed.commit(
            "/pods",
            ChangeKind::Added,
            Some(("a", "kcm-rs/replicaset-controller")),
            owned("p3", "x", json!({})),
        );
        assert_eq!(feed.oracle.violations.len(), 2, "{:?}", feed.oracle.violations);
    }

    #[test]
    fn replica_sets_desiring_more_than_the_surge_are_caught() {
        let mut feed = Feed::new();
        let deployment = json!({"metadata": {"name": "d", "namespace": "default", "uid": "d"},
            "spec": {"replicas": 3, "strategy": {"rollingUpdate": {"maxSurge": 1}}}});
        feed.commit("apps/deployments", ChangeKind::Added, None, deployment);
        feed.commit("apps/replicasets", ChangeKind::Added, None, owned("old", "d", json!({"spec": {"replicas": 3}})));
        feed.commit("apps/replicasets", ChangeKind::Added, None, owned("new", "d", json!({"spec": {"replicas": 1}})));
        assert!(feed.oracle.violations.is_empty(), "{:?}", feed.oracle.violations);
        feed.commit(
            "apps/replicasets",
            ChangeKind::Modified,
            None,
            owned("new", "d", json!({"spec": {"replicas": 2}})),
        );
        assert_eq!(feed.oracle.violations.len(), 1, "{:?}", feed.oracle.violations);
    }

    #[test]
    fn two_daemon_pods_on_a_node_without_surge_are_caught() {
        let mut feed = Feed::new();
        let ds = json!({"metadata": {"name": "ds", "namespace": "default", "uid": "ds"}, "spec": {}});
        feed.commit("apps/daemonsets", ChangeKind::Added, None, ds);
        let on = |node: &str| json!({"spec": {"nodeName": node}, "status": {"phase": "Running"}});
        feed.commit("/pods", ChangeKind::Added, None, owned("p1", "ds", on("n1")));
        feed.commit("/pods", ChangeKind::Added, None, owned("p2", "ds", on("n2")));
        assert!(feed.oracle.violations.is_empty(), "{:?}", feed.oracle.violations);
        feed.commit("/pods", ChangeKind::Added, None, owned("p3", "ds", on("n1")));
        assert_eq!(feed.oracle.violations.len(), 1, "{:?}", feed.oracle.violations);
    }

    #[test]
    fn a_third_daemon_pod_on_a_node_with_surge_is_caught() {
        let mut feed = Feed::new();
        let ds = json!({"metadata": {"name": "ds", "namespace": "default", "uid": "ds"},
            "spec": {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}});
        feed.commit("apps/daemonsets", ChangeKind::Added, None, ds);
        let on = |node: &str| json!({"spec": {"nodeName": node}, "status": {"phase": "Running"}});
        for (pod, node) in [("a1", "n1"), ("b1", "n1"), ("a2", "n2"), ("b2", "n2")] {
            feed.commit("/pods", ChangeKind::Added, None, owned(pod, "ds", on(node)));
        }
        assert!(feed.oracle.violations.is_empty(), "{:?}", feed.oracle.violations);
        feed.commit("/pods", ChangeKind::Added, None, owned("c1", "ds", on("n1")));
        assert_eq!(feed.oracle.violations.len(), 1, "{:?}", feed.oracle.violations);
    }

    #[test]
    fn job_pods_past_parallelism_completions_or_the_finish_are_caught() {
        let mut feed = Feed::new();
        let job = |done: bool| {
            let conditions = if done { json!([{"type": "Complete", "status": "True"}]) } else { json!([]) };
            json!({"metadata": {"name": "j", "namespace": "default", "uid": "j"},
                "spec": {"parallelism": 1, "completions": 1}, "status": {"conditions": conditions}})
        };
        feed.commit("batch/jobs", ChangeKind::Added, None, job(false));
        let phase = |p: &str| json!({"status": {"phase": p}});
        feed.commit("/pods", ChangeKind::Added, None, owned("p1", "j", phase("Running")));
        feed.commit("/pods", ChangeKind::Modified, None, owned("p1", "j", phase("Succeeded")));
        feed.commit("batch/jobs", ChangeKind::Modified, None, job(true));
        assert!(feed.oracle.violations.is_empty(), "{:?}", feed.oracle.violations);
        feed.commit("/pods", ChangeKind::Added, None, owned("p2", "j", phase("Running")));
        let found = feed.oracle.violations.join("\n");
        assert!(found.contains("already finished"), "{found}");
        feed.commit("/pods", ChangeKind::Added, None, owned("p3", "j", phase("Running")));
        assert!(
            feed.oracle.violations.join("\n").contains("active pods > parallelism"),
            "{:?}",
            feed.oracle.violations
        );
    }
}
