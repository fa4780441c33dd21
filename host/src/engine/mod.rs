//! waPC on wasmtime: compile a policy once, evaluate every call in a fresh, sandboxed instance.

mod callbacks;
mod config;
mod error;
mod instance;
mod limits;
mod metadata;
mod stdio;
mod ticker;
mod types;
mod version;
mod wapc;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wasmtime::{Engine, InstancePre, Linker, Module, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{I32Exit, WasiCtxBuilder};

pub use callbacks::{HostCallbacks, NoHostCallbacks, default_log, format_log_record};
pub use config::{DEFAULT_DEADLINE, DEFAULT_MEMORY_LIMIT, EngineConfig, GuestStdio};
pub use error::EngineError;
pub use instance::PolicyInstance;
pub use metadata::{METADATA_SECTION, custom_section, read_metadata};
pub use types::{SettingsValidationResponse, ValidationResponse};
pub use version::{KUBEWARDEN_VERSION, KubewardenVersion};

use limits::MemoryCap;
use ticker::Ticker;
use wapc::StoreState;

/// Bytes of each pooled linear memory kept resident between instances.
const KEEP_RESIDENT_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of each pooled table kept resident (8,192 entries; policy.wasm has 412): without it every
/// instance's table is reset with `madvise`, a TLB shootdown across all the host's threads.
const TABLE_KEEP_RESIDENT_BYTES: usize = 64 * 1024;

/// Modules compiled by this process: only [`PolicyEngine::new`] compiles.
static COMPILED_MODULES: AtomicU64 = AtomicU64::new(0);

/// How many modules this process has compiled so far; evaluations never add to it.
pub fn compiled_modules() -> u64 {
    COMPILED_MODULES.load(Ordering::SeqCst)
}

fn compile(engine: &Engine, wasm: &[u8]) -> Result<Module, EngineError> {
    COMPILED_MODULES.fetch_add(1, Ordering::SeqCst);
    Module::new(engine, wasm).map_err(load_error)
}

/// Start functions run before every call, in waPC's order.
const STARTERS: [&str; 2] = ["_start", "wapc_init"];

/// A compiled policy module, ready to evaluate requests from any number of threads.
///
/// Cloning is cheap and shares the compiled module and the epoch ticker.
#[derive(Clone)]
pub struct PolicyEngine {
    inner: Arc<Inner>,
}

struct Inner {
    // Field order matters on drop: the ticker thread holds an engine handle, stop it first.
    _ticker: Ticker,
    engine: Engine,
    pre: InstancePre<StoreState>,
    config: EngineConfig,
    metadata: Option<Value>,
    starters: Vec<&'static str>,
    /// No import of the module blocks on a tokio runtime ([`PolicyEngine::runs_on_async_threads`]).
    never_blocks_on_tokio: bool,
}

impl std::fmt::Debug for PolicyEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyEngine")
            .field("config", &self.inner.config)
            .field("annotated", &self.inner.metadata.is_some())
            .finish_non_exhaustive()
    }
}

/// Alias kept for callers that think of the compiled module rather than the engine.
pub type PolicyModule = PolicyEngine;

impl PolicyEngine {
    /// Compiles `wasm` (binary, or WAT text) once and pre-links WASI preview1 and the waPC imports.
    pub fn new(wasm: &[u8], config: EngineConfig) -> Result<Self, EngineError> {
        let metadata = read_metadata(wasm)?;
        metadata::check_metadata(metadata.as_ref())?;
        let mut wasm_config = wasmtime::Config::new();
        // Go >= 1.26 policies need function references; epochs give every evaluation its deadline.
        wasm_config.wasm_function_references(true);
        wasm_config.epoch_interruption(true);
        if let Some(slots) = config.instance_pool {
            let mut pool = wasmtime::PoolingAllocationConfig::new();
            pool.total_core_instances(slots)
                .total_memories(slots)
                .total_tables(slots)
                .max_memory_size(config.memory_limit)
                // Reset the first pages with memset instead of madvise: the next instance then
                // takes no page faults on them (-15 % per evaluation of policy.wasm).
                .linear_memory_keep_resident(config.memory_limit.min(KEEP_RESIDENT_BYTES))
                .table_keep_resident(TABLE_KEEP_RESIDENT_BYTES)
                // Linux >= 6.7: reset only the pages the instance wrote (-40 % of the fixed cost).
                .pagemap_scan(wasmtime::Enabled::Auto);
            wasm_config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
        }
        let engine = Engine::new(&wasm_config).map_err(load_error)?;
        let module = compile(&engine, wasm)?;
        if module.get_export("__guest_call").is_none() {
            return Err(EngineError::MissingExport("__guest_call"));
        }
        let starters = STARTERS
            .into_iter()
            .filter(|name| module.get_export(name).is_some())
            .collect();
        let mut linker: Linker<StoreState> = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut StoreState| &mut s.wasi)
            .map_err(load_error)?;
        stdio::shadow_fd_write(&mut linker).map_err(load_error)?;
        wapc::add_to_linker(&mut linker).map_err(load_error)?;
        let pre = linker.instantiate_pre(&module).map_err(load_error)?;
        let never_blocks_on_tokio = stdio::never_blocks_on_tokio(&module);
        let ticker = Ticker::start(engine.clone(), config.tick())?;
        Ok(Self {
            inner: Arc::new(Inner {
                _ticker: ticker,
                engine,
                pre,
                config,
                metadata,
                starters,
                never_blocks_on_tokio,
            }),
        })
    }

    /// Reads and compiles a module file.
    pub fn from_file(path: &Path, config: EngineConfig) -> Result<Self, EngineError> {
        let wasm = std::fs::read(path)
            .map_err(|e| EngineError::Load(format!("cannot read {}: {e}", path.display())))?;
        Self::new(&wasm, config)
    }

    /// The sandbox settings this engine applies.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// Whether evaluations may run on an async runtime's own threads: none of the module's
    /// imports blocks on a tokio runtime (wasmtime-wasi's sync linker does, for its file and
    /// poll functions). Otherwise they must run where blocking is allowed (`spawn_blocking`).
    pub fn runs_on_async_threads(&self) -> bool {
        self.inner.never_blocks_on_tokio
    }

    /// Writes `/tmp/perf-PID.map`, where `perf report` looks up the names of JIT-compiled code:
    /// one line per guest function (named when the module keeps its name section).
    pub fn write_perf_map(&self) -> std::io::Result<std::path::PathBuf> {
        use std::fmt::Write as _;
        let module = self.inner.pre.module();
        let text = module.text().as_ptr() as usize;
        let mut map = String::new();
        for function in module.functions() {
            let name = function
                .name
                .unwrap_or_else(|| format!("wasm[{}]", function.index.as_u32()));
            let _ = writeln!(
                map,
                "{:x} {:x} {name}",
                text + function.offset,
                function.len
            );
        }
        let path = std::path::PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()));
        std::fs::write(&path, map)?;
        Ok(path)
    }

    /// The JSON of the `io.kubewarden.metadata` custom section, when the module is annotated.
    pub fn metadata(&self) -> Option<&Value> {
        self.inner.metadata.as_ref()
    }

    /// Runs one waPC operation in a fresh instance and returns the guest's response bytes.
    pub fn call(
        &self,
        operation: &str,
        payload: &[u8],
        host: &dyn HostCallbacks,
    ) -> Result<Vec<u8>, EngineError> {
        self.instantiate(host)?.call(operation, payload)
    }

    /// A fresh instance, started (`_start`, `wapc_init`), that answers any number of calls with
    /// its state kept between them, as `kwctl bench` reuses one evaluator.
    pub fn instantiate<'h>(
        &self,
        host: &'h dyn HostCallbacks,
    ) -> Result<PolicyInstance<'h>, EngineError> {
        PolicyInstance::start(self, host)
    }

    /// Calls `validate_settings`; guest failures become `valid: false`, as in Kubewarden.
    pub fn validate_settings(
        &self,
        settings: &Value,
        host: &dyn HostCallbacks,
    ) -> Result<SettingsValidationResponse, EngineError> {
        let settings = settings_object(settings)?;
        let payload =
            serde_json::to_vec(&settings).map_err(|e| EngineError::InvalidInput(e.to_string()))?;
        match self.call("validate_settings", &payload, host) {
            Ok(bytes) => {
                Ok(
                    serde_json::from_slice(&bytes).unwrap_or_else(|e| SettingsValidationResponse {
                        valid: false,
                        message: Some(format!(
                            "Cannot deserialize settings validation response: {e}"
                        )),
                    }),
                )
            }
            Err(
                e @ (EngineError::GuestCallFailure(_)
                | EngineError::DeadlineExceeded
                | EngineError::MemoryLimitExceeded { .. }),
            ) => Ok(SettingsValidationResponse {
                valid: false,
                message: Some(format!("Error invoking settings validation callback: {e}")),
            }),
            Err(e) => Err(e),
        }
    }

    /// Calls `validate` with `{"request": request, "settings": settings}`.
    pub fn validate(
        &self,
        request: &Value,
        settings: &Value,
        host: &dyn HostCallbacks,
    ) -> Result<ValidationResponse, EngineError> {
        let settings = settings_json(settings)?;
        let request =
            serde_json::to_string(request).map_err(|e| EngineError::InvalidInput(e.to_string()))?;
        self.validate_json(&request, &settings, host)
    }

    /// `validate` with the request as it arrived (JSON text, e.g. a slice of the AdmissionReview)
    /// and settings serialized once by [`settings_json`]: no re-serialization per call.
    pub fn validate_json(
        &self,
        request: &str,
        settings_json: &[u8],
        host: &dyn HostCallbacks,
    ) -> Result<ValidationResponse, EngineError> {
        let payload = validate_payload(request, settings_json);
        let bytes = self.call("validate", &payload, host)?;
        serde_json::from_slice(&bytes).map_err(|e| EngineError::InvalidResponse(e.to_string()))
    }

    /// Calls `protocol_version` and returns the decoded JSON string (`v1` for SDK policies).
    pub fn protocol_version(&self) -> Result<String, EngineError> {
        let bytes = self.call("protocol_version", b"", &NoHostCallbacks)?;
        serde_json::from_slice(&bytes).map_err(|e| EngineError::InvalidResponse(e.to_string()))
    }

    fn new_store(&self, host: &'static dyn HostCallbacks) -> Store<StoreState> {
        let mut wasi = WasiCtxBuilder::new();
        match self.inner.config.guest_stdio {
            GuestStdio::Inherit => {
                wasi.inherit_stdout().inherit_stderr();
            }
            GuestStdio::Stderr => {
                wasi.stdout(std::io::stderr()).inherit_stderr();
            }
            GuestStdio::Discard => {}
        }
        let state = StoreState {
            wasi: wasi.build_p1(),
            stdio: self.inner.config.guest_stdio,
            limits: MemoryCap::new(self.inner.config.memory_limit),
            host,
            invocation: None,
            guest_response: None,
            guest_error: None,
            host_response: None,
            host_error: None,
            deadline: Instant::now() + self.inner.config.deadline,
            deadline_hit: false,
        };
        let mut store = Store::new(&self.inner.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|mut ctx| {
            let state = ctx.data_mut();
            if Instant::now() >= state.deadline {
                state.deadline_hit = true;
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        store
    }
}

fn arm_deadline(store: &mut Store<StoreState>, deadline: Duration) {
    store.data_mut().deadline = Instant::now() + deadline;
    store.set_epoch_deadline(1);
}

/// The `validate` payload, `{"request": request, "settings": settings}`, from both as JSON text.
pub fn validate_payload(request: &str, settings_json: &[u8]) -> Vec<u8> {
    const HEAD: &[u8] = b"{\"request\":";
    const MIDDLE: &[u8] = b",\"settings\":";
    let mut payload =
        Vec::with_capacity(HEAD.len() + request.len() + MIDDLE.len() + settings_json.len() + 1);
    payload.extend_from_slice(HEAD);
    payload.extend_from_slice(request.as_bytes());
    payload.extend_from_slice(MIDDLE);
    payload.extend_from_slice(settings_json);
    payload.push(b'}');
    payload
}

/// The settings as the `settings` of every `validate` payload ([`PolicyEngine::validate_json`]).
pub fn settings_json(settings: &Value) -> Result<Vec<u8>, EngineError> {
    serde_json::to_vec(&settings_object(settings)?)
        .map_err(|e| EngineError::InvalidInput(e.to_string()))
}

fn settings_object(settings: &Value) -> Result<Value, EngineError> {
    match settings {
        Value::Null => Ok(json!({})),
        Value::Object(_) => Ok(settings.clone()),
        _ => Err(EngineError::InvalidInput(
            "settings must be a JSON object or null".into(),
        )),
    }
}

fn len_i32(len: usize) -> Result<i32, EngineError> {
    i32::try_from(len).map_err(|_| EngineError::InvalidInput("payload larger than 2 GiB".into()))
}

fn load_error(e: wasmtime::Error) -> EngineError {
    EngineError::Load(format!("{e:#}"))
}

/// The innermost message of a wasmtime error: the trap or host error, without the backtrace text.
fn root_message(e: &wasmtime::Error) -> String {
    if let Some(trap) = e.downcast_ref::<Trap>() {
        return trap.to_string();
    }
    if let Some(exit) = e.downcast_ref::<I32Exit>() {
        return format!("guest exited with code {}", exit.0);
    }
    e.root_cause().to_string()
}

fn is_interrupt(store: &Store<StoreState>, e: &wasmtime::Error) -> bool {
    store.data().deadline_hit || e.downcast_ref::<Trap>() == Some(&Trap::Interrupt)
}

fn memory_error(store: &Store<StoreState>) -> Option<EngineError> {
    let limits = &store.data().limits;
    limits
        .refused
        .map(|requested| EngineError::MemoryLimitExceeded {
            requested,
            limit: limits.limit(),
        })
}

fn init_error(store: &Store<StoreState>, phase: &str, e: &wasmtime::Error) -> EngineError {
    if is_interrupt(store, e) {
        EngineError::InitDeadlineExceeded(phase.to_string())
    } else if let Some(memory) = memory_error(store) {
        memory
    } else {
        EngineError::InitFailed(format!("{phase}: {}", root_message(e)))
    }
}

fn call_error(store: &Store<StoreState>, e: &wasmtime::Error) -> EngineError {
    if is_interrupt(store, e) {
        EngineError::DeadlineExceeded
    } else if let Some(memory) = memory_error(store) {
        memory
    } else {
        EngineError::GuestCallFailure(root_message(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn engine_is_send_and_sync() {
        assert_send_sync::<PolicyEngine>();
    }

    #[test]
    fn tick_is_a_tenth_of_the_deadline_within_bounds() {
        let mut config = EngineConfig::default();
        assert_eq!(config.tick(), std::time::Duration::from_millis(100));
        config.deadline = std::time::Duration::from_millis(100);
        assert_eq!(config.tick(), std::time::Duration::from_millis(10));
    }
}
