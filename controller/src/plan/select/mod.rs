//! §5.8.1 filter and §5.8.2 sort of the wait list: default ActivePods order ([`active`]),
//! priority (here), scatter ([`scatter`]).

mod active;
mod scatter;

pub(crate) use active::ActiveKey;
#[cfg(test)]
pub(crate) use scatter::expand_scatter_terms;

use super::context::PodView;
use super::pod;
use super::predicates::Upgradability;
use crate::cached_pod::CachedPod;
use active::sort_active_pods;
use scatter::{LabelColumns, expand_terms, scatter};
use sidecarset_policy::api::{SidecarSetUpdateStrategy, UpdatePriorityStrategy};
use sidecarset_policy::selector;
use std::cmp::Reverse;

/// Indices into the matched pods.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    pub wait: Vec<usize>,
    pub not_upgradable: Vec<usize>,
}

/// §5.8.1: not updated, selected by the canary selector, then split by upgradability (all
/// three gathered into `PodView::waiting` by the first pass).
pub(crate) fn filter(matched: &[PodView]) -> Selection {
    let mut selection = Selection::default();
    for (index, view) in matched.iter().enumerate() {
        let Some(waiting) = &view.waiting else {
            continue;
        };
        if !waiting.canary_selected {
            continue;
        }
        match waiting.upgradability {
            Upgradability::Upgradable => selection.wait.push(index),
            Upgradability::NotUpgradable => selection.not_upgradable.push(index),
            Upgradability::InFlight => {}
        }
    }
    selection
}

/// §5.8.2: sort `wait` (indices into `matched`) in upgrade order.
pub(crate) fn sort(
    strategy: &SidecarSetUpdateStrategy,
    matched: &[PodView],
    inputs: &SortInputs,
    wait: &mut Vec<usize>,
) {
    sort_active_pods(matched, wait);
    if let Some(priority) = &strategy.priority_strategy {
        sort_by_priority(priority, matched, inputs, wait);
    }
    if !strategy.scatter_strategy.is_empty() {
        let terms = expand_terms(&strategy.scatter_strategy, &inputs.columns);
        scatter(&terms, &inputs.columns, wait);
    }
}

/// What the priority and scatter sorts read of every matched pod, gathered in the first pass
/// while the pod's packed table is in cache rather than re-read from 10,000 pods later.
pub(crate) struct SortInputs<'p> {
    strategy: &'p SidecarSetUpdateStrategy,
    /// The orderPriority key of each matched pod (only with order terms and no weight terms).
    orders: Vec<OrderKey>,
    columns: LabelColumns<'p>,
}

/// (level of the first order term the pod has, its value's trailing integer, reversed).
type OrderKey = (i64, Reverse<i64>);

impl<'p> SortInputs<'p> {
    pub fn new(strategy: &'p SidecarSetUpdateStrategy) -> Self {
        SortInputs {
            strategy,
            orders: Vec::new(),
            columns: LabelColumns::new(&strategy.scatter_strategy),
        }
    }

    /// Gathers what the sorts read of the next matched pod.
    pub fn push(&mut self, view: &PodView<'p>) {
        if let Some(priority) = &self.strategy.priority_strategy
            && priority.weight_priority.is_empty()
            && !priority.order_priority.is_empty()
        {
            self.orders.push(order_key(priority, view.pod));
        }
        self.columns.push(view);
    }
}

fn order_key(priority: &UpdatePriorityStrategy, pod: &CachedPod) -> OrderKey {
    priority
        .order_priority
        .iter()
        .enumerate()
        .find_map(|(level, term)| {
            pod::label(pod, &term.ordered_key).map(|value| {
                let level = i64::try_from(level).unwrap_or(i64::MAX);
                (level, Reverse(trailing_integer(value)))
            })
        })
        // Pods with none of the keys come first (level -1), as upstream does.
        .unwrap_or((-1, Reverse(0)))
}

/// Step 2: weight terms (higher sum first) win over order terms; both are stable re-sorts.
fn sort_by_priority(
    priority: &UpdatePriorityStrategy,
    matched: &[PodView],
    inputs: &SortInputs,
    wait: &mut [usize],
) {
    if !priority.weight_priority.is_empty() {
        let weight = |index: usize| -> i64 {
            let labels = pod::labels(matched[index].pod);
            priority
                .weight_priority
                .iter()
                .filter(|term| selector::matches(&term.match_selector, labels).unwrap_or(false))
                .map(|term| i64::from(term.weight))
                .sum()
        };
        wait.sort_by_cached_key(|&index| Reverse(weight(index)));
    } else if !priority.order_priority.is_empty() {
        // Gathered for every matched pod by the first pass; read afresh if not.
        let order = |index: usize| match inputs.orders.get(index) {
            Some(&key) => key,
            None => order_key(priority, matched[index].pod),
        };
        wait.sort_by_cached_key(|&index| order(index));
    }
}

/// The integer at the end of a label value (`sts-10` → 10); 0 when none or out of range.
fn trailing_integer(value: &str) -> i64 {
    let digits = value.bytes().rev().take_while(u8::is_ascii_digit).count();
    value[value.len() - digits..].parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_integers() {
        assert_eq!(trailing_integer("sts-10"), 10);
        assert_eq!(trailing_integer("20"), 20);
        assert_eq!(trailing_integer("abc"), 0);
        assert_eq!(trailing_integer(""), 0);
        assert_eq!(trailing_integer("x99999999999999999999999"), 0);
    }
}
