//! What the code says: the controller table's names, the flags
//! `kcm-rs --help` shows, and the workqueues each controller's driver
//! creates.

use std::collections::BTreeSet;

use crate::config::Flags;
use crate::controllers::{flags, implemented, table};
use crate::drivers::{
    attachdetach, bootstrapsigner, certificates, clusterroleaggregation, cronjob, csrapproving, csrcleaner, csrsigning,
    daemonset, deployment, endpoint, endpointslice, endpointslicemirroring, ephemeralvolume, expand, garbagecollector,
    job, legacytokencleaner, namespace, nodeipam, nodelifecycle, podgc, pvbinder, pvcprotection, pvprotection,
    replicaset, rootcacertpublisher, serviceaccount, serviceaccounttoken, servicecidrs, statefulset, tainteviction,
    tokencleaner, ttl, ttlafterfinished, vacprotection,
};

/// The workqueues with `workqueue_*` series (label `name`) that a
/// controller's driver creates: the drivers' own constants. A controller
/// added to the table fails the tests until it is added here (`None`).
pub(super) fn queues_of(controller: &str) -> Option<&'static [&'static str]> {
    let queues: [(&str, &'static [&'static str]); 35] = [
        (
            serviceaccounttoken::CONTROLLER_NAME,
            &[serviceaccounttoken::SERVICE_QUEUE_NAME, serviceaccounttoken::SECRET_QUEUE_NAME],
        ),
        (deployment::IDENTITY.name, &[deployment::QUEUE_NAME]),
        (replicaset::IDENTITY.name, &[replicaset::QUEUE_NAME]),
        (statefulset::IDENTITY.name, &[statefulset::QUEUE_NAME]),
        (daemonset::IDENTITY.name, &[daemonset::QUEUE_NAME]),
        (job::IDENTITY.name, &[job::QUEUE_NAME, job::ORPHAN_QUEUE_NAME]),
        (cronjob::IDENTITY.name, &[cronjob::QUEUE_NAME]),
        (namespace::CONTROLLER_NAME, &[namespace::QUEUE_NAME]),
        // Its deletion timers' queue has no metrics.
        (tainteviction::IDENTITY.name, &[tainteviction::NODE_QUEUE_NAME, tainteviction::POD_QUEUE_NAME]),
        (nodelifecycle::IDENTITY.name, &[nodelifecycle::NODE_QUEUE_NAME, nodelifecycle::POD_QUEUE_NAME]),
        (nodeipam::CONTROLLER_NAME, &[nodeipam::QUEUE_NAME]),
        (serviceaccount::CONTROLLER_NAME, &[serviceaccount::QUEUE_NAME]),
        (rootcacertpublisher::CONTROLLER_NAME, &[rootcacertpublisher::QUEUE_NAME]),
        // One queue per signer, all named alike (upstream's).
        (csrsigning::CONTROLLER_NAME, &[certificates::QUEUE_NAME]),
        (clusterroleaggregation::CONTROLLER_NAME, &[clusterroleaggregation::QUEUE_NAME]),
        (endpoint::IDENTITY.name, &[endpoint::QUEUE_NAME]),
        (endpointslicemirroring::IDENTITY.name, &[endpointslicemirroring::QUEUE_NAME]),
        (csrapproving::CONTROLLER_NAME, &[certificates::QUEUE_NAME]),
        // One pass a day, one every 20 s, one an hour: no queue.
        (legacytokencleaner::CONTROLLER_NAME, &[]),
        (podgc::CONTROLLER_NAME, &[]),
        (csrcleaner::CONTROLLER_NAME, &[]),
        // Its topology queue has no metrics.
        (endpointslice::IDENTITY.name, &[endpointslice::QUEUE_NAME]),
        (ttlafterfinished::CONTROLLER_NAME, &[ttlafterfinished::QUEUE_NAME]),
        (ttl::CONTROLLER_NAME, &[ttl::QUEUE_NAME]),
        (pvbinder::CONTROLLER_NAME, &[pvbinder::CLAIM_QUEUE, pvbinder::VOLUME_QUEUE]),
        (pvcprotection::CONTROLLER_NAME, &[pvcprotection::QUEUE_NAME]),
        (pvprotection::CONTROLLER_NAME, &[pvprotection::QUEUE_NAME]),
        (ephemeralvolume::IDENTITY.name, &[ephemeralvolume::QUEUE_NAME]),
        (expand::IDENTITY.name, &[expand::QUEUE_NAME]),
        (attachdetach::IDENTITY.name, &[attachdetach::QUEUE_NAME]),
        (vacprotection::CONTROLLER_NAME, &[vacprotection::QUEUE_NAME]),
        (bootstrapsigner::CONTROLLER_NAME, &[bootstrapsigner::QUEUE_NAME]),
        (tokencleaner::CONTROLLER_NAME, &[tokencleaner::QUEUE_NAME]),
        (servicecidrs::IDENTITY.name, &[servicecidrs::QUEUE_NAME]),
        (
            garbagecollector::IDENTITY.name,
            &[garbagecollector::ATTEMPT_TO_DELETE_QUEUE, garbagecollector::ATTEMPT_TO_ORPHAN_QUEUE],
        ),
    ];
    queues.into_iter().find(|(name, _)| *name == controller).map(|(_, queues)| queues)
}

/// Every flag `kcm-rs --help` shows, as written on a command line (the
/// upstream flags kcm-rs refuses are hidden, and not its flags).
pub(super) fn command_flags() -> BTreeSet<String> {
    Flags::command(&flags())
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter_map(|arg| arg.get_long())
        .map(|long| if long == "v" { "-v".to_owned() } else { format!("--{long}") })
        .collect()
}

pub(super) fn table_names() -> BTreeSet<String> {
    implemented().into_iter().map(str::to_owned).collect()
}

pub(super) fn every_queue() -> BTreeSet<String> {
    table().flat_map(|row| queues_of(row.name()).unwrap_or_default()).map(|q| (*q).to_owned()).collect()
}
