//! kcm-rs's command line against kube-controller-manager 1.37.2's, both
//! read from `--help`: upstream's is the testbed's kube-controller-manager,
//! built from k8s.io/kubernetes v1.37.2. An operator swapping the image
//! passes the same flags, names the same controllers and sets the same
//! feature gates; a difference here is a flag, a controller or a gate
//! kcm-rs spells, defaults or knows differently.

use std::collections::BTreeSet;
use std::process::Command;

use kcm_rs::config::UNIMPLEMENTED_UPSTREAM_FLAGS;

use crate::common::testbed;

// === utils ===

/// A program's `--help`, as one string (kube-controller-manager's cobra
/// writes it to standard output).
fn help(program: &mut Command) -> String {
    let out = program.arg("--help").output().expect("the program starts");
    assert!(out.status.success(), "--help fails: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

fn upstream_help() -> String {
    help(Command::new(testbed::binary()).arg("kube-controller-manager"))
}

fn kcm_rs_help() -> String {
    help(&mut Command::new(env!("CARGO_BIN_EXE_kcm-rs")))
}

/// The comma-separated names after `label` on its line.
fn listed(help: &str, label: &str) -> Vec<String> {
    let line = help.lines().find_map(|l| l.trim().strip_prefix(label)).unwrap_or_else(|| panic!("no {label:?} line"));
    let line = line.split(" (default").next().unwrap_or(line);
    line.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect()
}

/// Every long flag the help names at the start of a line.
fn flag_names(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-").filter(|r| !r.starts_with('-')).map_or(l, |r| r.get(3..).unwrap_or(""));
            let name = l.strip_prefix("--")?;
            Some(name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).next()?.to_owned())
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// The alpha and beta gates the help lists: `Name=true|false (BETA - default=true)`,
/// without upstream's `kube:` component prefix, and without what a gate's
/// default would be under a `--min-compatibility-version` above the default
/// (kcm-rs refuses the flag).
fn gates(help: &str) -> BTreeSet<String> {
    help.lines()
        .map(|l| l.trim().trim_start_matches("kube:"))
        .filter(|l| l.contains("=true|false ("))
        .map(|l| l.split(", or ").next().unwrap_or(l).to_owned())
        .collect()
}

// === tests ===

#[test]
fn the_controllers_are_upstreams() {
    let (upstream, ours) = (upstream_help(), kcm_rs_help());
    for label in ["All controllers:", "Disabled-by-default controllers:"] {
        assert_eq!(listed(&ours, label), listed(&upstream, label), "{label}");
    }
}

#[test]
fn the_feature_gates_are_upstreams() {
    let (upstream, ours) = (gates(&upstream_help()), gates(&kcm_rs_help()));
    assert!(upstream.len() > 100, "upstream's gates read: {upstream:?}");
    let missing: Vec<_> = upstream.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&upstream).collect();
    assert!(missing.is_empty() && extra.is_empty(), "only upstream: {missing:#?}\nonly kcm-rs: {extra:#?}");
}

#[test]
fn every_upstream_flag_is_implemented_or_refused_by_name() {
    let upstream = flag_names(&upstream_help());
    let ours = flag_names(&kcm_rs_help());
    assert!(upstream.contains("concurrent-deployment-syncs") && ours.contains("kubeconfig"), "flags read");
    let refused: BTreeSet<String> = UNIMPLEMENTED_UPSTREAM_FLAGS.iter().map(|f| f.name.to_owned()).collect();
    let unknown: Vec<_> = upstream.iter().filter(|f| !ours.contains(*f) && !refused.contains(*f)).collect();
    assert!(unknown.is_empty(), "upstream flags kcm-rs rejects as unknown: {unknown:?}");
    // Refused by name only what upstream has, and never what kcm-rs implements.
    let hidden_upstream = ["allow-untagged-cloud"];
    for name in &refused {
        assert!(!ours.contains(name), "--{name} is both implemented and refused");
        assert!(upstream.contains(name) || hidden_upstream.contains(&name.as_str()), "--{name}: not a 1.37.2 flag");
    }
    // kcm-rs's own flags are upstream's, but for --sim.
    let own: Vec<_> = ours.iter().filter(|f| !upstream.contains(*f)).collect();
    assert_eq!(own, ["sim", "sim-nodes"]);
}
