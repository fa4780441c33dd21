//! The hashes that identify a SidecarSet's current containers, shared by policy and controller.

use crate::annotations::{SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE};
use crate::api::SidecarSet;
use crate::hash::{self, SidecarSetHashes};

/// The SidecarSet's hash annotations; a missing one is computed (§4) from the object as served.
pub fn current_hashes(sidecarset: &SidecarSet) -> SidecarSetHashes {
    let hash = sidecarset.annotation(SIDECARSET_HASH);
    let without_image = sidecarset.annotation(SIDECARSET_HASH_WITHOUT_IMAGE);
    if let (Some(hash), Some(without_image)) = (hash, without_image) {
        return SidecarSetHashes {
            hash: hash.to_string(),
            without_image: without_image.to_string(),
        };
    }
    let computed = hash::compute(&hashed_spec(sidecarset));
    SidecarSetHashes {
        hash: hash.map_or(computed.hash, str::to_string),
        without_image: without_image.map_or(computed.without_image, str::to_string),
    }
}

/// The spec members §4 hashes, re-serialised from the typed object: container fields are kept
/// as served and the extension fields round-trip exactly as Go's decoder reads them.
fn hashed_spec(sidecarset: &SidecarSet) -> serde_json::Value {
    let mut spec = serde_json::Map::new();
    // Serialising these types cannot fail: every map key is a string.
    let containers = serde_json::to_value(&sidecarset.spec.containers).unwrap_or_default();
    let init_containers =
        serde_json::to_value(&sidecarset.spec.init_containers).unwrap_or_default();
    spec.insert("containers".into(), containers);
    spec.insert("initContainers".into(), init_containers);
    serde_json::Value::Object(spec)
}
