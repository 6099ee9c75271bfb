//! Who makes a change: the client whose request is being served, carried
//! in a task-local for the request's whole dispatch, so that the store
//! credits each change it commits to it ([`crate::store::Change::writer`]).

use std::sync::Arc;

/// The client a request comes from, as the changes it makes are credited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writer {
    /// The user the request acts as (`Impersonate-User`; "" when none).
    pub user: String,
    /// Its `User-Agent` ("" when absent).
    pub user_agent: String,
}

tokio::task_local! {
    static WRITER: Arc<Writer>;
}

/// Runs `work` with the changes it makes to the store credited to
/// `writer` (they carry it in [`crate::store::Change::writer`]), so that a test can tell
/// in commit order who wrote what.
pub async fn written_by<F: std::future::Future>(writer: Arc<Writer>, work: F) -> F::Output {
    WRITER.scope(writer, work).await
}

/// The writer of the request being served on this task, if any.
pub(crate) fn current() -> Option<Arc<Writer>> {
    WRITER.try_with(Arc::clone).ok()
}
