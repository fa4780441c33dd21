//! §5.8.2 step 3, the scatter sorter: `key=*` expansion, then each term spreads its pods evenly
//! through the wait list, over label values read once per pod and numbered.

use crate::plan::context::PodView;
use crate::plan::pod;
use sidecarset_policy::api::ScatterTerm;
use std::collections::HashMap;

/// `key=*` becomes one term per value of `key` among the matched pods, first seen first.
#[cfg(test)]
pub(crate) fn expand_scatter_terms(terms: &[ScatterTerm], matched: &[PodView]) -> Vec<ScatterTerm> {
    let mut columns = LabelColumns::new(terms);
    matched.iter().for_each(|view| columns.push(view));
    expand_terms(terms, &columns)
}

/// [`expand_scatter_terms`] from the label columns of `terms`' keys.
pub(super) fn expand_terms(terms: &[ScatterTerm], columns: &LabelColumns) -> Vec<ScatterTerm> {
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
pub(super) struct LabelColumns<'p> {
    columns: Vec<LabelColumn<'p>>,
}

impl<'p> LabelColumns<'p> {
    pub(super) fn new(terms: &'p [ScatterTerm]) -> Self {
        let mut columns: Vec<LabelColumn<'p>> = Vec::new();
        for term in terms {
            if columns.iter().any(|column| column.key == term.key) {
                continue;
            }
            columns.push(LabelColumn::new(&term.key));
        }
        LabelColumns { columns }
    }

    pub(super) fn push(&mut self, view: &PodView<'p>) {
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
pub(super) fn scatter(terms: &[ScatterTerm], columns: &LabelColumns, wait: &mut Vec<usize>) {
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
