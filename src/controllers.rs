//! The controller table: one [`Row`] per controller kcm-rs runs, carrying
//! its upstream name, its settings type, its worker count (read from its
//! settings) and its constructor. Leading is a loop over [`table`];
//! `--controllers` is resolved against [`implemented`], and the command
//! line gets each row's flags ([`flags`]). Adding a controller is a core in
//! `kcm-controllers`, a driver in `drivers`, its settings in
//! `config/settings/`, and one row in its area's module here.
//!
//! A constructor builds the controller on the shared informers (its
//! handlers, queues and metrics registered) from its settings and what
//! [`Context`] hands it: the configuration, the shared controllers' client,
//! or a client of its own named as upstream names it. Rows are in start
//! order: the token controller comes first, as upstream starts it, and the
//! garbage collector last, so that it shares the informers the others
//! asked for.
//!
//! # Layout
//! - `row`: [`Row`], [`Context`] and what a constructor answers;
//! - the rows by area: `accounts` (service accounts, tokens, certificates),
//!   `workloads`, `nodes`, `network` (Services), `storage`; the namespace
//!   controller and the garbage collector are here.

mod accounts;
mod network;
mod nodes;
mod row;
mod storage;
mod workloads;

use kcm_runtime::client;
use kcm_runtime::events::EventRecorder;

use crate::config::Implemented;
use crate::config::settings::garbagecollector::GarbageCollectorFlags;
use crate::config::settings::namespace::NamespaceFlags;
use crate::drivers::garbagecollector::{self, GarbageCollector, GcMetrics};
use crate::drivers::namespace::{self, NamespaceController};

pub use row::{Context, Launched, Row, StartError, Started, Wiring};

/// Every area's rows, in start order.
const AREAS: &[&[&dyn Wiring]] =
    &[accounts::FIRST, workloads::ROWS, nodes::ROWS, accounts::ROWS, network::ROWS, storage::ROWS, CLEANUP];

/// Namespace deletion, then the garbage collector, last.
const CLEANUP: &[&dyn Wiring] = &[
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

/// Every controller kcm-rs runs, in start order.
pub fn table() -> impl Iterator<Item = &'static dyn Wiring> {
    AREAS.iter().flat_map(|area| area.iter().copied())
}

/// The canonical names of the controllers kcm-rs implements, for
/// `--controllers`.
pub fn implemented() -> Vec<&'static str> {
    table().map(|row| row.name()).collect()
}

/// The controllers kcm-rs implements as configuration sees them (names
/// and flags), for [`Flags`](crate::config::Flags) and its
/// [`Config`](crate::config::Config).
pub fn flags() -> Vec<&'static dyn Implemented> {
    table().map(|row| row as &dyn Implemented).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::cronjob::CronJobFlags;
    use crate::config::{
        Config, ControllerFlags, Error, Flags, Result, UNIMPLEMENTED_UPSTREAM_FLAGS, canonical_controller_name,
    };
    use crate::drivers::{bootstrapsigner, tokencleaner};

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
        assert_eq!(c.controllers.iter().count(), table().count() - off_by_default.len());
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
    fn the_token_controller_starts_first_as_upstream_starts_it() {
        let first = table().next().map(|row| row.name());
        assert_eq!(first, Some(crate::drivers::serviceaccounttoken::CONTROLLER_NAME));
    }

    #[test]
    fn the_garbage_collector_starts_last_to_share_the_others_informers() {
        assert_eq!(table().last().map(|row| row.name()), Some(garbagecollector::IDENTITY.name));
    }
}
