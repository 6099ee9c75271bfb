//! Upstream's `cidr_set_test.go` tables.

use super::*;

// === utils ===

fn cidr(text: &str) -> Cidr {
    Cidr::parse_sloppy(text).expect("a CIDR")
}

fn set(cluster: &str, node_mask: u8) -> CidrSet {
    CidrSet::new(cidr(cluster), node_mask).expect("a set")
}

fn used(set: &CidrSet) -> Vec<usize> {
    (0..set.max_cidrs()).filter(|i| set.is_used(*i)).collect()
}

// === tests ===

#[test]
fn a_fully_allocated_set_hands_out_a_released_cidr_again() {
    for (cluster, node_mask, expected) in
        [("127.123.234.0/30", 30, "127.123.234.0/30"), ("beef:1234::/30", 30, "beef:1234::/30")]
    {
        let mut a = set(cluster, node_mask);
        let (p, _) = a.allocate_next().unwrap();
        assert_eq!(p.to_string(), expected);
        assert_eq!(a.allocate_next(), Err(Error::NoCidrsRemaining));
        a.release(&p).unwrap();
        assert_eq!(a.allocate_next().unwrap().0.to_string(), expected);
        assert_eq!(a.allocate_next(), Err(Error::NoCidrsRemaining));
    }
}

#[test]
fn index_to_cidr_block() {
    for (cluster, node_mask, index, block) in [
        ("127.123.3.0/16", 24, 0, "127.123.0.0/24"),
        ("127.123.0.0/16", 24, 15, "127.123.15.0/24"),
        ("192.168.5.219/28", 32, 5, "192.168.5.213/32"),
        ("2001:0db8:1234:3::/48", 64, 0, "2001:db8:1234::/64"),
        ("2001:0db8:1234::/48", 64, 15, "2001:db8:1234:f::/64"),
        ("2001:0db8:85a3::8a2e:0370:7334/50", 63, 6425, "2001:db8:85a3:3232::/63"),
        ("2001:0db8::/32", 48, 0, "2001:db8::/48"),
        ("2001:0db8::/32", 48, 15, "2001:db8:f::/48"),
        ("2001:0db8:85a3::8a2e:0370:7334/32", 48, 6425, "2001:db8:1919::/48"),
        ("2001:0db8:1234:ff00::/56", 72, 0, "2001:db8:1234:ff00::/72"),
        ("2001:0db8:1234:ff00::/56", 72, 15, "2001:db8:1234:ff00:f00::/72"),
        ("2001:0db8:1234:ff00::0370:7334/56", 72, 6425, "2001:db8:1234:ff19:1900::/72"),
        ("2001:0db8:1234:0:1234::/80", 96, 0, "2001:db8:1234:0:1234::/96"),
        ("2001:0db8:1234:0:1234::/80", 96, 15, "2001:db8:1234:0:1234:f::/96"),
        ("2001:0db8:1234:ff00::0370:7334/80", 96, 6425, "2001:db8:1234:ff00:0:1919::/96"),
    ] {
        assert_eq!(set(cluster, node_mask).index_to_cidr_block(index).to_string(), block, "{cluster} #{index}");
    }
}

#[test]
fn released_cidrs_are_handed_out_again_in_the_same_order() {
    for cluster in ["127.123.234.0/16", "beef:1234::/16"] {
        let mut a = set(cluster, 24);
        let cidrs: Vec<Cidr> = (0..256).map(|_| a.allocate_next().unwrap().0).collect();
        assert_eq!(a.allocate_next(), Err(Error::NoCidrsRemaining));
        cidrs.iter().for_each(|c| a.release(c).unwrap());
        let again: Vec<Cidr> = (0..256).map(|_| a.allocate_next().unwrap().0).collect();
        assert_eq!(a.allocate_next(), Err(Error::NoCidrsRemaining));
        assert_eq!(cidrs, again);
    }
}

#[test]
fn occupied_cidrs_are_skipped() {
    for cluster in ["127.123.234.0/16", "beef:1234::/16"] {
        let mut a = set(cluster, 24);
        let cidrs: Vec<Cidr> = (0..256).map(|_| a.allocate_next().unwrap().0).collect();
        cidrs.iter().for_each(|c| a.release(c).unwrap());
        cidrs[128..].iter().for_each(|c| a.occupy(c).unwrap());
        a.occupy(&cidrs[128]).unwrap();
        let mut again: Vec<Cidr> = (0..128).map(|_| a.allocate_next().unwrap().0).collect();
        assert_eq!(a.allocate_next(), Err(Error::NoCidrsRemaining));
        again.extend_from_slice(&cidrs[128..]);
        assert_eq!(cidrs, again);
    }
}

#[test]
fn double_occupy_and_release_count_each_node_cidr_once() {
    let mut a = set("10.42.0.0/16", 24);
    for (text, occupy, occupied) in [
        ("10.42.5.0/24", true, 1),
        ("10.42.9.0/24", true, 2),
        ("10.42.8.0/22", true, 5),
        ("10.42.9.0/24", true, 5),
        ("10.42.9.0/24", false, 4),
        ("10.42.9.0/24", false, 4),
        ("10.42.4.0/22", false, 3),
    ] {
        if occupy { a.occupy(&cidr(text)) } else { a.release(&cidr(text)) }.unwrap();
        assert_eq!(a.allocated(), occupied, "after {text}");
    }
    for _ in 0..256 - 3 {
        a.allocate_next().unwrap();
    }
    assert_eq!(a.allocate_next(), Err(Error::NoCidrsRemaining));
}

#[test]
fn index_for_ip() {
    for (cluster, node_mask, subnet, expected) in [
        ("127.0.0.0/8", 16, "127.0.0.0/16", Some(0)),
        ("be00::/8", 16, "be00::/16", Some(0)),
        ("127.0.0.0/8", 16, "127.123.0.0/16", Some(123)),
        ("be00::/8", 16, "beef::/16", Some(0xef)),
        ("127.0.0.0/8", 16, "127.168.0.0/16", Some(168)),
        ("be00::/8", 16, "be68::/16", Some(0x68)),
        ("127.0.0.0/8", 16, "127.224.0.0/16", Some(224)),
        ("be00::/8", 16, "be24::/16", Some(0x24)),
        ("192.168.0.0/16", 24, "192.168.12.0/24", Some(12)),
        ("beef::/16", 24, "beef:1200::/24", Some(0x12)),
        ("192.168.0.0/16", 24, "192.168.151.0/24", Some(151)),
        ("beef::/16", 24, "beef:9700::/24", Some(0x97)),
        ("192.168.0.0/16", 24, "127.168.224.0/24", None),
        ("beef::/16", 24, "2001:db00::/24", None),
    ] {
        let got = set(cluster, node_mask).index_for_ip(cidr(subnet).base()).ok();
        assert_eq!(got, expected, "{subnet} in {cluster}");
    }
    assert_eq!(
        set("192.168.0.0/16", 24).index_for_ip(cidr("127.168.224.0/24").base()).unwrap_err().to_string(),
        "CIDR: 127.168.224.0/24 is out of the range of CIDR allocator"
    );
}

#[test]
fn occupy_marks_every_node_cidr_covered() {
    for (cluster, node_mask, subnet, begin, end) in [
        ("127.0.0.0/8", 16, "127.0.0.0/8", 0, 255),
        ("2001:beef:1200::/40", 48, "2001:beef:1200::/40", 0, 255),
        ("127.0.0.0/8", 16, "127.0.0.0/2", 0, 255),
        ("2001:beef:1200::/40", 48, "2001:beef:1234::/34", 0, 255),
        ("127.0.0.0/8", 16, "127.0.0.0/16", 0, 0),
        ("2001:beef:1200::/40", 48, "2001:beef:1200::/48", 0, 0),
        ("127.0.0.0/8", 32, "127.0.0.0/16", 0, 65535),
        ("2001:beef:1200::/48", 64, "2001:beef:1200::/48", 0, 65535),
        ("127.0.0.0/7", 16, "127.0.0.0/15", 256, 257),
        ("2001:beef:7f00::/39", 48, "2001:beef:7f00::/47", 256, 257),
        ("127.0.0.0/7", 15, "127.0.0.0/15", 128, 128),
        ("2001:beef:7f00::/39", 47, "2001:beef:7f00::/47", 128, 128),
        ("127.0.0.0/7", 18, "127.0.0.0/15", 1024, 1031),
        ("2001:beef:7f00::/39", 50, "2001:beef:7f00::/47", 1024, 1031),
    ] {
        let mut a = set(cluster, node_mask);
        a.occupy(&cidr(subnet)).unwrap();
        assert_eq!(used(&a), (begin..=end).collect::<Vec<_>>(), "{subnet} in {cluster} by /{node_mask}");
    }
    let mut a = set("10.244.0.0/16", 24);
    assert_eq!(
        a.occupy(&cidr("10.96.0.0/24")).unwrap_err().to_string(),
        "cidr 10.96.0.0/24 is out the range of cluster cidr 10.244.0.0/16"
    );
}

#[test]
fn ipv6_sets_cut_at_most_sixteen_bits() {
    let mut a = set("127.0.0.0/8", 32);
    assert_eq!(a.allocate_next().unwrap().0.to_string(), "127.0.0.0/32");
    assert_eq!(a.allocate_next().unwrap().0.to_string(), "127.0.0.1/32");
    assert_eq!(CidrSet::new(cidr("beef:1234::/32"), 49), Err(Error::SubNetTooBig));
    let mut a = set("2001:beef:1234:369b::/60", 64);
    assert_eq!(a.allocate_next().unwrap().0.to_string(), "2001:beef:1234:3690::/64");
    assert_eq!(a.allocate_next().unwrap().0.to_string(), "2001:beef:1234:3691::/64");
}

#[test]
fn counts_behind_the_metrics() {
    let cluster = cidr("10.0.0.0/16");
    let mut a = CidrSet::new(cluster, 24).unwrap();
    assert_eq!((a.max_cidrs(), a.usage(), a.allocations(), a.releases()), (256, 0.0, 0, 0));
    for i in 1u32..=256 {
        assert_eq!(a.allocate_next().unwrap().1, 0, "no taken CIDR passed over");
        assert_eq!((a.usage(), a.allocations()), (f64::from(i) / 256.0, u64::from(i)));
    }
    a.release(&cluster).unwrap();
    assert_eq!((a.usage(), a.allocations(), a.releases()), (0.0, 256, 256));
    a.occupy(&cluster).unwrap();
    assert_eq!((a.usage(), a.allocations(), a.releases()), (1.0, 512, 256));

    // Occupy leaves the next candidate: the next allocation passes over
    // the 128 taken.
    let mut b = CidrSet::new(cluster, 24).unwrap();
    b.occupy(&cidr("10.0.0.0/17")).unwrap();
    assert_eq!((b.usage(), b.allocations()), (0.5, 128));
    let (next, tries) = b.allocate_next().unwrap();
    assert_eq!((next.to_string().as_str(), tries, b.allocations()), ("10.0.128.0/24", 128, 129));

    let mut v6 = CidrSet::new(cidr("2001:db8::/48"), 64).unwrap();
    v6.occupy(&cidr("2001:db8::/48")).unwrap();
    assert_eq!((v6.max_cidrs(), v6.usage(), v6.allocations()), (65536, 1.0, 65536));
    assert_eq!((max_cidrs(24, 16), max_cidrs(64, 48)), (256, 65536));
}
