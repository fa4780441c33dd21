//! The SidecarSet hashes of §4, byte-identical to OpenKruise's.
//!
//! `H(spec)` = safe-encode(lowercase hex(SHA-256(Go `json.Marshal` of
//! `{"containers": spec.containers, "initContainers": spec.initContainers}`))), where
//! `initContainers` is only present when at least one init container is a native sidecar
//! (`restartPolicy: Always`). The "without image" variant blanks every container's image first.

mod canonical;
mod gojson;
mod safe;
mod schema;

pub use canonical::canonical_volume;
pub use safe::safe_encode;

use gojson::Options;
use serde_json::Value;
use sha2::{Digest, Sha256};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SidecarSetHashes {
    pub hash: String,
    pub without_image: String,
}

/// §4 over the JSON `spec` of a SidecarSet exactly as served (no defaults applied).
///
/// Total: members of the wrong JSON type count as absent (as if Go had skipped them), so this
/// never fails and never panics.
pub fn compute(spec: &Value) -> SidecarSetHashes {
    SidecarSetHashes {
        hash: hash_of(&encode(spec, Options { skip_image: false })),
        without_image: hash_of(&encode(spec, Options { skip_image: true })),
    }
}

/// The exact bytes Go Kruise feeds to SHA-256 (`encodeSidecarSet`).
fn encode(spec: &Value, opts: Options) -> String {
    let containers = spec.get("containers");
    let init_containers = spec.get("initContainers");
    let mut out = String::from("{\"containers\":");
    gojson::write_struct_slice(&mut out, schema::SIDECAR_CONTAINER, containers, opts);
    if has_native_sidecar(init_containers) {
        out.push_str(",\"initContainers\":");
        gojson::write_struct_slice(&mut out, schema::SIDECAR_CONTAINER, init_containers, opts);
    }
    out.push('}');
    out
}

fn has_native_sidecar(init_containers: Option<&Value>) -> bool {
    init_containers
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter()
                .any(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"))
        })
}

fn hash_of(encoded: &str) -> String {
    let digest = Sha256::digest(encoded.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    safe_encode(&hex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PLAIN: &str = "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78";
    const NATIVE: &str = "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w";
    const PLAIN_NO_IMAGE: &str = "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759";
    const NATIVE_NO_IMAGE: &str =
        "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8";

    fn container1() -> Value {
        json!({"name": "container1", "image": "test-image"})
    }

    #[test]
    fn vector_one_container() {
        let spec = json!({"containers": [container1()]});
        assert_eq!(
            encode(&spec, Options::default()),
            r#"{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}"#
        );
        let h = compute(&spec);
        assert_eq!(h.hash, PLAIN);
        assert_eq!(h.without_image, PLAIN_NO_IMAGE);
    }

    #[test]
    fn vector_plain_init_container_is_not_hashed() {
        let spec = json!({"containers": [container1()], "initContainers": [container1()]});
        let h = compute(&spec);
        assert_eq!(h.hash, PLAIN);
        assert_eq!(h.without_image, PLAIN_NO_IMAGE);
    }

    #[test]
    fn vector_native_init_container_is_hashed() {
        let mut init = container1();
        init["restartPolicy"] = json!("Always");
        let spec = json!({"containers": [container1()], "initContainers": [init]});
        assert_eq!(
            encode(&spec, Options::default()),
            concat!(
                r#"{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}],"#,
                r#""initContainers":[{"name":"container1","image":"test-image","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}"#
            )
        );
        let h = compute(&spec);
        assert_eq!(h.hash, NATIVE);
        assert_eq!(h.without_image, NATIVE_NO_IMAGE);
    }

    #[test]
    fn vector_defaulted_dns_f() {
        let spec = json!({"containers": [{
            "name": "dns-f", "image": "dns:1.0", "imagePullPolicy": "IfNotPresent",
            "podInjectPolicy": "BeforeAppContainer", "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
            "shareVolumePolicy": {"type": "disabled"}, "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"
        }]});
        assert_eq!(
            encode(&spec, Options::default()),
            concat!(
                r#"{"containers":[{"name":"dns-f","image":"dns:1.0","resources":{},"terminationMessagePath":"/dev/termination-log","#,
                r#""terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","podInjectPolicy":"BeforeAppContainer","#,
                r#""upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"}}]}"#
            )
        );
        let h = compute(&spec);
        assert_eq!(
            h.hash,
            "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
        );
        assert_eq!(
            h.without_image,
            "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
        );
    }

    #[test]
    fn image_change_changes_only_hash() {
        let a = compute(&json!({"containers": [{"name": "c", "image": "busybox:1.36"}]}));
        let b = compute(&json!({"containers": [{"name": "c", "image": "busybox:1.37"}]}));
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.without_image, b.without_image);
        let c = compute(
            &json!({"containers": [{"name": "c", "image": "busybox:1.36", "args": ["x"]}]}),
        );
        assert_ne!(a.without_image, c.without_image);
    }

    #[test]
    fn unhashed_parts_and_key_order_do_not_matter() {
        let a = compute(
            &json!({"containers": [{"image": "i", "name": "c"}], "volumes": [{"name": "v"}]}),
        );
        let b = compute(
            &json!({"selector": {}, "containers": [{"name": "c", "image": "i", "x-unknown": 1}]}),
        );
        assert_eq!(a, b);
    }

    #[test]
    fn hashes_are_64_safe_characters_and_never_panic() {
        for spec in [
            json!(null),
            json!(1),
            json!({"containers": 5}),
            json!({"containers": [null, 1, "x"]}),
            json!({"initContainers": [{"restartPolicy": "Always"}]}),
            json!({"containers": []}),
        ] {
            let h = compute(&spec);
            assert_eq!(h.hash.len(), 64);
            assert!(
                h.hash
                    .chars()
                    .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
            );
        }
        assert_eq!(
            encode(&json!({}), Options::default()),
            r#"{"containers":null}"#
        );
        assert_eq!(
            encode(&json!({"containers": []}), Options::default()),
            r#"{"containers":[]}"#
        );
    }
}
