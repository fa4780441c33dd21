//! kwctl's host-capability session files: `--record-host-capabilities-interactions` and
//! `--replay-host-capabilities-interactions`.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::request::{CallbackRequestType, ParseError};
use crate::engine::HostCallbacks;

/// kwctl's message when a replay runs out of recorded exchanges.
pub const REPLAY_EXHAUSTED_MESSAGE: &str = "the list of recorded responses is empty";

/// The recorded outcome of one host call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ExchangeResponse {
    /// The host answered; `payload` is the UTF-8 response (JSON for Kubernetes calls).
    Success {
        /// Response body.
        payload: String,
    },
    /// The host failed with this message.
    Error {
        /// Error text given to the guest.
        message: String,
    },
}

/// One entry of a session file: `{type: Exchange, request: <YAML string>, response: …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Exchange {
    /// The request, as the YAML serialization of the externally tagged `CallbackRequestType`.
    pub request: String,
    /// What the host answered.
    pub response: ExchangeResponse,
}

/// Errors of reading or writing session files.
#[derive(Debug, Error)]
pub enum SessionError {
    /// The file could not be read or written.
    #[error("cannot access host capabilities interactions file {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The file, or one of its requests, is not in kwctl's format.
    #[error("cannot deserialize contents of {source_name}: {message}")]
    Parse {
        /// The file (or `<string>`).
        source_name: String,
        /// The parser error.
        message: String,
    },
    /// A request or response could not be serialized.
    #[error("cannot record host capabilities interactions: {0}")]
    Record(String),
}

/// Wraps any [`HostCallbacks`] and records every exchange it answers.
///
/// Capabilities that have no session-file form (sigstore verification, crypto) pass through unrecorded.
pub struct SessionRecorder<H> {
    inner: H,
    exchanges: Mutex<Vec<Exchange>>,
    errors: Mutex<Vec<String>>,
}

impl<H: HostCallbacks> SessionRecorder<H> {
    /// Records what `inner` answers.
    pub fn new(inner: H) -> Self {
        Self {
            inner,
            exchanges: Mutex::new(Vec::new()),
            errors: Mutex::new(Vec::new()),
        }
    }

    /// The exchanges recorded so far, in call order.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The session as kwctl writes it (a YAML list of exchanges).
    pub fn to_yaml(&self) -> Result<String, SessionError> {
        let errors = self
            .errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if !errors.is_empty() {
            return Err(SessionError::Record(errors.join("; ")));
        }
        serde_norway::to_string(&self.exchanges()).map_err(|e| SessionError::Record(e.to_string()))
    }

    /// Writes the session file.
    pub fn save(&self, path: &Path) -> Result<(), SessionError> {
        let yaml = self.to_yaml()?;
        std::fs::write(path, yaml).map_err(|e| SessionError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    fn record(&self, request: &CallbackRequestType, result: &Result<Vec<u8>, String>) {
        let exchange = serde_norway::to_string(request)
            .map_err(|e| format!("cannot serialize request: {e}"))
            .and_then(|request| {
                let response = match result {
                    Ok(bytes) => ExchangeResponse::Success {
                        payload: String::from_utf8(bytes.clone())
                            .map_err(|e| format!("cannot convert response payload to utf8: {e}"))?,
                    },
                    Err(message) => ExchangeResponse::Error {
                        message: message.clone(),
                    },
                };
                Ok(Exchange { request, response })
            });
        match exchange {
            Ok(exchange) => self
                .exchanges
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(exchange),
            Err(error) => self
                .errors
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(error),
        }
    }
}

impl<H: HostCallbacks> HostCallbacks for SessionRecorder<H> {
    fn call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        match CallbackRequestType::from_host_call(namespace, operation, payload) {
            Ok(request) => {
                let result = self.inner.call(binding, namespace, operation, payload);
                self.record(&request, &result);
                result
            }
            // Malformed payloads never reach kwctl's proxy, so they are not recorded either.
            Err(_) => self.inner.call(binding, namespace, operation, payload),
        }
    }

    fn log(&self, payload: &[u8]) {
        self.inner.log(payload);
    }
}

struct ParsedExchange {
    request: CallbackRequestType,
    response: ExchangeResponse,
}

/// Answers host calls from a session file, strictly in order, like kwctl's replay mode.
pub struct SessionReplayer {
    exchanges: Vec<ParsedExchange>,
    cursor: AtomicUsize,
}

impl SessionReplayer {
    /// Parses a session file's text.
    pub fn from_yaml(yaml: &str, source_name: &str) -> Result<Self, SessionError> {
        let parse = |e: serde_norway::Error| SessionError::Parse {
            source_name: source_name.to_string(),
            message: e.to_string(),
        };
        let exchanges: Vec<Exchange> = serde_norway::from_str(yaml).map_err(parse)?;
        let exchanges = exchanges
            .into_iter()
            .map(|exchange| {
                Ok(ParsedExchange {
                    request: serde_norway::from_str(&exchange.request).map_err(parse)?,
                    response: exchange.response,
                })
            })
            .collect::<Result<Vec<_>, SessionError>>()?;
        Ok(Self {
            exchanges,
            cursor: AtomicUsize::new(0),
        })
    }

    /// Reads a session file.
    pub fn from_file(path: &Path) -> Result<Self, SessionError> {
        let yaml = std::fs::read_to_string(path).map_err(|e| SessionError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_yaml(&yaml, &path.display().to_string())
    }

    /// Rewinds to the first exchange (to replay one evaluation's session again, e.g. in a benchmark).
    pub fn reset(&self) {
        self.cursor.store(0, Ordering::SeqCst);
    }

    /// How many recorded exchanges have not been replayed yet.
    pub fn remaining(&self) -> usize {
        self.exchanges
            .len()
            .saturating_sub(self.cursor.load(Ordering::SeqCst))
    }

    /// Total number of recorded exchanges.
    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// True when the session holds no exchange.
    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }
}

impl HostCallbacks for SessionReplayer {
    fn call(
        &self,
        _: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        let request = CallbackRequestType::from_host_call(namespace, operation, payload).map_err(
            |e| match e {
                ParseError::Invalid(message) | ParseError::Unsupported(message) => message,
            },
        )?;
        let index = self.cursor.fetch_add(1, Ordering::SeqCst);
        let Some(exchange) = self.exchanges.get(index) else {
            return Err(REPLAY_EXHAUSTED_MESSAGE.to_string());
        };
        if exchange.request != request {
            return Err(format!(
                "Replay error: unexpected request. Was expecting {:?}, got {:?} instead",
                exchange.request, request
            ));
        }
        match &exchange.response {
            ExchangeResponse::Success { payload } => Ok(payload.clone().into_bytes()),
            ExchangeResponse::Error { message } => Err(message.clone()),
        }
    }
}
