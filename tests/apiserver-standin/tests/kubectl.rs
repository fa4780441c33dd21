//! The stand-in against kubectl: discovery, create from YAML, get, patch, apply, delete.

mod common;

use std::path::PathBuf;

use apiserver_standin::StandIn;
use common::*;
use serde_json::Value;

const SIDECARSET: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: log-agent
spec:
  selector:
    matchLabels:
      app: web
  containers:
  - name: log-agent
    image: fluentbit:1.0
"#;

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels:
    app: web
spec:
  containers:
  - name: app
    image: nginx:1.25
  - name: log-agent
    image: fluentbit:1.0
"#;

struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

/// The first executable `kubectl` on PATH; the test fails (never skips) without one.
fn find_kubectl() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("kubectl"))
        .find(|candidate| is_executable(candidate))
        .unwrap_or_else(|| {
            panic!(
                "kubectl not found on PATH ({}); install kubectl to run the kubectl tests",
                std::env::var("PATH").unwrap_or_default()
            )
        })
}

fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Kubectl {
    fn new(s: &StandIn, test: &str) -> Kubectl {
        let dir =
            std::env::temp_dir().join(format!("standin-kubectl-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp dir");
        let kubeconfig = dir.join("kubeconfig");
        s.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        Kubectl {
            bin: find_kubectl(),
            kubeconfig,
            dir,
        }
    }

    fn file(&self, name: &str, content: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, content).expect("write yaml");
        p
    }

    async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = tokio::process::Command::new(&self.bin)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env("HOME", &self.dir)
            .env_remove("KUBECONFIG")
            .output()
            .await
            .expect("run kubectl");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
        out
    }

    async fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&all).await).expect("json output")
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn kubectl_create_get_patch_apply_delete() {
    let s = start().await;
    let k = Kubectl::new(&s, "crud");
    let ss = k.file("ss.yaml", SIDECARSET);
    let pod = k.file("pod.yaml", POD);
    let ss_path = ss.to_string_lossy().into_owned();
    let pod_path = pod.to_string_lossy().into_owned();

    let out = k.ok(&["create", "-f", &ss_path]).await;
    assert!(
        out.contains("sidecarset.apps.kruise.io/log-agent created"),
        "{out}"
    );
    let out = k.ok(&["create", "-f", &pod_path]).await;
    assert!(out.contains("pod/web-1 created"), "{out}");

    let out = k.ok(&["get", "sidecarsets"]).await;
    assert!(out.contains("log-agent"), "{out}");
    assert!(
        out.lines().next().is_some_and(|h| h.contains("MATCHED")),
        "{out}"
    );
    let ss_json = k.json(&["get", "sidecarset", "log-agent"]).await;
    assert_eq!(ss_json["metadata"]["generation"], 1);
    assert!(ss_json["metadata"].get("namespace").is_none());

    let out = k.ok(&["get", "pods", "-l", "app=web"]).await;
    assert!(out.contains("web-1") && out.contains("Pending"), "{out}");
    let (ok, _, err) = k.run(&["create", "-f", &pod_path]).await;
    assert!(!ok && err.contains("AlreadyExists"), "{err}");

    // JSON patch of an image (allowed) and of something else (422 with the API server's message).
    let out = k
        .ok(&[
            "patch",
            "pod",
            "web-1",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/containers/1/image","value":"fluentbit:2.0"}]"#,
        ])
        .await;
    assert!(out.contains("pod/web-1 patched"), "{out}");
    let pod_json = k.json(&["get", "pod", "web-1"]).await;
    assert_eq!(pod_json["spec"]["containers"][1]["image"], "fluentbit:2.0");
    let (ok, _, err) = k
        .run(&[
            "patch",
            "pod",
            "web-1",
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/spec/containers/0/env","value":[{"name":"A","value":"1"}]}]"#,
        ])
        .await;
    assert!(!ok, "forbidden patch accepted");
    assert!(
        err.contains("is invalid: spec: Forbidden: pod updates may not change fields other than"),
        "{err}"
    );

    // Merge patch on the SidecarSet bumps its generation.
    k.ok(&[
        "patch",
        "sidecarset",
        "log-agent",
        "--type=merge",
        "-p",
        r#"{"spec":{"containers":[{"name":"log-agent","image":"fluentbit:2.0"}]}}"#,
    ])
    .await;
    let ss_json = k.json(&["get", "sidecarset", "log-agent"]).await;
    assert_eq!(ss_json["metadata"]["generation"], 2);

    // kubectl apply on existing objects (client-side apply, merge and strategic patches).
    let out = k.ok(&["apply", "-f", &ss_path]).await;
    assert!(out.contains("configured"), "{out}");
    let out = k.ok(&["apply", "-f", &pod_path]).await;
    assert!(out.contains("pod/web-1 configured"), "{out}");
    let pod_json = k.json(&["get", "pod", "web-1"]).await;
    assert_eq!(pod_json["spec"]["containers"][1]["image"], "fluentbit:1.0");

    let out = k.ok(&["delete", "pod", "web-1"]).await;
    assert!(out.contains("pod \"web-1\" deleted"), "{out}");
    let out = k.ok(&["delete", "-f", &ss_path]).await;
    assert!(out.contains("deleted"), "{out}");
    let out = k.ok(&["get", "sidecarsets,pods"]).await;
    assert!(
        !out.contains("log-agent") && !out.contains("web-1"),
        "{out}"
    );
    let (ok, _, err) = k.run(&["get", "pod", "web-1"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");

    // Discovery: api-resources lists our types.
    let out = k.ok(&["api-resources"]).await;
    for r in [
        "sidecarsets",
        "controllerrevisions",
        "leases",
        "pods",
        "namespaces",
        "events",
    ] {
        assert!(out.contains(r), "{r} missing from:\n{out}");
    }
}

/// kubectl's typed commands send protobuf bodies; the stand-in decodes them as the server does.
#[tokio::test]
async fn kubectl_typed_commands_send_protobuf() {
    let s = start().await;
    let k = Kubectl::new(&s, "protobuf");
    let out = k.ok(&["create", "namespace", "x"]).await;
    assert!(out.contains("namespace/x created"), "{out}");
    let ns = k.json(&["get", "namespace", "x"]).await;
    assert_eq!(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "x");
    assert_eq!(ns["status"]["phase"], "Active");

    k.ok(&["create", "configmap", "y", "-n", "x", "--from-literal=a=b"])
        .await;
    let cm = k.json(&["get", "configmap", "y", "-n", "x"]).await;
    assert_eq!(cm["data"], serde_json::json!({ "a": "b" }));

    k.ok(&[
        "create",
        "secret",
        "generic",
        "s",
        "--from-literal=token=t0k",
    ])
    .await;
    let secret = k.json(&["get", "secret", "s"]).await;
    assert_eq!(
        secret["data"]["token"], "dDBr",
        "bytes arrive base64-encoded"
    );
    assert_eq!(secret["type"], "Opaque");

    k.ok(&["run", "web", "--image=nginx:1.25", "--labels=app=web"])
        .await;
    let pod = k.json(&["get", "pod", "web"]).await;
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx:1.25");
    assert_eq!(pod["metadata"]["labels"]["app"], "web");
    assert!(
        pod["metadata"].get("generateName").is_none(),
        "empty Go strings are not sent on as \"\": {pod}"
    );
    k.ok(&["label", "pod", "web", "tier=front"]).await;
    let pod = k.json(&["get", "pod", "web"]).await;
    assert_eq!(pod["metadata"]["labels"]["tier"], "front");

    k.ok(&["create", "serviceaccount", "robot"]).await;
    k.ok(&[
        "create",
        "deployment",
        "d",
        "--image=nginx:1.25",
        "--replicas=2",
    ])
    .await;
    let d = k.json(&["get", "deployment", "d"]).await;
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "d");
    let out = k.ok(&["scale", "deployment", "d", "--replicas=4"]).await;
    assert!(out.contains("deployment.apps/d scaled"), "{out}");
    let d = k.json(&["get", "deployment", "d"]).await;
    assert_eq!(d["spec"]["replicas"], 4);
    assert_eq!(d["metadata"]["generation"], 2);
}
