//! The names of a service account token Secret, as the core/v1 API spells
//! them: what the service account token controller fills and the legacy
//! token cleaner reads.

/// The Secret type of a legacy service account token (`v1.SecretTypeServiceAccountToken`).
pub const SECRET_TYPE: &str = kcm_objects::SERVICE_ACCOUNT_TOKEN_TYPE;
/// The annotation naming the token's ServiceAccount (`v1.ServiceAccountNameKey`).
pub const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";
/// The annotation holding its uid (`v1.ServiceAccountUIDKey`).
pub const SERVICE_ACCOUNT_UID_KEY: &str = "kubernetes.io/service-account.uid";
/// The data key of the signed token (`v1.ServiceAccountTokenKey`).
pub const TOKEN_KEY: &str = "token";
/// The data key of the root CA bundle (`v1.ServiceAccountRootCAKey`).
pub const ROOT_CA_KEY: &str = "ca.crt";
/// The data key of the namespace (`v1.ServiceAccountNamespaceKey`).
pub const NAMESPACE_KEY: &str = "namespace";
