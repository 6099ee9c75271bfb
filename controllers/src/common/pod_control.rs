//! Pods a controller creates, and the events its pod writes record
//! (upstream `controller_utils.go` `GetPodFromTemplate` and `RealPodControl`).
//!
//! The event helpers are for the executor: only it knows the name the API
//! server generated, or the error a write returned.

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::plan::{Event, EventType, ObjectRef};

/// Event reason: a pod was created.
pub const SUCCESSFUL_CREATE: &str = "SuccessfulCreate";
/// Event reason: a pod create failed.
pub const FAILED_CREATE: &str = "FailedCreate";
/// Event reason: a pod was deleted.
pub const SUCCESSFUL_DELETE: &str = "SuccessfulDelete";
/// Event reason: a pod delete failed.
pub const FAILED_DELETE: &str = "FailedDelete";

/// The longest object name the API accepts (a DNS subdomain).
const MAX_NAME_LEN: usize = 253;

/// The pod a controller named `owner_name` creates from `template`: the
/// template's labels, annotations, finalizers and spec, `generateName`
/// `<owner_name>-` (or `<owner_name>` when the dash would make the prefix
/// too long), and `controller_ref` as its only ownerReference.
pub fn pod_from_template(template: &PodTemplateSpec, owner_name: &str, controller_ref: OwnerReference) -> Pod {
    let meta = template.metadata.as_ref();
    let generate_name = if owner_name.len() < MAX_NAME_LEN { format!("{owner_name}-") } else { owner_name.to_owned() };
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(generate_name),
            labels: meta.and_then(|m| m.labels.clone()),
            annotations: meta.and_then(|m| m.annotations.clone()),
            finalizers: meta.and_then(|m| m.finalizers.clone()),
            owner_references: Some(vec![controller_ref]),
            ..Default::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

/// Normal `SuccessfulCreate` `"Created pod: <name>"`.
pub fn successful_create(owner: &ObjectRef, pod_name: &str) -> Event {
    event(owner, EventType::Normal, SUCCESSFUL_CREATE, format!("Created pod: {pod_name}"))
}

/// Warning `FailedCreate` `"Error creating: <error>"`. Not recorded when the
/// namespace is terminating.
pub fn failed_create(owner: &ObjectRef, error: &str) -> Event {
    event(owner, EventType::Warning, FAILED_CREATE, format!("Error creating: {error}"))
}

/// Normal `SuccessfulDelete` `"Deleted pod: <name>"`.
pub fn successful_delete(owner: &ObjectRef, pod_name: &str) -> Event {
    event(owner, EventType::Normal, SUCCESSFUL_DELETE, format!("Deleted pod: {pod_name}"))
}

/// Warning `FailedDelete` `"Error deleting: <error>"`. Not recorded for NotFound.
pub fn failed_delete(owner: &ObjectRef, error: &str) -> Event {
    event(owner, EventType::Warning, FAILED_DELETE, format!("Error deleting: {error}"))
}

fn event(owner: &ObjectRef, type_: EventType, reason: &str, message: String) -> Event {
    Event { regarding: owner.clone(), type_, reason: reason.to_owned(), message }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Container, PodSpec};

    use super::*;

    fn owner() -> ObjectRef {
        ObjectRef {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            namespace: Some("ns".into()),
            name: "web".into(),
            uid: "u".into(),
        }
    }

    #[test]
    fn pod_copies_template_metadata_and_spec() {
        let template = PodTemplateSpec {
            metadata: Some(ObjectMeta {
                name: Some("ignored".into()),
                labels: Some(BTreeMap::from([("app".into(), "web".into())])),
                annotations: Some(BTreeMap::from([("a".into(), "1".into())])),
                finalizers: Some(vec!["example.com/f".into()]),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container { name: "c".into(), image: Some("nginx".into()), ..Default::default() }],
                ..Default::default()
            }),
        };
        let cref = OwnerReference { uid: "u".into(), controller: Some(true), ..Default::default() };
        let pod = pod_from_template(&template, "web", cref.clone());
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("web-"));
        assert_eq!(pod.metadata.name, None);
        assert_eq!(pod.metadata.labels, template.metadata.as_ref().unwrap().labels);
        assert_eq!(pod.metadata.annotations, template.metadata.as_ref().unwrap().annotations);
        assert_eq!(pod.metadata.finalizers, Some(vec!["example.com/f".to_string()]));
        assert_eq!(pod.metadata.owner_references, Some(vec![cref]));
        assert_eq!(pod.spec, template.spec);
    }

    #[test]
    fn long_owner_names_drop_the_dash() {
        let long = "a".repeat(253);
        let pod = pod_from_template(&PodTemplateSpec::default(), &long, OwnerReference::default());
        assert_eq!(pod.metadata.generate_name.as_deref(), Some(long.as_str()));
    }

    #[test]
    fn event_texts_are_upstreams() {
        let cases = [
            (successful_create(&owner(), "web-abc"), EventType::Normal, "SuccessfulCreate", "Created pod: web-abc"),
            (failed_create(&owner(), "quota"), EventType::Warning, "FailedCreate", "Error creating: quota"),
            (successful_delete(&owner(), "web-abc"), EventType::Normal, "SuccessfulDelete", "Deleted pod: web-abc"),
            (failed_delete(&owner(), "boom"), EventType::Warning, "FailedDelete", "Error deleting: boom"),
        ];
        for (e, t, reason, message) in cases {
            assert_eq!((e.type_, e.reason.as_str(), e.message.as_str()), (t, reason, message));
        }
    }
}
