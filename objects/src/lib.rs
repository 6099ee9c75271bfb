//! What kcm-rs's caches hold.
//!
//! The high-count kinds (Pods, and Nodes with their image lists) are
//! cached as slim projections: structs decoded straight from the API
//! server's JSON that keep only what some controller reads, with the
//! strings that repeat across objects ([`Atom`]) and the toleration lists
//! held once for the whole process. Secrets and ConfigMaps keep their data
//! only where a controller reads it ([`Secret`], [`ConfigMap`]), and
//! Deployments, ReplicaSets and Jobs their template's spec as JSON
//! ([`Template`], [`PodSpecJson`]). Every other kind is cached as its full
//! k8s-openapi type. [`Cached`] is what the
//! informers store by.
//!
//! The projections are declared here, in one place: a controller that
//! needs another field of a pod or node adds it to [`Pod`] or [`Node`].
//! Nothing is written from a projection; writes are patches, or updates of
//! an object read live, so fields kcm-rs does not keep cannot be lost. (A
//! pod's generic ephemeral volume keeps its claim template whole, as the
//! claim the ephemeral volume controller creates from it.)
//!
//! Being the leaf both the controller cores and the runtime depend on, it
//! also holds the names both layers share: an Event's [`EventType`] and an
//! object's key ([`object_key`]).
//!
//! # Layout
//! - `atom`: [`Atom`], shared strings, and [`Pool`];
//! - `slab`: [`Slab`] and [`SlabMap`], the tables of the caches with an
//!   entry per object;
//! - `meta`: [`Meta`], the metadata a projection keeps, [`Labels`],
//!   [`OwnerRef`];
//! - `cached`: [`Cached`], [`Projection`] and [`Wire`]; a cached object is
//!   [`Keyed`] by its `namespace/name` in a [`Slab`], without a copy;
//! - `config`: [`Secret`] and [`ConfigMap`], trimmed of data no controller
//!   reads;
//! - `pod`: [`Pod`];
//! - `template`: [`Template`], a pod template with its spec as
//!   [`PodSpecJson`];
//! - `apps`: [`Deployment`] and [`ReplicaSet`], k8s-openapi's fields with
//!   the metadata as a [`WholeMeta`], the selector as a [`SelectorSpec`]
//!   and the template as a [`Template`];
//! - `whole_meta`: [`WholeMeta`], every field of an object's metadata but
//!   `managedFields`, its maps shared;
//! - `selector`: [`SelectorSpec`], a label selector, its `matchLabels`
//!   shared;
//! - `job`: [`Job`], k8s-openapi's object with its template's spec as JSON;
//! - `affinity`: the node a pending DaemonSet pod is for;
//! - `container`: what is decoded of a container, [`NamedPort`];
//! - `secrets`: the Secrets a pod references (`RareSpec::secret_names`);
//! - `node`: [`Node`];
//! - `event_type`: [`EventType`];
//! - `key`: [`object_key`], the `namespace/name` key of every cache and queue;
//! - `seconds`: `Seconds`, an API time kept to the second in 8 bytes;
//! - `uid`: [`Uid`], an object's uid, 16 bytes inline for a UUID.

mod affinity;
mod apps;
mod atom;
mod cached;
mod config;
mod container;
mod event_type;
mod job;
mod key;
mod meta;
mod node;
mod pod;
mod pod_status;
mod seconds;
mod secrets;
mod selector;
mod slab;
mod template;
mod uid;
mod whole_meta;

pub use apps::{Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec};
pub use atom::{Atom, Pool, SharedList};
pub use cached::{Cached, Projection, Wire, project};
pub use config::{
    BOOTSTRAP_TOKEN_TYPE, CLUSTER_INFO, ConfigMap, ROOT_CA_CONFIG_MAP, SERVICE_ACCOUNT_TOKEN_TYPE, Secret,
};
pub use container::NamedPort;
pub use event_type::EventType;
pub use job::Job;
pub use key::object_key;
pub use meta::{KEPT_ANNOTATIONS, Labels, Meta, OwnerRef};
pub use node::{Allocatable, Node, NodeSpec, NodeStatus};
pub use pod::{ClaimVolume, ContainerSummary, EphemeralVolume, Pod, PodSpec, RareSpec, Toleration};
pub use pod_status::{ContainerStatus, PodCondition, PodStatus, RareStatus, Terminated};
pub use selector::SelectorSpec;
pub use slab::{Keyed, Slab, SlabMap, SlotId};
pub use template::{PodSpecJson, Template};
pub use uid::Uid;
pub use whole_meta::WholeMeta;

cached::cached_projection!(Pod, k8s_openapi::api::core::v1::Pod);
cached::cached_projection!(Node, k8s_openapi::api::core::v1::Node);
