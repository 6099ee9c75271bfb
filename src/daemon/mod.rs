//! The daemon: wires the runtime pieces together in upstream's start-up
//! order and turns how it ended into an exit code.
//!
//! 1. the API client (or, with `--sim`, an embedded kube-sim and a client
//!    for it);
//! 2. the metrics registry and HTTPS serving of `/metrics` and the health
//!    endpoints behind delegated authentication and authorization (open
//!    under `--sim`, whose kube-sim reviews no tokens), started *before*
//!    leader election so that standbys answer probes and scrapes;
//! 3. Lease leader election (unless `--leader-elect=false`), with the
//!    `leaderElection` health check and the `LeaderElection` Events;
//! 4. once leading: the controllers, until SIGTERM/SIGINT (then the lease is
//!    released so a standby takes over at once, and the process exits 0) or
//!    until the lease is lost (the process exits 1: a restart is the safe way
//!    back, as upstream). A selected controller that cannot be built
//!    starts none: the lease is released and the process exits 1, as
//!    upstream's.
//!
//! Under leader election every controller client is built on the elector's
//! write fence (`ClientConfig::fenced`): a write is sent only while this
//! process provably holds the lease. The election's own client, which also
//! records the `LeaderElection` Events, is not fenced.
//!
//! With `--use-service-account-credentials` each controller's client acts
//! as the ServiceAccount `kube-system/<its client name>`
//! (`ClientConfig::service_accounts`); what upstream builds with its root
//! client builder keeps the `--kubeconfig` identity: the shared informers,
//! leader election, and the tokens controller.
//!
//! The controllers: the rows of the controller table that `--controllers`
//! selects. While leading (`lead.rs`), the daemon builds one shared
//! informer factory, registers
//! every selected controller on it (the garbage collector last, so that it
//! shares the informers the others asked for), starts the informers and
//! runs the controllers' workers (after their caches sync) until leading
//! ends; then the workers drain and the informers stop. Once the caches
//! have synced and the queues first emptied, the binary's code pages are
//! handed back to the kernel (`pageout.rs`): what idle runs comes back.
//! The election's set-up and its Events are `election.rs`'s.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kcm_runtime::client::{self, ClientConfig};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::leader::{self, Outcome, StopSignal};
use kcm_runtime::runner::SyncMetrics;
use kcm_runtime::server::{self, Access, Checks, Endpoints};
use kcm_runtime::workqueue::{self, QueueMetrics};
use prometheus::Registry;
use tokio::sync::watch;

use crate::config::settings::ControllerFlags as _;
use crate::config::settings::serviceaccounttoken::ServiceAccountTokenFlags;
use crate::config::{Config, SimSettings};
use crate::sim;

mod election;
mod lead;
mod pageout;

use election::{Election, announce_transitions, stopped};
use lead::{BuildFailed, Runtime, lead};

/// The user-agent suffix of the shared informers' client: upstream's
/// informer factory's `ClientOrDie("shared-informers")`. Every controller
/// has a client of its own, with its own QPS/burst budget.
const INFORMERS_CLIENT: &str = "shared-informers";

/// Why the daemon could not run. Each module's error, wrapped once here.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API client could not be built.
    #[error(transparent)]
    Client(#[from] client::Error),
    /// Serving could not start.
    #[error(transparent)]
    Server(#[from] server::Error),
    /// Leader election could not start or failed.
    #[error(transparent)]
    Leader(#[from] leader::Error),
    /// The embedded simulator could not start.
    #[error(transparent)]
    Sim(#[from] sim::Error),
    /// A metric could not be registered.
    #[error("cannot register metrics")]
    Metrics(#[from] prometheus::Error),
    /// A workqueue metric could not be registered.
    #[error(transparent)]
    QueueMetrics(#[from] workqueue::Error),
}

/// How the daemon ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Shut down on request (exit 0).
    Stopped,
    /// Leadership was lost (exit 1).
    LeaderLost,
    /// A selected controller could not be built, so none was started
    /// (exit 1, as upstream's "Error building controllers").
    ControllersFailed,
}

/// A future that completes on shutdown.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs the daemon until `shutdown` completes or leadership is lost.
pub async fn run(config: Config, shutdown: Shutdown) -> Result<Exit, Error> {
    let not_running = config.controllers.not_running();
    if !not_running.is_empty() {
        tracing::warn!(
            controllers = ?not_running,
            "--controllers selects controllers kcm-rs does not implement: they are not running"
        );
    }
    let registry = Registry::new();
    registry.register(Box::new(prometheus::process_collector::ProcessCollector::for_self()))?;

    // Keep the simulator alive for the daemon's lifetime.
    let (_sim, client_config) = match config.sim {
        Some(SimSettings { nodes }) => {
            let sim = sim::start(nodes, registry.clone()).await?;
            let client_config = ClientConfig::from_url(&sim.url(), config.client.qps, config.client.burst)?;
            (Some(sim), client_config)
        }
        None => (None, ClientConfig::load(&config.client).await?),
    };
    let election = match &config.leader_election {
        Some(settings) => Some(Election::new(settings, &client_config, &registry)?),
        None => None,
    };
    let root_config = match &election {
        Some(election) => client_config.fenced(election.elector.fence()),
        None => client_config.clone(),
    };
    let controllers_config = if config.use_service_account_credentials {
        service_accounts(&config, &client_config, &root_config, &registry)?
    } else {
        root_config.clone()
    };
    let client = client::build(&root_config, &registry, Some(INFORMERS_CLIENT))?;
    let healthz = Checks::with_ping();
    let readyz = Checks::with_ping();
    // Ready while standing by; while leading, once the caches have synced.
    let caches_synced = Arc::new(AtomicBool::new(true));
    let synced = caches_synced.clone();
    readyz.add(
        "informer-sync",
        Arc::new(move || if synced.load(Ordering::Relaxed) { Ok(()) } else { Err("caches not synced yet".into()) }),
    );
    let runtime = Runtime {
        client: client.clone(),
        client_config: controllers_config,
        root_config,
        registry: registry.clone(),
        queue_metrics: QueueMetrics::register(&registry)?,
        sync_metrics: SyncMetrics::register(&registry)?,
        healthz: healthz.clone(),
        caches_synced,
    };
    let (stop_serving, serving_stopped) = watch::channel(false);
    if let Some(serving) = &config.serving {
        // kube-sim reviews no tokens or access: under --sim, everyone may see everything.
        let access = match config.sim {
            Some(_) => Access::Open,
            None => server::delegated(&serving.delegation).await?,
        };
        let tls = server::tls_config(&serving.tls, access.wants_client_certificates())?;
        let listener = server::bind(serving.addr).await?;
        tracing::info!(addr = %serving.addr, "serving /metrics, /healthz, /livez and /readyz over HTTPS");
        let endpoints = Endpoints {
            registry: registry.clone(),
            healthz: healthz.clone(),
            livez: Checks::with_ping(),
            readyz: readyz.clone(),
        };
        tokio::spawn(server::serve(listener, tls, server::router(endpoints, access), serving_stopped));
    }

    let exit = match election {
        None => match lead(&config, &runtime, shutdown).await {
            Ok(()) => Exit::Stopped,
            Err(BuildFailed) => Exit::ControllersFailed,
        },
        Some(Election { elector, config: le_config, client: le_client }) => {
            let identity = le_config.identity.clone();
            let health = elector.health();
            healthz.add("leaderElection", Arc::new(move || health.check().map_err(|e| e.to_string())));
            announce_transitions(&elector, EventRecorder::new(le_client, "kube-controller-manager"), &le_config);
            tracing::info!(%identity, lease = %format!("{}/{}", le_config.lease_namespace, le_config.lease_name),
                "attempting to acquire the leader lease");
            let config_for_leading = config.clone();
            let build_failed = Arc::new(AtomicBool::new(false));
            let failed = build_failed.clone();
            let outcome = elector
                .run(
                    move |stop: StopSignal| async move {
                        // Returning ends the term: the lease is released.
                        if lead(&config_for_leading, &runtime, Box::pin(stopped(stop))).await.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                    },
                    shutdown,
                )
                .await?;
            match outcome {
                Outcome::Lost => {
                    tracing::error!("leaderelection lost");
                    Exit::LeaderLost
                }
                Outcome::SteppedDown { released } => {
                    tracing::info!(released, "stepped down");
                    if build_failed.load(Ordering::Relaxed) { Exit::ControllersFailed } else { Exit::Stopped }
                }
                Outcome::NeverLed => Exit::Stopped,
            }
        }
    };
    let _ = stop_serving.send(true);
    Ok(exit)
}

/// `--use-service-account-credentials`: the controllers' configuration,
/// each client acting as its own ServiceAccount, tokens requested with the
/// `--kubeconfig` identity (upstream's `createClientBuilders`). The
/// requests for tokens are not fenced: they change nothing a standby
/// would act on.
fn service_accounts(
    config: &Config,
    unfenced: &ClientConfig,
    root: &ClientConfig,
    registry: &Registry,
) -> Result<ClientConfig, Error> {
    let key_file = ServiceAccountTokenFlags::read(&config.controller_flags)
        .map(|settings| settings.private_key_file.is_some())
        .unwrap_or_default();
    if !key_file {
        // Another controller manager may be creating the tokens; if none is,
        // the controllers' requests fail, naming their ServiceAccount.
        tracing::warn!(
            "Warning: --use-service-account-credentials was specified without providing a \
             --service-account-private-key-file"
        );
    }
    // Upstream's `c.Client`: the user agent without suffix.
    let tokens = client::build(unfenced, registry, None)?;
    Ok(root.service_accounts(tokens))
}
