//! The ServiceAccount plugin's token volume: the projected
//! `kube-api-access-<5 random characters>` volume (a bound token, the
//! cluster's CA bundle from `kube-root-ca.crt`, the pod's namespace) and
//! its read-only mount at `/var/run/secrets/kubernetes.io/serviceaccount`
//! in every init container and container that mounts nothing there yet.

use serde_json::{Map, Value, json};

use crate::object::generate_name;

/// Where the token volume is mounted in every container.
const DEFAULT_API_TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Prefix of the token volume's name (`ServiceAccountVolumeName`).
const SERVICE_ACCOUNT_VOLUME_PREFIX: &str = "kube-api-access-";

/// Lifetime the token projection asks for: an hour and seven seconds
/// (`WarnOnlyBoundTokenExpirationSeconds`), a value the API server
/// recognises to issue longer tokens that only warn when used past an hour.
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;

/// The ConfigMap the root CA publisher puts in every namespace.
const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";

/// Mounts the token volume into `spec` (`mountServiceAccountToken`): an
/// existing `kube-api-access-*` volume is reused, otherwise one with a
/// generated name is added if some container gets the mount.
pub(super) fn mount(spec: &mut Map<String, Value>) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|name| name.starts_with(SERVICE_ACCOUNT_VOLUME_PREFIX))
        .map(str::to_owned);
    let volume_name = existing.clone().unwrap_or_else(|| generate_name(SERVICE_ACCOUNT_VOLUME_PREFIX));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": DEFAULT_API_TOKEN_MOUNT_PATH});
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else { continue };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let mounts = container.entry("volumeMounts").or_insert_with(|| json!([]));
            if mounts.is_null() {
                *mounts = json!([]);
            }
            let Some(mounts) = mounts.as_array_mut() else { continue };
            let taken =
                mounts.iter().any(|m| m.get("mountPath").and_then(Value::as_str) == Some(DEFAULT_API_TOKEN_MOUNT_PATH));
            if !taken {
                mounts.push(mount.clone());
                mounted = true;
            }
        }
    }
    if existing.is_none() && mounted {
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if volumes.is_null() {
            *volumes = json!([]);
        }
        if let Some(volumes) = volumes.as_array_mut() {
            volumes.push(token_volume(&volume_name));
        }
    }
}

/// The volume `TokenVolumeSource` describes, with its default mode set
/// explicitly as upstream sets it.
fn token_volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [
                    {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}},
                ]}},
            ],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn every_container_mounts_one_generated_projected_volume() {
        let mut spec = spec(json!({
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [{"name": "app", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "emptyDir": {}}],
        }));
        mount(&mut spec);
        let volumes = spec["volumes"].as_array().unwrap();
        assert_eq!(volumes.len(), 2);
        let name = volumes[1]["name"].as_str().unwrap();
        assert!(name.starts_with("kube-api-access-") && name.len() == "kube-api-access-".len() + 5, "{name}");
        assert_eq!(volumes[1], token_volume(name));
        let expected =
            json!({"name": name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"});
        assert_eq!(spec["initContainers"][0]["volumeMounts"], json!([expected]));
        assert_eq!(spec["containers"][0]["volumeMounts"][1], expected);
    }

    #[test]
    fn an_existing_mount_at_the_path_or_token_volume_is_kept() {
        let taken = json!({"name": "mine", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"});
        let mut all_taken = spec(json!({"containers": [{"name": "app", "volumeMounts": [taken]}]}));
        let before = all_taken.clone();
        mount(&mut all_taken);
        assert_eq!(all_taken, before, "no container needs the volume, so none is added");

        let mut reused = spec(json!({
            "containers": [{"name": "app"}],
            "volumes": [{"name": "kube-api-access-abcde", "emptyDir": {}}],
        }));
        mount(&mut reused);
        assert_eq!(reused["volumes"].as_array().unwrap().len(), 1);
        assert_eq!(reused["containers"][0]["volumeMounts"][0]["name"], "kube-api-access-abcde");
    }
}
