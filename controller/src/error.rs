//! Typed errors of the controller library.

/// Everything a reconcile or an operational task can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("{action}: {source}")]
    Kube {
        /// What was being done, e.g. `patch pod default/p1`.
        action: String,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
    },
    /// An object could not be encoded.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// An object from the cluster lacks a field the controller needs.
    #[error("{0}")]
    Malformed(String),
    /// A SidecarSet selector cannot be evaluated (it should have been rejected at admission).
    #[error("{0}")]
    Selector(#[from] Box<sidecarset_policy::inject::InjectError>),
    /// The HTTP listener could not be bound or failed.
    #[error("http server on {addr}: {source}")]
    Http {
        /// The listen address.
        addr: std::net::SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps a kube error with what was being done.
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            action: action.into(),
            source: Box::new(source),
        }
    }

    /// The HTTP status code of the failed API call, if it was answered with one.
    pub fn status_code(&self) -> Option<u16> {
        match self {
            Error::Kube { source, .. } => match source.as_ref() {
                kube::Error::Api(status) => Some(status.code),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
