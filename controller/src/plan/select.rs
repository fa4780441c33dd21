//! §5.8.1 filter and §5.8.2 sort of the wait list: default ActivePods order, priority, scatter.

use super::context::PodView;
use super::pod;
use super::predicates::Upgradability;
use crate::cached_pod::CachedPod;
use k8s_openapi::jiff::Timestamp;
use sidecarset_policy::api::{ScatterTerm, SidecarSetUpdateStrategy, UpdatePriorityStrategy};
use sidecarset_policy::selector;
use std::cmp::Ordering;
use std::collections::BTreeMap;

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
    wait: &mut Vec<usize>,
) {
    sort_active_pods(matched, wait);
    if let Some(priority) = &strategy.priority_strategy {
        sort_by_priority(priority, matched, wait);
    }
    if !strategy.scatter_strategy.is_empty() {
        let terms = expand_scatter_terms(&strategy.scatter_strategy, matched);
        scatter(&terms, matched, wait);
    }
}

/// The ActivePods sort key of one pod, precomputed so sorting does not re-read the pod (the
/// times are copied; namespace and name are read only on ties).
pub(crate) struct ActiveKey<'p> {
    unassigned: bool,
    phase_rank: u8,
    ready: bool,
    /// Ready condition lastTransitionTime when ready; `None` is Go's zero time.
    ready_since: Option<Timestamp>,
    restarts: (i32, i32),
    created: Option<Timestamp>,
    namespace: &'p str,
    name: &'p str,
}

impl<'p> ActiveKey<'p> {
    pub fn of(pod: &'p CachedPod) -> Self {
        let facts = &pod.facts;
        ActiveKey {
            unassigned: facts.unassigned,
            phase_rank: facts.phase_rank,
            ready: facts.ready,
            ready_since: facts.ready_since,
            restarts: facts.restarts,
            created: pod.creation_timestamp,
            namespace: pod::namespace(pod),
            name: pod::name(pod),
        }
    }
}

/// afterOrZero: a zero time first, then the later time first.
fn newer_or_zero_first(a: Option<Timestamp>, b: Option<Timestamp>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => b.cmp(&a),
    }
}

fn compare_active(a: &ActiveKey, b: &ActiveKey) -> Ordering {
    // Only "one unassigned, one assigned" orders; two different nodes tie.
    b.unassigned
        .cmp(&a.unassigned)
        .then(a.phase_rank.cmp(&b.phase_rank))
        .then(a.ready.cmp(&b.ready))
        .then_with(|| {
            if a.ready && b.ready {
                newer_or_zero_first(a.ready_since, b.ready_since)
            } else {
                Ordering::Equal
            }
        })
        .then(b.restarts.0.cmp(&a.restarts.0))
        .then(b.restarts.1.cmp(&a.restarts.1))
        .then_with(|| newer_or_zero_first(a.created, b.created))
        .then_with(|| a.namespace.cmp(b.namespace))
        .then_with(|| a.name.cmp(b.name))
}

/// Step 1, with the final namespace/name tie-break that makes the order total. Every pod of the
/// wait list is waiting, so has its key.
fn sort_active_pods(matched: &[PodView], wait: &mut [usize]) {
    let key = |index: usize| matched[index].waiting.as_ref().map(|w| &w.active_key);
    wait.sort_by(|&a, &b| match (key(a), key(b)) {
        (Some(a), Some(b)) => compare_active(a, b),
        _ => Ordering::Equal,
    });
}

/// Step 2: weight terms (higher sum first) win over order terms; both are stable re-sorts.
fn sort_by_priority(priority: &UpdatePriorityStrategy, matched: &[PodView], wait: &mut [usize]) {
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
        wait.sort_by_cached_key(|&index| std::cmp::Reverse(weight(index)));
    } else if !priority.order_priority.is_empty() {
        let order = |index: usize| -> (i64, std::cmp::Reverse<i64>) {
            let labels = pod::labels(matched[index].pod);
            priority
                .order_priority
                .iter()
                .enumerate()
                .find_map(|(level, term)| {
                    labels.get(&term.ordered_key).map(|value| {
                        let level = i64::try_from(level).unwrap_or(i64::MAX);
                        (level, std::cmp::Reverse(trailing_integer(value)))
                    })
                })
                // Pods with none of the keys come first (level -1), as upstream does.
                .unwrap_or((-1, std::cmp::Reverse(0)))
        };
        wait.sort_by_cached_key(|&index| order(index));
    }
}

/// The integer at the end of a label value (`sts-10` → 10); 0 when none or out of range.
fn trailing_integer(value: &str) -> i64 {
    let digits = value.bytes().rev().take_while(u8::is_ascii_digit).count();
    value[value.len() - digits..].parse().unwrap_or(0)
}

/// `key=*` becomes one term per value of `key` among the matched pods, first seen first.
pub(crate) fn expand_scatter_terms(terms: &[ScatterTerm], matched: &[PodView]) -> Vec<ScatterTerm> {
    let mut expanded: Vec<ScatterTerm> = Vec::new();
    let mut insert = |term: ScatterTerm| {
        if !expanded.contains(&term) {
            expanded.push(term);
        }
    };
    for term in terms {
        if term.value != "*" {
            insert(term.clone());
            continue;
        }
        for value in values_in_name_order(&term.key, matched) {
            insert(ScatterTerm {
                key: term.key.clone(),
                value: value.to_string(),
            });
        }
    }
    expanded
}

/// The values of label `key` in the order their first carriers have in namespace/name order,
/// so the plan does not depend on the cache's list order. Each value's first carrier is found
/// in one pass instead of sorting all pods; the index breaks ties as a stable sort would.
fn values_in_name_order<'p>(key: &str, matched: &[PodView<'p>]) -> Vec<&'p str> {
    let mut first: BTreeMap<&'p str, (&'p str, &'p str, usize)> = BTreeMap::new();
    for (index, view) in matched.iter().enumerate() {
        let Some(value) = pod::labels(view.pod).get(key) else {
            continue;
        };
        let carrier = (pod::namespace(view.pod), pod::name(view.pod), index);
        first
            .entry(value.as_str())
            .and_modify(|known| *known = (*known).min(carrier))
            .or_insert(carrier);
    }
    let mut values: Vec<(&'p str, (&'p str, &'p str, usize))> = first.into_iter().collect();
    values.sort_unstable_by(|a, b| a.1.cmp(&b.1));
    values.into_iter().map(|(value, _)| value).collect()
}

/// The values of the scatter terms' label keys for every matched pod, read once: each term
/// re-reads them over the wait list and over all matched pods.
struct LabelColumns<'p> {
    columns: Vec<(&'p str, Vec<Option<&'p str>>)>,
}

impl<'p> LabelColumns<'p> {
    fn of(terms: &'p [ScatterTerm], matched: &[PodView<'p>]) -> Self {
        let mut columns: Vec<(&'p str, Vec<Option<&'p str>>)> = Vec::new();
        for term in terms {
            if columns.iter().any(|(key, _)| *key == term.key) {
                continue;
            }
            let values = matched
                .iter()
                .map(|view| pod::labels(view.pod).get(&term.key).map(String::as_str))
                .collect();
            columns.push((&term.key, values));
        }
        LabelColumns { columns }
    }

    /// The term's column: the value of its key for each matched pod.
    fn of_term(&self, term: &ScatterTerm) -> &[Option<&'p str>] {
        self.columns
            .iter()
            .find(|(key, _)| *key == term.key)
            .map_or(&[], |(_, values)| values.as_slice())
    }
}

/// Whether matched pod `index` carries `term` (an absent label reads as "").
fn carries(column: &[Option<&str>], index: usize, term: &ScatterTerm) -> bool {
    column.get(index).copied().flatten().unwrap_or("") == term.value
}

/// Step 3: the scatter sorter.
fn scatter(terms: &[ScatterTerm], matched: &[PodView], wait: &mut Vec<usize>) {
    if terms.is_empty() || wait.len() <= 1 {
        return;
    }
    let columns = LabelColumns::of(terms, matched);
    let ordered: Vec<&ScatterTerm> = if terms.len() == 1 {
        terms.iter().collect()
    } else {
        let mut counted: Vec<(&ScatterTerm, usize)> = terms
            .iter()
            .map(|term| {
                let column = columns.of_term(term);
                let count = wait
                    .iter()
                    .filter(|&&i| column[i] == Some(term.value.as_str()))
                    .count();
                (term, count)
            })
            .filter(|(_, count)| *count > 0)
            .collect();
        counted.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
        counted.into_iter().map(|(term, _)| term).collect()
    };
    for term in ordered {
        *wait = scatter_by_term(term, columns.of_term(term), wait);
    }
}

fn round_half_away(value: f64) -> usize {
    // The inputs are pod counts (≥ 0), so the rounded value fits a usize.
    value.round() as usize
}

/// newScatterGroup: (groups, matched per group, unmatched per group).
fn scatter_group(matched: usize, unmatched: usize) -> (usize, usize, usize) {
    let groups = matched.min(unmatched);
    if groups == 0 {
        return (0, 0, 0);
    }
    (
        groups,
        round_half_away(matched as f64 / groups as f64),
        round_half_away(unmatched as f64 / groups as f64),
    )
}

/// `column` holds the term key's value of every matched pod.
fn scatter_by_term(term: &ScatterTerm, column: &[Option<&str>], wait: &[usize]) -> Vec<usize> {
    let (mut wait_matched, wait_unmatched): (Vec<usize>, Vec<usize>) =
        wait.iter().partition(|&&i| carries(column, i, term));
    if wait_matched.len() <= 1 || wait_unmatched.len() <= 1 {
        return wait.to_vec();
    }
    let total_matched = (0..column.len())
        .filter(|&i| carries(column, i, term))
        .count();
    let total_unmatched = column.len() - total_matched;
    let Some(held_back) = wait_matched.pop() else {
        return wait.to_vec();
    };
    let total_matched = total_matched.saturating_sub(1);

    // float32 division as upstream; x/0 is +Inf and so always ≥.
    let total_ratio = total_unmatched as f32 / total_matched as f32;
    let wait_ratio = wait_unmatched.len() as f32 / wait_matched.len() as f32;
    let (groups, matched_size, unmatched_size, remainder) = if total_ratio >= wait_ratio {
        let (groups, m, u) = scatter_group(wait_matched.len(), wait_unmatched.len());
        (groups, m, u, 0)
    } else {
        let (_, m, u) = scatter_group(total_matched, total_unmatched);
        if m == 0 || u == 0 {
            return wait.to_vec();
        }
        let groups = (wait_matched.len() / m).min(wait_unmatched.len() / u);
        (groups, m, u, wait_unmatched.len() - groups * u)
    };

    let mut out = Vec::with_capacity(wait.len());
    let mut unmatched_rest = wait_unmatched.as_slice();
    let mut matched_rest = wait_matched.as_slice();
    let (head, tail) = unmatched_rest.split_at(remainder.min(unmatched_rest.len()));
    out.extend_from_slice(head);
    unmatched_rest = tail;
    let migrate = |rest: &mut &[usize], size: usize, out: &mut Vec<usize>| {
        let (head, tail) = rest.split_at(size.min(rest.len()));
        out.extend_from_slice(head);
        *rest = tail;
    };
    for _ in 0..groups {
        migrate(&mut matched_rest, matched_size, &mut out);
        migrate(&mut unmatched_rest, unmatched_size, &mut out);
    }
    out.extend_from_slice(matched_rest);
    out.extend_from_slice(unmatched_rest);
    out.push(held_back);
    out
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

    #[test]
    fn scatter_groups_round_half_away_from_zero() {
        assert_eq!(scatter_group(3, 2), (2, 2, 1));
        assert_eq!(scatter_group(5, 2), (2, 3, 1));
        assert_eq!(scatter_group(0, 2), (0, 0, 0));
    }
}
