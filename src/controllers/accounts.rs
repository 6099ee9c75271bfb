//! Service accounts, their tokens and credentials: the token controller
//! (started first), the ServiceAccount and root CA publishers, certificate
//! signing requests, bootstrap tokens, ClusterRole aggregation.

use crate::config::settings::NoFlags;
use crate::config::settings::csrsigning::CsrSigningFlags;
use crate::config::settings::legacytokencleaner::LegacyTokenCleanerFlags;
use crate::config::settings::serviceaccounttoken::ServiceAccountTokenFlags;
use crate::drivers::bootstrapsigner::{self, BootstrapSigner};
use crate::drivers::clusterroleaggregation::{self, ClusterRoleAggregationController};
use crate::drivers::csrapproving::{self, CsrApprovingController};
use crate::drivers::csrcleaner::{self, CsrCleaner};
use crate::drivers::csrsigning::{self, CsrSigningController, ca::CaProvider};
use crate::drivers::legacytokencleaner::{self, LegacyTokenCleaner};
use crate::drivers::rootcacertpublisher::{self, PublisherMetrics, RootCaCertPublisher};
use crate::drivers::serviceaccount::{self, ServiceAccountsController};
use crate::drivers::serviceaccounttoken::{self, TokensController, signer::Signer};
use crate::drivers::tokencleaner::{self, TokenCleaner};

use super::{Row, Wiring};

/// The token controller, started before the others as upstream starts it (`requiresSpecialHandling`).
pub(super) const FIRST: &[&dyn Wiring] = &[&Row::<ServiceAccountTokenFlags> {
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
}];

/// Its rows, in start order.
pub(super) const ROWS: &[&dyn Wiring] = &[
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
        name: serviceaccount::CONTROLLER_NAME,
        workers: |_| serviceaccount::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(serviceaccount::CLIENT_NAME)?;
            Ok(Some(Box::new(ServiceAccountsController::new(cx.factory, client, Some(cx.queue_metrics)))))
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
];
