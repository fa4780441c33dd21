//! `metav1.Time` in annotations: written as RFC 3339 UTC seconds, read as Go's
//! `time.Parse(time.RFC3339, …)` reads it (any offset, an optional fraction) and normalised
//! the way Go writes it back.

/// Unix seconds of 0001-01-01T00:00:00Z, Go's zero `time.Time` (written as `null`).
const GO_ZERO_TIME: i64 = -62_135_596_800;

/// RFC 3339 UTC with second precision (`2025-01-02T03:04:05Z`) from Unix seconds.
pub fn rfc3339(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// A `metav1.Time` read and written back: `Ok(None)` is the zero time (Go writes `null`),
/// `Ok(Some(_))` the instant in RFC 3339 UTC seconds. The error is Go's, in short.
pub fn normalise(text: &str) -> Result<Option<String>, String> {
    let (unix_seconds, nanos) = parse_rfc3339(text.as_bytes())
        .ok_or_else(|| format!("parsing time {text:?} as RFC 3339"))?;
    Ok((unix_seconds != GO_ZERO_TIME || nanos).then(|| rfc3339(unix_seconds)))
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with Go's ranges (days checked against the month;
/// Go's fallback parser also takes a one-digit hour and a comma before the fraction). Returns
/// the Unix seconds and whether the fraction was non-zero.
fn parse_rfc3339(text: &[u8]) -> Option<(i64, bool)> {
    let (year, rest) = digits(text, 4)?;
    let rest = rest.strip_prefix(b"-")?;
    let (month, rest) = digits(rest, 2)?;
    let rest = rest.strip_prefix(b"-")?;
    let (day, rest) = digits(rest, 2)?;
    let rest = rest.strip_prefix(b"T")?;
    let hour_width = if rest.get(1) == Some(&b':') { 1 } else { 2 };
    let (hour, rest) = digits(rest, hour_width)?;
    let rest = rest.strip_prefix(b":")?;
    let (minute, rest) = digits(rest, 2)?;
    let rest = rest.strip_prefix(b":")?;
    let (second, mut rest) = digits(rest, 2)?;
    let valid = (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && hour <= 23
        && minute <= 59
        && second <= 59;
    if !valid {
        return None;
    }
    let mut fraction = false;
    if let [b'.' | b',', first, ..] = rest
        && first.is_ascii_digit()
    {
        let width = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        fraction = rest[1..=width].iter().any(|b| *b != b'0');
        rest = &rest[1 + width..];
    }
    let offset = match rest {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), zone @ ..] => {
            let (zone_hour, zone) = digits(zone, 2)?;
            let zone = zone.strip_prefix(b":")?;
            let (zone_minute, zone) = digits(zone, 2)?;
            if !zone.is_empty() || zone_hour > 23 || zone_minute > 59 {
                return None;
            }
            let offset = (zone_hour * 60 + zone_minute) * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some((
        days * 86_400 + hour * 3600 + minute * 60 + second - offset,
        fraction,
    ))
}

/// `width` ASCII digits at the start of `text`, as a number, and the rest.
fn digits(text: &[u8], width: usize) -> Option<(i64, &[u8])> {
    let (number, rest) = text.split_at_checked(width)?;
    let value = number.iter().try_fold(0i64, |value, b| {
        b.is_ascii_digit().then(|| value * 10 + i64::from(b - b'0'))
    })?;
    Some((value, rest))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's civil-to-days conversion (days since 1970-01-01).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's days-to-civil conversion.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_utc_seconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_735_787_045), "2025-01-02T03:04:05Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(GO_ZERO_TIME), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn reads_as_go_and_writes_back_utc_seconds() {
        let ok = |text: &str| normalise(text).unwrap();
        assert_eq!(
            ok("2025-01-02T03:04:05Z").as_deref(),
            Some("2025-01-02T03:04:05Z")
        );
        assert_eq!(
            ok("2025-01-02T05:04:05.678+02:00").as_deref(),
            Some("2025-01-02T03:04:05Z")
        );
        assert_eq!(
            ok("2024-12-31T23:30:00-01:00").as_deref(),
            Some("2025-01-01T00:30:00Z")
        );
        assert_eq!(
            ok("2024-02-29T3:04:05,5Z").as_deref(),
            Some("2024-02-29T03:04:05Z")
        );
        // Go's zero instant, in any zone, is written as null; a fraction makes it non-zero.
        assert_eq!(ok("0001-01-01T00:00:00Z"), None);
        assert_eq!(ok("0001-01-01T01:00:00+01:00"), None);
        assert!(ok("0001-01-01T00:00:00.5Z").is_some());
    }

    #[test]
    fn refuses_what_go_refuses() {
        for text in [
            "yesterday",
            "",
            "2025-01-02",
            "2025-01-02 03:04:05Z",
            "2025-01-02t03:04:05Z",
            "2025-13-02T03:04:05Z",
            "2023-02-29T03:04:05Z",
            "2025-01-02T24:00:00Z",
            "2025-01-02T03:60:05Z",
            "2025-01-02T03:04:60Z",
            "2025-01-02T03:04:05",
            "2025-01-02T03:04:05+0200",
            "2025-01-02T03:04:05+24:00",
            "2025-01-02T03:04:05Zjunk",
            "2025-01-02T03:04:05.Z",
            "２025-01-02T03:04:05Z",
        ] {
            assert!(normalise(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn days_round_trip() {
        for days in [-800_000, -719_468, -1, 0, 1, 10_957, 20_000, 2_932_896] {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(
                days_from_civil(year, i64::from(month), i64::from(day)),
                days
            );
        }
    }
}
