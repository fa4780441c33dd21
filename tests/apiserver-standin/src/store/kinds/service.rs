//! The Service strategy: defaults and a cluster IP allocated from 10.96.0.0/16, as kube-apiserver
//! with its default service CIDR does.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::set_default;
use crate::error::Cause;

/// Next host part of 10.96.0.0/16 to hand out (10.96.0.1 is the `kubernetes` service).
static NEXT_IP: AtomicU32 = AtomicU32::new(10);

fn allocate() -> String {
    let n = NEXT_IP.fetch_add(1, Ordering::Relaxed) % 65_534 + 1;
    format!("10.96.{}.{}", n / 256, n % 256)
}

/// Defaults and the allocation done by the service REST storage on create.
pub fn create(obj: &mut Value) -> Vec<Cause> {
    let Some(spec) = obj.get_mut("spec") else {
        return vec![Cause::required("spec.ports", "")];
    };
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    if spec.get("type").and_then(Value::as_str) != Some("ExternalName") {
        if !headless {
            let ip = spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(allocate);
            spec["clusterIP"] = json!(ip);
        }
        let ip = spec["clusterIP"].clone();
        set_default(spec, "clusterIPs", json!([ip]));
        set_default(spec, "ipFamilies", json!(["IPv4"]));
        set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    let mut causes = Vec::new();
    let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
    match ports {
        Some(ports) => {
            for (i, p) in ports.iter_mut().enumerate() {
                set_default(p, "protocol", json!("TCP"));
                let port = p.get("port").cloned().unwrap_or(Value::Null);
                match port.as_i64() {
                    Some(n) if (1..=65535).contains(&n) => set_default(p, "targetPort", port),
                    _ => causes.push(Cause::invalid(
                        format!("spec.ports[{i}].port"),
                        &port,
                        "must be between 1 and 65535, inclusive",
                    )),
                }
            }
        }
        None if !headless => causes.push(Cause::required("spec.ports", "")),
        None => {}
    }
    causes
}

/// `spec.clusterIP` is immutable; an update that leaves it out keeps the allocated one.
pub fn update(old: &Value, new: &mut Value) -> Vec<Cause> {
    let old_ip = old.pointer("/spec/clusterIP").cloned();
    if let (Some(ip), Some(spec)) = (&old_ip, new.get_mut("spec"))
        && spec.get("clusterIP").is_none_or(|v| v.as_str() == Some(""))
    {
        spec["clusterIP"] = ip.clone();
        if let Some(ips) = old.pointer("/spec/clusterIPs") {
            set_default(spec, "clusterIPs", ips.clone());
        }
    }
    let mut causes = create(new);
    if old_ip.is_some() && new.pointer("/spec/clusterIP").cloned() != old_ip {
        causes.push(Cause::invalid(
            "spec.clusterIPs[0]",
            new.pointer("/spec/clusterIP").unwrap_or(&Value::Null),
            "may not change once set",
        ));
    }
    causes
}
