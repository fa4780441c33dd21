//! Sorting and ordered collections with one copy of the sort code. Every `sort_by` on another
//! element type, and every `collect` into a `BTreeMap`/`BTreeSet` (which sorts first), links
//! about 5 KB of sort code into the module; these helpers sort `usize` indices only, or insert.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` stably by the text `key` gives.
pub fn sort_by_text<T>(items: &mut Vec<T>, key: impl Fn(&T) -> &str) {
    if items.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_indices(&mut order, &mut |a, b| key(&items[a]).cmp(key(&items[b])));
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.iter().filter_map(|&i| slots[i].take()));
}

#[inline(never)]
fn sort_indices(order: &mut [usize], compare: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| compare(a, b));
}

/// A `BTreeSet` of `items`, built by insertion.
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for item in items {
        set.insert(item);
    }
    set
}

/// A `BTreeMap` of `pairs` (the last value of a key wins, as with `collect`), built by insertion.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (key, value) in pairs {
        map.insert(key, value);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_as_a_stable_sort_does(items in proptest::collection::vec(("[a-c]{0,2}", 0u8..4), 0..40)) {
            let mut ours = items.clone();
            sort_by_text(&mut ours, |(text, _)| text.as_str());
            let mut std = items.clone();
            std.sort_by(|a, b| a.0.cmp(&b.0));
            prop_assert_eq!(ours, std);
        }

        #[test]
        fn builds_what_collect_builds(pairs in proptest::collection::vec(("[a-c]", 0u8..4), 0..20)) {
            let collected: BTreeMap<String, u8> = pairs.iter().cloned().collect();
            prop_assert_eq!(map_of(pairs.iter().cloned()), collected);
            let collected: BTreeSet<String> = pairs.iter().map(|p| p.0.clone()).collect();
            prop_assert_eq!(set_of(pairs.iter().map(|p| p.0.clone())), collected);
        }
    }
}
