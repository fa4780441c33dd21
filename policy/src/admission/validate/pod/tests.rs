//! The synthetic-pod checks of k8s 1.32 `ValidatePodCreate` for security contexts, sleep
//! hooks, mount options, resize policies, emptyDir size limits, downward-API volume files and
//! HTTP header names: each refused input next to an accepted one. Objects go through the §2.1
//! defaults first, as in the webhook.

use super::super::errors::FieldError;
use super::validate_pod;
use crate::api::SidecarSet;
use serde_json::{Value, json};

/// The errors of the synthetic pod for `spec`, after the §2.1 defaults.
fn errors_of(spec: Value) -> Vec<FieldError> {
    let mut object = json!({"metadata": {"name": "s"}, "spec": spec});
    crate::admission::apply_defaults(&mut object);
    let set: SidecarSet = serde_json::from_value(object).expect("valid SidecarSet JSON");
    let errs = validate_pod(&set.spec);
    for e in &errs {
        eprintln!("{e}");
    }
    errs
}

/// One sidecar container `c` (busybox) with the `extra` fields, and the `volumes`.
fn with_container(extra: Value, volumes: Value) -> Vec<FieldError> {
    let mut c = json!({"name": "c", "image": "busybox:1.36"});
    if let (Value::Object(c), Value::Object(extra)) = (&mut c, extra) {
        c.extend(extra);
    }
    errors_of(json!({"containers": [c], "volumes": volumes}))
}

fn fields(errs: &[FieldError]) -> Vec<&str> {
    errs.iter().map(|e| e.field.as_str()).collect()
}

/// The field paths for a container with `extra` fields and no volumes.
fn container_fields(extra: Value) -> Vec<String> {
    fields(&with_container(extra, json!([])))
        .into_iter()
        .map(String::from)
        .collect()
}

fn volume_fields(volumes: Value) -> Vec<String> {
    fields(&with_container(json!({}), volumes))
        .into_iter()
        .map(String::from)
        .collect()
}

const C: &str = "spec.containers[0]";

#[test]
fn sleep_hooks_must_fit_the_grace_period() {
    let sleep = |hook: &str, seconds: Value| {
        container_fields(json!({"lifecycle": {hook: {"sleep": {"seconds": seconds}}}}))
    };
    let errs = with_container(
        json!({"lifecycle": {"preStop": {"sleep": {"seconds": 45}}}}),
        json!([]),
    );
    assert_eq!(
        fields(&errs),
        [format!("{C}.lifecycle.preStop.sleep.seconds")]
    );
    assert!(
        errs[0]
            .message
            .contains("less than terminationGracePeriodSeconds (30)"),
        "{}",
        errs[0]
    );
    assert_eq!(
        sleep("postStart", json!(31)),
        [format!("{C}.lifecycle.postStart.sleep.seconds")]
    );
    // Kruise's validation options do not allow a zero sleep (nor a missing one, read as 0).
    for seconds in [json!(0), json!(-1), Value::Null] {
        assert_eq!(
            sleep("preStop", seconds),
            [format!("{C}.lifecycle.preStop.sleep.seconds")]
        );
    }
    for seconds in [1, 29, 30] {
        assert!(sleep("preStop", json!(seconds)).is_empty());
        assert!(sleep("postStart", json!(seconds)).is_empty());
    }
    // only the first handler is checked; the second one is reported as extra
    assert_eq!(
        container_fields(json!({"lifecycle": {"preStop":
            {"exec": {"command": ["true"]}, "sleep": {"seconds": 45}}}})),
        [format!("{C}.lifecycle.preStop.sleep")]
    );
    // native sidecars (restartPolicy Always init containers) are checked too
    let init = json!({"name": "i", "image": "busybox", "restartPolicy": "Always",
        "lifecycle": {"preStop": {"sleep": {"seconds": 60}}}});
    assert_eq!(
        fields(&errors_of(json!({"initContainers": [init]}))),
        ["spec.initContainers[0].lifecycle.preStop.sleep.seconds"]
    );
}

#[test]
fn run_as_user_and_group_must_be_valid_ids() {
    let sc = |sc: Value| container_fields(json!({"securityContext": sc}));
    assert_eq!(
        sc(json!({"runAsUser": -1})),
        [format!("{C}.securityContext.runAsUser")]
    );
    assert_eq!(
        sc(json!({"runAsGroup": -5})),
        [format!("{C}.securityContext.runAsGroup")]
    );
    assert_eq!(
        sc(json!({"runAsUser": 2_147_483_648_i64, "runAsGroup": 2_147_483_648_i64})),
        [
            format!("{C}.securityContext.runAsUser"),
            format!("{C}.securityContext.runAsGroup")
        ]
    );
    let errs = with_container(json!({"securityContext": {"runAsUser": -1}}), json!([]));
    assert!(
        errs[0]
            .to_string()
            .ends_with("Invalid value: -1: must be between 0 and 2147483647, inclusive"),
        "{}",
        errs[0]
    );
    for id in [0, 1000, 2_147_483_647] {
        assert!(sc(json!({"runAsUser": id, "runAsGroup": id, "runAsNonRoot": true})).is_empty());
    }
}

#[test]
fn seccomp_profiles() {
    let seccomp = |p: Value| container_fields(json!({"securityContext": {"seccompProfile": p}}));
    let field = format!("{C}.securityContext.seccompProfile.localhostProfile");
    let errs = with_container(
        json!({"securityContext": {"seccompProfile": {"type": "Localhost"}}}),
        json!([]),
    );
    assert_eq!(fields(&errs), [field.as_str()]);
    assert!(
        errs[0]
            .message
            .contains("must be set when seccomp type is Localhost")
    );
    // a profile with another type, a non-relative profile
    assert_eq!(
        seccomp(json!({"type": "RuntimeDefault", "localhostProfile": "p.json"})),
        [field.as_str()]
    );
    assert_eq!(
        seccomp(json!({"type": "Localhost", "localhostProfile": "/etc/p.json"})),
        [field.as_str()]
    );
    assert_eq!(
        seccomp(json!({"type": "Localhost", "localhostProfile": "a/../../p.json"})),
        [field.as_str()]
    );
    // type: required, and one of three
    assert_eq!(
        seccomp(json!({})),
        [format!("{C}.securityContext.seccompProfile.type")]
    );
    assert_eq!(
        seccomp(json!({"type": "Default"})),
        [format!("{C}.securityContext.seccompProfile.type")]
    );
    for ok in [
        json!({"type": "Localhost", "localhostProfile": "profiles/audit.json"}),
        json!({"type": "RuntimeDefault"}),
        json!({"type": "Unconfined", "localhostProfile": null}),
    ] {
        assert!(seccomp(ok).is_empty());
    }
}

#[test]
fn privilege_escalation_conflicts() {
    let sc = |sc: Value| container_fields(json!({"securityContext": sc}));
    let field = format!("{C}.securityContext");
    let errs = with_container(
        json!({"securityContext": {"allowPrivilegeEscalation": false,
            "capabilities": {"add": ["CAP_SYS_ADMIN"]}}}),
        json!([]),
    );
    assert_eq!(fields(&errs), [field.as_str()]);
    assert!(errs[0].message.contains(
        "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"
    ));
    let errs = with_container(
        json!({"securityContext": {"allowPrivilegeEscalation": false, "privileged": true}}),
        json!([]),
    );
    assert_eq!(fields(&errs), [field.as_str()]);
    assert!(
        errs[0]
            .message
            .contains("cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
    );
    // upstream compares the literal CAP_SYS_ADMIN only; escalation allowed or unset is fine
    for ok in [
        json!({"allowPrivilegeEscalation": false, "capabilities": {"add": ["SYS_ADMIN", "NET_ADMIN"]}}),
        json!({"allowPrivilegeEscalation": false, "privileged": false, "capabilities": {"drop": ["ALL"]}}),
        json!({"allowPrivilegeEscalation": true, "privileged": true, "capabilities": {"add": ["CAP_SYS_ADMIN"]}}),
        json!({"privileged": true, "capabilities": {"add": ["CAP_SYS_ADMIN"]}}),
    ] {
        assert!(sc(ok).is_empty());
    }
}

#[test]
fn proc_mount_and_app_armor() {
    let sc = |sc: Value| container_fields(json!({"securityContext": sc}));
    // the synthetic pod uses the host's user namespace
    assert_eq!(
        sc(json!({"procMount": "Unmasked"})),
        [format!("{C}.securityContext.procMount")]
    );
    assert_eq!(
        sc(json!({"procMount": "Masked"})),
        [format!("{C}.securityContext.procMount")]
    );
    assert!(sc(json!({"procMount": "Default"})).is_empty());
    let local = format!("{C}.securityContext.appArmorProfile.localhostProfile");
    assert_eq!(
        sc(json!({"appArmorProfile": {"type": "Localhost"}})),
        [local.as_str()]
    );
    assert_eq!(
        sc(json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": " p "}})),
        [local.as_str()]
    );
    assert_eq!(
        sc(json!({"appArmorProfile": {"type": "Unconfined", "localhostProfile": "p"}})),
        [local.as_str()]
    );
    assert_eq!(
        sc(json!({"appArmorProfile": {"type": "Enforce"}})),
        [format!("{C}.securityContext.appArmorProfile.type")]
    );
    assert!(
        sc(json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-nginx"}}))
            .is_empty()
    );
    assert!(sc(json!({"appArmorProfile": {"type": "RuntimeDefault"}})).is_empty());
}

#[test]
fn bidirectional_propagation_needs_a_privileged_container() {
    let volumes = json!([{"name": "data", "emptyDir": {}}]);
    let mount = |propagation: &str, sc: Value| {
        fields(&with_container(
            json!({"securityContext": sc, "volumeMounts": [
                {"name": "data", "mountPath": "/d", "mountPropagation": propagation}]}),
            volumes.clone(),
        ))
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let field = format!("{C}.volumeMounts[0].mountPropagation");
    let errs = with_container(
        json!({"volumeMounts": [{"name": "data", "mountPath": "/d", "mountPropagation": "Bidirectional"}]}),
        volumes.clone(),
    );
    assert_eq!(fields(&errs), [field.as_str()]);
    assert!(
        errs[0]
            .message
            .contains("available only to privileged containers")
    );
    assert_eq!(
        mount("Bidirectional", json!({"privileged": false})),
        [field.as_str()]
    );
    assert_eq!(
        mount("Shared", json!({"privileged": true})),
        [field.as_str()]
    );
    assert!(mount("Bidirectional", json!({"privileged": true})).is_empty());
    assert!(mount("HostToContainer", json!({})).is_empty());
    assert!(mount("None", json!({})).is_empty());
}

#[test]
fn recursive_read_only_needs_a_read_only_mount() {
    let volumes = json!([{"name": "data", "emptyDir": {}}]);
    let mount = |m: Value| {
        let mut base = json!({"name": "data", "mountPath": "/d"});
        if let (Value::Object(b), Value::Object(m)) = (&mut base, m) {
            b.extend(m);
        }
        fields(&with_container(
            json!({"volumeMounts": [base]}),
            volumes.clone(),
        ))
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let field = format!("{C}.volumeMounts[0].recursiveReadOnly");
    let errs = with_container(
        json!({"volumeMounts": [{"name": "data", "mountPath": "/d", "recursiveReadOnly": "Enabled"}]}),
        volumes.clone(),
    );
    assert_eq!(fields(&errs), [field.as_str()]);
    assert!(
        errs[0]
            .message
            .contains("may only be specified when readOnly is true")
    );
    assert_eq!(
        mount(json!({"recursiveReadOnly": "IfPossible", "readOnly": false})),
        [field.as_str()]
    );
    assert_eq!(
        mount(
            json!({"recursiveReadOnly": "Enabled", "readOnly": true, "mountPropagation": "HostToContainer"})
        ),
        [field.as_str()]
    );
    assert_eq!(
        mount(json!({"recursiveReadOnly": "Always", "readOnly": true})),
        [field.as_str()]
    );
    for ok in [
        json!({"recursiveReadOnly": "Enabled", "readOnly": true}),
        json!({"recursiveReadOnly": "IfPossible", "readOnly": true, "mountPropagation": "None"}),
        json!({"recursiveReadOnly": "Disabled"}),
        json!({"readOnly": true, "mountPropagation": "HostToContainer"}),
    ] {
        assert!(mount(ok).is_empty());
    }
}

#[test]
fn resize_policies() {
    let resize = |p: Value| container_fields(json!({"resizePolicy": p}));
    let errs = with_container(
        json!({"resizePolicy": [{"resourceName": "gpu", "restartPolicy": "NotRequired"}]}),
        json!([]),
    );
    assert_eq!(fields(&errs), [format!("{C}.resizePolicy[0].resourceName")]);
    assert!(
        errs[0]
            .message
            .contains(r#"supported values: "cpu", "memory""#)
    );
    assert_eq!(
        resize(
            json!([{"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "cpu", "restartPolicy": "RestartContainer"}])
        ),
        [format!("{C}.resizePolicy[1]")]
    );
    assert_eq!(
        resize(
            json!([{"resourceName": "memory", "restartPolicy": "Never"}, {"resourceName": "cpu"}])
        ),
        [
            format!("{C}.resizePolicy[0].restartPolicy"),
            format!("{C}.resizePolicy[1].restartPolicy")
        ]
    );
    assert!(
        resize(
            json!([{"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "memory", "restartPolicy": "RestartContainer"}])
        )
        .is_empty()
    );
    // init containers may not have one at all (Kruise leaves AllowSidecarResizePolicy off)
    let init = json!({"name": "i", "image": "busybox", "restartPolicy": "Always",
        "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]});
    assert_eq!(
        fields(&errors_of(json!({"initContainers": [init]}))),
        ["spec.initContainers[0].resizePolicy"]
    );
}

#[test]
fn empty_dir_size_limit_must_not_be_negative() {
    let errs = with_container(
        json!({}),
        json!([{"name": "data", "emptyDir": {"sizeLimit": "-1Gi"}}]),
    );
    assert_eq!(fields(&errs), ["spec.volumes[0].emptyDir.sizeLimit"]);
    assert!(
        errs[0]
            .message
            .contains("SizeLimit field must be a valid resource quantity")
    );
    assert_eq!(
        volume_fields(json!([{"name": "data", "emptyDir": {"sizeLimit": "lots"}}])),
        ["spec.volumes[0].emptyDir.sizeLimit"]
    );
    // a refused volume is not mountable either
    assert_eq!(
        fields(&with_container(
            json!({"volumeMounts": [{"name": "data", "mountPath": "/d"}]}),
            json!([{"name": "data", "emptyDir": {"sizeLimit": "-1"}}])
        )),
        [
            "spec.volumes[0].emptyDir.sizeLimit",
            "spec.containers[0].volumeMounts[0].name"
        ]
    );
    for ok in [json!("1Gi"), json!("0"), json!(512), json!("500Mi")] {
        assert!(
            volume_fields(
                json!([{"name": "data", "emptyDir": {"sizeLimit": ok, "medium": "Memory"}}])
            )
            .is_empty()
        );
    }
}

#[test]
fn downward_api_volume_files_read_metadata_only() {
    let item = |field_path: &str| {
        volume_fields(json!([{"name": "dw", "downwardAPI": {"items": [
            {"path": "f", "fieldRef": {"fieldPath": field_path}}]}}]))
    };
    let field = "spec.volumes[0].downwardAPI.items[0].fieldRef.fieldPath";
    let errs = with_container(
        json!({}),
        json!([{"name": "dw", "downwardAPI": {"items": [
            {"path": "n", "fieldRef": {"fieldPath": "spec.nodeName"}}]}}]),
    );
    assert_eq!(fields(&errs), [field]);
    assert!(
        errs[0]
            .message
            .contains(r#"Unsupported value: "spec.nodeName""#)
    );
    for env_only in [
        "spec.nodeName",
        "status.podIP",
        "spec.serviceAccountName",
        "status.hostIP",
    ] {
        assert_eq!(item(env_only), [field]);
    }
    // unknown labels and subscripts fail the conversion
    assert_eq!(item("spec.containers"), [field]);
    assert_eq!(item("spec.nodeName['x']"), [field]);
    // a subscript key must be a qualified name
    assert_eq!(
        item("metadata.labels['bad key']"),
        ["spec.volumes[0].downwardAPI.items[0].fieldRef"]
    );
    for ok in [
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "metadata.labels",
        "metadata.annotations",
        "metadata.labels['app']",
        "metadata.annotations['example.com/Team']",
    ] {
        assert!(item(ok).is_empty(), "{ok}");
    }
    // projected sources are checked the same way
    let projected = |field_path: &str| {
        volume_fields(
            json!([{"name": "p", "projected": {"sources": [{"downwardAPI": {"items": [
            {"path": "f", "fieldRef": {"fieldPath": field_path}}]}}]}}]),
        )
    };
    assert_eq!(
        projected("status.podIP"),
        ["spec.volumes[0].projected.sources[0].downwardAPI.items[0].fieldRef.fieldPath"]
    );
    assert!(projected("metadata.labels").is_empty());
    // exactly one of fieldRef and resourceFieldRef; a resource file names its container
    let source = |s: Value| {
        let mut file = json!({"path": "f"});
        if let (Value::Object(f), Value::Object(s)) = (&mut file, s) {
            f.extend(s);
        }
        volume_fields(json!([{"name": "dw", "downwardAPI": {"items": [file]}}]))
    };
    assert_eq!(source(json!({})), ["spec.volumes[0].downwardAPI.items[0]"]);
    assert_eq!(
        source(json!({"resourceFieldRef": {"resource": "limits.cpu"}})),
        ["spec.volumes[0].downwardAPI.items[0].resourceFieldRef.containerName"]
    );
    assert_eq!(
        source(json!({"resourceFieldRef": {"containerName": "c", "resource": "limits.gpu"}})),
        ["spec.volumes[0].downwardAPI.items[0].resourceFieldRef.resource"]
    );
    assert!(
        source(json!({"resourceFieldRef": {"containerName": "c", "resource": "limits.memory", "divisor": "1Mi"}}))
            .is_empty()
    );
    assert_eq!(
        source(
            json!({"resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "1Mi"}})
        ),
        ["spec.volumes[0].downwardAPI.items[0].resourceFieldRef.divisor"]
    );
}

#[test]
fn env_field_refs_keep_the_env_paths() {
    let env = |field_path: &str| {
        container_fields(
            json!({"env": [{"name": "V", "valueFrom": {"fieldRef": {"fieldPath": field_path}}}]}),
        )
    };
    for ok in [
        "spec.nodeName",
        "status.podIP",
        "status.hostIPs",
        "spec.serviceAccountName",
        "spec.host",
        "metadata.labels['app']",
    ] {
        assert!(env(ok).is_empty(), "{ok}");
    }
    // unsubscripted labels/annotations are for volume files only
    assert_eq!(
        env("metadata.labels"),
        [format!("{C}.env[0].valueFrom.fieldRef.fieldPath")]
    );
    assert_eq!(
        env("status.phase"),
        [format!("{C}.env[0].valueFrom.fieldRef.fieldPath")]
    );
}

#[test]
fn projected_volume_sources() {
    let projected =
        |sources: Value| volume_fields(json!([{"name": "p", "projected": {"sources": sources}}]));
    assert_eq!(
        projected(json!([{"secret": {"items": [{"key": "k", "path": "a"}]}}])),
        ["spec.volumes[0].projected.sources[0].secret.name"]
    );
    assert_eq!(
        projected(
            json!([{"secret": {"name": "s", "items": [{"key": "k", "path": "a"}]}},
            {"configMap": {"name": "m", "items": [{"key": "k", "path": "a"}]}}])
        ),
        ["spec.volumes[0].projected"]
    );
    assert!(
        projected(
            json!([{"secret": {"name": "s", "items": [{"key": "k", "path": "a"}]}},
            {"configMap": {"name": "m", "items": [{"key": "k", "path": "b"}]}},
            {"downwardAPI": {"items": [{"path": "c", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}])
        )
        .is_empty()
    );
}

#[test]
fn http_header_names() {
    let probe = |name: &str| {
        container_fields(json!({"readinessProbe": {"httpGet": {"port": 80,
            "httpHeaders": [{"name": name, "value": "x"}]}}}))
    };
    let field = format!("{C}.readinessProbe.httpGet.httpHeaders[0].name");
    let errs = with_container(
        json!({"readinessProbe": {"httpGet": {"port": 80, "httpHeaders": [{"name": "bad header", "value": "x"}]}}}),
        json!([]),
    );
    assert_eq!(fields(&errs), [field.as_str()]);
    assert!(errs[0].message.contains(r#""bad header""#));
    assert!(errs[0].message.contains("'[-A-Za-z0-9]+'"));
    // upstream's pattern is stricter than RFC 7230 tokens
    for bad in ["X_Custom", "", "X-Ü", "Accept:"] {
        assert_eq!(probe(bad), [field.as_str()], "{bad:?}");
    }
    for ok in ["X-Custom-Header", "Accept", "x-b3-traceid", "1"] {
        assert!(probe(ok).is_empty(), "{ok}");
    }
    // lifecycle handlers too
    assert_eq!(
        container_fields(
            json!({"lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop",
            "httpHeaders": [{"name": "a b", "value": "x"}]}}}})
        ),
        [format!("{C}.lifecycle.preStop.httpGet.httpHeaders[0].name")]
    );
}

/// The audit's rule-12 inputs (`r12-*-rejected.json`): each is refused, with a message naming
/// the offending field.
#[test]
fn audit_rule_12_cases_are_refused() {
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "prestop-sleep-over-grace-period",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "lifecycle": {"preStop": {"sleep": {"seconds": 45}}}}]}),
            "terminationGracePeriodSeconds",
        ),
        (
            "runasuser-neg",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "securityContext": {"runAsUser": -1}}]}),
            "runAsUser",
        ),
        (
            "runasgroup-neg",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "securityContext": {"runAsGroup": -5}}]}),
            "runAsGroup",
        ),
        (
            "seccomp-localhost",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "securityContext": {"seccompProfile": {"type": "Localhost"}}}]}),
            "localhostProfile",
        ),
        (
            "ape-sysadmin",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "securityContext": {"allowPrivilegeEscalation": false,
                    "capabilities": {"add": ["CAP_SYS_ADMIN"]}}}]}),
            "allowPrivilegeEscalation",
        ),
        (
            "bidirectional-unpriv",
            json!({"volumes": [{"name": "data", "emptyDir": {}}],
                "containers": [{"name": "log-agent", "image": "busybox:1.36", "volumeMounts": [
                    {"name": "data", "mountPath": "/d", "mountPropagation": "Bidirectional"}]}]}),
            "mountPropagation",
        ),
        (
            "rro-not-readonly",
            json!({"volumes": [{"name": "data", "emptyDir": {}}],
                "containers": [{"name": "log-agent", "image": "busybox:1.36", "volumeMounts": [
                    {"name": "data", "mountPath": "/d", "recursiveReadOnly": "Enabled"}]}]}),
            "recursiveReadOnly",
        ),
        (
            "resize-gpu",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "resizePolicy": [{"resourceName": "gpu", "restartPolicy": "NotRequired"}]}]}),
            "resizePolicy",
        ),
        (
            "emptydir-neg",
            json!({"volumes": [{"name": "data", "emptyDir": {"sizeLimit": "-1Gi"}}],
                "containers": [{"name": "log-agent", "image": "busybox:1.36"}]}),
            "sizeLimit",
        ),
        (
            "downward-nodename",
            json!({"volumes": [{"name": "dw", "downwardAPI": {"items": [
                    {"path": "n", "fieldRef": {"fieldPath": "spec.nodeName"}}]}}],
                "containers": [{"name": "log-agent", "image": "busybox:1.36"}]}),
            "spec.nodeName",
        ),
        (
            "header-bad",
            json!({"containers": [{"name": "log-agent", "image": "busybox:1.36",
                "readinessProbe": {"httpGet": {"port": 80,
                    "httpHeaders": [{"name": "bad header", "value": "x"}]}}}]}),
            "bad header",
        ),
    ];
    for (name, spec, needle) in cases {
        let errs = errors_of(spec);
        assert_eq!(errs.len(), 1, "{name}: {errs:?}");
        let text = errs[0].to_string();
        assert!(text.contains(needle), "{name}: {text}");
    }
}

/// A SidecarSet using every field these checks look at, all valid: nothing is reported.
#[test]
fn a_full_valid_sidecar_is_accepted() {
    let sidecar = json!({
        "name": "proxy", "image": "envoy:1.30",
        "securityContext": {
            "privileged": true, "allowPrivilegeEscalation": true, "runAsUser": 1337,
            "runAsGroup": 1337, "runAsNonRoot": true, "readOnlyRootFilesystem": true,
            "procMount": "Default", "capabilities": {"add": ["NET_ADMIN", "CAP_SYS_ADMIN"], "drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}, "appArmorProfile": {"type": "RuntimeDefault"},
            "seLinuxOptions": {"level": "s0:c123,c456"}
        },
        "lifecycle": {"preStop": {"sleep": {"seconds": 5}},
            "postStart": {"httpGet": {"port": 15000, "path": "/ready", "httpHeaders": [{"name": "X-Probe", "value": "1"}]}}},
        "livenessProbe": {"httpGet": {"port": "admin", "path": "/healthz", "httpHeaders": [{"name": "Host", "value": "a"}]}},
        "ports": [{"name": "admin", "containerPort": 15000}],
        "resources": {"limits": {"cpu": "1", "memory": "256Mi"}},
        "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "memory", "restartPolicy": "RestartContainer"}],
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}}],
        "volumeMounts": [
            {"name": "shared", "mountPath": "/shared", "mountPropagation": "Bidirectional"},
            {"name": "info", "mountPath": "/etc/podinfo", "readOnly": true, "recursiveReadOnly": "IfPossible"},
            {"name": "token", "mountPath": "/var/run/token", "readOnly": true}
        ]
    });
    let init = json!({"name": "setup", "image": "busybox:1.36", "restartPolicy": "Always",
        "securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/setup.json"}},
        "lifecycle": {"preStop": {"sleep": {"seconds": 30}}}});
    let volumes = json!([
        {"name": "shared", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "info", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "team", "fieldRef": {"fieldPath": "metadata.annotations['example.com/team']"}},
            {"path": "mem", "resourceFieldRef": {"containerName": "proxy", "resource": "limits.memory", "divisor": "1Mi"}}
        ]}},
        {"name": "token", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token", "audience": "mesh", "expirationSeconds": 3600}},
            {"downwardAPI": {"items": [{"path": "uid", "fieldRef": {"fieldPath": "metadata.uid"}}]}},
            {"configMap": {"name": "root-ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
        ]}}
    ]);
    let errs =
        errors_of(json!({"containers": [sidecar], "initContainers": [init], "volumes": volumes}));
    assert!(errs.is_empty(), "{errs:?}");
}
