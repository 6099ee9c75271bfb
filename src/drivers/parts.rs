//! What a driver is named and built from: its upstream names
//! ([`Identity`]), and the shared pieces the controller table hands its
//! constructor ([`Parts`]).

use kube::Client;

use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::SharedInformerFactory;
use kcm_runtime::workqueue::QueueMetrics;

/// How upstream names a controller that records events, wherever the name
/// shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The name `--controllers` takes; the `controller` field of its logs
    /// and the label of its metrics.
    pub name: &'static str,
    /// The user agent of its own client, with its own QPS and burst
    /// budget (upstream's `ClientOrDie(<client>)`).
    pub client: &'static str,
    /// The `source.component` of its Events.
    pub events: &'static str,
}

/// What a controller's constructor is built from: the process's shared
/// informers (its handlers are registered on them before they start), its
/// own client, the recorder of its events (component
/// [`Identity::events`]), and the `workqueue_*` metrics its queues report
/// to (none in tests that do not read them).
pub struct Parts<'a> {
    /// The shared informers.
    pub factory: &'a SharedInformerFactory,
    /// The controller's own client.
    pub client: Client,
    /// Records its events.
    pub recorder: EventRecorder,
    /// Its queues' metrics.
    pub queue_metrics: Option<&'a QueueMetrics>,
}
