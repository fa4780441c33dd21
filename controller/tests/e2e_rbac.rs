//! RBAC against the calls the controller really makes: the real binary talks to the stand-in
//! through a request-logging proxy while it rolls out an upgrade, hot-upgrades (with two resets
//! of one pod, so an event becomes a series), marks pods not upgradable, meets a refused pod
//! patch and a status conflict, and hands leadership over; every (verb, group, resource) it sent must be in `permissions::API_CALLS`, and every
//! entry there must have been sent.
//!
//! A proxy rather than the stand-in's own request log: that log records neither the API group
//! (`events` exists in core and in events.k8s.io) nor which client sent a request, and this test
//! writes through the API too. Only the controllers' kubeconfig points at the proxy.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver_standin::Verb;
use common::*;
use serde_json::{Value, json};
use sidecarset_controller::permissions::API_CALLS;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A resource request as RBAC authorizes it; `resource` carries `/subresource`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    verb: String,
    group: String,
    resource: String,
}

/// What one HTTP request was, for RBAC.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Request {
    Resource(Call),
    /// Discovery, /version and the like (nonResourceURLs).
    NonResource(String),
}

fn call(verb: &str, group: &str, resource: &str) -> Request {
    Request::Resource(Call {
        verb: verb.into(),
        group: group.into(),
        resource: resource.into(),
    })
}

/// The RBAC attributes of `method target`, as kube-apiserver's RequestInfoFactory derives them.
fn classify(method: &str, target: &str) -> Request {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let watch_param = query
        .split('&')
        .any(|kv| matches!(kv, "watch=true" | "watch=1"));
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, mut rest) = match segments.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return Request::NonResource(path.to_string()),
    };
    // Deprecated /watch/ paths.
    let legacy_watch = rest.first() == Some(&"watch");
    if legacy_watch {
        rest = &rest[1..];
    }
    if rest.is_empty() {
        return Request::NonResource(path.to_string());
    }
    // namespaces/{ns}/{resource}... but namespaces/{name}/status is the namespace's subresource.
    if rest[0] == "namespaces" && rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
        rest = &rest[2..];
    }
    let named = rest.len() >= 2;
    let resource = if rest.len() > 2 {
        format!("{}/{}", rest[0], rest[2..].join("/"))
    } else {
        rest[0].to_string()
    };
    let verb = match method {
        "GET" | "HEAD" if watch_param || legacy_watch => "watch",
        "GET" | "HEAD" if named => "get",
        "GET" | "HEAD" => "list",
        "POST" => "create",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" if named => "delete",
        "DELETE" => "deletecollection",
        other => return call(&other.to_lowercase(), group, &resource),
    };
    call(verb, group, &resource)
}

/// Requests seen by the proxy, oldest first.
#[derive(Debug, Clone, Default)]
struct RequestLog(Arc<Mutex<Vec<Request>>>);

impl RequestLog {
    fn push(&self, request: Request) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(request);
    }

    fn all(&self) -> Vec<Request> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A plain-HTTP/1.1 proxy that logs every request line it forwards to `upstream`.
struct Proxy {
    addr: SocketAddr,
    log: RequestLog,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let log = RequestLog::default();
        let shared = log.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let log = shared.clone();
                tokio::spawn(async move {
                    if let Err(e) = relay(client, upstream, log).await {
                        eprintln!("proxy connection ended: {e}");
                    }
                });
            }
        });
        Proxy { addr, log, task }
    }

    /// A kubeconfig like the stand-in's, pointing at the proxy.
    fn kubeconfig(&self, env: &Env) -> std::path::PathBuf {
        let text = env
            .standin
            .kubeconfig()
            .replace(&env.standin.url(), &format!("http://{}", self.addr));
        let path = env.dir.join("kubeconfig-proxy");
        std::fs::write(&path, text).expect("write the proxy kubeconfig");
        path
    }
}

/// One client connection: requests parsed and logged on the way up, responses copied back raw
/// (one upstream connection per client connection, so responses need no parsing).
async fn relay(client: TcpStream, upstream: SocketAddr, log: RequestLog) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    let (client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let back = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
    });
    let mut reader = BufReader::new(client_read);
    let result = forward_requests(&mut reader, &mut server_write, &log).await;
    let _ = server_write.shutdown().await;
    let _ = back.await;
    result
}

fn invalid(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.into())
}

async fn forward_requests<R, W>(
    reader: &mut BufReader<R>,
    upstream: &mut W,
    log: &RequestLog,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let mut head = Vec::new();
        let mut content_length = 0u64;
        let mut chunked = false;
        let mut request_line = None;
        loop {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line).await? == 0 {
                return if head.is_empty() {
                    Ok(())
                } else {
                    Err(invalid("connection closed inside a request head"))
                };
            }
            head.extend_from_slice(&line);
            let text = String::from_utf8_lossy(&line).trim_end().to_string();
            if text.is_empty() {
                break;
            }
            if request_line.is_none() {
                request_line = Some(text);
                continue;
            }
            if let Some((name, value)) = text.split_once(':') {
                let value = value.trim();
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => {
                        content_length = value
                            .parse()
                            .map_err(|_| invalid(format!("bad content-length {value:?}")))?;
                    }
                    "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                    _ => {}
                }
            }
        }
        let request_line = request_line.ok_or_else(|| invalid("empty request head"))?;
        let mut parts = request_line.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return Err(invalid(format!("bad request line {request_line:?}")));
        };
        log.push(classify(method, target));
        upstream.write_all(&head).await?;
        if chunked {
            forward_chunked(reader, upstream).await?;
        } else {
            let copied =
                tokio::io::copy(&mut (&mut *reader).take(content_length), upstream).await?;
            if copied != content_length {
                return Err(invalid("connection closed inside a request body"));
            }
        }
        upstream.flush().await?;
    }
}

async fn forward_chunked<R, W>(reader: &mut BufReader<R>, upstream: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line).await?;
        upstream.write_all(&line).await?;
        let text = String::from_utf8_lossy(&line);
        let size = text.trim().split(';').next().unwrap_or("");
        let size = u64::from_str_radix(size, 16)
            .map_err(|_| invalid(format!("bad chunk size {size:?}")))?;
        if size == 0 {
            // Trailers, up to the empty line.
            loop {
                let mut trailer = Vec::new();
                reader.read_until(b'\n', &mut trailer).await?;
                upstream.write_all(&trailer).await?;
                if trailer.is_empty() || trailer == b"\r\n" {
                    return Ok(());
                }
            }
        }
        // The chunk and its CRLF.
        let copied = tokio::io::copy(&mut (&mut *reader).take(size + 2), upstream).await?;
        if copied != size + 2 {
            return Err(invalid("connection closed inside a chunk"));
        }
    }
}

/// Non-resource URLs every authenticated client may GET (the default system:discovery and
/// system:public-info-viewer roles), so they need nothing in our RBAC.
fn granted_by_default(path: &str) -> bool {
    matches!(
        path,
        "/api" | "/apis" | "/version" | "/healthz" | "/livez" | "/readyz"
    ) || ["/api/", "/apis/", "/openapi/", "/version/"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// API_CALLS as (verb, group, resource) triples.
fn declared() -> BTreeSet<Call> {
    API_CALLS
        .iter()
        .flat_map(|c| {
            c.verbs.iter().map(|verb| Call {
                verb: verb.to_string(),
                group: c.api_group.to_string(),
                resource: c.resource.to_string(),
            })
        })
        .collect()
}

const COLD: &str = "cold";
const HOT: &str = "hot";
const EMPTY: &str = "empty:1";

fn sidecarset(name: &str, container: Value) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": { "name": name },
        "spec": {
            "selector": { "matchLabels": { "app": "web", "tier": name } },
            "updateStrategy": { "maxUnavailable": 2 },
            "containers": [container]
        }
    })
}

fn tier(name: &'static str) -> impl Fn(usize) -> BTreeMap<String, String> {
    move |_| BTreeMap::from([("tier".to_string(), name.to_string())])
}

fn pods_with_prefix<'a>(pods: &'a [Value], prefix: &str) -> Vec<&'a Value> {
    pods.iter()
        .filter(|p| name(p).starts_with(prefix))
        .collect()
}

async fn wait_leader(controller: &Controller) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while controller.metric("sidecarset_controller_leader").await != Some(1.0) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never became leader; logs:\n{}",
            controller.identity,
            controller.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until an event with `reason` has been repeated into a series (count ≥ 2).
async fn wait_event_series(env: &Env, reason: &str) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut changes = env.standin.store().subscribe();
    loop {
        let events = env.events(reason);
        if events
            .iter()
            .any(|e| e["series"]["count"].as_i64().unwrap_or(0) >= 2)
        {
            return;
        }
        tokio::select! {
            _ = changes.recv() => {}
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            _ = tokio::time::sleep_until(deadline) => panic!("no {reason} event series: {events:?}"),
        }
    }
}

/// Hot upgrade of `hot-0` to `image`; the idle twin ends on `image`, the other reset to EMPTY.
async fn hot_upgrade(env: &Env, image_name: &'static str, working: &str, idle: &str) {
    env.update_sidecarset(HOT, set_image(image_name)).await;
    env.wait_pods("hot upgrade and reset", |p| {
        pods_with_prefix(p, "hot-")
            .iter()
            .all(|p| image(p, working) == image_name && image(p, idle) == EMPTY && available(p))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_call_the_controller_makes_is_granted() {
    let mut env = Env::start().await;
    let proxy = Proxy::start(env.standin.addr()).await;
    env.kubeconfig = proxy.kubeconfig(&env);

    let cold = env
        .create_sidecarset(sidecarset(
            COLD,
            json!({ "name": "sidecar", "image": "cold:v1" }),
        ))
        .await;
    env.create_injected_pods(&cold, "cold", 2, tier(COLD)).await;
    let hot = env
        .create_sidecarset(sidecarset(
            HOT,
            json!({
                "name": "sidecar",
                "image": "hot:v1",
                "upgradeStrategy": { "upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY }
            }),
        ))
        .await;
    env.create_injected_pods(&hot, "hot", 1, tier(HOT)).await;
    env.wait_pods("3 pods available", |p| {
        p.len() == 3 && p.iter().all(available)
    })
    .await;

    // One replica for the writes: a leader change would empty the Recorder's event cache.
    let a = env.controller("a");
    a.wait_ready().await;
    wait_leader(&a).await;

    // In-place rollout: pods patch, sidecarsets/status patch; one refused patch of each, so the
    // re-reads the controller does then (if any) are seen too.
    env.wait_status(COLD, "cold counted", |st| st["updatedPods"] == 2)
        .await;
    let faults = env.standin.faults();
    faults.fail_next(Some(Verb::Patch), Some("pods"), 1, 422);
    faults.fail_next(Some(Verb::Patch), Some("sidecarsets/status"), 1, 409);
    env.update_sidecarset(COLD, set_image("cold:v2")).await;
    env.wait_pods("cold pods on v2", |p| {
        pods_with_prefix(p, "cold-")
            .iter()
            .all(|p| image(p, "sidecar") == "cold:v2" && available(p))
    })
    .await;
    env.wait_status(COLD, "cold rolled out", |st| {
        st["updatedPods"] == 2 && st["updatedReadyPods"] == 2
    })
    .await;
    assert_eq!(faults.pending(), 0, "both faults were hit");

    // Two hot upgrades of one pod: two resets, so the second ResetContainerSucceed is a patch.
    hot_upgrade(&env, "hot:v2", "sidecar-2", "sidecar-1").await;
    env.wait_event("ResetContainerSucceed").await;
    hot_upgrade(&env, "hot:v3", "sidecar-1", "sidecar-2").await;
    wait_event_series(&env, "ResetContainerSucceed").await;

    // A change beyond images: pods/status patch (condition) and a NotUpgradablePods event.
    env.update_sidecarset(COLD, |v| {
        v["spec"]["containers"][0]["image"] = json!("cold:v3");
        v["spec"]["containers"][0]["env"] = json!([{ "name": "MODE", "value": "strict" }]);
    })
    .await;
    env.wait_pods("cold pods not upgradable", |p| {
        pods_with_prefix(p, "cold-")
            .iter()
            .all(|p| condition(p, "SidecarSetUpgradable")["status"] == "False")
    })
    .await;
    env.wait_event("NotUpgradablePods").await;

    // Leader hand-over: a standby campaigns, the leader releases on SIGTERM, the standby takes over.
    let b = env.controller("b");
    b.wait_ready().await;
    let status = a.terminate().await;
    assert!(status.success(), "a exits cleanly on SIGTERM: {status:?}");
    wait_leader(&b).await;
    env.poke(&b, "cold-0").await;
    let status = b.terminate().await;
    assert!(status.success(), "b exits cleanly on SIGTERM: {status:?}");

    let requests = proxy.log.all();
    let observed: BTreeSet<Call> = requests
        .iter()
        .filter_map(|r| match r {
            Request::Resource(c) => Some(c.clone()),
            Request::NonResource(_) => None,
        })
        .collect();
    let non_resource: BTreeSet<&String> = requests
        .iter()
        .filter_map(|r| match r {
            Request::NonResource(path) => Some(path),
            Request::Resource(_) => None,
        })
        .filter(|path| !granted_by_default(path))
        .collect();
    assert!(
        non_resource.is_empty(),
        "non-resource URLs no default role grants: {non_resource:?}"
    );
    let declared = declared();
    let undeclared: Vec<&Call> = observed.difference(&declared).collect();
    assert!(
        undeclared.is_empty(),
        "the controller made calls missing from permissions::API_CALLS (and so from its RBAC): {undeclared:?}"
    );
    let unused: Vec<&Call> = declared.difference(&observed).collect();
    assert!(
        unused.is_empty(),
        "permissions::API_CALLS grants calls the controller never made in this run: {unused:?}"
    );
}

#[test]
fn requests_are_classified_as_rbac_sees_them() {
    let cases = [
        ("GET", "/api/v1/pods?limit=500", call("list", "", "pods")),
        (
            "GET",
            "/api/v1/pods?watch=true&resourceVersion=5",
            call("watch", "", "pods"),
        ),
        (
            "PATCH",
            "/api/v1/namespaces/default/pods/web-0",
            call("patch", "", "pods"),
        ),
        (
            "PATCH",
            "/api/v1/namespaces/default/pods/web-0/status",
            call("patch", "", "pods/status"),
        ),
        ("GET", "/api/v1/namespaces", call("list", "", "namespaces")),
        (
            "GET",
            "/api/v1/namespaces/default",
            call("get", "", "namespaces"),
        ),
        (
            "PUT",
            "/api/v1/namespaces/default/status",
            call("update", "", "namespaces/status"),
        ),
        (
            "PATCH",
            "/apis/apps.kruise.io/v1alpha1/sidecarsets/envoy/status",
            call("patch", "apps.kruise.io", "sidecarsets/status"),
        ),
        (
            "POST",
            "/apis/events.k8s.io/v1/namespaces/default/events",
            call("create", "events.k8s.io", "events"),
        ),
        (
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x",
            call("update", "coordination.k8s.io", "leases"),
        ),
        (
            "GET",
            "/api/v1/watch/namespaces/default/pods",
            call("watch", "", "pods"),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/default/pods",
            call("deletecollection", "", "pods"),
        ),
        ("GET", "/apis", Request::NonResource("/apis".into())),
        (
            "GET",
            "/apis/apps.kruise.io/v1alpha1",
            Request::NonResource("/apis/apps.kruise.io/v1alpha1".into()),
        ),
        ("GET", "/version", Request::NonResource("/version".into())),
    ];
    for (method, target, expected) in cases {
        assert_eq!(classify(method, target), expected, "{method} {target}");
    }
}

/// The proxy forwards bodies of both framings intact, so requests after them parse too.
#[tokio::test]
async fn the_proxy_keeps_request_framing() {
    let input = b"POST /api/v1/namespaces/a/pods HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody\
PATCH /api/v1/namespaces/a/pods/p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n\
GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut reader = BufReader::new(&input[..]);
    let mut forwarded = Vec::new();
    let log = RequestLog::default();
    forward_requests(&mut reader, &mut forwarded, &log)
        .await
        .expect("well-framed requests");
    assert_eq!(forwarded, input.to_vec());
    assert_eq!(
        log.all(),
        [
            call("create", "", "pods"),
            call("patch", "", "pods"),
            call("watch", "", "pods")
        ]
    );
}
