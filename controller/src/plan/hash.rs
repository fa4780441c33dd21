//! One SidecarSet's `hash` out of a pod hash annotation without building the whole map: the
//! planner reads it for every cached pod, twice. Accepts exactly what
//! `sidecarset_policy::annotations::pod_hash_of` accepts (same serde shapes, borrowed).

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// `annotations::pod_hash_of(_, value, sidecarset)`: the struct form, else the legacy
/// `{"name":"hash"}` form, else `""`.
pub(crate) fn pod_hash_of<'a>(value: Option<&'a str>, sidecarset: &str) -> Cow<'a, str> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Cow::Borrowed("");
    };
    if let Ok(found) = parse(value, EntryOf::<SpecHash>::new(sidecarset)) {
        return found.map(|spec| spec.hash).unwrap_or_default();
    }
    parse(value, EntryOf::<Cow<str>>::new(sidecarset))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// `pod_hash_of(value, sidecarset) == hash`, without decoding when it cannot hold: in a value
/// without escapes every decoded string appears verbatim, so a non-empty `hash` it lacks is not
/// the entry's (most pods of a rollout in progress are not updated).
pub(crate) fn pod_hash_is(value: Option<&str>, sidecarset: &str, hash: &str) -> bool {
    if let Some(value) = value
        && !hash.is_empty()
        && !value.contains('\\')
        && !value.contains(hash)
    {
        return false;
    }
    pod_hash_of(value, sidecarset) == hash
}

/// Like `serde_json::from_str`: the whole input, trailing whitespace only.
fn parse<'a, S: DeserializeSeed<'a>>(value: &'a str, seed: S) -> serde_json::Result<S::Value> {
    let mut deserializer = serde_json::Deserializer::from_str(value);
    let found = seed.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(found)
}

/// `UpgradeSpec` field for field (same names, defaults and accepted JSON), keeping only `hash`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // the other fields are only type-checked
struct SpecHash<'a> {
    #[serde(default)]
    update_timestamp: Option<AnyStr>,
    #[serde(default, borrow)]
    hash: Cow<'a, str>,
    #[serde(default)]
    sidecar_set_name: AnyStr,
    #[serde(default)]
    sidecar_list: Option<AnyStrs>,
    #[serde(default)]
    controller_revision: AnyStr,
}

/// A JSON string, checked and dropped (what a `String` field accepts).
#[derive(Default)]
struct AnyStr;

impl<'de> Deserialize<'de> for AnyStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;
        impl Visitor<'_> for StrVisitor {
            type Value = AnyStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<AnyStr, E> {
                Ok(AnyStr)
            }
            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<AnyStr, E> {
                std::str::from_utf8(bytes)
                    .map(|_| AnyStr)
                    .map_err(|_| E::invalid_value(de::Unexpected::Bytes(bytes), &self))
            }
        }
        deserializer.deserialize_string(StrVisitor)
    }
}

/// A JSON array of strings, checked and dropped (what a `Vec<String>` field accepts).
struct AnyStrs;

impl<'de> Deserialize<'de> for AnyStrs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SeqVisitor;
        impl<'de> Visitor<'de> for SeqVisitor {
            type Value = AnyStrs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyStrs, A::Error> {
                while seq.next_element::<AnyStr>()?.is_some() {}
                Ok(AnyStrs)
            }
        }
        deserializer.deserialize_seq(SeqVisitor)
    }
}

/// A JSON object of `V`s (as a `BTreeMap<String, V>` accepts): the last value under `name`.
struct EntryOf<'n, V> {
    name: &'n str,
    value: std::marker::PhantomData<V>,
}

impl<'n, V> EntryOf<'n, V> {
    fn new(name: &'n str) -> Self {
        EntryOf {
            name,
            value: std::marker::PhantomData,
        }
    }
}

impl<'de, V: Deserialize<'de>> DeserializeSeed<'de> for EntryOf<'_, V> {
    type Value = Option<V>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<V>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, V: Deserialize<'de>> Visitor<'de> for EntryOf<'_, V> {
    type Value = Option<V>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<V>, A::Error> {
        let mut found = None;
        while let Some(is_name) = map.next_key_seed(KeyIs(self.name))? {
            // Every value is decoded (a bad one fails the whole map, as for the owned map).
            let value = map.next_value::<V>()?;
            if is_name {
                found = Some(value);
            }
        }
        Ok(found)
    }
}

/// A map key (a string, as `String` accepts it): whether it is `.0`.
struct KeyIs<'n>(&'n str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_string(self)
    }
}

impl Visitor<'_> for KeyIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<bool, E> {
        std::str::from_utf8(bytes)
            .map(|key| key == self.0)
            .map_err(|_| E::invalid_value(de::Unexpected::Bytes(bytes), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sidecarset_policy::annotations::{self, SIDECARSET_HASH};

    fn agrees(value: &str) {
        for name in ["a", "b", "", "c\\d"] {
            let owned = annotations::pod_hash_of(SIDECARSET_HASH, Some(value), name);
            assert_eq!(
                pod_hash_of(Some(value), name),
                owned,
                "{value:?} for {name:?}"
            );
            for hash in ["", "x", "h1", "b", "legacy", "hA", owned.as_str()] {
                assert_eq!(
                    pod_hash_is(Some(value), name, hash),
                    owned == hash,
                    "{value:?} for {name:?} is {hash:?}"
                );
            }
        }
    }

    #[test]
    fn agrees_with_the_owned_parser_on_edge_cases() {
        for value in [
            "",
            " ",
            "{}",
            "null",
            "[]",
            r#"{"a":{"hash":"h1"}}"#,
            r#"{"a":{"hash":"h1"},"a":{"hash":"h2"}}"#,
            r#"{"a":{"hash":"h1","hash":"h2"}}"#,
            r#"{"a":{"hash":null}}"#,
            r#"{"a":{"hash":"h\u0041"}}"#,
            r#"{"a":{"updateTimestamp":null,"hash":"x","sidecarList":null}}"#,
            r#"{"a":{"hash":"x","sidecarList":["p",1]}}"#,
            r#"{"a":{"hash":"x","sidecarList":"p"}}"#,
            r#"{"a":{"hash":"x","controllerRevision":null}}"#,
            r#"{"a":{"hash":"x","extra":{"deep":[1,2]}}}"#,
            r#"{"a":["t","h2"]}"#,
            r#"{"a":[null,"h3","n",["l"],"r"]}"#,
            r#"{"a":[null,"h3","n",["l"],"r","more"]}"#,
            r#"{"a":{"hash":"x"},"b":5}"#,
            r#"{"a":"legacy","b":"other"}"#,
            r#"{"a":"legacy","b":{"hash":"x"}}"#,
            r#"{"a":"l\"q"}"#,
            r#"{"a":{"hash":"x"}} "#,
            r#"{"a":{"hash":"x"}} x"#,
            r#"{"c\\d":{"hash":"esc"}}"#,
            r#"{"a":{"hash":"x"}"#,
        ] {
            agrees(value);
        }
    }

    /// JSON-ish text from fragments that hit both forms and their failure modes.
    fn annotation() -> impl Strategy<Value = String> {
        let fragment = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"a\"",
            "\"b\"",
            "\"hash\"",
            "\"sidecarList\"",
            "\"updateTimestamp\"",
            "\"x\"",
            "null",
            "1",
            "\"\\u0062\"",
            " ",
        ]);
        prop::collection::vec(fragment, 0..24).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn agrees_with_the_owned_parser(value in annotation()) {
            agrees(&value);
        }

        #[test]
        fn agrees_on_well_formed_maps(
            entries in prop::collection::vec((prop::sample::select(vec!["a", "b"]), "[a-z]{0,3}", any::<bool>()), 0..4),
        ) {
            let body: Vec<String> = entries
                .iter()
                .map(|(name, hash, legacy)| if *legacy {
                    format!(r#""{name}":"{hash}""#)
                } else {
                    format!(r#""{name}":{{"hash":"{hash}","sidecarList":["{hash}"]}}"#)
                })
                .collect();
            agrees(&format!("{{{}}}", body.join(",")));
        }
    }
}
