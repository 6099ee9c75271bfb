//! The range allocator's decisions (upstream
//! `pkg/controller/nodeipam/ipam/range_allocator.go`): one [`CidrSet`]
//! per cluster CIDR, in `--cluster-cidr`'s order; a node's `podCIDRs[i]`
//! comes from set `i`.
//!
//! - At start the service CIDRs overlapping a cluster CIDR are occupied
//!   ([`RangeAllocator::filter_out_service_range`]), then every node's
//!   `podCIDRs` ([`RangeAllocator::occupy_cidrs`]); a CIDR that does not
//!   parse, or lies outside its cluster CIDR, is an error upstream cannot
//!   start past.
//! - A node without `podCIDRs` gets the next free CIDR of every set
//!   ([`RangeAllocator::allocate`]); none free in one set is the
//!   `CIDRNotAvailable` case. What was taken is then written to the node
//!   unless it gained CIDRs meanwhile ([`assignment`]).
//! - A deleted node's CIDRs are released ([`RangeAllocator::release_cidrs`]).

use super::cidr::Cidr;
use super::cidrset::{self, CidrSet};

/// Why a node's CIDRs cannot be occupied, allocated or released, in
/// upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A `podCIDRs` entry that is no CIDR, at start or on a sync.
    #[error("failed to parse node {node}, CIDR {cidr}")]
    Parse {
        /// The node.
        node: String,
        /// The entry.
        cidr: String,
    },
    /// More `podCIDRs` than cluster CIDRs (the cluster went from dual to
    /// single stack).
    #[error(
        "node:{node} has an allocated cidr: {cidr} at index:{index} that does not exist in cluster cidrs \
         configuration"
    )]
    NotConfigured {
        /// The node.
        node: String,
        /// The entry.
        cidr: String,
        /// Its place in `podCIDRs`.
        index: usize,
    },
    /// A `podCIDRs` entry outside its cluster CIDR.
    #[error("failed to mark cidr[{cidr}] at idx [{index}] as occupied for node: {node}: {source}")]
    Occupy {
        /// The entry, as parsed and written.
        cidr: String,
        /// Its place.
        index: usize,
        /// The node.
        node: String,
        /// Why.
        source: cidrset::Error,
    },
    /// No free CIDR in cluster CIDR `index`.
    #[error("failed to allocate cidr from cluster cidr at idx:{index}: {source}")]
    Allocate {
        /// The cluster CIDR's place.
        index: usize,
        /// Why.
        source: cidrset::Error,
    },
    /// A deleted node's entry that is no CIDR.
    #[error("failed to parse CIDR {cidr} on Node {node}: {source}")]
    ReleaseParse {
        /// The entry.
        cidr: String,
        /// The node.
        node: String,
        /// Why.
        source: super::cidr::ParseError,
    },
    /// A deleted node's entry outside its cluster CIDR.
    #[error("error when releasing CIDR {cidr}: {source}")]
    Release {
        /// The entry.
        cidr: String,
        /// Why.
        source: cidrset::Error,
    },
}

/// A service CIDR that could not be occupied in an overlapping cluster
/// CIDR (logged, as upstream logs it, and passed over).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterFailure {
    /// The cluster CIDR.
    pub cluster: Cidr,
    /// Its place.
    pub index: usize,
    /// Why.
    pub error: cidrset::Error,
}

/// What to do with CIDRs just taken for a node, seen against the node as
/// it is now (upstream `updateCIDRsAllocation`, before its patch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignment {
    /// It has exactly these: an earlier write went through.
    AlreadySet,
    /// It has others: release what was taken.
    HasOthers,
    /// It has none: write them.
    Write,
}

/// The cluster CIDRs' sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeAllocator {
    sets: Vec<CidrSet>,
}

impl RangeAllocator {
    /// A set per cluster CIDR, cut by its node mask size.
    ///
    /// # Errors
    /// An IPv6 cluster CIDR cut too fine.
    pub fn new(cluster: &[Cidr], node_masks: &[u8]) -> Result<RangeAllocator, cidrset::Error> {
        let sets = cluster.iter().zip(node_masks).map(|(c, m)| CidrSet::new(*c, *m)).collect::<Result<_, _>>()?;
        Ok(RangeAllocator { sets })
    }

    /// The sets, in `--cluster-cidr`'s order (for the metrics).
    pub fn sets(&self) -> &[CidrSet] {
        &self.sets
    }

    /// Upstream `filterOutServiceRange`: `service` occupied in every
    /// cluster CIDR it overlaps; the failures, to log.
    pub fn filter_out_service_range(&mut self, service: &Cidr) -> Vec<FilterFailure> {
        let mut failures = Vec::new();
        for (index, set) in self.sets.iter_mut().enumerate() {
            let cluster = set.cluster();
            if !cluster.overlaps(service) {
                continue;
            }
            if let Err(error) = set.occupy(service) {
                failures.push(FilterFailure { cluster, index, error });
            }
        }
        failures
    }

    /// Upstream `occupyCIDRs`: `node`'s `pod_cidrs` marked taken.
    ///
    /// # Errors
    /// An entry that is no CIDR, beyond the cluster CIDRs, or outside its
    /// cluster CIDR (those before it stay taken, as upstream leaves them).
    pub fn occupy_cidrs<S: AsRef<str>>(&mut self, node: &str, pod_cidrs: &[S]) -> Result<(), Error> {
        for (index, text) in pod_cidrs.iter().map(AsRef::as_ref).enumerate() {
            let cidr =
                Cidr::parse_sloppy(text).map_err(|_| Error::Parse { node: node.to_owned(), cidr: text.to_owned() })?;
            let set = self.set(node, text, index)?;
            set.occupy(&cidr).map_err(|source| Error::Occupy {
                cidr: cidr.to_string(),
                index,
                node: node.to_owned(),
                source,
            })?;
        }
        Ok(())
    }

    /// Upstream `AllocateOrOccupyCIDR` for a node without `podCIDRs`: the
    /// next free CIDR of every set, with the taken CIDRs each search
    /// passed over.
    ///
    /// # Errors
    /// [`Error::Allocate`] when a set has none free (the
    /// `CIDRNotAvailable` case); what the sets before it gave back is
    /// released (upstream keeps it until a restart).
    pub fn allocate(&mut self) -> Result<Vec<(Cidr, usize)>, Error> {
        let mut allocated = Vec::with_capacity(self.sets.len());
        for index in 0..self.sets.len() {
            match self.sets[index].allocate_next() {
                Ok(taken) => allocated.push(taken),
                Err(source) => {
                    let cidrs: Vec<Cidr> = allocated.iter().map(|(c, _)| *c).collect();
                    self.release_allocated(&cidrs);
                    return Err(Error::Allocate { index, source });
                }
            }
        }
        Ok(allocated)
    }

    /// CIDRs [`RangeAllocator::allocate`] gave that are not to be written
    /// after all, released; the failures, to log.
    pub fn release_allocated(&mut self, cidrs: &[Cidr]) -> Vec<cidrset::Error> {
        cidrs.iter().zip(self.sets.iter_mut()).filter_map(|(cidr, set)| set.release(cidr).err()).collect()
    }

    /// Upstream `ReleaseCIDR`: a deleted node's `pod_cidrs` marked free.
    ///
    /// # Errors
    /// An entry that is no CIDR, beyond the cluster CIDRs, or outside its
    /// cluster CIDR (those before it are released).
    pub fn release_cidrs<S: AsRef<str>>(&mut self, node: &str, pod_cidrs: &[S]) -> Result<(), Error> {
        for (index, text) in pod_cidrs.iter().map(AsRef::as_ref).enumerate() {
            let cidr = Cidr::parse_sloppy(text).map_err(|source| Error::ReleaseParse {
                cidr: text.to_owned(),
                node: node.to_owned(),
                source,
            })?;
            let set = self.set(node, text, index)?;
            set.release(&cidr).map_err(|source| Error::Release { cidr: text.to_owned(), source })?;
        }
        Ok(())
    }

    fn set(&mut self, node: &str, text: &str, index: usize) -> Result<&mut CidrSet, Error> {
        self.sets.get_mut(index).ok_or_else(|| Error::NotConfigured {
            node: node.to_owned(),
            cidr: text.to_owned(),
            index,
        })
    }
}

/// Upstream `updateCIDRsAllocation`'s look at the node before writing:
/// `current` are its `podCIDRs` now, `allocated` what was just taken.
pub fn assignment<S: AsRef<str>>(current: &[S], allocated: &[Cidr]) -> Assignment {
    let same =
        current.len() == allocated.len() && current.iter().zip(allocated).all(|(c, a)| c.as_ref() == a.to_string());
    if same {
        Assignment::AlreadySet
    } else if current.is_empty() {
        Assignment::Write
    } else {
        Assignment::HasOthers
    }
}

#[cfg(test)]
mod tests;
