//! The admission chain against a scripted HTTPS webhook: what is sent, what is done with each
//! answer, which requests call which webhooks, and the texts clients get back.

mod common;
mod webhook;

use std::time::Duration;

use apiserver_standin::StandIn;
use common::*;
use serde_json::{Value, json};
use webhook::{Reply, Webhook, allow, answer, patch, script};

struct Answered {
    code: u16,
    body: Value,
    warnings: Vec<String>,
}

async fn send(s: &StandIn, method: &str, path: &str, body: Option<Value>, ct: &str) -> Answered {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = client.request(method, format!("{}{path}", s.url()));
    if let Some(b) = body {
        req = req.header("content-type", ct).body(b.to_string());
    }
    let resp = req.send().await.unwrap();
    let code = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let bytes = resp.bytes().await.unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answered {
        code,
        body,
        warnings,
    }
}

async fn post(s: &StandIn, path: &str, body: Value) -> Answered {
    send(s, "POST", path, Some(body), "application/json").await
}

const PODS: &str = "/api/v1/namespaces/default/pods";

fn rule(ops: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({ "operations": ops, "apiGroups": groups, "apiVersions": ["*"], "resources": resources })
}

/// A webhook at `url` for pod creates, with `extra` fields merged in.
fn hook(name: &str, client: Value, extra: Value) -> Value {
    let mut h = json!({
        "name": name,
        "clientConfig": client,
        "rules": [rule(&["CREATE"], &[""], &["pods"])],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(h), Some(e)) = (h.as_object_mut(), extra.as_object()) {
        h.extend(e.clone());
    }
    h
}

fn url_client(w: &Webhook, path: &str) -> Value {
    json!({ "url": w.url(path), "caBundle": w.ca_bundle() })
}

async fn configure(s: &StandIn, mutating: bool, name: &str, hooks: Vec<Value>) {
    let (plural, kind) = if mutating {
        (
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
        )
    } else {
        (
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
        )
    };
    let conf = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": { "name": name }, "webhooks": hooks,
    });
    let a = post(
        s,
        &format!("/apis/admissionregistration.k8s.io/v1/{plural}"),
        conf,
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
}

fn pod(name: &str) -> Value {
    pod_json(name, json!({}), &[("app", "nginx")])
}

#[tokio::test]
async fn a_mutating_patch_is_applied_and_the_review_is_what_kube_apiserver_sends() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on(
        "/mutate",
        script(|r| {
            let b64 = base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                json!([{ "op": "add", "path": "/metadata/labels/injected", "value": "yes" }]).to_string(),
            );
            answer(
                r,
                json!({ "allowed": true, "patchType": "JSONPatch", "patch": b64,
                        "warnings": ["sidecar added", "sidecar added"], "auditAnnotations": { "why": "selected" } }),
            )
        }),
    );
    configure(
        &s,
        true,
        "inject",
        vec![hook(
            "inject.example.com",
            url_client(&w, "/mutate"),
            json!({}),
        )],
    )
    .await;

    let a = post(&s, PODS, pod("web")).await;
    assert_eq!(a.code, 201, "{}", a.body);
    assert_eq!(a.body["metadata"]["labels"]["injected"], "yes");
    assert_eq!(a.warnings, vec!["299 - \"sidecar added\""]);
    let stored = s
        .store()
        .get(apiserver_standin::resources::pods(), "default", "web")
        .unwrap();
    assert_eq!(stored["metadata"]["labels"]["injected"], "yes");

    let calls = w.calls("/mutate");
    assert_eq!(calls.len(), 1);
    let (review, req) = (&calls[0], &calls[0]["request"]);
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(
        req["kind"],
        json!({ "group": "", "version": "v1", "kind": "Pod" })
    );
    assert_eq!(
        req["resource"],
        json!({ "group": "", "version": "v1", "resource": "pods" })
    );
    assert_eq!(req["requestKind"], req["kind"]);
    assert_eq!(
        (req["namespace"].as_str(), req["name"].as_str()),
        (Some("default"), Some("web"))
    );
    assert_eq!(req["operation"], "CREATE");
    assert_eq!(req["userInfo"]["username"], "kubernetes-admin");
    assert_eq!(req["dryRun"], false);
    assert_eq!(req["options"]["kind"], "CreateOptions");
    assert!(req["oldObject"].is_null());
    // Decoding defaults the pod before admission; the server's own fields come later.
    assert_eq!(
        req["object"]["spec"]["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
    assert!(req["object"]["metadata"].get("uid").is_none());

    let audit = s.audit();
    let entry = audit
        .iter()
        .find(|e| e.name == "web")
        .expect("an audit entry for the pod");
    assert_eq!(entry.annotations["inject.example.com/why"], "selected");
    let mutation: Value = serde_json::from_str(
        &entry.annotations["mutation.webhook.admission.k8s.io/round_0_index_0"],
    )
    .unwrap();
    assert_eq!(
        mutation,
        json!({ "configuration": "inject", "webhook": "inject.example.com", "mutated": true })
    );

    let dry = post(&s, &format!("{PODS}?dryRun=All"), pod("dry")).await;
    assert_eq!(dry.code, 201, "{}", dry.body);
    let req = &w.calls("/mutate")[1]["request"];
    assert_eq!(
        (req["dryRun"].clone(), req["options"]["dryRun"].clone()),
        (json!(true), json!(["All"]))
    );
    assert!(
        s.store()
            .get(apiserver_standin::resources::pods(), "default", "dry")
            .is_err()
    );
}

#[tokio::test]
async fn a_denial_reaches_the_client_as_kube_apiserver_renders_it() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on("/deny", script(|r| answer(r, json!({ "allowed": false, "status": { "code": 403, "reason": "Forbidden", "message": "no sidecar for you" } }))));
    w.on("/mute", script(|r| answer(r, json!({ "allowed": false }))));
    configure(
        &s,
        false,
        "deny",
        vec![
            hook(
                "deny.example.com",
                url_client(&w, "/deny"),
                json!({ "objectSelector": { "matchLabels": { "deny": "loud" } } }),
            ),
            hook(
                "mute.example.com",
                url_client(&w, "/mute"),
                json!({ "objectSelector": { "matchLabels": { "deny": "mute" } } }),
            ),
        ],
    )
    .await;

    let a = post(
        &s,
        PODS,
        pod_json("loud", json!({ "deny": "loud" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 403);
    assert_eq!(
        a.body["message"],
        "admission webhook \"deny.example.com\" denied the request: no sidecar for you"
    );
    assert_eq!(
        (a.body["reason"].as_str(), a.body["status"].as_str()),
        (Some("Forbidden"), Some("Failure"))
    );
    let a = post(
        &s,
        PODS,
        pod_json("mute", json!({ "deny": "mute" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 400);
    assert_eq!(
        a.body["message"],
        "admission webhook \"mute.example.com\" denied the request without explanation"
    );
    assert!(
        s.store()
            .get(apiserver_standin::resources::pods(), "default", "loud")
            .is_err()
    );
    // The validating webhook sees the object as it will be stored.
    assert!(
        !w.calls("/deny")[0]["request"]["object"]["metadata"]["uid"]
            .as_str()
            .unwrap_or("")
            .is_empty()
    );
}

#[tokio::test]
async fn failure_policy_decides_unreachable_and_late_webhooks() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on(
        "/late",
        script(|r| Reply::Late(Duration::from_millis(1500), Box::new(allow(r)))),
    );
    let service = json!({ "service": { "namespace": "webhooks", "name": "gone", "path": "/x" } });
    configure(
        &s,
        true,
        "a",
        vec![hook(
            "gone.example.com",
            service.clone(),
            json!({ "objectSelector": { "matchLabels": { "t": "fail" } } }),
        )],
    )
    .await;
    configure(&s, true, "b", vec![hook("ignored.example.com", service, json!({ "failurePolicy": "Ignore", "objectSelector": { "matchLabels": { "t": "ignore" } } }))]).await;
    configure(
        &s,
        true,
        "c",
        vec![hook(
            "late.example.com",
            url_client(&w, "/late"),
            json!({ "timeoutSeconds": 1, "objectSelector": { "matchLabels": { "t": "late" } } }),
        )],
    )
    .await;

    let a = post(
        &s,
        PODS,
        pod_json("p1", json!({ "t": "fail" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 500);
    assert_eq!(
        a.body["message"],
        "Internal error occurred: failed calling webhook \"gone.example.com\": failed to call webhook: Post \"https://gone.webhooks.svc:443/x?timeout=10s\": no endpoints available for service \"gone\""
    );
    assert_eq!(a.body["reason"], "InternalError");
    let a = post(
        &s,
        PODS,
        pod_json("p2", json!({ "t": "ignore" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
    let audit = s.audit();
    assert_eq!(
        audit.iter().find(|e| e.name == "p2").unwrap().annotations["failed-open.mutation.webhook.admission.k8s.io/round_0_index_1"],
        "ignored.example.com"
    );
    let a = post(
        &s,
        PODS,
        pod_json("p3", json!({ "t": "late" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 500);
    let message = a.body["message"].as_str().unwrap();
    assert!(
        message.ends_with("?timeout=1s\": context deadline exceeded"),
        "{message}"
    );
}

#[tokio::test]
async fn malformed_answers_are_calling_failures_and_unappliable_patches_are_not() {
    let s = start().await;
    let w = Webhook::start().await;
    let cases: Vec<(&str, webhook::Script, &str)> = vec![
        (
            "/text",
            script(|_| Reply::Raw(200, b"not json".to_vec())),
            "failed to call webhook: couldn't get version/kind; json parse error",
        ),
        (
            "/uid",
            script(|_| {
                Reply::Raw(200, json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": { "uid": "other", "allowed": true } }).to_string().into_bytes())
            }),
            "received invalid webhook response: expected response.uid=",
        ),
        (
            "/absent",
            script(|_| {
                Reply::Raw(
                    200,
                    json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview" })
                        .to_string()
                        .into_bytes(),
                )
            }),
            "received invalid webhook response: webhook response was absent",
        ),
        (
            "/v1beta1",
            script(|r| {
                let Reply::Raw(c, b) = allow(r) else {
                    unreachable!()
                };
                let mut v: Value = serde_json::from_slice(&b).unwrap();
                v["apiVersion"] = json!("admission.k8s.io/v1beta1");
                Reply::Raw(c, v.to_string().into_bytes())
            }),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview",
        ),
        (
            "/notype",
            script(|r| answer(r, json!({ "allowed": true, "patch": "W10=" }))),
            "webhook returned response.patch but not response.patchType",
        ),
        (
            "/merge",
            script(|r| {
                answer(
                    r,
                    json!({ "allowed": true, "patchType": "JSONMergePatch", "patch": "W3sib3AiOiJ0ZXN0IiwicGF0aCI6Ii9raW5kIiwidmFsdWUiOiJQb2QifV0=" }),
                )
            }),
            "unsupported patch type \"JSONMergePatch\"",
        ),
        (
            "/500",
            script(|_| Reply::Raw(500, b"boom".to_vec())),
            "an error on the server (\"boom\") has prevented the request from succeeding",
        ),
    ];
    let mut hooks = Vec::new();
    for (i, (path, s_, _)) in cases.iter().enumerate() {
        w.on(path, s_.clone());
        hooks.push(hook(
            &format!("case{i}.example.com"),
            url_client(&w, path),
            json!({ "objectSelector": { "matchLabels": { "case": i.to_string() } } }),
        ));
    }
    configure(&s, true, "cases", hooks).await;
    for (i, (path, _, expected)) in cases.iter().enumerate() {
        let a = post(
            &s,
            PODS,
            pod_json(
                &format!("c{i}"),
                json!({ "case": i.to_string() }),
                &[("app", "nginx")],
            ),
        )
        .await;
        assert_eq!(a.code, 500, "{path}: {}", a.body);
        let message = a.body["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "Internal error occurred: failed calling webhook \"case{i}.example.com\": "
            )),
            "{path}: {message}"
        );
        assert!(message.contains(expected), "{path}: {message}");
    }
    // An unappliable patch fails the request even under Ignore: it is not a calling failure.
    w.on(
        "/bad-patch",
        script(|r| patch(r, json!([{ "op": "remove", "path": "/spec/nothing" }]))),
    );
    configure(&s, true, "z", vec![hook("badpatch.example.com", url_client(&w, "/bad-patch"), json!({ "failurePolicy": "Ignore", "objectSelector": { "matchLabels": { "case": "patch" } } }))]).await;
    let a = post(
        &s,
        PODS,
        pod_json("bp", json!({ "case": "patch" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 500, "{}", a.body);
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Internal error occurred: ")
    );
    // The stand-in keeps serving.
    assert_eq!(post(&s, PODS, pod("after")).await.code, 201);
}

#[tokio::test]
async fn the_server_certificate_is_checked_against_ca_bundle_and_the_service_name() {
    let s = start().await;
    let w = Webhook::start().await;
    let other = Webhook::start().await;
    w.on(
        "/ok",
        script(|r| {
            patch(
                r,
                json!([{ "op": "add", "path": "/metadata/labels/via", "value": "service" }]),
            )
        }),
    );
    s.map_service("webhooks", "hook", 443, w.addr);
    s.map_service("webhooks", "impostor", 443, w.addr);
    let svc = |name: &str, ca: String| json!({ "service": { "namespace": "webhooks", "name": name, "path": "/ok" }, "caBundle": ca });
    configure(
        &s,
        true,
        "tls",
        vec![
            hook(
                "svc.example.com",
                svc("hook", w.ca_bundle()),
                json!({ "objectSelector": { "matchLabels": { "t": "svc" } } }),
            ),
            hook(
                "wrongca.example.com",
                svc("hook", other.ca_bundle()),
                json!({ "objectSelector": { "matchLabels": { "t": "ca" } } }),
            ),
            hook(
                "wrongname.example.com",
                svc("impostor", w.ca_bundle()),
                json!({ "objectSelector": { "matchLabels": { "t": "name" } } }),
            ),
        ],
    )
    .await;
    let a = post(
        &s,
        PODS,
        pod_json("svc", json!({ "t": "svc" }), &[("app", "nginx")]),
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
    assert_eq!(a.body["metadata"]["labels"]["via"], "service");
    let a = post(
        &s,
        PODS,
        pod_json("ca", json!({ "t": "ca" }), &[("app", "nginx")]),
    )
    .await;
    assert!(
        a.body["message"].as_str().unwrap().ends_with(
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        ),
        "{}",
        a.body
    );
    let a = post(
        &s,
        PODS,
        pod_json("name", json!({ "t": "name" }), &[("app", "nginx")]),
    )
    .await;
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .contains("x509: certificate is not valid"),
        "{}",
        a.body
    );
    s.unmap_service("webhooks", "hook", 443);
    let a = post(
        &s,
        PODS,
        pod_json("svc2", json!({ "t": "svc" }), &[("app", "nginx")]),
    )
    .await;
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .contains("no endpoints available for service \"hook\""),
        "{}",
        a.body
    );
}

#[tokio::test]
async fn rules_match_operations_scopes_and_subresources() {
    let s = start().await;
    let w = Webhook::start().await;
    for p in ["/pods", "/status", "/all", "/cluster", "/update"] {
        w.on(p, script(allow));
    }
    let c = |p: &str| url_client(&w, p);
    configure(&s, false, "rules", vec![
        hook("pods.example.com", c("/pods"), json!({ "rules": [rule(&["*"], &[""], &["pods"])] })),
        hook("status.example.com", c("/status"), json!({ "rules": [rule(&["*"], &[""], &["pods/status"])] })),
        hook("all.example.com", c("/all"), json!({ "rules": [rule(&["*"], &["*"], &["*/*"])] })),
        hook("cluster.example.com", c("/cluster"), json!({ "rules": [{ "operations": ["CREATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster" }] })),
        hook("update.example.com", c("/update"), json!({ "rules": [rule(&["UPDATE"], &[""], &["pods"])] })),
    ]).await;
    assert_eq!(post(&s, PODS, pod("r")).await.code, 201);
    let mut status = s
        .store()
        .get(apiserver_standin::resources::pods(), "default", "r")
        .unwrap();
    status["status"]["phase"] = json!("Running");
    let a = send(
        &s,
        "PUT",
        &format!("{PODS}/r/status"),
        Some(status),
        "application/json",
    )
    .await;
    assert_eq!(a.code, 200, "{}", a.body);
    let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "extra" } });
    assert_eq!(post(&s, "/api/v1/namespaces", ns).await.code, 201);
    let ops = |p: &str| {
        w.calls(p)
            .iter()
            .map(|c| {
                format!(
                    "{} {}{}",
                    c["request"]["operation"].as_str().unwrap(),
                    c["request"]["resource"]["resource"].as_str().unwrap(),
                    c["request"]
                        .get("subResource")
                        .and_then(Value::as_str)
                        .map(|s| format!("/{s}"))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(ops("/pods"), vec!["CREATE pods"]);
    assert_eq!(ops("/status"), vec!["UPDATE pods/status"]);
    assert_eq!(
        ops("/all"),
        vec!["CREATE pods", "UPDATE pods/status", "CREATE namespaces"]
    );
    assert_eq!(ops("/cluster"), vec!["CREATE namespaces"]);
    assert!(ops("/update").is_empty());
}

#[tokio::test]
async fn namespace_and_object_selectors_choose_the_requests() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on("/ns", script(allow));
    w.on("/obj", script(allow));
    let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "prod", "labels": { "env": "prod" } } });
    assert_eq!(post(&s, "/api/v1/namespaces", ns).await.code, 201);
    configure(&s, false, "sel", vec![
        hook("ns.example.com", url_client(&w, "/ns"), json!({ "namespaceSelector": { "matchExpressions": [{ "key": "env", "operator": "In", "values": ["prod"] }] } })),
        hook("obj.example.com", url_client(&w, "/obj"), json!({ "objectSelector": { "matchLabels": { "inject": "true" } } })),
    ]).await;
    assert_eq!(post(&s, PODS, pod("plain")).await.code, 201);
    assert_eq!(
        post(&s, "/api/v1/namespaces/prod/pods", pod("in-prod"))
            .await
            .code,
        201
    );
    assert_eq!(
        post(
            &s,
            PODS,
            pod_json("labelled", json!({ "inject": "true" }), &[("app", "nginx")])
        )
        .await
        .code,
        201
    );
    let names = |p: &str| {
        w.calls(p)
            .iter()
            .map(|c| c["request"]["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names("/ns"), vec!["in-prod"]);
    assert_eq!(names("/obj"), vec!["labelled"]);
}

#[tokio::test]
async fn an_if_needed_webhook_is_reinvoked_once_after_a_later_change() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on("/first", script(allow));
    w.on("/never", script(allow));
    w.on("/second", script(|r| {
        if r["request"]["object"]["metadata"]["labels"]["second"].is_null() {
            patch(r, json!([{ "op": "add", "path": "/metadata/labels", "value": { "second": "yes" } }]))
        } else {
            allow(r)
        }
    }));
    configure(
        &s,
        true,
        "a",
        vec![
            hook(
                "first.example.com",
                url_client(&w, "/first"),
                json!({ "reinvocationPolicy": "IfNeeded" }),
            ),
            hook("never.example.com", url_client(&w, "/never"), json!({})),
        ],
    )
    .await;
    configure(
        &s,
        true,
        "b",
        vec![hook(
            "second.example.com",
            url_client(&w, "/second"),
            json!({}),
        )],
    )
    .await;
    let a = post(&s, PODS, pod("re")).await;
    assert_eq!(a.code, 201, "{}", a.body);
    let first = w.calls("/first");
    assert_eq!(first.len(), 2);
    assert_eq!(
        first[1]["request"]["object"]["metadata"]["labels"]["second"],
        "yes"
    );
    assert_eq!(w.calls("/never").len(), 1);
    assert_eq!(w.calls("/second").len(), 1);
}

#[tokio::test]
async fn updates_and_deletes_carry_the_old_object() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on("/upd", script(|r| patch(r, json!([{ "op": "add", "path": "/metadata/annotations", "value": { "seen": "update" } }]))));
    w.on(
        "/del",
        script(|r| {
            answer(
                r,
                json!({ "allowed": false, "status": { "message": "keep it" } }),
            )
        }),
    );
    assert_eq!(post(&s, PODS, pod("u")).await.code, 201);
    configure(
        &s,
        true,
        "upd",
        vec![hook(
            "upd.example.com",
            url_client(&w, "/upd"),
            json!({ "rules": [rule(&["UPDATE"], &[""], &["pods"])] }),
        )],
    )
    .await;
    configure(
        &s,
        false,
        "del",
        vec![hook(
            "del.example.com",
            url_client(&w, "/del"),
            json!({ "rules": [rule(&["DELETE"], &[""], &["pods"])] }),
        )],
    )
    .await;
    let a = send(
        &s,
        "PATCH",
        &format!("{PODS}/u"),
        Some(json!({ "metadata": { "labels": { "x": "1" } } })),
        "application/merge-patch+json",
    )
    .await;
    assert_eq!(a.code, 200, "{}", a.body);
    assert_eq!(a.body["metadata"]["annotations"]["seen"], "update");
    let req = &w.calls("/upd")[0]["request"];
    assert_eq!(
        (req["operation"].as_str(), req["options"]["kind"].as_str()),
        (Some("UPDATE"), Some("UpdateOptions"))
    );
    assert!(req["oldObject"]["metadata"]["labels"].get("x").is_none());
    assert_eq!(req["object"]["metadata"]["labels"]["x"], "1");
    let a = send(&s, "DELETE", &format!("{PODS}/u"), None, "").await;
    assert_eq!(a.code, 400, "{}", a.body);
    assert_eq!(
        a.body["message"],
        "admission webhook \"del.example.com\" denied the request: keep it"
    );
    let req = &w.calls("/del")[0]["request"];
    assert!(req["object"].is_null());
    assert_eq!(req["oldObject"]["metadata"]["name"], "u");
    assert_eq!(req["options"]["kind"], "DeleteOptions");
    assert!(
        s.store()
            .get(apiserver_standin::resources::pods(), "default", "u")
            .is_ok()
    );
}

#[tokio::test]
async fn webhook_configurations_are_exempt_and_cel_match_conditions_are_refused() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on("/deny", script(|r| answer(r, json!({ "allowed": false }))));
    configure(
        &s,
        false,
        "deny-all",
        vec![hook(
            "denyall.example.com",
            url_client(&w, "/deny"),
            json!({ "rules": [rule(&["*"], &["*"], &["*/*"])] }),
        )],
    )
    .await;
    assert_eq!(post(&s, PODS, pod("x")).await.code, 400);
    configure(
        &s,
        true,
        "still-possible",
        vec![hook("m.example.com", url_client(&w, "/deny"), json!({}))],
    )
    .await;
    let a = send(
        &s,
        "DELETE",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/deny-all",
        None,
        "",
    )
    .await;
    assert_eq!(a.code, 200, "{}", a.body);
    let conf = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": { "name": "cel" },
        "webhooks": [hook("cel.example.com", url_client(&w, "/deny"), json!({ "matchConditions": [{ "name": "c", "expression": "true" }] }))],
    });
    let a = post(
        &s,
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        conf,
    )
    .await;
    assert_eq!(a.code, 422);
    assert!(a.body["message"].as_str().unwrap().contains("webhooks[0].matchConditions: Forbidden: CEL match conditions are not supported by apiserver-standin"), "{}", a.body);
    let stored = send(
        &s,
        "GET",
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/still-possible",
        None,
        "",
    )
    .await;
    let h = &stored.body["webhooks"][0];
    assert_eq!(
        (
            h["failurePolicy"].as_str(),
            h["matchPolicy"].as_str(),
            h["timeoutSeconds"].as_i64(),
            h["reinvocationPolicy"].as_str()
        ),
        (Some("Fail"), Some("Equivalent"), Some(10), Some("Never"))
    );
}

#[tokio::test]
async fn match_policy_equivalent_calls_a_webhook_in_its_own_version() {
    let s = start().await;
    let w = Webhook::start().await;
    w.on("/equivalent", script(allow));
    w.on("/exact", script(allow));
    let core_events = json!({ "rules": [rule(&["CREATE"], &[""], &["events"])] });
    let mut exact = core_events.clone();
    exact["matchPolicy"] = json!("Exact");
    configure(
        &s,
        false,
        "events",
        vec![
            hook(
                "equivalent.example.com",
                url_client(&w, "/equivalent"),
                core_events,
            ),
            hook("exact.example.com", url_client(&w, "/exact"), exact),
        ],
    )
    .await;
    let ev = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": { "name": "e1" }, "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "test", "reportingInstance": "t", "action": "Test", "reason": "Test", "type": "Normal",
        "regarding": { "kind": "Pod", "namespace": "default", "name": "x" },
    });
    let a = post(&s, "/apis/events.k8s.io/v1/namespaces/default/events", ev).await;
    assert_eq!(a.code, 201, "{}", a.body);
    let calls = w.calls("/equivalent");
    assert_eq!(calls.len(), 1);
    let req = &calls[0]["request"];
    assert_eq!(
        req["kind"],
        json!({ "group": "", "version": "v1", "kind": "Event" })
    );
    assert_eq!(
        req["requestKind"],
        json!({ "group": "events.k8s.io", "version": "v1", "kind": "Event" })
    );
    assert_eq!(req["object"]["involvedObject"]["name"], "x");
    assert!(w.calls("/exact").is_empty());
}
