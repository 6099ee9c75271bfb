//! The Secrets a pod spec refers to, as the ServiceAccount plugin checks
//! them: a mirror pod may refer to none (`podutil.VisitPodSecretNames`
//! over every container), and a pod whose ServiceAccount enforces
//! mountable secrets (`kubernetes.io/enforce-mountable-secrets: "true"`)
//! only to those the ServiceAccount lists (`limitSecretReferences`).

use serde_json::{Map, Value};

/// Annotation of a ServiceAccount whose pods may mount only its secrets.
const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION: &str = "kubernetes.io/enforce-mountable-secrets";

/// `name` of each `{name: ...}` in `value`'s array `list`.
fn names<'a>(value: &'a Value, list: &str) -> impl Iterator<Item = &'a str> {
    value.get(list).and_then(Value::as_array).into_iter().flatten().filter_map(|r| r.get("name")?.as_str())
}

fn items<'a>(value: &'a Value, list: &str) -> impl Iterator<Item = &'a Value> {
    value.get(list).and_then(Value::as_array).into_iter().flatten()
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// Whether the spec refers to any Secret: image pull secrets, the env and
/// envFrom of init, regular and ephemeral containers, and every volume
/// source that names a Secret.
pub(super) fn references_secrets(spec: &Value) -> bool {
    if names(spec, "imagePullSecrets").next().is_some() {
        return true;
    }
    let in_containers = ["initContainers", "containers", "ephemeralContainers"].iter().any(|list| {
        items(spec, list).any(|c| {
            items(c, "envFrom").any(|e| text(e, "/secretRef/name").is_some())
                || items(c, "env").any(|e| text(e, "/valueFrom/secretKeyRef/name").is_some())
        })
    });
    in_containers
        || items(spec, "volumes").any(|v| {
            const REFS: [&str; 10] = [
                "/azureFile/secretName",
                "/cephfs/secretRef/name",
                "/cinder/secretRef/name",
                "/flexVolume/secretRef/name",
                "/rbd/secretRef/name",
                "/secret/secretName",
                "/scaleIO/secretRef/name",
                "/iscsi/secretRef/name",
                "/storageos/secretRef/name",
                "/csi/nodePublishSecretRef/name",
            ];
            REFS.iter().any(|p| text(v, p).is_some())
                || items(v.get("projected").unwrap_or(&Value::Null), "sources")
                    .any(|s| text(s, "/secret/name").is_some())
        })
}

/// Whether some projected volume of the spec asks for a ServiceAccount token.
pub(super) fn projects_tokens(spec: &Value) -> bool {
    items(spec, "volumes").any(|v| {
        items(v.get("projected").unwrap_or(&Value::Null), "sources").any(|s| s.get("serviceAccountToken").is_some())
    })
}

/// Whether the ServiceAccount's annotation enforces its mountable secrets
/// (a Go `strconv.ParseBool` true; anything unparsable is false).
pub(super) fn enforces_mountable_secrets(sa: &Value) -> bool {
    let value = sa.pointer("/metadata/annotations").and_then(|a| a.get(ENFORCE_MOUNTABLE_SECRETS_ANNOTATION));
    matches!(value.and_then(Value::as_str), Some("1" | "t" | "T" | "TRUE" | "true" | "True"))
}

/// `limitSecretReferences`: refuses (with upstream's message) the first
/// Secret the spec refers to that the ServiceAccount does not list.
pub(super) fn limit_secret_references(sa: &Value, spec: &Map<String, Value>) -> Result<(), String> {
    let sa_name = text(sa, "/metadata/name").unwrap_or("");
    let mountable: Vec<&str> = names(sa, "secrets").collect();
    let not_allowed = format!("is not allowed because service account {sa_name} does not reference that secret");
    let spec = Value::Object(spec.clone());
    for volume in items(&spec, "volumes") {
        if let Some(secret) = text(volume, "/secret/secretName").filter(|s| !mountable.contains(s)) {
            return Err(format!("volume with secret.secretName=\"{secret}\" {not_allowed}"));
        }
    }
    for (list, what) in [("initContainers", "init container"), ("containers", "container")] {
        for container in items(&spec, list) {
            let container_name = text(container, "/name").unwrap_or("");
            for env in items(container, "env") {
                if let Some(secret) = text(env, "/valueFrom/secretKeyRef/name").filter(|s| !mountable.contains(s)) {
                    let env_name = text(env, "/name").unwrap_or("");
                    return Err(format!(
                        "{what} {container_name} with envVar {env_name} referencing secret.secretName=\"{secret}\" {not_allowed}"
                    ));
                }
            }
            for env_from in items(container, "envFrom") {
                if let Some(secret) = text(env_from, "/secretRef/name").filter(|s| !mountable.contains(s)) {
                    return Err(format!(
                        "{what} {container_name} with envFrom referencing secret.secretName=\"{secret}\" {not_allowed}"
                    ));
                }
            }
        }
    }
    let pullable: Vec<&str> = names(sa, "imagePullSecrets").collect();
    for (i, secret) in names(&spec, "imagePullSecrets").enumerate() {
        if !pullable.contains(&secret) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{secret}\" is not allowed because service account {sa_name} \
                 does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_place_a_spec_names_a_secret_counts() {
        assert!(!references_secrets(&json!({"containers": [{"name": "c", "env": [{"name": "a", "value": "b"}]}]})));
        for spec in [
            json!({"imagePullSecrets": [{"name": "pull"}]}),
            json!({"ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "s"}}]}]}),
            json!({"initContainers": [{"name": "i", "env": [{"name": "a", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]}),
            json!({"volumes": [{"name": "v", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "s"}}}]}),
            json!({"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s"}}]}}]}),
        ] {
            assert!(references_secrets(&spec), "{spec}");
        }
        assert!(projects_tokens(
            &json!({"volumes": [{"name": "v", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]})
        ));
    }

    #[test]
    fn an_enforcing_service_account_allows_only_its_secrets() {
        let sa = json!({"metadata": {"name": "robot", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
            "secrets": [{"name": "mine"}], "imagePullSecrets": [{"name": "pull"}]});
        assert!(enforces_mountable_secrets(&sa));
        assert!(!enforces_mountable_secrets(
            &json!({"metadata": {"annotations": {"kubernetes.io/enforce-mountable-secrets": "yes"}}})
        ));
        let spec = |v: Value| v.as_object().cloned().unwrap();
        let allowed = spec(
            json!({"volumes": [{"name": "v", "secret": {"secretName": "mine"}}], "imagePullSecrets": [{"name": "pull"}]}),
        );
        assert_eq!(limit_secret_references(&sa, &allowed), Ok(()));
        let env_from = spec(json!({"containers": [{"name": "app", "envFrom": [{"secretRef": {"name": "other"}}]}]}));
        assert_eq!(
            limit_secret_references(&sa, &env_from),
            Err("container app with envFrom referencing secret.secretName=\"other\" is not allowed because service account robot does not reference that secret".into())
        );
        let pull = spec(json!({"imagePullSecrets": [{"name": "pull"}, {"name": "x"}]}));
        assert_eq!(
            limit_secret_references(&sa, &pull),
            Err("imagePullSecrets[1].name=\"x\" is not allowed because service account robot does not reference that imagePullSecret".into())
        );
    }
}
