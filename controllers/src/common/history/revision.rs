//! What a ControllerRevision is: its name (`<parent>-<hash>`), the hash of
//! its data, how a new one is built, when two are the same revision, the
//! order of a history, and which revisions a parent lists as its own.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

use crate::common::controller_ref::{controller_of, new_controller_ref};
use crate::common::hash::{FNV32_OFFSET, fnv32, safe_encode};
use crate::common::selector::Selector;

/// The label holding the hash of a revision's data (upstream
/// `ControllerRevisionHashLabel`).
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// A revision's name keeps at most this many bytes of its parent's name,
/// so that `<prefix>-<hash>` (a hash is at most 10 characters) stays within
/// the 253 bytes of an object name.
pub const MAX_PREFIX_LEN: usize = 223;

/// `<prefix>-<hash>`, the prefix cut to [`MAX_PREFIX_LEN`] bytes (upstream
/// `ControllerRevisionName`).
pub fn controller_revision_name(prefix: &str, hash: &str) -> String {
    let mut end = prefix.len().min(MAX_PREFIX_LEN);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", &prefix[..end])
}

/// The bytes of a revision's `data` as the API carries them: compact JSON
/// with object keys sorted (as Go writes the maps upstream's patches are
/// made of); none when it has no data. Upstream hashes and compares
/// `Data.Raw`, the bytes it sent or received; the two spellings differ only
/// where Go escapes `<`, `>` and `&` in strings (`\u003c`...), which
/// changes the hash of such data, not its equality here.
pub fn raw_data(revision: &ControllerRevision) -> Vec<u8> {
    if revision.data.0.is_null() { Vec::new() } else { revision.data.0.to_string().into_bytes() }
}

/// FNV-1 (32 bits) over the revision's data bytes, then, when `probe` (the
/// collision count) is set, over its decimal digits, spelled by
/// `SafeEncodeString` (upstream `HashControllerRevision`). An unset probe
/// and a probe of 0 therefore hash differently.
pub fn hash_controller_revision(revision: &ControllerRevision, probe: Option<i32>) -> String {
    let mut hash = fnv32(FNV32_OFFSET, &raw_data(revision));
    if let Some(probe) = probe {
        hash = fnv32(hash, probe.to_string().as_bytes());
    }
    safe_encode(hash)
}

/// A new revision `revision` of `parent` (of type `api_version`/`kind`)
/// holding `data` (upstream `NewControllerRevision`): the template labels
/// plus [`CONTROLLER_REVISION_HASH_LABEL`], the parent as its controller
/// (blocking the parent's foreground deletion), the parent's namespace, and
/// the name [`controller_revision_name`] of the parent's name and the hash
/// with `collision_count`.
pub fn new_controller_revision(
    parent: &ObjectMeta,
    api_version: &str,
    kind: &str,
    template_labels: Option<&BTreeMap<String, String>>,
    data: RawExtension,
    revision: i64,
    collision_count: Option<i32>,
) -> ControllerRevision {
    let mut cr = ControllerRevision {
        metadata: ObjectMeta {
            namespace: parent.namespace.clone(),
            labels: Some(template_labels.cloned().unwrap_or_default()),
            owner_references: Some(vec![new_controller_ref(parent, api_version, kind)]),
            ..Default::default()
        },
        data,
        revision: Some(revision),
    };
    let hash = hash_controller_revision(&cr, collision_count);
    cr.metadata.name = Some(controller_revision_name(parent.name.as_deref().unwrap_or_default(), &hash));
    cr.metadata.labels.get_or_insert_default().insert(CONTROLLER_REVISION_HASH_LABEL.to_owned(), hash);
    cr
}

/// Whether two revisions hold the same data (upstream `EqualRevision`):
/// both absent, or both present with equal data. When both carry a hash
/// label that reads as a 32-bit decimal number and the numbers differ, they
/// are different without looking further (upstream's shortcut; a
/// safe-encoded hash rarely reads as a number).
pub fn equal_revision(lhs: Option<&ControllerRevision>, rhs: Option<&ControllerRevision>) -> bool {
    let (Some(lhs), Some(rhs)) = (lhs, rhs) else { return lhs.is_none() && rhs.is_none() };
    let numeric_hash =
        |cr: &ControllerRevision| cr.metadata.labels.as_ref()?.get(CONTROLLER_REVISION_HASH_LABEL)?.parse::<i32>().ok();
    if let (Some(l), Some(r)) = (numeric_hash(lhs), numeric_hash(rhs))
        && l != r
    {
        return false;
    }
    raw_data(lhs) == raw_data(rhs)
}

/// The revisions equal to `needle` by [`equal_revision`], in input order
/// (upstream `FindEqualRevisions`).
pub fn find_equal_revisions<'a>(
    revisions: impl IntoIterator<Item = &'a ControllerRevision>,
    needle: &ControllerRevision,
) -> Vec<&'a ControllerRevision> {
    revisions.into_iter().filter(|r| equal_revision(Some(r), Some(needle))).collect()
}

/// Sorts oldest first: by `revision`, then creation time (unset first), then
/// name; stable (upstream `SortControllerRevisions`).
pub fn sort_controller_revisions<R: Borrow<ControllerRevision>>(revisions: &mut [R]) {
    revisions.sort_by(|a, b| {
        let (a, b) = (a.borrow(), b.borrow());
        let created = |cr: &ControllerRevision| cr.metadata.creation_timestamp.as_ref().map(|t| t.0);
        number(a)
            .cmp(&number(b))
            .then_with(|| created(a).cmp(&created(b)))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// A revision's `revision` number, 0 when unset.
pub fn number(revision: &ControllerRevision) -> i64 {
    revision.revision.unwrap_or_default()
}

/// The revisions of `parent`'s namespace that `selector` matches and that
/// `parent` controls or nobody does (upstream `ListControllerRevisions`).
pub fn list_controller_revisions<'a>(
    parent: &ObjectMeta,
    selector: &Selector,
    revisions: impl IntoIterator<Item = &'a ControllerRevision>,
) -> Vec<&'a ControllerRevision> {
    revisions
        .into_iter()
        .filter(|r| r.metadata.namespace == parent.namespace)
        .filter(|r| selector.matches(&r.metadata.labels))
        .filter(|r| controller_of(&r.metadata).is_none_or(|c| Some(&c.uid) == parent.uid.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::common::history::testing::{revision, selector, stateful_set};

    fn names(revisions: &[&ControllerRevision]) -> Vec<String> {
        revisions.iter().map(|r| r.metadata.name.clone().unwrap_or_default()).collect()
    }

    #[test]
    fn controller_revision_name_truncates_the_prefix() {
        assert_eq!(controller_revision_name("web", "abc"), "web-abc");
        let long = "a".repeat(300);
        let name = controller_revision_name(&long, "5776f98846");
        assert_eq!(name.len(), MAX_PREFIX_LEN + 11);
        assert!(name.len() <= 253);
    }

    #[test]
    fn new_controller_revision_labels_owner_and_name() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let cr = revision(&ss1, 1, Some(0));
        let hash = hash_controller_revision(&cr, Some(0));
        assert_eq!(cr.metadata.name.as_deref(), Some(format!("ss1-{hash}").as_str()));
        let labels = cr.metadata.labels.clone().unwrap();
        assert_eq!(labels.get("foo").map(String::as_str), Some("bar"));
        assert_eq!(labels.get(CONTROLLER_REVISION_HASH_LABEL), Some(&hash));
        let owner = controller_of(&cr.metadata).unwrap();
        assert_eq!((owner.kind.as_str(), owner.uid.as_str()), ("StatefulSet", "ss1"));
        assert_eq!(owner.block_owner_deletion, Some(true));
        assert_eq!(cr.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(cr.revision, Some(1));
    }

    /// The probe's decimal digits are hashed after the data, so an unset
    /// count, 0 and 1 give three names; the value is pinned (FNV-1 over
    /// the data bytes, as upstream's `fnv.New32`).
    #[test]
    fn hash_controller_revision_probe() {
        let cr = ControllerRevision {
            data: RawExtension(serde_json::json!({"spec": {"template": {"$patch": "replace"}}})),
            ..Default::default()
        };
        let bytes = br#"{"spec":{"template":{"$patch":"replace"}}}"#;
        assert_eq!(raw_data(&cr), bytes);
        assert_eq!(hash_controller_revision(&cr, None), safe_encode(fnv32(FNV32_OFFSET, bytes)));
        assert_eq!(hash_controller_revision(&cr, Some(12)), safe_encode(fnv32(fnv32(FNV32_OFFSET, bytes), b"12")));
        let (none, zero, one) = (
            hash_controller_revision(&cr, None),
            hash_controller_revision(&cr, Some(0)),
            hash_controller_revision(&cr, Some(1)),
        );
        assert!(none != zero && zero != one && none != one);
    }

    /// Upstream `TestRealHistory_ListControllerRevisions` and
    /// `TestFakeHistory_ListControllerRevisions` (one table: both list the same).
    #[test]
    fn list_controller_revisions_table() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss2 = stateful_set("ss2", "ss2", &[("goo", "car")]);
        let sel1 = selector(&ss1);
        let ss1_rev1 = revision(&ss1, 1, None);
        let ss1_rev2 = revision(&ss1, 2, None);
        let ss2_rev1 = revision(&ss2, 1, None);
        let mut ss1_orphan = revision(&ss1, 3, None);
        ss1_orphan.metadata.owner_references = None;
        let cases: [(&str, Vec<&ControllerRevision>, Vec<&ControllerRevision>); 4] = [
            ("selects none", vec![], vec![]),
            ("selects all", vec![&ss1_rev1, &ss1_rev2], vec![&ss1_rev1, &ss1_rev2]),
            (
                "doesn't select another Objects history",
                vec![&ss1_rev1, &ss1_rev2, &ss2_rev1],
                vec![&ss1_rev1, &ss1_rev2],
            ),
            ("selects orphans", vec![&ss1_rev1, &ss1_rev2, &ss1_orphan], vec![&ss1_rev1, &ss1_rev2, &ss1_orphan]),
        ];
        for (name, revisions, want) in cases {
            let got = list_controller_revisions(&ss1.metadata, &sel1, revisions);
            assert_eq!(names(&got), names(&want), "{name}");
        }
    }

    /// Upstream `TestFindEqualRevisions`.
    #[test]
    fn find_equal_revisions_table() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss2 = stateful_set("ss2", "ss2", &[("goo", "car")]);
        let ss1_rev1 = revision(&ss1, 1, Some(0));
        let ss2_rev1 = revision(&ss2, 1, Some(0));
        let ss2_rev2 = revision(&ss2, 2, Some(0));
        let cases: [(&str, Vec<&ControllerRevision>, Vec<&ControllerRevision>); 3] = [
            ("finds equivalent", vec![&ss1_rev1, &ss2_rev1, &ss2_rev2], vec![&ss1_rev1]),
            ("finds nothing when empty", vec![], vec![]),
            ("finds nothing with no matches", vec![&ss2_rev2, &ss2_rev1], vec![]),
        ];
        for (name, revisions, want) in cases {
            assert_eq!(names(&find_equal_revisions(revisions, &ss1_rev1)), names(&want), "{name}");
        }
    }

    #[test]
    fn equal_revision_table() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let a = revision(&ss1, 1, None);
        let numbered = |hash: &str| {
            let mut cr = a.clone();
            cr.metadata.labels.get_or_insert_default().insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash.into());
            cr
        };
        let (n1, n2, word) = (numbered("12"), numbered("13"), numbered("b4"));
        let mut other_data = a.clone();
        other_data.data = RawExtension(serde_json::json!({"x": 1}));
        assert!(equal_revision(None, None));
        assert!(!equal_revision(Some(&a), None));
        assert!(!equal_revision(None, Some(&a)));
        assert!(equal_revision(Some(&a), Some(&a)));
        assert!(!equal_revision(Some(&n1), Some(&n2)), "numeric hashes that differ");
        assert!(equal_revision(Some(&n1), Some(&word)), "a non-numeric hash is not compared");
        assert!(!equal_revision(Some(&a), Some(&other_data)));
    }

    /// Upstream `TestSortControllerRevisions`.
    #[test]
    fn sort_controller_revisions_table() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let at = |rev: i64, secs: i64, name: &str| {
            let mut cr = revision(&ss1, rev, Some(0));
            cr.metadata.creation_timestamp = Some(Time(crate::testing::ts(secs)));
            cr.metadata.name = Some(name.into());
            cr
        };
        let (rev1, rev2, rev3) = (at(1, 0, "ss1-1"), at(2, 0, "ss1-2"), at(3, 0, "ss1-3"));
        let (rev3_time2, rev3_time2_name2) = (at(3, 1, "ss1-3a"), at(3, 1, "ss1-3b"));
        let cases: [(&str, Vec<&ControllerRevision>, Vec<&ControllerRevision>); 5] = [
            ("out of order", vec![&rev2, &rev1, &rev3], vec![&rev1, &rev2, &rev3]),
            ("sorted", vec![&rev1, &rev2, &rev3], vec![&rev1, &rev2, &rev3]),
            ("reversed", vec![&rev3, &rev2, &rev1], vec![&rev1, &rev2, &rev3]),
            (
                "with ties",
                vec![&rev3_time2_name2, &rev3, &rev3_time2, &rev2, &rev1],
                vec![&rev1, &rev2, &rev3, &rev3_time2, &rev3_time2_name2],
            ),
            ("empty", vec![], vec![]),
        ];
        for (name, mut revisions, want) in cases {
            sort_controller_revisions(&mut revisions);
            assert_eq!(names(&revisions), names(&want), "{name}");
        }
    }
}
