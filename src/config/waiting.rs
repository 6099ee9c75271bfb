//! Flags of upstream controllers kcm-rs does not run yet, which kubeadm and
//! kind pass to kube-controller-manager: [`WaitingFlags`]. They are
//! accepted with upstream's names, defaults and help, and checked as
//! upstream's option validation checks them, so that kubeadm's command line
//! starts kcm-rs; [`WaitingFlags::given`] names those set on the command
//! line, with the controller each waits for, for the daemon to say at start
//! that they change nothing yet. Each moves into its controller's settings
//! module (`settings/`) when that controller lands.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args};

use super::{Error, GoDuration, Result, parse_go_bool};

/// One signer's pair of files (`--cluster-signing-<signer>-{cert,key}-file`).
type Pair<'a> = (&'static str, &'a Option<PathBuf>, &'a Option<PathBuf>);

/// The flags, by upstream's option groups: the cloud-shared one
/// (upstream's "Generic flags"), the CSR signing controller's and the
/// persistent volume binder's that kubeadm passes.
#[derive(Debug, Clone, Args)]
pub struct WaitingFlags {
    // --- kube cloud shared (upstream lists it with the generic flags) ---
    /// The instance prefix for the cluster.
    #[arg(long, value_name = "string", default_value = "kubernetes", help_heading = "Generic flags")]
    pub cluster_name: String,

    // --- csrsigning controller ---
    /// Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.  If
    /// specified, no more specific --cluster-signing-* flag may be specified.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_cert_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.  If
    /// specified, no more specific --cluster-signing-* flag may be specified.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_key_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the
    /// kubernetes.io/kubelet-serving signer.  If specified, --cluster-signing-{cert,key}-file must not be set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_kubelet_serving_cert_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the
    /// kubernetes.io/kubelet-serving signer.  If specified, --cluster-signing-{cert,key}-file must not be set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_kubelet_serving_key_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the
    /// kubernetes.io/kube-apiserver-client-kubelet signer.  If specified, --cluster-signing-{cert,key}-file must
    /// not be set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_kubelet_client_cert_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the
    /// kubernetes.io/kube-apiserver-client-kubelet signer.  If specified, --cluster-signing-{cert,key}-file must
    /// not be set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_kubelet_client_key_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the
    /// kubernetes.io/kube-apiserver-client signer.  If specified, --cluster-signing-{cert,key}-file must not be
    /// set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_kube_apiserver_client_cert_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the
    /// kubernetes.io/kube-apiserver-client signer.  If specified, --cluster-signing-{cert,key}-file must not be
    /// set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_kube_apiserver_client_key_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the
    /// kubernetes.io/legacy-unknown signer.  If specified, --cluster-signing-{cert,key}-file must not be set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_legacy_unknown_cert_file: Option<PathBuf>,

    /// Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the
    /// kubernetes.io/legacy-unknown signer.  If specified, --cluster-signing-{cert,key}-file must not be set.
    #[arg(long, value_name = "string", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_legacy_unknown_key_file: Option<PathBuf>,

    /// The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs
    /// by setting spec.expirationSeconds.
    #[arg(long, value_name = "duration", default_value = "8760h0m0s", help_heading = "Csrsigning controller flags")]
    pub cluster_signing_duration: GoDuration,

    // --- persistentvolume-binder controller ---
    /// Enable HostPath PV provisioning when running without a cloud provider. This allows testing and
    /// development of provisioning features.  HostPath provisioning is not supported in any way, won't work in a
    /// multi-node cluster, and should not be used for anything other than testing or development.
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
        help_heading = "Persistentvolume-binder controller flags"
    )]
    pub enable_hostpath_provisioner: bool,
}

/// Each flag's id (clap's, from the field name) and the controller that
/// reads it upstream.
const WAITING_FOR: &[(&str, &str)] = &[
    ("cluster_name", "service-lb-controller"),
    ("cluster_signing_cert_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_key_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_kubelet_serving_cert_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_kubelet_serving_key_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_kubelet_client_cert_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_kubelet_client_key_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_kube_apiserver_client_cert_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_kube_apiserver_client_key_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_legacy_unknown_cert_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_legacy_unknown_key_file", "certificatesigningrequest-signing-controller"),
    ("cluster_signing_duration", "certificatesigningrequest-signing-controller"),
    ("enable_hostpath_provisioner", "persistentvolume-binder-controller"),
];

/// A flag given on the command line whose controller kcm-rs does not run yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The flag, as written (`--cluster-signing-cert-file`'s name without dashes).
    pub flag: &'static str,
    /// The upstream controller that reads it.
    pub controller: &'static str,
}

impl WaitingFlags {
    /// Checks the values together as upstream's option validation does
    /// (its `Validate` of the CSR signing options), first error first.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] with upstream's message.
    pub fn check(&self) -> Result<()> {
        let pairs: [Pair<'_>; 4] = [
            (
                "cluster-signing-kubelet-serving",
                &self.cluster_signing_kubelet_serving_cert_file,
                &self.cluster_signing_kubelet_serving_key_file,
            ),
            // Upstream's labels for the next two, as its messages spell them.
            (
                "cluster-signing-kube-apiserver-client",
                &self.cluster_signing_kubelet_client_cert_file,
                &self.cluster_signing_kubelet_client_key_file,
            ),
            (
                "cluster-signing-kube-apiserver",
                &self.cluster_signing_kube_apiserver_client_cert_file,
                &self.cluster_signing_kube_apiserver_client_key_file,
            ),
            (
                "cluster-signing-legacy-unknown",
                &self.cluster_signing_legacy_unknown_cert_file,
                &self.cluster_signing_legacy_unknown_key_file,
            ),
        ];
        for (label, cert, key) in pairs {
            match (cert.is_some(), key.is_some()) {
                (false, true) => return Err(Error::Invalid(format!("{label:?}: cannot specify key without cert"))),
                (true, false) => return Err(Error::Invalid(format!("{label:?}: cannot specify cert without key"))),
                _ => {}
            }
        }
        let single = self.cluster_signing_cert_file.is_some() || self.cluster_signing_key_file.is_some();
        let specific = pairs.iter().any(|(_, cert, key)| cert.is_some() || key.is_some());
        if single && specific {
            return Err(Error::Invalid(
                "cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the \
                 same time"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// The flags set on the command line `matches` was parsed from, in
    /// upstream's help order.
    pub fn given(matches: &ArgMatches) -> Vec<Waiting> {
        WAITING_FOR
            .iter()
            .filter(|(id, _)| matches.value_source(id) == Some(ValueSource::CommandLine))
            .map(|&(flag, controller)| Waiting { flag, controller })
            .collect()
    }
}

impl Waiting {
    /// The flag as written on the command line (`--cluster-name`).
    pub fn spelled(&self) -> String {
        format!("--{}", self.flag.replace('_', "-"))
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        waiting: WaitingFlags,
    }

    fn parse(args: &[&str]) -> (WaitingFlags, ArgMatches) {
        let matches =
            Cli::command().try_get_matches_from(std::iter::once("kcm-rs").chain(args.iter().copied())).expect("parses");
        (WaitingFlags::from_arg_matches(&matches).expect("reads"), matches)
    }

    fn check(args: &[&str]) -> Result<()> {
        parse(args).0.check()
    }

    #[test]
    fn kinds_arguments_are_accepted_and_named_with_their_controllers() {
        let (flags, matches) = parse(&[
            "--cluster-name=kind",
            "--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt",
            "--cluster-signing-key-file=/etc/kubernetes/pki/ca.key",
            "--enable-hostpath-provisioner=true",
        ]);
        assert_eq!(flags.check(), Ok(()));
        assert_eq!(flags.cluster_name, "kind");
        assert!(flags.enable_hostpath_provisioner);
        let given: Vec<(String, &str)> =
            WaitingFlags::given(&matches).iter().map(|w| (w.spelled(), w.controller)).collect();
        assert_eq!(
            given,
            [
                ("--cluster-name".to_owned(), "service-lb-controller"),
                ("--cluster-signing-cert-file".to_owned(), "certificatesigningrequest-signing-controller"),
                ("--cluster-signing-key-file".to_owned(), "certificatesigningrequest-signing-controller"),
                ("--enable-hostpath-provisioner".to_owned(), "persistentvolume-binder-controller"),
            ]
        );
    }

    #[test]
    fn defaults_are_upstreams_and_none_counts_as_given() {
        let (flags, matches) = parse(&[]);
        assert_eq!(flags.cluster_name, "kubernetes");
        assert_eq!(flags.cluster_signing_duration.0, std::time::Duration::from_secs(365 * 24 * 3600));
        assert!(!flags.enable_hostpath_provisioner);
        assert!(WaitingFlags::given(&matches).is_empty());
        assert_eq!(WAITING_FOR.len(), Cli::command().get_arguments().count(), "one row per flag");
    }

    #[test]
    fn signing_files_are_checked_as_upstream_checks_them() {
        let err = |args: &[&str]| check(args).unwrap_err().to_string();
        assert_eq!(
            err(&["--cluster-signing-kubelet-serving-key-file=k"]),
            r#""cluster-signing-kubelet-serving": cannot specify key without cert"#
        );
        assert_eq!(
            err(&["--cluster-signing-kubelet-client-cert-file=c"]),
            r#""cluster-signing-kube-apiserver-client": cannot specify cert without key"#
        );
        assert_eq!(
            err(&[
                "--cluster-signing-cert-file=c",
                "--cluster-signing-key-file=k",
                "--cluster-signing-legacy-unknown-cert-file=c",
                "--cluster-signing-legacy-unknown-key-file=k",
            ]),
            "cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"
        );
        assert_eq!(
            check(&[
                "--cluster-signing-kube-apiserver-client-cert-file=c",
                "--cluster-signing-kube-apiserver-client-key-file=k"
            ]),
            Ok(())
        );
    }

    #[test]
    fn go_values_are_parsed_as_upstream_parses_them() {
        assert!(parse(&["--enable-hostpath-provisioner"]).0.enable_hostpath_provisioner);
        assert!(!parse(&["--enable-hostpath-provisioner=F"]).0.enable_hostpath_provisioner);
        assert_eq!(parse(&["--cluster-signing-duration=1h30m"]).0.cluster_signing_duration.0.as_secs(), 5400);
        let bad = Cli::command().try_get_matches_from(["kcm-rs", "--cluster-signing-duration=a year"]);
        assert!(bad.is_err());
    }
}
