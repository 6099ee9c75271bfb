//! Upstream's `range_allocator_test.go` cases, without the fake client:
//! start-up occupation, allocation, failure and release.

use super::*;

// === utils ===

fn cidr(text: &str) -> Cidr {
    Cidr::parse_sloppy(text).expect("a CIDR")
}

/// An allocator over `cluster` (comma-separated) with these node masks,
/// the service CIDR filtered out and `nodes`' CIDRs occupied, as at start.
fn started(cluster: &str, masks: &[u8], service: Option<&str>, nodes: &[&[&str]]) -> Result<RangeAllocator, Error> {
    let cluster: Vec<Cidr> = cluster.split(',').map(cidr).collect();
    let mut allocator = RangeAllocator::new(&cluster, masks).expect("sets");
    if let Some(service) = service {
        assert_eq!(allocator.filter_out_service_range(&cidr(service)), []);
    }
    for (i, pod_cidrs) in nodes.iter().enumerate() {
        allocator.occupy_cidrs(&format!("node{i}"), pod_cidrs)?;
    }
    Ok(allocator)
}

fn next(allocator: &mut RangeAllocator) -> Vec<String> {
    allocator.allocate().expect("free CIDRs").iter().map(|(c, _)| c.to_string()).collect()
}

// === tests ===

#[test]
fn pre_existing_cidrs_are_occupied_or_refuse_the_start() {
    assert!(started("10.10.0.0/16", &[24], None, &[]).is_ok());
    assert!(started("10.10.0.0/16,ace:cab:deca::/8", &[24, 24], None, &[]).is_ok());
    assert!(started("10.10.0.0/16", &[24], None, &[&["10.10.0.1/24"]]).is_ok());
    assert!(started("10.10.0.0/16,ace:cab:deca::/8", &[24, 24], None, &[&["10.10.0.1/24", "a00::/86"]]).is_ok());
    let err = |cluster: &str, masks: &[u8], pod_cidrs: &[&str]| {
        started(cluster, masks, None, &[pod_cidrs]).unwrap_err().to_string()
    };
    assert_eq!(
        err("10.10.0.0/16", &[24], &["172.10.0.1/24"]),
        "failed to mark cidr[172.10.0.0/24] at idx [0] as occupied for node: node0: cidr 172.10.0.0/24 is out the \
         range of cluster cidr 10.10.0.0/16"
    );
    assert_eq!(
        err("10.10.0.0/16", &[24], &["10.10.0.1/24", "a00::/86"]),
        "node:node0 has an allocated cidr: a00::/86 at index:1 that does not exist in cluster cidrs configuration"
    );
    assert!(err("10.10.0.0/16,ace:cab:deca::/8", &[24, 24], &["172.10.0.1/24", "a00::/86"]).contains("idx [0]"));
    assert!(err("10.10.0.0/16,ace:cab:deca::/8", &[24, 24], &["10.10.0.1/24", "cdd::/86"]).contains("idx [1]"));
    assert_eq!(err("10.10.0.0/16", &[24], &["garbage"]), "failed to parse node node0, CIDR garbage");
}

#[test]
fn allocation_skips_the_service_range_and_taken_cidrs() {
    let mut a = started("127.123.234.0/24", &[30], None, &[]).unwrap();
    assert_eq!(next(&mut a), ["127.123.234.0/30"]);
    // The first /30 after the service range.
    let mut a = started("127.123.234.0/24", &[30], Some("127.123.234.0/26"), &[]).unwrap();
    assert_eq!(next(&mut a), ["127.123.234.64/30"]);
    let taken: &[&[&str]] =
        &[&["127.123.234.64/30"], &["127.123.234.68/30"], &["127.123.234.72/30"], &["127.123.234.80/30"]];
    let mut a = started("127.123.234.0/24", &[30], Some("127.123.234.0/26"), taken).unwrap();
    assert_eq!(next(&mut a), ["127.123.234.76/30"]);
    // No double counting: the one /24 left of four.
    let mut a =
        started("10.10.0.0/22", &[24], None, &[&["10.10.0.0/24"], &["10.10.2.0/24"], &["10.10.3.0/24"]]).unwrap();
    assert_eq!(next(&mut a), ["10.10.1.0/24"]);
}

#[test]
fn dual_stack_allocates_one_cidr_per_family_in_the_flags_order() {
    let mut a = started("127.123.234.0/8,ace:cab:deca::/84", &[24, 98], Some("127.123.234.0/26"), &[]).unwrap();
    assert_eq!(next(&mut a), ["127.0.0.0/24", "ace:cab:deca::/98"]);
    let mut a = started("ace:cab:deca::/84,127.123.234.0/8", &[98, 24], Some("127.0.0.0/26"), &[]).unwrap();
    assert_eq!(next(&mut a), ["ace:cab:deca::/98", "127.0.1.0/24"]);
    assert_eq!(next(&mut a), ["ace:cab:deca::4000:0/98", "127.0.2.0/24"]);
}

#[test]
fn a_full_cluster_cidr_fails_with_upstreams_message_and_keeps_nothing() {
    let taken: &[&[&str]] =
        &[&["127.123.234.0/30"], &["127.123.234.4/30"], &["127.123.234.8/30"], &["127.123.234.12/30"]];
    let mut a = started("127.123.234.0/28", &[30], None, taken).unwrap();
    assert_eq!(
        a.allocate().unwrap_err().to_string(),
        "failed to allocate cidr from cluster cidr at idx:0: CIDR allocation failed; there are no remaining CIDRs \
         left to allocate in the accepted range"
    );
    // The IPv4 CIDR taken before the IPv6 set ran out is given back.
    let mut a = started("10.0.0.0/16,fd00::/64", &[24, 64], None, &[&["10.0.0.0/24", "fd00::/64"]]).unwrap();
    assert_eq!(a.allocate(), Err(Error::Allocate { index: 1, source: cidrset::Error::NoCidrsRemaining }));
    assert_eq!(a.sets()[0].allocated(), 1);
}

#[test]
fn released_cidrs_are_handed_out_again() {
    let taken: &[&[&str]] =
        &[&["127.123.234.0/30"], &["127.123.234.4/30"], &["127.123.234.8/30"], &["127.123.234.12/30"]];
    let mut a = started("127.123.234.0/28", &[30], None, taken).unwrap();
    assert!(a.allocate().is_err());
    a.release_cidrs("node1", &["127.123.234.4/30"]).unwrap();
    assert_eq!(next(&mut a), ["127.123.234.4/30"]);

    let taken: &[&[&str]] = &[&["127.123.234.4/30"], &["127.123.234.8/30"], &["127.123.234.12/30"]];
    let mut a = started("127.123.234.0/28", &[30], None, taken).unwrap();
    assert_eq!(next(&mut a), ["127.123.234.0/30"]);
    a.release_cidrs("node0", &["127.123.234.0/30"]).unwrap();
    assert_eq!(next(&mut a), ["127.123.234.0/30"]);
    assert_eq!(
        a.release_cidrs("node0", &["bogus"]).unwrap_err().to_string(),
        "failed to parse CIDR bogus on Node node0: invalid CIDR address: bogus"
    );
}

#[test]
fn the_node_as_it_is_now_decides_the_write() {
    let taken = [cidr("10.10.1.0/24")];
    assert_eq!(assignment::<&str>(&[], &taken), Assignment::Write);
    assert_eq!(assignment(&["10.10.1.0/24"], &taken), Assignment::AlreadySet);
    assert_eq!(assignment(&["10.10.7.0/24"], &taken), Assignment::HasOthers);
}
