use crate::engine::{EngineConfig, GuestStdio, NoHostCallbacks, PolicyEngine};

/// A waPC guest whose every call is one `fd_write(fd, iovs, 1, 300)` of the 21 bytes at 100
/// (iovec at 200); it answers with the nwritten slot (300) and the errno, 4 bytes each.
fn fd_write_guest(fd: i32, iovs: i32, extra_import: &str) -> Vec<u8> {
    let wat = format!(
        r#"(module
  (import "wapc" "__guest_request" (func $req (param i32 i32)))
  (import "wapc" "__guest_response" (func $resp (param i32 i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  {extra_import}
  (memory (export "memory") 1)
  (data (i32.const 100) "hello from the guest\n")
  (data (i32.const 200) "\64\00\00\00\15\00\00\00")
  (func (export "__guest_call") (param $op i32) (param $msg i32) (result i32)
    (i32.store (i32.const 304)
      (call $fd_write (i32.const {fd}) (i32.const {iovs}) (i32.const 1) (i32.const 300)))
    (call $resp (i32.const 300) (i32.const 8))
    (i32.const 1)))"#
    );
    wat::parse_str(wat).expect("valid WAT")
}

fn engine(wasm: &[u8]) -> PolicyEngine {
    let config = EngineConfig {
        guest_stdio: GuestStdio::Discard,
        ..EngineConfig::default()
    };
    PolicyEngine::new(wasm, config).expect("the module compiles")
}

/// (nwritten, errno) as the guest saw them.
fn written(engine: &PolicyEngine) -> (u32, i32) {
    let answer = engine
        .call("validate", b"{}", &NoHostCallbacks)
        .expect("the guest answers");
    let (nwritten, errno) = answer.split_at(4);
    (
        u32::from_le_bytes(nwritten.try_into().expect("4 bytes")),
        i32::from_le_bytes(errno.try_into().expect("4 bytes")),
    )
}

#[test]
fn stdout_and_stderr_take_the_whole_iovec() {
    for fd in [1, 2] {
        assert_eq!(written(&engine(&fd_write_guest(fd, 200, ""))), (21, 0));
    }
}

#[test]
fn other_descriptors_are_an_errno_and_wild_pointers_a_trap() {
    assert_eq!(written(&engine(&fd_write_guest(7, 200, ""))), (0, 8));
    let error = engine(&fd_write_guest(2, 65_532, ""))
        .call("validate", b"{}", &NoHostCallbacks)
        .expect_err("a wild iovec pointer traps");
    assert!(error.to_string().contains("out of bounds"), "{error}");
}

#[tokio::test(flavor = "current_thread")]
async fn fd_write_runs_on_an_async_thread() {
    // wasmtime-wasi's own fd_write would `block_on` here and panic.
    let engine = engine(&fd_write_guest(2, 200, ""));
    assert!(engine.runs_on_async_threads());
    assert_eq!(written(&engine), (21, 0));
}

#[test]
fn modules_importing_blocking_wasi_functions_stay_off_async_threads() {
    let clock = r#"(import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))"#;
    assert!(engine(&fd_write_guest(2, 200, clock)).runs_on_async_threads());
    let poll = r#"(import "wasi_snapshot_preview1" "poll_oneoff" (func (param i32 i32 i32 i32) (result i32)))"#;
    assert!(!engine(&fd_write_guest(2, 200, poll)).runs_on_async_threads());
}
