//! The API calls on any object, shared by both workers (upstream
//! `operations.go`, `patch.go`, `isDangling`): live metadata-only reads;
//! patches (strategic merge, else JSON merge); the finalizer removal; the
//! delete; the owner lookup through the absent-owner cache.
//!
//! Every read is a live metadata-only GET; every write carries the
//! object's uid as a precondition (in the delete options, or in the
//! patch's `metadata.uid`) or its resourceVersion (JSON merge patches), so
//! nothing is deleted or changed on the account of a stale graph.

use std::sync::{Arc, PoisonError};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcm_controllers::garbagecollector::decide::{self, Fetched, Live, Lookup, Propagation};
use kcm_controllers::garbagecollector::{Deletion, Identity};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, PartialObjectMeta, Patch, PatchParams, Preconditions};
use serde_json::Value;

use super::shared::Shared;
use crate::drivers::api_errors::code;

/// Upstream retries a finalizer removal this many times on conflict
/// (`retry.DefaultBackoff.Steps`).
const FINALIZER_UPDATE_ATTEMPTS: usize = 4;

/// Why one item's attempt failed; it is retried with backoff.
#[derive(Debug, thiserror::Error)]
pub(super) enum Error {
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

pub(super) type Result<T, E = Error> = std::result::Result<T, E>;

/// The API calls on any object, shared by both workers.
pub(super) struct Calls {
    /// The graph (absent owners), the mapping, the rediscovery signal.
    pub(super) shared: Arc<Shared>,
    /// Metadata-only reads and writes of any type.
    pub(super) client: Client,
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
    pub(super) async fn get(&self, identity: &Identity) -> Result<Fetched> {
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
    pub(super) async fn patch(
        &self,
        identity: &Identity,
        strategic: Value,
        merge: impl Fn(&Live) -> Value,
    ) -> Result<()> {
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
    pub(super) async fn remove_owner_refs(&self, identity: &Identity, owner_uids: &[String]) -> Result<()> {
        let strategic = decide::delete_owner_refs_strategic(&identity.uid, owner_uids);
        self.patch(identity, strategic, |live| decide::delete_owner_refs_merge(live, owner_uids)).await
    }

    /// Upstream `removeFinalizer`: live read, JSON merge patch at its
    /// resourceVersion, again on conflict. Gone, or without the
    /// finalizer, is done.
    pub(super) async fn remove_finalizer(&self, identity: &Identity, finalizer: &str) -> Result<()> {
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
    pub(super) async fn delete(
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
    pub(super) async fn lookup(&self, item: &Identity, reference: &OwnerReference) -> Result<Lookup> {
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
