//! The API server's legacy token tracking ConfigMap (upstream
//! `pkg/controlplane/controller/legacytokentracking`):
//! `kube-system/kube-apiserver-legacy-service-account-token-tracking`,
//! whose `since` holds the UTC date (`YYYY-MM-DD`) the API server began
//! labelling legacy token Secrets `kubernetes.io/legacy-token-last-used`.
//! Upstream's controller creates it with today's date when it is missing
//! and leaves a parsable date alone; kube-sim creates it at start, so a
//! test may set an earlier date (the legacy token cleaner waits until
//! tracking has run for its whole clean-up period).

use serde_json::json;

use crate::api::Api;
use crate::object::now_rfc3339;
use crate::resources::Builtin;

/// The ConfigMap's name (`ConfigMapName`).
pub const CONFIG_MAP_NAME: &str = "kube-apiserver-legacy-service-account-token-tracking";

/// Its data key (`ConfigMapDataKey`).
pub const CONFIG_MAP_DATA_KEY: &str = "since";

/// Creates the ConfigMap, `since` today (UTC), unless it exists.
pub fn seed(api: &Api) {
    let key = Api::type_key(&api.registry.builtin(Builtin::ConfigMap));
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date().strftime("%Y-%m-%d").to_string();
    let object = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": CONFIG_MAP_NAME, "namespace": "kube-system",
            "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now_rfc3339()},
        "data": {CONFIG_MAP_DATA_KEY: today},
    });
    // Already there (a restart of the seeding) is fine: upstream keeps a
    // parsable date.
    let _ = api.store.create(&key, "kube-system", CONFIG_MAP_NAME, object);
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::{Sim, SimConfig};

    #[tokio::test]
    async fn the_tracking_config_map_holds_todays_date() {
        let sim = Sim::start(SimConfig::default()).await.expect("kube-sim starts");
        let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(sim.client().expect("client"), "kube-system");
        let cm = config_maps.get(CONFIG_MAP_NAME).await.expect("the tracking ConfigMap");
        let since = cm.data.unwrap_or_default().remove(CONFIG_MAP_DATA_KEY).expect("since");
        let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
        let yesterday = today.yesterday().expect("a date");
        // Created a moment ago: today, or yesterday across midnight.
        assert!([today, yesterday].iter().any(|d| d.strftime("%Y-%m-%d").to_string() == since), "since {since}");
    }
}
