//! `kcm-example-operator`: runs the Widget controller against the cluster
//! of the current kubeconfig context (or the in-cluster configuration)
//! until Ctrl-C. `kcm-example-operator crd` prints the Widget
//! CustomResourceDefinition (JSON, for `kubectl apply -f -`) instead.

use kcm_example_operator::controller::{CONTROLLER_NAME, WidgetController};
use kcm_example_operator::widget::Widget;
use kcm_runtime::controller::{self, Controller, RunContext};
use kcm_runtime::informer::SharedInformerFactory;
use kcm_runtime::runner::SyncMetrics;
use kcm_runtime::workqueue::QueueMetrics;
use kube::CustomResourceExt;
use tracing_subscriber::EnvFilter;

/// Worker tasks syncing Widgets.
const WORKERS: usize = 2;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("crd") {
        println!("{}", serde_json::to_string_pretty(&Widget::crd())?);
        return Ok(());
    }
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let client = kube::Client::try_default().await?;
    // Not served here: kcm_runtime::server serves a registry on /metrics.
    let registry = prometheus::Registry::new();
    let factory = SharedInformerFactory::new(client.clone());
    let controller = WidgetController::new(&factory, client, Some(&QueueMetrics::register(&registry)?));
    factory.start();
    let stop = controller::stop_on(async { tokio::signal::ctrl_c().await.unwrap_or_default() });
    let metrics = SyncMetrics::register(&registry)?;
    let cx = RunContext { name: CONTROLLER_NAME, factory: factory.clone(), workers: WORKERS, metrics, stop };
    Box::new(controller).run(cx).await;
    factory.shutdown();
    Ok(())
}
