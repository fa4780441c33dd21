//! The policy crate's unit tests built for wasm32-wasip1 (`make policy-unit-wasm32`, part of
//! `make test`) and run here as a WASI command in wasmtime: the code paths that differ by target
//! (`simd128` scans, 32-bit `usize`) are tested where policy.wasm runs them.

use std::path::PathBuf;
use wasmtime::{Config, Engine, Linker, Module, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

/// The newest unit-test module cargo built for wasm32-wasip1.
fn unit_test_module() -> PathBuf {
    let deps = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/wasm32-wasip1/debug/deps");
    let newest = std::fs::read_dir(&deps).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                name.starts_with("sidecarset_policy-") && name.ends_with(".wasm")
            })
            .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
    });
    newest.unwrap_or_else(|| {
        panic!(
            "no unit-test module in {}: run `make policy-unit-wasm32` (or `make test`) first",
            deps.display()
        )
    })
}

#[test]
fn policy_unit_tests_pass_in_wasm32() {
    let path = unit_test_module();
    let mut config = Config::new();
    config.wasm_simd(true);
    let engine = Engine::new(&config).expect("engine");
    let module = Module::from_file(&engine, &path).expect("the unit-test module compiles");
    let mut linker: Linker<WasiP1Ctx> = Linker::new(&engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |ctx| ctx).expect("WASI linked");
    // The waPC imports of the module's entry point: no unit test calls the host.
    linker
        .define_unknown_imports_as_traps(&module)
        .expect("waPC imports defined");
    // Some tests read the conformance cases: the repository, read-only, at its own path.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository root");
    let root_text = root.to_str().expect("a UTF-8 path");
    // libtest on wasm32 runs the tests one after another; a failure aborts with its message.
    let mut wasi = WasiCtxBuilder::new();
    wasi.inherit_stdout()
        .inherit_stderr()
        .args(&["sidecarset_policy.wasm", "--quiet", "--nocapture"])
        .preopened_dir(&root, root_text, FsPerms::ReadOnly)
        .expect("the repository preopened");
    let wasi = wasi.build_p1();
    let mut store = Store::new(&engine, wasi);
    let instance = linker
        .instantiate(&mut store, &module)
        .expect("the unit-test module instantiates");
    let start = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .expect("a WASI command");
    let status = match start.call(&mut store, ()) {
        Ok(()) => 0,
        Err(error) => match error.downcast_ref::<wasmtime_wasi::I32Exit>() {
            Some(exit) => exit.0,
            None => panic!("the unit tests trapped in {}: {error:?}", path.display()),
        },
    };
    assert_eq!(
        status,
        0,
        "policy unit tests failed in wasm32 ({})",
        path.display()
    );
}
