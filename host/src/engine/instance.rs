//! One started instance of a policy: the unit every evaluation runs in.

use std::marker::PhantomData;
use std::time::Duration;

use wasmtime::{Store, TypedFunc};
use wasmtime_wasi::I32Exit;

use super::wapc::{Invocation, StoreState};
use super::{
    EngineError, HostCallbacks, PolicyEngine, arm_deadline, call_error, init_error, len_i32,
    root_message,
};

/// A started instance of a [`PolicyEngine`]'s module. [`PolicyEngine::call`] uses one per call;
/// kept, it answers further calls with the guest's memory as the last call left it.
pub struct PolicyInstance<'h> {
    /// Each call's deadline, the engine's.
    deadline: Duration,
    store: Store<StoreState>,
    guest_call: TypedFunc<(i32, i32), i32>,
    /// The store holds `host` as `'static`; this ties the instance to its real lifetime.
    _host: PhantomData<&'h dyn HostCallbacks>,
}

impl<'h> PolicyInstance<'h> {
    pub(super) fn start(
        engine: &PolicyEngine,
        host: &'h dyn HostCallbacks,
    ) -> Result<Self, EngineError> {
        // SAFETY: the store holding this reference lives in the returned instance, which
        // `_host` keeps from outliving `'h`; nothing derived from the store escapes it.
        let host: &'static dyn HostCallbacks =
            unsafe { std::mem::transmute::<&dyn HostCallbacks, &'static dyn HostCallbacks>(host) };
        let inner = &engine.inner;
        let mut store = engine.new_store(host);
        arm_deadline(&mut store, inner.config.deadline);
        let instance = inner
            .pre
            .instantiate(&mut store)
            .map_err(|e| init_error(&store, "instantiation", &e))?;
        for starter in &inner.starters {
            arm_deadline(&mut store, inner.config.deadline);
            let func: TypedFunc<(), ()> = instance
                .get_typed_func(&mut store, starter)
                .map_err(|e| EngineError::InitFailed(format!("{starter}: {}", root_message(&e))))?;
            if let Err(e) = func.call(&mut store, ()) {
                // TinyGo's main ends with proc_exit(0): a successful exit, not a failure.
                if e.downcast_ref::<I32Exit>().is_some_and(|exit| exit.0 == 0) {
                    continue;
                }
                return Err(init_error(&store, starter, &e));
            }
        }
        let guest_call = instance
            .get_typed_func(&mut store, "__guest_call")
            .map_err(|_| EngineError::MissingExport("__guest_call"))?;
        Ok(Self {
            deadline: inner.config.deadline,
            store,
            guest_call,
            _host: PhantomData,
        })
    }

    /// Runs one waPC operation and returns the guest's response bytes.
    pub fn call(&mut self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, EngineError> {
        let op_len = len_i32(operation.len())?;
        let msg_len = len_i32(payload.len())?;
        let state = self.store.data_mut();
        state.invocation = Some(Invocation {
            operation: operation.as_bytes().to_vec(),
            payload: payload.to_vec(),
        });
        state.guest_response = None;
        state.guest_error = None;
        state.host_response = None;
        state.host_error = None;
        arm_deadline(&mut self.store, self.deadline);
        let result = self.guest_call.call(&mut self.store, (op_len, msg_len));
        let state = self.store.data_mut();
        match result {
            Ok(0) => Err(EngineError::GuestCallFailure(
                state
                    .guest_error
                    .take()
                    .unwrap_or_else(|| "No error message set for call failure".into()),
            )),
            Ok(_) => match (state.guest_response.take(), state.guest_error.take()) {
                (Some(response), _) => Ok(response),
                (None, Some(error)) => Err(EngineError::GuestCallFailure(error)),
                (None, None) => Err(EngineError::GuestCallFailure(
                    "No error message OR response set for call success".into(),
                )),
            },
            Err(e) => Err(call_error(&self.store, &e)),
        }
    }
}
