//! A planned pod change, turned into one guarded RFC 6902 patch.

use super::json;
use super::{PlanError, PodUpdate, UpdateKind, pod};
use crate::cached_pod::CachedPod;
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, ReplaceOperation, TestOperation};
use serde_json::Value;
use sidecarset_policy::annotations::{
    self, INPLACE_UPDATE_STATE, InPlaceUpdateContainerStatus, InPlaceUpdateState,
    InPlaceUpdateStates,
};
use sidecarset_policy::selector::Labels;
use std::collections::BTreeMap;

/// New images by container name, and the annotations the edit read or wrote as they should end
/// up (any other annotation stays as it is, so the patch is the same as from a full copy).
pub(crate) struct PodEdit {
    pub images: Vec<(String, String)>,
    pub annotations: Labels,
}

/// The pod's values of the `keys` an edit reads (those it has): the edit starts from these
/// instead of a copy of every annotation.
pub(crate) fn read_annotations<'k>(
    pod: &CachedPod,
    keys: impl IntoIterator<Item = &'k str>,
) -> Labels {
    let existing = pod::annotations(pod);
    keys.into_iter()
        .filter_map(|key| existing.get_key_value(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The JSON pointers a plan's patches write (the resourceVersion test, the first containers'
/// images and the annotations its edits write), encoded once per plan instead of once per
/// patch operation.
pub(crate) struct PatchPointers {
    annotations: BTreeMap<String, PointerBuf>,
    resource_version: PointerBuf,
    /// `/spec/containers/<position>/image` of the first [`IMAGE_POINTERS`] positions.
    images: Vec<PointerBuf>,
}

/// Container positions whose image pointer is precomputed; pods rarely have more containers.
const IMAGE_POINTERS: usize = 16;

impl PatchPointers {
    pub fn new<'k>(annotation_keys: impl IntoIterator<Item = &'k str>) -> Self {
        let annotations = annotation_keys
            .into_iter()
            .map(|key| (key.to_string(), annotation_pointer(key)))
            .collect();
        PatchPointers {
            annotations,
            resource_version: PointerBuf::from_tokens(["metadata", "resourceVersion"]),
            images: (0..IMAGE_POINTERS).map(image_pointer).collect(),
        }
    }

    fn annotation(&self, key: &str) -> PointerBuf {
        self.annotations
            .get(key)
            .cloned()
            .unwrap_or_else(|| annotation_pointer(key))
    }

    fn image(&self, position: usize) -> PointerBuf {
        self.images
            .get(position)
            .cloned()
            .unwrap_or_else(|| image_pointer(position))
    }
}

fn annotation_pointer(key: &str) -> PointerBuf {
    PointerBuf::from_tokens(["metadata", "annotations", key])
}

fn image_pointer(position: usize) -> PointerBuf {
    let position = position.to_string();
    PointerBuf::from_tokens(["spec", "containers", position.as_str(), "image"])
}

impl PodEdit {
    pub fn changed_containers(&self) -> Vec<String> {
        self.images.iter().map(|(name, _)| name.clone()).collect()
    }

    /// `test` the resourceVersion, then replace images, then add/replace changed annotations.
    pub fn into_update(
        self,
        pod: &CachedPod,
        kind: UpdateKind,
        pointers: &PatchPointers,
    ) -> Result<PodUpdate, PlanError> {
        let resource_version = pod
            .resource_version
            .as_deref()
            .ok_or(PlanError::MissingResourceVersion)?;
        let mut operations = Vec::with_capacity(1 + self.images.len() + self.annotations.len());
        operations.push(PatchOperation::Test(TestOperation {
            path: pointers.resource_version.clone(),
            value: Value::String(resource_version.to_string()),
        }));
        let changed_containers = self.changed_containers();
        for (name, image) in self.images {
            let (index, container) = pod::container_position(pod, &name)
                .and_then(|index| Some((index, pod::containers(pod).get(index)?)))
                .ok_or(PlanError::MissingContainer(name))?;
            let path = pointers.image(index);
            let value = Value::String(image);
            operations.push(match container.image {
                Some(_) => PatchOperation::Replace(ReplaceOperation { path, value }),
                None => PatchOperation::Add(AddOperation { path, value }),
            });
        }
        match &pod.annotations {
            None => operations.push(PatchOperation::Add(AddOperation {
                path: PointerBuf::from_tokens(["metadata", "annotations"]),
                value: serde_json::to_value(&self.annotations).unwrap_or_default(),
            })),
            Some(existing) => {
                for (key, value) in self.annotations {
                    let old = existing.get(&key);
                    if old == Some(&value) {
                        continue;
                    }
                    let path = pointers.annotation(&key);
                    let value = Value::String(value);
                    operations.push(match old {
                        Some(_) => PatchOperation::Replace(ReplaceOperation { path, value }),
                        None => PatchOperation::Add(AddOperation { path, value }),
                    });
                }
            }
        }
        Ok(PodUpdate {
            namespace: pod::namespace(pod).to_string(),
            name: pod::name(pod).to_string(),
            uid: pod::uid(pod).to_string(),
            kind,
            changed_containers,
            patch: Patch(operations),
        })
    }
}

/// §5.9c: record the imageIDs the changed containers run now, so completion can be detected.
/// Bad JSON starts a new map; an existing entry keeps its revision and timestamp.
pub(crate) fn record_update_state(
    annotations: &mut Labels,
    pod: &CachedPod,
    sidecarset: &str,
    revision: &str,
    changed: &[String],
    now: &str,
) {
    if !annotations.contains_key(INPLACE_UPDATE_STATE) {
        // A pod's first in-place update: the state is this entry alone, written without a map.
        let mut statuses: Vec<(&str, &str)> = changed
            .iter()
            .map(|name| (name.as_str(), recorded_image_id(pod, name)))
            .collect();
        // As the map would hold them: by name, once (a name's imageID is the same each time).
        statuses.sort_unstable_by(|a, b| a.0.cmp(b.0));
        statuses.dedup_by(|a, b| a.0 == b.0);
        let state = json::new_update_state(sidecarset, revision, now, &statuses);
        annotations.insert(INPLACE_UPDATE_STATE.to_string(), state);
        return;
    }
    let mut states: InPlaceUpdateStates = annotations
        .get(INPLACE_UPDATE_STATE)
        .and_then(|value| annotations::parse_update_states(value).ok())
        .unwrap_or_default();
    let state = states
        .entry(sidecarset.to_string())
        .or_insert_with(|| InPlaceUpdateState {
            revision: revision.to_string(),
            update_timestamp: Some(now.to_string()),
            last_container_statuses: Default::default(),
        });
    for name in changed {
        let image_id = recorded_image_id(pod, name).to_string();
        state
            .last_container_statuses
            .insert(name.clone(), InPlaceUpdateContainerStatus { image_id });
    }
    annotations.insert(
        INPLACE_UPDATE_STATE.to_string(),
        json::update_states(&states),
    );
}

/// The imageID container `name` runs now (`""` without a status).
fn recorded_image_id<'p>(pod: &'p CachedPod, name: &str) -> &'p str {
    pod::container_status(pod, name).map_or("", |status| status.image_id.as_str())
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{image_id, pod, typed_pod};
    use super::*;
    use sidecarset_policy::annotations::to_json;

    #[test]
    fn a_first_update_state_is_the_one_entry_map() {
        let cached = typed_pod(&pod("test-pod-1", 0));
        let changed = ["test-sidecar", "nginx", "test-sidecar", "missing"].map(String::from);
        let mut annotations = Labels::new();
        record_update_state(&mut annotations, &cached, "set", "rev", &changed, "now");
        let statuses = [
            ("missing", String::new()),
            ("nginx", image_id("nginx:1.15.1")),
            ("test-sidecar", image_id("test-image:v1")),
        ]
        .map(|(name, image_id)| (name.to_string(), InPlaceUpdateContainerStatus { image_id }));
        let expected = InPlaceUpdateStates::from([(
            "set".to_string(),
            InPlaceUpdateState {
                revision: "rev".to_string(),
                update_timestamp: Some("now".to_string()),
                last_container_statuses: statuses.into_iter().collect(),
            },
        )]);
        assert_eq!(annotations[INPLACE_UPDATE_STATE], to_json(&expected));
    }

    #[test]
    fn precomputed_pointers_are_the_encoded_ones() {
        let pointers = PatchPointers::new(["a/b~c"]);
        for position in [0, 1, IMAGE_POINTERS - 1, IMAGE_POINTERS, IMAGE_POINTERS + 7] {
            let expected = format!("/spec/containers/{position}/image");
            assert_eq!(pointers.image(position).as_str(), expected);
        }
        assert_eq!(
            pointers.annotation("a/b~c").as_str(),
            "/metadata/annotations/a~1b~0c"
        );
        assert_eq!(
            pointers.annotation("not/precomputed").as_str(),
            "/metadata/annotations/not~1precomputed"
        );
        assert_eq!(
            pointers.resource_version.as_str(),
            "/metadata/resourceVersion"
        );
    }
}
