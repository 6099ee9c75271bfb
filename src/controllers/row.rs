//! What one row of the controller table is: a controller's upstream name,
//! its settings type (whose flags the command line gets), its worker count
//! and its constructor, and the [`Context`] a constructor is handed. The
//! rows themselves are the table's (`super::table`, by area).

use kcm_runtime::client::{self, ClientConfig};
use kcm_runtime::controller::Controller;
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::SharedInformerFactory;
use kcm_runtime::workqueue::QueueMetrics;
use prometheus::Registry;

use crate::config::settings::{self, ControllerFlags, Implemented};
use crate::config::{Config, Result as ConfigResult};
use crate::drivers::parts::{Identity, Parts};

/// Why a controller could not be built.
pub type StartError = Box<dyn std::error::Error + Send + Sync>;

/// What a constructor answers: the controller, or `None` when its
/// configuration says not to run it.
pub type Started = Result<Option<Box<dyn Controller>>, StartError>;

/// One controller kcm-rs runs, with flags of type `F`.
pub struct Row<F: ControllerFlags> {
    /// Upstream's canonical name (`cmd/kube-controller-manager/names`).
    pub name: &'static str,
    /// Workers per queue: its `--concurrent-*-syncs` setting, or upstream's
    /// fixed count where there is no flag.
    pub workers: fn(&F::Settings) -> usize,
    /// Builds it on the shared informers from its settings (`None`: they
    /// say not to run it, as upstream's `started == false`).
    pub start: fn(&F::Settings, &Context<'_>) -> Started,
}

/// What a constructor is handed.
pub struct Context<'a> {
    /// The daemon's configuration (process-wide settings, and the parsed
    /// command line each controller reads its own settings from).
    pub config: &'a Config,
    /// The process's shared informers (handlers are registered before
    /// they start).
    pub factory: &'a SharedInformerFactory,
    /// What a controller's own client is built from: with
    /// `--use-service-account-credentials`, each client acts as the
    /// ServiceAccount of its name.
    pub client_config: &'a ClientConfig,
    /// The `--kubeconfig` identity's configuration, for what upstream
    /// builds with its root client builder among the controllers: the
    /// tokens controller. The same as `client_config` without
    /// `--use-service-account-credentials`.
    pub root_config: &'a ClientConfig,
    /// Where controller metrics are registered.
    pub registry: &'a Registry,
    /// `workqueue_*` metrics, labelled by queue name.
    pub queue_metrics: &'a QueueMetrics,
}

impl<'a> Context<'a> {
    /// A client of its own, with the flags' QPS and burst and `name` as its
    /// user agent (upstream's `ClientOrDie(name)`).
    pub fn own_client(&self, name: &str) -> Result<kube::Client, StartError> {
        Ok(client::build(self.client_config, self.registry, Some(name))?)
    }

    /// A client of its own with the `--kubeconfig` identity whatever
    /// `--use-service-account-credentials` says (upstream's
    /// `rootClientBuilder.ClientOrDie(name)`).
    pub fn root_client(&self, name: &str) -> Result<kube::Client, StartError> {
        Ok(client::build(self.root_config, self.registry, Some(name))?)
    }

    /// What the controller named `identity` is built from: the shared
    /// informers, its own client, its events' recorder, the queue metrics.
    pub fn parts(&self, identity: &Identity) -> Result<Parts<'a>, StartError> {
        let client = self.own_client(identity.client)?;
        let recorder = EventRecorder::new(client.clone(), identity.events);
        Ok(Parts { factory: self.factory, client, recorder, queue_metrics: Some(self.queue_metrics) })
    }
}

/// A built controller and how many workers run it.
pub struct Launched {
    /// The controller, its handlers registered.
    pub controller: Box<dyn Controller>,
    /// Its [`Row::workers`].
    pub workers: usize,
}

/// A row, whatever its settings type: what the daemon runs.
pub trait Wiring: Implemented {
    /// Reads its settings from the configuration and builds the controller
    /// (`None`: its settings say not to run it).
    ///
    /// # Errors
    ///
    /// What the constructor or reading its settings failed with.
    fn start(&self, cx: &Context<'_>) -> Result<Option<Launched>, StartError>;
}

impl<F: ControllerFlags> Implemented for Row<F> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn flags_type(&self) -> std::any::TypeId {
        std::any::TypeId::of::<F>()
    }

    fn augment(&self, cmd: clap::Command) -> clap::Command {
        settings::augment::<F>(cmd)
    }

    fn help_without_period(&self) -> &'static [&'static str] {
        F::HELP_WITHOUT_PERIOD
    }

    fn check(&self, matches: &clap::ArgMatches) -> ConfigResult<bool> {
        F::read(matches).map(|settings| F::enabled(&settings))
    }
}

impl<F: ControllerFlags> Wiring for Row<F> {
    fn start(&self, cx: &Context<'_>) -> Result<Option<Launched>, StartError> {
        let settings = F::read(&cx.config.controller_flags)?;
        let workers = (self.workers)(&settings);
        Ok((self.start)(&settings, cx)?.map(|controller| Launched { controller, workers }))
    }
}
