//! The two worker kinds and their API calls (upstream
//! `attemptToDeleteWorker`, `attemptToOrphanWorker`, `isDangling`,
//! `operations.go`, `patch.go`).
//!
//! Every read is a live metadata-only GET; every write carries the
//! object's uid as a precondition (in the delete options, or in the
//! patch's `metadata.uid`) or its resourceVersion (JSON merge patches), so
//! nothing is deleted or changed on the account of a stale graph.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};

use futures::future::join_all;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcm_controllers::garbagecollector::decide::{self, Decision, Fetched, Live, Lookup, Propagation};
use kcm_controllers::garbagecollector::graph::NodeView;
use kcm_controllers::garbagecollector::{Deletion, FINALIZER_ORPHAN, Identity};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, PartialObjectMeta, Patch, PatchParams, Preconditions};
use serde_json::Value;

use super::Shared;
use crate::drivers::api_errors::code;
use kcm_runtime::runner::{Next, Reconcile, SyncError, SyncFuture};

/// Upstream retries a finalizer removal this many times on conflict
/// (`retry.DefaultBackoff.Steps`).
const FINALIZER_UPDATE_ATTEMPTS: usize = 4;

/// Why one item's attempt failed; it is retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{action} {identity}: {source}")]
    Api {
        /// What was being done.
        action: &'static str,
        /// On what.
        identity: Box<Identity>,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Discovery does not know the kind (yet): upstream's
    /// `restMappingError`.
    #[error("unable to get REST mapping for {api_version}/{kind}")]
    RestMapping {
        /// The apiVersion.
        api_version: String,
        /// The kind.
        kind: String,
    },
    /// A virtual node found present: checked again until observed.
    #[error("item {0} hasn't been observed via informer yet")]
    NotObserved(Box<Identity>),
    /// Orphaning some dependents failed.
    #[error("failed to orphan dependents of owner {owner}, got errors: {errors}")]
    Orphan {
        /// The owner.
        owner: Box<Identity>,
        /// The errors, joined.
        errors: String,
    },
    /// The finalizer could not be removed for conflicts.
    #[error(
        "updateMaxRetries({FINALIZER_UPDATE_ATTEMPTS}) has reached. The garbage collector will retry later for owner {0}."
    )]
    Conflicts(Box<Identity>),
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// The API calls on any object, shared by both workers.
struct Calls {
    shared: Arc<Shared>,
    client: Client,
}

impl Calls {
    /// The metadata API of `api_version`/`kind` in `namespace` (upstream
    /// `resourceDefaultNamespace`), and whether the kind is namespaced.
    fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
    ) -> Result<(Api<PartialObjectMeta<DynamicObject>>, bool)> {
        let mapping = self
            .shared
            .mapper
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(api_version.into(), kind.into()))
            .cloned();
        let Some(mapping) = mapping else {
            // Perhaps a type registered since the last discovery.
            self.shared.rediscover.notify_one();
            return Err(Error::RestMapping { api_version: api_version.into(), kind: kind.into() });
        };
        let api = if !mapping.namespaced {
            Api::all_with(self.client.clone(), &mapping.resource)
        } else if namespace.is_empty() {
            Api::namespaced_with(self.client.clone(), "default", &mapping.resource)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, &mapping.resource)
        };
        Ok((api, mapping.namespaced))
    }

    /// The live metadata of `identity` (by name).
    async fn get(&self, identity: &Identity) -> Result<Fetched> {
        let (api, _) = self.api(&identity.api_version, &identity.kind, &identity.namespace)?;
        match api.get(&identity.name).await {
            Ok(obj) => Ok(Fetched::Found(Live::from_meta(&obj.metadata))),
            Err(e) if code(&e) == Some(404) => Ok(Fetched::Absent),
            Err(source) => {
                Err(Error::Api { action: "get", identity: Box::new(identity.clone()), source: Box::new(source) })
            }
        }
    }

    /// Upstream `gc.patch`: the strategic merge patch, or for types
    /// without strategic merge (415) the JSON merge patch `merge` builds
    /// from the live object.
    async fn patch(&self, identity: &Identity, strategic: Value, merge: impl Fn(&Live) -> Value) -> Result<()> {
        let (api, _) = self.api(&identity.api_version, &identity.kind, &identity.namespace)?;
        let err =
            |source| Error::Api { action: "patch", identity: Box::new(identity.clone()), source: Box::new(source) };
        match api.patch(&identity.name, &PatchParams::default(), &Patch::Strategic(strategic)).await {
            Ok(_) => Ok(()),
            Err(e) if code(&e) == Some(415) => {
                let live = match self.get(identity).await? {
                    Fetched::Found(live) if live.uid == identity.uid => live,
                    _ => return Ok(()),
                };
                api.patch(&identity.name, &PatchParams::default(), &Patch::Merge(merge(&live))).await.map_err(err)?;
                Ok(())
            }
            Err(e) => Err(err(e)),
        }
    }

    /// Removes the references to `owner_uids` from `identity`.
    async fn remove_owner_refs(&self, identity: &Identity, owner_uids: &[String]) -> Result<()> {
        let strategic = decide::delete_owner_refs_strategic(&identity.uid, owner_uids);
        self.patch(identity, strategic, |live| decide::delete_owner_refs_merge(live, owner_uids)).await
    }

    /// Upstream `removeFinalizer`: live read, JSON merge patch at its
    /// resourceVersion, again on conflict. Gone, or without the
    /// finalizer, is done.
    async fn remove_finalizer(&self, identity: &Identity, finalizer: &str) -> Result<()> {
        let (api, _) = self.api(&identity.api_version, &identity.kind, &identity.namespace)?;
        for _ in 0..FINALIZER_UPDATE_ATTEMPTS {
            let live = match self.get(identity).await? {
                Fetched::Found(live) => live,
                _ => return Ok(()),
            };
            let Some(patch) = decide::remove_finalizer_merge(&live, finalizer) else { return Ok(()) };
            match api.patch(&identity.name, &PatchParams::default(), &Patch::Merge(patch)).await {
                Ok(_) => return Ok(()),
                Err(e) if code(&e) == Some(409) => continue,
                Err(e) if code(&e) == Some(404) => return Ok(()),
                Err(source) => {
                    return Err(Error::Api {
                        action: "remove finalizer from",
                        identity: Box::new(identity.clone()),
                        source: Box::new(source),
                    });
                }
            }
        }
        Err(Error::Conflicts(Box::new(identity.clone())))
    }

    /// Upstream `deleteObject`: preconditions uid and resourceVersion; on a
    /// conflict, again with the uid alone if the ownerReferences did not
    /// change. `Ok(false)`: the object is gone.
    async fn delete(
        &self,
        identity: &Identity,
        propagation: Propagation,
        resource_version: Option<&str>,
        owners: &[OwnerReference],
    ) -> Result<bool> {
        let (api, _) = self.api(&identity.api_version, &identity.kind, &identity.namespace)?;
        let params = |rv: Option<&str>| DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(identity.uid.clone()),
                resource_version: rv.map(str::to_owned),
            }),
            propagation_policy: Some(match propagation {
                Propagation::Background => kube::api::PropagationPolicy::Background,
                Propagation::Foreground => kube::api::PropagationPolicy::Foreground,
                Propagation::Orphan => kube::api::PropagationPolicy::Orphan,
            }),
            ..DeleteParams::default()
        };
        let err =
            |source| Error::Api { action: "delete", identity: Box::new(identity.clone()), source: Box::new(source) };
        let mut result = api.delete(&identity.name, &params(resource_version)).await.map(|_| ());
        if let Err(e) = &result
            && code(e) == Some(409)
            && resource_version.is_some()
            && let Fetched::Found(live) = self.get(identity).await?
            && live.uid == identity.uid
            && live.resource_version.as_deref() != resource_version
            && live.owner_references == owners
        {
            result = api.delete(&identity.name, &params(None)).await.map(|_| ());
        }
        match result {
            Ok(()) => Ok(true),
            Err(e) if code(&e) == Some(404) => Ok(false),
            Err(e) => Err(err(e)),
        }
    }

    /// Upstream `isDangling`: the absent-owner cache, else a live read of
    /// the owner.
    async fn lookup(&self, item: &Identity, reference: &OwnerReference) -> Result<Lookup> {
        let mut absent = Identity {
            api_version: reference.api_version.clone(),
            kind: reference.kind.clone(),
            namespace: String::new(),
            name: reference.name.clone(),
            uid: reference.uid.clone(),
        };
        {
            let mut graph = self.shared.graph();
            let cache = graph.absent_owners();
            if cache.contains(&absent) {
                return Ok(Lookup::Absent);
            }
            absent.namespace = item.namespace.clone();
            if cache.contains(&absent) {
                return Ok(Lookup::Absent);
            }
        }
        let (api, namespaced) = self.api(&reference.api_version, &reference.kind, &item.namespace)?;
        if !namespaced {
            absent.namespace.clear();
        }
        if item.namespace.is_empty() && namespaced {
            return Ok(Lookup::NamespacedOwnerOfClusterScoped);
        }
        match api.get(&reference.name).await {
            Ok(owner) if owner.metadata.uid.as_deref() == Some(reference.uid.as_str()) => {
                let deletion = Deletion::of(
                    owner.metadata.deletion_timestamp.is_some(),
                    owner.metadata.finalizers.as_deref().unwrap_or(&[]),
                );
                Ok(Lookup::Found { deleting_dependents: deletion.deleting_dependents() })
            }
            Ok(_) => {
                self.shared.graph().absent_owners().add(absent);
                Ok(Lookup::Absent)
            }
            Err(e) if code(&e) == Some(404) => {
                self.shared.graph().absent_owners().add(absent);
                Ok(Lookup::Absent)
            }
            Err(source) => {
                Err(Error::Api { action: "get owner of", identity: Box::new(item.clone()), source: Box::new(source) })
            }
        }
    }
}

// === attemptToDelete ===

/// Upstream `attemptToDeleteWorker`: keys are node uids.
pub(super) struct AttemptToDelete {
    calls: Calls,
}

impl AttemptToDelete {
    pub(super) fn new(shared: Arc<Shared>, client: Client) -> Self {
        AttemptToDelete { calls: Calls { shared, client } }
    }

    async fn attempt(&self, uid: &str) -> Result<Next> {
        let shared = &self.calls.shared;
        // Gone from the graph: nothing to verify any more.
        let Some(item) = shared.graph().node(uid) else { return Ok(Next::Done) };
        let mut fetched = Fetched::NotYet;
        let mut lookups: HashMap<String, Lookup> = HashMap::new();
        loop {
            match decide::attempt_to_delete(&item, &fetched, &lookups) {
                Decision::Fetch => fetched = self.calls.get(&item.identity).await?,
                Decision::LookUp(references) => {
                    for reference in references {
                        let found = self.calls.lookup(&item.identity, &reference).await?;
                        lookups.insert(reference.uid, found);
                    }
                }
                Decision::VirtualDelete => {
                    tracing::debug!(item = %item.identity, "item not found, generating a virtual delete event");
                    shared.change(|graph| graph.virtual_delete(&item.identity));
                    return Ok(Next::Done);
                }
                Decision::Nothing(reason) => {
                    tracing::trace!(item = %item.identity, reason, "nothing to do");
                    break;
                }
                Decision::Invalid(reason) => {
                    tracing::info!(item = %item.identity, reason, "not retrying");
                    return Ok(Next::Done);
                }
                Decision::RemoveFinalizer(finalizer) => {
                    tracing::info!(item = %item.identity, finalizer, "removing finalizer: no blocking dependent left");
                    self.calls.remove_finalizer(&item.identity, finalizer).await?;
                    break;
                }
                Decision::AttemptDependents(uids) => {
                    for dependent in uids {
                        shared.attempt_to_delete.add(dependent);
                    }
                    break;
                }
                Decision::RemoveOwnerReferences(owner_uids) => {
                    tracing::info!(item = %item.identity, owners = ?owner_uids, "removing dangling and waiting references");
                    self.calls.remove_owner_refs(&item.identity, &owner_uids).await?;
                    break;
                }
                Decision::Delete { propagation, resource_version, owner_references, unblock_first } => {
                    if unblock_first {
                        self.unblock(&item).await?;
                    }
                    tracing::info!(item = %item.identity, propagation = propagation.as_str(), "deleting item");
                    let deleted = self
                        .calls
                        .delete(&item.identity, propagation, resource_version.as_deref(), &owner_references)
                        .await?;
                    if !deleted {
                        shared.change(|graph| graph.virtual_delete(&item.identity));
                        return Ok(Next::Done);
                    }
                    break;
                }
            }
        }
        if !item.observed {
            // Checked again until a watch reports it (upstream #56121).
            return Err(Error::NotObserved(Box::new(item.identity)));
        }
        Ok(Next::Done)
    }

    /// Sets `blockOwnerDeletion: false` on the item's blocking references.
    async fn unblock(&self, item: &NodeView) -> Result<()> {
        let strategic = decide::unblock_owner_refs_strategic(&item.identity.uid, &item.owners);
        self.calls.patch(&item.identity, strategic, decide::unblock_owner_refs_merge).await
    }
}

impl Reconcile for AttemptToDelete {
    fn sync<'a>(&'a self, key: &'a str) -> SyncFuture<'a> {
        Box::pin(async move { self.attempt(key).await.map_err(|e| Box::new(e) as SyncError) })
    }
}

// === attemptToOrphan ===

/// Upstream `attemptToOrphanWorker`: keys are owner uids.
pub(super) struct AttemptToOrphan {
    calls: Calls,
}

impl AttemptToOrphan {
    pub(super) fn new(shared: Arc<Shared>, client: Client) -> Self {
        AttemptToOrphan { calls: Calls { shared, client } }
    }

    /// Removes the owner's reference from every dependent, then the
    /// owner's `orphan` finalizer.
    async fn orphan(&self, uid: &str) -> Result<Next> {
        let Some(owner) = self.calls.shared.graph().node(uid) else { return Ok(Next::Done) };
        let owner_uid = [owner.identity.uid.clone()];
        let results =
            join_all(owner.dependents.iter().map(|d| self.calls.remove_owner_refs(&d.identity, &owner_uid))).await;
        let errors: Vec<String> = results
            .into_iter()
            .filter_map(Result::err)
            .filter(|e| !matches!(e, Error::Api { source, .. } if code(source.as_ref()) == Some(404)))
            .map(|e| e.to_string())
            .collect();
        if !errors.is_empty() {
            return Err(Error::Orphan { owner: Box::new(owner.identity), errors: errors.join(", ") });
        }
        self.calls.remove_finalizer(&owner.identity, FINALIZER_ORPHAN).await?;
        Ok(Next::Done)
    }
}

impl Reconcile for AttemptToOrphan {
    fn sync<'a>(&'a self, key: &'a str) -> SyncFuture<'a> {
        Box::pin(async move { self.orphan(key).await.map_err(|e| Box::new(e) as SyncError) })
    }
}
