//! `SidecarSet` straight from JSON text, for the matched SidecarSets of a pod CREATE: a `Value`
//! tree in between cost two fifths of the decode. The containers, volumes and plain strings are
//! read from the text; metadata, selectors, strategies and status are read as `Value` and
//! decoded by the `Value` path's decoders (a second copy of k8s-openapi's decoders would not fit
//! the 1 MB module). Strict: anything but the plain object shape (duplicated members, `[...]`
//! structs) is an error, and the caller then decodes through `Value`, whose result and messages
//! are the reference.

use super::{SidecarSet, SidecarSetSpec, SidecarSetStatus};
use crate::api::container::{ContainerVisitor, ThroughValue};
use crate::api::nullable::{OrDefault, or_default};
use crate::api::{LabelSelector, SidecarContainer};
use serde::de::{
    DeserializeOwned, DeserializeSeed, Error, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// The SidecarSet in `text`, when it has the plain shape; `Err` means "ask the `Value` path".
pub(super) fn decode(text: &str) -> Result<SidecarSet, serde_json::Error> {
    // From `&str`: serde_json then skips its UTF-8 check per string (a tenth of the decode).
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let sidecarset = deserializer.deserialize_map(SidecarSetVisitor)?;
    deserializer.end()?;
    Ok(sidecarset)
}

const SIDECARSET_FIELDS: &[&str] = &["metadata", "spec", "status"];

struct SidecarSetVisitor;

impl<'de> Visitor<'de> for SidecarSetVisitor {
    type Value = SidecarSet;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a SidecarSet object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SidecarSet, A::Error> {
        let mut out = SidecarSet::default();
        let mut seen = Seen::default();
        while let Some(field) = map.next_key_seed(Field(SIDECARSET_FIELDS))? {
            let Some(index) = field else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            seen.once::<A::Error>(index)?;
            match index {
                0 => out.metadata = via_value(&mut map, or_default)?,
                1 => out.spec = map.next_value_seed(SpecSeed)?,
                _ => out.status = via_value(&mut map, Option::<SidecarSetStatus>::deserialize)?,
            }
        }
        Ok(out)
    }
}

const SPEC_FIELDS: &[&str] = &[
    "selector",
    "namespace",
    "namespaceSelector",
    "initContainers",
    "containers",
    "volumes",
    "updateStrategy",
    "injectionStrategy",
    "imagePullSecrets",
    "revisionHistoryLimit",
    "patchPodMetadata",
    "customVersion",
];

/// The spec, `null` read as the zero value (`or_default`).
struct SpecSeed;

impl<'de> DeserializeSeed<'de> for SpecSeed {
    type Value = SidecarSetSpec;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<SidecarSetSpec, D::Error> {
        deserializer.deserialize_option(SpecVisitor)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = SidecarSetSpec;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a SidecarSet spec object")
    }

    fn visit_none<E: Error>(self) -> Result<SidecarSetSpec, E> {
        Ok(SidecarSetSpec::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<SidecarSetSpec, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SidecarSetSpec, A::Error> {
        let mut spec = SidecarSetSpec::default();
        let mut seen = Seen::default();
        while let Some(field) = map.next_key_seed(Field(SPEC_FIELDS))? {
            let Some(index) = field else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            seen.once::<A::Error>(index)?;
            match index {
                0 => spec.selector = via_value(&mut map, Option::<LabelSelector>::deserialize)?,
                1 => spec.namespace = map.next_value_seed(OrDefault(PhantomData))?,
                2 => {
                    spec.namespace_selector =
                        via_value(&mut map, Option::<LabelSelector>::deserialize)?
                }
                3 => spec.init_containers = map.next_value_seed(ContainersSeed)?,
                4 => spec.containers = map.next_value_seed(ContainersSeed)?,
                5 => spec.volumes = map.next_value_seed(OrDefault(PhantomData))?,
                6 => spec.update_strategy = via_value(&mut map, or_default)?,
                7 => spec.injection_strategy = via_value(&mut map, or_default)?,
                8 => spec.image_pull_secrets = via_value(&mut map, or_default)?,
                9 => spec.revision_history_limit = via_value(&mut map, Option::<i32>::deserialize)?,
                10 => spec.patch_pod_metadata = via_value(&mut map, or_default)?,
                _ => spec.custom_version = map.next_value_seed(OrDefault(PhantomData))?,
            }
        }
        Ok(spec)
    }
}

/// A list of sidecar containers, `null` as empty, extension fields through `Value`.
struct ContainersSeed;

impl<'de> DeserializeSeed<'de> for ContainersSeed {
    type Value = Vec<SidecarContainer>;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Vec<SidecarContainer>, D::Error> {
        deserializer.deserialize_option(ContainersVisitor)
    }
}

struct ContainersVisitor;

impl<'de> Visitor<'de> for ContainersVisitor {
    type Value = Vec<SidecarContainer>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a list of sidecar containers")
    }

    fn visit_none<E: Error>(self) -> Result<Vec<SidecarContainer>, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Vec<SidecarContainer>, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut items: S) -> Result<Vec<SidecarContainer>, S::Error> {
        let mut out = Vec::new();
        while let Some(container) = items.next_element_seed(ContainerSeed)? {
            out.push(container);
        }
        Ok(out)
    }
}

struct ContainerSeed;

impl<'de> DeserializeSeed<'de> for ContainerSeed {
    type Value = SidecarContainer;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<SidecarContainer, D::Error> {
        deserializer.deserialize_map(ContainerVisitor::<ThroughValue>(PhantomData))
    }
}

/// A member read as a `Value`, then decoded by `decode` (one of the `Value` path's decoders).
fn via_value<'de, A: MapAccess<'de>, T: DeserializeOwned>(
    map: &mut A,
    decode: fn(Value) -> Result<T, serde_json::Error>,
) -> Result<T, A::Error> {
    let value: Value = map.next_value()?;
    decode(value).map_err(A::Error::custom)
}

/// A key as the index of a known field (`None`: a field the type ignores).
struct Field(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Field {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Field {
    type Value = Option<usize>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a field name")
    }

    fn visit_str<E: Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|field| *field == key))
    }
}

/// A field seen twice is an error, as the derive's duplicate check (the `Value` path then
/// keeps the last). Fields by index.
#[derive(Default)]
struct Seen(u16);

impl Seen {
    fn once<E: Error>(&mut self, field: usize) -> Result<(), E> {
        let bit = 1u16 << field;
        if self.0 & bit != 0 {
            return Err(E::custom("duplicate field"));
        }
        self.0 |= bit;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
