//! The working/idle twins of one pod's hot sidecars, inline for up to two: the first pass builds
//! one list per matched pod, and a heap list each was 10,000 allocations a plan.

use super::context::TwinState;
use std::ops::Deref;

/// Hot sidecars per SidecarSet kept without allocating (one or two in practice).
const INLINE: usize = 2;

/// A slice of [`TwinState`]s in `SidecarSetContext::hot` order.
#[derive(Debug, Clone)]
pub(crate) enum TwinStates<'a> {
    Inline {
        states: [TwinState<'a>; INLINE],
        len: usize,
    },
    Heap(Vec<TwinState<'a>>),
}

impl<'a> FromIterator<TwinState<'a>> for TwinStates<'a> {
    fn from_iter<I: IntoIterator<Item = TwinState<'a>>>(iter: I) -> Self {
        let mut states = [TwinState::NONE; INLINE];
        let mut len = 0;
        let mut iter = iter.into_iter();
        while let Some(state) = iter.next() {
            let Some(slot) = states.get_mut(len) else {
                let mut heap = states.to_vec();
                heap.push(state);
                heap.extend(iter);
                return TwinStates::Heap(heap);
            };
            *slot = state;
            len += 1;
        }
        TwinStates::Inline { states, len }
    }
}

impl<'a> Deref for TwinStates<'a> {
    type Target = [TwinState<'a>];

    fn deref(&self) -> &[TwinState<'a>] {
        match self {
            TwinStates::Inline { states, len } => states.get(..*len).unwrap_or(&[]),
            TwinStates::Heap(states) => states,
        }
    }
}

impl<'s, 'a> IntoIterator for &'s TwinStates<'a> {
    type Item = &'s TwinState<'a>;
    type IntoIter = std::slice::Iter<'s, TwinState<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(index: usize) -> TwinState<'static> {
        const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
        TwinState {
            working: NAMES[index],
            idle: NAMES[5 - index],
            idle_image: Some(NAMES[index]),
        }
    }

    #[test]
    fn keeps_every_state_in_order_inline_or_not() {
        for count in 0..=5 {
            let expected: Vec<TwinState> = (0..count).map(state).collect();
            let states: TwinStates = (0..count).map(state).collect();
            assert_eq!(&*states, expected.as_slice(), "{count} states");
            assert_eq!(matches!(states, TwinStates::Inline { .. }), count <= INLINE);
            assert_eq!((&states).into_iter().count(), count);
        }
    }
}
