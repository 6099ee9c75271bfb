//! Why a patch could not be applied, and the HTTP status the API server
//! answers each failure with.

/// Errors from applying a patch. Each variant maps to the HTTP status the
/// real API server uses for it (see [`PatchError::status_code`]).
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The body is not a patch of the declared type: not JSON, not the
    /// expected shape, or a directive that is badly formed. 400 BadRequest.
    #[error("malformed patch: {0}")]
    Malformed(String),
    /// The patch is well formed but cannot be applied to this object (a
    /// failing JSON patch `test`, a path that does not exist, a list of
    /// lists). 422 Unprocessable Entity (reason Invalid).
    #[error("the patch could not be applied: {0}")]
    Failed(String),
    /// The patch type is not supported for this resource (strategic merge
    /// patch on a custom resource, server-side apply). 415 Unsupported
    /// Media Type.
    #[error("{0}")]
    Unsupported(String),
}

impl PatchError {
    /// The HTTP status code the real API server answers with.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Malformed(_) => 400,
            PatchError::Failed(_) => 422,
            PatchError::Unsupported(_) => 415,
        }
    }
}

/// Result alias of this module.
pub(super) type Result<T, E = PatchError> = std::result::Result<T, E>;
