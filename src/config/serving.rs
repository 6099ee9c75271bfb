//! The secure port's flags: serving (`--secure-port`, `--bind-address`,
//! the certificate and TLS parameters), then authentication and
//! authorization, spelled, defaulted and helped as kube-controller-manager
//! 1.37's (`SecureServingOptions`, `DelegatingAuthenticationOptions` and
//! `DelegatingAuthorizationOptions` with kube-controller-manager's
//! optional kubeconfigs), and their conversion into the runtime's
//! [`ServingSettings`]. What they mean at run time is
//! `kcm_runtime::server`'s.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::{ArgAction, Args};
use kcm_runtime::server::{
    DEFAULT_ALWAYS_ALLOW_GROUPS, DelegationSettings, RequestHeaderSettings, TlsSettings, TlsSource,
};

use super::{Error, GoDuration, Result, ServingSettings, parse_go_bool};

/// `--secure-port` and the flags of what it serves.
#[derive(Debug, Clone, Args)]
pub struct ServingFlags {
    // --- secure serving ---
    /// The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.
    /// (kcm-rs serves /healthz, /livez, /readyz and /metrics here.)
    #[arg(
        long,
        value_name = "int",
        default_value = "10257",
        value_parser = parse_secure_port,
        help_heading = "Secure serving flags"
    )]
    pub secure_port: u16,

    /// The IP address on which to listen for the --secure-port port. The associated interface(s) must be
    /// reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address (0.0.0.0
    /// or ::), all interfaces and IP address families will be used.
    #[arg(
        long,
        value_name = "ip",
        default_value = "0.0.0.0",
        value_parser = parse_bind_address,
        help_heading = "Secure serving flags"
    )]
    pub bind_address: IpAddr,

    /// The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided,
    /// this flag will be ignored.
    #[arg(long, value_name = "string", help_heading = "Secure serving flags")]
    pub cert_dir: Option<PathBuf>,

    /// File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server
    /// cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not provided, a
    /// self-signed certificate and key are generated for the public address and saved to the directory specified
    /// by --cert-dir.
    #[arg(long, value_name = "string", help_heading = "Secure serving flags")]
    pub tls_cert_file: Option<PathBuf>,

    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long, value_name = "string", help_heading = "Secure serving flags")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Comma-separated list of cipher suites for the server. If omitted, the default Go cipher suites will be
    /// used.
    /// Preferred values: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256,
    /// TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    /// TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    /// TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    /// TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
    /// TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,
    /// TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256.
    /// Insecure values: TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, TLS_ECDHE_ECDSA_WITH_RC4_128_SHA,
    /// TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, TLS_ECDHE_RSA_WITH_RC4_128_SHA,
    /// TLS_RSA_WITH_3DES_EDE_CBC_SHA, TLS_RSA_WITH_AES_128_CBC_SHA, TLS_RSA_WITH_AES_128_CBC_SHA256,
    /// TLS_RSA_WITH_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_256_CBC_SHA, TLS_RSA_WITH_AES_256_GCM_SHA384,
    /// TLS_RSA_WITH_RC4_128_SHA. (kcm-rs: TLS via rustls, which has no CBC, RC4, 3DES or RSA key exchange
    /// suites: naming one is an error; as in Go, the list chooses the TLS 1.2 suites and the TLS 1.3 ones are
    /// always offered.)
    #[arg(
        long,
        value_name = "strings",
        value_delimiter = ',',
        action = ArgAction::Append,
        help_heading = "Secure serving flags"
    )]
    pub tls_cipher_suites: Vec<String>,

    /// Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13
    /// (kcm-rs serves TLS 1.2 and 1.3 only: VersionTLS10 and VersionTLS11 allow what VersionTLS12 allows.)
    #[arg(long, value_name = "string", help_heading = "Secure serving flags")]
    pub tls_min_version: Option<String>,

    // --- authentication ---
    /// kubeconfig file pointing at the 'core' kubernetes server with enough rights to create
    /// tokenreviews.authentication.k8s.io. This is optional. If empty, all token requests are considered to be
    /// anonymous and no client CA is looked up in the cluster.
    #[arg(long, value_name = "string", help_heading = "Authentication flags")]
    pub authentication_kubeconfig: Option<PathBuf>,

    /// If false, the authentication-kubeconfig will be used to lookup missing authentication configuration from
    /// the cluster.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "false",
        hide_default_value = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Authentication flags"
    )]
    pub authentication_skip_lookup: bool,

    /// The duration to cache responses from the webhook token authenticator.
    #[arg(long, value_name = "duration", default_value = "10s", help_heading = "Authentication flags")]
    pub authentication_token_webhook_cache_ttl: GoDuration,

    /// If true, failures to look up missing authentication configuration from the cluster are not considered
    /// fatal. Note that this can result in authentication that treats all requests as anonymous.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "false",
        hide_default_value = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Authentication flags"
    )]
    pub authentication_tolerate_lookup_failure: bool,

    /// If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file
    /// is authenticated with an identity corresponding to the CommonName of the client certificate.
    #[arg(long, value_name = "string", help_heading = "Authentication flags")]
    pub client_ca_file: Option<PathBuf>,

    /// List of client certificate common names to allow to provide usernames in headers specified by
    /// --requestheader-username-headers. If empty, any client certificate validated by the authorities in
    /// --requestheader-client-ca-file is allowed.
    #[arg(long, value_name = "strings", value_delimiter = ',', action = ArgAction::Append,
        help_heading = "Authentication flags")]
    pub requestheader_allowed_names: Vec<String>,

    /// Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames
    /// in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization
    /// being already done for incoming requests.
    #[arg(long, value_name = "string", help_heading = "Authentication flags")]
    pub requestheader_client_ca_file: Option<PathBuf>,

    /// List of request header prefixes to inspect. X-Remote-Extra- is suggested.
    #[arg(long, value_name = "strings", value_delimiter = ',', action = ArgAction::Append,
        default_value = "x-remote-extra-", help_heading = "Authentication flags")]
    pub requestheader_extra_headers_prefix: Vec<String>,

    /// List of request headers to inspect for groups. X-Remote-Group is suggested.
    #[arg(long, value_name = "strings", value_delimiter = ',', action = ArgAction::Append,
        default_value = "x-remote-group", help_heading = "Authentication flags")]
    pub requestheader_group_headers: Vec<String>,

    /// List of request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the RemoteRequestHeaderUID
    /// feature to be enabled.
    #[arg(long, value_name = "strings", value_delimiter = ',', action = ArgAction::Append,
        help_heading = "Authentication flags")]
    pub requestheader_uid_headers: Vec<String>,

    /// List of request headers to inspect for usernames. X-Remote-User is common.
    #[arg(long, value_name = "strings", value_delimiter = ',', action = ArgAction::Append,
        default_value = "x-remote-user", help_heading = "Authentication flags")]
    pub requestheader_username_headers: Vec<String>,

    // --- authorization ---
    /// A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the 'core'
    /// kubernetes server.
    #[arg(long, value_name = "strings", value_delimiter = ',', action = ArgAction::Append,
        default_value = "/healthz,/readyz,/livez", help_heading = "Authorization flags")]
    pub authorization_always_allow_paths: Vec<String>,

    /// kubeconfig file pointing at the 'core' kubernetes server with enough rights to create
    /// subjectaccessreviews.authorization.k8s.io. This is optional. If empty, all requests not skipped by
    /// authorization are forbidden.
    #[arg(long, value_name = "string", help_heading = "Authorization flags")]
    pub authorization_kubeconfig: Option<PathBuf>,

    /// The duration to cache 'authorized' responses from the webhook authorizer.
    #[arg(long, value_name = "duration", default_value = "10s", help_heading = "Authorization flags")]
    pub authorization_webhook_cache_authorized_ttl: GoDuration,

    /// The duration to cache 'unauthorized' responses from the webhook authorizer.
    #[arg(long, value_name = "duration", default_value = "10s", help_heading = "Authorization flags")]
    pub authorization_webhook_cache_unauthorized_ttl: GoDuration,
}

impl ServingFlags {
    /// The serving settings; `None` with `--secure-port=0`.
    ///
    /// # Errors
    ///
    /// [`Error::TlsPair`]; [`Error::EmptyValue`] and [`Error::UidHeaders`]
    /// as upstream's request-header validation.
    pub fn settings(&self, uid_headers_enabled: bool) -> Result<Option<ServingSettings>> {
        let source = match (&self.tls_cert_file, &self.tls_private_key_file) {
            (Some(cert), Some(key)) => TlsSource::Files { cert: cert.clone(), key: key.clone() },
            (None, None) => {
                TlsSource::SelfSigned { cert_dir: self.cert_dir.clone().filter(|d| !d.as_os_str().is_empty()) }
            }
            _ => return Err(Error::TlsPair),
        };
        let list = |flag: &'static str, values: &[String]| -> Result<Vec<String>> {
            // pflag reads an empty value as an empty list.
            if values.iter().all(String::is_empty) {
                return Ok(Vec::new());
            }
            if values.iter().any(|v| v.trim().is_empty()) {
                return Err(Error::EmptyValue(flag));
            }
            Ok(values.to_vec())
        };
        let uid_headers = list("requestheader-uid-headers", &self.requestheader_uid_headers)?;
        if !uid_headers.is_empty() && !uid_headers_enabled {
            return Err(Error::UidHeaders(
                "--requestheader-uid-headers requires the \"RemoteRequestHeaderUID\" feature to be enabled",
            ));
        }
        if !uid_headers.is_empty() && !uid_headers.iter().any(|h| h.eq_ignore_ascii_case("X-Remote-Uid")) {
            return Err(Error::UidHeaders(
                "--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API \
                 aggregation will not work",
            ));
        }
        let request_header = RequestHeaderSettings {
            client_ca_file: self.requestheader_client_ca_file.clone().filter(|p| !p.as_os_str().is_empty()),
            allowed_names: list("requestheader-allowed-names", &self.requestheader_allowed_names)?,
            username_headers: list("requestheader-username-headers", &self.requestheader_username_headers)?,
            uid_headers,
            group_headers: list("requestheader-group-headers", &self.requestheader_group_headers)?,
            extra_headers_prefixes: list(
                "requestheader-extra-headers-prefix",
                &self.requestheader_extra_headers_prefix,
            )?,
        };
        let delegation = DelegationSettings {
            authentication_kubeconfig: self.authentication_kubeconfig.clone().filter(|p| !p.as_os_str().is_empty()),
            skip_lookup: self.authentication_skip_lookup,
            tolerate_lookup_failure: self.authentication_tolerate_lookup_failure,
            token_cache_ttl: self.authentication_token_webhook_cache_ttl.0,
            client_ca_file: self.client_ca_file.clone().filter(|p| !p.as_os_str().is_empty()),
            request_header,
            authorization_kubeconfig: self.authorization_kubeconfig.clone().filter(|p| !p.as_os_str().is_empty()),
            always_allow_paths: list("authorization-always-allow-paths", &self.authorization_always_allow_paths)?,
            always_allow_groups: DEFAULT_ALWAYS_ALLOW_GROUPS.iter().map(|g| (*g).to_owned()).collect(),
            authorized_ttl: self.authorization_webhook_cache_authorized_ttl.0,
            unauthorized_ttl: self.authorization_webhook_cache_unauthorized_ttl.0,
        };
        let tls = TlsSettings {
            source,
            cipher_suites: list("tls-cipher-suites", &self.tls_cipher_suites)?,
            min_version: self.tls_min_version.clone().filter(|v| !v.is_empty()),
        };
        Ok((self.secure_port != 0).then(|| ServingSettings {
            addr: SocketAddr::new(self.bind_address, self.secure_port),
            tls,
            delegation,
        }))
    }
}

/// `--secure-port`: 0 (off) to 65535, with upstream's message.
fn parse_secure_port(s: &str) -> Result<u16, String> {
    s.parse::<i64>().ok().and_then(|n| u16::try_from(n).ok()).ok_or_else(|| {
        format!("--secure-port {s} must be between 0 and 65535, inclusive. 0 for turning off secure port")
    })
}

/// `--bind-address`: an IP address; blank means all interfaces.
fn parse_bind_address(s: &str) -> Result<IpAddr, String> {
    if s.is_empty() {
        return Ok(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    }
    s.parse().map_err(|_| format!("invalid IP address {s:?}"))
}
