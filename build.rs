//! Release links of the `kcm-rs` binary on Linux put the functions an idle
//! kcm-rs runs ahead of the rest of its code (`link/hot-text.ld`, written
//! by `scripts/hot-text` from a profile), so that they share as few as
//! they can of the 64 KiB blocks the kernel maps around each page fault:
//! an idle kcm-rs then has less of its binary resident (docs/benchmarks.md).
//! Debug builds link as usual.

fn main() {
    const SCRIPT: &str = "link/hot-text.ld";
    println!("cargo:rerun-if-changed={SCRIPT}");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let script = std::path::Path::new(&dir).join(SCRIPT);
    if release && linux && script.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
}
