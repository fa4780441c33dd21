//! The README's examples: each request gives the same answer from the context folder, from the
//! recorded kwctl session and (where no Namespace lookup is needed) from inline settings.

use serde_json::Value;
use sidecarset_host::{ClusterContext, NoCluster, SessionReplayer, evaluate_admission};
use sidecarset_tests::{policy_engine, repo_root};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn examples_run_as_documented() {
    let examples = repo_root().join("examples");
    let context = ClusterContext::from_dir(&examples.join("cluster")).unwrap();
    let inline: Value = serde_norway::from_str(
        &std::fs::read_to_string(examples.join("settings-inline.yml")).unwrap(),
    )
    .unwrap();
    let engine = policy_engine();
    let cases = [
        ("log-sidecar", true, true),
        ("hot-upgrade-sidecar", true, true),
        ("no-match", false, true),
        ("namespace-selector", true, false),
    ];
    for (name, mutated, inline_applies) in cases {
        let request = read_json(&examples.join(format!("requests/{name}.json")));
        let from_context = evaluate_admission(engine, &request, &serde_json::json!({}), &context);
        assert!(from_context.allowed, "{name}: {from_context:?}");
        assert_eq!(from_context.patch.is_some(), mutated, "{name}");

        let session =
            SessionReplayer::from_file(&examples.join(format!("sessions/{name}.yml"))).unwrap();
        let replayed = evaluate_admission(engine, &request, &serde_json::json!({}), &session);
        assert_eq!(
            strip_times(replayed.decoded_patch()),
            strip_times(from_context.decoded_patch()),
            "{name}: session replay"
        );
        assert_eq!(
            session.remaining(),
            0,
            "{name}: every recorded exchange is replayed"
        );

        if inline_applies {
            let offline = evaluate_admission(engine, &request, &inline, &NoCluster);
            assert_eq!(
                strip_times(offline.decoded_patch()),
                strip_times(from_context.decoded_patch()),
                "{name}: inline settings"
            );
        }
    }
}

/// Timestamps inside the hash annotations differ between runs that straddle a second.
fn strip_times(patch: Option<Value>) -> Option<String> {
    patch.map(|p| {
        let text = p.to_string();
        let re = |s: &str| {
            let mut out = String::new();
            let mut rest = s;
            while let Some(i) = rest.find("updateTimestamp") {
                out.push_str(&rest[..i]);
                let tail = &rest[i..];
                let end = tail.find("Z\\\"").map(|e| e + 3).unwrap_or(tail.len());
                rest = &tail[end..];
            }
            out.push_str(rest);
            out
        };
        re(&text)
    })
}
