//! Lease leader election as the daemon sets it up: the elector with its
//! own client, the `LeaderElection` Events upstream records on the Lease,
//! and the log line when leading ends.

use k8s_openapi::api::core::v1::ObjectReference;
use kcm_runtime::client::{self, ClientConfig};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::leader::{self, LeaderElectionConfig, LeaderElector, LeaderMetrics, StopSignal};
use prometheus::Registry;

use super::Error;
use crate::config::LeaderElectionSettings;

/// Leader election, set up before the controllers' clients are built on
/// its fence.
pub(super) struct Election {
    pub(super) elector: LeaderElector,
    pub(super) config: LeaderElectionConfig,
    /// The election's own client (user agent `.../leader-election`, its own
    /// QPS budget, no fence): the Lease and the `LeaderElection` Events.
    pub(super) client: kube::Client,
}

impl Election {
    pub(super) fn new(
        settings: &LeaderElectionSettings,
        client_config: &ClientConfig,
        registry: &Registry,
    ) -> Result<Self, Error> {
        let client = client::build(client_config, registry, Some("leader-election"))?;
        let mut config = LeaderElectionConfig::new(leader::default_identity());
        config.lease_name = settings.resource_name.clone();
        config.lease_namespace = settings.resource_namespace.clone();
        config.lease_duration = settings.lease_duration;
        config.renew_deadline = settings.renew_deadline;
        config.retry_period = settings.retry_period;
        let metrics = LeaderMetrics::register(registry)?;
        let elector = LeaderElector::new(client.clone(), config.clone(), &metrics)?;
        Ok(Election { elector, config, client })
    }
}

/// Waits until leading ends, and logs why.
pub(super) async fn stopped(mut stop: StopSignal) {
    let reason = stop.stopped().await;
    tracing::info!(?reason, "leading ends");
}

/// Emits upstream's `LeaderElection` Events on the Lease when this process
/// starts and stops leading.
pub(super) fn announce_transitions(elector: &LeaderElector, recorder: EventRecorder, config: &LeaderElectionConfig) {
    let mut status = elector.subscribe();
    let lease = ObjectReference {
        api_version: Some("coordination.k8s.io/v1".into()),
        kind: Some("Lease".into()),
        name: Some(config.lease_name.clone()),
        namespace: Some(config.lease_namespace.clone()),
        ..ObjectReference::default()
    };
    let identity = config.identity.clone();
    tokio::spawn(async move {
        let mut leading = false;
        while status.changed().await.is_ok() {
            let now = status.borrow_and_update().leading;
            if now != leading {
                leading = now;
                let message =
                    if now { format!("{identity} became leader") } else { format!("{identity} stopped leading") };
                recorder.event(&lease, EventType::Normal, "LeaderElection", message);
            }
        }
    });
}
