//! SidecarSet admission: defaults (§2.1) and validation (§2.2).

pub mod defaults;
pub mod validate;
pub use defaults::{add_marshalled_members, apply_defaults};
pub use validate::{FieldError, ValidationContext, validate};
