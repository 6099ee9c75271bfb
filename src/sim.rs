//! `--sim`: the daemon against an embedded kube-sim, so that one command
//! shows the product on a machine with no cluster.
//!
//! Starts kube-sim in-process on a loopback port, writes its kubeconfig to a
//! path it prints (so `kubectl` can look at the same cluster), applies the
//! manifests of `deploy/examples/` when the directory is there, and prints a
//! one-line summary of the workloads and the controllers' queue depths
//! whenever it changes. The controllers of [`UNSERVED_CONTROLLERS`] do not
//! run under it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use kube::discovery::Discovery;
use kube_sim::{Sim, SimConfig};
use serde::Deserialize;

/// The controllers `--sim` does not run: kube-sim does not serve the API
/// they work on (networking.k8s.io ServiceCIDRs and IPAddresses), so their
/// caches would never sync.
pub const UNSERVED_CONTROLLERS: &[&str] = &[crate::drivers::servicecidrs::IDENTITY.name];

/// For kcm-rs run against kube-sim through a kubeconfig (the tests, the
/// benchmarks): the `--controllers` flag choosing every default controller
/// but those of [`UNSERVED_CONTROLLERS`], whose caches would never sync, as
/// `--sim` runs them; `None` when `args` choose the controllers themselves.
pub fn served_controllers_flag(args: &[&str]) -> Option<String> {
    let off: Vec<String> = UNSERVED_CONTROLLERS.iter().map(|c| format!("-{c}")).collect();
    (!args.iter().any(|a| a.starts_with("--controllers"))).then(|| format!("--controllers=*,{}", off.join(",")))
}

/// Where the example workloads are, relative to the working directory.
pub const EXAMPLES: &str = "deploy/examples";

/// Why the embedded simulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// kube-sim itself failed.
    #[error("cannot start the embedded kube-sim")]
    Start(#[from] kube_sim::Error),
    /// A manifest could not be read or parsed.
    #[error("cannot read the example manifest {path}: {message}")]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A manifest could not be applied.
    #[error("cannot apply the example manifests")]
    Apply(#[source] kube::Error),
}

/// Starts the simulator with `nodes` nodes, writes its kubeconfig, applies
/// the examples and starts the status line. The simulator stops when the
/// returned value is dropped.
pub async fn start(nodes: usize, registry: prometheus::Registry) -> Result<Sim, Error> {
    let sim = Sim::start(SimConfig { nodes, ..SimConfig::default() }).await?;
    let kubeconfig = std::env::temp_dir().join(format!("kcm-rs-sim-{}.kubeconfig", std::process::id()));
    sim.write_kubeconfig(&kubeconfig)?;
    println!("kube-sim serving at {} with {nodes} nodes", sim.url());
    println!("  export KUBECONFIG={}", kubeconfig.display());
    let client = sim.client()?;
    let examples = Path::new(EXAMPLES);
    if examples.is_dir() {
        let applied = apply_dir(&client, examples).await?;
        println!("  applied {applied} objects from {EXAMPLES}/");
    }
    tokio::spawn(status_line(client, registry));
    Ok(sim)
}

/// Creates every object of the YAML files in `dir` (in file name order);
/// objects that exist already are left as they are.
pub async fn apply_dir(client: &kube::Client, dir: &Path) -> Result<usize, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Manifest { path: dir.to_owned(), message: e.to_string() })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let discovery = Discovery::new(client.clone()).run().await.map_err(Error::Apply)?;
    let mut applied = 0;
    for path in files {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Manifest { path: path.clone(), message: e.to_string() })?;
        for document in serde_yaml::Deserializer::from_str(&text) {
            let value = serde_json::Value::deserialize(document)
                .map_err(|e| Error::Manifest { path: path.clone(), message: e.to_string() })?;
            if value.is_null() {
                continue;
            }
            let object: DynamicObject = serde_json::from_value(value)
                .map_err(|e| Error::Manifest { path: path.clone(), message: e.to_string() })?;
            let gvk = object
                .types
                .as_ref()
                .and_then(|t| kube::api::GroupVersionKind::try_from(t).ok())
                .ok_or_else(|| Error::Manifest { path: path.clone(), message: "an object without kind".into() })?;
            let (resource, capabilities) = discovery.resolve_gvk(&gvk).ok_or_else(|| Error::Manifest {
                path: path.clone(),
                message: format!("the cluster does not serve {gvk:?}"),
            })?;
            let api: Api<DynamicObject> = match (&object.metadata.namespace, capabilities.scope) {
                (Some(ns), kube::discovery::Scope::Namespaced) => Api::namespaced_with(client.clone(), ns, &resource),
                (None, kube::discovery::Scope::Namespaced) => Api::default_namespaced_with(client.clone(), &resource),
                (_, kube::discovery::Scope::Cluster) => Api::all_with(client.clone(), &resource),
            };
            match api.create(&PostParams::default(), &object).await {
                Ok(_) => applied += 1,
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(e) => return Err(Error::Apply(e)),
            }
        }
    }
    Ok(applied)
}

/// Prints the workloads' state and the controllers' queue depths whenever
/// they change.
async fn status_line(client: kube::Client, registry: prometheus::Registry) {
    let deployments: Api<Deployment> = Api::all(client.clone());
    let pods: Api<Pod> = Api::all(client);
    let mut last = String::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let (Ok(ds), Ok(ps)) =
            (deployments.list(&ListParams::default()).await, pods.list(&ListParams::default()).await)
        else {
            continue;
        };
        let workloads: Vec<String> = ds
            .items
            .iter()
            .map(|d| {
                let status = d.status.clone().unwrap_or_default();
                let want = d.spec.replicas.unwrap_or(1);
                format!(
                    "{}/{} {}/{want}",
                    d.metadata.namespace.as_deref().unwrap_or(""),
                    d.metadata.name.as_deref().unwrap_or(""),
                    status.available_replicas.unwrap_or(0)
                )
            })
            .collect();
        let ready = ps.items.iter().filter(|p| pod_ready(p)).count();
        let line = format!(
            "deployments available: [{}] · pods ready {ready}/{} · queue depths: [{}]",
            workloads.join(", "),
            ps.items.len(),
            queue_depths(&registry).join(", ")
        );
        if line != last {
            println!("{line}");
            last = line;
        }
    }
}

/// `name=depth` for every workqueue, from the `workqueue_depth` gauges.
fn queue_depths(registry: &prometheus::Registry) -> Vec<String> {
    registry
        .gather()
        .iter()
        .filter(|family| family.name() == "workqueue_depth")
        .flat_map(|family| family.get_metric().iter())
        .map(|metric| {
            let name = metric.get_label().iter().find(|l| l.name() == "name").map_or("", |l| l.value());
            format!("{name}={}", metric.get_gauge().get_value())
        })
        .collect()
}

fn pod_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}
