//! The k8s-openapi type behind each built-in kind, as schemars definitions:
//! what the OpenAPI documents publish and what strategic merge patches walk
//! to find a field's Go type.

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::events::v1 as events;
use k8s_openapi::api::{coordination::v1 as coordination, core::v1 as core, discovery::v1 as discovery};
use k8s_openapi::api::{policy::v1 as policy, rbac::v1 as rbac};
use schemars::JsonSchema;
use schemars::generate::SchemaGenerator;

use crate::resources::Builtin;

/// Adds `T` and everything it references to the generator; returns `T`'s
/// definition name.
pub(super) fn define<T: JsonSchema>(generator: &mut SchemaGenerator) -> String {
    generator.subschema_for::<T>();
    T::schema_name().into_owned()
}

/// [`define`] for the k8s-openapi type of a built-in.
pub(crate) fn define_builtin(builtin: Builtin, generator: &mut SchemaGenerator) -> String {
    match builtin {
        Builtin::Namespace => define::<core::Namespace>(generator),
        Builtin::Node => define::<core::Node>(generator),
        Builtin::Pod => define::<core::Pod>(generator),
        Builtin::Service => define::<core::Service>(generator),
        Builtin::Endpoints => define::<core::Endpoints>(generator),
        Builtin::ConfigMap => define::<core::ConfigMap>(generator),
        Builtin::Secret => define::<core::Secret>(generator),
        Builtin::ServiceAccount => define::<core::ServiceAccount>(generator),
        Builtin::CoreEvent => define::<core::Event>(generator),
        Builtin::PodTemplate => define::<core::PodTemplate>(generator),
        Builtin::PersistentVolumeClaim => define::<core::PersistentVolumeClaim>(generator),
        Builtin::Deployment => define::<apps::Deployment>(generator),
        Builtin::ReplicaSet => define::<apps::ReplicaSet>(generator),
        Builtin::DaemonSet => define::<apps::DaemonSet>(generator),
        Builtin::StatefulSet => define::<apps::StatefulSet>(generator),
        Builtin::ControllerRevision => define::<apps::ControllerRevision>(generator),
        Builtin::Job => define::<batch::Job>(generator),
        Builtin::CronJob => define::<batch::CronJob>(generator),
        Builtin::Lease => define::<coordination::Lease>(generator),
        Builtin::EventsEvent => define::<events::Event>(generator),
        Builtin::EndpointSlice => define::<discovery::EndpointSlice>(generator),
        Builtin::PodDisruptionBudget => define::<policy::PodDisruptionBudget>(generator),
        Builtin::ClusterRole => define::<rbac::ClusterRole>(generator),
        Builtin::ClusterRoleBinding => define::<rbac::ClusterRoleBinding>(generator),
        Builtin::Role => define::<rbac::Role>(generator),
        Builtin::RoleBinding => define::<rbac::RoleBinding>(generator),
    }
}
