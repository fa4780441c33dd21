//! §5.8.2 step 1, upstream's ActivePods order: every pod's sort fields packed into two
//! integers once, so sorting 10,000 pods compares integers.

use crate::cached_pod::CachedPod;
use crate::plan::context::PodView;
use crate::plan::pod;
use k8s_openapi::jiff::Timestamp;

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
pub(super) fn sort_active_pods(matched: &[PodView], wait: &mut [usize]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
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
}
