//! SidecarSet domain.
