//! The ServiceCIDR controller's decisions (upstream
//! `pkg/controller/servicecidrs/servicecidrs_controller.go`): a ServiceCIDR
//! carries the [`FINALIZER`] while it lives and the `Ready` condition
//! `True`; deleted, it keeps the finalizer (and says `Ready` `False`,
//! reason `Terminating`) for as long as an IPAddress the API server
//! allocated would be left in no ServiceCIDR, then [`DELETION_GRACE_PERIOD`]
//! more, so that the API server's allocators have stopped allocating from
//! it.
//!
//! Upstream's rule of who may go, with its worked cases: deleting
//! `192.168.0.0/24` is safe when another ServiceCIDR holds the same or a
//! larger prefix (`192.168.0.0/16`); otherwise it is safe unless an
//! allocated address (`192.168.0.1`) is in it and in no other ServiceCIDR
//! (`192.168.255.0/26` does not hold it, so it blocks). The network address,
//! and for IPv4 the broadcast address, are never allocated and never block
//! ([`prefix`]).
//!
//! [`sync`] answers the [`Plan`] of one ServiceCIDR from the cached
//! ServiceCIDRs and IPAddresses and `now`; [`overlapping`] and
//! [`containing`] are which ServiceCIDRs an event queues.

pub mod prefix;

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::networking::v1::{IPAddress, ServiceCIDR};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use prefix::Prefix;

/// The finalizer protecting a ServiceCIDR (upstream
/// `ServiceCIDRProtectionFinalizer`).
pub const FINALIZER: &str = "networking.k8s.io/service-cidr-finalizer";

/// How long after its deletion a ServiceCIDR that blocks nothing keeps its
/// finalizer (upstream `deletionGracePeriod`).
pub const DELETION_GRACE_PERIOD: Duration = Duration::from_secs(10);

/// The label naming who manages an IPAddress (`LabelManagedBy`).
pub const LABEL_MANAGED_BY: &str = "ipaddress.kubernetes.io/managed-by";

/// The label holding an IPAddress's family (`LabelIPAddressFamily`).
pub const LABEL_IP_FAMILY: &str = "ipaddress.kubernetes.io/ip-family";

/// The API server's allocator, the only manager whose IPAddresses count
/// (upstream `ipallocator.ControllerName`).
pub const IP_ALLOCATOR: &str = "ipallocator.k8s.io";

/// The condition's type (`ServiceCIDRConditionReady`).
pub const CONDITION_READY: &str = "Ready";

/// Its reason while deletion is blocked (`ServiceCIDRReasonTerminating`).
pub const REASON_TERMINATING: &str = "Terminating";

/// The `Ready` `True` message.
pub const READY_MESSAGE: &str = "Kubernetes Service CIDR is ready";

/// The `Ready` `False` message of a blocked deletion.
pub const TERMINATING_MESSAGE: &str =
    "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR";

/// The Warning event's reason when `Ready` `True` cannot be written.
pub const STATUS_ERROR_REASON: &str = "KubernetesServiceCIDRError";

/// Its message.
pub const STATUS_ERROR_MESSAGE: &str = "The ServiceCIDR Status can not be set to Ready=True";

/// Why a deleted ServiceCIDR may go (upstream `canDeleteCIDR`'s log
/// lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safe {
    /// Every prefix of it is held by another ServiceCIDR too.
    Contained,
    /// No allocated address would be left in no ServiceCIDR.
    NoOrphans,
}

/// What one sync of a ServiceCIDR does, in upstream's order.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Live: add the finalizer if asked, then write this `Ready` `True`
    /// condition if it is there (a failed write is a Warning event
    /// [`STATUS_ERROR_REASON`] and a retry).
    Serve {
        /// It lacks the finalizer.
        add_finalizer: bool,
        /// `None`: the condition already says so.
        ready: Option<Condition>,
    },
    /// Deleted, but an address would be orphaned: write this `Ready`
    /// `False` `Terminating` condition if it is there; an IPAddress or
    /// ServiceCIDR event syncs it again.
    Hold {
        /// The address that blocks.
        blocked_by: IpAddr,
        /// `None`: the condition already says so.
        terminating: Option<Condition>,
    },
    /// Deleted and safe, but within the grace period: sync again after.
    Wait {
        /// Why it is safe.
        verdict: Safe,
        /// What is left of [`DELETION_GRACE_PERIOD`].
        after: Duration,
    },
    /// Deleted, safe, the grace period over: remove the finalizer if it
    /// is there.
    Release {
        /// Why it is safe.
        verdict: Safe,
        /// It still has the finalizer.
        remove_finalizer: bool,
    },
}

/// Upstream `sync` for a cached ServiceCIDR: `cidrs` are every cached
/// ServiceCIDR (it among them), `ips` every cached IPAddress.
pub fn sync(cidr: &ServiceCIDR, cidrs: &[Arc<ServiceCIDR>], ips: &[Arc<IPAddress>], now: Timestamp) -> Plan {
    let has_finalizer = cidr.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER);
    let Some(deleted) = &cidr.metadata.deletion_timestamp else {
        let ready = ready_condition("True", "", READY_MESSAGE, now);
        return Plan::Serve { add_finalizer: !has_finalizer, ready: changed(cidr, ready) };
    };
    let verdict = match can_delete(cidr, cidrs, ips) {
        Ok(safe) => safe,
        Err(blocked_by) => {
            let terminating = ready_condition("False", REASON_TERMINATING, TERMINATING_MESSAGE, now);
            return Plan::Hold { blocked_by, terminating: changed(cidr, terminating) };
        }
    };
    // Upstream's `deletionGracePeriod - time.Since(deletion)`: a deletion
    // stamped ahead of this clock waits longer than the period.
    let grace = SignedDuration::from_secs(DELETION_GRACE_PERIOD.as_secs().cast_signed());
    let left = grace - now.duration_since(deleted.0);
    if left.is_positive() {
        return Plan::Wait { verdict, after: left.unsigned_abs() };
    }
    Plan::Release { verdict, remove_finalizer: has_finalizer }
}

/// Upstream `canDeleteCIDR`: why `cidr` may go, or the allocated address
/// that would be left in no ServiceCIDR.
///
/// # Errors
/// The address that blocks the deletion.
pub fn can_delete(cidr: &ServiceCIDR, cidrs: &[Arc<ServiceCIDR>], ips: &[Arc<IPAddress>]) -> Result<Safe, IpAddr> {
    let name = cidr.metadata.name.as_deref().unwrap_or_default();
    let prefixes: Vec<Prefix> = prefixes(cidr).collect();
    let only_itself = |holders: &[&ServiceCIDR]| match holders {
        [] => true,
        [one] => one.metadata.name.as_deref() == Some(name),
        _ => false,
    };
    // As upstream, a ServiceCIDR with no prefix it can read has a parent.
    let has_parent = !prefixes.iter().any(|p| {
        let holders: Vec<&ServiceCIDR> = holders(cidrs, |q| q.contains_prefix(p)).collect();
        only_itself(&holders)
    });
    if has_parent {
        return Ok(Safe::Contained);
    }
    for family in prefixes.iter().map(Prefix::family) {
        let allocated = ips.iter().filter(|ip| {
            let labels = ip.metadata.labels.as_ref();
            let label = |key| labels.and_then(|l| l.get(key)).map(String::as_str);
            label(LABEL_IP_FAMILY) == Some(family) && label(LABEL_MANAGED_BY) == Some(IP_ALLOCATOR)
        });
        for address in allocated.filter_map(|ip| ip.metadata.name.as_deref()?.parse::<IpAddr>().ok()) {
            let holders: Vec<&ServiceCIDR> = holders(cidrs, |q| q.contains_service_ip(address)).collect();
            if holders.len() == 1 && only_itself(&holders) {
                return Err(address);
            }
        }
    }
    Ok(Safe::NoOrphans)
}

/// The ServiceCIDRs that overlap `cidr`, itself included (upstream
/// `overlappingServiceCIDRs`): queued with a new ServiceCIDR, as a new
/// prefix may release a deleted one.
pub fn overlapping(cidr: &ServiceCIDR, cidrs: &[Arc<ServiceCIDR>]) -> BTreeSet<String> {
    let mine: Vec<Prefix> = prefixes(cidr).collect();
    holders(cidrs, |q| mine.iter().any(|p| p.overlaps(q))).filter_map(|c| c.metadata.name.clone()).collect()
}

/// The ServiceCIDRs holding `ip`'s address when the API server's allocator
/// manages it (upstream `containingServiceCIDRs`): queued when it comes or
/// goes, as it may block or release their deletion.
pub fn containing(ip: &IPAddress, cidrs: &[Arc<ServiceCIDR>]) -> BTreeSet<String> {
    let managed = ip.metadata.labels.as_ref().and_then(|l| l.get(LABEL_MANAGED_BY)).map(String::as_str);
    let address = ip.metadata.name.as_deref().and_then(|name| name.parse::<IpAddr>().ok());
    let (Some(IP_ALLOCATOR), Some(address)) = (managed, address) else { return BTreeSet::new() };
    holders(cidrs, |q| q.contains_service_ip(address)).filter_map(|c| c.metadata.name.clone()).collect()
}

/// The prefixes of `cidr`'s spec that parse.
fn prefixes(cidr: &ServiceCIDR) -> impl Iterator<Item = Prefix> + '_ {
    cidr.spec.iter().flat_map(|s| s.cidrs.iter().flatten()).filter_map(|c| Prefix::parse(c))
}

/// Each ServiceCIDR once per prefix of it that `test` accepts (upstream
/// lists a ServiceCIDR again for each matching prefix).
fn holders<'a>(
    cidrs: &'a [Arc<ServiceCIDR>],
    test: impl Fn(&Prefix) -> bool + 'a,
) -> impl Iterator<Item = &'a ServiceCIDR> {
    cidrs.iter().flat_map(move |c| std::iter::repeat_n(c.as_ref(), prefixes(c).filter(|p| test(p)).count()))
}

fn ready_condition(status: &str, reason: &str, message: &str, now: Timestamp) -> Condition {
    Condition {
        type_: CONDITION_READY.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: Time(now),
        observed_generation: None,
    }
}

/// `wanted` unless `cidr`'s condition of its type has its status, reason
/// and message already (upstream `updateConditionIfNeeded`).
fn changed(cidr: &ServiceCIDR, wanted: Condition) -> Option<Condition> {
    let conditions = cidr.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    let current = conditions.iter().find(|c| c.type_ == wanted.type_);
    let same =
        current.is_some_and(|c| c.status == wanted.status && c.reason == wanted.reason && c.message == wanted.message);
    (!same).then_some(wanted)
}

#[cfg(test)]
mod tests;
