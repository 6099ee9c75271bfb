//! Fixtures shared by the garbage collector's table tests: owners and
//! identities named after their objects (`uid-<name>`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::Identity;

pub const RS: (&str, &str) = ("apps/v1", "ReplicaSet");
pub const POD: (&str, &str) = ("v1", "Pod");

pub fn owner(kind: (&str, &str), name: &str, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: kind.0.into(),
        kind: kind.1.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        controller: Some(true),
        block_owner_deletion: block.then_some(true),
    }
}

pub fn ident(kind: (&str, &str), ns: &str, name: &str) -> Identity {
    Identity {
        api_version: kind.0.into(),
        kind: kind.1.into(),
        namespace: ns.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}
