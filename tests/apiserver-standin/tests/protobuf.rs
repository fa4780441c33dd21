//! Protobuf request bodies sent by hand: the envelope, defaults from the URL, unknown fields,
//! and each malformed body answered as kube-apiserver answers it, the server serving on.

mod common;

use common::*;
use serde_json::Value;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field.
fn ld(tag: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(u64::from(tag) << 3 | 2, &mut out);
    varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    if !api_version.is_empty() {
        type_meta.extend(ld(1, api_version.as_bytes()));
    }
    if !kind.is_empty() {
        type_meta.extend(ld(2, kind.as_bytes()));
    }
    let mut body = b"k8s\0".to_vec();
    body.extend(ld(1, &type_meta));
    body.extend(ld(2, raw));
    body
}

/// ConfigMap{metadata{name}, data{k: v}} plus an unknown field 99.
fn configmap(name: &str) -> Vec<u8> {
    let mut raw = ld(1, &ld(1, name.as_bytes()));
    raw.extend(ld(2, &[ld(1, b"k"), ld(2, b"v")].concat()));
    raw.extend(ld(99, b"ignored"));
    raw
}

async fn post(s: &apiserver_standin::StandIn, path: &str, body: Vec<u8>) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{}{path}", s.url()))
        .header("Content-Type", "application/vnd.kubernetes.protobuf")
        .body(body)
        .send()
        .await
        .expect("send");
    let code = resp.status().as_u16();
    let bytes = resp.bytes().await.expect("answer");
    (code, serde_json::from_slice(&bytes).expect("json answer"))
}

#[tokio::test]
async fn protobuf_bodies_decode_and_bad_ones_get_the_servers_errors() {
    let s = start().await;
    let cms = "/api/v1/namespaces/default/configmaps";

    // No TypeMeta in the envelope: the URL's type is assumed; unknown fields are skipped.
    let (code, obj) = post(&s, cms, envelope("", "", &configmap("plain"))).await;
    assert_eq!(code, 201, "{obj}");
    assert_eq!(obj["kind"], "ConfigMap");
    assert_eq!(obj["data"]["k"], "v");

    let (code, st) = post(&s, cms, b"{\"not\":\"protobuf\"}".to_vec()).await;
    assert_eq!(code, 400);
    assert!(
        st["message"].as_str().is_some_and(
            |m| m.starts_with("provided data does not appear to be a protobuf message")
        ),
        "{st}"
    );

    let mut truncated = configmap("cut");
    truncated.truncate(truncated.len() - 3);
    let (code, st) = post(&s, cms, envelope("v1", "ConfigMap", &truncated)).await;
    assert_eq!(code, 400);
    assert_eq!(
        st["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: unexpected EOF"
    );

    // metadata.name sent as a varint.
    let (code, st) = post(&s, cms, envelope("v1", "ConfigMap", &ld(1, &[0x08, 0x01]))).await;
    assert_eq!(code, 400);
    assert!(
        st["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("proto: wrong wireType = 0 for field ObjectMeta.name")),
        "{st}"
    );

    let (code, st) = post(&s, cms, envelope("v1", "Widget", &configmap("w"))).await;
    assert_eq!(code, 400);
    assert!(
        st["message"]
            .as_str()
            .is_some_and(|m| m.contains("no kind \"Widget\" is registered for version \"v1\"")),
        "{st}"
    );

    let (code, st) = post(&s, cms, envelope("v1", "Pod", &configmap("p"))).await;
    assert_eq!(code, 400, "a Pod body on the configmaps URL: {st}");

    let (code, st) = post(
        &s,
        "/apis/apps.kruise.io/v1alpha1/sidecarsets",
        envelope("apps.kruise.io/v1alpha1", "SidecarSet", &[]),
    )
    .await;
    assert_eq!(code, 415, "custom resources have no protobuf form: {st}");

    let (code, obj) = post(&s, cms, envelope("v1", "ConfigMap", &configmap("after"))).await;
    assert_eq!(code, 201, "still serving: {obj}");
}
