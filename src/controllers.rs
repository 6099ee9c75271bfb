//! The controller table: one [`Row`] per controller kcm-rs runs, carrying
//! its upstream name, its settings type, its worker count (read from its
//! settings) and its constructor. Leading is a loop over [`TABLE`];
//! `--controllers` is resolved against [`implemented`], and the command
//! line gets each row's flags ([`flags`]). Adding a controller is a core in
//! `kcm-controllers`, a driver in `drivers`, its settings in
//! `config/settings/`, and one row here.
//!
//! A constructor builds the controller on the shared informers (its
//! handlers, queues and metrics registered) from its settings and what
//! [`Context`] hands it: the configuration, the shared controllers' client,
//! or a client of its own named as upstream names it. Rows are in start
//! order: the garbage collector comes last, so that it shares the
//! informers the others asked for.

mod row;

use kcm_runtime::client;
use kcm_runtime::events::EventRecorder;

use crate::config::settings::NoFlags;
use crate::config::settings::attachdetach::AttachDetachFlags;
use crate::config::settings::cronjob::CronJobFlags;
use crate::config::settings::csrsigning::CsrSigningFlags;
use crate::config::settings::daemonset::DaemonSetFlags;
use crate::config::settings::deployment::DeploymentFlags;
use crate::config::settings::endpoint::EndpointFlags;
use crate::config::settings::endpointslice::EndpointSliceFlags;
use crate::config::settings::endpointslicemirroring::EndpointSliceMirroringFlags;
use crate::config::settings::ephemeralvolume::EphemeralVolumeFlags;
use crate::config::settings::garbagecollector::GarbageCollectorFlags;
use crate::config::settings::job::JobFlags;
use crate::config::settings::legacytokencleaner::LegacyTokenCleanerFlags;
use crate::config::settings::namespace::NamespaceFlags;
use crate::config::settings::nodeipam::NodeIpamFlags;
use crate::config::settings::nodelifecycle::NodeLifecycleFlags;
use crate::config::settings::podgc::PodGcFlags;
use crate::config::settings::pvbinder::PvBinderFlags;
use crate::config::settings::replicaset::ReplicaSetFlags;
use crate::config::settings::serviceaccounttoken::ServiceAccountTokenFlags;
use crate::config::settings::statefulset::StatefulSetFlags;
use crate::config::settings::ttlafterfinished::TtlAfterFinishedFlags;
use crate::config::{Implemented, PVC_UNUSED_SINCE_TIME};
use crate::drivers::attachdetach::{self, AttachDetachController, AttachDetachMetrics};
use crate::drivers::bootstrapsigner::{self, BootstrapSigner};
use crate::drivers::clusterroleaggregation::{self, ClusterRoleAggregationController};
use crate::drivers::cronjob::{self, CronJobController, CronJobMetrics};
use crate::drivers::csrapproving::{self, CsrApprovingController};
use crate::drivers::csrcleaner::{self, CsrCleaner};
use crate::drivers::csrsigning::{self, CsrSigningController, ca::CaProvider};
use crate::drivers::daemonset::{self, DaemonSetController};
use crate::drivers::deployment::{self, DeploymentController};
use crate::drivers::endpoint::{self, EndpointController};
use crate::drivers::endpointslice::{self, EndpointSliceController, EndpointSliceMetrics};
use crate::drivers::endpointslicemirroring::{self, EndpointSliceMirroringController, MirroringMetrics};
use crate::drivers::ephemeralvolume::{self, EphemeralVolumeController, EphemeralVolumeMetrics};
use crate::drivers::expand::{self, ExpandController};
use crate::drivers::garbagecollector::{self, GarbageCollector, GcMetrics};
use crate::drivers::job::{self, JobController, JobMetrics};
use crate::drivers::legacytokencleaner::{self, LegacyTokenCleaner};
use crate::drivers::namespace::{self, NamespaceController};
use crate::drivers::nodeipam::{self, CidrSetMetrics, NodeIpamController, Params};
use crate::drivers::nodelifecycle::{self, NodeLifecycleController, NodeLifecycleMetrics};
use crate::drivers::podgc::{self, PodGcController, PodGcMetrics};
use crate::drivers::pvbinder::{self, PvBinderController, PvBinderMetrics};
use crate::drivers::pvcprotection::{self, PvcProtectionController};
use crate::drivers::pvprotection::{self, PvProtectionController};
use crate::drivers::replicaset::{self, ReplicaSetController};
use crate::drivers::rootcacertpublisher::{self, PublisherMetrics, RootCaCertPublisher};
use crate::drivers::serviceaccount::{self, ServiceAccountsController};
use crate::drivers::serviceaccounttoken::{self, TokensController, signer::Signer};
use crate::drivers::servicecidrs::{self, ServiceCidrController};
use crate::drivers::statefulset::{self, StatefulSetController};
use crate::drivers::tainteviction::{self, EvictionMetrics, TaintEvictionController};
use crate::drivers::tokencleaner::{self, TokenCleaner};
use crate::drivers::ttl::{self, TtlController};
use crate::drivers::ttlafterfinished::{self, TtlAfterFinishedController, TtlAfterFinishedMetrics};
use crate::drivers::vacprotection::{self, VacProtectionController};

pub use row::{Context, Launched, Row, StartError, Started, Wiring};

/// Every controller kcm-rs runs, in start order.
pub const TABLE: &[&dyn Wiring] = &[
    // First, as upstream starts it before the others (`requiresSpecialHandling`).
    &Row::<ServiceAccountTokenFlags> {
        name: serviceaccounttoken::CONTROLLER_NAME,
        workers: |settings| settings.workers,
        start: |settings, cx| {
            let Some(key_file) = settings.private_key_file.as_deref() else {
                tracing::info!(
                    controller = serviceaccounttoken::CONTROLLER_NAME,
                    "Controller is disabled because there is no private key"
                );
                return Ok(None);
            };
            let signer = Signer::from_file(key_file)?;
            let trusted = cx.client_config.kube_config().root_cert.as_deref().unwrap_or_default();
            let root_ca = rootcacertpublisher::root_ca(settings.root_ca_file.as_deref(), trusted)?;
            // Upstream's root client: it mints the tokens the others' would need.
            let client = cx.root_client(serviceaccounttoken::CLIENT_NAME)?;
            Ok(Some(Box::new(TokensController::new(cx.factory, client, signer, root_ca, Some(cx.queue_metrics)))))
        },
    },
    &Row::<DeploymentFlags> {
        name: deployment::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&deployment::IDENTITY)?;
            let options = DeploymentFlags::options(&cx.config.feature_gates);
            Ok(Some(Box::new(DeploymentController::new(parts, options)?)))
        },
    },
    &Row::<ReplicaSetFlags> {
        name: replicaset::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&replicaset::IDENTITY)?;
            let options = ReplicaSetFlags::options(&cx.config.feature_gates);
            Ok(Some(Box::new(ReplicaSetController::new(parts, options)?)))
        },
    },
    &Row::<StatefulSetFlags> {
        name: statefulset::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&statefulset::IDENTITY)?;
            let options = StatefulSetFlags::options(&cx.config.feature_gates);
            Ok(Some(Box::new(StatefulSetController::new(parts, options)?)))
        },
    },
    &Row::<DaemonSetFlags> {
        name: daemonset::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&daemonset::IDENTITY)?;
            let options = kcm_controllers::daemonset::Options::default();
            Ok(Some(Box::new(DaemonSetController::new(parts, options))))
        },
    },
    &Row::<JobFlags> {
        name: job::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&job::IDENTITY)?;
            let metrics = JobMetrics::register(cx.registry)?;
            Ok(Some(Box::new(JobController::new(parts, Some(metrics))?)))
        },
    },
    &Row::<CronJobFlags> {
        name: cronjob::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&cronjob::IDENTITY)?;
            let metrics = CronJobMetrics::register(cx.registry)?;
            Ok(Some(Box::new(CronJobController::new(parts, Some(metrics)))))
        },
    },
    &Row::<NamespaceFlags> {
        name: namespace::CONTROLLER_NAME,
        workers: |settings| settings.workers,
        start: |settings, cx| {
            // Upstream's namespace controller client: QPS ×20, burst ×100,
            // so emptying a large namespace neither starves the others'
            // writes nor takes minutes.
            let scaled = cx.client_config.scaled(namespace::QPS_FACTOR, namespace::BURST_FACTOR);
            let client = client::build(&scaled, cx.registry, Some(namespace::CONTROLLER_NAME))?;
            let resync = settings.sync_period;
            Ok(Some(Box::new(NamespaceController::new(cx.factory, client, resync, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: tainteviction::IDENTITY.name,
        workers: |_| tainteviction::WORKERS,
        start: |_, cx| {
            let parts = cx.parts(&tainteviction::IDENTITY)?;
            let metrics = EvictionMetrics::register(cx.registry)?;
            Ok(Some(Box::new(TaintEvictionController::new(parts, Some(metrics))?)))
        },
    },
    &Row::<NodeLifecycleFlags> {
        name: nodelifecycle::IDENTITY.name,
        workers: |_| nodelifecycle::NODE_WORKERS,
        start: |settings, cx| {
            let parts = cx.parts(&nodelifecycle::IDENTITY)?;
            let metrics = NodeLifecycleMetrics::register(cx.registry)?;
            Ok(Some(Box::new(NodeLifecycleController::new(parts, *settings, Some(metrics))?)))
        },
    },
    &Row::<NodeIpamFlags> {
        name: nodeipam::CONTROLLER_NAME,
        workers: |_| nodeipam::WORKERS,
        start: |settings, cx| {
            // Without --allocate-node-cidrs upstream does not start it.
            let Some(params) = Params::from_settings(settings)? else { return Ok(None) };
            let client = cx.own_client(nodeipam::CLIENT_NAME)?;
            let metrics = CidrSetMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(NodeIpamController::new(cx.factory, client, &params, Some(metrics), queues)?)))
        },
    },
    &Row::<NoFlags> {
        name: serviceaccount::CONTROLLER_NAME,
        workers: |_| serviceaccount::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(serviceaccount::CLIENT_NAME)?;
            Ok(Some(Box::new(ServiceAccountsController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<ServiceAccountTokenFlags> {
        name: rootcacertpublisher::CONTROLLER_NAME,
        workers: |_| rootcacertpublisher::WORKERS,
        start: |settings, cx| {
            let trusted = cx.client_config.kube_config().root_cert.as_deref().unwrap_or_default();
            let root_ca = rootcacertpublisher::root_ca(settings.root_ca_file.as_deref(), trusted)?;
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
    &Row::<NoFlags> {
        name: clusterroleaggregation::CONTROLLER_NAME,
        workers: |_| clusterroleaggregation::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(clusterroleaggregation::CONTROLLER_NAME)?;
            Ok(Some(Box::new(ClusterRoleAggregationController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: csrapproving::CONTROLLER_NAME,
        workers: |_| csrapproving::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(csrapproving::CLIENT_NAME)?;
            Ok(Some(Box::new(CsrApprovingController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: csrcleaner::CONTROLLER_NAME,
        workers: |_| csrcleaner::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(csrcleaner::CLIENT_NAME)?;
            Ok(Some(Box::new(CsrCleaner::new(cx.factory, client))))
        },
    },
    &Row::<EndpointFlags> {
        name: endpoint::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |settings, cx| {
            let parts = cx.parts(&endpoint::IDENTITY)?;
            let batch = settings.batch_period;
            Ok(Some(Box::new(EndpointController::new(parts, batch))))
        },
    },
    &Row::<EndpointSliceMirroringFlags> {
        name: endpointslicemirroring::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |settings, cx| {
            let parts = cx.parts(&endpointslicemirroring::IDENTITY)?;
            let metrics = MirroringMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EndpointSliceMirroringController::new(parts, settings.driver, Some(metrics)))))
        },
    },
    &Row::<LegacyTokenCleanerFlags> {
        name: legacytokencleaner::CONTROLLER_NAME,
        // Upstream's cleaner has no workers: one evaluation a day.
        workers: |_| 1,
        start: |settings, cx| {
            let client = cx.own_client(legacytokencleaner::CLIENT_NAME)?;
            let period = settings.clean_up_period;
            Ok(Some(Box::new(LegacyTokenCleaner::new(cx.factory, client, period)?)))
        },
    },
    &Row::<EndpointSliceFlags> {
        name: endpointslice::IDENTITY.name,
        workers: |settings| settings.concurrent_syncs,
        start: |settings, cx| {
            let parts = cx.parts(&endpointslice::IDENTITY)?;
            let metrics = EndpointSliceMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EndpointSliceController::new(parts, settings.driver, Some(metrics)))))
        },
    },
    &Row::<PodGcFlags> {
        name: podgc::CONTROLLER_NAME,
        // Upstream's pod garbage collector has no workers: one pass every 20 s.
        workers: |_| 1,
        start: |settings, cx| {
            let client = cx.own_client(podgc::CLIENT_NAME)?;
            let metrics = PodGcMetrics::register(cx.registry)?;
            let threshold = settings.terminated_pod_gc_threshold;
            Ok(Some(Box::new(PodGcController::new(cx.factory, client, threshold, Some(metrics)))))
        },
    },
    &Row::<TtlAfterFinishedFlags> {
        name: ttlafterfinished::CONTROLLER_NAME,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let client = cx.own_client(ttlafterfinished::CLIENT_NAME)?;
            let metrics = TtlAfterFinishedMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(TtlAfterFinishedController::new(cx.factory, client, Some(metrics), queues))))
        },
    },
    &Row::<NoFlags> {
        name: ttl::CONTROLLER_NAME,
        workers: |_| ttl::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(ttl::CLIENT_NAME)?;
            Ok(Some(Box::new(TtlController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<PvBinderFlags> {
        name: pvbinder::CONTROLLER_NAME,
        workers: |_| pvbinder::WORKERS,
        start: |settings, cx| {
            if settings.hostpath_provisioner {
                tracing::warn!(
                    controller = pvbinder::CONTROLLER_NAME,
                    "--enable-hostpath-provisioner: kcm-rs runs no host-path provisioner; claims of a \
                     kubernetes.io/host-path class get a ProvisioningFailed event"
                );
            }
            let client = cx.own_client(pvbinder::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), pvbinder::EVENT_SOURCE);
            let core = kcm_controllers::pvbinder::Settings {
                dynamic_provisioning: settings.dynamic_provisioning,
                // `VolumeAttributesClass` is GA and locked on in 1.37.
                vac_enabled: true,
            };
            let queues = Some(cx.queue_metrics);
            let metrics = Some(PvBinderMetrics::register(cx.registry, cx.factory)?);
            let period = settings.sync_period;
            let controller = PvBinderController::new(cx.factory, client, recorder, core, period, queues, metrics)?;
            Ok(Some(Box::new(controller)))
        },
    },
    &Row::<NoFlags> {
        name: pvcprotection::CONTROLLER_NAME,
        workers: |_| pvcprotection::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(pvcprotection::CLIENT_NAME)?;
            let unused_since = cx.config.feature_gates.enabled(PVC_UNUSED_SINCE_TIME);
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(PvcProtectionController::new(cx.factory, client, unused_since, queues)?)))
        },
    },
    &Row::<EphemeralVolumeFlags> {
        name: ephemeralvolume::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&ephemeralvolume::IDENTITY)?;
            let metrics = EphemeralVolumeMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EphemeralVolumeController::new(parts, Some(metrics))?)))
        },
    },
    &Row::<AttachDetachFlags> {
        name: attachdetach::IDENTITY.name,
        workers: |_| attachdetach::WORKERS,
        start: |settings, cx| {
            let parts = cx.parts(&attachdetach::IDENTITY)?;
            let metrics = AttachDetachMetrics::register(cx.registry)?;
            Ok(Some(Box::new(AttachDetachController::new(parts, *settings, Some(metrics))?)))
        },
    },
    &Row::<NoFlags> {
        name: expand::IDENTITY.name,
        workers: |_| expand::WORKERS,
        start: |_, cx| Ok(Some(Box::new(ExpandController::new(cx.parts(&expand::IDENTITY)?)))),
    },
    &Row::<NoFlags> {
        name: pvprotection::CONTROLLER_NAME,
        workers: |_| pvprotection::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(pvprotection::CLIENT_NAME)?;
            Ok(Some(Box::new(PvProtectionController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: vacprotection::CONTROLLER_NAME,
        workers: |_| vacprotection::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(vacprotection::CLIENT_NAME)?;
            Ok(Some(Box::new(VacProtectionController::new(cx.factory, client, Some(cx.queue_metrics))?)))
        },
    },
    &Row::<NoFlags> {
        name: bootstrapsigner::CONTROLLER_NAME,
        workers: |_| bootstrapsigner::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(bootstrapsigner::CLIENT_NAME)?;
            Ok(Some(Box::new(BootstrapSigner::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: tokencleaner::CONTROLLER_NAME,
        workers: |_| tokencleaner::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(tokencleaner::CLIENT_NAME)?;
            Ok(Some(Box::new(TokenCleaner::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: servicecidrs::IDENTITY.name,
        workers: |_| servicecidrs::WORKERS,
        start: |_, cx| Ok(Some(Box::new(ServiceCidrController::new(cx.parts(&servicecidrs::IDENTITY)?)))),
    },
    &Row::<CsrSigningFlags> {
        name: csrsigning::CONTROLLER_NAME,
        workers: |_| csrsigning::WORKERS,
        start: |settings, cx| {
            if settings.none_configured() {
                tracing::info!("Skipping CSR signer controller because no csr cert/key was specified");
                return Ok(None);
            }
            let client = cx.own_client(csrsigning::CLIENT_NAME)?;
            let mut signers = Vec::new();
            for (signer, files) in &settings.signers {
                let Some(files) = files else {
                    tracing::info!(
                        controller = signer.name(),
                        "Skipping CSR signer controller because specific files were specified for other signers \
                         and not this one"
                    );
                    continue;
                };
                let ca = CaProvider::load(files)
                    .map_err(|e| format!("failed to init {} certificate controller: {e}", signer.name()))?;
                signers.push((*signer, ca));
            }
            let duration = settings.duration;
            Ok(Some(Box::new(CsrSigningController::new(cx.factory, client, signers, duration, Some(cx.queue_metrics)))))
        },
    },
    &Row::<GarbageCollectorFlags> {
        name: garbagecollector::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let client = cx.own_client(garbagecollector::IDENTITY.client)?;
            let recorder = EventRecorder::new(client.clone(), garbagecollector::IDENTITY.events);
            let metrics = GcMetrics::register(cx.registry)?;
            Ok(Some(Box::new(GarbageCollector::new(client, recorder, Some(cx.queue_metrics), metrics))))
        },
    },
];

/// The canonical names of the controllers kcm-rs implements, for
/// `--controllers`.
pub fn implemented() -> Vec<&'static str> {
    TABLE.iter().map(|row| row.name()).collect()
}

/// The controllers kcm-rs implements as configuration sees them (names
/// and flags), for [`Flags`](crate::config::Flags) and its
/// [`Config`](crate::config::Config).
pub fn flags() -> Vec<&'static dyn Implemented> {
    TABLE.iter().map(|row| *row as &dyn Implemented).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{
        Config, ControllerFlags, Error, Flags, Result, UNIMPLEMENTED_UPSTREAM_FLAGS, canonical_controller_name,
    };

    fn config(args: &[&str]) -> Result<Config> {
        let args = std::iter::once("kcm-rs").chain(args.iter().copied());
        Flags::try_from_args(args, &flags()).expect("flags parse").into_config(&flags())
    }

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
    fn enable_garbage_collector_false_drops_the_gc() {
        let c = config(&["--enable-garbage-collector=false"]).unwrap();
        assert!(!c.controllers.contains("garbage-collector-controller"));
        assert!(c.controllers.contains("deployment-controller"));
    }

    #[test]
    fn unimplemented_table_does_not_shadow_implemented_flags() {
        let cmd = Flags::command(&flags());
        let ours: Vec<&str> = cmd.get_arguments().filter(|a| !a.is_hide_set()).filter_map(|a| a.get_long()).collect();
        for flag in UNIMPLEMENTED_UPSTREAM_FLAGS {
            assert!(!ours.contains(&flag.name), "--{} is both implemented and refused", flag.name);
        }
        // clap would panic on duplicates; building the full command proves there are none.
        Flags::command(&flags()).debug_assert();
    }

    #[test]
    fn every_controllers_flags_are_on_the_command_line_in_their_help_sections() {
        let help = Flags::command(&flags()).render_long_help().to_string();
        for needle in [
            "Nodelifecycle controller flags",
            "Larger number = more responsive deployments, but more CPU (and network) load\n",
        ] {
            assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
        }
        // `*` (the default) starts every row but those upstream keeps off.
        let c = config(&[]).unwrap();
        let off_by_default = [bootstrapsigner::CONTROLLER_NAME, tokencleaner::CONTROLLER_NAME];
        assert_eq!(c.controllers.iter().count(), TABLE.len() - off_by_default.len());
        assert!(off_by_default.iter().all(|name| !c.controllers.contains(name)));
    }

    #[test]
    fn a_row_reads_its_settings_from_the_configuration() {
        let c = config(&["--concurrent-cron-job-syncs=2"]).unwrap();
        let settings = <CronJobFlags as ControllerFlags>::read(&c.controller_flags).unwrap();
        assert_eq!(settings.workers, 2);
        assert_eq!(
            config(&["--concurrent-cron-job-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-cron-job-syncs", value: 0 }
        );
    }

    #[test]
    fn the_garbage_collector_starts_last_to_share_the_others_informers() {
        assert_eq!(TABLE.last().map(|row| row.name()), Some(garbagecollector::IDENTITY.name));
    }
}
