//! The service account token controller's settings (upstream's
//! `options/serviceaccountcontroller.go`, SAControllerOptions):
//! `--concurrent-serviceaccount-token-syncs`,
//! `--service-account-private-key-file` and `--root-ca-file`, which the
//! root CA publisher reads too, as upstream's reads SAController's.

use std::path::PathBuf;

use super::{ControllerFlags, workers};
use crate::config::Result;

/// The service account token controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ServiceAccountTokenFlags {
    /// The number of service account token objects that are allowed to sync concurrently. Larger number = more
    /// responsive token generation, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Serviceaccount controller flags")]
    pub concurrent_serviceaccount_token_syncs: i32,

    /// Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens.
    #[arg(long, value_name = "string", help_heading = "Serviceaccount controller flags")]
    pub service_account_private_key_file: Option<PathBuf>,

    /// If set, this root certificate authority will be included in service account's token secret. This must be a
    /// valid PEM-encoded CA bundle. (kcm-rs: the bundle root-ca-certificate-publisher-controller publishes.)
    #[arg(long, value_name = "string", help_heading = "Serviceaccount controller flags")]
    pub root_ca_file: Option<PathBuf>,
}

/// The service account token controller's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccountTokenSettings {
    /// `--concurrent-serviceaccount-token-syncs`.
    pub workers: usize,
    /// `--service-account-private-key-file`: the key token Secrets are
    /// signed with (none: serviceaccount-token-controller does not start).
    pub private_key_file: Option<PathBuf>,
    /// `--root-ca-file`: the bundle the root CA publisher publishes and
    /// token Secrets carry (else the CA the client trusts).
    pub root_ca_file: Option<PathBuf>,
}

impl ControllerFlags for ServiceAccountTokenFlags {
    type Settings = ServiceAccountTokenSettings;

    fn settings(self) -> Result<ServiceAccountTokenSettings> {
        Ok(ServiceAccountTokenSettings {
            workers: workers("concurrent-serviceaccount-token-syncs", self.concurrent_serviceaccount_token_syncs)?,
            private_key_file: self.service_account_private_key_file,
            root_ca_file: self.root_ca_file,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, command, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<ServiceAccountTokenFlags>(&[("concurrent-serviceaccount-token-syncs", "5")]);
        let f = flags::<ServiceAccountTokenFlags>(&[]).unwrap();
        assert_eq!(f.concurrent_serviceaccount_token_syncs.to_string(), "5");
        let cmd = command::<ServiceAccountTokenFlags>();
        for arg in ["service-account-private-key-file", "root-ca-file"] {
            let a = cmd.get_arguments().find(|a| a.get_long() == Some(arg)).expect(arg);
            assert!(a.get_default_values().is_empty(), "--{arg} has no default");
        }
    }
}
