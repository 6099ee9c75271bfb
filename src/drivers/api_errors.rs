//! Reading the API server's error answers: the HTTP code, the reason, the
//! namespace-terminating cause and the message shown for an error, as every
//! driver classifies its writes' failures.

use kcm_controllers::protocol::{Refusal, WriteError};

/// The HTTP code of an API error answer.
pub fn code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// The `reason` of an API error answer (`AlreadyExists`, `Conflict`, ...).
pub fn reason(error: &kube::Error) -> Option<&str> {
    match error {
        kube::Error::Api(status) => Some(status.reason.as_str()),
        _ => None,
    }
}

/// Upstream `HasStatusCause(err, NamespaceTerminatingCause)`.
pub fn namespace_terminating(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => {
            status.details.as_ref().is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating"))
        }
        _ => false,
    }
}

/// The message an event or status condition shows for `error`.
pub fn error_message(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// `error` as a core is told it ([`Refusal`] and message).
pub fn write_error(error: &kube::Error) -> WriteError {
    let refusal = match (code(error), reason(error)) {
        (Some(404), _) => Refusal::NotFound,
        (Some(409), Some("AlreadyExists")) => Refusal::AlreadyExists,
        (Some(409), _) => Refusal::Conflict,
        (Some(403), _) if namespace_terminating(error) => Refusal::NamespaceTerminating,
        (Some(403), _) => Refusal::Forbidden,
        (Some(422), _) => Refusal::Invalid,
        _ => Refusal::Other,
    };
    WriteError { refusal, message: error_message(error) }
}
