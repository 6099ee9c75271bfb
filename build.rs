//! Release links of the `kcm-rs` binary on Linux lay it out for a small
//! resident set (docs/benchmarks.md); debug builds link as usual.
//!
//! - The functions an idle kcm-rs runs go ahead of the rest of its code
//!   (`link/hot-text.ld`, written by `scripts/hot-text` from a profile), so
//!   that they share as few as they can of the 64 KiB blocks the kernel maps
//!   around each page fault.
//! - On glibc 2.36 or newer (built for the machine it builds on), relative
//!   relocations are packed (`-z pack-relative-relocs`, DT_RELR): the
//!   dynamic loader reads all of them at start, and unpacked they are 0.7 MB
//!   of the binary kept resident. An older glibc cannot load such a binary,
//!   so it is left unpacked there, as is the image's static musl binary.

use std::process::Command;

fn main() {
    const SCRIPT: &str = "link/hot-text.ld";
    println!("cargo:rerun-if-changed={SCRIPT}");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("PROFILE") != "release" || var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    let script = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join(SCRIPT);
    if script.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
    if var("CARGO_CFG_TARGET_ENV") == "gnu" && var("TARGET") == var("HOST") && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`: `glibc 2.36`)
/// loads packed relative relocations: 2.36 and newer.
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else { return false };
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.trim().strip_prefix("glibc ").unwrap_or_default();
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
