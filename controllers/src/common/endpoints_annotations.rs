//! Annotations an Endpoints object carries, as the API and client-go name
//! them: read or written by the endpoints, EndpointSlice and EndpointSlice
//! mirroring controllers.

/// When the last change the Endpoints (or an EndpointSlice) reflects
/// happened (upstream `v1.EndpointsLastChangeTriggerTime`), RFC 3339 with
/// nanoseconds.
pub const LAST_CHANGE_TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// Annotation of a leader-election record kept in an Endpoints (upstream
/// `resourcelock.LeaderElectionRecordAnnotationKey`): such an Endpoints
/// has no Service and is not queued at start-up.
pub const LEADER_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";
