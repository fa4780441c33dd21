//! Kubernetes `resource.Quantity` as apimachinery parses and prints it.
//!
//! The value is kept exactly, in units of 10⁻⁹ (apimachinery rounds every parsed value away from
//! zero to nano precision), together with the format (suffix family) it was written in. Printing
//! follows `Quantity.String()`: the canonical form (largest exponent without losing precision,
//! no fraction digits), except that apimachinery's parse fast path remembers the input string
//! when it already looks canonical (`"100M"`, `"1Gi"`, `"1e3"`, but also `"+1k"` and `"1.500"`), and
//! that remembered string is what gets printed and marshalled.
//!
//! Limitation: values whose magnitude needs more than 128 bits in nano units (beyond about 10²⁹)
//! are rejected here, whereas apimachinery accepts arbitrarily large decimal quantities.

use serde_json::Value;
use std::fmt;

/// Units of the stored value per 1.
const NANO: i128 = 1_000_000_000;
/// Units per milli.
const MILLI_UNITS: i128 = 1_000_000;
/// Largest magnitude accepted, in nano units (keeps every later ×100 far from overflow).
const MAX_NANOS: i128 = 1_000_000_000_000_000_000_000_000_000_000_000_000;
/// apimachinery caps BinarySI quantities at 2^63-1.
const MAX_BINARY_NANOS: i128 = (i64::MAX as i128) * NANO;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    #[error("unable to parse quantity's suffix")]
    Suffix,
    #[error("quantity is too large")]
    TooLarge,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantity {
    nanos: i128,
    format: Format,
    /// The input string apimachinery keeps and prints instead of the canonical form.
    cached: Option<String>,
}

struct Scanned<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// apimachinery's `parseQuantityString` scanner.
fn scan(s: &str) -> Result<Scanned<'_>, QuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned {
            positive,
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == num_start {
        "0"
    } else {
        &s[num_start..pos]
    };
    let mut denom = "";
    if pos < end && b[pos] == b'.' {
        pos += 1;
        let d_start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[d_start..pos];
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Scanned {
        positive,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret(suffix: &str) -> Result<(u32, i32, Format), QuantityError> {
    let dec = match suffix {
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "" => Some(0),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(e) = dec {
        return Ok((10, e, Format::DecimalSI));
    }
    let bin = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        "Pi" => Some(50),
        "Ei" => Some(60),
        _ => None,
    };
    if let Some(e) = bin {
        return Ok((2, e, Format::BinarySI));
    }
    if suffix.len() > 1 && (suffix.starts_with('e') || suffix.starts_with('E')) {
        let exp: i64 = suffix[1..].parse().map_err(|_| QuantityError::Suffix)?;
        let exp = i32::try_from(exp).map_err(|_| QuantityError::TooLarge)?;
        return Ok((10, exp, Format::DecimalExponent));
    }
    Err(QuantityError::Suffix)
}

fn pow10(exp: u32) -> Result<i128, QuantityError> {
    10i128.checked_pow(exp).ok_or(QuantityError::TooLarge)
}

/// `value / divisor`, rounded away from zero (`value` is non-negative here).
fn div_round_up(value: i128, divisor: i128) -> i128 {
    let q = value / divisor;
    if value % divisor != 0 { q + 1 } else { q }
}

/// Exact magnitude in nano units of `digits × 10^exp10 × 2^exp2`, rounded up to nano.
fn magnitude_nanos(digits: &str, exp10: i32, exp2: u32) -> Result<i128, QuantityError> {
    let trimmed = digits.trim_start_matches('0');
    let mut significant = trimmed.trim_end_matches('0');
    if significant.is_empty() {
        return Ok(0);
    }
    let zeros =
        i32::try_from(trimmed.len() - significant.len()).map_err(|_| QuantityError::TooLarge)?;
    let mut shift = exp10
        .checked_add(zeros)
        .and_then(|e| e.checked_add(9))
        .ok_or(QuantityError::TooLarge)?;
    // Decimal digits below nano precision only decide the rounding: drop them and round up.
    let mut round_up = false;
    if exp2 == 0 && shift < 0 {
        let drop = shift.unsigned_abs() as usize;
        round_up = true;
        significant = &significant[..significant.len().saturating_sub(drop)];
        shift = 0;
    }
    if significant.len() > 36 {
        return Err(QuantityError::TooLarge);
    }
    let mantissa: i128 = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| QuantityError::Format)?
    };
    let two = 1i128
        .checked_shl(exp2)
        .filter(|t| *t > 0)
        .ok_or(QuantityError::TooLarge)?;
    let value = mantissa.checked_mul(two).ok_or(QuantityError::TooLarge)?;
    let mut nanos = if shift >= 0 {
        value
            .checked_mul(pow10(shift.unsigned_abs())?)
            .ok_or(QuantityError::TooLarge)?
    } else {
        match pow10(shift.unsigned_abs()) {
            Ok(div) => div_round_up(value, div),
            // Smaller than one nano: rounds up to one nano.
            Err(_) => 1,
        }
    };
    if round_up {
        nanos += 1;
    }
    if nanos > MAX_NANOS {
        return Err(QuantityError::TooLarge);
    }
    Ok(nanos)
}

impl Quantity {
    /// `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Result<Self, QuantityError> {
        if s.is_empty() {
            return Err(QuantityError::Format);
        }
        if s == "0" {
            return Ok(Quantity {
                nanos: 0,
                format: Format::DecimalSI,
                cached: Some("0".into()),
            });
        }
        let sc = scan(s)?;
        let (base, exponent, mut format) = interpret(sc.suffix)?;
        let denom_len = i32::try_from(sc.denom.len()).map_err(|_| QuantityError::TooLarge)?;
        let digits = format!("{}{}", sc.num, sc.denom);
        let mut nanos = if base == 10 {
            magnitude_nanos(&digits, exponent.saturating_sub(denom_len), 0)?
        } else {
            magnitude_nanos(&digits, -denom_len, exponent.unsigned_abs())?
        };
        if format == Format::BinarySI && nanos > MAX_BINARY_NANOS {
            nanos = MAX_BINARY_NANOS;
        }
        if format == Format::BinarySI && nanos > 0 && nanos < NANO {
            format = Format::DecimalSI;
        }
        let cached = fast_path_keeps_string(&sc, base, exponent).then(|| s.to_string());
        let nanos = if sc.positive { nanos } else { -nanos };
        Ok(Quantity {
            nanos,
            format,
            cached,
        })
    }

    /// What `Quantity.UnmarshalJSON` accepts: a string (trimmed) or a bare JSON number.
    /// `None` for any other JSON type; `null` is the caller's business (Go: zero quantity).
    pub fn from_json(v: &Value) -> Option<Result<Self, QuantityError>> {
        match v {
            Value::String(s) => Some(Self::parse(s.trim())),
            Value::Number(n) => Some(Self::parse(&n.to_string())),
            _ => None,
        }
    }

    /// The zero quantity (`resource.Quantity{}`), printed as `"0"`.
    pub fn zero() -> Self {
        Quantity {
            nanos: 0,
            format: Format::DecimalSI,
            cached: None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The value in milli units, rounded away from zero.
    pub fn milli_value(&self) -> i128 {
        let q = self.nanos / MILLI_UNITS;
        if self.nanos % MILLI_UNITS == 0 {
            q
        } else {
            q + self.nanos.signum()
        }
    }

    /// `Quantity.RoundUp(-3)`: round away from zero to milli precision. A quantity that is
    /// already exact at milli precision keeps its remembered string, as in apimachinery.
    pub fn round_up_milli(&mut self) {
        if self.nanos % MILLI_UNITS != 0 {
            self.nanos = self.milli_value() * MILLI_UNITS;
            self.cached = None;
        }
    }

    /// `resource.NewMilliQuantity(milli, DecimalSI)`.
    pub fn from_milli(milli: i64) -> Self {
        Quantity {
            nanos: i128::from(milli) * MILLI_UNITS,
            format: Format::DecimalSI,
            cached: None,
        }
    }

    /// `resource.NewQuantity(value, DecimalSI)`.
    pub fn from_units(value: i64) -> Self {
        Quantity {
            nanos: i128::from(value) * NANO,
            format: Format::DecimalSI,
            cached: None,
        }
    }

    /// `Quantity.Add`: exact; a zero receiver takes the addend's format.
    pub fn add(&mut self, other: &Quantity) {
        if self.nanos == 0 {
            self.format = other.format;
        }
        self.nanos = self.nanos.saturating_add(other.nanos);
        self.cached = None;
    }

    /// `Quantity.Neg`.
    pub fn neg(&mut self) {
        self.nanos = -self.nanos;
        self.cached = None;
    }

    /// `Quantity.SetMilli`: the value replaced, the format kept.
    pub fn set_milli(&mut self, milli: i64) {
        self.nanos = i128::from(milli) * MILLI_UNITS;
        self.cached = None;
    }

    /// `Quantity.MilliValue` as an int64 (saturating where Go would wrap).
    pub fn milli_value_i64(&self) -> i64 {
        i64::try_from(self.milli_value()).unwrap_or(if self.nanos < 0 {
            i64::MIN
        } else {
            i64::MAX
        })
    }

    /// `Quantity.Cmp`.
    pub fn cmp_value(&self, other: &Quantity) -> std::cmp::Ordering {
        self.nanos.cmp(&other.nanos)
    }

    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// The canonical form, ignoring any remembered input string.
    pub fn canonical(&self) -> String {
        if self.nanos == 0 {
            return "0".into();
        }
        if self.format == Format::BinarySI
            && self.nanos.abs() >= 1024 * NANO
            && self.nanos % NANO == 0
        {
            return binary_canonical(self.nanos / NANO);
        }
        let format = if self.format == Format::BinarySI {
            Format::DecimalSI
        } else {
            self.format
        };
        decimal_canonical(self.nanos, format)
    }
}

/// Whether apimachinery's parse fast path stores the input string (see module docs).
fn fast_path_keeps_string(sc: &Scanned<'_>, base: u32, exponent: i32) -> bool {
    let digits = sc.num.len() + sc.denom.len();
    if base == 2 {
        if exponent < 0 || !sc.denom.is_empty() {
            return false;
        }
        let precision = 15 - sc.num.len() as i64 - (exponent as i64 * 3 / 10) - 1;
        if precision < 0 {
            return false;
        }
        let Ok(value) = sc.num.parse::<i64>() else {
            return false;
        };
        if value.checked_mul(1i64 << exponent.min(62)).is_none() || exponent > 62 {
            return false;
        }
        return exponent % 10 == 0 && value & 0x07 != 0;
    }
    if digits > 18 {
        return false;
    }
    let scale = i64::from(exponent) - sc.denom.len() as i64;
    if scale < -9 {
        return false;
    }
    let shifted = format!("{}{}", sc.num, sc.denom);
    scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
}

/// DecimalSI / DecimalExponent: mantissa without trailing zeros, exponent lowered to a multiple of 3.
fn decimal_canonical(nanos: i128, format: Format) -> String {
    let mut m = nanos;
    let mut e: i32 = -9;
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    while e.rem_euclid(3) != 0 {
        m *= 10;
        e -= 1;
    }
    let suffix = match (format, e) {
        (Format::DecimalExponent, 0) => String::new(),
        (Format::DecimalExponent, _) => format!("e{e}"),
        (_, -9) => "n".into(),
        (_, -6) => "u".into(),
        (_, -3) => "m".into(),
        (_, 0) => String::new(),
        (_, 3) => "k".into(),
        (_, 6) => "M".into(),
        (_, 9) => "G".into(),
        (_, 12) => "T".into(),
        (_, 15) => "P".into(),
        (_, 18) => "E".into(),
        (_, _) => format!("e{e}"),
    };
    format!("{m}{suffix}")
}

/// BinarySI for an integral value of magnitude ≥ 1024.
fn binary_canonical(value: i128) -> String {
    let mut m = value;
    let mut k = 0usize;
    while m.abs() >= 1024 && m % 1024 == 0 {
        m /= 1024;
        k += 1;
    }
    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .get(k)
        .copied()
        .unwrap_or("");
    format!("{m}{suffix}")
}

impl fmt::Display for Quantity {
    /// `Quantity.String()` (and the content of its JSON string).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cached {
            Some(s) => f.write_str(s),
            None => f.write_str(&self.canonical()),
        }
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests;
