//! One cluster CIDR cut into node CIDRs (upstream
//! `pkg/controller/nodeipam/ipam/cidrset/cidr_set.go`): a bitmap with one
//! bit per node CIDR, the next candidate to try, and the counts upstream's
//! `node_ipam_controller_cidrset_*` metrics report.
//!
//! Node CIDR `i` is the cluster CIDR's network address with `i` in the
//! bits between the two masks: in `10.244.0.0/16` cut into `/24`s, index 5
//! is `10.244.5.0/24`, and there are `2^(24-16) = 256` of them. An IPv6
//! cluster CIDR may not be cut more than 16 bits finer (upstream's
//! uncompressed bitmap limit), so a `/48` takes `/64` nodes, a `/32` does
//! not.
//!
//! Allocation is round robin: the search starts after the last CIDR
//! handed out, so a released CIDR is handed out again only once the
//! search wraps round to it. Occupy and release take any CIDR overlapping
//! the cluster's (a `/20` inside a `/16` of `/24`s marks 16 node CIDRs,
//! one containing the cluster's marks them all) and count only the bits
//! they change.

use super::cidr::{Cidr, address_string, mask};

/// Upstream's `clusterSubnetMaxDiff`: the most bits an IPv6 cluster CIDR
/// may be cut by.
pub const CLUSTER_SUBNET_MAX_DIFF: u8 = 16;

/// What the set refuses, in upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Every node CIDR is taken (`ErrCIDRRangeNoCIDRsRemaining`).
    #[error("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")]
    NoCidrsRemaining,
    /// An IPv6 cluster CIDR cut too fine (`ErrCIDRSetSubNetTooBig`).
    #[error("New CIDR set failed; the node CIDR size is too big")]
    SubNetTooBig,
    /// A CIDR sharing no address with the cluster's.
    #[error("cidr {cidr} is out the range of cluster cidr {cluster}")]
    OutOfClusterRange {
        /// The CIDR given, as written.
        cidr: String,
        /// The cluster CIDR, as written.
        cluster: String,
    },
    /// An address whose node CIDR index is past the set's end.
    #[error("CIDR: {address}/{node_mask} is out of the range of CIDR allocator")]
    OutOfAllocatorRange {
        /// The address, as Go prints an IP.
        address: String,
        /// The node mask size.
        node_mask: u8,
    },
}

/// A cluster CIDR's node CIDRs and which are taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CidrSet {
    cluster: Cidr,
    node_mask: u8,
    max_cidrs: usize,
    allocated: usize,
    next_candidate: usize,
    /// One bit per node CIDR, grown as bits are set.
    used: Vec<u64>,
    /// Node CIDRs marked taken, ever (allocated or occupied).
    allocations: u64,
    /// Node CIDRs marked free again, ever.
    releases: u64,
}

impl CidrSet {
    /// Upstream `NewCIDRSet`: `cluster` cut into CIDRs of `node_mask`
    /// bits (the caller has checked `node_mask` is within the family and
    /// not shorter than the cluster's).
    ///
    /// # Errors
    /// [`Error::SubNetTooBig`] for an IPv6 cluster cut more than 16 bits.
    pub fn new(cluster: Cidr, node_mask: u8) -> Result<CidrSet, Error> {
        let diff = node_mask.saturating_sub(cluster.prefix());
        if cluster.is_ipv6() && diff > CLUSTER_SUBNET_MAX_DIFF {
            return Err(Error::SubNetTooBig);
        }
        Ok(CidrSet {
            cluster,
            node_mask,
            max_cidrs: max_cidrs(node_mask, cluster.prefix()),
            allocated: 0,
            next_candidate: 0,
            used: Vec::new(),
            allocations: 0,
            releases: 0,
        })
    }

    /// The cluster CIDR (upstream's metric label, as written).
    pub fn cluster(&self) -> Cidr {
        self.cluster
    }

    /// How many node CIDRs it holds (`cirdset_max_cidrs`).
    pub fn max_cidrs(&self) -> usize {
        self.max_cidrs
    }

    /// How many are taken.
    pub fn allocated(&self) -> usize {
        self.allocated
    }

    /// Node CIDRs ever marked taken (`cidrset_cidrs_allocations_total`).
    pub fn allocations(&self) -> u64 {
        self.allocations
    }

    /// Node CIDRs ever marked free again (`cidrset_cidrs_releases_total`).
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// The share taken, 0 to 1 (`cidrset_usage_cidrs`).
    #[allow(clippy::cast_precision_loss)]
    pub fn usage(&self) -> f64 {
        self.allocated as f64 / self.max_cidrs as f64
    }

    /// Node CIDR number `index` (upstream `indexToCIDRBlock`).
    pub fn index_to_cidr_block(&self, index: usize) -> Cidr {
        let shift = self.cluster.family().bits() - self.node_mask;
        let offset = if shift >= 128 { 0 } else { (index as u128) << shift };
        Cidr::new(self.cluster.family(), self.cluster.base() | offset, self.node_mask)
    }

    /// Upstream `AllocateNext`: the first free node CIDR from the next
    /// candidate on, wrapping round, marked taken; with the number of taken
    /// ones passed over (`cidrset_allocation_tries_per_request`).
    ///
    /// # Errors
    /// [`Error::NoCidrsRemaining`].
    pub fn allocate_next(&mut self) -> Result<(Cidr, usize), Error> {
        if self.allocated == self.max_cidrs {
            return Err(Error::NoCidrsRemaining);
        }
        let mut candidate = self.next_candidate;
        let mut tries = 0;
        while tries < self.max_cidrs && self.bit(candidate) {
            candidate = (candidate + 1) % self.max_cidrs;
            tries += 1;
        }
        self.next_candidate = (candidate + 1) % self.max_cidrs;
        self.set_bit(candidate, true);
        self.allocated += 1;
        self.allocations += 1;
        Ok((self.index_to_cidr_block(candidate), tries))
    }

    /// Upstream `Release`: every node CIDR `cidr` covers marked free.
    ///
    /// # Errors
    /// `cidr` outside the cluster CIDR.
    pub fn release(&mut self, cidr: &Cidr) -> Result<(), Error> {
        let (begin, end) = self.beginning_and_end_indices(cidr)?;
        for index in begin..=end {
            if self.bit(index) {
                self.set_bit(index, false);
                self.allocated -= 1;
                self.releases += 1;
            }
        }
        Ok(())
    }

    /// Upstream `Occupy`: every node CIDR `cidr` covers marked taken
    /// (taken already is fine).
    ///
    /// # Errors
    /// `cidr` outside the cluster CIDR.
    pub fn occupy(&mut self, cidr: &Cidr) -> Result<(), Error> {
        let (begin, end) = self.beginning_and_end_indices(cidr)?;
        for index in begin..=end {
            if !self.bit(index) {
                self.set_bit(index, true);
                self.allocated += 1;
                self.allocations += 1;
            }
        }
        Ok(())
    }

    /// Whether node CIDR `index` is taken.
    pub fn is_used(&self, index: usize) -> bool {
        self.bit(index)
    }

    /// Upstream `getBeginningAndEndIndices`: the node CIDRs `cidr` covers;
    /// all of them when it is as wide as the cluster's or wider.
    fn beginning_and_end_indices(&self, cidr: &Cidr) -> Result<(usize, usize), Error> {
        if !self.cluster.overlaps(cidr) {
            return Err(Error::OutOfClusterRange { cidr: cidr.to_string(), cluster: self.cluster.to_string() });
        }
        if self.cluster.prefix() >= cidr.prefix() {
            return Ok((0, self.max_cidrs - 1));
        }
        let node_mask = mask(self.node_mask, cidr.family().bits());
        let begin = self.index_for_ip(cidr.base() & node_mask)?;
        let end = self.index_for_ip(cidr.last() & node_mask)?;
        Ok((begin, end))
    }

    /// Upstream `getIndexForIP`: the index of the node CIDR starting at
    /// `address`.
    pub fn index_for_ip(&self, address: u128) -> Result<usize, Error> {
        let shift = self.cluster.family().bits() - self.node_mask;
        let index = if shift >= 128 { 0 } else { (self.cluster.base() ^ address) >> shift };
        usize::try_from(index).ok().filter(|i| *i < self.max_cidrs).ok_or_else(|| Error::OutOfAllocatorRange {
            address: address_string(self.cluster.family(), address),
            node_mask: self.node_mask,
        })
    }

    fn bit(&self, index: usize) -> bool {
        self.used.get(index / 64).is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    fn set_bit(&mut self, index: usize, value: bool) {
        let word = index / 64;
        if self.used.len() <= word {
            self.used.resize(word + 1, 0);
        }
        if value {
            self.used[word] |= 1 << (index % 64);
        } else {
            self.used[word] &= !(1 << (index % 64));
        }
    }
}

/// Upstream `getMaxCIDRs`: `2^(node_mask - cluster_mask)`.
pub fn max_cidrs(node_mask: u8, cluster_mask: u8) -> usize {
    1usize << node_mask.saturating_sub(cluster_mask)
}

#[cfg(test)]
mod tests;
