//! `spec.usages` as X.509 key usages (upstream's `authority/policies.go`
//! `keyUsagesFromStrings`): the key usage bits, and the extended key usages
//! in the order of Go's `x509.ExtKeyUsage` constants.

use std::collections::BTreeSet;

/// Go's `x509.KeyUsage` bit for a usage (`1 << n`, digital signature
/// first).
fn key_usage(usage: &str) -> Option<u16> {
    let bit = match usage {
        "signing" | "digital signature" => 0,
        "content commitment" => 1,
        "key encipherment" => 2,
        "data encipherment" => 3,
        "key agreement" => 4,
        "cert sign" => 5,
        "crl sign" => 6,
        "encipher only" => 7,
        "decipher only" => 8,
        _ => return None,
    };
    Some(1 << bit)
}

/// Go's `x509.ExtKeyUsage` constant (the sort key) and OID for a usage.
fn ext_key_usage(usage: &str) -> Option<(u8, &'static [u64])> {
    Some(match usage {
        "any" => (0, &[2, 5, 29, 37, 0]),
        "server auth" => (1, &[1, 3, 6, 1, 5, 5, 7, 3, 1]),
        "client auth" => (2, &[1, 3, 6, 1, 5, 5, 7, 3, 2]),
        "code signing" => (3, &[1, 3, 6, 1, 5, 5, 7, 3, 3]),
        "email protection" | "s/mime" => (4, &[1, 3, 6, 1, 5, 5, 7, 3, 4]),
        "ipsec end system" => (5, &[1, 3, 6, 1, 5, 5, 7, 3, 5]),
        "ipsec tunnel" => (6, &[1, 3, 6, 1, 5, 5, 7, 3, 6]),
        "ipsec user" => (7, &[1, 3, 6, 1, 5, 5, 7, 3, 7]),
        "timestamping" => (8, &[1, 3, 6, 1, 5, 5, 7, 3, 8]),
        "ocsp signing" => (9, &[1, 3, 6, 1, 5, 5, 7, 3, 9]),
        "microsoft sgc" => (10, &[1, 3, 6, 1, 4, 1, 311, 10, 3, 3]),
        "netscape sgc" => (11, &[2, 16, 840, 1, 113730, 4, 1]),
        _ => return None,
    })
}

/// The certificate's key usages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyUsages {
    /// Go's `x509.KeyUsage` bits (0: no extension).
    pub bits: u16,
    /// Extended key usage OIDs, deduplicated, in Go's order.
    pub extended: Vec<&'static [u64]>,
}

/// Upstream `keyUsagesFromStrings`.
///
/// # Errors
/// Upstream's `unrecognized usage values: ["…" "…"]`.
pub fn key_usages(usages: &[String]) -> Result<KeyUsages, String> {
    let mut bits = 0;
    let mut extended = BTreeSet::new();
    let mut unrecognized = Vec::new();
    for usage in usages {
        if let Some(bit) = key_usage(usage) {
            bits |= bit;
        } else if let Some(eku) = ext_key_usage(usage) {
            extended.insert(eku);
        } else {
            unrecognized.push(format!("{usage:?}"));
        }
    }
    if !unrecognized.is_empty() {
        return Err(format!("unrecognized usage values: [{}]", unrecognized.join(" ")));
    }
    Ok(KeyUsages { bits, extended: extended.into_iter().map(|(_, oid)| oid).collect() })
}

/// The KeyUsage extension's BIT STRING as Go writes it: bit 0 first, one
/// byte unless a bit past the eighth is set, trailing zero bits dropped.
pub fn key_usage_bit_string(bits: u16) -> (Vec<u8>, usize) {
    let mut bytes = vec![(bits as u8).reverse_bits()];
    let high = ((bits >> 8) as u8).reverse_bits();
    if high != 0 {
        bytes.push(high);
    }
    let trailing: usize = bytes
        .iter()
        .rev()
        .position(|b| *b != 0)
        .map_or(0, |empty_bytes| empty_bytes * 8 + bytes[bytes.len() - 1 - empty_bytes].trailing_zeros() as usize);
    let len = bytes.len() * 8 - trailing;
    (bytes, len)
}
