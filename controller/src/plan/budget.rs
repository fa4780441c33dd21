//! §5.8.3 partition and §5.8.4 maxUnavailable: how many of the sorted wait list go this round.

use sidecarset_policy::api::IntOrString;

/// `intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`; `None` when invalid.
fn scaled_value(value: &IntOrString, total: usize) -> Option<i64> {
    match value {
        IntOrString::Int(int) => Some(i64::from(*int)),
        IntOrString::String(text) => {
            let percent: i64 = text.strip_suffix('%')?.parse().ok()?;
            let product = i128::from(percent) * total as i128;
            // Ceiling division; Rust's `/` truncates towards zero, which is the ceiling below zero.
            let ceiling = if product > 0 {
                (product + 99) / 100
            } else {
                product / 100
            };
            Some(i64::try_from(ceiling).unwrap_or(if ceiling > 0 { i64::MAX } else { i64::MIN }))
        }
    }
}

/// §5.8.3: how many upgradable pods stay behind, in `[0, total]`.
///
/// Deliberate difference: an invalid percent (which SidecarSet validation rejects) keeps every
/// pod behind instead of upstream's "0 = upgrade everything".
pub fn partition(value: Option<&IntOrString>, total: usize) -> usize {
    let Some(value) = value else {
        return 0;
    };
    let Some(mut scaled) = scaled_value(value, total) else {
        return total;
    };
    let total_i64 = i64::try_from(total).unwrap_or(i64::MAX);
    let is_exact_hundred = matches!(value, IntOrString::String(s) if s == "100%");
    if total > 1
        && scaled == total_i64
        && matches!(value, IntOrString::String(_))
        && !is_exact_hundred
    {
        scaled = total_i64 - 1;
    }
    usize::try_from(scaled.clamp(0, total_i64)).unwrap_or(0)
}

/// §5.8.4: nil → 1; int; percent rounds up; an invalid value yields 0.
pub fn max_unavailable(value: Option<&IntOrString>, total: usize) -> i64 {
    value.map_or(1, |v| scaled_value(v, total).unwrap_or(0))
}

/// The pods (indices into the sorted wait list) to upgrade this round: drop the `partition` tail,
/// then walk in order — not-ready pods are free, ready ones each take one unit of budget.
pub(crate) fn take(
    wait_len: usize,
    partition: usize,
    max_unavailable: i64,
    mut unavailable: i64,
    is_ready: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let eligible = wait_len.saturating_sub(partition);
    let mut taken = Vec::new();
    for position in 0..eligible {
        if !is_ready(position) {
            taken.push(position);
            continue;
        }
        if unavailable >= max_unavailable {
            break;
        }
        unavailable += 1;
        taken.push(position);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percent(s: &str) -> IntOrString {
        IntOrString::String(s.to_string())
    }

    #[test]
    fn partition_arithmetic() {
        assert_eq!(partition(None, 10), 0);
        assert_eq!(partition(Some(&IntOrString::Int(3)), 10), 3);
        assert_eq!(partition(Some(&IntOrString::Int(30)), 10), 10);
        assert_eq!(partition(Some(&IntOrString::Int(-3)), 10), 0);
        assert_eq!(partition(Some(&percent("18%")), 1000), 180);
        assert_eq!(partition(Some(&percent("1%")), 5), 1);
        // 99% of 5 rounds up to 5 = total, so one pod still moves.
        assert_eq!(partition(Some(&percent("99%")), 5), 4);
        assert_eq!(partition(Some(&percent("100%")), 5), 5);
        assert_eq!(partition(Some(&percent("100%")), 1), 1);
        assert_eq!(partition(Some(&percent("0%")), 5), 0);
        assert_eq!(partition(Some(&percent("abc%")), 5), 5);
        assert_eq!(partition(Some(&percent("10")), 5), 5);
    }

    #[test]
    fn max_unavailable_arithmetic() {
        assert_eq!(max_unavailable(None, 100), 1);
        assert_eq!(max_unavailable(Some(&IntOrString::Int(10)), 100), 10);
        assert_eq!(max_unavailable(Some(&percent("10%")), 1000), 100);
        assert_eq!(max_unavailable(Some(&percent("5%")), 5), 1);
        assert_eq!(max_unavailable(Some(&percent("50%")), 3), 2);
        assert_eq!(max_unavailable(Some(&percent("-10%")), 15), -1);
        assert_eq!(max_unavailable(Some(&percent("x%")), 5), 0);
        assert_eq!(max_unavailable(Some(&percent("5")), 5), 0);
    }

    #[test]
    fn take_walks_the_budget() {
        let ready = |_: usize| true;
        assert_eq!(take(10, 0, 3, 1, ready), vec![0, 1]);
        assert_eq!(take(10, 8, 5, 0, ready), vec![0, 1]);
        assert_eq!(take(3, 3, 5, 0, ready), Vec::<usize>::new());
        // Not-ready pods are taken without budget, even after the budget ran out.
        let not_ready_odd = |p: usize| p.is_multiple_of(2);
        assert_eq!(take(5, 0, 1, 0, not_ready_odd), vec![0, 1]);
        assert_eq!(take(5, 0, 0, 0, |_| false), vec![0, 1, 2, 3, 4]);
    }
}
