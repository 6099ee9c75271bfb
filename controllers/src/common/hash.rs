//! The hashing primitives behind generated names: 32-bit FNV (upstream
//! `hash/fnv`, both the FNV-1 the ControllerRevision history uses and the
//! FNV-1a of `controller.ComputeHash`) and upstream's
//! `rand.SafeEncodeString`, which spells a hash's decimal digits in an
//! alphabet with no vowels (and no 0, 1 or 3), so that a generated name
//! never reads as a word.

/// `rand.SafeEncodeString`'s alphabet.
pub const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// The FNV-32 offset basis: the hash of no bytes.
pub const FNV32_OFFSET: u32 = 0x811c_9dc5;

const FNV32_PRIME: u32 = 0x0100_0193;

/// FNV-1 (multiply, then xor) of `bytes`, continuing from `hash` (Go's
/// `fnv.New32`).
pub fn fnv32(mut hash: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        hash = hash.wrapping_mul(FNV32_PRIME);
        hash ^= u32::from(b);
    }
    hash
}

/// FNV-1a (xor, then multiply) of `bytes`, continuing from `hash` (Go's
/// `fnv.New32a`).
pub fn fnv32a(mut hash: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(FNV32_PRIME);
    }
    hash
}

/// The decimal digits of `hash`, each byte `c` spelled as
/// `SAFE_ALPHABET[c % 27]`: `0`..`9` become `4 5 6 7 8 9 b c d f`, so
/// 1234567890 is `56789bcdf4` (upstream `SafeEncodeString(fmt.Sprint(h))`).
pub fn safe_encode(hash: u32) -> String {
    hash.to_string().bytes().map(|c| char::from(SAFE_ALPHABET[usize::from(c) % SAFE_ALPHABET.len()])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_map_to_upstreams_alphabet() {
        assert_eq!(safe_encode(1_234_567_890), "56789bcdf4");
        assert_eq!(safe_encode(0), "4");
    }

    /// The published FNV test vectors for "a" and "foobar".
    #[test]
    fn fnv_vectors() {
        assert_eq!(fnv32(FNV32_OFFSET, b""), 0x811c_9dc5);
        assert_eq!(fnv32(FNV32_OFFSET, b"a"), 0x050c_5d7e);
        assert_eq!(fnv32a(FNV32_OFFSET, b"a"), 0xe40c_292c);
        assert_eq!(fnv32(FNV32_OFFSET, b"foobar"), 0x31f0_b262);
        assert_eq!(fnv32a(FNV32_OFFSET, b"foobar"), 0xbf9c_f968);
    }
}
