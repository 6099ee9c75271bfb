//! The arithmetic of topology aware hints (upstream `topologycache/utils.go`
//! and `sliceinfo.go`): how many endpoints each zone should get, which
//! zones give endpoints to which, and whether a Service is overloaded.
//!
//! A zone's share is its share of the ready nodes' allocatable CPU. No
//! zone may be short by more than the overload threshold (20%): with 10
//! endpoints and zones of 50%/30%/20% CPU, the desired allocations are 5,
//! 3 and 2, the minimums ⌈5/1.2⌉ = 5, ⌈3/1.2⌉ = 3 and ⌈2/1.2⌉ = 2, and each
//! maximum is its minimum plus what the minimums leave (10 − 10 = 0).

use std::collections::BTreeMap;

use k8s_openapi::api::discovery::v1::{EndpointHints, EndpointSlice, ForZone};

use crate::endpointslice::slices::{endpoints, endpoints_mut};

/// Upstream `overloadThreshold`.
pub const OVERLOAD_THRESHOLD: f64 = 0.2;

/// How many endpoints one zone should be hinted (upstream `allocation`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allocation {
    /// At least this many.
    pub minimum: usize,
    /// At most this many.
    pub maximum: usize,
    /// Ideally this many (its CPU share of the endpoints).
    pub desired: f64,
}

/// Endpoints hinted for each zone.
pub type ZoneCounts = BTreeMap<String, usize>;

/// Whether an endpoint is ready.
pub fn endpoint_ready(endpoint: &k8s_openapi::api::discovery::v1::Endpoint) -> bool {
    endpoint.conditions.as_ref().and_then(|c| c.ready) == Some(true)
}

/// The ready endpoints of `slice`.
pub fn ready_endpoints(slice: &EndpointSlice) -> usize {
    endpoints(slice).iter().filter(|e| endpoint_ready(e)).count()
}

/// The zones a single-zone hint names, the hints of an endpoint.
fn hint_zones(endpoint: &k8s_openapi::api::discovery::v1::Endpoint) -> Option<&[ForZone]> {
    endpoint.hints.as_ref()?.for_zones.as_deref().filter(|z| !z.is_empty())
}

/// The hints `slice` holds per zone, or `None` when they are no longer
/// valid: a ready endpoint without hints, a hint for a zone without an
/// allocation, or more than a zone's maximum with what is already
/// counted (upstream `getHintsByZone`).
pub fn hints_by_zone(
    slice: &EndpointSlice,
    allocated: &ZoneCounts,
    allocations: &BTreeMap<String, Allocation>,
) -> Option<ZoneCounts> {
    let mut counts = ZoneCounts::new();
    for endpoint in endpoints(slice).iter().filter(|e| endpoint_ready(e)) {
        for zone in hint_zones(endpoint)? {
            if !allocations.contains_key(&zone.name) {
                return None;
            }
            *counts.entry(zone.name.clone()).or_default() += 1;
        }
    }
    let within = counts.iter().all(|(zone, n)| {
        allocations.get(zone).is_some_and(|a| n + allocated.get(zone).copied().unwrap_or(0) <= a.maximum)
    });
    within.then_some(counts)
}

/// Per zone, how many endpoints to give away and to receive, from the
/// allocations and the hints so far (upstream `getGivingAndReceivingZones`):
/// whole endpoints move from the zone with the most surplus to the one
/// with the most need, while both have at least half an endpoint to move
/// and one of them a whole one.
pub fn giving_and_receiving(
    allocations: &BTreeMap<String, Allocation>,
    allocated: &ZoneCounts,
) -> (ZoneCounts, ZoneCounts) {
    let mut giving_desired = BTreeMap::new();
    let mut receiving_desired = BTreeMap::new();
    for (zone, allocation) in allocations {
        let hinted = allocated.get(zone).copied().unwrap_or(0) as f64;
        if hinted > allocation.desired {
            giving_desired.insert(zone.clone(), hinted - allocation.desired);
        } else if hinted < allocation.desired {
            receiving_desired.insert(zone.clone(), allocation.desired - hinted);
        }
    }
    let (mut giving, mut receiving) = (ZoneCounts::new(), ZoneCounts::new());
    while let (Some((give_zone, to_give)), Some((receive_zone, to_receive))) =
        (most(&giving_desired), most(&receiving_desired))
    {
        if (to_give < 1.0 && to_receive < 1.0) || to_give < 0.5 || to_receive < 0.5 {
            break;
        }
        *giving.entry(give_zone.clone()).or_default() += 1;
        *receiving.entry(receive_zone.clone()).or_default() += 1;
        giving_desired.entry(give_zone).and_modify(|n| *n -= 1.0);
        receiving_desired.entry(receive_zone).and_modify(|n| *n -= 1.0);
    }
    (giving, receiving)
}

/// The zone with the greatest positive value, the first of equals
/// (upstream `getMost`).
fn most(zones: &BTreeMap<String, f64>) -> Option<(String, f64)> {
    let mut best: Option<(String, f64)> = None;
    for (zone, n) in zones {
        if *n > best.as_ref().map_or(0.0, |b| b.1) {
            best = Some((zone.clone(), *n));
        }
    }
    best
}

/// Re-hints ready endpoints of the giving zones for the receiving ones,
/// and answers the change per zone (upstream `redistributeHints`).
pub fn redistribute(
    slices: &mut [&mut EndpointSlice],
    mut giving: ZoneCounts,
    mut receiving: ZoneCounts,
) -> BTreeMap<String, i64> {
    let mut changes: BTreeMap<String, i64> = BTreeMap::new();
    for slice in slices.iter_mut() {
        for endpoint in endpoints_mut(slice).iter_mut().filter(|e| endpoint_ready(e)) {
            if giving.is_empty() || receiving.is_empty() {
                return changes;
            }
            let Some(zone) = endpoint.zone.clone().filter(|z| !z.is_empty()) else { continue };
            if giving.get(&zone).is_none_or(|n| *n == 0) {
                continue;
            }
            let Some(to) = receiving.iter().find(|(_, n)| **n > 0).map(|(z, _)| z.clone()) else { continue };
            endpoint.hints =
                Some(EndpointHints { for_zones: Some(vec![ForZone { name: to.clone() }]), for_nodes: None });
            take_one(&mut giving, &zone);
            take_one(&mut receiving, &to);
            *changes.entry(to).or_default() += 1;
            *changes.entry(zone).or_default() -= 1;
        }
    }
    changes
}

/// One fewer for `zone`, the entry dropped at zero.
fn take_one(counts: &mut ZoneCounts, zone: &str) {
    if let Some(n) = counts.get_mut(zone) {
        *n -= 1;
        if *n == 0 {
            counts.remove(zone);
        }
    }
}

/// Whether the endpoints hinted per zone leave a zone short of its
/// minimum (upstream `serviceOverloaded`).
pub fn service_overloaded(hinted: &ZoneCounts, ratios: &BTreeMap<String, f64>) -> bool {
    if hinted.is_empty() {
        return false;
    }
    if ratios.is_empty() {
        return true;
    }
    let total = hinted.values().sum::<usize>() as f64;
    ratios.iter().any(|(zone, ratio)| {
        let minimum = (total * ratio * (1.0 / (1.0 + OVERLOAD_THRESHOLD))).ceil();
        hinted.get(zone).is_none_or(|n| (*n as f64) < minimum)
    })
}

/// A CPU quantity in millicores (`4` → 4000, `3500m` → 3500, `1.5` →
/// 1500, `2k` → 2 000 000); `None` when it does not parse.
pub fn cpu_millis(quantity: &str) -> Option<i64> {
    let split =
        quantity.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        exponent if exponent.starts_with(['e', 'E']) => 10f64.powi(exponent[1..].parse().ok()?),
        _ => return None,
    };
    Some((value * scale * 1000.0).ceil() as i64)
}

#[cfg(test)]
mod tests {
    //! Upstream's `topologycache/utils_test.go`.

    use super::*;

    fn counts(pairs: &[(&str, usize)]) -> ZoneCounts {
        pairs.iter().map(|(z, n)| ((*z).to_owned(), *n)).collect()
    }

    fn ratios(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(z, n)| ((*z).to_owned(), *n)).collect()
    }

    fn allocation(minimum: usize, maximum: usize, desired: f64) -> Allocation {
        Allocation { minimum, maximum, desired }
    }

    #[test]
    fn get_giving_and_receiving_zones() {
        // (name, allocations, hinted so far, giving, receiving)
        type Case<'a> = (&'a str, Vec<(&'a str, Allocation)>, ZoneCounts, ZoneCounts, ZoneCounts);
        let cases: [Case<'_>; 3] = [
            ("empty", vec![], counts(&[]), counts(&[]), counts(&[])),
            (
                "simple allocation with no need for rebalancing",
                vec![
                    ("zone-a", allocation(1, 2, 1.2)),
                    ("zone-b", allocation(1, 2, 1.1)),
                    ("zone-c", allocation(1, 2, 0.9)),
                ],
                counts(&[("zone-a", 1), ("zone-b", 1), ("zone-c", 1)]),
                counts(&[]),
                counts(&[]),
            ),
            (
                "preference for same zone even when giving an extra endpoint would result in slightly better distribution",
                vec![
                    ("zone-a", allocation(5, 7, 5.4)),
                    ("zone-b", allocation(3, 5, 3.9)),
                    ("zone-c", allocation(1, 3, 1.7)),
                ],
                counts(&[("zone-a", 8), ("zone-b", 3), ("zone-c", 0)]),
                counts(&[("zone-a", 2)]),
                counts(&[("zone-b", 1), ("zone-c", 1)]),
            ),
        ];
        for (name, allocations, allocated, giving, receiving) in cases {
            let allocations: BTreeMap<String, Allocation> =
                allocations.into_iter().map(|(z, a)| (z.to_owned(), a)).collect();
            assert_eq!(giving_and_receiving(&allocations, &allocated), (giving, receiving), "{name}");
        }
    }

    #[test]
    fn service_overloaded_cases() {
        let even = ratios(&[("zone-a", 0.5), ("zone-b", 0.5)]);
        assert!(!service_overloaded(&counts(&[]), &even), "no hints");
        assert!(service_overloaded(&counts(&[("zone-a", 1)]), &ratios(&[])), "no zone ratios");
        assert!(!service_overloaded(&counts(&[("zone-a", 5), ("zone-b", 5)]), &even), "balanced");
        assert!(service_overloaded(&counts(&[("zone-a", 7), ("zone-b", 3)]), &even), "zone-b short of ⌈5/1.2⌉ = 5");
        assert!(service_overloaded(&counts(&[("zone-a", 10)]), &even), "zone-b missing");
    }

    #[test]
    fn cpu_quantities() {
        assert_eq!(cpu_millis("4"), Some(4000));
        assert_eq!(cpu_millis("3500m"), Some(3500));
        assert_eq!(cpu_millis("1.5"), Some(1500));
        assert_eq!(cpu_millis("2k"), Some(2_000_000));
        assert_eq!(cpu_millis("1e3"), Some(1_000_000));
        assert_eq!(cpu_millis("four"), None);
    }
}
