//! Canonical Go encodings for comparing decoded Kubernetes objects (§2.2 rule 15).
//!
//! Two values Go decodes into the same struct re-marshal to the same bytes, and in practice only
//! those: unknown members are dropped, zero values of plain fields encode alike, and nil versus
//! zero pointers differ in both. `reflect.DeepEqual` is finer in corners this ignores: an empty
//! slice or map under `omitempty` against an absent one, quantities with the same canonical text
//! but a different internal form (`1Gi` and `1024Mi`), sub-second times, raw `fieldsV1` bytes.

use super::gojson;
use super::schema::{Ty, VOLUME};
use serde_json::Value;

/// Go's `json.Marshal` of `volume` decoded as a k8s.io/api v0.32 core/v1 `Volume`, or `None` when
/// Go's decoder would reject it (a member of the wrong type).
pub fn canonical_volume(volume: &Value) -> Option<String> {
    let ty = Ty::Struct(VOLUME);
    gojson::decodes(ty, volume).then(|| gojson::encode(ty, volume))
}

#[cfg(test)]
mod tests;
