//! Upstream's `TestHandle` (a recognizer that does or does not know the
//! request, a review that does or does not allow it) and
//! `TestRecognizers` (the good, bad and other-user requests, each with and
//! without key encipherment), then the requests left alone and the
//! reviews' contents.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequestSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::testing::csr_pem;

// === utils ===

/// Upstream's `csrBuilder`.
#[derive(Debug, Clone)]
struct Builder {
    cn: &'static str,
    orgs: Vec<&'static str>,
    requestor: &'static str,
    usages: Vec<&'static str>,
    dns: Vec<&'static str>,
    signer_name: &'static str,
}

impl Builder {
    /// `testRecognizer`'s good request, with key encipherment or not.
    fn good(key_encipherment: bool) -> Self {
        let usages = if key_encipherment {
            vec!["key encipherment", "digital signature", "client auth"]
        } else {
            vec!["digital signature", "client auth"]
        };
        Self {
            cn: "system:node:foo",
            orgs: vec!["system:nodes"],
            requestor: "system:node:foo",
            usages,
            dns: Vec::new(),
            signer_name: KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
        }
    }

    /// Upstream's `makeFancyTestCsr`.
    fn csr(&self) -> CertificateSigningRequest {
        CertificateSigningRequest {
            metadata: ObjectMeta { name: Some("csr-1".into()), ..ObjectMeta::default() },
            spec: CertificateSigningRequestSpec {
                username: Some(self.requestor.into()),
                usages: Some(self.usages.iter().map(|u| (*u).to_owned()).collect()),
                signer_name: self.signer_name.into(),
                request: ByteString(csr_pem(self.cn, &self.orgs, &self.dns, &[]).into_bytes()),
                ..CertificateSigningRequestSpec::default()
            },
            ..CertificateSigningRequest::default()
        }
    }
}

/// Upstream's `makeTestCsr`.
fn test_csr() -> CertificateSigningRequest {
    Builder { cn: "test-cert", orgs: vec![], requestor: "", usages: vec![], dns: vec![], signer_name: "" }.csr()
}

/// Whether `recognize` knows the request `edit` makes of the good one,
/// with and without key encipherment (both must agree).
fn recognizes(edit: fn(&mut Builder), recognize: fn(&CertificateSigningRequest, &CertificateRequest) -> bool) -> bool {
    let answers: Vec<bool> = [true, false]
        .into_iter()
        .map(|key_encipherment| {
            let mut b = Builder::good(key_encipherment);
            edit(&mut b);
            let csr = b.csr();
            let request = csr::parse_csr(&csr.spec.request.0).expect("parsed");
            recognize(&csr, &request)
        })
        .collect();
    assert_eq!(answers[0], answers[1], "with and without key encipherment disagree");
    answers[0]
}

/// The steps of one request through reviews answering `allowed`, in
/// order (a review's step, then the final one).
fn run(csr: &CertificateSigningRequest, recognizers: &[Recognizer], allowed: &[bool]) -> Vec<Step> {
    let mut approval = Approval::start(csr, recognizers).expect("parsed");
    let mut answers = allowed.iter();
    let mut steps = Vec::new();
    loop {
        let step = approval.next();
        steps.push(step.clone());
        match step {
            Step::Review(_) => approval.reviewed(*answers.next().expect("an answer per review")),
            _ => return steps,
        }
    }
}

static TESTER: [Recognizer; 1] = [Recognizer { recognize: |_, _| true, subresource: "baz", success_message: "tester" }];
static NOBODY: [Recognizer; 1] =
    [Recognizer { recognize: |_, _| false, subresource: "baz", success_message: "tester" }];

// === TestHandle ===

#[test]
fn handle_not_recognized_makes_no_call_whatever_the_review() {
    for allowed in [false, true] {
        assert_eq!(run(&test_csr(), &NOBODY, &[allowed]), [Step::LeaveAlone]);
    }
}

#[test]
fn handle_recognized_not_allowed_makes_one_review_and_an_error() {
    let steps = run(&test_csr(), &TESTER, &[false]);
    assert!(matches!(steps[0], Step::Review(_)), "{steps:?}");
    let Step::NotApproved(error) = &steps[1] else { panic!("{steps:?}") };
    assert!(error.is_ignorable());
    assert_eq!(error.to_string(), r#"recognized csr "csr-1" as [baz] but subject access review was not approved"#);
}

#[test]
fn handle_recognized_allowed_reviews_then_approves_with_the_condition() {
    let steps = run(&test_csr(), &TESTER, &[true]);
    assert_eq!(steps.len(), 2, "{steps:?}");
    let Step::Approve(csr) = &steps[1] else { panic!("{steps:?}") };
    let conditions = csr.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].type_, "Approved");
    assert_eq!(conditions[0].status, "True");
    assert_eq!(conditions[0].reason.as_deref(), Some("AutoApproved"));
    assert_eq!(conditions[0].message.as_deref(), Some("tester"));
}

// === TestRecognizers ===

#[test]
fn recognizers_good_case() {
    assert!(recognizes(|_| {}, is_node_client_cert));
    assert!(recognizes(|_| {}, is_self_node_client_cert));
}

#[test]
fn recognizers_bad_cases() {
    let bad: [fn(&mut Builder); 6] = [
        |b| b.cn = "mike",
        |b| b.orgs = vec![],
        |b| b.orgs = vec!["system:master"],
        |b| b.usages.push("server auth"),
        |b| b.signer_name = "example.com/not-correct",
        |b| b.signer_name = "kubernetes.io/kubelet-serving",
    ];
    for edit in bad {
        assert!(!recognizes(edit, is_node_client_cert));
        assert!(!recognizes(edit, is_self_node_client_cert));
    }
}

#[test]
fn recognizers_cn_different_from_the_requestor() {
    let different: [fn(&mut Builder); 2] = [|b| b.requestor = "joe", |b| b.cn = "system:node:bar"];
    for edit in different {
        assert!(recognizes(edit, is_node_client_cert));
        assert!(!recognizes(edit, is_self_node_client_cert));
    }
}

// === beyond upstream's tables ===

#[test]
fn a_node_renewing_its_own_certificate_is_reviewed_as_selfnodeclient_first() {
    let csr = Builder::good(true).csr();
    let steps = run(&csr, &RECOGNIZERS, &[true]);
    let Step::Review(review) = &steps[0] else { panic!("{steps:?}") };
    let attributes = review.spec.resource_attributes.clone().expect("resource attributes");
    assert_eq!(attributes.subresource.as_deref(), Some("selfnodeclient"));
    let Step::Approve(approved) = &steps[1] else { panic!("{steps:?}") };
    let condition = &approved.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default()[0];
    assert_eq!(
        condition.message.as_deref(),
        Some("Auto approving self kubelet client certificate after SubjectAccessReview.")
    );
}

#[test]
fn a_refused_self_review_falls_back_to_nodeclient_and_both_are_named() {
    let csr = Builder::good(true).csr();
    let steps = run(&csr, &RECOGNIZERS, &[false, true]);
    let Step::Approve(approved) = &steps[2] else { panic!("{steps:?}") };
    let condition = &approved.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default()[0];
    assert_eq!(
        condition.message.as_deref(),
        Some("Auto approving kubelet client certificate after SubjectAccessReview.")
    );
    let steps = run(&csr, &RECOGNIZERS, &[false, false]);
    assert_eq!(
        steps[2],
        Step::NotApproved(Error::NotApproved { name: "csr-1".into(), tried: vec!["selfnodeclient", "nodeclient"] })
    );
}

#[test]
fn the_review_asks_as_the_requesting_user() {
    let mut csr = Builder::good(true).csr();
    csr.spec.uid = Some("uid-1".into());
    csr.spec.groups = Some(vec!["system:bootstrappers".into(), "system:authenticated".into()]);
    csr.spec.extra = Some(BTreeMap::from([("scopes".to_owned(), vec!["a".to_owned()])]));
    let review = subject_access_review(&csr, "nodeclient");
    assert_eq!(review.spec.user.as_deref(), Some("system:node:foo"));
    assert_eq!(review.spec.uid.as_deref(), Some("uid-1"));
    assert_eq!(review.spec.groups, csr.spec.groups);
    assert_eq!(review.spec.extra, csr.spec.extra);
    let attributes = review.spec.resource_attributes.expect("resource attributes");
    assert_eq!(
        (attributes.group.as_deref(), attributes.resource.as_deref(), attributes.verb.as_deref()),
        (Some("certificates.k8s.io"), Some("certificatesigningrequests"), Some("create"))
    );
    assert_eq!((attributes.subresource.as_deref(), attributes.version.as_deref()), (Some("nodeclient"), Some("*")));
}

#[test]
fn issued_approved_or_denied_requests_are_left_alone_unparsed() {
    let mut csr = Builder::good(true).csr();
    csr.spec.request = ByteString(b"not pem".to_vec());
    for condition in ["Approved", "Denied"] {
        let mut decided = csr.clone();
        decided.status = Some(CertificateSigningRequestStatus {
            conditions: Some(vec![CertificateSigningRequestCondition {
                type_: condition.into(),
                status: "False".into(),
                ..CertificateSigningRequestCondition::default()
            }]),
            ..CertificateSigningRequestStatus::default()
        });
        assert_eq!(run(&decided, &RECOGNIZERS, &[]), [Step::LeaveAlone], "{condition}");
    }
    let mut issued = csr.clone();
    issued.status =
        Some(CertificateSigningRequestStatus { certificate: Some(ByteString(b"x".to_vec())), conditions: None });
    assert_eq!(run(&issued, &RECOGNIZERS, &[]), [Step::LeaveAlone]);
    let error = Approval::start(&csr, &RECOGNIZERS).expect_err("unparsable");
    assert!(!error.is_ignorable());
    assert_eq!(error.to_string(), r#"unable to parse csr "csr-1": PEM block type must be CERTIFICATE REQUEST"#);
}

#[test]
fn kubelet_client_validation_reports_upstreams_first_failure() {
    use KubeletClientCsrError as E;
    let request = |cn: &str, orgs: &[&str], dns: &[&str]| CertificateRequest {
        common_name: cn.to_owned(),
        organizations: orgs.iter().map(|o| (*o).to_owned()).collect(),
        dns_names: dns.iter().map(|d| (*d).to_owned()).collect(),
        ..CertificateRequest::default()
    };
    let usages = BTreeSet::from(["digital signature", "client auth"]);
    let check = |r: &CertificateRequest, u: &BTreeSet<&str>| validate_kubelet_client_csr(r, u).err();
    assert_eq!(check(&request("system:node:a", &["system:nodes"], &[]), &usages), None);
    assert_eq!(check(&request("a", &["system:nodes", "x"], &["d"]), &usages), Some(E::OrganizationNotSystemNodes));
    assert_eq!(check(&request("a", &["system:nodes"], &["d"]), &usages), Some(E::DnsSanNotAllowed));
    assert_eq!(check(&request("a", &["system:nodes"], &[]), &usages), Some(E::CommonNameNotSystemNode));
    let signing_only = BTreeSet::from(["digital signature"]);
    let error = check(&request("system:node:a", &["system:nodes"], &[]), &signing_only);
    assert_eq!(
        error.map(|e| e.to_string()).as_deref(),
        Some("usages did not match [client auth digital signature key encipherment]")
    );
}
