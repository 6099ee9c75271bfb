//! What a request may do: upstream's delegating authorizer
//! (`options/authorization.go`), a union tried in order, the first
//! decision winning:
//!
//! 1. always-allowed groups (`system:masters`: the API server's own
//!    hard-coded rule, so asking it would say yes anyway);
//! 2. always-allowed paths (`--authorization-always-allow-paths`): a path
//!    matches exactly, or by prefix when the rule ends in `*` (only a
//!    trailing `*`); a leading `/` is optional on either side, and `/`
//!    alone matches only `/`. `/healthz` does not cover `/healthz/ping`;
//! 3. a SubjectAccessReview through the authorization kubeconfig, for the
//!    non-resource URL (the request's path) and the verb (the HTTP method
//!    in lower case: `GET /metrics` needs `get` on `/metrics`); its
//!    answer cached for the authorized or the unauthorized TTL.
//!
//! No decision is a denial (403). A review that fails is an error (500).

use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use kube::api::{Api, PostParams};

use super::authn::User;
use super::cache::TtlCache;

/// How long a SubjectAccessReview may take (upstream's `ClientTimeout`).
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// kube-controller-manager's default always-allowed paths.
pub const DEFAULT_ALWAYS_ALLOW_PATHS: &[&str] = &["/healthz", "/readyz", "/livez"];

/// The default always-allowed groups.
pub const DEFAULT_ALWAYS_ALLOW_GROUPS: &[&str] = &["system:masters"];

/// The verb of a non-resource request: its method in lower case.
pub fn verb(method: &http::Method) -> String {
    method.as_str().to_ascii_lowercase()
}

/// `--authorization-always-allow-paths`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathRules {
    exact: Vec<String>,
    prefixes: Vec<String>,
}

impl PathRules {
    /// The rules, as upstream's path authorizer reads them.
    ///
    /// # Errors
    ///
    /// A `*` anywhere but at the end (upstream's message).
    pub fn new(paths: &[String]) -> Result<PathRules, String> {
        let mut rules = PathRules::default();
        for path in paths {
            let path = path.strip_prefix('/').unwrap_or(path);
            match path.strip_suffix('*') {
                _ if path.is_empty() => rules.exact.push(String::new()),
                _ if path[..path.len() - 1].contains('*') => {
                    return Err(format!("only trailing * allowed in {path:?}"));
                }
                Some(prefix) => rules.prefixes.push(prefix.to_owned()),
                None => rules.exact.push(path.to_owned()),
            }
        }
        Ok(rules)
    }

    /// Whether `path` is always allowed.
    pub fn allows(&self, path: &str) -> bool {
        let path = path.strip_prefix('/').unwrap_or(path);
        self.exact.iter().any(|p| p == path) || self.prefixes.iter().any(|p| path.starts_with(p.as_str()))
    }
}

/// An authorization decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Go on.
    Allow,
    /// 403, with the reviewer's reason (may be empty).
    Forbid {
        /// Why, as the API server said.
        reason: String,
    },
}

/// SubjectAccessReviews, answers cached.
pub struct AccessReviewer {
    client: kube::Client,
    allowed_ttl: Duration,
    denied_ttl: Duration,
    /// Answers by the review's spec (as JSON).
    cache: TtlCache<String, SubjectAccessReviewStatus>,
}

impl std::fmt::Debug for AccessReviewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessReviewer")
            .field("allowed_ttl", &self.allowed_ttl)
            .field("denied_ttl", &self.denied_ttl)
            .finish_non_exhaustive()
    }
}

impl AccessReviewer {
    /// Reviews through `client`; answers kept for the
    /// `--authorization-webhook-cache-{authorized,unauthorized}-ttl`.
    pub fn new(client: kube::Client, allowed_ttl: Duration, denied_ttl: Duration) -> AccessReviewer {
        AccessReviewer { client, allowed_ttl, denied_ttl, cache: TtlCache::default() }
    }

    async fn review(&self, user: &User, verb: &str, path: &str) -> Result<SubjectAccessReviewStatus, String> {
        let spec = SubjectAccessReviewSpec {
            user: Some(user.name.clone()),
            uid: Some(user.uid.clone()).filter(|u| !u.is_empty()),
            groups: Some(user.groups.clone()),
            extra: Some(user.extra.clone()).filter(|e| !e.is_empty()),
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(path.to_owned()),
                verb: Some(verb.to_owned()),
            }),
            resource_attributes: None,
        };
        let key = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
        if let Some(known) = self.cache.get(&key) {
            return Ok(known);
        }
        let api: Api<SubjectAccessReview> = Api::all(self.client.clone());
        let review = SubjectAccessReview { spec, ..SubjectAccessReview::default() };
        let answer = tokio::time::timeout(REVIEW_TIMEOUT, api.create(&PostParams::default(), &review))
            .await
            .map_err(|_| "SubjectAccessReview timed out".to_owned())?
            .map_err(|e| format!("SubjectAccessReview failed: {e}"))?;
        let status = answer.status.unwrap_or_default();
        let ttl = if status.allowed { self.allowed_ttl } else { self.denied_ttl };
        self.cache.insert(key, status.clone(), ttl);
        Ok(status)
    }
}

/// The delegating authorizer.
#[derive(Debug, Default)]
pub struct Authorizer {
    /// Groups allowed everything.
    pub always_allow_groups: Vec<String>,
    /// Paths allowed to everyone.
    pub always_allow_paths: PathRules,
    /// Everything else, when an authorization kubeconfig is known.
    pub reviews: Option<AccessReviewer>,
}

impl Authorizer {
    /// Whether `user` may `verb` the non-resource URL `path`.
    ///
    /// # Errors
    ///
    /// The review failed (answered 500).
    pub async fn authorize(&self, user: &User, verb: &str, path: &str) -> Result<Decision, String> {
        if user.groups.iter().any(|g| self.always_allow_groups.contains(g)) || self.always_allow_paths.allows(path) {
            return Ok(Decision::Allow);
        }
        let Some(reviews) = &self.reviews else {
            return Ok(Decision::Forbid { reason: String::new() });
        };
        let status = reviews.review(user, verb, path).await?;
        Ok(if status.allowed {
            Decision::Allow
        } else {
            Decision::Forbid { reason: status.reason.unwrap_or_default() }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(paths: &[&str]) -> PathRules {
        PathRules::new(&paths.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn paths_match_exactly_or_by_trailing_star() {
        let r = rules(&["/healthz", "readyz", "/debug/*"]);
        assert!(r.allows("/healthz") && r.allows("/readyz") && r.allows("/debug/pprof") && r.allows("/debug/"));
        assert!(!r.allows("/healthz/ping"), "no prefix without *");
        assert!(!r.allows("/metrics") && !r.allows("/debug"));
        let root = rules(&["/"]);
        assert!(root.allows("/") && !root.allows("/metrics"));
        assert!(rules(&["*"]).allows("/anything"));
        let bad = PathRules::new(&["/a*b".to_owned()]).unwrap_err();
        assert_eq!(bad, "only trailing * allowed in \"a*b\"");
    }

    #[test]
    fn the_verb_is_the_method_in_lower_case() {
        assert_eq!(verb(&http::Method::GET), "get");
        assert_eq!(verb(&http::Method::HEAD), "head");
        assert_eq!(verb(&http::Method::POST), "post");
    }

    #[tokio::test]
    async fn groups_and_paths_decide_without_a_reviewer() {
        let authz = Authorizer {
            always_allow_groups: vec!["system:masters".to_owned()],
            always_allow_paths: rules(DEFAULT_ALWAYS_ALLOW_PATHS),
            reviews: None,
        };
        let anonymous = User::anonymous();
        assert_eq!(authz.authorize(&anonymous, "get", "/healthz").await, Ok(Decision::Allow));
        assert_eq!(
            authz.authorize(&anonymous, "get", "/metrics").await,
            Ok(Decision::Forbid { reason: String::new() })
        );
        let admin = User { name: "admin".into(), groups: vec!["system:masters".into()], ..User::default() };
        assert_eq!(authz.authorize(&admin, "get", "/metrics").await, Ok(Decision::Allow));
    }
}
