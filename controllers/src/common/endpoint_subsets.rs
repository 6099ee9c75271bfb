//! An Endpoints object's subsets in their canonical shape (upstream
//! `pkg/api/v1/endpoints` `RepackSubsets`), compared the way the
//! controller compares them, and cut to [`MAX_CAPACITY`] addresses.
//!
//! Repacking turns one subset per (pod, port) into the fewest subsets:
//! addresses offering the same ports share a subset. For example pods A and
//! B both serving ports 80 and 443, and pod C serving only 80, repack into
//! `{A, B}: [80, 443]` and `{C}: [80]`. An address (IP and pod UID) listed
//! both ready and not ready for one port counts as ready for it.
//!
//! Order: addresses by IP then pod UID, as upstream; ports and subsets in
//! an order of our own (by name, number, protocol; by their addresses),
//! where upstream orders by a hash of the Go structs. Equality
//! ([`equal_ignoring_resource_version`]) puts both sides in this order
//! first, so Endpoints written by kube-controller-manager in its order are
//! not rewritten.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort, EndpointSubset};

/// Addresses one Endpoints holds at most before it is truncated (upstream
/// `maxCapacity`).
pub const MAX_CAPACITY: usize = 1000;

/// An address's identity: its IP and its pod's UID (upstream `addressKey`).
type AddressKey = (String, String);

/// A port's identity: name, number, protocol, appProtocol.
type PortKey = (Option<String>, i32, Option<String>, Option<String>);

/// A port (None: the addresses of a subset without ports) and the
/// addresses offering it, each ready or not.
type PortMembers = (Option<EndpointPort>, BTreeMap<AddressKey, bool>);

fn address_key(address: &EndpointAddress) -> AddressKey {
    let uid = address.target_ref.as_ref().and_then(|r| r.uid.clone()).unwrap_or_default();
    (address.ip.clone(), uid)
}

fn port_key(port: &EndpointPort) -> PortKey {
    (port.name.clone(), port.port, port.protocol.clone(), port.app_protocol.clone())
}

/// The subsets repacked: one subset per distinct set of addresses, with
/// every port those addresses all offer; a subset without ports keeps its
/// addresses in a subset without ports.
pub fn repack(subsets: &[EndpointSubset]) -> Vec<EndpointSubset> {
    // The first copy of each address, and per port (None: no port) which
    // addresses offer it and whether ready there.
    let mut addresses: BTreeMap<AddressKey, EndpointAddress> = BTreeMap::new();
    let mut by_port: BTreeMap<Option<PortKey>, PortMembers> = BTreeMap::new();
    for subset in subsets {
        let ports = subset.ports.as_deref().unwrap_or_default();
        let port_entries: Vec<Option<&EndpointPort>> =
            if ports.is_empty() { vec![None] } else { ports.iter().map(Some).collect() };
        for port in port_entries {
            let entry = by_port.entry(port.map(port_key)).or_insert_with(|| (port.cloned(), BTreeMap::new()));
            let ready = subset.addresses.iter().flatten().map(|a| (a, true));
            let not_ready = subset.not_ready_addresses.iter().flatten().map(|a| (a, false));
            for (address, is_ready) in ready.chain(not_ready) {
                let key = address_key(address);
                addresses.entry(key.clone()).or_insert_with(|| address.clone());
                *entry.1.entry(key).or_insert(is_ready) |= is_ready;
            }
        }
    }
    // Ports grouped by the address set offering them.
    let mut groups: BTreeMap<Vec<(AddressKey, bool)>, Vec<EndpointPort>> = BTreeMap::new();
    for (port, members) in by_port.into_values() {
        let ports = groups.entry(members.into_iter().collect()).or_default();
        ports.extend(port);
    }
    let mut packed: Vec<EndpointSubset> = groups
        .into_iter()
        .map(|(members, ports)| {
            let pick = |ready: bool| -> Vec<EndpointAddress> {
                members.iter().filter(|(_, r)| *r == ready).map(|(k, _)| addresses[k].clone()).collect()
            };
            subset(pick(true), pick(false), ports)
        })
        .collect();
    sort(&mut packed);
    packed
}

/// A subset with empty lists left out, as the API serialises them.
fn subset(ready: Vec<EndpointAddress>, not_ready: Vec<EndpointAddress>, ports: Vec<EndpointPort>) -> EndpointSubset {
    EndpointSubset { addresses: non_empty(ready), not_ready_addresses: non_empty(not_ready), ports: non_empty(ports) }
}

/// `None` for an empty list.
fn non_empty<T>(list: Vec<T>) -> Option<Vec<T>> {
    (!list.is_empty()).then_some(list)
}

/// Sorts each subset's addresses (IP, then pod UID) and ports, then the
/// subsets.
fn sort(subsets: &mut [EndpointSubset]) {
    for s in subsets.iter_mut() {
        for list in [&mut s.addresses, &mut s.not_ready_addresses].into_iter().flatten() {
            list.sort_by_key(address_key);
        }
        if let Some(ports) = &mut s.ports {
            ports.sort_by_key(port_key);
        }
    }
    subsets.sort_by_cached_key(|s| {
        let keys = |l: &Option<Vec<EndpointAddress>>| l.iter().flatten().map(address_key).collect::<Vec<_>>();
        (keys(&s.addresses), keys(&s.not_ready_addresses), s.ports.iter().flatten().map(port_key).collect::<Vec<_>>())
    });
}

/// Whether two subset lists say the same, ignoring the pods'
/// resourceVersions in `targetRef` (upstream
/// `endpointSubsetsEqualIgnoreResourceVersion`), empty and absent lists
/// alike, and order (see the module doc).
pub fn equal_ignoring_resource_version(a: &[EndpointSubset], b: &[EndpointSubset]) -> bool {
    normalized(a) == normalized(b)
}

fn normalized(subsets: &[EndpointSubset]) -> Vec<EndpointSubset> {
    let mut out: Vec<EndpointSubset> = subsets
        .iter()
        .map(|s| {
            let strip = |l: &Option<Vec<EndpointAddress>>| -> Vec<EndpointAddress> {
                let mut list = l.clone().unwrap_or_default();
                for reference in list.iter_mut().filter_map(|a| a.target_ref.as_mut()) {
                    reference.resource_version = None;
                }
                list
            };
            subset(strip(&s.addresses), strip(&s.not_ready_addresses), s.ports.clone().unwrap_or_default())
        })
        .collect();
    sort(&mut out);
    out
}

/// Addresses, ready and not, over all subsets.
pub fn count(subsets: &[EndpointSubset]) -> usize {
    let len = |l: &Option<Vec<EndpointAddress>>| l.as_ref().map_or(0, Vec::len);
    subsets.iter().map(|s| len(&s.addresses) + len(&s.not_ready_addresses)).sum()
}

/// Cuts the subsets to [`MAX_CAPACITY`] addresses (upstream
/// `truncateEndpoints`); `false` when they fit and nothing was cut.
///
/// Ready addresses are kept first. When the ready ones alone fit, the
/// not-ready ones share what is left in proportion to each subset's
/// not-ready count, rounded up, the last subsets taking what remains; when
/// even the ready ones do not fit, every not-ready address goes and the
/// ready ones share the capacity likewise. Example: ready counts 205, 400,
/// 402, 400 and 693 (2,100) keep 98, 191, 192, 191 and the remaining 328.
pub fn truncate(subsets: &mut [EndpointSubset]) -> bool {
    let len = |l: &Option<Vec<EndpointAddress>>| l.as_ref().map_or(0, Vec::len);
    let ready: usize = subsets.iter().map(|s| len(&s.addresses)).sum();
    let not_ready: usize = subsets.iter().map(|s| len(&s.not_ready_addresses)).sum();
    if ready + not_ready <= MAX_CAPACITY {
        return false;
    }
    let truncate_ready = ready > MAX_CAPACITY;
    let (budget, total) = if truncate_ready { (MAX_CAPACITY, ready) } else { (MAX_CAPACITY - ready, not_ready) };
    let mut left = budget;
    for s in subsets.iter_mut() {
        let list = if truncate_ready { &mut s.addresses } else { &mut s.not_ready_addresses };
        let share = (len(list) as f64 / total as f64 * budget as f64).ceil() as usize;
        if let Some(l) = list.as_mut() {
            l.truncate(share.min(left));
            left -= l.len();
        }
        if truncate_ready {
            s.not_ready_addresses = Some(Vec::new());
        }
    }
    true
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestTruncateEndpoints` and
    //! `TestEndpointSubsetsEqualIgnoreResourceVersion`, and
    //! `TestPackSubsets` cases of `pkg/api/v1/endpoints`.

    use k8s_openapi::api::core::v1::ObjectReference;

    use super::*;

    // === utils ===

    fn addr(ip: &str, uid: &str, rv: &str) -> EndpointAddress {
        EndpointAddress {
            ip: ip.into(),
            target_ref: (!uid.is_empty()).then(|| ObjectReference {
                kind: Some("Pod".into()),
                uid: Some(uid.into()),
                resource_version: (!rv.is_empty()).then(|| rv.into()),
                ..ObjectReference::default()
            }),
            ..EndpointAddress::default()
        }
    }

    fn port(n: i32) -> EndpointPort {
        EndpointPort { port: n, protocol: Some("TCP".into()), ..EndpointPort::default() }
    }

    fn ss(ready: &[&EndpointAddress], not_ready: &[&EndpointAddress], ports: &[i32]) -> EndpointSubset {
        let owned = |l: &[&EndpointAddress]| l.iter().map(|a| (*a).clone()).collect();
        subset(owned(ready), owned(not_ready), ports.iter().copied().map(port).collect())
    }

    fn blanks(n: usize) -> Option<Vec<EndpointAddress>> {
        Some(vec![EndpointAddress::default(); n])
    }

    // === tests ===

    #[test]
    fn truncate_endpoints() {
        type Case = (&'static str, Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>);
        let cases: Vec<Case> = vec![
            ("empty", vec![], vec![], vec![], vec![]),
            (
                "total endpoints < max capacity",
                vec![50, 100, 100, 100, 100],
                vec![50, 100, 100, 100, 100],
                vec![50, 100, 100, 100, 100],
                vec![50, 100, 100, 100, 100],
            ),
            ("total endpoints = max capacity", vec![100; 5], vec![100; 5], vec![100; 5], vec![100; 5]),
            (
                "total ready endpoints < max capacity, but total endpoints > max capacity",
                vec![90, 110, 50, 10, 20],
                vec![101, 200, 200, 201, 298],
                vec![90, 110, 50, 10, 20],
                vec![73, 144, 144, 145, 214],
            ),
            (
                "total ready endpoints > max capacity",
                vec![205, 400, 402, 400, 693],
                vec![100, 200, 200, 200, 300],
                vec![98, 191, 192, 191, 328],
                vec![0; 5],
            ),
        ];
        for (name, ready, not_ready, want_ready, want_not_ready) in cases {
            let mut subsets: Vec<EndpointSubset> = ready
                .iter()
                .zip(&not_ready)
                .map(|(r, n)| EndpointSubset { addresses: blanks(*r), not_ready_addresses: blanks(*n), ports: None })
                .collect();
            truncate(&mut subsets);
            let len = |l: &Option<Vec<EndpointAddress>>| l.as_ref().map_or(0, Vec::len);
            assert_eq!(subsets.iter().map(|s| len(&s.addresses)).collect::<Vec<_>>(), want_ready, "{name}");
            assert_eq!(
                subsets.iter().map(|s| len(&s.not_ready_addresses)).collect::<Vec<_>>(),
                want_not_ready,
                "{name}"
            );
        }
    }

    #[test]
    fn endpoint_subsets_equal_ignore_resource_version() {
        let es1 = ss(&[&addr("1.1.1.1", "pod1-1", "1")], &[&addr("1.1.1.2", "pod1-2", "2")], &[8081]);
        let es2 = ss(&[&addr("2.2.2.1", "pod2-1", "3")], &[&addr("2.2.2.2", "pod2-2", "4")], &[8082]);
        let mutate = |s: &EndpointSubset, f: &dyn Fn(&mut EndpointSubset)| {
            let mut copy = s.clone();
            f(&mut copy);
            copy
        };
        fn first_ready(f: impl Fn(&mut EndpointAddress)) -> impl Fn(&mut EndpointSubset) {
            move |s: &mut EndpointSubset| f(&mut s.addresses.as_mut().unwrap()[0])
        }
        let cases = [
            ("Subsets removed", vec![es1.clone()], false),
            (
                "Ready Pod IP changed",
                vec![mutate(&es1, &first_ready(|a: &mut EndpointAddress| a.ip = "1.1.1.10".into())), es2.clone()],
                false,
            ),
            (
                "NotReady Pod IP changed",
                vec![es1.clone(), mutate(&es2, &|s| s.not_ready_addresses.as_mut().unwrap()[0].ip = "2.2.2.10".into())],
                false,
            ),
            (
                "Pod ResourceVersion changed",
                vec![
                    es1.clone(),
                    mutate(
                        &es2,
                        &first_ready(|a: &mut EndpointAddress| {
                            a.target_ref.as_mut().unwrap().resource_version = Some("100".into())
                        }),
                    ),
                ],
                true,
            ),
            (
                "Pod ResourceVersion removed",
                vec![
                    es1.clone(),
                    mutate(
                        &es2,
                        &first_ready(|a: &mut EndpointAddress| a.target_ref.as_mut().unwrap().resource_version = None),
                    ),
                ],
                true,
            ),
            ("Ports changed", vec![es1.clone(), mutate(&es1, &|s| s.ports.as_mut().unwrap()[0].port = 8082)], false),
        ];
        for (name, other, want) in cases {
            assert_eq!(equal_ignoring_resource_version(&[es1.clone(), es2.clone()], &other), want, "{name}");
        }
        assert!(equal_ignoring_resource_version(&[es2.clone(), es1.clone()], &[es1, es2]), "order is not content");
    }

    #[test]
    fn pack_subsets() {
        let (a, b, c) = (addr("1.1.1.1", "a", ""), addr("2.2.2.2", "b", ""), addr("3.3.3.3", "c", ""));
        let cases = [
            ("empty everything", vec![], vec![]),
            ("one set, one ip, one port", vec![ss(&[&a], &[], &[111])], vec![ss(&[&a], &[], &[111])]),
            ("one set, one ip, no port", vec![ss(&[&a], &[], &[])], vec![ss(&[&a], &[], &[])]),
            ("one set, one notReady ip, one port", vec![ss(&[], &[&a], &[111])], vec![ss(&[], &[&a], &[111])]),
            ("one set, dup ips, one port", vec![ss(&[&a, &a], &[], &[111])], vec![ss(&[&a], &[], &[111])]),
            ("one set, one ip, dup ports", vec![ss(&[&a], &[], &[111, 111])], vec![ss(&[&a], &[], &[111])]),
            (
                "two sets, same ip, two ports",
                vec![ss(&[&a], &[], &[111]), ss(&[&a], &[], &[222])],
                vec![ss(&[&a], &[], &[111, 222])],
            ),
            (
                "two sets, two ips, same port",
                vec![ss(&[&b], &[], &[111]), ss(&[&a], &[], &[111])],
                vec![ss(&[&a, &b], &[], &[111])],
            ),
            (
                "two sets, ready and not ready same ip, same port",
                vec![ss(&[&a], &[], &[111]), ss(&[], &[&a], &[111])],
                vec![ss(&[&a], &[], &[111])],
            ),
            (
                "three sets, two ports, overlapping ips",
                vec![ss(&[&a, &b], &[], &[111]), ss(&[&a, &c], &[], &[222]), ss(&[&b, &c], &[], &[333])],
                vec![ss(&[&a, &b], &[], &[111]), ss(&[&a, &c], &[], &[222]), ss(&[&b, &c], &[], &[333])],
            ),
            (
                "ready on one port, not ready on another",
                vec![ss(&[&a], &[], &[111]), ss(&[], &[&a], &[222])],
                vec![ss(&[&a], &[], &[111]), ss(&[], &[&a], &[222])],
            ),
        ];
        for (name, given, want) in cases {
            let got = repack(&given);
            assert!(equal_ignoring_resource_version(&got, &want), "{name}: {got:?}");
            assert_eq!(got.len(), want.len(), "{name}");
        }
    }

    #[test]
    fn same_ip_of_two_pods_stays_two_addresses() {
        let packed = repack(&[ss(&[&addr("1.1.1.1", "a", ""), &addr("1.1.1.1", "b", "")], &[], &[80])]);
        assert_eq!(count(&packed), 2);
    }
}
