//! Helpers every controller core shares, each named after the upstream
//! concept it reproduces.
//!
//! - `selector`: label selectors (`LabelSelectorAsSelector`, `Matches`);
//! - `controller_ref`: controller references and the claim decision
//!   (adopt/release, `controller_ref_manager.go`);
//! - `pod`: active, ready and available pods (`pkg/api/v1/pod/util.go`);
//! - `ranking`: which pods to delete first (`ActivePodsWithRanks`);
//! - `pod_control`: the pod built from a template, and pod write events;
//! - `endpoint_pods`: which pods and ports a Service's endpoints list, and
//!   which Services a pod event concerns (`k8s.io/endpointslice/util`);
//! - `hash`: FNV-32 and upstream's `SafeEncodeString`, behind generated
//!   names;
//! - `semantic`: upstream's semantic equality on JSON (nil equals empty);
//! - `history`: ControllerRevisions, the history DaemonSets and
//!   StatefulSets keep (upstream's `pkg/controller/history`: names, hashes,
//!   claims, the create's collision loop);
//! - `object`: an object's queue key and [`ObjectRef`](crate::plan::ObjectRef).

pub mod controller_ref;
pub mod endpoint_pods;
pub mod hash;
pub mod history;
pub(crate) mod object;
pub mod pod;
pub mod pod_control;
pub mod ranking;
pub mod selector;
pub mod semantic;
