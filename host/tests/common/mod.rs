//! waPC guest modules written in WAT, shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sidecarset_host::engine::{EngineConfig, GuestStdio};

/// Where the host writes the operation name.
const OP_BUF: u32 = 32 * 1024;
/// Where the host writes the payload (up to the end of the 1 MiB memory minus the response area).
const MSG_BUF: u32 = 64 * 1024;
/// Where host responses and errors are copied.
const RESP_BUF: u32 = 512 * 1024;

pub const SETTINGS_OK: &str = r#"{"valid":true,"message":null}"#;

/// The Pod of kubewarden.md §2.3.
pub fn pod() -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx"},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
}

/// The same Pod with the annotation the §8.4 probe adds.
pub fn annotated_pod() -> serde_json::Value {
    let mut pod = pod();
    pod["metadata"]["annotations"] = serde_json::json!({"probe/seen": "0"});
    pod
}

/// A Pod CREATE AdmissionRequest.
pub fn pod_request() -> serde_json::Value {
    serde_json::json!({
        "uid": "1299d386-525b-4032-98ae-1949f69f9cfc",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "nginx", "namespace": "default", "operation": "CREATE",
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
        "object": pod()
    })
}

/// The patch of kubewarden.md §2.7 for that mutation.
pub const PROBE_PATCH: &str = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2Fubm90YXRpb25zIiwidmFsdWUiOnsicHJvYmUvc2VlbiI6IjAifX1d";

/// A ValidationResponse that mutates the Pod like the probe.
pub fn mutating_response() -> String {
    serde_json::json!({"accepted": true, "message": null, "code": null,
        "mutated_object": annotated_pod(), "audit_annotations": null, "warnings": null})
    .to_string()
}

/// The response with its base64 patch decoded and every `updateTimestamp` value blanked.
pub fn without_timestamps(response: &serde_json::Value) -> serde_json::Value {
    use base64::Engine as _;
    let mut out = response.clone();
    if let Some(patch) = response["patch"].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(patch)
            .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let mut blanked = String::new();
        let mut rest = text.as_str();
        let key = "updateTimestamp\\\":\\\"";
        while let Some(at) = rest.find(key) {
            let value_start = at + key.len();
            blanked.push_str(&rest[..value_start]);
            rest = &rest[value_start..];
            let end = rest.find('\\').unwrap_or(rest.len());
            blanked.push('T');
            rest = &rest[end..];
        }
        blanked.push_str(rest);
        out["patch"] = serde_json::Value::String(blanked);
    }
    out
}

/// Short deadline and small memory cap so failure tests run fast.
pub fn test_config() -> EngineConfig {
    EngineConfig {
        deadline: Duration::from_millis(100),
        memory_limit: 8 * 1024 * 1024,
        guest_stdio: GuestStdio::Discard,
        instance_pool: None,
    }
}

/// A fresh scratch folder under cargo's per-target temp dir, unique per call (tests run in parallel).
pub fn scratch_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "sidecarset-host-{}-{name}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Data segments placed from offset 256 upwards.
struct Data {
    segments: String,
    next: u32,
}

impl Data {
    fn new() -> Self {
        Self {
            segments: String::new(),
            next: 256,
        }
    }

    fn add_at(&mut self, offset: u32, s: &str) -> (u32, u32) {
        let hex: String = s.bytes().map(|b| format!("\\{b:02x}")).collect();
        self.segments
            .push_str(&format!("  (data (i32.const {offset}) \"{hex}\")\n"));
        (offset, s.len() as u32)
    }

    fn add(&mut self, s: &str) -> (u32, u32) {
        let at = self.next;
        self.next += s.len() as u32 + 8;
        assert!(self.next < OP_BUF, "too much static data");
        self.add_at(at, s)
    }
}

fn respond((offset, len): (u32, u32)) -> String {
    format!("(call $resp (i32.const {offset}) (i32.const {len}))")
}

const IMPORTS: &str = r#"
  (import "wapc" "__guest_request" (func $req (param i32 i32)))
  (import "wapc" "__guest_response" (func $resp (param i32 i32)))
  (import "wapc" "__guest_error" (func $err (param i32 i32)))
"#;

/// A guest whose `__guest_call` runs `prelude` first, then answers
/// `validate_settings` (op length 17), `protocol_version` (16) and anything else with `validate`.
fn build(settings: &str, validate: &str, extra: &str, prelude: &str) -> Vec<u8> {
    let mut data = Data::new();
    let s = data.add(settings);
    let p = data.add("\"v1\"");
    let v = data.add(validate);
    let wat = format!(
        r#"(module {IMPORTS}
  {extra}
  (memory (export "memory") 16)
{segments}
  (func (export "__guest_call") (param $op i32) (param $msg i32) (result i32)
    (call $req (i32.const {OP_BUF}) (i32.const {MSG_BUF}))
    {prelude}
    (if (i32.eq (local.get $op) (i32.const 17)) (then {rs} (return (i32.const 1))))
    (if (i32.eq (local.get $op) (i32.const 16)) (then {rp} (return (i32.const 1))))
    {rv}
    (i32.const 1)))"#,
        segments = data.segments,
        rs = respond(s),
        rp = respond(p),
        rv = respond(v),
    );
    wat::parse_str(wat).expect("valid WAT")
}

/// Answers every call with fixed responses (and exports an empty `wapc_init`).
pub fn fixed_guest(settings: &str, validate: &str) -> Vec<u8> {
    build(settings, validate, r#"(func (export "wapc_init"))"#, "")
}

/// Like [`fixed_guest`] for `validate`, plus ops that fail: `spin` loops forever, `crash` traps
/// (unreachable), `balloon` grows memory without bound, `err` returns a guest error.
pub fn misbehaving_guest() -> Vec<u8> {
    let prelude = r#"(if (i32.eq (local.get $op) (i32.const 4)) (then (loop $spin (br $spin))))
    (if (i32.eq (local.get $op) (i32.const 5)) (then unreachable))
    (if (i32.eq (local.get $op) (i32.const 7)) (then
      (loop $grow (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
      unreachable))
    (if (i32.eq (local.get $op) (i32.const 3)) (then
      (call $err (i32.const 16384) (i32.const 19)) (return (i32.const 0))))"#;
    let extra = r#"(func (export "wapc_init"))
  (data (i32.const 16384) "settings are broken")"#;
    build(SETTINGS_OK, &mutating_response(), extra, prelude)
}

/// Fails `validate` with its own payload as the guest error: shows what the host sent.
pub fn payload_echo_guest() -> Vec<u8> {
    let prelude = format!(
        r#"(if (i32.eq (local.get $op) (i32.const 8)) (then
      (call $err (i32.const {MSG_BUF}) (local.get $msg)) (return (i32.const 0))))"#
    );
    build(
        SETTINGS_OK,
        r#"{"accepted":true}"#,
        r#"(func (export "wapc_init"))"#,
        &prelude,
    )
}

/// `wapc_init` never returns.
pub fn init_loop_guest() -> Vec<u8> {
    build(
        SETTINGS_OK,
        r#"{"accepted":true}"#,
        r#"(func (export "wapc_init") (loop $l (br $l)))"#,
        "",
    )
}

/// A command-style module whose `_start` calls `proc_exit(code)`.
pub fn start_exit_guest(code: i32) -> Vec<u8> {
    let extra = format!(
        r#"(import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (func (export "_start") (call $exit (i32.const {code})))
  (func (export "wapc_init"))"#
    );
    build(SETTINGS_OK, r#"{"accepted":true}"#, &extra, "")
}

/// Accepts on its first call only: proves that no guest state survives between evaluations.
pub fn counter_guest() -> Vec<u8> {
    let extra = r#"(global $calls (mut i32) (i32.const 0))
  (data (i32.const 20000) "{\"accepted\":false,\"message\":\"state leaked\"}")
  (func (export "wapc_init"))"#;
    let prelude = r#"(global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (i32.and (i32.eq (local.get $op) (i32.const 8)) (i32.gt_u (global.get $calls) (i32.const 1)))
      (then (call $resp (i32.const 20000) (i32.const 43)) (return (i32.const 1))))"#;
    build(SETTINGS_OK, r#"{"accepted":true}"#, extra, prelude)
}

/// A context-aware guest. It logs through `tracing/log`, then:
/// * `echo` (op length 4): `kubernetes/list_resources_all` with the call's payload, returns the raw answer;
/// * `get` (3): `kubernetes/get_resource` with the call's payload, returns the raw answer;
/// * `validate`: lists all `v1/Namespace`s and returns `{"accepted":true,"mutated_object":<list>}`.
///
/// A host error becomes the guest error.
pub fn host_call_guest() -> Vec<u8> {
    let mut data = Data::new();
    let settings = data.add(SETTINGS_OK);
    let kw = data.add("kubewarden");
    let k8s = data.add("kubernetes");
    let tracing = data.add("tracing");
    let log = data.add("log");
    let log_payload = data.add(r#"{"level":"info","message":"listing namespaces"}"#);
    let list_all = data.add("list_resources_all");
    let get = data.add("get_resource");
    let ns_request = data.add(
        r#"{"api_version":"v1","kind":"Namespace","label_selector":null,"field_selector":null,"field_masks":null}"#,
    );
    let prefix = r#"{"accepted":true,"mutated_object":"#;
    let p = data.add_at(RESP_BUF - prefix.len() as u32, prefix);
    let c = |(o, l): (u32, u32)| format!("(i32.const {o}) (i32.const {l})");
    let wat = format!(
        r#"(module {IMPORTS}
  (import "wapc" "__host_call" (func $host_call (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wapc" "__host_response_len" (func $host_response_len (result i32)))
  (import "wapc" "__host_response" (func $host_response (param i32)))
  (import "wapc" "__host_error_len" (func $host_error_len (result i32)))
  (import "wapc" "__host_error" (func $host_error (param i32)))
  (memory (export "memory") 16)
{segments}
  (func (export "wapc_init"))
  (func (export "__guest_call") (param $op i32) (param $msg i32) (result i32)
    (local $ok i32) (local $len i32)
    (call $req (i32.const {OP_BUF}) (i32.const {MSG_BUF}))
    (if (i32.eq (local.get $op) (i32.const 17)) (then {rs} (return (i32.const 1))))
    (drop (call $host_call {kw} {tracing} {log} {log_payload}))
    (if (i32.eq (local.get $op) (i32.const 4))
      (then (local.set $ok (call $host_call {kw} {k8s} {list_all} (i32.const {MSG_BUF}) (local.get $msg))))
      (else (if (i32.eq (local.get $op) (i32.const 3))
        (then (local.set $ok (call $host_call {kw} {k8s} {get} (i32.const {MSG_BUF}) (local.get $msg))))
        (else (local.set $ok (call $host_call {kw} {k8s} {list_all} {ns_request}))))))
    (if (i32.eqz (local.get $ok)) (then
      (local.set $len (call $host_error_len))
      (call $host_error (i32.const {RESP_BUF}))
      (call $err (i32.const {RESP_BUF}) (local.get $len))
      (return (i32.const 0))))
    (local.set $len (call $host_response_len))
    (call $host_response (i32.const {RESP_BUF}))
    (if (i32.eq (local.get $op) (i32.const 8)) (then
      (i32.store8 (i32.add (i32.const {RESP_BUF}) (local.get $len)) (i32.const 125))
      (call $resp (i32.const {p_off}) (i32.add (local.get $len) (i32.const {p_len_plus})))
      (return (i32.const 1))))
    (call $resp (i32.const {RESP_BUF}) (local.get $len))
    (i32.const 1)))"#,
        segments = data.segments,
        rs = respond(settings),
        kw = c(kw),
        k8s = c(k8s),
        tracing = c(tracing),
        log = c(log),
        log_payload = c(log_payload),
        list_all = c(list_all),
        get = c(get),
        ns_request = c(ns_request),
        p_off = p.0,
        p_len_plus = p.1 + 1,
    );
    wat::parse_str(wat).expect("valid WAT")
}

/// Appends a custom section, as `kwctl annotate` does with `io.kubewarden.metadata`.
pub fn with_custom_section(mut wasm: Vec<u8>, name: &str, contents: &[u8]) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(contents);
    wasm.push(0);
    leb(body.len(), &mut wasm);
    wasm.extend_from_slice(&body);
    wasm
}

/// The repository root (policy.wasm, examples/, policy/metadata.yml live there).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The real policy module; fails the test when it has not been built.
pub fn policy_wasm() -> PathBuf {
    let path = repo_root().join("policy.wasm");
    assert!(
        path.is_file(),
        "{} is missing: run `make policy.wasm` first (`make test` builds it)",
        path.display()
    );
    path
}

/// The real policy annotated with policy/metadata.yml (as `make annotated-policy.wasm`), in `dir`.
pub fn annotated_policy_wasm(dir: &std::path::Path) -> PathBuf {
    use sidecarset_host::annotate::{Metadata, annotate};
    let wasm = std::fs::read(policy_wasm()).expect("read policy.wasm");
    let text = std::fs::read_to_string(repo_root().join("policy/metadata.yml")).unwrap();
    let (annotated, _) = annotate(&wasm, Metadata::from_yaml(&text).unwrap(), None).unwrap();
    let path = dir.join("annotated-policy.wasm");
    std::fs::write(&path, annotated).unwrap();
    path
}

/// `wasm` with an `io.kubewarden.metadata` section declaring these `(apiVersion, kind)` reads.
pub fn with_context_aware_resources(wasm: Vec<u8>, resources: &[(&str, &str)]) -> Vec<u8> {
    let declared: Vec<serde_json::Value> = resources
        .iter()
        .map(|(v, k)| serde_json::json!({"apiVersion": v, "kind": k}))
        .collect();
    let metadata = serde_json::json!({"rules": [], "mutating": true, "protocolVersion": "v1",
        "executionMode": "kubewarden-wapc", "contextAwareResources": declared});
    with_custom_section(
        wasm,
        sidecarset_host::engine::METADATA_SECTION,
        metadata.to_string().as_bytes(),
    )
}

/// `validate` busy-waits `nanos` on the monotonic clock, then accepts.
pub fn clock_wait_guest(nanos: u64) -> Vec<u8> {
    let extra = r#"(import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (global $until (mut i64) (i64.const 0))
  (func (export "wapc_init"))
  (func $now (result i64)
    (drop (call $clock (i32.const 1) (i64.const 1) (i32.const 128)))
    (i64.load (i32.const 128)))"#;
    let prelude = format!(
        r#"(if (i32.eq (local.get $op) (i32.const 8)) (then
      (global.set $until (i64.add (call $now) (i64.const {nanos})))
      (loop $wait (br_if $wait (i64.lt_u (call $now) (global.get $until))))))"#
    );
    build(SETTINGS_OK, r#"{"accepted":true}"#, extra, &prelude)
}

/// `validate` polls `kubernetes/get_resource` of the Namespace `release` (sleeping 1 ms between
/// tries) and accepts once it exists: an evaluation the test holds until it creates that object.
/// The module declares `v1/Namespace` in its `contextAwareResources`.
pub fn held_until_released_guest() -> Vec<u8> {
    let mut data = Data::new();
    let settings = data.add(SETTINGS_OK);
    let accepted = data.add(r#"{"accepted":true}"#);
    let kw = data.add("kubewarden");
    let k8s = data.add("kubernetes");
    let get = data.add("get_resource");
    let release = data.add(
        r#"{"api_version":"v1","kind":"Namespace","name":"release","namespace":null,"disable_cache":true}"#,
    );
    let c = |(o, l): (u32, u32)| format!("(i32.const {o}) (i32.const {l})");
    // A WASI clock subscription (48 bytes) at SUB, its event at SUB + 64, nevents at SUB + 96.
    let sub = 24576;
    let wat = format!(
        r#"(module {IMPORTS}
  (import "wapc" "__host_call" (func $host_call (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 16)
{segments}
  (func (export "wapc_init"))
  (func (export "__guest_call") (param $op i32) (param $msg i32) (result i32)
    (call $req (i32.const {OP_BUF}) (i32.const {MSG_BUF}))
    (if (i32.eq (local.get $op) (i32.const 17)) (then {rs} (return (i32.const 1))))
    (block $released
      (loop $wait
        (br_if $released (call $host_call {kw} {k8s} {get} {release}))
        (i64.store (i32.const {sub}) (i64.const 0))
        (i32.store8 (i32.const {tag}) (i32.const 0))
        (i32.store (i32.const {clock_id}) (i32.const 1))
        (i64.store (i32.const {timeout}) (i64.const 1000000))
        (i64.store (i32.const {precision}) (i64.const 0))
        (i32.store16 (i32.const {flags}) (i32.const 0))
        (drop (call $poll (i32.const {sub}) (i32.const {event}) (i32.const 1) (i32.const {nevents})))
        (br $wait)))
    {ra}
    (i32.const 1)))"#,
        segments = data.segments,
        rs = respond(settings),
        ra = respond(accepted),
        kw = c(kw),
        k8s = c(k8s),
        get = c(get),
        release = c(release),
        tag = sub + 8,
        clock_id = sub + 16,
        timeout = sub + 24,
        precision = sub + 32,
        flags = sub + 40,
        event = sub + 64,
        nevents = sub + 96,
    );
    with_context_aware_resources(
        wat::parse_str(wat).expect("valid WAT"),
        &[("v1", "Namespace")],
    )
}
