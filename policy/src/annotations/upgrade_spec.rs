//! Reading a pod hash entry as Go's encoding/json reads `SidecarSetUpgradeSpec`: names match
//! case-insensitively, the last of repeated fields wins, `null` leaves the zero value, unknown
//! fields are skipped and `updateTimestamp` is a `metav1.Time` (RFC 3339 or null).

use super::{UpgradeSpec, timestamp};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;

#[derive(Clone, Copy)]
enum Field {
    UpdateTimestamp,
    Hash,
    SidecarSetName,
    SidecarList,
    ControllerRevision,
    Unknown,
}

const FIELDS: [(&str, Field); 5] = [
    ("updateTimestamp", Field::UpdateTimestamp),
    ("hash", Field::Hash),
    ("sidecarSetName", Field::SidecarSetName),
    ("sidecarList", Field::SidecarList),
    ("controllerRevision", Field::ControllerRevision),
];

fn field(key: &str) -> Field {
    FIELDS
        .iter()
        .find(|(name, _)| go_fold_eq(key, name))
        .map_or(Field::Unknown, |(_, field)| *field)
}

/// Whether `key` names the ASCII field `name` under Go's name folding: ASCII case, plus the
/// three other runes that fold to an ASCII letter (long s, Kelvin sign, dotless i).
fn go_fold_eq(key: &str, name: &str) -> bool {
    let mut chars = key.chars();
    let same = name.bytes().all(|expected| {
        let folded = match chars.next() {
            Some('\u{17F}') => 'S',
            Some('\u{212A}') => 'K',
            Some('\u{131}') => 'I',
            Some(c) => c.to_ascii_uppercase(),
            None => return false,
        };
        folded == char::from(expected.to_ascii_uppercase())
    });
    same && chars.next().is_none()
}

/// A `metav1.Time` read and normalised (`None`: the zero time).
struct GoTime(Option<String>);

impl<'de> Deserialize<'de> for GoTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Option::<String>::deserialize(deserializer)? {
            None => Ok(GoTime(None)),
            Some(text) => timestamp::normalise(&text)
                .map(GoTime)
                .map_err(de::Error::custom),
        }
    }
}

impl<'de> Deserialize<'de> for UpgradeSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `null` decodes to the zero entry.
        Ok(Option::<Fields>::deserialize(deserializer)?.map_or_else(UpgradeSpec::default, |f| f.0))
    }
}

/// The entry's members (a map: asking for one keeps the module small, unlike `deserialize_any`).
struct Fields(UpgradeSpec);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SpecVisitor).map(Fields)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = UpgradeSpec;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct UpgradeSpec")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UpgradeSpec, A::Error> {
        let mut spec = UpgradeSpec::default();
        // A `null` string leaves what an earlier repeat of the field set, as in Go.
        let set = |target: &mut String, value: Option<String>| {
            if let Some(value) = value {
                *target = value;
            }
        };
        while let Some(key) = map.next_key::<String>()? {
            match field(&key) {
                Field::UpdateTimestamp => spec.update_timestamp = map.next_value::<GoTime>()?.0,
                Field::Hash => set(&mut spec.hash, map.next_value()?),
                Field::SidecarSetName => set(&mut spec.sidecar_set_name, map.next_value()?),
                Field::ControllerRevision => set(&mut spec.controller_revision, map.next_value()?),
                Field::SidecarList => {
                    let list: Option<Vec<Option<String>>> = map.next_value()?;
                    spec.sidecar_list = list
                        .map(|names| names.into_iter().map(Option::unwrap_or_default).collect());
                }
                Field::Unknown => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HashAnnotation, SIDECARSET_HASH, parse_hash_annotation, to_json};

    fn parse(text: &str) -> Result<HashAnnotation, String> {
        parse_hash_annotation(SIDECARSET_HASH, Some(text)).map_err(|e| e.to_string())
    }

    /// The annotation as it is written back after reading.
    fn round_trip(text: &str) -> String {
        to_json(&parse(text).unwrap())
    }

    #[test]
    fn null_entries_and_fields_are_zero_values() {
        assert_eq!(
            round_trip(r#"{"old":null}"#),
            r#"{"old":{"updateTimestamp":null,"hash":"","sidecarSetName":"","sidecarList":null}}"#
        );
        assert_eq!(
            round_trip(r#"{"old":{"hash":"a","hash":null,"sidecarList":["x",null]}}"#),
            r#"{"old":{"updateTimestamp":null,"hash":"a","sidecarSetName":"","sidecarList":["x",""]}}"#
        );
    }

    #[test]
    fn names_fold_and_repeats_keep_the_last() {
        assert_eq!(
            round_trip(
                r#"{"old":{"Hash":"abc","SIDECARSETNAME":"old","hash":"b","ſidecarLıſt":["k"]}}"#
            ),
            r#"{"old":{"updateTimestamp":null,"hash":"b","sidecarSetName":"old","sidecarList":["k"]}}"#
        );
        assert_eq!(
            round_trip(r#"{"old":{"hash":"a","hash":"b","other":{"x":[1]}},"old":{"hash":"c"}}"#),
            r#"{"old":{"updateTimestamp":null,"hash":"c","sidecarSetName":"","sidecarList":null}}"#
        );
        assert_eq!(
            round_trip(r#"{"s":{"hashes":"x","\u212Aey":"y","controllerRevision":"s-1"}}"#),
            r#"{"s":{"updateTimestamp":null,"hash":"","sidecarSetName":"","sidecarList":null,"controllerRevision":"s-1"}}"#
        );
    }

    #[test]
    fn timestamps_are_metav1_times() {
        assert_eq!(
            round_trip(r#"{"s":{"updateTimestamp":"2025-01-02T05:04:05.678+02:00"}}"#),
            r#"{"s":{"updateTimestamp":"2025-01-02T03:04:05Z","hash":"","sidecarSetName":"","sidecarList":null}}"#
        );
        for bad in [
            r#"{"s":{"updateTimestamp":"yesterday"}}"#,
            r#"{"s":{"updateTimestamp":1735787045}}"#,
            r#"{"s":{"hash":5}}"#,
            r#"{"s":{"sidecarList":"a"}}"#,
            r#"{"s":[]}"#,
            "null",
            "[]",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn legacy_strings_take_null_as_empty() {
        let parsed = parse(r#"{"a":"h1","b":null}"#).unwrap();
        assert_eq!(
            (
                parsed["a"].hash.as_str(),
                parsed["a"].sidecar_set_name.as_str()
            ),
            ("h1", "a")
        );
        assert_eq!(
            (
                parsed["b"].hash.as_str(),
                parsed["b"].sidecar_set_name.as_str()
            ),
            ("", "b")
        );
    }
}
