//! The two questions the storage protection controllers ask of an object
//! and their finalizer (upstream `pkg/controller/util/protectionutil`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Being deleted and still holding `finalizer`: the finalizer is the
/// controller's to remove once the object is unused (upstream
/// `IsDeletionCandidate`).
pub fn is_deletion_candidate(meta: &ObjectMeta, finalizer: &str) -> bool {
    meta.deletion_timestamp.is_some() && has_finalizer(meta, finalizer)
}

/// Not being deleted and lacking `finalizer`: the controller adds it
/// (upstream `NeedToAddFinalizer`).
pub fn need_to_add_finalizer(meta: &ObjectMeta, finalizer: &str) -> bool {
    meta.deletion_timestamp.is_none() && !has_finalizer(meta, finalizer)
}

/// The metadata with `finalizer` appended.
pub fn with_finalizer(meta: &ObjectMeta, finalizer: &str) -> ObjectMeta {
    let mut meta = meta.clone();
    meta.finalizers.get_or_insert_with(Vec::new).push(finalizer.to_owned());
    meta
}

/// The metadata with every `finalizer` entry removed (upstream
/// `slice.RemoveString`: an emptied list is absent).
pub fn without_finalizer(meta: &ObjectMeta, finalizer: &str) -> ObjectMeta {
    let mut meta = meta.clone();
    let left: Vec<String> = meta.finalizers.take().unwrap_or_default().into_iter().filter(|f| f != finalizer).collect();
    meta.finalizers = (!left.is_empty()).then_some(left);
    meta
}

fn has_finalizer(meta: &ObjectMeta, finalizer: &str) -> bool {
    meta.finalizers.iter().flatten().any(|f| f == finalizer)
}

#[cfg(test)]
mod tests {
    //! Upstream's `protectionutil` tests: a PV and a PVC, each with and
    //! without a deletion time and its finalizer.

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    const PV: &str = "kubernetes.io/pv-protection";
    const PVC: &str = "kubernetes.io/pvc-protection";

    fn meta(deleted: bool, finalizer: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some("name".into()),
            deletion_timestamp: deleted.then_some(Time(jiff::Timestamp::UNIX_EPOCH)),
            finalizers: finalizer.map(|f| vec![f.to_owned()]),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn deletion_candidate_only_when_deleted_with_its_finalizer() {
        for finalizer in [PV, PVC] {
            assert!(!is_deletion_candidate(&meta(false, None), finalizer), "lacks delete time and finalizer");
            assert!(!is_deletion_candidate(&meta(false, Some(finalizer)), finalizer), "lacks delete time");
            assert!(!is_deletion_candidate(&meta(true, None), finalizer), "lacks finalizer");
            assert!(is_deletion_candidate(&meta(true, Some(finalizer)), finalizer), "is to delete");
        }
    }

    #[test]
    fn finalizer_added_only_when_live_without_it() {
        for finalizer in [PV, PVC] {
            assert!(!need_to_add_finalizer(&meta(true, Some(finalizer)), finalizer), "delete time and finalizer");
            assert!(!need_to_add_finalizer(&meta(true, None), finalizer), "delete time");
            assert!(!need_to_add_finalizer(&meta(false, Some(finalizer)), finalizer), "finalizer");
            assert!(need_to_add_finalizer(&meta(false, None), finalizer), "needs add finalizer");
        }
    }

    #[test]
    fn finalizer_added_and_removed_keeps_the_others() {
        let mut other = meta(false, Some("other"));
        other = with_finalizer(&other, PVC);
        assert_eq!(other.finalizers, Some(vec!["other".to_owned(), PVC.to_owned()]));
        assert_eq!(without_finalizer(&other, PVC).finalizers, Some(vec!["other".to_owned()]));
        assert_eq!(without_finalizer(&meta(true, Some(PVC)), PVC).finalizers, None);
    }
}
