//! Controller drivers: the I/O half of each controller, around its
//! sans-IO core in `kcm-controllers`.
//!
//! A driver registers event handlers on the shared informers (changes to
//! queue keys), owns its workqueue and worker pool, and per key builds the
//! core's snapshot from the caches, asks the core for a plan and executes
//! it.
//!
//! # Layout
//! - `execute`: [`Executor`](execute::Executor), the plan executor every
//!   controller shares (API writes, events);
//! - `api_errors`: reading the API server's error answers, for every
//!   driver;
//! - `enqueue`: the handler queueing a controller's own objects' keys
//!   (Deployment, StatefulSet);
//! - `expectations`: the pod expectations of the ReplicaSet and DaemonSet
//!   drivers, shared by their handlers, syncs and executor;
//! - `parts`: what a driver is named ([`Identity`](parts::Identity)) and
//!   built from ([`Parts`](parts::Parts));
//! - `owners`: the indexes of pods and ReplicaSets by controller the
//!   ReplicaSet, Deployment and StatefulSet drivers read;
//! - `service_pods`: the Pod handler of the endpoints and EndpointSlice
//!   controllers (a pod event queues its Services);
//! - `namespace_keys`: the Namespace handler of the two controllers that
//!   keep an object in every namespace;
//! - `nodes`: what the two node controllers share (the `node-controller`
//!   name, a pod's node, the pod index by node name, which the
//!   attach/detach controller reads too);
//! - `attachdetach`: the attach/detach controller
//!   ([`AttachDetachController`](attachdetach::AttachDetachController));
//! - `bootstrapsigner`: the bootstrap signer
//!   ([`BootstrapSigner`](bootstrapsigner::BootstrapSigner));
//! - `clusterroleaggregation`: the ClusterRole aggregation controller
//!   ([`ClusterRoleAggregationController`](clusterroleaggregation::ClusterRoleAggregationController));
//! - `cronjob`: the CronJob controller
//!   ([`CronJobController`](cronjob::CronJobController));
//! - `csrapproving`: the CSR approving controller
//!   ([`CsrApprovingController`](csrapproving::CsrApprovingController));
//! - `csrcleaner`: the CSR cleaner
//!   ([`CsrCleaner`](csrcleaner::CsrCleaner));
//! - `csrsigning`: the CSR signing controller
//!   ([`CsrSigningController`](csrsigning::CsrSigningController));
//! - `daemonset`: the DaemonSet controller
//!   ([`DaemonSetController`](daemonset::DaemonSetController));
//! - `deployment`: the Deployment controller
//!   ([`DeploymentController`](deployment::DeploymentController));
//! - `endpoint`: the endpoints controller
//!   ([`EndpointController`](endpoint::EndpointController));
//! - `endpointslice`: the EndpointSlice controller
//!   ([`EndpointSliceController`](endpointslice::EndpointSliceController));
//! - `endpointslicemirroring`: the EndpointSlice mirroring controller
//!   ([`EndpointSliceMirroringController`](endpointslicemirroring::EndpointSliceMirroringController));
//! - `ephemeralvolume`: the ephemeral volume controller
//!   ([`EphemeralVolumeController`](ephemeralvolume::EphemeralVolumeController));
//! - `expand`: the volume expander
//!   ([`ExpandController`](expand::ExpandController));
//! - `garbagecollector`: the garbage collector
//!   ([`GarbageCollector`](garbagecollector::GarbageCollector));
//! - `job`: the Job controller
//!   ([`JobController`](job::JobController));
//! - `legacytokencleaner`: the legacy service account token cleaner
//!   ([`LegacyTokenCleaner`](legacytokencleaner::LegacyTokenCleaner));
//! - `namespace`: the Namespace controller
//!   ([`NamespaceController`](namespace::NamespaceController));
//! - `nodeipam`: the node-ipam-controller
//!   ([`NodeIpamController`](nodeipam::NodeIpamController));
//! - `nodelifecycle`: the node-lifecycle-controller
//!   ([`NodeLifecycleController`](nodelifecycle::NodeLifecycleController));
//! - `podgc`: the pod-garbage-collector-controller
//!   ([`PodGcController`](podgc::PodGcController));
//! - `pvcprotection`: the PVC protection controller
//!   ([`PvcProtectionController`](pvcprotection::PvcProtectionController));
//! - `pvbinder`: the persistent volume binder
//!   ([`PvBinderController`](pvbinder::PvBinderController));
//! - `pvprotection`: the PV protection controller
//!   ([`PvProtectionController`](pvprotection::PvProtectionController));
//! - `replicaset`: the ReplicaSet controller
//!   ([`ReplicaSetController`](replicaset::ReplicaSetController));
//! - `rootcacertpublisher`: the root CA certificate publisher
//!   ([`RootCaCertPublisher`](rootcacertpublisher::RootCaCertPublisher));
//! - `serviceaccount`: the ServiceAccounts controller
//!   ([`ServiceAccountsController`](serviceaccount::ServiceAccountsController));
//! - `serviceaccounttoken`: the service account token controller
//!   ([`TokensController`](serviceaccounttoken::TokensController));
//! - `servicecidrs`: the ServiceCIDR controller
//!   ([`ServiceCidrController`](servicecidrs::ServiceCidrController));
//! - `statefulset`: the StatefulSet controller
//!   ([`StatefulSetController`](statefulset::StatefulSetController));
//! - `tainteviction`: the taint-eviction-controller
//!   ([`TaintEvictionController`](tainteviction::TaintEvictionController));
//! - `ttlafterfinished`: the TTL-after-finished controller
//!   ([`TtlAfterFinishedController`](ttlafterfinished::TtlAfterFinishedController));
//! - `tokencleaner`: the token cleaner
//!   ([`TokenCleaner`](tokencleaner::TokenCleaner));
//! - `ttl`: the TTL controller
//!   ([`TtlController`](ttl::TtlController)).
//! - `vacprotection`: the VolumeAttributesClass protection controller
//!   ([`VacProtectionController`](vacprotection::VacProtectionController));

mod api_errors;
pub mod attachdetach;
pub mod bootstrapsigner;
pub(crate) mod certificates;
pub mod clusterroleaggregation;
pub mod cronjob;
pub mod csrapproving;
pub mod csrcleaner;
pub mod csrsigning;
pub mod daemonset;
pub mod deployment;
pub mod endpoint;
pub mod endpointslice;
pub mod endpointslicemirroring;
pub mod ephemeralvolume;
pub mod execute;
pub mod expand;
mod expectations;
pub mod garbagecollector;
pub mod job;
pub mod legacytokencleaner;
pub mod namespace;
mod namespace_keys;
pub mod nodeipam;
pub mod nodelifecycle;
mod nodes;
mod owners;
pub mod parts;
pub mod podgc;
pub mod pvbinder;
pub mod pvcprotection;
pub mod pvprotection;
pub mod replicaset;
pub mod rootcacertpublisher;
mod service_pods;
pub mod serviceaccount;
pub mod serviceaccounttoken;
pub mod servicecidrs;
pub mod statefulset;
pub mod tainteviction;
pub mod tokencleaner;
pub mod ttl;
pub mod ttlafterfinished;
pub mod vacprotection;
