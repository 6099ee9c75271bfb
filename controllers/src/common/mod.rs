//! Helpers every controller core shares, each named after the upstream
//! concept it reproduces.
//!
//! - `selector`: label selectors (`LabelSelectorAsSelector`, `Matches`);
//! - `controller_ref`: controller references and the claim decision
//!   (adopt/release, `controller_ref_manager.go`);
//! - `pod`: active, ready and available pods (`pkg/api/v1/pod/util.go`);
//! - `ranking`: which pods to delete first (`ActivePodsWithRanks`);
//! - `int_or_percent`: maxSurge and maxUnavailable as numbers of pods
//!   (`GetScaledValueFromIntOrPercent`);
//! - `replica_set`: what a ReplicaSet's and a Deployment's controllers both
//!   read of a ReplicaSet (`spec.replicas`);
//! - `job_finished`: whether a Job finished (`IsJobFinished`);
//! - `pod_control`: the pod built from a template, and pod write events;
//! - `endpoint_pods`: which pods and ports a Service's endpoints list, and
//!   which Services a pod event concerns (`k8s.io/endpointslice/util`);
//! - `endpoint_subsets`: an Endpoints' subsets repacked, compared and cut
//!   to capacity (`pkg/api/v1/endpoints` `RepackSubsets`);
//! - `endpoints_annotations`: the annotations an Endpoints carries
//!   (last-change-trigger-time, the leader-election record);
//! - `expectations`: the creations and deletions a controller issued and
//!   has not yet observed (`ControllerExpectations`);
//! - `slow_start`: creations in steps of 1, 2, 4, ... (`slowStartBatch`);
//! - `hash`: FNV-32 and upstream's `SafeEncodeString`, behind generated
//!   names;
//! - `template_hash`: the pod-template hash and template equality ignoring
//!   it (`ComputeHash`, `EqualIgnoreHash`);
//! - `semantic`: upstream's semantic equality on JSON (nil equals empty);
//! - `token_secret`: the type, annotations and keys of a service account
//!   token Secret (`v1.SecretTypeServiceAccountToken` and its keys);
//! - `toleration`: whether a toleration tolerates a taint
//!   (`ToleratesTaint`);
//! - `history`: ControllerRevisions, the history DaemonSets and
//!   StatefulSets keep (upstream's `pkg/controller/history`: names, hashes,
//!   claims, the create's collision loop);
//! - `csr`: what the certificate controllers read of a
//!   CertificateSigningRequest (its parsed PKCS#10 request, its approval
//!   conditions, whether it is issued; `pkg/apis/certificates/helpers.go`);
//! - `ephemeral`: generic ephemeral volumes' claims and the pod index by
//!   claim (`component-helpers/storage/ephemeral`, `volume/common`);
//! - `protection`: the storage protection finalizers' two questions
//!   (`protectionutil`: deletion candidate, finalizer to add);
//! - `csi_migration`: the in-tree plugins migrated to CSI and their
//!   drivers (`csimigration`, csi-translation-lib);
//! - `quantity`: storage quantities as whole bytes (`Quantity.Value()`);
//! - `object`: an object's queue key and [`ObjectRef`](crate::plan::ObjectRef).

pub mod controller_ref;
pub mod csi_migration;
pub mod csr;
pub mod endpoint_pods;
pub mod endpoint_subsets;
pub mod endpoints_annotations;
pub mod ephemeral;
pub mod expectations;
pub mod hash;
pub mod history;
pub mod int_or_percent;
pub mod job_finished;
pub(crate) mod object;
pub mod pod;
pub mod pod_control;
pub mod protection;
pub mod quantity;
pub mod ranking;
pub mod replica_set;
pub mod selector;
pub mod semantic;
pub mod slow_start;
pub mod template_hash;
pub mod token_secret;
pub mod toleration;
