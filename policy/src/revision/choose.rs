//! §3.3 steps 3–4: whether a new pod gets the history SidecarSet or the current one.

use crate::api::{IntOrString, SidecarSet};
use crate::selector::{self, Labels, SelectorError};

/// Which version of a SidecarSet a pod is injected with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedVersion {
    Current,
    History,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChooseError {
    #[error("invalid spec.updateStrategy.selector: {0}")]
    Selector(#[from] SelectorError),
    #[error("spec.updateStrategy.partition {0:?} is not a percentage")]
    Percentage(String),
}

/// Paused or policy `Always` (anything but `Partial`): the history. `Partial`: the history for a
/// pod outside `updateStrategy.selector`; otherwise a percent partition `p%` gives the history
/// when `draw()` (uniform in [0, 1)) is at most p/100, and any other partition the current one.
pub fn choose_version(
    sidecarset: &SidecarSet,
    pod_labels: &Labels,
    draw: &mut dyn FnMut() -> f64,
) -> Result<InjectedVersion, ChooseError> {
    let strategy = &sidecarset.spec.update_strategy;
    let partial = sidecarset
        .spec
        .injection_strategy
        .revision
        .as_ref()
        .is_some_and(|r| r.policy == "Partial");
    if strategy.paused || !partial {
        return Ok(InjectedVersion::History);
    }
    if let Some(selector) = &strategy.selector
        && !selector::matches_validated(selector, pod_labels)?
    {
        return Ok(InjectedVersion::History);
    }
    let Some(IntOrString::String(partition)) = &strategy.partition else {
        return Ok(InjectedVersion::Current);
    };
    let probability = parse_percentage(partition)?;
    Ok(if draw() <= probability {
        InjectedVersion::History
    } else {
        InjectedVersion::Current
    })
}

/// Kruise's `ParsePercentageAsFloat64`: `"<float>%"` as a fraction.
fn parse_percentage(text: &str) -> Result<f64, ChooseError> {
    text.strip_suffix('%')
        .and_then(|number| number.parse::<f64>().ok())
        .map(|p| p / 100.0)
        .ok_or_else(|| ChooseError::Percentage(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sidecarset(policy: &str, update_strategy: serde_json::Value) -> SidecarSet {
        SidecarSet::deserialize_value(&json!({
            "metadata": {"name": "s"},
            "spec": {"injectionStrategy": {"revision": {"revisionName": "s-1", "policy": policy}},
                     "updateStrategy": update_strategy}
        }))
        .unwrap()
    }

    fn labels(app: &str) -> Labels {
        Labels::from([("app".to_string(), app.to_string())])
    }

    fn choose(set: &SidecarSet, app: &str, r: f64) -> Result<InjectedVersion, ChooseError> {
        choose_version(set, &labels(app), &mut || r)
    }

    use InjectedVersion::{Current, History};

    #[test]
    fn always_and_paused_inject_the_history() {
        let always = sidecarset("Always", json!({"partition": "100%"}));
        assert_eq!(choose(&always, "a", 0.99), Ok(History));
        let other = sidecarset("Sometimes", json!({}));
        assert_eq!(choose(&other, "a", 0.99), Ok(History));
        let paused = sidecarset("Partial", json!({"paused": true}));
        assert_eq!(choose(&paused, "a", 0.99), Ok(History));
    }

    #[test]
    fn partial_outside_the_update_selector_injects_the_history() {
        let set = sidecarset(
            "Partial",
            json!({"selector": {"matchLabels": {"app": "canary"}}}),
        );
        assert_eq!(choose(&set, "web", 0.0), Ok(History));
        assert_eq!(choose(&set, "canary", 0.0), Ok(Current));
        let bad = sidecarset(
            "Partial",
            json!({"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}),
        );
        assert!(matches!(
            choose(&bad, "web", 0.0),
            Err(ChooseError::Selector(_))
        ));
    }

    #[test]
    fn partial_draws_against_a_percent_partition() {
        let set = sidecarset("Partial", json!({"partition": "30%"}));
        assert_eq!(choose(&set, "a", 0.3), Ok(History));
        assert_eq!(choose(&set, "a", 0.31), Ok(Current));
        let fraction = sidecarset("Partial", json!({"partition": "12.5%"}));
        assert_eq!(choose(&fraction, "a", 0.125), Ok(History));
        let int = sidecarset("Partial", json!({"partition": 3}));
        assert_eq!(choose(&int, "a", 0.0), Ok(Current));
        assert_eq!(
            choose(&sidecarset("Partial", json!({})), "a", 0.0),
            Ok(Current)
        );
        // Go's ParseFloat reads "inf" too: always the history.
        let infinite = sidecarset("Partial", json!({"partition": "inf%"}));
        assert_eq!(choose(&infinite, "a", 0.99), Ok(History));
        for bad in ["abc%", "30", "%", "1e%"] {
            let set = sidecarset("Partial", json!({"partition": bad}));
            assert_eq!(
                choose(&set, "a", 0.0),
                Err(ChooseError::Percentage(bad.into()))
            );
        }
    }

    #[test]
    fn the_draw_is_taken_only_for_a_percent_partition() {
        let mut drawn = 0;
        let set = sidecarset("Always", json!({"partition": "50%"}));
        let result = choose_version(&set, &labels("a"), &mut || {
            drawn += 1;
            0.0
        });
        assert_eq!((result, drawn), (Ok(History), 0));
    }
}
