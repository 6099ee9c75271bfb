//! Shared fixtures: start a simulator, run kubectl, wait for conditions.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use kube_sim::kubelet::KubeletConfig;
use kube_sim::{Sim, SimConfig};
use tokio::process::Command;

/// Generous deadline for conditions that should hold within milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Longest [`wait_for`] waits for a change before it asks again.
const RECHECK: Duration = Duration::from_millis(200);

/// A simulator with fast pod start-up and heartbeats, for tests.
pub async fn start() -> Sim {
    start_with(SimConfig {
        kubelet: KubeletConfig {
            start_delay: Duration::from_millis(50),
            heartbeat_period: Duration::from_millis(500),
            max_grace: Duration::from_millis(300),
        },
        ..SimConfig::default()
    })
    .await
}

/// A simulator with the given configuration.
pub async fn start_with(config: SimConfig) -> Sim {
    Sim::start(config).await.expect("kube-sim starts")
}

/// Runs `probe` until it returns `Ok`, failing with `what` and the last
/// state seen (from `probe`'s `Err`) after [`DEADLINE`]. The probe runs
/// again at every change `sim` stores, and at the latest every [`RECHECK`]
/// for what follows a change with a delay (a reconnecting client, a
/// heartbeat).
pub async fn wait_for<T, F, Fut>(sim: &Sim, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut changes = sim.changes();
    let start = tokio::time::Instant::now();
    let mut last = String::new();
    while start.elapsed() < DEADLINE {
        match probe().await {
            Ok(v) => return v,
            Err(seen) => last = seen,
        }
        // Any change (or a closed or lagging feed) is a reason to look again.
        let _ = tokio::time::timeout(RECHECK, changes.recv()).await;
    }
    panic!("timed out waiting for {what}; last seen: {last}");
}

/// A kubeconfig for `sim` in a temporary directory (kept while the returned
/// guard lives).
pub fn kubeconfig(sim: &Sim) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&path).expect("kubeconfig written");
    (dir, path)
}

/// Output of one kubectl run.
#[derive(Debug)]
pub struct Kubectl {
    /// Exit status was success.
    pub ok: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the real kubectl with `args` against the kubeconfig at `config`.
/// Panics with a clear message when kubectl is not installed: these tests
/// must fail, not skip, without it.
pub async fn kubectl(config: &std::path::Path, args: &[&str]) -> Kubectl {
    kubectl_with_stdin(config, args, None).await
}

/// As [`kubectl`], feeding `stdin`.
pub async fn kubectl_with_stdin(config: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Kubectl {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;
    let mut child = Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", config)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl must be installed for these tests (see README): {e}"));
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("piped stdin");
        pipe.write_all(input.as_bytes()).await.expect("stdin written");
    }
    let out = child.wait_with_output().await.expect("kubectl ran");
    Kubectl {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Starts the real kubectl with `args`, its output piped, for commands
/// that run until something happens (`get -w`, `rollout status`); killed
/// on drop.
pub fn kubectl_running(config: &std::path::Path, args: &[&str]) -> tokio::process::Child {
    use std::process::Stdio;
    Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", config)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl must be installed for these tests (see README): {e}"))
}

// === raw HTTP ===

/// One raw answer of the simulator: status code, headers and body, for
/// tests that assert on what a client sees on the wire.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: http::StatusCode,
    /// Response headers.
    pub headers: http::HeaderMap,
    /// The body as text.
    pub body: String,
}

impl Answer {
    /// The body parsed as JSON (panics with the body when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }

    /// The status code as a number.
    pub fn code(&self) -> u16 {
        self.status.as_u16()
    }
}

/// Sends `method path` with `headers` and an optional body (JSON unless a
/// `content-type` header says otherwise) and reads the whole answer.
pub async fn call(
    client: &kube::Client,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&serde_json::Value>,
) -> Answer {
    use http_body_util::BodyExt;
    let mut builder = http::Request::builder().method(method).uri(path);
    if body.is_some() && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
        builder = builder.header("content-type", "application/json");
    }
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let request = builder.body(kube::client::Body::from(bytes)).expect("request builds");
    let response = tokio::time::timeout(DEADLINE, client.send(request))
        .await
        .unwrap_or_else(|_| panic!("{method} {path}: no answer"))
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let (parts, body) = response.into_parts();
    let body = tokio::time::timeout(DEADLINE, body.collect())
        .await
        .unwrap_or_else(|_| panic!("{method} {path}: body never ended"))
        .unwrap_or_else(|e| panic!("{method} {path}: body: {e}"))
        .to_bytes();
    Answer { status: parts.status, headers: parts.headers, body: String::from_utf8_lossy(&body).into_owned() }
}

/// `GET path`.
pub async fn get(client: &kube::Client, path: &str) -> Answer {
    call(client, "GET", path, &[], None).await
}

/// An open watch: newline-delimited events read one at a time.
pub struct Watch {
    body: kube::client::Body,
    buffer: Vec<u8>,
}

impl Watch {
    /// Opens `GET path` (which should carry `watch=true`), asserting 200.
    pub async fn open(client: &kube::Client, path: &str) -> Watch {
        let request = http::Request::get(path).body(kube::client::Body::empty()).expect("request builds");
        let response = tokio::time::timeout(DEADLINE, client.send(request))
            .await
            .unwrap_or_else(|_| panic!("watch {path}: no answer"))
            .unwrap_or_else(|e| panic!("watch {path}: {e}"));
        assert_eq!(response.status(), http::StatusCode::OK, "watch {path}");
        Watch { body: response.into_body(), buffer: Vec::new() }
    }

    /// The next event (`{"type", "object"}`), or `None` once the server has
    /// ended the stream. Fails after [`DEADLINE`] without one.
    pub async fn next(&mut self) -> Option<serde_json::Value> {
        use http_body_util::BodyExt;
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Some(serde_json::from_slice(&line).expect("watch events are JSON"));
            }
            let frame = tokio::time::timeout(DEADLINE, self.body.frame()).await.expect("a watch event in time");
            match frame {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => panic!("watch stream failed: {e}"),
                None => return None,
            }
        }
    }

    /// The next event, which must exist.
    pub async fn expect(&mut self) -> serde_json::Value {
        self.next().await.expect("the watch is still open")
    }

    /// The next event other than a BOOKMARK.
    pub async fn expect_change(&mut self) -> serde_json::Value {
        loop {
            let event = self.expect().await;
            if event["type"] != "BOOKMARK" {
                return event;
            }
        }
    }
}
