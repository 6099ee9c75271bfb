//! What both the ReplicaSet and the Deployment controllers read of a
//! ReplicaSet.

use kcm_objects::ReplicaSet;

/// `spec.replicas`, defaulting to 1 as the API does.
pub fn replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}
