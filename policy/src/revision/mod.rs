//! SidecarSet revisions: the hashes that identify the current containers (shared by policy and
//! controller), and the history versions `injectionStrategy.revision` injects (§3.3).

mod choose;
mod history;

pub use choose::{ChooseError, InjectedVersion, choose_version};
pub use history::{HistoryError, RevisionQuery, newest, restore};

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn decoded(annotations: Value) -> SidecarSet {
        SidecarSet::deserialize_value(&json!({
            "metadata": {"name": "dns", "annotations": annotations},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": [{
                "name": "dns-f", "image": "dns:1.0", "imagePullPolicy": "IfNotPresent",
                "podInjectPolicy": "BeforeAppContainer",
                "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
                "shareVolumePolicy": {"type": "disabled"},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            }]}
        }))
        .unwrap()
    }

    /// §4's defaulted dns-f vector, reached through the typed object and back.
    const HASH: &str = "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684";
    const WITHOUT_IMAGE: &str = "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94";

    #[test]
    fn missing_annotations_are_computed_from_the_object_as_served() {
        let hashes = current_hashes(&decoded(json!({})));
        assert_eq!(hashes.hash, HASH);
        assert_eq!(hashes.without_image, WITHOUT_IMAGE);
    }

    #[test]
    fn present_annotations_win_one_by_one() {
        let both = current_hashes(&decoded(json!({
            SIDECARSET_HASH: "h", SIDECARSET_HASH_WITHOUT_IMAGE: "w"})));
        assert_eq!(
            (both.hash.as_str(), both.without_image.as_str()),
            ("h", "w")
        );
        let one = current_hashes(&decoded(json!({SIDECARSET_HASH: "h"})));
        assert_eq!(
            (one.hash.as_str(), one.without_image.as_str()),
            ("h", WITHOUT_IMAGE)
        );
    }
}
