//! Per-store waPC state and the `wapc` host imports, as wasmtime-provider/wapc implement them.

use std::time::Instant;

use wasmtime::{Caller, Extern, Linker, Memory};
use wasmtime_wasi::p1::WasiP1Ctx;

use super::callbacks::{HostCallbacks, dispatch};
use super::limits::MemoryCap;

/// Operation name and payload of the pending `__guest_call`.
pub(crate) struct Invocation {
    pub(crate) operation: Vec<u8>,
    pub(crate) payload: Vec<u8>,
}

/// Everything one evaluation's `Store` carries.
pub(crate) struct StoreState {
    pub(crate) wasi: WasiP1Ctx,
    /// Where the guest's `fd_write` goes (`stdio::fd_write`).
    pub(crate) stdio: super::config::GuestStdio,
    pub(crate) limits: MemoryCap,
    /// Borrowed from the caller for the lifetime of the store (see `PolicyEngine::with_store`).
    pub(crate) host: &'static dyn HostCallbacks,
    pub(crate) invocation: Option<Invocation>,
    pub(crate) guest_response: Option<Vec<u8>>,
    pub(crate) guest_error: Option<String>,
    pub(crate) host_response: Option<Vec<u8>>,
    pub(crate) host_error: Option<String>,
    /// Wall-clock deadline of the running phase, checked on every epoch tick.
    pub(crate) deadline: Instant,
    pub(crate) deadline_hit: bool,
}

pub(super) fn memory(caller: &mut Caller<'_, StoreState>) -> wasmtime::Result<Memory> {
    caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| wasmtime::Error::msg("guest does not export `memory`"))
}

fn range(ptr: i32, len: usize) -> wasmtime::Result<std::ops::Range<usize>> {
    // waPC pointers are wasm32 addresses passed as i32: reinterpret the bits.
    let start = ptr as u32 as usize;
    let end = start
        .checked_add(len)
        .ok_or_else(|| wasmtime::Error::msg("guest buffer out of bounds"))?;
    Ok(start..end)
}

pub(super) fn read(data: &[u8], ptr: i32, len: i32) -> wasmtime::Result<&[u8]> {
    data.get(range(ptr, len as u32 as usize)?)
        .ok_or_else(|| wasmtime::Error::msg("guest buffer out of bounds"))
}

pub(super) fn write(data: &mut [u8], ptr: i32, bytes: &[u8]) -> wasmtime::Result<()> {
    data.get_mut(range(ptr, bytes.len())?)
        .ok_or_else(|| wasmtime::Error::msg("guest buffer out of bounds"))?
        .copy_from_slice(bytes);
    Ok(())
}

fn read_string(data: &[u8], ptr: i32, len: i32) -> wasmtime::Result<String> {
    Ok(String::from_utf8_lossy(read(data, ptr, len)?).into_owned())
}

fn len_i32(len: usize) -> wasmtime::Result<i32> {
    i32::try_from(len).map_err(|_| wasmtime::Error::msg("host buffer too large for the guest"))
}

/// Registers the nine `wapc` imports.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.func_wrap(
        "wapc",
        "__guest_request",
        |mut caller: Caller<'_, StoreState>, op_ptr: i32, ptr: i32| -> wasmtime::Result<()> {
            let mem = memory(&mut caller)?;
            let (data, state) = mem.data_and_store_mut(&mut caller);
            if let Some(inv) = &state.invocation {
                write(data, op_ptr, &inv.operation)?;
                write(data, ptr, &inv.payload)?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__guest_response",
        |mut caller: Caller<'_, StoreState>, ptr: i32, len: i32| -> wasmtime::Result<()> {
            let mem = memory(&mut caller)?;
            let (data, state) = mem.data_and_store_mut(&mut caller);
            state.guest_response = Some(read(data, ptr, len)?.to_vec());
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__guest_error",
        |mut caller: Caller<'_, StoreState>, ptr: i32, len: i32| -> wasmtime::Result<()> {
            let mem = memory(&mut caller)?;
            let (data, state) = mem.data_and_store_mut(&mut caller);
            state.guest_error = Some(read_string(data, ptr, len)?);
            Ok(())
        },
    )?;
    linker.func_wrap("wapc", "__host_call", host_call)?;
    linker.func_wrap(
        "wapc",
        "__host_response_len",
        |caller: Caller<'_, StoreState>| -> wasmtime::Result<i32> {
            len_i32(caller.data().host_response.as_ref().map_or(0, Vec::len))
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_response",
        |mut caller: Caller<'_, StoreState>, ptr: i32| -> wasmtime::Result<()> {
            let mem = memory(&mut caller)?;
            let (data, state) = mem.data_and_store_mut(&mut caller);
            if let Some(response) = &state.host_response {
                write(data, ptr, response)?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_error_len",
        |caller: Caller<'_, StoreState>| -> wasmtime::Result<i32> {
            len_i32(caller.data().host_error.as_ref().map_or(0, String::len))
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_error",
        |mut caller: Caller<'_, StoreState>, ptr: i32| -> wasmtime::Result<()> {
            let mem = memory(&mut caller)?;
            let (data, state) = mem.data_and_store_mut(&mut caller);
            if let Some(error) = &state.host_error {
                write(data, ptr, error.as_bytes())?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__console_log",
        |mut caller: Caller<'_, StoreState>, ptr: i32, len: i32| -> wasmtime::Result<()> {
            let mem = memory(&mut caller)?;
            let (data, state) = mem.data_and_store_mut(&mut caller);
            state.host.log(read(data, ptr, len)?);
            Ok(())
        },
    )?;
    Ok(())
}

#[allow(clippy::too_many_arguments)] // the waPC ABI fixes these eight parameters
fn host_call(
    mut caller: Caller<'_, StoreState>,
    bd_ptr: i32,
    bd_len: i32,
    ns_ptr: i32,
    ns_len: i32,
    op_ptr: i32,
    op_len: i32,
    ptr: i32,
    len: i32,
) -> wasmtime::Result<i32> {
    let mem = memory(&mut caller)?;
    let (binding, namespace, operation, payload) = {
        let data = mem.data(&caller);
        (
            read_string(data, bd_ptr, bd_len)?,
            read_string(data, ns_ptr, ns_len)?,
            read_string(data, op_ptr, op_len)?,
            read(data, ptr, len)?.to_vec(),
        )
    };
    let state = caller.data_mut();
    state.host_response = None;
    state.host_error = None;
    let host = state.host;
    let result = dispatch(host, &binding, &namespace, &operation, &payload);
    let state = caller.data_mut();
    Ok(match result {
        Ok(response) => {
            state.host_response = Some(response);
            1
        }
        Err(error) => {
            state.host_error = Some(error);
            0
        }
    })
}
