//! Shared fixtures: start a simulator, talk raw HTTP to it, and how long
//! these tests wait (waiting, kubeconfigs and kubectl are
//! [`kube_sim::testing`]'s).

use std::time::Duration;

use kube_sim::kubelet::KubeletConfig;
use kube_sim::testing::Patience;
use kube_sim::{Sim, SimConfig};

/// Generous deadline for conditions that should hold within milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How [`kube_sim::testing::wait_for`] waits in these tests: up to [`DEADLINE`], asking again
/// at the latest every 200 ms.
pub const PATIENCE: Patience = Patience { deadline: DEADLINE, recheck: Duration::from_millis(200) };

/// A simulator with fast pod start-up and heartbeats, its `default`
/// namespace provisioned (see [`start_with`]).
pub async fn start() -> Sim {
    start_with(fast()).await
}

/// A simulator like [`start`]'s with nothing added to its `default`
/// namespace: an API server with no controller manager, for tests that
/// count every object of a namespace.
pub async fn start_bare() -> Sim {
    Sim::start(fast()).await.expect("kube-sim starts")
}

/// Fast pod start-up and heartbeats.
fn fast() -> SimConfig {
    SimConfig {
        kubelet: KubeletConfig {
            start_delay: Duration::from_millis(50),
            heartbeat_period: Duration::from_millis(500),
            max_grace: Duration::from_millis(300),
        },
        ..SimConfig::default()
    }
}

/// A simulator with the given configuration, its `default` namespace
/// provisioned as kube-controller-manager would
/// ([`kube_sim::testing::provision_namespace`]: these tests run none).
pub async fn start_with(config: SimConfig) -> Sim {
    let sim = Sim::start(config).await.expect("kube-sim starts");
    kube_sim::testing::provision_namespace(&sim, "default").await;
    sim
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

/// `PATCH path` with a JSON merge patch.
pub async fn merge(client: &kube::Client, path: &str, patch: serde_json::Value) -> Answer {
    call(client, "PATCH", path, &[("content-type", "application/merge-patch+json")], Some(&patch)).await
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

/// A Deployment or ReplicaSet named `name` with `replicas`, selecting
/// `app: <name>`.
pub fn workload(kind: &str, name: &str, replicas: i64) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    })
}

/// `POST collection` with `body`, which must succeed; the object created.
pub async fn create(client: &kube::Client, collection: &str, body: &serde_json::Value) -> serde_json::Value {
    let answer = call(client, "POST", collection, &[], Some(body)).await;
    assert_eq!(answer.code(), 201, "{collection}: {}", answer.body);
    answer.json()
}

// === kubectl ===

/// `kubectl get <what> -o json`, parsed.
pub async fn get_json(config: &std::path::Path, what: &[&str]) -> serde_json::Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json"]);
    let out = kube_sim::testing::kubectl_ok(config, &args).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("kubectl -o json gave no JSON ({e}): {out}"))
}

/// Rows of a kubectl table (header first), split on whitespace.
pub fn table(out: &str) -> Vec<Vec<String>> {
    out.lines().filter(|l| !l.trim().is_empty()).map(|l| l.split_whitespace().map(str::to_owned).collect()).collect()
}

/// A kubectl run that went wrong, for assertion messages.
pub fn failure(out: &kube_sim::testing::Kubectl) -> String {
    format!("exit ok={} stdout:\n{}\nstderr:\n{}", out.ok, out.stdout, out.stderr)
}

// === waiting on what the stand-in does ===

/// Waits for an Event with `reason` about the object `name` in `ns` whose
/// message `matches`, and gives it.
pub async fn wait_event(
    sim: &kube_sim::Sim,
    ns: &str,
    name: &str,
    reason: &str,
    matches: impl Fn(&str) -> bool,
) -> serde_json::Value {
    let client = sim.client().expect("client");
    let matches = &matches;
    kube_sim::testing::wait_for(sim, PATIENCE, &format!("a {reason} event about {name}"), || {
        let client = client.clone();
        async move {
            let events = get(&client, &format!("/api/v1/namespaces/{ns}/events")).await.json();
            let items = events["items"].as_array().cloned().unwrap_or_default();
            let found = items.iter().find(|e| {
                e["involvedObject"]["name"] == name
                    && e["reason"] == reason
                    && matches(e["message"].as_str().unwrap_or(""))
            });
            found.cloned().ok_or_else(|| format!("events: {items:?}"))
        }
    })
    .await
}

/// Waits for the pod `name` in `ns` to be Running, and gives it.
pub async fn wait_running(sim: &kube_sim::Sim, ns: &str, name: &str) -> serde_json::Value {
    let client = sim.client().expect("client");
    kube_sim::testing::wait_for(sim, PATIENCE, &format!("{name} to run"), || {
        let client = client.clone();
        async move {
            let pod = get(&client, &format!("/api/v1/namespaces/{ns}/pods/{name}")).await.json();
            if pod.pointer("/status/phase") == Some(&serde_json::json!("Running")) {
                Ok(pod)
            } else {
                Err(format!("{}", pod["status"]))
            }
        }
    })
    .await
}
