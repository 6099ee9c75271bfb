//! The table of resource types kube-sim serves.
//!
//! Every type is one [`ResourceType`] entry: its group, version, names,
//! scope, verbs and subresources, as the real API server advertises them in
//! discovery. Objects themselves are schemaless JSON in the store, so adding
//! a type is adding an entry here (built-in types also name a k8s-openapi
//! type for validation in the `validation` module). Types registered at run time
//! (custom resources) join the same [`Registry`].

use std::sync::{Arc, RwLock};

/// How kube-sim checks and prints the objects of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// core/v1 Namespace.
    Namespace,
    /// core/v1 Node.
    Node,
    /// core/v1 Pod.
    Pod,
    /// core/v1 Service.
    Service,
    /// core/v1 Endpoints.
    Endpoints,
    /// core/v1 ConfigMap.
    ConfigMap,
    /// core/v1 Secret.
    Secret,
    /// core/v1 ServiceAccount.
    ServiceAccount,
    /// core/v1 Event.
    CoreEvent,
    /// core/v1 PodTemplate.
    PodTemplate,
    /// core/v1 PersistentVolumeClaim.
    PersistentVolumeClaim,
    /// apps/v1 Deployment.
    Deployment,
    /// apps/v1 ReplicaSet.
    ReplicaSet,
    /// apps/v1 DaemonSet.
    DaemonSet,
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// apps/v1 ControllerRevision.
    ControllerRevision,
    /// batch/v1 Job.
    Job,
    /// batch/v1 CronJob.
    CronJob,
    /// coordination.k8s.io/v1 Lease.
    Lease,
    /// events.k8s.io/v1 Event.
    EventsEvent,
    /// discovery.k8s.io/v1 EndpointSlice.
    EndpointSlice,
    /// policy/v1 PodDisruptionBudget.
    PodDisruptionBudget,
    /// rbac.authorization.k8s.io/v1 ClusterRole.
    ClusterRole,
    /// rbac.authorization.k8s.io/v1 ClusterRoleBinding.
    ClusterRoleBinding,
    /// rbac.authorization.k8s.io/v1 Role.
    Role,
    /// rbac.authorization.k8s.io/v1 RoleBinding.
    RoleBinding,
}

impl Builtin {
    /// Every built-in kind.
    pub const ALL: [Builtin; 26] = [
        Builtin::Namespace,
        Builtin::Node,
        Builtin::Pod,
        Builtin::Service,
        Builtin::Endpoints,
        Builtin::ConfigMap,
        Builtin::Secret,
        Builtin::ServiceAccount,
        Builtin::CoreEvent,
        Builtin::PodTemplate,
        Builtin::PersistentVolumeClaim,
        Builtin::Deployment,
        Builtin::ReplicaSet,
        Builtin::DaemonSet,
        Builtin::StatefulSet,
        Builtin::ControllerRevision,
        Builtin::Job,
        Builtin::CronJob,
        Builtin::Lease,
        Builtin::EventsEvent,
        Builtin::EndpointSlice,
        Builtin::PodDisruptionBudget,
        Builtin::ClusterRole,
        Builtin::ClusterRoleBinding,
        Builtin::Role,
        Builtin::RoleBinding,
    ];
}

/// A subresource served under `.../{name}/{subresource}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// `status`: writes change `.status` only; writes to the main resource
    /// leave `.status` alone.
    Status,
    /// `scale`: an `autoscaling/v1` Scale view of `.spec.replicas`.
    Scale,
    /// `finalize` (namespaces): writes change `.spec.finalizers` only.
    Finalize,
}

impl Subresource {
    /// The path segment naming this subresource.
    pub fn segment(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Scale => "scale",
            Subresource::Finalize => "finalize",
        }
    }

    /// Parses a path segment.
    pub fn from_segment(segment: &str) -> Option<Self> {
        match segment {
            "status" => Some(Subresource::Status),
            "scale" => Some(Subresource::Scale),
            "finalize" => Some(Subresource::Finalize),
            _ => None,
        }
    }
}

/// One served resource type.
#[derive(Debug, Clone)]
pub struct ResourceType {
    /// API group; empty for the core group.
    pub group: String,
    /// API version within the group.
    pub version: String,
    /// Plural, lower-case resource name (the path segment).
    pub plural: String,
    /// Singular, lower-case name.
    pub singular: String,
    /// Kind of the objects.
    pub kind: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// kubectl short names (`po`, `deploy`, ...).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Subresources served.
    pub subresources: Vec<Subresource>,
    /// Verbs the main resource serves (discovery lists them; others get
    /// `405 MethodNotAllowed`): [`VERBS`] for every built-in.
    pub verbs: Vec<String>,
    /// Built-in behaviour, or `None` for a type registered at run time.
    pub builtin: Option<Builtin>,
}

/// The verbs kube-sim serves, and every built-in type supports.
pub const VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// [`VERBS`], owned.
pub fn all_verbs() -> Vec<String> {
    VERBS.iter().map(|v| (*v).to_owned()).collect()
}

impl ResourceType {
    /// `apiVersion` of the objects (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// Whether the main resource serves `verb`.
    pub fn serves(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether the subresource is served.
    pub fn has(&self, sub: Subresource) -> bool {
        self.subresources.contains(&sub)
    }

    /// `plural.group` (`deployments.apps`, `pods`), as in messages.
    pub fn qualified_name(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// The base path of the collection in `namespace` (or cluster-wide).
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{prefix}/namespaces/{ns}/{}", self.plural),
            _ => format!("{prefix}/{}", self.plural),
        }
    }
}

/// Builds one built-in entry. The arguments mirror the columns of the
/// table below, which reads better than a builder chain per row.
#[allow(clippy::too_many_arguments)]
fn builtin(
    builtin: Builtin,
    group: &str,
    plural: &str,
    kind: &str,
    namespaced: bool,
    short_names: &[&str],
    all: bool,
    subresources: &[Subresource],
) -> ResourceType {
    ResourceType {
        namespaced,
        short_names: short_names.iter().map(|s| (*s).to_owned()).collect(),
        categories: if all { vec!["all".to_owned()] } else { Vec::new() },
        builtin: Some(builtin),
        ..schemaless(group, plural, kind, "", subresources)
    }
}

/// A cluster-scoped type served schemaless (no validation, no defaults,
/// not a [`Builtin`]), as a custom resource is: enough for kcm-rs's
/// informers and writes on the types kube-sim does not model; the testbed
/// is their ground truth.
fn schemaless(group: &str, plural: &str, kind: &str, short_name: &str, subresources: &[Subresource]) -> ResourceType {
    ResourceType {
        group: group.to_owned(),
        version: "v1".to_owned(),
        plural: plural.to_owned(),
        singular: kind.to_lowercase(),
        kind: kind.to_owned(),
        namespaced: false,
        short_names: [short_name].into_iter().filter(|s| !s.is_empty()).map(str::to_owned).collect(),
        categories: Vec::new(),
        subresources: subresources.to_vec(),
        verbs: all_verbs(),
        builtin: None,
    }
}

/// The RBAC API group.
const RBAC: &str = "rbac.authorization.k8s.io";

/// The built-in types, in the order discovery lists them.
fn builtins() -> Vec<ResourceType> {
    use Builtin as B;
    use Subresource::{Finalize, Scale, Status};
    vec![
        builtin(B::ConfigMap, "", "configmaps", "ConfigMap", true, &["cm"], false, &[]),
        builtin(B::Endpoints, "", "endpoints", "Endpoints", true, &["ep"], false, &[]),
        builtin(B::CoreEvent, "", "events", "Event", true, &["ev"], false, &[]),
        builtin(B::Namespace, "", "namespaces", "Namespace", false, &["ns"], false, &[Status, Finalize]),
        builtin(B::Node, "", "nodes", "Node", false, &["no"], false, &[Status]),
        builtin(
            B::PersistentVolumeClaim,
            "",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            true,
            &["pvc"],
            false,
            &[Status],
        ),
        // Served schemaless (no validation, no defaults): enough for the
        // PV protection controller's informer and updates, so that kcm-rs's
        // caches sync here; the testbed is its ground truth.
        schemaless("", "persistentvolumes", "PersistentVolume", "pv", &[Status]),
        builtin(B::Pod, "", "pods", "Pod", true, &["po"], true, &[Status]),
        builtin(B::PodTemplate, "", "podtemplates", "PodTemplate", true, &[], false, &[]),
        builtin(B::Secret, "", "secrets", "Secret", true, &[], false, &[]),
        builtin(B::ServiceAccount, "", "serviceaccounts", "ServiceAccount", true, &["sa"], false, &[]),
        builtin(B::Service, "", "services", "Service", true, &["svc"], true, &[Status]),
        builtin(B::ControllerRevision, "apps", "controllerrevisions", "ControllerRevision", true, &[], false, &[]),
        builtin(B::DaemonSet, "apps", "daemonsets", "DaemonSet", true, &["ds"], true, &[Status]),
        builtin(B::Deployment, "apps", "deployments", "Deployment", true, &["deploy"], true, &[Status, Scale]),
        builtin(B::ReplicaSet, "apps", "replicasets", "ReplicaSet", true, &["rs"], true, &[Status, Scale]),
        builtin(B::StatefulSet, "apps", "statefulsets", "StatefulSet", true, &["sts"], true, &[Status, Scale]),
        builtin(B::CronJob, "batch", "cronjobs", "CronJob", true, &["cj"], true, &[Status]),
        builtin(B::Job, "batch", "jobs", "Job", true, &[], true, &[Status]),
        // Served schemaless (no validation, no `approval` subresource):
        // enough for the certificate controllers' informer and deletes, so
        // that kcm-rs's caches sync here; the testbed is their ground truth.
        schemaless("certificates.k8s.io", "certificatesigningrequests", "CertificateSigningRequest", "csr", &[Status]),
        // Served schemaless, as PersistentVolumes: enough for the
        // VolumeAttributesClass protection controller's informer and
        // updates; the testbed is its ground truth.
        schemaless("storage.k8s.io", "volumeattributesclasses", "VolumeAttributesClass", "vac", &[]),
        builtin(B::Lease, "coordination.k8s.io", "leases", "Lease", true, &[], false, &[]),
        builtin(B::EndpointSlice, "discovery.k8s.io", "endpointslices", "EndpointSlice", true, &[], false, &[]),
        builtin(B::EventsEvent, "events.k8s.io", "events", "Event", true, &["ev"], false, &[]),
        builtin(
            B::PodDisruptionBudget,
            "policy",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            true,
            &["pdb"],
            false,
            &[Status],
        ),
        builtin(B::ClusterRoleBinding, RBAC, "clusterrolebindings", "ClusterRoleBinding", false, &[], false, &[]),
        builtin(B::ClusterRole, RBAC, "clusterroles", "ClusterRole", false, &[], false, &[]),
        builtin(B::RoleBinding, RBAC, "rolebindings", "RoleBinding", true, &[], false, &[]),
        builtin(B::Role, RBAC, "roles", "Role", true, &[], false, &[]),
        // Served schemaless (no validation, no defaults): enough for the
        // persistent volume binder's informer, so that kcm-rs's caches
        // sync here; the testbed is its ground truth.
        schemaless("storage.k8s.io", "storageclasses", "StorageClass", "sc", &[]),
        // Served schemaless, for the attach/detach controller's informers
        // and writes; the testbed is its ground truth. The tests play the
        // external attacher through the `status` subresource.
        schemaless("storage.k8s.io", "volumeattachments", "VolumeAttachment", "", &[Status]),
        schemaless("storage.k8s.io", "csidrivers", "CSIDriver", "", &[]),
    ]
}

/// The set of served types; built-ins first, then those registered at run
/// time. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Registry {
    types: Arc<RwLock<Vec<Arc<ResourceType>>>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry { types: Arc::new(RwLock::new(builtins().into_iter().map(Arc::new).collect())) }
    }
}

impl Registry {
    /// Every served type.
    pub fn all(&self) -> Vec<Arc<ResourceType>> {
        self.types.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The type served at `group`/`version`/`plural`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.all().into_iter().find(|t| t.group == group && t.version == version && t.plural == plural)
    }

    /// The built-in type of that kind.
    pub fn builtin(&self, which: Builtin) -> Arc<ResourceType> {
        self.all()
            .into_iter()
            .find(|t| t.builtin == Some(which))
            .unwrap_or_else(|| unreachable!("every built-in is registered at construction"))
    }

    /// Serves a new type (a custom resource). Replaces an earlier entry with
    /// the same group, version and plural.
    pub fn register(&self, rt: ResourceType) {
        let mut types = self.types.write().unwrap_or_else(|p| p.into_inner());
        types.retain(|t| !(t.group == rt.group && t.version == rt.version && t.plural == rt.plural));
        types.push(Arc::new(rt));
    }

    /// The API groups (other than core) in discovery order, each with its
    /// versions.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for t in self.all().iter().filter(|t| !t.group.is_empty()) {
            match out.iter_mut().find(|(g, _)| *g == t.group) {
                Some((_, versions)) if !versions.contains(&t.version) => versions.push(t.version.clone()),
                Some(_) => {}
                None => out.push((t.group.clone(), vec![t.version.clone()])),
            }
        }
        out
    }
}
