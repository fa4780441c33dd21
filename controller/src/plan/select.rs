//! §5.8.1 filter and §5.8.2 sort of the wait list: default ActivePods order, priority, scatter.

use super::context::PodView;
use super::pod;
use super::predicates::Upgradability;
use crate::cached_pod::CachedPod;
use k8s_openapi::jiff::Timestamp;
use sidecarset_policy::api::{ScatterTerm, SidecarSetUpdateStrategy, UpdatePriorityStrategy};
use sidecarset_policy::selector;
use std::cmp::Reverse;
use std::collections::HashMap;

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

/// The ActivePods sort key of one pod, precomputed so sorting does not re-read the pod: its
/// fields packed into integers in sort order (namespace and name are read only on ties).
pub(crate) struct ActiveKey<'p> {
    rank: ActiveRank,
    namespace: &'p str,
    name: &'p str,
}

/// (assigned, phase rank, ready, Ready since, restarts) then (native sidecar restarts, created),
/// packed so two integer compares order two pods as the field-by-field compare would: restarts
/// reversed, times through [`newer_or_zero_first`] (see [`pack_rank`]).
type ActiveRank = (u128, u128);

/// Width of a packed time: [`newer_or_zero_first`] of any timestamp plus [`TIME_OFFSET`].
const TIME_BITS: u32 = 72;
/// Timestamps span ±10^4 years, under 2^69 nanoseconds either side, so this keeps them positive.
const TIME_OFFSET: i128 = 1 << 70;

/// afterOrZero as an ascending integer: a zero time first, then the later time first.
fn newer_or_zero_first(time: Option<Timestamp>) -> i128 {
    // Timestamps span ±10^4 years in nanoseconds, far inside i128, so negating cannot overflow.
    time.map_or(i128::MIN, |time| -time.as_nanosecond())
}

/// [`newer_or_zero_first`] as an unsigned [`TIME_BITS`]-bit integer in the same order.
fn packed_time(time: Option<Timestamp>) -> u128 {
    match time {
        None => 0,
        Some(_) => {
            let shifted = newer_or_zero_first(time).saturating_add(TIME_OFFSET + 1);
            u128::try_from(shifted.max(1)).map_or(1, |t| t.min((1 << TIME_BITS) - 1))
        }
    }
}

/// An i32 as a u32 in the opposite order (`Reverse`: more restarts first).
fn reversed(value: i32) -> u128 {
    u128::from(!(value.cast_unsigned() ^ 0x8000_0000))
}

/// The ActivePods fields of one pod in the order [`ActiveRank`] compares them.
#[derive(Debug)]
struct ActiveFields {
    assigned: bool,
    phase_rank: u8,
    ready: bool,
    ready_since: Option<Timestamp>,
    restarts: (i32, i32),
    created: Option<Timestamp>,
}

/// Bit layout, most significant first: assigned (1), phase rank (8), ready (1), Ready since
/// (72), restarts (32) | native sidecar restarts (32), created (72).
fn pack_rank(fields: &ActiveFields) -> ActiveRank {
    // Ready times order only two ready pods.
    let ready_since = if fields.ready {
        packed_time(fields.ready_since)
    } else {
        0
    };
    let high = (u128::from(fields.assigned) << 113)
        | (u128::from(fields.phase_rank) << 105)
        | (u128::from(fields.ready) << 104)
        | (ready_since << 32)
        | reversed(fields.restarts.0);
    let low = (reversed(fields.restarts.1) << TIME_BITS) | packed_time(fields.created);
    (high, low)
}

impl<'p> ActiveKey<'p> {
    fn names(&self) -> (&'p str, &'p str) {
        (self.namespace, self.name)
    }

    pub fn of(pod: &'p CachedPod) -> Self {
        let facts = &pod.facts;
        ActiveKey {
            rank: pack_rank(&ActiveFields {
                // Only "one unassigned, one assigned" orders; two different nodes tie.
                assigned: !facts.unassigned,
                phase_rank: facts.phase_rank,
                ready: facts.ready,
                ready_since: facts.ready_since,
                restarts: facts.restarts,
                created: pod.creation_timestamp,
            }),
            namespace: pod::namespace(pod),
            name: pod::name(pod),
        }
    }
}

/// Step 1, with the final namespace/name tie-break that makes the order total. Every pod of the
/// wait list is waiting, so has its key; the ranks are copied next to each other to sort, and
/// the position in the wait list breaks the remaining ties as a stable sort would.
fn sort_active_pods(matched: &[PodView], wait: &mut [usize]) {
    let key = |index: usize| matched[index].waiting.as_ref().map(|w| &w.active_key);
    let names = |position: usize| {
        wait.get(position)
            .and_then(|&index| key(index))
            .map(ActiveKey::names)
    };
    let mut ranked: Vec<(ActiveRank, usize)> = wait
        .iter()
        .enumerate()
        .map(|(position, &index)| (key(index).map_or((0, 0), |key| key.rank), position))
        .collect();
    ranked.sort_unstable_by(|(a_rank, a), (b_rank, b)| {
        a_rank
            .cmp(b_rank)
            .then_with(|| names(*a).cmp(&names(*b)))
            .then(a.cmp(b))
    });
    let order: Vec<usize> = ranked
        .iter()
        .filter_map(|&(_, position)| wait.get(position).copied())
        .collect();
    for (slot, index) in wait.iter_mut().zip(order) {
        *slot = index;
    }
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

/// `key=*` becomes one term per value of `key` among the matched pods, first seen first.
#[cfg(test)]
pub(crate) fn expand_scatter_terms(terms: &[ScatterTerm], matched: &[PodView]) -> Vec<ScatterTerm> {
    let mut columns = LabelColumns::new(terms);
    matched.iter().for_each(|view| columns.push(view));
    expand_terms(terms, &columns)
}

/// [`expand_scatter_terms`] from the label columns of `terms`' keys.
fn expand_terms(terms: &[ScatterTerm], columns: &LabelColumns) -> Vec<ScatterTerm> {
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
        let Some(column) = columns.of_key(&term.key) else {
            continue;
        };
        for value in column.values_in_name_order() {
            insert(ScatterTerm {
                key: term.key.clone(),
                value: value.to_string(),
            });
        }
    }
    expanded
}

/// No label of the column's key.
const ABSENT: u32 = u32::MAX;

/// Up to this many values a column finds a value's number by scanning rather than hashing.
const SCANNED_VALUES: usize = 8;

/// (namespace, name, index) of a matched pod: the order that picks a value's first carrier.
type Carrier<'p> = (&'p str, &'p str, usize);

/// The values of one label key for every matched pod, read once and numbered, so the scatter
/// passes compare small integers instead of label strings.
struct LabelColumn<'p> {
    key: &'p str,
    /// Value number → value, in first-seen order.
    values: Vec<&'p str>,
    /// Value number → its first carrier in namespace/name order.
    first_carriers: Vec<Carrier<'p>>,
    known: HashMap<&'p str, u32>,
    /// Per matched pod, the number of its value or [`ABSENT`].
    numbers: Vec<u32>,
}

impl<'p> LabelColumn<'p> {
    fn new(key: &'p str) -> Self {
        LabelColumn {
            key,
            values: Vec::new(),
            first_carriers: Vec::new(),
            known: HashMap::new(),
            numbers: Vec::new(),
        }
    }

    /// Reads the next matched pod's value.
    fn push(&mut self, view: &PodView<'p>) {
        let index = self.numbers.len();
        let Some(value) = pod::label(view.pod, self.key) else {
            self.numbers.push(ABSENT);
            return;
        };
        let carrier = (pod::namespace(view.pod), pod::name(view.pod), index);
        let number = match self.number_of(value) {
            Some(number) => {
                if let Some(first) = self.first_carriers.get_mut(number as usize) {
                    *first = (*first).min(carrier);
                }
                number
            }
            None => {
                let number = u32::try_from(self.values.len()).unwrap_or(ABSENT);
                self.known.insert(value, number);
                self.values.push(value);
                self.first_carriers.push(carrier);
                number
            }
        };
        self.numbers.push(number);
    }

    /// The number of `value` if seen: a scan while there are few values (scatter keys such as
    /// zones have a handful), which costs less than hashing the value for every pod.
    fn number_of(&self, value: &str) -> Option<u32> {
        if self.values.len() > SCANNED_VALUES {
            return self.known.get(value).copied();
        }
        // A value's number is its position in `values`.
        let position = self.values.iter().position(|known| *known == value)?;
        u32::try_from(position).ok()
    }

    /// The values in the order their first carriers have in namespace/name order, so the plan
    /// does not depend on the cache's list order; the index breaks ties as a stable sort would.
    fn values_in_name_order(&self) -> Vec<&'p str> {
        let mut values: Vec<(&'p str, Carrier<'p>)> = self
            .values
            .iter()
            .copied()
            .zip(self.first_carriers.iter().copied())
            .collect();
        values.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        values.into_iter().map(|(value, _)| value).collect()
    }

    /// Which pods carry `value`: its number, and whether pods without the label do (an absent
    /// label reads as "").
    fn matcher(&self, value: &str) -> ValueMatcher {
        ValueMatcher {
            number: self.known.get(value).copied(),
            absent_carries: value.is_empty(),
        }
    }
}

struct ValueMatcher {
    number: Option<u32>,
    absent_carries: bool,
}

impl ValueMatcher {
    /// Whether a pod with value `number` carries the term (an absent label reads as "").
    fn carries(&self, number: u32) -> bool {
        if number == ABSENT {
            self.absent_carries
        } else {
            Some(number) == self.number
        }
    }

    /// Whether a pod with value `number` has the label with exactly the term's value.
    fn labelled(&self, number: u32) -> bool {
        number != ABSENT && Some(number) == self.number
    }
}

/// The label columns of the scatter terms' keys, each read once: each term re-reads them over
/// the wait list and over all matched pods.
struct LabelColumns<'p> {
    columns: Vec<LabelColumn<'p>>,
}

impl<'p> LabelColumns<'p> {
    fn new(terms: &'p [ScatterTerm]) -> Self {
        let mut columns: Vec<LabelColumn<'p>> = Vec::new();
        for term in terms {
            if columns.iter().any(|column| column.key == term.key) {
                continue;
            }
            columns.push(LabelColumn::new(&term.key));
        }
        LabelColumns { columns }
    }

    fn push(&mut self, view: &PodView<'p>) {
        self.columns.iter_mut().for_each(|column| column.push(view));
    }

    fn of_key(&self, key: &str) -> Option<&LabelColumn<'p>> {
        self.columns.iter().find(|column| column.key == key)
    }

    /// The term's column numbers (empty when its key has no column) and its value matcher.
    fn of_term(&self, term: &ScatterTerm) -> (&[u32], ValueMatcher) {
        match self.of_key(&term.key) {
            Some(column) => (&column.numbers, column.matcher(&term.value)),
            None => (
                &[],
                ValueMatcher {
                    number: None,
                    absent_carries: false,
                },
            ),
        }
    }
}

/// Step 3: the scatter sorter.
fn scatter(terms: &[ScatterTerm], columns: &LabelColumns, wait: &mut Vec<usize>) {
    if terms.is_empty() || wait.len() <= 1 {
        return;
    }
    let ordered: Vec<&ScatterTerm> = if terms.len() == 1 {
        terms.iter().collect()
    } else {
        let mut counted: Vec<(&ScatterTerm, usize)> = terms
            .iter()
            .map(|term| {
                let (numbers, matcher) = columns.of_term(term);
                let count = wait
                    .iter()
                    .filter(|&&i| numbers.get(i).is_some_and(|&n| matcher.labelled(n)))
                    .count();
                (term, count)
            })
            .filter(|(_, count)| *count > 0)
            .collect();
        counted.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
        counted.into_iter().map(|(term, _)| term).collect()
    };
    for term in ordered {
        let (numbers, matcher) = columns.of_term(term);
        *wait = scatter_by_term(numbers, &matcher, wait);
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

/// `numbers` holds the term key's value number of every matched pod.
fn scatter_by_term(numbers: &[u32], matcher: &ValueMatcher, wait: &[usize]) -> Vec<usize> {
    // A pod outside the column reads as unlabelled.
    let carries = |i: usize| matcher.carries(numbers.get(i).copied().unwrap_or(ABSENT));
    let (mut wait_matched, wait_unmatched): (Vec<usize>, Vec<usize>) =
        wait.iter().partition(|&&i| carries(i));
    if wait_matched.len() <= 1 || wait_unmatched.len() <= 1 {
        return wait.to_vec();
    }
    let total_matched = numbers.iter().filter(|&&n| matcher.carries(n)).count();
    let total_unmatched = numbers.len() - total_matched;
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
    use proptest::prelude::*;

    #[test]
    fn trailing_integers() {
        assert_eq!(trailing_integer("sts-10"), 10);
        assert_eq!(trailing_integer("20"), 20);
        assert_eq!(trailing_integer("abc"), 0);
        assert_eq!(trailing_integer(""), 0);
        assert_eq!(trailing_integer("x99999999999999999999999"), 0);
    }

    /// The field-by-field ActivePods rank the packed one must order like.
    type TupleRank = (bool, u8, bool, i128, Reverse<i32>, Reverse<i32>, i128);

    fn tuple_rank(f: &ActiveFields) -> TupleRank {
        (
            f.assigned,
            f.phase_rank,
            f.ready,
            if f.ready {
                newer_or_zero_first(f.ready_since)
            } else {
                i128::MIN
            },
            Reverse(f.restarts.0),
            Reverse(f.restarts.1),
            newer_or_zero_first(f.created),
        )
    }

    fn timestamp() -> impl Strategy<Value = Option<Timestamp>> {
        let (min, max) = (
            Timestamp::MIN.as_nanosecond(),
            Timestamp::MAX.as_nanosecond(),
        );
        let nanos = prop_oneof![
            Just(min),
            Just(max),
            Just(0),
            min..=max,
            // Near each other, as real creation times are.
            1_700_000_000_000_000_000i128..1_700_000_000_000_010_000,
        ];
        proptest::option::of(nanos.prop_map(|n| Timestamp::from_nanosecond(n).unwrap_or_default()))
    }

    fn restarts() -> impl Strategy<Value = i32> {
        prop_oneof![
            Just(i32::MIN),
            Just(i32::MAX),
            Just(-1),
            Just(0),
            -3..5,
            any::<i32>()
        ]
    }

    prop_compose! {
        fn active_fields()(
            assigned in any::<bool>(),
            phase_rank in prop_oneof![0u8..=2, any::<u8>()],
            ready in any::<bool>(),
            ready_since in timestamp(),
            restarts in (restarts(), restarts()),
            created in timestamp(),
        ) -> ActiveFields {
            ActiveFields { assigned, phase_rank, ready, ready_since, restarts, created }
        }
    }

    proptest! {
        #[test]
        fn packed_rank_orders_as_the_fields(a in active_fields(), b in active_fields()) {
            prop_assert_eq!(pack_rank(&a).cmp(&pack_rank(&b)), tuple_rank(&a).cmp(&tuple_rank(&b)));
        }
    }

    #[test]
    fn packed_rank_orders_edge_values_as_the_fields() {
        let times = [
            None,
            Some(Timestamp::MIN),
            Some(Timestamp::MAX),
            Some(Timestamp::UNIX_EPOCH),
            Timestamp::from_nanosecond(-1).ok(),
            Timestamp::from_nanosecond(1).ok(),
        ];
        let mut all = Vec::new();
        for (assigned, ready) in [(false, false), (true, true), (true, false)] {
            for time in times {
                for restarts in [(i32::MIN, 0), (0, i32::MAX), (-1, -1), (3, 0)] {
                    all.push(ActiveFields {
                        assigned,
                        phase_rank: 2,
                        ready,
                        ready_since: time,
                        restarts,
                        created: times[all.len() % times.len()],
                    });
                }
            }
        }
        for a in &all {
            for b in &all {
                assert_eq!(
                    pack_rank(a).cmp(&pack_rank(b)),
                    tuple_rank(a).cmp(&tuple_rank(b))
                );
            }
        }
    }

    #[test]
    fn value_numbers_are_the_same_scanned_or_hashed() {
        // More values than are scanned, each seen twice, so both lookups run on known values.
        let values: Vec<String> = (0..SCANNED_VALUES * 2).map(|i| format!("v-{i}")).collect();
        let mut column = LabelColumn::new("zone");
        for (index, value) in values.iter().chain(&values).enumerate() {
            let number = column.number_of(value);
            let expected = (index >= values.len()).then(|| index % values.len());
            assert_eq!(number.map(|n| n as usize), expected, "{value}");
            if number.is_none() {
                column
                    .known
                    .insert(value, u32::try_from(column.values.len()).unwrap_or(ABSENT));
                column.values.push(value);
            }
        }
        assert_eq!(column.number_of("unseen"), None);
    }

    #[test]
    fn scatter_groups_round_half_away_from_zero() {
        assert_eq!(scatter_group(3, 2), (2, 2, 1));
        assert_eq!(scatter_group(5, 2), (2, 3, 1));
        assert_eq!(scatter_group(0, 2), (0, 0, 0));
    }
}
