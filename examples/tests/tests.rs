//! The Widget operator against kube-sim: the Widget type served (with
//! `/status`), the controller running on kcm-runtime, Widgets created and
//! edited through the API; each test waits (on the simulator's change
//! feed, with a deadline) until the status says what the core decides.

use std::time::Duration;

use kcm_example_operator::controller::{CONTROLLER_NAME, WidgetController};
use kcm_example_operator::core::{MAX_REPLICAS, READY};
use kcm_example_operator::widget::{Widget, WidgetSpec, WidgetStatus};
use kcm_runtime::controller::{self, Controller, RunContext};
use kcm_runtime::informer::SharedInformerFactory;
use kcm_runtime::runner::SyncMetrics;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use kube_sim::controls::CustomResource;
use kube_sim::resources::Subresource;
use kube_sim::testing::{Patience, wait_for};
use kube_sim::{Sim, SimConfig};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Longest a condition that should hold within milliseconds is waited for.
const DEADLINE: Duration = Duration::from_secs(20);

/// How long a condition is waited for, and how often it is asked again
/// when kube-sim stores no change.
const PATIENCE: Patience = Patience { deadline: DEADLINE, recheck: Duration::from_millis(200) };

/// kube-sim serving the Widget type, and the operator running against it.
struct Env {
    sim: Sim,
    widgets: Api<Widget>,
    stop: Option<oneshot::Sender<()>>,
    operator: JoinHandle<()>,
}

impl Env {
    async fn start() -> Env {
        let sim = Sim::start(SimConfig::default()).await.expect("kube-sim starts");
        // What installing `Widget::crd()` does in a cluster. The names come
        // from the Rust type so that they cannot drift apart. kube-sim's
        // `CustomResource` control serves no subresource, so add `/status`
        // to the type it describes before registering it.
        let crd = CustomResource {
            group: Widget::group(&()).into_owned(),
            version: Widget::version(&()).into_owned(),
            plural: Widget::plural(&()).into_owned(),
            kind: Widget::kind(&()).into_owned(),
            namespaced: true,
            short_names: vec!["wg".into()],
            verbs: None,
        };
        let mut served = crd.resource_type().expect("a valid type");
        served.subresources.push(Subresource::Status);
        sim.controls().api().register(served);

        let client = sim.client().expect("client");
        let factory = SharedInformerFactory::new(client.clone());
        let controller = WidgetController::new(&factory, client.clone(), None);
        factory.start();
        let (stop_operator, stopped) = oneshot::channel::<()>();
        let metrics = SyncMetrics::register(&prometheus::Registry::new()).expect("metrics");
        let stop = controller::stop_on(async {
            let _ = stopped.await;
        });
        let cx = RunContext { name: CONTROLLER_NAME, factory: factory.clone(), workers: 2, metrics, stop };
        let operator = tokio::spawn(async move {
            Box::new(controller).run(cx).await;
            factory.shutdown();
        });
        Env { sim, widgets: Api::namespaced(client, "default"), stop: Some(stop_operator), operator }
    }

    /// Stops the operator and waits until its workers are done.
    async fn stop(mut self) -> Sim {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(DEADLINE, &mut self.operator).await.expect("the operator stops").expect("no panic");
        self.sim
    }

    async fn create(&self, name: &str, replicas: i32) -> Widget {
        let widget = Widget::new(name, WidgetSpec { replicas });
        self.widgets.create(&PostParams::default(), &widget).await.expect("created")
    }

    async fn set_replicas(&self, name: &str, replicas: i32) -> Widget {
        let patch = Patch::Merge(json!({"spec": {"replicas": replicas}}));
        self.widgets.patch(name, &PatchParams::default(), &patch).await.expect("patched")
    }

    /// Waits until `name`'s status reports `generation` with `replicas`
    /// granted and `Ready` at `ready` for `reason`; returns that status.
    async fn status_says(&self, name: &str, generation: i64, replicas: i32, ready: &str, reason: &str) -> WidgetStatus {
        let what = format!("{name}: generation {generation} observed, {replicas} granted, Ready={ready} ({reason})");
        wait_for(&self.sim, PATIENCE, &what, || async {
            let widget = self.widgets.get(name).await.map_err(|e| e.to_string())?;
            let status = widget.status.clone().unwrap_or_default();
            let condition = status.conditions.iter().find(|c| c.type_ == READY);
            let holds = status.observed_generation == Some(generation)
                && status.replicas == replicas
                && condition.is_some_and(|c| c.status == ready && c.reason == reason);
            if holds { Ok(status) } else { Err(format!("{:?}", widget.status)) }
        })
        .await
    }
}

/// Successful status writes to Widgets so far.
fn status_writes(sim: &Sim) -> u64 {
    sim.controls()
        .stats()
        .iter()
        .filter(|s| s.verb == "patch" && s.resource == "widgets/status" && s.code == 200)
        .map(|s| s.count)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_follows_the_spec() {
    let env = Env::start().await;
    let created = env.create("w1", 3).await;
    assert_eq!(created.metadata.generation, Some(1));
    let granted = env.status_says("w1", 1, 3, "True", "Granted").await;

    // A spec change bumps the generation; the status follows it, and the
    // Ready condition turns False with a new transition time.
    let edited = env.set_replicas("w1", MAX_REPLICAS + 2).await;
    assert_eq!(edited.metadata.generation, Some(2));
    assert_eq!(edited.status.as_ref(), Some(&granted), "a spec write leaves the status alone");
    let capped = env.status_says("w1", 2, MAX_REPLICAS, "False", "TooManyReplicas").await;
    let since = |s: &WidgetStatus| s.conditions[0].last_transition_time.clone();
    assert!(since(&capped) >= since(&granted), "{capped:?} after {granted:?}");
    assert_eq!(capped.conditions[0].message, format!("{} replicas asked, {MAX_REPLICAS} granted", MAX_REPLICAS + 2));

    // Back within bounds.
    env.set_replicas("w1", 4).await;
    env.status_says("w1", 3, 4, "True", "Granted").await;

    // One status write per generation: the update events of the
    // operator's own writes found the status up to date.
    let sim = env.stop().await;
    assert_eq!(status_writes(&sim), 3, "{:?}", sim.controls().stats());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widgets_present_before_the_operator_starts_and_invalid_specs_are_reported() {
    let env = Env::start().await;
    // Created before or during the initial list, depending on timing:
    // either way the handler queues it.
    let widgets = ["a", "b", "c"];
    for (i, name) in widgets.iter().enumerate() {
        env.create(name, i32::try_from(i).unwrap()).await;
    }
    env.create("negative", -1).await;
    for (i, name) in widgets.iter().enumerate() {
        env.status_says(name, 1, i32::try_from(i).unwrap(), "True", "Granted").await;
    }
    let invalid = env.status_says("negative", 1, 0, "False", "InvalidReplicas").await;
    assert_eq!(invalid.conditions[0].message, "spec.replicas is -1; it must not be negative");
    // Deleting is a no-op for the operator (nothing to clean up): it keeps
    // running and still serves the others.
    env.widgets.delete("negative", &Default::default()).await.expect("deleted");
    env.set_replicas("a", 7).await;
    env.status_says("a", 2, 7, "True", "Granted").await;
    let names: Vec<String> =
        env.widgets.list(&Default::default()).await.expect("listed").iter().map(|w| w.name_any()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    env.stop().await;
}
