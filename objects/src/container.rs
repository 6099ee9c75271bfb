//! A container as the slim pod decodes it: its name and restart policy,
//! its named ports, and the `env`/`envFrom` entries that can name a Secret.
//! Everything else of a container is skipped unread.

use serde::Deserialize;

use crate::atom::Atom;
use crate::meta::nullable;
use crate::secrets::{EnvFrom, EnvVar};

/// One entry of `spec.containers`, `spec.initContainers` or
/// `spec.ephemeralContainers`, as decoded.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WireContainer {
    pub(crate) name: Atom,
    pub(crate) restart_policy: Option<Atom>,
    #[serde(deserialize_with = "nullable")]
    pub(crate) ports: Vec<WirePort>,
    #[serde(deserialize_with = "nullable")]
    pub(crate) env: Vec<EnvVar>,
    #[serde(deserialize_with = "nullable")]
    pub(crate) env_from: Vec<EnvFrom>,
}

/// A `ports[]` entry as decoded.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WirePort {
    name: Option<Atom>,
    container_port: i32,
    protocol: Option<Atom>,
}

/// A named container port: what a Service's named `targetPort` resolves
/// against (upstream `FindPort`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedPort {
    /// `name`.
    pub name: Atom,
    /// `containerPort`.
    pub container_port: i32,
    /// `protocol`; the API server defaults it to `TCP`.
    pub protocol: Atom,
}

impl WireContainer {
    /// Whether this init container is a sidecar (`restartPolicy: Always`).
    pub(crate) fn restartable(&self) -> bool {
        self.restart_policy.as_deref() == Some("Always")
    }
}

/// The named ports a Service can target, in the order upstream's
/// `FindPort` searches them: the containers', then the sidecars'.
pub(crate) fn named_ports(containers: &[WireContainer], init_containers: &[WireContainer]) -> Vec<NamedPort> {
    let sidecars = init_containers.iter().filter(|c| c.restartable());
    containers
        .iter()
        .chain(sidecars)
        .flat_map(|c| &c.ports)
        .filter_map(|p| {
            let name = p.name.as_ref().filter(|n| !n.is_empty())?;
            let protocol = p.protocol.clone().unwrap_or_else(|| Atom::from("TCP"));
            Some(NamedPort { name: name.clone(), container_port: p.container_port, protocol })
        })
        .collect()
}
