//! The CSR signing controller's settings (upstream's
//! `options/csrsigningcontroller.go`, and which signers
//! `startCSRSigningController` starts from them): the CA pair of every
//! signer, `--cluster-signing-{cert,key}-file` for all four or one
//! `--cluster-signing-<signer>-{cert,key}-file` pair each, and
//! `--cluster-signing-duration`.

use std::path::PathBuf;
use std::time::Duration;

use kcm_controllers::csrsigning::Signer;

use super::ControllerFlags;
use crate::config::{Error, GoDuration, Result};

/// The CSR signing controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct CsrSigningFlags {
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
}

/// One signer's CA files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaFiles {
    /// The certificate.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

/// The CSR signing controller's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsrSigningSettings {
    /// Each signer's CA files, `None` when it is not to run; all `None`
    /// (`--cluster-signing-{cert,key}-file` not both given, and no
    /// per-signer file) skips the controller.
    pub signers: Vec<(Signer, Option<CaFiles>)>,
    /// `--cluster-signing-duration`: the longest certificate issued.
    pub duration: Duration,
}

impl CsrSigningSettings {
    /// Whether no CA is configured at all (upstream's
    /// `missingSingleSigningFile && !anySpecificFilesSet`).
    pub fn none_configured(&self) -> bool {
        self.signers.iter().all(|(_, files)| files.is_none())
    }
}

/// A flag's file, an empty value read as unset, as upstream reads `""`.
fn given(file: &Option<PathBuf>) -> Option<PathBuf> {
    file.clone().filter(|f| !f.as_os_str().is_empty())
}

impl CsrSigningFlags {
    /// Each signer's pair, with the label upstream's messages name it by.
    fn specific(&self) -> [(Signer, &'static str, Option<PathBuf>, Option<PathBuf>); 4] {
        [
            (
                Signer::KubeletServing,
                "cluster-signing-kubelet-serving",
                given(&self.cluster_signing_kubelet_serving_cert_file),
                given(&self.cluster_signing_kubelet_serving_key_file),
            ),
            // Upstream's labels for the next two, as its messages spell them.
            (
                Signer::KubeletClient,
                "cluster-signing-kube-apiserver-client",
                given(&self.cluster_signing_kubelet_client_cert_file),
                given(&self.cluster_signing_kubelet_client_key_file),
            ),
            (
                Signer::KubeApiServerClient,
                "cluster-signing-kube-apiserver",
                given(&self.cluster_signing_kube_apiserver_client_cert_file),
                given(&self.cluster_signing_kube_apiserver_client_key_file),
            ),
            (
                Signer::LegacyUnknown,
                "cluster-signing-legacy-unknown",
                given(&self.cluster_signing_legacy_unknown_cert_file),
                given(&self.cluster_signing_legacy_unknown_key_file),
            ),
        ]
    }
}

impl ControllerFlags for CsrSigningFlags {
    type Settings = CsrSigningSettings;

    /// Upstream's `Validate` (first error first), then its choice of files:
    /// with any per-signer pair, each signer has its own or none; else all
    /// four share `--cluster-signing-{cert,key}-file` when both are given.
    fn settings(self) -> Result<CsrSigningSettings> {
        let specific = self.specific();
        for (_, label, cert, key) in &specific {
            match (cert.is_some(), key.is_some()) {
                (false, true) => return Err(Error::Invalid(format!("{label:?}: cannot specify key without cert"))),
                (true, false) => return Err(Error::Invalid(format!("{label:?}: cannot specify cert without key"))),
                _ => {}
            }
        }
        let (cert, key) = (given(&self.cluster_signing_cert_file), given(&self.cluster_signing_key_file));
        let any_specific = specific.iter().any(|(_, _, cert, key)| cert.is_some() || key.is_some());
        if (cert.is_some() || key.is_some()) && any_specific {
            return Err(Error::Invalid(
                "cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the \
                 same time"
                    .to_owned(),
            ));
        }
        let single = cert.zip(key).map(|(cert, key)| CaFiles { cert, key });
        let signers = specific
            .into_iter()
            .map(|(signer, _, cert, key)| {
                let files =
                    if any_specific { cert.zip(key).map(|(cert, key)| CaFiles { cert, key }) } else { single.clone() };
                (signer, files)
            })
            .collect();
        Ok(CsrSigningSettings { signers, duration: self.cluster_signing_duration.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    fn settings(args: &[&str]) -> Result<CsrSigningSettings> {
        flags::<CsrSigningFlags>(args).expect("parses").settings()
    }

    fn running(settings: &CsrSigningSettings) -> Vec<(Signer, &str)> {
        settings
            .signers
            .iter()
            .filter_map(|(s, f)| f.as_ref().map(|f| (*s, f.cert.to_str().unwrap_or_default())))
            .collect()
    }

    #[test]
    fn defaults_are_upstreams_and_run_no_signer() {
        assert_defaults::<CsrSigningFlags>(&[("cluster-signing-duration", "8760h0m0s")]);
        let s = settings(&[]).unwrap();
        assert_eq!(s.duration, Duration::from_secs(365 * 24 * 3600));
        assert!(s.none_configured());
        // A certificate without its key runs nothing either (upstream skips, it does not refuse).
        assert!(settings(&["--cluster-signing-cert-file=ca.crt"]).unwrap().none_configured());
    }

    #[test]
    fn one_pair_serves_all_four_signers_and_per_signer_pairs_only_theirs() {
        let all = settings(&["--cluster-signing-cert-file=ca.crt", "--cluster-signing-key-file=ca.key"]).unwrap();
        assert_eq!(running(&all), Signer::ALL.map(|s| (s, "ca.crt")));
        let one = settings(&[
            "--cluster-signing-kube-apiserver-client-cert-file=client.crt",
            "--cluster-signing-kube-apiserver-client-key-file=client.key",
        ])
        .unwrap();
        assert_eq!(running(&one), [(Signer::KubeApiServerClient, "client.crt")]);
    }

    #[test]
    fn signing_files_are_checked_as_upstream_checks_them() {
        let err = |args: &[&str]| settings(args).unwrap_err().to_string();
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
        assert_eq!(settings(&["--cluster-signing-duration=1h30m"]).unwrap().duration.as_secs(), 5400);
        assert!(flags::<CsrSigningFlags>(&["--cluster-signing-duration=a year"]).is_err());
    }
}
