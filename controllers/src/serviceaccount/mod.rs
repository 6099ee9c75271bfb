//! The ServiceAccounts controller's decisions (upstream
//! `pkg/controller/serviceaccount/serviceaccounts_controller.go`): every
//! active namespace has the ServiceAccounts the controller ensures
//! (upstream's default list is `default` alone), and one deleted is made
//! again.
//!
//! A plan-returning core of the smallest kind: [`sync`] takes the cached
//! namespace and which of the ensured ServiceAccounts the cache holds, and
//! answers the ServiceAccounts to create, in the ensured order. The driver
//! creates them, counts AlreadyExists as done and ignores a refusal
//! because the namespace is terminating, as upstream does.
//!
//! Which events queue a namespace (every namespace add and update, every
//! ServiceAccount delete) is the driver's; a sync of a namespace that is
//! gone or not `Active` creates nothing, so a terminating namespace is never
//! refilled.

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The ServiceAccount every namespace gets (upstream
/// `DefaultServiceAccountsControllerOptions`).
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The namespace phase in which ServiceAccounts are created.
const ACTIVE: &str = "Active";

/// The ServiceAccounts to create in `namespace` (`None`: not in the cache,
/// nothing to do): each name of `ensured` for which `exists` is false, as
/// a new object carrying only its name and namespace, in `ensured`'s order.
/// Nothing while the namespace's phase is not `Active`.
pub fn sync(namespace: Option<&Namespace>, ensured: &[&str], exists: impl Fn(&str) -> bool) -> Vec<ServiceAccount> {
    let Some(namespace) = namespace else { return Vec::new() };
    if namespace.status.as_ref().and_then(|s| s.phase.as_deref()) != Some(ACTIVE) {
        return Vec::new();
    }
    let ns = namespace.metadata.name.clone().unwrap_or_default();
    ensured
        .iter()
        .filter(|name| !exists(name))
        .map(|name| ServiceAccount {
            metadata: ObjectMeta {
                name: Some((*name).to_owned()),
                namespace: Some(ns.clone()),
                ..ObjectMeta::default()
            },
            ..ServiceAccount::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestServiceAccountCreation`, with its case names: the
    //! controller ensures `default` and `managed`, and each case is a
    //! namespace event or a ServiceAccount deletion followed by one sync of
    //! the namespace it queues.

    use k8s_openapi::api::core::v1::NamespaceStatus;

    use super::*;

    // === utils ===

    const ENSURED: [&str; 2] = [DEFAULT_SERVICE_ACCOUNT, "managed"];

    fn namespace(phase: &str) -> Namespace {
        Namespace {
            metadata: ObjectMeta { name: Some("default".into()), ..ObjectMeta::default() },
            status: Some(NamespaceStatus { phase: Some(phase.into()), ..NamespaceStatus::default() }),
            ..Namespace::default()
        }
    }

    /// The names `sync` creates with `existing` cached.
    fn created(ns: Option<&Namespace>, existing: &[&str]) -> Vec<String> {
        let accounts = sync(ns, &ENSURED, |name| existing.contains(&name));
        for account in &accounts {
            assert_eq!(account.metadata.namespace.as_deref(), Some("default"));
        }
        accounts.into_iter().filter_map(|a| a.metadata.name).collect()
    }

    /// One case: its upstream name, the cached namespace, the cached
    /// ServiceAccounts, the ones created.
    type Case<'a> = (&'a str, Option<&'a Namespace>, &'a [&'a str], &'a [&'a str]);

    // === tests ===

    #[test]
    fn test_service_account_creation() {
        let (active, terminating) = (namespace("Active"), namespace("Terminating"));
        let cases: [Case<'_>; 13] = [
            ("new active namespace missing serviceaccounts", Some(&active), &[], &["default", "managed"]),
            ("new active namespace missing serviceaccount", Some(&active), &["managed"], &["default"]),
            ("new active namespace with serviceaccounts", Some(&active), &["default", "managed"], &[]),
            ("new terminating namespace", Some(&terminating), &[], &[]),
            ("updated active namespace missing serviceaccounts", Some(&active), &[], &["default", "managed"]),
            ("updated active namespace missing serviceaccount", Some(&active), &["default"], &["managed"]),
            ("updated active namespace with serviceaccounts", Some(&active), &["default", "managed"], &[]),
            ("updated terminating namespace", Some(&terminating), &[], &[]),
            ("deleted serviceaccount without namespace", None, &[], &[]),
            ("deleted serviceaccount with active namespace", Some(&active), &["managed"], &["default"]),
            ("deleted serviceaccount with terminating namespace", Some(&terminating), &[], &[]),
            ("deleted unmanaged serviceaccount with active namespace", Some(&active), &["default", "managed"], &[]),
            ("deleted unmanaged serviceaccount with terminating namespace", Some(&terminating), &[], &[]),
        ];
        for (name, ns, existing, want) in cases {
            assert_eq!(created(ns, existing), want, "{name}");
        }
    }

    #[test]
    fn a_namespace_without_a_phase_is_not_active() {
        let mut ns = namespace("Active");
        ns.status = None;
        assert!(created(Some(&ns), &[]).is_empty());
    }
}
