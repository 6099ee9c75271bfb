//! The controller table: one [`Row`] per controller kcm-rs runs, carrying
//! its upstream name, its worker count and its constructor. Leading is a
//! loop over [`TABLE`]; `--controllers` is resolved against
//! [`implemented`]. Adding a controller is a core in `kcm-controllers`, a
//! driver in `drivers`, and one row here.
//!
//! A constructor builds the controller on the shared informers (its
//! handlers, queues and metrics registered) with what [`Context`] hands it:
//! the configuration, the shared controllers' client, or a client of its
//! own named as upstream names it. Rows are in start order: the garbage
//! collector comes last, so that it shares the informers the others asked
//! for.

use kcm_runtime::client::{self, ClientConfig};
use kcm_runtime::controller::Controller;
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::SharedInformerFactory;
use kcm_runtime::workqueue::QueueMetrics;
use prometheus::Registry;

use crate::config::{Config, MAX_UNAVAILABLE_STATEFUL_SET, TERMINATING_REPLICAS};
use crate::drivers::clusterroleaggregation::{self, ClusterRoleAggregationController};
use crate::drivers::cronjob::{self, CronJobController, CronJobMetrics};
use crate::drivers::daemonset::{self, DaemonSetController};
use crate::drivers::deployment::{self, DeploymentController};
use crate::drivers::endpoint::{self, EndpointController};
use crate::drivers::endpointslice::{self, EndpointSliceController, EndpointSliceMetrics};
use crate::drivers::endpointslicemirroring::{self, EndpointSliceMirroringController, MirroringMetrics};
use crate::drivers::garbagecollector::{self, GarbageCollector, GcMetrics};
use crate::drivers::job::{self, JobController, JobMetrics};
use crate::drivers::legacytokencleaner::{self, LegacyTokenCleaner};
use crate::drivers::namespace::{self, NamespaceController};
use crate::drivers::nodelifecycle::{self, NodeLifecycleController, NodeLifecycleMetrics};
use crate::drivers::podgc::{self, PodGcController, PodGcMetrics};
use crate::drivers::replicaset::{self, ReplicaSetController};
use crate::drivers::rootcacertpublisher::{self, PublisherMetrics, RootCaCertPublisher};
use crate::drivers::serviceaccount::{self, ServiceAccountsController};
use crate::drivers::serviceaccounttoken::{self, TokensController, signer::Signer};
use crate::drivers::statefulset::{self, StatefulSetController};
use crate::drivers::tainteviction::{self, EvictionMetrics, TaintEvictionController};
use crate::drivers::ttlafterfinished::{self, TtlAfterFinishedController, TtlAfterFinishedMetrics};

/// Why a controller could not be built.
pub type StartError = Box<dyn std::error::Error + Send + Sync>;

/// What a constructor answers: the controller, or `None` when its
/// configuration says not to run it.
pub type Started = Result<Option<Box<dyn Controller>>, StartError>;

/// One controller kcm-rs runs.
pub struct Row {
    /// Upstream's canonical name (`cmd/kube-controller-manager/names`).
    pub name: &'static str,
    /// Workers per queue: its `--concurrent-*-syncs` flag, or upstream's
    /// fixed count where there is no flag.
    pub workers: fn(&Config) -> usize,
    /// Builds it on the shared informers (`None`: its configuration says
    /// not to run it, as upstream's `started == false`).
    pub start: fn(&Context<'_>) -> Started,
}

/// What a constructor is handed.
pub struct Context<'a> {
    /// The daemon's configuration.
    pub config: &'a Config,
    /// The process's shared informers (handlers are registered before
    /// they start).
    pub factory: &'a SharedInformerFactory,
    /// What a controller's own client is built from.
    pub client_config: &'a ClientConfig,
    /// Where controller metrics are registered.
    pub registry: &'a Registry,
    /// `workqueue_*` metrics, labelled by queue name.
    pub queue_metrics: &'a QueueMetrics,
}

impl Context<'_> {
    /// A client of its own, with the flags' QPS and burst and `name` as its
    /// user agent (upstream's `ClientOrDie(name)`).
    fn own_client(&self, name: &str) -> Result<kube::Client, StartError> {
        Ok(client::build(self.client_config, self.registry, Some(name))?)
    }
}

/// Every controller kcm-rs runs, in start order.
pub const TABLE: &[Row] = &[
    // First, as upstream starts it before the others (`requiresSpecialHandling`).
    Row {
        name: serviceaccounttoken::CONTROLLER_NAME,
        workers: |config| config.concurrent_serviceaccount_token_syncs,
        start: |cx| {
            let Some(key_file) = cx.config.service_account_private_key_file.as_deref() else {
                tracing::info!(
                    controller = serviceaccounttoken::CONTROLLER_NAME,
                    "Controller is disabled because there is no private key"
                );
                return Ok(None);
            };
            let signer = Signer::from_file(key_file)?;
            let trusted = cx.client_config.kube_config().root_cert.as_deref().unwrap_or_default();
            let root_ca = rootcacertpublisher::root_ca(cx.config.root_ca_file.as_deref(), trusted)?;
            let client = cx.own_client(serviceaccounttoken::CLIENT_NAME)?;
            Ok(Some(Box::new(TokensController::new(cx.factory, client, signer, root_ca, Some(cx.queue_metrics)))))
        },
    },
    Row {
        name: deployment::CONTROLLER_NAME,
        workers: |config| config.concurrent_deployment_syncs,
        start: |cx| {
            let client = cx.own_client(deployment::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), deployment::EVENT_COMPONENT);
            let options = kcm_controllers::deployment::Options {
                terminating_replicas: cx.config.feature_gates.enabled(TERMINATING_REPLICAS),
            };
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(DeploymentController::new(cx.factory, client, recorder, options, queues)?)))
        },
    },
    Row {
        name: replicaset::CONTROLLER_NAME,
        workers: |config| config.concurrent_replicaset_syncs,
        start: |cx| {
            let client = cx.own_client(replicaset::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), replicaset::EVENT_COMPONENT);
            let terminating_replicas = cx.config.feature_gates.enabled(TERMINATING_REPLICAS);
            let options = kcm_controllers::replicaset::Options { terminating_replicas, ..Default::default() };
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(ReplicaSetController::new(cx.factory, client, recorder, options, queues)?)))
        },
    },
    Row {
        name: statefulset::CONTROLLER_NAME,
        workers: |config| config.concurrent_statefulset_syncs,
        start: |cx| {
            let client = cx.own_client(statefulset::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), statefulset::EVENT_COMPONENT);
            let options = kcm_controllers::statefulset::Options {
                max_unavailable: cx.config.feature_gates.enabled(MAX_UNAVAILABLE_STATEFUL_SET),
            };
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(StatefulSetController::new(cx.factory, client, recorder, options, queues)?)))
        },
    },
    Row {
        name: daemonset::CONTROLLER_NAME,
        workers: |config| config.concurrent_daemonset_syncs,
        start: |cx| {
            let client = cx.own_client(daemonset::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), daemonset::EVENT_COMPONENT);
            let options = kcm_controllers::daemonset::Options::default();
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(DaemonSetController::new(cx.factory, client, recorder, options, queues))))
        },
    },
    Row {
        name: job::CONTROLLER_NAME,
        workers: |config| config.concurrent_job_syncs,
        start: |cx| {
            let client = cx.own_client(job::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), job::EVENT_COMPONENT);
            let metrics = JobMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(JobController::new(cx.factory, client, recorder, Some(metrics), queues)?)))
        },
    },
    Row {
        name: cronjob::CONTROLLER_NAME,
        workers: |config| config.concurrent_cron_job_syncs,
        start: |cx| {
            let client = cx.own_client(cronjob::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), cronjob::EVENT_COMPONENT);
            let metrics = CronJobMetrics::register(cx.registry)?;
            Ok(Some(Box::new(CronJobController::new(
                cx.factory,
                client,
                recorder,
                Some(metrics),
                Some(cx.queue_metrics),
            ))))
        },
    },
    Row {
        name: namespace::CONTROLLER_NAME,
        workers: |config| config.concurrent_namespace_syncs,
        start: |cx| {
            // Upstream's namespace controller client: QPS ×20, burst ×100,
            // so emptying a large namespace neither starves the others'
            // writes nor takes minutes.
            let scaled = cx.client_config.scaled(namespace::QPS_FACTOR, namespace::BURST_FACTOR);
            let client = client::build(&scaled, cx.registry, Some(namespace::CONTROLLER_NAME))?;
            let resync = cx.config.namespace_sync_period;
            Ok(Some(Box::new(NamespaceController::new(cx.factory, client, resync, Some(cx.queue_metrics)))))
        },
    },
    Row {
        name: tainteviction::CONTROLLER_NAME,
        workers: |_| tainteviction::WORKERS,
        start: |cx| {
            let client = cx.own_client(tainteviction::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), tainteviction::EVENT_COMPONENT);
            let metrics = EvictionMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(TaintEvictionController::new(cx.factory, client, recorder, Some(metrics), queues)?)))
        },
    },
    Row {
        name: nodelifecycle::CONTROLLER_NAME,
        workers: |_| nodelifecycle::NODE_WORKERS,
        start: |cx| {
            let client = cx.own_client(nodelifecycle::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), nodelifecycle::EVENT_COMPONENT);
            let settings = nodelifecycle::Settings::from(&cx.config.node_lifecycle);
            let metrics = NodeLifecycleMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(NodeLifecycleController::new(
                cx.factory,
                client,
                recorder,
                settings,
                Some(metrics),
                queues,
            )?)))
        },
    },
    Row {
        name: serviceaccount::CONTROLLER_NAME,
        workers: |_| serviceaccount::WORKERS,
        start: |cx| {
            let client = cx.own_client(serviceaccount::CLIENT_NAME)?;
            Ok(Some(Box::new(ServiceAccountsController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    Row {
        name: rootcacertpublisher::CONTROLLER_NAME,
        workers: |_| rootcacertpublisher::WORKERS,
        start: |cx| {
            let trusted = cx.client_config.kube_config().root_cert.as_deref().unwrap_or_default();
            let root_ca = rootcacertpublisher::root_ca(cx.config.root_ca_file.as_deref(), trusted)?;
            let client = cx.own_client(rootcacertpublisher::CLIENT_NAME)?;
            let metrics = PublisherMetrics::register(cx.registry)?;
            Ok(Some(Box::new(RootCaCertPublisher::new(
                cx.factory,
                client,
                root_ca,
                Some(metrics),
                Some(cx.queue_metrics),
            ))))
        },
    },
    Row {
        name: clusterroleaggregation::CONTROLLER_NAME,
        workers: |_| clusterroleaggregation::WORKERS,
        start: |cx| {
            let client = cx.own_client(clusterroleaggregation::CONTROLLER_NAME)?;
            Ok(Some(Box::new(ClusterRoleAggregationController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    Row {
        name: endpoint::CONTROLLER_NAME,
        workers: |config| config.concurrent_endpoint_syncs,
        start: |cx| {
            let client = cx.own_client(endpoint::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), endpoint::EVENT_COMPONENT);
            let batch = cx.config.endpoint_updates_batch_period;
            Ok(Some(Box::new(EndpointController::new(cx.factory, client, recorder, batch, Some(cx.queue_metrics)))))
        },
    },
    Row {
        name: endpointslicemirroring::CONTROLLER_NAME,
        workers: |config| config.mirroring_concurrent_service_endpoint_syncs,
        start: |cx| {
            let client = cx.own_client(endpointslicemirroring::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), endpointslicemirroring::EVENT_COMPONENT);
            let settings = endpointslicemirroring::Settings {
                max_endpoints_per_subset: cx.config.mirroring_max_endpoints_per_subset,
                batch_period: cx.config.mirroring_endpointslice_updates_batch_period,
            };
            let metrics = MirroringMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EndpointSliceMirroringController::new(
                cx.factory,
                client,
                recorder,
                settings,
                Some(metrics),
                Some(cx.queue_metrics),
            ))))
        },
    },
    Row {
        name: legacytokencleaner::CONTROLLER_NAME,
        // Upstream's cleaner has no workers: one evaluation a day.
        workers: |_| 1,
        start: |cx| {
            let client = cx.own_client(legacytokencleaner::CLIENT_NAME)?;
            let period = cx.config.legacy_service_account_token_clean_up_period;
            Ok(Some(Box::new(LegacyTokenCleaner::new(cx.factory, client, period)?)))
        },
    },
    Row {
        name: endpointslice::CONTROLLER_NAME,
        workers: |config| config.endpoint_slice.concurrent_syncs,
        start: |cx| {
            let client = cx.own_client(endpointslice::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), endpointslice::EVENT_COMPONENT);
            let settings = endpointslice::Settings {
                max_endpoints_per_slice: cx.config.endpoint_slice.max_endpoints_per_slice,
                updates_batch_period: cx.config.endpoint_slice.updates_batch_period,
            };
            let metrics = EndpointSliceMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(EndpointSliceController::new(
                cx.factory,
                client,
                recorder,
                settings,
                Some(metrics),
                queues,
            ))))
        },
    },
    Row {
        name: podgc::CONTROLLER_NAME,
        // Upstream's pod garbage collector has no workers: one pass every 20 s.
        workers: |_| 1,
        start: |cx| {
            let client = cx.own_client(podgc::CLIENT_NAME)?;
            let metrics = PodGcMetrics::register(cx.registry)?;
            let threshold = cx.config.terminated_pod_gc_threshold;
            Ok(Some(Box::new(PodGcController::new(cx.factory, client, threshold, Some(metrics)))))
        },
    },
    Row {
        name: ttlafterfinished::CONTROLLER_NAME,
        workers: |config| config.concurrent_ttl_after_finished_syncs,
        start: |cx| {
            let client = cx.own_client(ttlafterfinished::CLIENT_NAME)?;
            let metrics = TtlAfterFinishedMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(TtlAfterFinishedController::new(cx.factory, client, Some(metrics), queues))))
        },
    },
    Row {
        name: garbagecollector::CONTROLLER_NAME,
        workers: |config| config.concurrent_gc_syncs,
        start: |cx| {
            let client = cx.own_client(garbagecollector::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), garbagecollector::EVENT_COMPONENT);
            let metrics = GcMetrics::register(cx.registry)?;
            Ok(Some(Box::new(GarbageCollector::new(client, recorder, Some(cx.queue_metrics), metrics))))
        },
    },
];

/// The canonical names of the controllers kcm-rs implements, for
/// `--controllers`.
pub fn implemented() -> Vec<&'static str> {
    TABLE.iter().map(|row| row.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::canonical_controller_name;

    #[test]
    fn every_row_is_an_upstream_controller_by_its_canonical_name_once() {
        let names = implemented();
        for name in &names {
            assert_eq!(canonical_controller_name(name), Some(*name), "{name} is not an upstream canonical name");
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a controller has two rows: {names:?}");
    }

    #[test]
    fn the_garbage_collector_starts_last_to_share_the_others_informers() {
        assert_eq!(TABLE.last().map(|row| row.name), Some(garbagecollector::CONTROLLER_NAME));
    }
}
