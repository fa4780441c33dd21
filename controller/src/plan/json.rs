//! Compact JSON of the annotation and condition values an edit writes, byte for byte what
//! `annotations::to_json` (serde_json) writes, but straight into one `String`: through serde
//! these encodings were the largest cost of the 1,000 edits of a rollout.

use sidecarset_policy::annotations::{HashAnnotation, InPlaceUpdateStates, UpgradeSpec};
use std::collections::BTreeMap;

/// Whether serde_json escapes `byte` inside a string: quotes, backslashes and control bytes.
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any byte of `value` needs escaping: a fold without early exit, which the compiler
/// vectorises (imageIDs are ~100 bytes and almost never need it).
fn has_escapes(value: &str) -> bool {
    value
        .bytes()
        .fold(false, |found, byte| found | needs_escape(byte))
}

/// `value` as a JSON string, escaped as serde_json escapes it.
fn push_string(out: &mut String, value: &str) {
    if has_escapes(value) {
        // Rare: serde_json's own escaper, rather than a second copy of it.
        out.push_str(&serde_json::Value::from(value).to_string());
        return;
    }
    out.push('"');
    out.push_str(value);
    out.push('"');
}

fn push_optional_string(out: &mut String, value: Option<&str>) {
    match value {
        Some(value) => push_string(out, value),
        None => out.push_str("null"),
    }
}

/// `{"key":<value>,...}` in the map's (sorted) order.
fn push_map<V>(
    out: &mut String,
    entries: &BTreeMap<String, V>,
    mut push_value: impl FnMut(&mut String, &V),
) {
    out.push('{');
    for (index, (key, value)) in entries.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        push_string(out, key);
        out.push(':');
        push_value(out, value);
    }
    out.push('}');
}

/// The working-container map (sidecar → container).
pub(crate) fn string_map(entries: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(64);
    push_map(&mut out, entries, |out, value| push_string(out, value));
    out
}

/// The SidecarSetUpgradable condition's message (SidecarSet → upgradable).
pub(crate) fn bool_map(entries: &BTreeMap<String, bool>) -> String {
    let mut out = String::with_capacity(64);
    push_map(&mut out, entries, |out, &value| {
        out.push_str(if value { "true" } else { "false" });
    });
    out
}

/// One hash entry, fields in `UpgradeSpec`'s declaration order (an empty revision is omitted).
fn push_upgrade_spec(out: &mut String, spec: &UpgradeSpec) {
    out.push_str("{\"updateTimestamp\":");
    push_optional_string(out, spec.update_timestamp.as_deref());
    out.push_str(",\"hash\":");
    push_string(out, &spec.hash);
    out.push_str(",\"sidecarSetName\":");
    push_string(out, &spec.sidecar_set_name);
    out.push_str(",\"sidecarList\":");
    match &spec.sidecar_list {
        Some(list) => {
            out.push('[');
            for (index, name) in list.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                push_string(out, name);
            }
            out.push(']');
        }
        None => out.push_str("null"),
    }
    if !spec.controller_revision.is_empty() {
        out.push_str(",\"controllerRevision\":");
        push_string(out, &spec.controller_revision);
    }
    out.push('}');
}

/// A hash annotation (`kruise.io/sidecarset-hash` or its without-image twin).
pub(crate) fn hash_annotation(entries: &HashAnnotation) -> String {
    let mut out = String::with_capacity(256);
    push_map(&mut out, entries, push_upgrade_spec);
    out
}

/// The inplace-update-state annotation.
pub(crate) fn update_states(states: &InPlaceUpdateStates) -> String {
    let mut out = String::with_capacity(256);
    push_map(&mut out, states, |out, state| {
        out.push_str("{\"revision\":");
        push_string(out, &state.revision);
        out.push_str(",\"updateTimestamp\":");
        push_optional_string(out, state.update_timestamp.as_deref());
        out.push_str(",\"lastContainerStatuses\":");
        push_map(out, &state.last_container_statuses, |out, status| {
            out.push_str("{\"imageID\":");
            push_string(out, &status.image_id);
            out.push('}');
        });
        out.push('}');
    });
    out
}

/// The inplace-update-state of a pod that had none: this SidecarSet's entry alone, recording
/// `statuses` (container name → imageID, sorted by name, no name twice).
pub(crate) fn new_update_state(
    sidecarset: &str,
    revision: &str,
    now: &str,
    statuses: &[(&str, &str)],
) -> String {
    let mut out = String::with_capacity(256);
    out.push('{');
    push_string(&mut out, sidecarset);
    out.push_str(":{\"revision\":");
    push_string(&mut out, revision);
    out.push_str(",\"updateTimestamp\":");
    push_string(&mut out, now);
    out.push_str(",\"lastContainerStatuses\":{");
    for (index, (name, image_id)) in statuses.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        push_string(&mut out, name);
        out.push_str(":{\"imageID\":");
        push_string(&mut out, image_id);
        out.push('}');
    }
    out.push_str("}}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sidecarset_policy::annotations::{
        InPlaceUpdateContainerStatus, InPlaceUpdateState, to_json,
    };

    /// Plain names, and strings with every byte class serde_json escapes or passes through.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9-]{0,12}",
            any::<String>(),
            proptest::collection::vec(
                prop_oneof![
                    (0u32..0x80).prop_filter_map("char", char::from_u32),
                    Just('\u{7f}'),
                    Just('é'),
                    Just('\u{2028}'),
                    Just('😀'),
                ],
                0..12
            )
            .prop_map(|chars| chars.into_iter().collect()),
        ]
    }

    fn upgrade_spec() -> impl Strategy<Value = UpgradeSpec> {
        (
            proptest::option::of(text()),
            text(),
            text(),
            proptest::option::of(proptest::collection::vec(text(), 0..3)),
            prop_oneof![Just(String::new()), text()],
        )
            .prop_map(
                |(update_timestamp, hash, sidecar_set_name, sidecar_list, controller_revision)| {
                    UpgradeSpec {
                        update_timestamp,
                        hash,
                        sidecar_set_name,
                        sidecar_list,
                        controller_revision,
                    }
                },
            )
    }

    fn update_state() -> impl Strategy<Value = InPlaceUpdateState> {
        (
            text(),
            proptest::option::of(text()),
            proptest::collection::btree_map(
                text(),
                text().prop_map(|image_id| InPlaceUpdateContainerStatus { image_id }),
                0..3,
            ),
        )
            .prop_map(|(revision, update_timestamp, last_container_statuses)| {
                InPlaceUpdateState {
                    revision,
                    update_timestamp,
                    last_container_statuses,
                }
            })
    }

    proptest! {
        #[test]
        fn hash_annotations_are_written_as_serde_json_does(
            entries in proptest::collection::btree_map(text(), upgrade_spec(), 0..3)
        ) {
            prop_assert_eq!(hash_annotation(&entries), to_json(&entries));
        }

        #[test]
        fn update_states_are_written_as_serde_json_does(
            states in proptest::collection::btree_map(text(), update_state(), 0..3)
        ) {
            prop_assert_eq!(update_states(&states), to_json(&states));
        }

        #[test]
        fn a_new_update_state_is_the_one_entry_state(
            sidecarset in text(),
            revision in text(),
            now in text(),
            statuses in proptest::collection::btree_map(text(), text(), 0..4),
        ) {
            let sorted: Vec<(&str, &str)> =
                statuses.iter().map(|(n, i)| (n.as_str(), i.as_str())).collect();
            let state = InPlaceUpdateState {
                revision: revision.clone(),
                update_timestamp: Some(now.clone()),
                last_container_statuses: statuses
                    .iter()
                    .map(|(name, image_id)| {
                        (name.clone(), InPlaceUpdateContainerStatus { image_id: image_id.clone() })
                    })
                    .collect(),
            };
            let states = InPlaceUpdateStates::from([(sidecarset.clone(), state)]);
            prop_assert_eq!(new_update_state(&sidecarset, &revision, &now, &sorted), to_json(&states));
        }

        #[test]
        fn maps_are_written_as_serde_json_does(
            strings in proptest::collection::btree_map(text(), text(), 0..4),
            bools in proptest::collection::btree_map(text(), any::<bool>(), 0..4),
        ) {
            prop_assert_eq!(string_map(&strings), to_json(&strings));
            prop_assert_eq!(bool_map(&bools), to_json(&bools));
        }
    }

    #[test]
    fn every_control_byte_is_escaped_as_serde_json_does() {
        let all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        let map = BTreeMap::from([(all.clone(), all)]);
        assert_eq!(string_map(&map), to_json(&map));
    }
}
