//! Why the flags do not make a runnable configuration ([`Error`]), and the
//! [`Result`] of deriving a [`Config`](super::Config).

/// Result of deriving a [`Config`](super::Config).
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the flags do not make a runnable configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A `--controllers` entry names no upstream controller (upstream's message).
    #[error("{0:?} is not in the list of known controllers")]
    UnknownController(String),
    /// `--feature-gates` sets gates that change kcm-rs's controllers to values
    /// kcm-rs does not implement.
    #[error(
        "feature {} {} {} not implemented by kcm-rs; kcm-rs runs with {}: remove {} from --feature-gates or set {} \
         to {}",
        if requested.len() == 1 { "gate" } else { "gates" },
        requested.join(", "),
        if requested.len() == 1 { "is" } else { "are" },
        honoured.join(", "),
        if requested.len() == 1 { "it" } else { "them" },
        if requested.len() == 1 { "it" } else { "them" },
        if requested.len() == 1 { "that value" } else { "those values" }
    )]
    UnimplementedFeatureGates {
        /// Each refused gate as resolved (`Name=value`, and what set it).
        requested: Vec<String>,
        /// The value kcm-rs runs each of them with (`Name=value`).
        honoured: Vec<String>,
    },
    /// `--leader-elect-resource-lock` is not `leases` (upstream's message).
    #[error("resourceLock value must be \"leases\"")]
    ResourceLock(String),
    /// A leader-election duration is zero.
    #[error("--{0} must be greater than zero")]
    NonPositiveDuration(&'static str),
    /// Lease duration not above renew deadline (client-go's rule).
    #[error(
        "--leader-elect-lease-duration ({lease}) must be greater than --leader-elect-renew-deadline ({renew}): \
         LeaseDuration must be greater than RenewDeadline"
    )]
    LeaseNotAboveRenew {
        /// The lease duration, Go-formatted.
        lease: String,
        /// The renew deadline, Go-formatted.
        renew: String,
    },
    /// Renew deadline not above 1.2 × retry period (client-go's rule).
    #[error(
        "--leader-elect-renew-deadline ({renew}) must be greater than 1.2 x --leader-elect-retry-period \
         ({retry}): renewDeadline must be greater than retryPeriod*JitterFactor"
    )]
    RenewNotAboveRetry {
        /// The renew deadline, Go-formatted.
        renew: String,
        /// The retry period, Go-formatted.
        retry: String,
    },
    /// A leader-election resource name or namespace is empty.
    #[error("--{0} is required when leader election is enabled")]
    Required(&'static str),
    /// A worker-count flag is not positive.
    #[error("--{flag} must be greater than 0, got {value}")]
    NonPositiveWorkers {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: i32,
    },
    /// A count or rate flag is negative.
    #[error("--{flag} must not be negative, got {value}")]
    Negative {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: String,
    },
    /// QPS is set but burst is not positive (client-go's message).
    #[error("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")]
    Burst,
    /// A value outside the range upstream's option validation allows.
    #[error("{flag} must not be {bound} than {limit}, but got {value}")]
    OutOfRange {
        /// The flag, without dashes.
        flag: &'static str,
        /// `less` or `more`.
        bound: &'static str,
        /// The bound.
        limit: i32,
        /// What was given.
        value: i32,
    },
    /// Flags upstream's option validation refuses together (its message).
    #[error("{0}")]
    Invalid(String),
    /// A list flag holds an empty value (upstream's request-header check).
    #[error("empty value in {0:?}")]
    EmptyValue(&'static str),
    /// `--requestheader-uid-headers` as upstream refuses it.
    #[error("{0}")]
    UidHeaders(&'static str),
    /// Only one of the TLS files was given.
    #[error("--tls-cert-file and --tls-private-key-file must be given together")]
    TlsPair,
    /// `--use-service-account-credentials` with `--sim`: kube-sim has no
    /// TokenRequest API and no authentication.
    #[error("--use-service-account-credentials needs a real API server: kube-sim (--sim) issues no tokens")]
    SimServiceAccounts,
    /// A controller's flags are not in the parsed command line (it was
    /// parsed by a command built without them).
    #[error("cannot read {flags} from the command line: {message}")]
    Unread {
        /// The flags' type.
        flags: &'static str,
        /// clap's error.
        message: String,
    },
}
