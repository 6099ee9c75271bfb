//! Fixtures for the history tests: upstream's `newStatefulSet` (its
//! selector as `matchExpressions` only, so that a link ignoring set-based
//! requirements would show) and revisions of its template.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

use super::new_controller_revision;
use crate::common::selector::Selector;

/// A StatefulSet `default/<name>` with uid `uid` selecting `labels`.
pub fn stateful_set(name: &str, uid: &str, labels: &[(&str, &str)]) -> StatefulSet {
    let labels: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(uid.into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            selector: LabelSelector {
                match_expressions: Some(
                    labels
                        .iter()
                        .map(|(k, v)| LabelSelectorRequirement {
                            key: k.clone(),
                            operator: "In".into(),
                            values: Some(vec![v.clone()]),
                        })
                        .collect(),
                ),
                match_labels: None,
            },
            replicas: Some(3),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some("nginx".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            service_name: Some("governingsvc".into()),
            ..Default::default()
        },
        status: None,
    }
}

/// The selector of `set`.
pub fn selector(set: &StatefulSet) -> Selector {
    Selector::new(Some(&set.spec.selector)).unwrap()
}

/// The template of `set` as data (upstream `rawTemplate`).
pub fn raw_template(template: &PodTemplateSpec) -> RawExtension {
    RawExtension(serde_json::to_value(template).unwrap())
}

/// Revision `number` of `set`'s template, named with `collision_count`.
pub fn revision(set: &StatefulSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let template = &set.spec.template;
    let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    new_controller_revision(
        &set.metadata,
        "apps/v1",
        "StatefulSet",
        labels,
        raw_template(template),
        number,
        collision_count,
    )
}
