//! A signer's CA, read from its files and read again when they change
//! (upstream's `signer/ca_provider.go` over
//! `dynamiccertificates.NewDynamicServingContentFromFiles("csr-controller", …)`).
//!
//! The files are read at start, and a pair that cannot be used then stops
//! the controller from starting, as upstream. Afterwards, every signing
//! reads both files again and compares them with the pair in use: a
//! changed pair that is a valid CA replaces it (logged as upstream's
//! `Loaded a new cert/key pair`); a changed pair that is not (a file
//! missing or half-written during a rotation, a key that does not match)
//! is logged once and the pair in use is kept, as upstream's loader keeps
//! its last good content. Upstream notices a change through fsnotify and
//! a one-minute resync instead of at the next signing; what it signs with
//! is the same.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use kcm_controllers::csrsigning::Authority;

use crate::config::settings::csrsigning::CaFiles;

/// A certificate file's and a key file's bytes.
type Pair = (Vec<u8>, Vec<u8>);

/// The pair in use, with the bytes it was read from, and the last changed
/// pair refused (not logged again until the files change once more).
struct State {
    in_use: Pair,
    authority: Arc<Authority>,
    refused: Option<Pair>,
}

/// One signer's CA.
pub struct CaProvider {
    /// Upstream's name: `csr-controller::<cert file>::<key file>`.
    name: String,
    cert_file: PathBuf,
    key_file: PathBuf,
    /// What it signs with.
    state: Mutex<State>,
}

/// Why a pair was refused.
#[derive(Debug, thiserror::Error)]
#[error("error reading CA cert file {file:?}: {message}")]
pub struct CaError {
    /// Upstream names the certificate file.
    file: String,
    /// What is wrong.
    message: String,
}

impl CaProvider {
    /// Reads `files`.
    ///
    /// # Errors
    /// A file cannot be read, or the pair is not a CA and its key.
    pub fn load(files: &CaFiles) -> Result<CaProvider, CaError> {
        let name = format!("csr-controller::{}::{}", files.cert.display(), files.key.display());
        let err = |message: String| CaError { file: files.cert.display().to_string(), message };
        let in_use = read_pair(files).map_err(err)?;
        let authority = Arc::new(Authority::from_pem(&in_use.0, &in_use.1).map_err(err)?);
        Ok(CaProvider {
            name,
            cert_file: files.cert.clone(),
            key_file: files.key.clone(),
            state: Mutex::new(State { in_use, authority, refused: None }),
        })
    }

    /// Upstream's name of the loader (`csr-controller::<cert>::<key>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The CA to sign with now: the files' pair when it changed and is
    /// valid, else the pair in use.
    pub fn current(&self) -> Arc<Authority> {
        let files = CaFiles { cert: self.cert_file.clone(), key: self.key_file.clone() };
        let read = read_pair(&files);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let pair = match read {
            Ok(pair) => pair,
            Err(error) => {
                tracing::error!(name = %self.name, %error, "Failed to read the CA files; signing with the pair loaded before");
                return state.authority.clone();
            }
        };
        if pair == state.in_use || state.refused.as_ref() == Some(&pair) {
            return state.authority.clone();
        }
        match Authority::from_pem(&pair.0, &pair.1) {
            Ok(authority) => {
                *state = State { in_use: pair, authority: Arc::new(authority), refused: None };
                tracing::info!(name = %self.name, "Loaded a new cert/key pair");
            }
            Err(error) => {
                tracing::error!(name = %self.name, %error, "Refused a new cert/key pair; signing with the pair loaded before");
                state.refused = Some(pair);
            }
        }
        state.authority.clone()
    }
}

/// Both files' bytes.
fn read_pair(files: &CaFiles) -> Result<Pair, String> {
    let read = |path: &PathBuf| std::fs::read(path).map_err(|e| format!("open {}: {e}", path.display()));
    Ok((read(&files.cert)?, read(&files.key)?))
}

#[cfg(test)]
mod tests {
    //! Reloading: a new valid pair is used, a bad one is refused and the
    //! pair before kept.

    use super::*;

    // === utils ===

    fn ca() -> (String, String) {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().expect("key");
        (params.self_signed(&key).expect("ca").pem(), key.serialize_pem())
    }

    fn write(files: &CaFiles, (cert, key): &(String, String)) {
        std::fs::write(&files.cert, cert).expect("cert");
        std::fs::write(&files.key, key).expect("key");
    }

    // === tests ===

    #[test]
    fn a_changed_pair_is_used_and_a_bad_one_keeps_the_last_good() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = CaFiles { cert: dir.path().join("ca.crt"), key: dir.path().join("ca.key") };
        write(&files, &ca());
        let provider = CaProvider::load(&files).expect("loads");
        assert_eq!(provider.name(), format!("csr-controller::{}::{}", files.cert.display(), files.key.display()));
        let first = provider.current();
        assert!(Arc::ptr_eq(&first, &provider.current()), "unchanged files: the same CA");

        let second = ca();
        write(&files, &second);
        let reloaded = provider.current();
        assert!(!Arc::ptr_eq(&first, &reloaded), "a new valid pair replaces the old");

        // A certificate without its key (a rotation half-way): refused.
        std::fs::write(&files.cert, ca().0).expect("cert");
        assert!(Arc::ptr_eq(&reloaded, &provider.current()), "a mismatched pair keeps the last good one");
        std::fs::remove_file(&files.key).expect("removed");
        assert!(Arc::ptr_eq(&reloaded, &provider.current()), "a missing file keeps the last good one");
    }

    #[test]
    fn a_bad_pair_at_start_is_an_error_naming_the_certificate_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = CaFiles { cert: dir.path().join("ca.crt"), key: dir.path().join("ca.key") };
        let error = CaProvider::load(&files).err().expect("missing").to_string();
        assert!(
            error.starts_with(&format!("error reading CA cert file {:?}: open ", files.cert.display().to_string())),
            "{error}"
        );
        let (cert, _) = ca();
        write(&files, &(cert, ca().1));
        let error = CaProvider::load(&files).err().expect("mismatch").to_string();
        assert!(error.ends_with("tls: private key does not match public key"), "{error}");
    }
}
