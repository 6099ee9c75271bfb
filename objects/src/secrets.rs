//! The Secrets a pod references, as upstream's `podutil.VisitPodSecretNames`
//! visits them: `imagePullSecrets`, every container's (init and ephemeral
//! too) `env[].valueFrom.secretKeyRef` and `envFrom[].secretRef`, and the
//! secret of each volume source that names one (`secret`, `azureFile`,
//! `cephfs`, `cinder`, `flexVolume`, `iscsi`, `rbd`, `scaleIO`,
//! `storageos`, `csi` and `projected` sources). Decoded from the wire and
//! kept as one list of names per pod (the legacy service account token
//! cleaner leaves a Secret a pod references alone).

use k8s_openapi::api::core::v1::PersistentVolumeClaimTemplate;
use serde::Deserialize;

use crate::atom::Atom;
use crate::meta::nullable;

/// A `{name}` reference (`LocalObjectReference`, `SecretReference`,
/// `SecretKeySelector`, `SecretEnvSource`, `SecretProjection`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NameRef {
    name: Option<Atom>,
}

/// An `env[]` entry, as far as it can name a Secret.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct EnvVar {
    value_from: Option<EnvVarSource>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct EnvVarSource {
    secret_key_ref: Option<NameRef>,
}

/// An `envFrom[]` entry, as far as it can name a Secret.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct EnvFrom {
    secret_ref: Option<NameRef>,
}

/// A volume's sources that can name a Secret, and its name and claim (the
/// StatefulSet controller matches a pod's storage by them).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct VolumeSecrets {
    name: Box<str>,
    persistent_volume_claim: Option<ClaimSource>,
    ephemeral: Option<EphemeralSource>,
    secret: Option<SecretName>,
    azure_file: Option<SecretName>,
    cephfs: Option<SecretRef>,
    cinder: Option<SecretRef>,
    flex_volume: Option<SecretRef>,
    iscsi: Option<SecretRef>,
    rbd: Option<SecretRef>,
    #[serde(rename = "scaleIO")]
    scale_io: Option<SecretRef>,
    storageos: Option<SecretRef>,
    csi: Option<NodePublishSecretRef>,
    projected: Option<Projected>,
}

/// `ephemeral` of a volume: its claim template, kept whole (the ephemeral
/// volume controller creates the claim from it).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct EphemeralSource {
    volume_claim_template: Option<PersistentVolumeClaimTemplate>,
}

/// `persistentVolumeClaim` of a volume.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ClaimSource {
    claim_name: Box<str>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SecretName {
    secret_name: Option<Atom>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SecretRef {
    secret_ref: Option<NameRef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct NodePublishSecretRef {
    node_publish_secret_ref: Option<NameRef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Projected {
    #[serde(deserialize_with = "nullable")]
    sources: Vec<ProjectedSource>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ProjectedSource {
    secret: Option<NameRef>,
}

/// The names the pod's references carry, in visiting order, empty names
/// skipped, duplicates kept once; `containers` gives each container's
/// `env` and `envFrom`.
pub(crate) fn secret_names<'a>(
    image_pull_secrets: &'a [NameRef],
    containers: impl Iterator<Item = (&'a [EnvVar], &'a [EnvFrom])>,
    volumes: &'a [VolumeSecrets],
) -> Box<[Atom]> {
    let pulls = image_pull_secrets.iter().map(|r| &r.name);
    let env = containers.flat_map(|(env, env_from)| {
        let vars = env.iter().filter_map(|v| v.value_from.as_ref()?.secret_key_ref.as_ref()).map(|r| &r.name);
        vars.chain(env_from.iter().filter_map(|e| e.secret_ref.as_ref()).map(|r| &r.name))
    });
    let mut names: Vec<Atom> = Vec::new();
    for name in pulls.chain(env).chain(volumes.iter().flat_map(VolumeSecrets::names)).flatten() {
        if !name.is_empty() && !names.contains(name) {
            names.push(name.clone());
        }
    }
    names.into_boxed_slice()
}

impl VolumeSecrets {
    /// The volume's name and the claim it mounts, if it is a
    /// `persistentVolumeClaim` volume.
    pub(crate) fn claim(&self) -> Option<(&str, &str)> {
        let source = self.persistent_volume_claim.as_ref()?;
        Some((&self.name, &source.claim_name))
    }

    /// The volume's name and claim template, if it is a generic ephemeral
    /// volume (an absent template, which validation refuses, as an empty
    /// one).
    pub(crate) fn ephemeral(&self) -> Option<(&str, PersistentVolumeClaimTemplate)> {
        let source = self.ephemeral.as_ref()?;
        Some((&self.name, source.volume_claim_template.clone().unwrap_or_default()))
    }

    fn names(&self) -> impl Iterator<Item = &Option<Atom>> {
        let named = [&self.secret, &self.azure_file].into_iter().flatten().map(|s| &s.secret_name);
        let refs =
            [&self.cephfs, &self.cinder, &self.flex_volume, &self.iscsi, &self.rbd, &self.scale_io, &self.storageos];
        let refs = refs.into_iter().flatten().filter_map(|s| s.secret_ref.as_ref()).map(|r| &r.name);
        let csi = self.csi.iter().filter_map(|c| c.node_publish_secret_ref.as_ref()).map(|r| &r.name);
        let projected =
            self.projected.iter().flat_map(|p| &p.sources).filter_map(|s| s.secret.as_ref()).map(|r| &r.name);
        named.chain(refs).chain(csi).chain(projected)
    }
}
