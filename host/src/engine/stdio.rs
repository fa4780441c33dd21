//! The guest's `fd_write`, answered synchronously by the host. wasmtime-wasi's sync linker runs
//! its async WASI functions (`fd_write` among them) through `block_on`, which panics on an async
//! runtime's thread; with this one shadowed, a module that imports no other such function never
//! blocks on a runtime, so `serve` can evaluate it on the connection's own thread.

use std::io::Write;

use wasmtime::{Caller, Linker, Module};

use super::config::GuestStdio;
use super::wapc::{self, StoreState};

const WASI: &str = "wasi_snapshot_preview1";

/// wasmtime-wasi's preview1 functions that its sync linker runs through `block_on` (its `p1.rs`).
const BLOCKING_ON_TOKIO: [&str; 26] = [
    "fd_advise",
    "fd_close",
    "fd_datasync",
    "fd_fdstat_get",
    "fd_filestat_get",
    "fd_filestat_set_size",
    "fd_filestat_set_times",
    "fd_read",
    "fd_pread",
    "fd_seek",
    "fd_sync",
    "fd_readdir",
    "fd_write",
    "fd_pwrite",
    "poll_oneoff",
    "path_create_directory",
    "path_filestat_get",
    "path_filestat_set_times",
    "path_link",
    "path_open",
    "path_readlink",
    "path_remove_directory",
    "path_rename",
    "path_symlink",
    "path_unlink_file",
    "fd_renumber",
];

/// WASI errno values (preview1).
const SUCCESS: i32 = 0;
const BADF: i32 = 8;
const IO: i32 = 29;

/// Replaces wasmtime-wasi's `fd_write` (already in `linker`) with [`fd_write`].
pub(super) fn shadow_fd_write(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.func_wrap(WASI, "fd_write", fd_write)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Whether no import of `module` blocks on a tokio runtime once `fd_write` is shadowed.
pub(super) fn never_blocks_on_tokio(module: &Module) -> bool {
    module.imports().all(|import| {
        import.module() != WASI
            || import.name() == "fd_write"
            || !BLOCKING_ON_TOKIO.contains(&import.name())
    })
}

/// `fd_write(fd, iovs, iovs_len, nwritten) -> errno` on stdout (1) and stderr (2), which go
/// where the engine's [`GuestStdio`] says; the context has no other descriptor to write to. A
/// pointer outside the guest's memory traps, as in wasmtime-wasi.
fn fd_write(
    mut caller: Caller<'_, StoreState>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> wasmtime::Result<i32> {
    let memory = wapc::memory(&mut caller)?;
    let stdio = caller.data().stdio;
    let bytes = gather(memory.data(&caller), iovs, iovs_len)?;
    let written = match (fd, stdio) {
        (1 | 2, GuestStdio::Discard) => Ok(()),
        (1, GuestStdio::Inherit) => std::io::stdout().lock().write_all(&bytes),
        (1 | 2, _) => std::io::stderr().lock().write_all(&bytes),
        _ => return Ok(BADF),
    };
    if written.is_err() {
        return Ok(IO);
    }
    let count = u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes();
    wapc::write(memory.data_mut(&mut caller), nwritten, &count)?;
    Ok(SUCCESS)
}

/// The bytes of an iovec array (`{ptr: u32, len: u32}` each), read as the waPC imports read.
fn gather(data: &[u8], iovs: i32, iovs_len: i32) -> wasmtime::Result<Vec<u8>> {
    let table_len = iovs_len
        .checked_mul(8)
        .ok_or_else(|| wasmtime::Error::msg("guest buffer out of bounds"))?;
    let mut bytes = Vec::new();
    for iovec in wapc::read(data, iovs, table_len)?.chunks_exact(8) {
        let (ptr, len) = iovec.split_at(4);
        let ptr = i32::from_le_bytes(ptr.try_into()?);
        let len = i32::from_le_bytes(len.try_into()?);
        bytes.extend_from_slice(wapc::read(data, ptr, len)?);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
