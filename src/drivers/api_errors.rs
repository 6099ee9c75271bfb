//! Reading the API server's error answers, as every driver classifies its
//! calls' failures.

/// The HTTP code of an API error answer.
pub fn code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}
