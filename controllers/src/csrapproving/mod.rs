//! The CSR approving controller's decisions (upstream
//! `pkg/controller/certificates/approver/sarapprove.go`): a kubelet's
//! client certificate request is approved when the user who made it may
//! create the `certificatesigningrequests/selfnodeclient` subresource (a
//! node renewing its own certificate) or `.../nodeclient` (a bootstrap
//! identity asking for any node's), as a SubjectAccessReview on the
//! request's user, uid, groups and extra answers.
//!
//! A request is *recognised* ([`RECOGNIZERS`], in upstream's order) when
//! its signer is `kubernetes.io/kube-apiserver-client-kubelet` and its
//! PKCS#10 request passes upstream's `ValidateKubeletClientCSR`
//! ([`validate_kubelet_client_csr`]); a self request also has the common
//! name of its requesting user. Requests already issued, approved or
//! denied, and ones no recognizer knows, are left alone.
//!
//! Sans-IO: [`Approval::start`] reads the request, then [`Approval::next`]
//! answers the review to ask for ([`Step::Review`]) until one is allowed
//! ([`Step::Approve`], the request with upstream's `Approved` condition,
//! written through the `/approval` subresource) or none is
//! ([`Step::NotApproved`], an ignorable error: the key is retried with
//! backoff, as upstream's).

use std::collections::BTreeSet;

use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestStatus,
};

use crate::common::csr::{
    self, APPROVED, CertificateRequest, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, ParseCsrError, approval_condition,
    is_issued,
};

#[cfg(test)]
mod tests;

/// The reason of the condition this controller adds.
pub const REASON: &str = "AutoApproved";

/// The organization a kubelet client certificate must have, alone.
pub const NODES_GROUP: &str = "system:nodes";

/// The prefix of a kubelet client certificate's common name.
pub const NODE_USER_PREFIX: &str = "system:node:";

/// One kind of request the approver knows (upstream `csrRecognizer`).
#[derive(Debug)]
pub struct Recognizer {
    /// Whether a request is of this kind.
    pub recognize: fn(&CertificateSigningRequest, &CertificateRequest) -> bool,
    /// The `certificates.k8s.io` `certificatesigningrequests`
    /// subresource the requesting user must be allowed to `create`.
    pub subresource: &'static str,
    /// The approval condition's message.
    pub success_message: &'static str,
}

/// Upstream's recognizers, in the order they are tried.
pub static RECOGNIZERS: [Recognizer; 2] = [
    Recognizer {
        recognize: is_self_node_client_cert,
        subresource: "selfnodeclient",
        success_message: "Auto approving self kubelet client certificate after SubjectAccessReview.",
    },
    Recognizer {
        recognize: is_node_client_cert,
        subresource: "nodeclient",
        success_message: "Auto approving kubelet client certificate after SubjectAccessReview.",
    },
];

/// Why a request cannot be approved now: the key is retried with backoff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `spec.request` does not parse (upstream's message).
    #[error("unable to parse csr {name:?}: {source}")]
    Unparsable {
        /// The request's name.
        name: String,
        /// Why.
        #[source]
        source: ParseCsrError,
    },
    /// Recognised, but no review allowed it (upstream's ignorable error,
    /// logged only at debug level).
    #[error("recognized csr {name:?} as [{}] but subject access review was not approved", tried.join(" "))]
    NotApproved {
        /// The request's name.
        name: String,
        /// The subresources reviewed, in order.
        tried: Vec<&'static str>,
    },
}

impl Error {
    /// Whether upstream logs it only at debug level (its
    /// `ignorableError`) rather than as an error.
    pub fn is_ignorable(&self) -> bool {
        matches!(self, Error::NotApproved { .. })
    }
}

/// What the driver does next for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create this review and tell [`Approval::reviewed`] whether it is
    /// allowed.
    Review(Box<SubjectAccessReview>),
    /// Write this request (its `Approved` condition appended) through the
    /// `/approval` subresource; done.
    Approve(Box<CertificateSigningRequest>),
    /// Nothing to do: done.
    LeaveAlone,
    /// Recognised but not allowed: done, with this error.
    NotApproved(Error),
}

/// One request's way through the reviews (upstream `sarApprover.handle`).
#[derive(Debug)]
pub struct Approval<'r> {
    /// The request, as cached.
    csr: CertificateSigningRequest,
    /// The recognizers that know it, in order.
    recognized: Vec<&'r Recognizer>,
    /// How many of them were refused so far.
    refused: usize,
    /// The one whose review allowed it.
    allowed: Option<&'r Recognizer>,
}

// === impl Approval ===

impl<'r> Approval<'r> {
    /// Reads `csr` against `recognizers`: issued, approved or denied
    /// requests are left alone before the request is parsed, as upstream.
    ///
    /// # Errors
    /// `spec.request` is not a PEM certificate request.
    pub fn start(csr: &CertificateSigningRequest, recognizers: &'r [Recognizer]) -> Result<Self, Error> {
        let (approved, denied) = approval_condition(csr);
        let recognized = if is_issued(csr) || approved || denied {
            Vec::new()
        } else {
            let request = csr::parse_csr(&csr.spec.request.0)
                .map_err(|source| Error::Unparsable { name: name(csr).to_owned(), source })?;
            recognizers.iter().filter(|r| (r.recognize)(csr, &request)).collect()
        };
        Ok(Self { csr: csr.clone(), recognized, refused: 0, allowed: None })
    }

    /// The next step.
    pub fn next(&self) -> Step {
        if let Some(recognizer) = self.allowed {
            return Step::Approve(Box::new(approved(&self.csr, recognizer.success_message)));
        }
        match self.recognized.get(self.refused) {
            Some(recognizer) => Step::Review(Box::new(subject_access_review(&self.csr, recognizer.subresource))),
            None if self.recognized.is_empty() => Step::LeaveAlone,
            None => Step::NotApproved(Error::NotApproved {
                name: name(&self.csr).to_owned(),
                tried: self.recognized.iter().map(|r| r.subresource).collect(),
            }),
        }
    }

    /// Told the answer to the last [`Step::Review`].
    pub fn reviewed(&mut self, allowed: bool) {
        match self.recognized.get(self.refused) {
            Some(recognizer) if allowed => self.allowed = Some(recognizer),
            Some(_) => self.refused += 1,
            None => {}
        }
    }
}

fn name(csr: &CertificateSigningRequest) -> &str {
    csr.metadata.name.as_deref().unwrap_or_default()
}

/// Upstream `authorize`'s review: may the request's user (with its uid,
/// groups and extra) `create` `certificatesigningrequests/<subresource>`
/// in `certificates.k8s.io`, any version.
pub fn subject_access_review(csr: &CertificateSigningRequest, subresource: &str) -> SubjectAccessReview {
    let spec = &csr.spec;
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: spec.username.clone(),
            uid: spec.uid.clone(),
            groups: spec.groups.clone(),
            extra: spec.extra.clone(),
            resource_attributes: Some(ResourceAttributes {
                group: Some("certificates.k8s.io".to_owned()),
                resource: Some("certificatesigningrequests".to_owned()),
                verb: Some("create".to_owned()),
                subresource: Some(subresource.to_owned()),
                version: Some("*".to_owned()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    }
}

/// Upstream `appendApprovalCondition`: `csr` with an `Approved` condition
/// (status `True`, reason [`REASON`], `message`) appended.
pub fn approved(csr: &CertificateSigningRequest, message: &str) -> CertificateSigningRequest {
    let mut csr = csr.clone();
    let status = csr.status.get_or_insert_with(CertificateSigningRequestStatus::default);
    status.conditions.get_or_insert_with(Vec::new).push(CertificateSigningRequestCondition {
        type_: APPROVED.to_owned(),
        status: "True".to_owned(),
        reason: Some(REASON.to_owned()),
        message: Some(message.to_owned()),
        ..CertificateSigningRequestCondition::default()
    });
    csr
}

/// Upstream `isNodeClientCert`: the kubelet client signer and a request
/// [`validate_kubelet_client_csr`] accepts.
pub fn is_node_client_cert(csr: &CertificateSigningRequest, request: &CertificateRequest) -> bool {
    csr.spec.signer_name == KUBE_APISERVER_CLIENT_KUBELET_SIGNER
        && validate_kubelet_client_csr(request, &usages(csr)).is_ok()
}

/// Upstream `isSelfNodeClientCert`: a node client request whose common
/// name is its requesting user's name.
pub fn is_self_node_client_cert(csr: &CertificateSigningRequest, request: &CertificateRequest) -> bool {
    csr.spec.username.as_deref().unwrap_or_default() == request.common_name && is_node_client_cert(csr, request)
}

/// The request's usages, as a set.
fn usages(csr: &CertificateSigningRequest) -> BTreeSet<&str> {
    csr.spec.usages.iter().flatten().map(String::as_str).collect()
}

/// Why a request is not a kubelet client certificate request (upstream's
/// messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeletClientCsrError {
    /// Organizations other than exactly `system:nodes`.
    #[error("subject organization is not system:nodes")]
    OrganizationNotSystemNodes,
    /// A DNS alternative name.
    #[error("DNS subjectAltNames are not allowed")]
    DnsSanNotAllowed,
    /// An email alternative name.
    #[error("Email subjectAltNames are not allowed")]
    EmailSanNotAllowed,
    /// An IP alternative name.
    #[error("IP subjectAltNames are not allowed")]
    IpSanNotAllowed,
    /// A URI alternative name.
    #[error("URI subjectAltNames are not allowed")]
    UriSanNotAllowed,
    /// A common name not starting `system:node:`.
    #[error("subject common name does not begin with system:node:")]
    CommonNameNotSystemNode,
    /// Usages other than upstream's two sets.
    #[error("usages did not match [client auth digital signature key encipherment]")]
    UsagesMismatch,
}

/// Upstream `ValidateKubeletClientCSR`, its checks in its order: the
/// organizations are exactly `[system:nodes]`; no DNS, email, IP or URI
/// alternative name; a common name starting `system:node:`; usages
/// exactly {digital signature, key encipherment, client auth} or, for
/// keys that cannot encipher, {digital signature, client auth}.
///
/// # Errors
/// The first check that fails.
pub fn validate_kubelet_client_csr(
    request: &CertificateRequest,
    usages: &BTreeSet<&str>,
) -> Result<(), KubeletClientCsrError> {
    use KubeletClientCsrError as E;
    if request.organizations != [NODES_GROUP] {
        return Err(E::OrganizationNotSystemNodes);
    }
    let checks = [
        (request.dns_names.is_empty(), E::DnsSanNotAllowed),
        (request.email_addresses.is_empty(), E::EmailSanNotAllowed),
        (request.ip_addresses.is_empty(), E::IpSanNotAllowed),
        (request.uris.is_empty(), E::UriSanNotAllowed),
        (request.common_name.starts_with(NODE_USER_PREFIX), E::CommonNameNotSystemNode),
    ];
    if let Some((_, error)) = checks.into_iter().find(|(ok, _)| !ok) {
        return Err(error);
    }
    let with_rsa = BTreeSet::from(["digital signature", "key encipherment", "client auth"]);
    let without_rsa = BTreeSet::from(["digital signature", "client auth"]);
    if *usages != with_rsa && *usages != without_rsa {
        return Err(E::UsagesMismatch);
    }
    Ok(())
}
