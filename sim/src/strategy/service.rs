//! The Service strategy's update step (upstream
//! `pkg/registry/core/service/strategy.go`, `dropTypeDependentFields`): a
//! service changed to ExternalName loses the cluster IPs, IP families,
//! family policy and internal traffic policy it had (what allocation and
//! defaulting gave it), unless the write itself changed them. Losing its
//! cluster IPs is what releases them (see `crate::clusterip`).

use serde_json::{Map, Value};

/// The fields of an ExternalName service's spec that only other types use.
const IP_FIELDS: [&[&str]; 4] =
    [&["clusterIP", "clusterIPs"], &["ipFamilies"], &["ipFamilyPolicy"], &["internalTrafficPolicy"]];

/// `dropTypeDependentFields` for these fields.
#[doc(alias = "dropTypeDependentFields")]
pub(super) fn drop_type_dependent_fields(next: &mut Value, current: &Value) {
    let is_external_name = |svc: &Value| svc.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
    if is_external_name(current) || !is_external_name(next) {
        return;
    }
    let empty = Map::new();
    let old = current.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for fields in IP_FIELDS {
        if fields.iter().all(|f| old.get(*f) == spec.get(*f)) {
            for field in fields {
                spec.remove(*field);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_change_to_external_name_drops_what_the_write_left_as_it_was() {
        let current = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.5"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"}});
        let mut next = current.clone();
        next["spec"]["type"] = json!("ExternalName");
        next["spec"]["externalName"] = json!("db.example.com");
        drop_type_dependent_fields(&mut next, &current);
        assert_eq!(next, json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}));

        // A family the write changed stays, for validation to refuse.
        let mut changed = current.clone();
        changed["spec"]["type"] = json!("ExternalName");
        changed["spec"]["ipFamilies"] = json!(["IPv6"]);
        drop_type_dependent_fields(&mut changed, &current);
        assert_eq!(changed["spec"]["ipFamilies"], json!(["IPv6"]));
        assert_eq!(changed["spec"].get("clusterIPs"), None);

        let mut unchanged = current.clone();
        drop_type_dependent_fields(&mut unchanged, &current);
        assert_eq!(unchanged, current);
    }
}
