//! The stand-in as a separate process, and kube-rs discovery against it.

mod common;

use std::process::Stdio;

use common::*;
use kube::Discovery;
use kube::api::GroupVersionKind;
use kube::discovery::Scope;
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test]
async fn the_binary_serves_version() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_apiserver-standin"))
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the apiserver-standin binary");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(TIMEOUT, lines.next_line())
        .await
        .expect("a line in time")
        .expect("read stdout")
        .expect("the binary printed its address");
    let url = line
        .strip_prefix("apiserver-standin listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"));
    let config = kube::Config::new(url.parse().expect("url"));
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let client = kube::Client::try_from(config).expect("client");
    let version = client.apiserver_version().await.expect("GET /version");
    assert!(!version.git_version.is_empty(), "{version:?}");
    assert!(
        !version.major.is_empty() && !version.minor.is_empty(),
        "{version:?}"
    );
    child.kill().await.expect("stop the binary");
}

#[tokio::test]
async fn kube_discovery_finds_the_served_resources() {
    let s = start().await;
    let discovery = Discovery::new(s.client().expect("client"))
        .run()
        .await
        .expect("discovery");
    let cases = [
        (
            "apps.kruise.io",
            "v1alpha1",
            "SidecarSet",
            "sidecarsets",
            Scope::Cluster,
        ),
        ("", "v1", "Pod", "pods", Scope::Namespaced),
        (
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            Scope::Namespaced,
        ),
    ];
    for (group, version, kind, plural, scope) in cases {
        let (ar, caps) = discovery
            .resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
            .unwrap_or_else(|| panic!("{group}/{version} {kind} not discovered"));
        assert_eq!(ar.plural, plural);
        assert_eq!(caps.scope, scope, "{kind}");
        for verb in [
            "get", "list", "watch", "create", "update", "patch", "delete",
        ] {
            assert!(caps.supports_operation(verb), "{kind} lacks {verb}");
        }
    }
    let (_, ss) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(
            "apps.kruise.io",
            "v1alpha1",
            "SidecarSet",
        ))
        .expect("sidecarsets");
    assert!(
        ss.subresources.iter().any(|(r, _)| r.plural == "status"),
        "sidecarsets/status missing: {:?}",
        ss.subresources
    );
}
