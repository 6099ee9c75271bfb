//! The deletion metadata an update may not set or change
//! (`deletionTimestamp`, `deletionGracePeriodSeconds`), half of upstream's
//! `ValidateObjectMetaAccessorUpdate` immutability rules; the other half
//! (name, namespace, uid) is `meta.rs`'s. The registry strategy has already
//! put back what the stored object has, so only a value the stored object
//! lacks, or another grace period, is left to refuse here.

use serde_json::Value;

use super::access::{at, int};
use super::errors::{Errors, IMMUTABLE};

/// `metadata.deletionTimestamp` and `metadata.deletionGracePeriodSeconds`
/// of `new` against `old`.
pub(super) fn deletion_immutable(errs: &mut Errors, old: &Value, new: &Value) {
    let (old_stamp, new_stamp) = (at(old, "deletionTimestamp"), at(new, "deletionTimestamp"));
    if old_stamp != new_stamp {
        let shown = new_stamp.as_str().map_or_else(|| "\"null\"".to_owned(), go_time);
        errs.invalid("metadata.deletionTimestamp", shown, IMMUTABLE);
    }
    let (old_grace, new_grace) = (int(old, "deletionGracePeriodSeconds"), int(new, "deletionGracePeriodSeconds"));
    if old_grace != new_grace {
        let shown = new_grace.map_or_else(|| "\"null\"".to_owned(), |g| g.to_string());
        errs.invalid("metadata.deletionGracePeriodSeconds", shown, IMMUTABLE);
    }
}

/// Go's `time.Time.String()` of an RFC 3339 timestamp, as a `metav1.Time`
/// prints in a message (`2026-01-02 03:04:05 +0000 UTC`).
fn go_time(rfc3339: &str) -> String {
    match rfc3339.parse::<jiff::Timestamp>() {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(old: Value, new: Value) -> Vec<String> {
        let mut errs = Errors::default();
        deletion_immutable(&mut errs, &old, &new);
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn setting_deletion_metadata_on_update_is_refused_as_immutable() {
        let set = json!({"deletionTimestamp": "2026-01-02T03:04:05Z", "deletionGracePeriodSeconds": 30});
        assert_eq!(
            causes(json!({}), set.clone()),
            [
                "metadata.deletionTimestamp: Invalid value: 2026-01-02 03:04:05 +0000 UTC: field is immutable",
                "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
            ]
        );
        assert!(causes(set.clone(), set).is_empty());
    }
}
