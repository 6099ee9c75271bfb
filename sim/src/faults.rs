//! Injected faults and request accounting.
//!
//! [`Faults`] holds the fault specification set through `PUT /sim/v1/faults`
//! (or from Rust): for requests matching a verb and resource (either may be
//! left out to match all), add latency and fail a share of them with 500 or
//! 429 + `Retry-After`, or fail every Nth of them with 500 (a fault a test
//! can count on). [`WatchHolds`] holds back one resource's watch
//! events, as a client's watch lagging behind its others does. [`Stats`]
//! counts every Kubernetes API request by client (user agent), verb, API
//! group, resource, namespace and response code, for `GET /sim/v1/stats`
//! (and, say, to derive the RBAC rules a client needs).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::error::ApiError;

/// One fault rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultRule {
    /// Verb to match (`get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection`); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// Resource to match (`pods`, `deployments/status`); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Share of matching requests answered with 500 InternalError (0..=1).
    #[serde(default)]
    pub error_rate: f64,
    /// Every Nth matching request (the Nth, the 2Nth, ...), counted from
    /// when the specification was set, answered with 500 InternalError
    /// whatever the dice say; 0 for none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub error_every: u64,
    /// Share of matching requests answered with 429 TooManyRequests (0..=1).
    #[serde(default)]
    pub throttle_rate: f64,
    /// `Retry-After` seconds of the 429 answers.
    #[serde(default = "default_retry_after")]
    pub retry_after_seconds: u64,
    /// Latency added to every matching request, in milliseconds.
    #[serde(default)]
    pub latency_ms: u64,
}

fn default_retry_after() -> u64 {
    1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The whole fault specification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultSpec {
    /// Rules, first match wins.
    pub rules: Vec<FaultRule>,
}

impl FaultSpec {
    /// Checks the rates are shares.
    pub fn validate(&self) -> Result<(), String> {
        for rule in &self.rules {
            for (name, rate) in [("errorRate", rule.error_rate), ("throttleRate", rule.throttle_rate)] {
                if !(0.0..=1.0).contains(&rate) {
                    return Err(format!("{name} must be between 0 and 1, got {rate}"));
                }
            }
            if rule.error_rate + rule.throttle_rate > 1.0 {
                return Err("errorRate + throttleRate must not exceed 1".into());
            }
        }
        Ok(())
    }
}

/// The faults in force. Cheap to clone; clones share the specification.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    active: Arc<RwLock<Active>>,
}

/// The specification in force and, per rule, the requests it has matched.
#[derive(Debug, Default)]
struct Active {
    spec: FaultSpec,
    matched: Vec<AtomicU64>,
}

impl Active {
    fn new(spec: FaultSpec) -> Self {
        let matched = spec.rules.iter().map(|_| AtomicU64::new(0)).collect();
        Active { spec, matched }
    }
}

impl Faults {
    /// Replaces the specification (and starts its rules' counts afresh).
    pub fn set(&self, spec: FaultSpec) -> Result<(), String> {
        spec.validate()?;
        *self.active.write().unwrap_or_else(|p| p.into_inner()) = Active::new(spec);
        Ok(())
    }

    /// Removes every fault.
    pub fn clear(&self) {
        *self.active.write().unwrap_or_else(|p| p.into_inner()) = Active::default();
    }

    /// The specification in force.
    pub fn get(&self) -> FaultSpec {
        self.active.read().unwrap_or_else(|p| p.into_inner()).spec.clone()
    }

    /// Applies the first matching rule to a request: waits its latency, then
    /// returns the error to answer with, if its count or the dice say so.
    pub async fn inject(&self, verb: &str, resource: &str) -> Option<ApiError> {
        let (rule, nth) = {
            let active = self.active.read().unwrap_or_else(|p| p.into_inner());
            let index = active.spec.rules.iter().position(|r| {
                r.verb.as_deref().is_none_or(|v| v == verb) && r.resource.as_deref().is_none_or(|x| x == resource)
            })?;
            let nth = active.matched[index].fetch_add(1, Ordering::Relaxed) + 1;
            (active.spec.rules[index].clone(), nth)
        };
        if rule.latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(rule.latency_ms)).await;
        }
        let roll: f64 = rand::rng().random();
        let counted = rule.error_every > 0 && nth.is_multiple_of(rule.error_every);
        if counted || roll < rule.error_rate {
            Some(ApiError::internal("injected fault (kube-sim)"))
        } else if roll < rule.error_rate + rule.throttle_rate {
            Some(ApiError::too_many_requests(rule.retry_after_seconds))
        } else {
            None
        }
    }
}

/// The resources whose watch events are held back
/// (`POST /sim/v1/watches/{resource}/hold`, or from Rust). Every watch of
/// a held resource sends nothing of the changes made after the hold began
/// until the resource is released; then it sends them, in order. Nothing
/// is lost in between: a watch that ends (dropped, timed out) and resumes
/// from the last version it sent replays the held changes from the
/// history, held again. Lists, and watches from no version, see the
/// objects as they are: this is a watch lagging behind (one that relisted
/// later than the others), not a stale API server.
/// Cheap to clone; clones share the holds.
#[derive(Debug, Clone)]
pub struct WatchHolds {
    /// Per held resource (`jobs`, `pods`: of every group), the last
    /// version whose changes still go through.
    held: Arc<watch::Sender<BTreeMap<String, u64>>>,
}

impl Default for WatchHolds {
    fn default() -> Self {
        WatchHolds { held: Arc::new(watch::Sender::new(BTreeMap::new())) }
    }
}

impl WatchHolds {
    /// Holds back `resource`'s changes after version `after` (a resource
    /// already held keeps its first hold).
    pub fn hold(&self, resource: &str, after: u64) {
        self.held.send_modify(|held| {
            held.entry(resource.to_owned()).or_insert(after);
        });
    }

    /// Lets `resource`'s held changes go, and those to come.
    pub fn release(&self, resource: &str) {
        self.held.send_modify(|held| {
            held.remove(resource);
        });
    }

    fn holds(held: &BTreeMap<String, u64>, resource: &str, rv: u64) -> bool {
        held.get(resource).is_some_and(|after| rv > *after)
    }

    /// Returns once the change of `resource` at `rv` may be sent: at once
    /// unless it is held, else when `resource` is released.
    pub async fn pass(&self, resource: &str, rv: u64) {
        if !Self::holds(&self.held.borrow(), resource, rv) {
            return;
        }
        let mut held = self.held.subscribe();
        // The sender lives as long as `self`: waiting cannot fail.
        let _ = held.wait_for(|h| !Self::holds(h, resource, rv)).await;
    }
}

/// What a request was, for [`Stats`]: who sent it and what it asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestKind {
    /// The client's `User-Agent` header ("" when absent).
    pub user_agent: String,
    /// The user the request acts as: its `Impersonate-User` header ("" when
    /// absent). kube-sim authenticates no one, so this is the only user
    /// identity a request carries: a kubeconfig's `as:` sets it, which is
    /// how two clients with one user agent (two replicas of one program)
    /// are told apart.
    pub user: String,
    /// Request verb (`get`, `list`, `watch`, `create`, ...; the lower-case
    /// HTTP method for paths that name no resource).
    pub verb: String,
    /// API group of the resource ("" for the core group and for paths that
    /// name no resource).
    pub group: String,
    /// Resource, with its subresource (`pods`, `replicasets/status`); the
    /// path for requests that name no resource (`/apis`, `/version`).
    pub resource: String,
    /// Namespace in the path ("" for cluster-scoped and all-namespace
    /// requests).
    pub namespace: String,
}

/// Request counts by kind and response code.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    counts: Arc<Mutex<BTreeMap<(RequestKind, u16), u64>>>,
}

/// One line of [`Stats::snapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatLine {
    /// The client's `User-Agent`.
    #[serde(default)]
    pub user_agent: String,
    /// The user the request acts as (`Impersonate-User`; "" when none).
    #[serde(default)]
    pub user: String,
    /// Request verb.
    pub verb: String,
    /// API group ("" for core).
    #[serde(default)]
    pub group: String,
    /// Resource (with subresource).
    pub resource: String,
    /// Namespace ("" when none).
    #[serde(default)]
    pub namespace: String,
    /// Response code.
    pub code: u16,
    /// Number of requests.
    pub count: u64,
}

impl Stats {
    /// Counts one request.
    pub fn record(&self, kind: &RequestKind, code: u16) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        match counts.get_mut(&(kind.clone(), code)) {
            Some(count) => *count += 1,
            None => {
                counts.insert((kind.clone(), code), 1);
            }
        }
    }

    /// Every count so far.
    pub fn snapshot(&self) -> Vec<StatLine> {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts
            .iter()
            .map(|((kind, code), count)| StatLine {
                user_agent: kind.user_agent.clone(),
                user: kind.user.clone(),
                verb: kind.verb.clone(),
                group: kind.group.clone(),
                resource: kind.resource.clone(),
                namespace: kind.namespace.clone(),
                code: *code,
                count: *count,
            })
            .collect()
    }

    /// Sum of the requests with this verb (all resources, all codes).
    pub fn total(&self, verb: &str) -> u64 {
        self.snapshot().iter().filter(|l| l.verb == verb).map(|l| l.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn rules_match_by_verb_and_resource_and_fail_their_share() {
        let faults = Faults::default();
        faults
            .set(FaultSpec {
                rules: vec![FaultRule {
                    verb: Some("create".into()),
                    resource: Some("pods".into()),
                    error_rate: 1.0,
                    ..FaultRule::default()
                }],
            })
            .unwrap();
        assert_eq!(faults.inject("create", "pods").await.map(|e| e.code), Some(500));
        assert!(faults.inject("create", "deployments").await.is_none());
        assert!(faults.inject("get", "pods").await.is_none());
        faults.clear();
        assert!(faults.inject("create", "pods").await.is_none());
    }

    #[tokio::test]
    async fn every_nth_matching_request_fails_counted_from_when_the_rule_was_set() {
        let faults = Faults::default();
        let rule = FaultRule { verb: Some("create".into()), error_every: 3, ..FaultRule::default() };
        faults.set(FaultSpec { rules: vec![rule.clone()] }).unwrap();
        let mut answers = Vec::new();
        for _ in 0..7 {
            answers.push(faults.inject("create", "pods").await.map(|e| e.code));
            assert!(faults.inject("get", "pods").await.is_none());
        }
        assert_eq!(answers, [None, None, Some(500), None, None, Some(500), None]);
        faults.set(FaultSpec { rules: vec![rule] }).unwrap();
        assert!(faults.inject("create", "pods").await.is_none(), "a new specification counts afresh");
    }

    #[tokio::test]
    async fn throttling_answers_429_with_retry_after() {
        let faults = Faults::default();
        let rule = FaultRule { throttle_rate: 1.0, retry_after_seconds: 7, ..FaultRule::default() };
        faults.set(FaultSpec { rules: vec![rule] }).unwrap();
        let err = faults.inject("list", "pods").await.unwrap();
        assert_eq!((err.code, err.retry_after), (429, Some(7)));
    }

    #[tokio::test]
    async fn held_changes_pass_once_released_and_earlier_ones_at_once() {
        let holds = WatchHolds::default();
        holds.hold("jobs", 10);
        holds.hold("jobs", 12);
        holds.pass("jobs", 10).await;
        holds.pass("pods", 11).await;
        let waiting = tokio::spawn({
            let holds = holds.clone();
            async move { holds.pass("jobs", 11).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a later change waits: the first hold stays");
        holds.release("jobs");
        waiting.await.expect("released");
        holds.pass("jobs", 13).await;
    }

    #[test]
    fn rates_outside_zero_to_one_are_refused() {
        let rule = FaultRule { error_rate: 1.5, ..FaultRule::default() };
        assert!(FaultSpec { rules: vec![rule] }.validate().is_err());
    }
}
