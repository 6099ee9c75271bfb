//! Who a request is: upstream's delegating authenticator
//! (`authenticatorfactory/delegating.go`), its methods tried in its order,
//! the first that knows the request winning:
//!
//! 1. front-proxy request headers (`X-Remote-User`, `X-Remote-Group`,
//!    `X-Remote-Extra-*` by default), believed only from a client
//!    certificate that chains to the request-header CA and whose CN is
//!    among the allowed names (any, when none are listed);
//! 2. a client certificate that chains to the client CA: the user is its
//!    CN, the groups its Os;
//! 3. a bearer token, asked of the API server with a TokenReview (no
//!    audiences, as kube-controller-manager sends none) and its answer,
//!    yes or no, cached for the TTL, keyed by the token's SHA-256.
//!
//! A method that fails (a certificate of an unknown authority, a token the
//! API server rejects or cannot review) fails the request (401) unless a
//! later method succeeds; a request no method knows is anonymous
//! (`system:anonymous` in `system:unauthenticated`). An authenticated user
//! is also put in `system:authenticated`.

use std::collections::BTreeMap;
use std::time::Duration;

use http::HeaderMap;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use kube::api::{Api, PostParams};
use rustls::pki_types::CertificateDer;

use super::cache::TtlCache;
use super::x509::{ClientCa, subject};

/// The anonymous user's name.
pub const ANONYMOUS: &str = "system:anonymous";
/// The anonymous user's group.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";

/// How long a TokenReview may take (upstream's `TokenRequestTimeout`).
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// Who made a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct User {
    /// The user name.
    pub name: String,
    /// The UID (empty when unknown).
    pub uid: String,
    /// The groups.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl User {
    /// The anonymous user.
    pub fn anonymous() -> User {
        User { name: ANONYMOUS.to_owned(), groups: vec![UNAUTHENTICATED.to_owned()], ..User::default() }
    }

    /// Adds `system:authenticated`, as upstream's authenticated-group adder.
    fn authenticated(mut self) -> User {
        let known = self.groups.iter().any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED);
        if self.name != ANONYMOUS && !known {
            self.groups.push(AUTHENTICATED.to_owned());
        }
        self
    }
}

/// Front-proxy authentication (`--requestheader-*`).
#[derive(Debug, Clone)]
pub struct RequestHeader {
    /// `--requestheader-client-ca-file`.
    pub ca: ClientCa,
    /// `--requestheader-allowed-names` (empty: any certificate of `ca`).
    pub allowed_names: Vec<String>,
    /// `--requestheader-username-headers`.
    pub username_headers: Vec<String>,
    /// `--requestheader-uid-headers`.
    pub uid_headers: Vec<String>,
    /// `--requestheader-group-headers`.
    pub group_headers: Vec<String>,
    /// `--requestheader-extra-headers-prefix`.
    pub extra_headers_prefixes: Vec<String>,
}

impl RequestHeader {
    /// The user the headers name, if the certificate may name one.
    fn authenticate(&self, headers: &HeaderMap, certs: &[CertificateDer<'static>]) -> Result<Option<User>, String> {
        if certs.is_empty() {
            return Ok(None);
        }
        self.ca.verify(certs)?;
        let cn = subject(&certs[0]).common_name;
        if !self.allowed_names.is_empty() && !self.allowed_names.contains(&cn) {
            return Err(format!("x509: subject with cn={cn} is not in the allowed list"));
        }
        let first = |names: &[String]| {
            names.iter().find_map(|n| headers.get(n).and_then(|v| v.to_str().ok()).filter(|v| !v.is_empty()))
        };
        let Some(name) = first(&self.username_headers) else {
            return Ok(None);
        };
        let groups = self
            .group_headers
            .iter()
            .flat_map(|n| headers.get_all(n.as_str()).iter())
            .filter_map(|v| v.to_str().ok().filter(|v| !v.is_empty()).map(str::to_owned))
            .collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for prefix in &self.extra_headers_prefixes {
            let prefix = prefix.to_ascii_lowercase();
            for (header, value) in headers {
                // Header names are kept lower-case.
                if let (Some(key), Ok(value)) = (header.as_str().strip_prefix(&prefix), value.to_str()) {
                    extra.entry(unescape(key)).or_default().push(value.to_owned());
                }
            }
        }
        Ok(Some(User {
            name: name.to_owned(),
            uid: first(&self.uid_headers).unwrap_or_default().to_owned(),
            groups,
            extra,
        }))
    }
}

/// `%`-decodes an extra key as Go's `url.PathUnescape`; a malformed one is
/// kept as it is.
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            match key.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return key.to_owned(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_owned())
}

/// Bearer tokens checked with TokenReviews, answers cached.
pub struct TokenReviewer {
    client: kube::Client,
    ttl: Duration,
    /// Authenticated users (`Some`) and rejections (`None`) by the token's
    /// SHA-256; failed reviews are not kept.
    cache: TtlCache<Vec<u8>, Option<User>>,
}

impl std::fmt::Debug for TokenReviewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenReviewer").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl TokenReviewer {
    /// Reviews through `client`, answers kept for `ttl`
    /// (`--authentication-token-webhook-cache-ttl`).
    pub fn new(client: kube::Client, ttl: Duration) -> TokenReviewer {
        TokenReviewer { client, ttl, cache: TtlCache::default() }
    }

    /// The token's user, `None` when the API server says it is not valid.
    async fn review(&self, token: &str) -> Result<Option<User>, String> {
        let key = ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref().to_vec();
        if let Some(known) = self.cache.get(&key) {
            return Ok(known);
        }
        let review = TokenReview {
            spec: TokenReviewSpec { token: token.to_owned(), audiences: None },
            ..TokenReview::default()
        };
        let api: Api<TokenReview> = Api::all(self.client.clone());
        let answer = tokio::time::timeout(REVIEW_TIMEOUT, api.create(&PostParams::default(), &review))
            .await
            .map_err(|_| "TokenReview timed out".to_owned())?
            .map_err(|e| format!("TokenReview failed: {e}"))?;
        let status = answer.status.unwrap_or_default();
        let user = match (status.authenticated, status.user) {
            (Some(true), Some(info)) => Some(user_info(info)),
            _ => match status.error.filter(|e| !e.is_empty()) {
                Some(error) => return Err(error),
                None => None,
            },
        };
        self.cache.insert(key, user.clone(), self.ttl);
        Ok(user)
    }
}

fn user_info(info: UserInfo) -> User {
    User {
        name: info.username.unwrap_or_default(),
        uid: info.uid.unwrap_or_default(),
        groups: info.groups.unwrap_or_default(),
        extra: info.extra.unwrap_or_default(),
    }
}

/// The token of an `Authorization: Bearer <token>` header, as upstream's
/// bearer-token authenticator reads it.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?.trim();
    let mut parts = value.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The delegating authenticator.
#[derive(Debug, Default)]
pub struct Authenticator {
    /// Front-proxy headers, when a request-header CA is known.
    pub request_header: Option<RequestHeader>,
    /// Client certificates, when a client CA is known.
    pub client_ca: Option<ClientCa>,
    /// Bearer tokens, when an authentication kubeconfig is known.
    pub tokens: Option<TokenReviewer>,
}

impl Authenticator {
    /// Who the request is.
    ///
    /// # Errors
    ///
    /// Why it is not authenticated (answered 401), each method's reason.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        certs: &[CertificateDer<'static>],
    ) -> Result<User, Vec<String>> {
        let mut failures = Vec::new();
        if let Some(request_header) = &self.request_header {
            match request_header.authenticate(headers, certs) {
                Ok(Some(user)) => return Ok(user.authenticated()),
                Ok(None) => {}
                Err(e) => failures.push(e),
            }
        }
        if let (Some(ca), Some(leaf)) = (&self.client_ca, certs.first()) {
            match ca.verify(certs) {
                Ok(()) => {
                    let subject = subject(leaf);
                    if !subject.common_name.is_empty() {
                        let user = User { name: subject.common_name, groups: subject.organizations, ..User::default() };
                        return Ok(user.authenticated());
                    }
                }
                Err(e) => failures.push(e),
            }
        }
        if let (Some(tokens), Some(token)) = (&self.tokens, bearer_token(headers)) {
            match tokens.review(token).await {
                Ok(Some(user)) => return Ok(user.authenticated()),
                Ok(None) => failures.push("invalid bearer token".to_owned()),
                Err(e) => failures.push(e),
            }
        }
        if failures.is_empty() { Ok(User::anonymous()) } else { Err(failures) }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::super::x509::tests::signed_client;
    use super::*;

    fn front_proxy(allowed: &[&str]) -> (RequestHeader, CertificateDer<'static>) {
        let (ca, cert) = signed_client("front-proxy-client", &[]);
        let request_header = RequestHeader {
            ca: ClientCa::from_pem(ca.as_bytes()).unwrap(),
            allowed_names: allowed.iter().map(|s| (*s).to_owned()).collect(),
            username_headers: vec!["X-Remote-User".to_owned()],
            uid_headers: Vec::new(),
            group_headers: vec!["X-Remote-Group".to_owned()],
            extra_headers_prefixes: vec!["X-Remote-Extra-".to_owned()],
        };
        (request_header, cert)
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[tokio::test]
    async fn front_proxy_headers_name_the_user_only_from_a_trusted_certificate() {
        let (request_header, cert) = front_proxy(&[]);
        let authn = Authenticator { request_header: Some(request_header), ..Authenticator::default() };
        let sent = headers(&[
            ("x-remote-user", "alice"),
            ("x-remote-group", "devs"),
            ("x-remote-group", "ops"),
            ("x-remote-extra-scopes", "view"),
            ("x-remote-extra-a%2fb", "1"),
        ]);
        let user = authn.authenticate(&sent, &[cert]).await.unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["devs", "ops", AUTHENTICATED]);
        assert_eq!(user.extra.get("scopes").unwrap(), &["view"]);
        assert_eq!(user.extra.get("a/b").unwrap(), &["1"]);
        assert_eq!(authn.authenticate(&sent, &[]).await.unwrap(), User::anonymous(), "ignored without a certificate");
    }

    #[tokio::test]
    async fn a_certificate_outside_the_allowed_names_fails() {
        let (request_header, cert) = front_proxy(&["aggregator"]);
        let authn = Authenticator { request_header: Some(request_header), ..Authenticator::default() };
        let refused = authn.authenticate(&headers(&[("x-remote-user", "alice")]), &[cert]).await.unwrap_err();
        assert_eq!(refused, ["x509: subject with cn=front-proxy-client is not in the allowed list"]);
    }

    #[tokio::test]
    async fn a_client_certificate_is_its_cn_in_its_organizations() {
        let (ca, cert) = signed_client("kubernetes-admin", &["system:masters"]);
        let authn =
            Authenticator { client_ca: Some(ClientCa::from_pem(ca.as_bytes()).unwrap()), ..Authenticator::default() };
        let user = authn.authenticate(&HeaderMap::new(), &[cert]).await.unwrap();
        assert_eq!(
            (user.name.as_str(), user.groups),
            ("kubernetes-admin", vec!["system:masters".into(), AUTHENTICATED.into()])
        );
        let (_, stranger) = signed_client("mallory", &["system:masters"]);
        assert!(authn.authenticate(&HeaderMap::new(), &[stranger]).await.is_err(), "an unknown authority fails");
    }

    #[test]
    fn bearer_tokens_are_read_as_upstream_reads_them() {
        assert_eq!(bearer_token(&headers(&[("authorization", "Bearer abc")])), Some("abc"));
        assert_eq!(bearer_token(&headers(&[("authorization", "bearer abc extra")])), Some("abc"));
        assert_eq!(bearer_token(&headers(&[("authorization", "Bearer  abc")])), None, "a space before the token");
        assert_eq!(bearer_token(&headers(&[("authorization", "Basic abc")])), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }
}
