//! A pod template as the caches keep it: its metadata and its spec as the
//! JSON text k8s-openapi writes for them.
//!
//! A decoded pod spec is most of a Deployment's, a ReplicaSet's or a Job's
//! memory: k8s-openapi's `PodSpec` is 1,488 bytes inline even when absent,
//! and its `Container`, `Volume` and `EnvVar` structs hold every optional
//! field inline, about 10 KB for a typical template against 1 to 3 KB of
//! JSON. The controllers read a template's spec only to create an object
//! from it, to hash or compare it, or to write the whole object back, so
//! the cache keeps the text ([`PodSpecJson`]) and decodes it for those.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::atom::Pool;

/// The pool of every [`PodSpecJson`]'s and [`Template`]'s metadata's text.
static TEXTS: LazyLock<Pool<str>> = LazyLock::new(Pool::new);

/// The shared JSON text of a k8s-openapi value (which always serialises:
/// its maps have string keys).
fn shared_text(value: &impl serde::Serialize) -> Arc<str> {
    let text = serde_json::to_string(value).expect("a k8s-openapi value serialises");
    TEXTS.intern(&text)
}

/// A pod spec as the JSON text k8s-openapi writes for it: every field it
/// decoded, so decoding it again gives the same spec. Equal texts share
/// one allocation: a Deployment and its ReplicaSets of the same template,
/// and the Jobs of one CronJob, hold their template's spec once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpecJson(Arc<str>);

impl PodSpecJson {
    /// The JSON of `spec`.
    pub fn new(spec: &PodSpec) -> Self {
        PodSpecJson(shared_text(spec))
    }

    /// The spec, decoded again.
    pub fn decode(&self) -> PodSpec {
        // The text is what `new` wrote for a PodSpec.
        serde_json::from_str(&self.0).expect("the JSON of a PodSpec decodes as one")
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A pod template (`spec.template`) as the cache keeps it: its metadata
/// and its spec, each as the JSON text k8s-openapi writes for it, equal
/// texts shared. A decoded `ObjectMeta` is 360 bytes inline and a B-tree
/// node of 544 bytes per map (labels, annotations), against about 150
/// bytes of text for a typical template's metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Template {
    metadata: Option<Arc<str>>,
    spec: Option<PodSpecJson>,
}

impl Template {
    /// Keeps `template` as the cache does.
    pub fn new(template: &PodTemplateSpec) -> Self {
        Template {
            metadata: template.metadata.as_ref().map(shared_text),
            spec: template.spec.as_ref().map(PodSpecJson::new),
        }
    }

    /// The template as the API has it, decoded.
    pub fn decode(&self) -> PodTemplateSpec {
        PodTemplateSpec { metadata: self.metadata(), spec: self.spec.as_ref().map(PodSpecJson::decode) }
    }

    /// `template.metadata`, decoded.
    pub fn metadata(&self) -> Option<ObjectMeta> {
        // The text is what `new` wrote for an ObjectMeta.
        let text = self.metadata.as_deref()?;
        Some(serde_json::from_str(text).expect("the JSON of an ObjectMeta decodes as one"))
    }

    /// `template.metadata` as JSON, if the template has metadata.
    pub fn metadata_json(&self) -> Option<&str> {
        self.metadata.as_deref()
    }

    /// `template.metadata.labels`, decoded (empty when there are none).
    pub fn labels(&self) -> BTreeMap<String, String> {
        #[derive(serde::Deserialize)]
        struct Labels {
            labels: Option<BTreeMap<String, String>>,
        }
        let text = self.metadata.as_deref().unwrap_or("{}");
        serde_json::from_str::<Labels>(text).ok().and_then(|l| l.labels).unwrap_or_default()
    }

    /// `template.spec` as JSON, if the template has a spec.
    pub fn spec(&self) -> Option<&PodSpecJson> {
        self.spec.as_ref()
    }
}
