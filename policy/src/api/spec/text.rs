//! `SidecarSet` straight from JSON text, for the matched SidecarSets of a pod CREATE: a `Value`
//! tree in between cost two fifths of the decode. The containers and volumes are read from the
//! text; every other member is collected as `Value` and decoded by the `Value` path's decoders
//! (a second copy of k8s-openapi's decoders would not fit the 1 MB module). A duplicated member
//! keeps its last value, as a `Value` object does. Strict otherwise: any other shape is an error,
//! and the caller then decodes through `Value`, whose result and messages are the reference.

use super::{SidecarSet, SidecarSetSpec};
use crate::api::SidecarContainer;
use crate::api::container::{ContainerVisitor, ThroughValue};
use crate::api::nullable::OrDefault;
use serde::de::{DeserializeSeed, Error, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;

/// The SidecarSet in `text`, when it has the plain shape; `Err` means "ask the `Value` path".
pub(super) fn decode(text: &[u8]) -> Result<SidecarSet, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let sidecarset = deserializer.deserialize_map(SidecarSetVisitor)?;
    deserializer.end()?;
    Ok(sidecarset)
}

struct SidecarSetVisitor;

impl<'de> Visitor<'de> for SidecarSetVisitor {
    type Value = SidecarSet;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a SidecarSet object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SidecarSet, A::Error> {
        let mut rest = Map::new();
        let mut spec = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "spec" {
                spec = Some(map.next_value_seed(SpecSeed)?);
            } else {
                rest.insert(key, map.next_value()?);
            }
        }
        // The members decode independently: the spec's absence changes nothing else.
        let mut sidecarset =
            SidecarSet::from_value(Value::Object(rest)).map_err(A::Error::custom)?;
        sidecarset.spec = spec.unwrap_or_default();
        Ok(sidecarset)
    }
}

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
        let mut rest = Map::new();
        let (mut init_containers, mut containers, mut volumes) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "initContainers" => init_containers = Some(map.next_value_seed(ContainersSeed)?),
                "containers" => containers = Some(map.next_value_seed(ContainersSeed)?),
                "volumes" => volumes = Some(map.next_value_seed(OrDefault(PhantomData))?),
                _ => {
                    rest.insert(key, map.next_value()?);
                }
            }
        }
        let mut spec =
            SidecarSetSpec::deserialize(Value::Object(rest)).map_err(A::Error::custom)?;
        spec.init_containers = init_containers.unwrap_or_default();
        spec.containers = containers.unwrap_or_default();
        spec.volumes = volumes.unwrap_or_default();
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

#[cfg(test)]
mod tests;
