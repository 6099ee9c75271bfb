//! Fixtures shared by the table tests of every module.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, ObjectReference, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec, ServiceAccount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};

use crate::plan::{Action, NoOwnWrites, OwnerRefPatch, Plan, Step};
use crate::protocol::{Core, Finish, Refusal, Told, WriteError};

/// Upstream's `serviceAccount(secretRefs)`: `default/default`, uid
/// `12345`, listing `secrets` (`tokenSecretReferences()` is
/// `["token-secret-1"]`, `emptySecretReferences()` none).
pub fn service_account(secrets: &[&str]) -> ServiceAccount {
    ServiceAccount {
        metadata: ObjectMeta {
            name: Some("default".into()),
            namespace: Some("default".into()),
            uid: Some("12345".into()),
            resource_version: Some("1".into()),
            ..ObjectMeta::default()
        },
        secrets: Some(
            secrets.iter().map(|n| ObjectReference { name: Some((*n).into()), ..Default::default() }).collect(),
        ),
        ..ServiceAccount::default()
    }
}

/// `secs` seconds after the epoch.
pub fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap()
}

/// A label map from pairs.
pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The pod template with this image, labels `app=web`.
pub fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta { labels: Some(labels(&[("app", "web")])), ..Default::default() }),
        spec: Some(PodSpec {
            containers: vec![Container { name: "c".into(), image: Some(image.into()), ..Default::default() }],
            ..Default::default()
        }),
    }
}

/// Marks `pod` Running and Ready since `since` (upstream's `markPodReady`
/// in the DaemonSet and StatefulSet tests).
pub fn mark_ready(pod: &mut Pod, since: Timestamp) {
    pod.status.get_or_insert_default().phase = Some("Running".into());
    set_ready_condition(pod, "True", Some(since));
}

/// Gives `pod` a single Ready condition of `status`.
fn set_ready_condition(pod: &mut Pod, status: &str, since: Option<Timestamp>) {
    pod.status.get_or_insert_default().conditions = Some(vec![PodCondition {
        type_: "Ready".into(),
        status: status.into(),
        last_transition_time: since.map(Time),
        ..Default::default()
    }]);
}

/// Builds pods in namespace `ns` with labels `app=web` unless told otherwise.
#[derive(Clone)]
pub struct PodBuilder(Pod);

impl PodBuilder {
    pub fn new(name: &str) -> Self {
        Self(Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                uid: Some(format!("uid-{name}")),
                labels: Some(labels(&[("app", "web")])),
                creation_timestamp: Some(Time(ts(0))),
                ..Default::default()
            },
            spec: Some(PodSpec::default()),
            status: Some(PodStatus::default()),
        })
    }
    pub fn name(mut self, name: &str) -> Self {
        self.0.metadata.name = Some(name.into());
        self
    }
    pub fn uid(mut self, uid: &str) -> Self {
        self.0.metadata.uid = Some(uid.into());
        self
    }
    pub fn labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0.metadata.labels = Some(labels(pairs));
        self
    }
    pub fn annotation(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.annotations.get_or_insert_default().insert(k.into(), v.into());
        self
    }
    /// Controlled by the ReplicaSet with this uid.
    pub fn owned_by(mut self, uid: &str) -> Self {
        self.0.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "owner".into(),
            uid: uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
        self
    }
    pub fn node(mut self, node: &str) -> Self {
        self.0.spec.get_or_insert_default().node_name = (!node.is_empty()).then(|| node.into());
        self
    }
    pub fn phase(mut self, phase: &str) -> Self {
        self.0.status.get_or_insert_default().phase = Some(phase.into());
        self
    }
    /// Running and Ready since `since`.
    pub fn ready_since(mut self, since: Timestamp) -> Self {
        mark_ready(&mut self.0, since);
        self
    }
    pub fn not_ready(mut self) -> Self {
        set_ready_condition(&mut self.0, "False", None);
        self
    }
    pub fn deleting(mut self, at: Timestamp) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(at));
        self
    }
    pub fn created(mut self, at: Timestamp) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(at));
        self
    }
    pub fn restarts(mut self, n: i32) -> Self {
        self.0.status.get_or_insert_default().container_statuses =
            Some(vec![ContainerStatus { name: "c".into(), restart_count: n, ..Default::default() }]);
        self
    }
    pub fn sidecar_restarts(mut self, n: i32) -> Self {
        self.0.spec.get_or_insert_default().init_containers =
            Some(vec![Container { name: "side".into(), restart_policy: Some("Always".into()), ..Default::default() }]);
        self.0.status.get_or_insert_default().init_container_statuses =
            Some(vec![ContainerStatus { name: "side".into(), restart_count: n, ..Default::default() }]);
        self
    }
    /// The pod as the caches hold it: the API's form, decoded by the
    /// slim projection's own decoder.
    pub fn build(self) -> kcm_objects::Pod {
        slim(&self.0)
    }
    pub fn arc(self) -> Arc<kcm_objects::Pod> {
        Arc::new(self.build())
    }
}

/// `pod` as the caches hold it.
pub fn slim(pod: &Pod) -> kcm_objects::Pod {
    serde_json::from_value(serde_json::to_value(pod).unwrap()).unwrap()
}

/// Builds ReplicaSet `ns/web` (uid `rs-uid`, generation 1, observed), selector
/// and template labels `app=web`.
#[derive(Clone)]
pub struct RsBuilder(ReplicaSet);

impl RsBuilder {
    pub fn new(replicas: i32) -> Self {
        Self(ReplicaSet {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("ns".into()),
                uid: Some("rs-uid".into()),
                generation: Some(1),
                resource_version: Some("7".into()),
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                min_ready_seconds: None,
                selector: LabelSelector { match_labels: Some(labels(&[("app", "web")])), ..Default::default() },
                template: Some(template("nginx")),
            },
            status: Some(ReplicaSetStatus { replicas: 0, observed_generation: Some(1), ..Default::default() }),
        })
    }
    pub fn min_ready_seconds(mut self, s: i32) -> Self {
        self.0.spec.min_ready_seconds = Some(s);
        self
    }
    pub fn generation(mut self, g: i64) -> Self {
        self.0.metadata.generation = Some(g);
        self
    }
    pub fn deleting(mut self, at: Timestamp) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(at));
        self
    }
    /// Controlled by a Deployment with this uid.
    pub fn controlled_by(mut self, uid: &str) -> Self {
        self.0.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "dep".into(),
            uid: uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
        self
    }
    pub fn status(mut self, status: ReplicaSetStatus) -> Self {
        self.0.status = Some(status);
        self
    }
    pub fn build(self) -> kcm_objects::ReplicaSet {
        kcm_objects::ReplicaSet::new(self.0)
    }
}

// === plans ===

/// One line per action of `plan` (see [`describe`]).
pub fn describe_plan<W: DescribeOwn>(plan: &Plan<W>) -> Vec<String> {
    plan.actions().map(describe).collect()
}

/// One line for a step: `create x<n>` when it creates pods, `delete
/// <name>,<name>` when it deletes pods, else its actions' lines (see
/// [`describe`]) joined by spaces.
pub fn describe_step<W: DescribeOwn>(step: &Step<W>) -> String {
    let creates = step.actions.iter().filter(|a| matches!(a, Action::CreatePod { .. })).count();
    if creates > 0 {
        return format!("create x{creates}");
    }
    let deletes: Vec<&str> = step
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    if !deletes.is_empty() {
        return format!("delete {}", deletes.join(","));
    }
    step.actions.iter().map(describe).collect::<Vec<_>>().join(" ")
}

/// Drives `core` to its end, each action answered by `answer`: the steps
/// handed out (one line each, see [`describe_step`]) and how the sync
/// finished.
pub fn drive<C: Core>(core: C, answer: impl Fn(&Action<C::Own>) -> Told) -> (Vec<String>, Finish)
where
    C::Own: DescribeOwn,
{
    drive_with(core, describe_step, answer)
}

/// Drives `core` to its end, each action answered by `answer`: the steps
/// it handed out, one line each by `line`, and how it finished.
pub fn drive_with<C: Core>(
    mut core: C,
    line: impl Fn(&Step<C::Own>) -> String,
    answer: impl Fn(&Action<C::Own>) -> Told,
) -> (Vec<String>, Finish) {
    let mut lines = Vec::new();
    while let Some(step) = core.poll() {
        lines.push(line(step));
        let answers = step.actions.iter().map(&answer).collect();
        core.told(answers);
    }
    (lines, core.finish())
}

/// A refusal, as a canned answer.
pub fn refused(refusal: Refusal, message: &str) -> Told {
    Err(WriteError { refusal, message: message.into() })
}

/// One line for an action, as the table tests compare plans:
/// - `recheck`, `expect +<n>`, `expect -<key>,<key>`;
/// - pods: `create pod`, `delete <name>`, `adopt <name>`, `release <name>`;
/// - ReplicaSets: `create <name> <replicas>`, `update <name> <replicas>`,
///   `delete <name>`, `adopt <name>`, `release <name>`, and its status
///   `status <replicas>/<fullyLabeled>/<ready>/<available> gen=<observed>
///   [<type>=<reason>]`;
/// - Deployments: `update deployment`, and its status `status
///   <replicas>/<updated>/<ready>/<available>/<unavailable>
///   [<type>=<reason>]`;
/// - ControllerRevisions: `revision <verb> <name> [<number>]`;
/// - DaemonSets: `relabel <pod> <hash>`, and the status `status
///   <desired>/<current>/<misscheduled>/<ready>/<updated>/<available>/<unavailable>
///   gen=<observed> collisions=<n>`;
/// - StatefulSets: `create <pod> [+<claim>,...]`, `claims <claim>,...`,
///   `repair <pod> [+<claim>,...]`, `claim <claim> [<owner kind>,...]`,
///   `delete <pod>`, `fail <error>`, and the status `status
///   <replicas>/<ready>/<available>/<current>/<updated> <current
///   revision>-><update revision>`; their calls: `claim create <claim>`,
///   `create <pod>`, `read <pod>`, `update <pod>`, and as above;
/// - Jobs: `job <write as Debug>` (the Job tests judge plans otherwise);
/// - `event <reason>: <message>`.
pub fn describe<W: DescribeOwn>(action: &Action<W>) -> String {
    let n = |v: Option<i32>| v.unwrap_or(0);
    let replica_set = |verb: &str, rs: &ReplicaSet| {
        let replicas = rs.spec.replicas.unwrap_or(-1);
        format!("{verb} {} {replicas}", rs.metadata.name.as_deref().unwrap_or(""))
    };
    match action {
        Action::RecheckOwner { .. } => "recheck".into(),
        Action::ExpectCreations { count, .. } => format!("expect +{count}"),
        Action::ExpectDeletions { pod_keys, .. } => format!("expect -{}", pod_keys.join(",")),
        Action::ForgetCreations { count, .. } => format!("forget +{count}"),
        Action::CreatePod { .. } => "create pod".into(),
        Action::DeletePod { name, .. } | Action::DeleteReplicaSet { name, .. } => format!("delete {name}"),
        Action::PatchPodOwnerRefs { name, patch, .. } | Action::PatchReplicaSetOwnerRefs { name, patch, .. } => {
            match patch {
                OwnerRefPatch::Adopt(_) => format!("adopt {name}"),
                OwnerRefPatch::Release { .. } => format!("release {name}"),
            }
        }
        Action::UpdateReplicaSetStatus { status: s, .. } => {
            let conditions = reasons(s.conditions.iter().flatten().map(|c| (c.type_.as_deref(), &c.reason)));
            format!(
                "status {}/{}/{}/{} gen={}{conditions}",
                s.replicas,
                n(s.fully_labeled_replicas),
                n(s.ready_replicas),
                n(s.available_replicas),
                s.observed_generation.unwrap_or(0),
            )
        }
        Action::CreateReplicaSet { replica_set: rs, .. } => replica_set("create", rs),
        Action::UpdateReplicaSet { replica_set: rs } => replica_set("update", rs),
        Action::UpdateDeploymentStatus { deployment } => {
            let s = deployment.status.clone().unwrap_or_default();
            let conditions = reasons(s.conditions.iter().flatten().map(|c| (c.type_.as_deref(), &c.reason)));
            format!(
                "status {}/{}/{}/{}/{}{conditions}",
                n(s.replicas),
                n(s.updated_replicas),
                n(s.ready_replicas),
                n(s.available_replicas),
                n(s.unavailable_replicas),
            )
        }
        Action::UpdateDeployment { .. } => "update deployment".into(),
        Action::ReadReplicaSet { name, .. } => format!("read {name}"),
        Action::ControllerRevision(write) => describe_revision_write(write),
        Action::Own(write) => write.describe_own(),
        Action::Event(e) => format!("event {}: {}", e.reason, e.message),
    }
}

/// One line for a controller's own write, in [`describe`]'s terms.
pub trait DescribeOwn {
    /// The line.
    fn describe_own(&self) -> String;
}

impl DescribeOwn for NoOwnWrites {
    fn describe_own(&self) -> String {
        match *self {}
    }
}

impl DescribeOwn for crate::daemonset::Write {
    fn describe_own(&self) -> String {
        use crate::daemonset::Write;
        match self {
            Write::UpdateStatus { status: s, .. } => {
                let counts = crate::daemonset::status_counts(s).map(|c| c.to_string()).join("/");
                let collisions = s.collision_count.unwrap_or(0);
                format!("status {counts} gen={} collisions={collisions}", s.observed_generation.unwrap_or(0))
            }
            Write::RelabelPod { name, hash, .. } => format!("relabel {name} {hash}"),
        }
    }
}

impl DescribeOwn for crate::statefulset::Write {
    fn describe_own(&self) -> String {
        describe_stateful_set_write(self)
    }
}

impl DescribeOwn for crate::statefulset::Call {
    fn describe_own(&self) -> String {
        describe_stateful_set_call(self)
    }
}

impl DescribeOwn for crate::job::Write {
    fn describe_own(&self) -> String {
        format!("job {self:?}")
    }
}

/// `revision create <name> <number>`, `revision update <name> <number>`,
/// `revision get <name>`, `revision delete <name>`, `revision adopt <name>`, `revision release <name>`.
fn describe_revision_write(write: &crate::common::history::Write) -> String {
    use crate::common::history::{Write, number};
    let name = |cr: &k8s_openapi::api::apps::v1::ControllerRevision| cr.metadata.name.clone().unwrap_or_default();
    match write {
        Write::Create { revision, .. } => format!("revision create {} {}", name(revision), number(revision)),
        Write::Update { revision } => format!("revision update {} {}", name(revision), number(revision)),
        Write::Get { name, .. } => format!("revision get {name}"),
        Write::Delete { name, .. } => format!("revision delete {name}"),
        Write::PatchOwnerRefs { name, patch: OwnerRefPatch::Adopt(_), .. } => format!("revision adopt {name}"),
        Write::PatchOwnerRefs { name, patch: OwnerRefPatch::Release { .. }, .. } => format!("revision release {name}"),
    }
}

/// See [`describe`].
fn describe_stateful_set_write(write: &crate::statefulset::Write) -> String {
    use crate::statefulset::Write;
    let claims = |claims: &[k8s_openapi::api::core::v1::PersistentVolumeClaim]| {
        let names: Vec<&str> = claims.iter().filter_map(|c| c.metadata.name.as_deref()).collect();
        if names.is_empty() { String::new() } else { format!(" +{}", names.join(",")) }
    };
    match write {
        Write::CreatePod { pod, claims: c, .. } => {
            format!("create {}{}", pod.metadata.name.as_deref().unwrap_or_default(), claims(c))
        }
        Write::CreateClaims { claims: c, .. } => format!("claims{}", claims(c)),
        Write::RepairPod { repair, claims: c, .. } => format!("repair {}{}", repair.name, claims(c)),
        Write::UpdateClaim { claim, .. } => describe_claim_update(claim),
        Write::DeletePod { name, .. } => format!("delete {name}"),
        Write::UpdateStatus(update) => describe_stateful_set_status(&update.status),
        Write::Fail { error, .. } => format!("fail {error}"),
    }
}

/// See [`describe`]: `claim create <claim>`, `create <pod>`, `read <pod>`,
/// `update <pod>`, the claim update, `delete <pod>`, the status.
fn describe_stateful_set_call(call: &crate::statefulset::Call) -> String {
    use crate::statefulset::Call;
    let name = |meta: &ObjectMeta| meta.name.clone().unwrap_or_default();
    match call {
        Call::CreateClaim { claim } => format!("claim create {}", name(&claim.metadata)),
        Call::CreatePod { pod } => format!("create {}", name(&pod.metadata)),
        Call::ReadPod { name, .. } => format!("read {name}"),
        Call::UpdatePod { pod } => format!("update {}", name(&pod.metadata)),
        Call::UpdateClaim { claim } => describe_claim_update(claim),
        Call::DeletePod { name, .. } => format!("delete {name}"),
        Call::UpdateStatus(update) => describe_stateful_set_status(&update.status),
    }
}

/// `claim <claim> [<owner kind>,...]`.
fn describe_claim_update(claim: &k8s_openapi::api::core::v1::PersistentVolumeClaim) -> String {
    let owners: Vec<&str> = claim.metadata.owner_references.iter().flatten().map(|r| r.kind.as_str()).collect();
    format!("claim {} [{}]", claim.metadata.name.as_deref().unwrap_or_default(), owners.join(","))
}

/// `status <replicas>/<ready>/<available>/<current>/<updated> <current
/// revision>-><update revision>`.
fn describe_stateful_set_status(s: &k8s_openapi::api::apps::v1::StatefulSetStatus) -> String {
    let n = |v: Option<i32>| v.unwrap_or(0);
    format!(
        "status {}/{}/{}/{}/{} {}->{}",
        s.replicas,
        n(s.ready_replicas),
        n(s.available_replicas),
        n(s.current_replicas),
        n(s.updated_replicas),
        s.current_revision.as_deref().unwrap_or_default(),
        s.update_revision.as_deref().unwrap_or_default(),
    )
}

/// ` <type>=<reason>` for each condition.
fn reasons<'a>(conditions: impl Iterator<Item = (Option<&'a str>, &'a Option<String>)>) -> String {
    conditions
        .map(|(type_, reason)| format!(" {}={}", type_.unwrap_or_default(), reason.as_deref().unwrap_or_default()))
        .collect()
}

/// An IPv4 EndpointSlice named `name` holding `endpoints` and no ports
/// (the EndpointSlice hint tests).
pub fn ipv4_slice(
    name: &str,
    endpoints: Vec<k8s_openapi::api::discovery::v1::Endpoint>,
) -> k8s_openapi::api::discovery::v1::EndpointSlice {
    k8s_openapi::api::discovery::v1::EndpointSlice {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        address_type: "IPv4".into(),
        endpoints: Some(endpoints),
        ports: None,
    }
}

/// A PEM PKCS#10 request (a fresh ECDSA P-256 key) with subject common
/// name `cn` (none when empty) and organizations `orgs`, asking for the
/// DNS and IP alternative names given (upstream's `makeFancyTestCsr`).
pub fn csr_pem(cn: &str, orgs: &[&str], dns: &[&str], ips: &[std::net::IpAddr]) -> String {
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    if !cn.is_empty() {
        params.distinguished_name.push(DnType::CommonName, cn);
    }
    for (i, org) in orgs.iter().enumerate() {
        // A second O needs a type of its own: the name is a map by type.
        let ty = if i == 0 { DnType::OrganizationName } else { DnType::CustomDnType(vec![2, 5, 4, 10]) };
        params.distinguished_name.push(ty, *org);
    }
    params.subject_alt_names = dns.iter().map(|d| SanType::DnsName((*d).try_into().unwrap())).collect();
    params.subject_alt_names.extend(ips.iter().map(|ip| SanType::IpAddress(*ip)));
    let key = KeyPair::generate().unwrap();
    params.serialize_request(&key).unwrap().pem().unwrap()
}
