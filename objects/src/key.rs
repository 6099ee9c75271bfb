//! An object's cache and queue key, as client-go's `MetaNamespaceKeyFunc`
//! spells it: `namespace/name`, or just `name` for a cluster-scoped object
//! (no namespace, or an empty one). The informers' caches, the controllers'
//! queues, their expectations and the event recorder all key by it, so a key
//! one of them computes finds what another stored.

/// `namespace/name`, or `name` when `namespace` is absent or empty.
pub fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_or_cluster_scoped() {
        assert_eq!(object_key(Some("ns"), "a"), "ns/a");
        assert_eq!(object_key(Some(""), "a"), "a");
        assert_eq!(object_key(None, "a"), "a");
    }
}
