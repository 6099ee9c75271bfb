//! The writes a controller makes to its history, as plan actions
//! ([`Action::ControllerRevision`](crate::plan::Action::ControllerRevision)),
//! and the one step of upstream's `CreateControllerRevision` that depends
//! on the API server's answer: what to do when the name is taken.
//!
//! # The create's collision loop, sans-IO
//! Upstream names a revision `<parent>-<hash(data, collisionCount)>` and
//! creates it. When the name is taken (AlreadyExists) it reads the existing
//! revision: if it holds the same data bytes, that is the revision (a
//! stale cache, or a create that succeeded before); otherwise it is a
//! collision, and it adds one to `collisionCount` and tries again under the
//! new name. Here the controller's core runs that loop: it hands out
//! [`Write::Create`]; told AlreadyExists, it hands out [`Write::Get`] and,
//! told the existing revision, asks [`after_already_exists`], which answers
//! [`AfterAlreadyExists::Existing`] (done) or [`AfterAlreadyExists::Retry`]
//! (create this renamed revision; the count is now this). The final count
//! goes back to the parent's `status.collisionCount`. (The DaemonSet names
//! its revisions by its template's hash and judges a taken name itself.)
//!
//! Worked example: parent `web`, data D, count 0, name `web-<h(D,0)>` is
//! taken by data E: the retry is `web-<h(D,1)>` with count 1; if that is
//! taken by D itself, the existing revision is the one and the count stays 1.

use k8s_openapi::api::apps::v1::ControllerRevision;

use super::{controller_revision_name, hash_controller_revision, number, raw_data};
use crate::plan::OwnerRefPatch;

/// One write to a ControllerRevision.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// Create `revision` (named in full, in its namespace). What a refusal
    /// means is the controller's: AlreadyExists starts the collision step
    /// above, a terminating namespace ends the sync with no error.
    Create {
        /// The object to send.
        revision: Box<ControllerRevision>,
    },
    /// Read a revision live (not from the cache): answered with
    /// [`Answer::ControllerRevision`](crate::protocol::Answer::ControllerRevision).
    Get {
        /// Namespace of the revision.
        namespace: String,
        /// Name of the revision.
        name: String,
    },
    /// Replace `revision`: its `revision` number (upstream
    /// `UpdateControllerRevision`, a revision reused for a newer version) or
    /// a label. When an earlier action of the same plan wrote the same
    /// object, the executor sends the resourceVersion that write returned.
    /// On a conflict it re-reads the object, applies the number again and
    /// retries (upstream `RetryOnConflict` with the default backoff); other
    /// errors fail the step.
    Update {
        /// The whole object to send, with the new number.
        revision: Box<ControllerRevision>,
    },
    /// Delete a revision with a uid precondition (history cleanup). NotFound
    /// counts as success.
    Delete {
        /// Namespace of the revision.
        namespace: String,
        /// Name of the revision.
        name: String,
        /// Uid it had in the cache (precondition).
        uid: String,
    },
    /// Strategic merge patch of a revision's ownerReferences (adopt or
    /// release), with the revision's uid as precondition inside the patch.
    /// Errors are tolerated as [`OwnerRefPatch`] documents.
    PatchOwnerRefs {
        /// Namespace of the revision.
        namespace: String,
        /// Name of the revision.
        name: String,
        /// Uid of the revision (precondition).
        uid: String,
        /// Adopt or release.
        patch: OwnerRefPatch,
    },
}

/// The answer to a taken name during the create's collision loop.
#[derive(Clone, Debug, PartialEq)]
pub enum AfterAlreadyExists {
    /// The existing revision holds the same data: it is the created one.
    Existing,
    /// A collision: create this revision (renamed) instead, with this count.
    Retry {
        /// The revision to send next.
        revision: Box<ControllerRevision>,
        /// The count its name was hashed with.
        collision_count: i32,
    },
}

/// The next step of the create loop for `planned` (the revision sent, named
/// with `collision_count`, for the parent named `parent_name`) when the API
/// server holds `existing` under its name.
pub fn after_already_exists(
    parent_name: &str,
    planned: &ControllerRevision,
    existing: &ControllerRevision,
    collision_count: i32,
) -> AfterAlreadyExists {
    if raw_data(existing) == raw_data(planned) {
        return AfterAlreadyExists::Existing;
    }
    let collision_count = collision_count.saturating_add(1);
    let mut revision = planned.clone();
    let hash = hash_controller_revision(planned, Some(collision_count));
    revision.metadata.name = Some(controller_revision_name(parent_name, &hash));
    AfterAlreadyExists::Retry { revision: Box::new(revision), collision_count }
}

/// The write giving `revision` the number `new_revision`, none when it
/// already has it (upstream `UpdateControllerRevision`'s no-op).
pub fn update_revision(revision: &ControllerRevision, new_revision: i64) -> Option<Write> {
    (number(revision) != new_revision).then(|| {
        let mut updated = revision.clone();
        updated.revision = Some(new_revision);
        Write::Update { revision: Box::new(updated) }
    })
}

/// The live read of the revision holding `revision`'s name (after its
/// create was refused with AlreadyExists).
pub fn get(revision: &ControllerRevision) -> Write {
    Write::Get {
        namespace: revision.metadata.namespace.clone().unwrap_or_default(),
        name: revision.metadata.name.clone().unwrap_or_default(),
    }
}

/// The write deleting `revision`.
pub fn delete(revision: &ControllerRevision) -> Write {
    Write::Delete {
        namespace: revision.metadata.namespace.clone().unwrap_or_default(),
        name: revision.metadata.name.clone().unwrap_or_default(),
        uid: revision.metadata.uid.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::common::history::testing::{raw_template, revision, stateful_set};

    /// An API server's ControllerRevisions by name, and a core's create
    /// loop over it.
    fn create(
        existing: &mut BTreeMap<String, ControllerRevision>,
        planned: &ControllerRevision,
        count: i32,
    ) -> (String, i32) {
        let parent = planned.metadata.owner_references.as_ref().unwrap()[0].name.clone();
        let (mut planned, mut count) = (planned.clone(), count);
        loop {
            let name = planned.metadata.name.clone().unwrap();
            let Some(taken) = existing.get(&name) else {
                existing.insert(name.clone(), planned);
                return (name, count);
            };
            match after_already_exists(&parent, &planned, taken, count) {
                AfterAlreadyExists::Existing => return (name, count),
                AfterAlreadyExists::Retry { revision, collision_count } => {
                    planned = *revision;
                    count = collision_count;
                }
            }
        }
    }

    fn name(cr: &ControllerRevision) -> String {
        cr.metadata.name.clone().unwrap()
    }

    /// Upstream `TestRealHistory_CreateControllerRevision`.
    #[test]
    fn create_controller_revision() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss2 = stateful_set("ss2", "ss2", &[("goo", "car")]);
        let ss1_rev1 = revision(&ss1, 1, Some(0));
        // Same name and hash label as ss1_rev1, other data: a collision.
        let mut template = ss1.spec.template.clone();
        template.metadata.as_mut().unwrap().labels.as_mut().unwrap().insert("foo".into(), "not_bar".into());
        let mut ss1_rev2 = revision(&ss1, 2, Some(0));
        ss1_rev2.data = raw_template(&template);
        ss1_rev2.metadata.name = ss1_rev1.metadata.name.clone();
        let ss2_rev1 = revision(&ss2, 1, Some(0));

        let mut api = BTreeMap::new();
        assert_eq!(create(&mut api, &ss1_rev1, 0), (name(&ss1_rev1), 0), "creates new");

        let mut api = BTreeMap::from([(name(&ss1_rev1), ss1_rev1.clone())]);
        assert_eq!(create(&mut api, &ss2_rev1, 0), (name(&ss2_rev1), 0), "create doesn't conflict when parents differ");

        let mut api = BTreeMap::from([(name(&ss1_rev2), ss1_rev2.clone())]);
        let (created, count) = create(&mut api, &ss1_rev1, 0);
        assert_ne!(created, name(&ss1_rev1), "create renames on conflict");
        assert_eq!(created, controller_revision_name("ss1", &hash_controller_revision(&ss1_rev1, Some(count))));
        assert_eq!(count, 1);
        // The second create meets the identical revision: no further rename.
        assert_eq!(create(&mut api, &ss1_rev1, 0), (created, 1), "second collision is the same revision");
    }

    /// Upstream `TestFakeHistory_CreateControllerRevision`'s rename case: the
    /// fake store collides on the name alone, so the same revision twice
    /// over an existing one renames twice; here a revision with the same
    /// data is the existing one, as with the real API server.
    #[test]
    fn create_is_idempotent_for_the_same_data() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss1_rev1 = revision(&ss1, 1, Some(0));
        let mut api = BTreeMap::from([(name(&ss1_rev1), ss1_rev1.clone())]);
        assert_eq!(create(&mut api, &ss1_rev1, 0), (name(&ss1_rev1), 0));
        assert_eq!(api.len(), 1);
    }

    /// Upstream `TestRealHistory_UpdateControllerRevision` and
    /// `TestFakeHistory_UpdateControllerRevision` (the conflict retries are
    /// the executor's).
    #[test]
    fn update_controller_revision() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss1_rev1 = revision(&ss1, 1, Some(0));
        let Some(Write::Update { revision: updated }) = update_revision(&ss1_rev1, 2) else {
            panic!("update succeeds")
        };
        assert_eq!(updated.revision, Some(2));
        assert_eq!(updated.metadata, ss1_rev1.metadata);
        assert_eq!(update_revision(&ss1_rev1, 1), None, "update succeeds no noop");
    }

    /// Upstream `TestRealHistory_DeleteControllerRevision`: the delete
    /// names the revision and its uid (whether it exists is the API
    /// server's answer).
    #[test]
    fn delete_controller_revision() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let mut ss1_rev1 = revision(&ss1, 1, Some(0));
        ss1_rev1.metadata.uid = Some("r1".into());
        assert_eq!(
            delete(&ss1_rev1),
            Write::Delete { namespace: "default".into(), name: name(&ss1_rev1), uid: "r1".into() }
        );
    }
}
