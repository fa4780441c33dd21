//! JSON text to a `serde_json::Value` without serde's visitor layers: in the module, where
//! allocation is a bump, the `validate` call is ~7 % faster with it (BENCHMARKS.md).
//! Exact by construction: it takes only what it reads exactly as serde_json does (plain strings,
//! integers that fit, nesting well below serde's limit) and hands every other token to
//! serde_json itself; any malformed text is `None`, and the caller lets serde_json parse the
//! whole document, so errors are always serde_json's.

use super::Cursor;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;

/// Nesting deeper than this is left to serde_json (whose own limit is 128).
pub(super) const MAX_DEPTH: usize = 100;

/// The document `text` as serde_json would parse it, or `None` when serde_json must decide.
pub fn parse(text: &[u8]) -> Option<Value> {
    let mut parser = Parser(Cursor::new(text));
    let value = parser.value(0)?;
    parser.0.end().ok()?;
    Some(value)
}

/// A cursor that builds what it reads.
pub(super) struct Parser<'a>(pub(super) Cursor<'a>);

impl<'a> Parser<'a> {
    pub(super) fn peek(&mut self) -> Option<u8> {
        self.0.peek()
    }

    pub(super) fn literal(&mut self, word: &[u8], value: Value) -> Option<Value> {
        let end = self.0.at + word.len();
        (self.0.text.get(self.0.at..end)? == word).then(|| {
            self.0.at = end;
            value
        })
    }

    pub(super) fn value(&mut self, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'"' => self.string().map(Value::String),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.0.at += 1;
        let mut map = Map::new();
        if self.peek()? == b'}' {
            self.0.at += 1;
            return Some(Value::Object(map));
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            // The marker keys of `shaped` never come from a document read here.
            if super::shaped::is_marker(&key) || self.peek()? != b':' {
                return None;
            }
            self.0.at += 1;
            let value = self.value(depth)?;
            // serde_json keeps the last of duplicated keys, as `insert` does.
            map.insert(key, value);
            match self.peek()? {
                b',' => self.0.at += 1,
                b'}' => {
                    self.0.at += 1;
                    return Some(Value::Object(map));
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.0.at += 1;
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.0.at += 1;
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            match self.peek()? {
                b',' => self.0.at += 1,
                b']' => {
                    self.0.at += 1;
                    return Some(Value::Array(items));
                }
                _ => return None,
            }
        }
    }

    /// The string whose opening quote is at the cursor. Plain contents are copied as they are;
    /// a string with escapes is decoded by serde_json (rare in Kubernetes objects).
    pub(super) fn string(&mut self) -> Option<String> {
        self.string_text().map(Cow::into_owned)
    }

    /// The string at the cursor, decoded: borrowed from the text when it reads as itself.
    pub(super) fn string_text(&mut self) -> Option<Cow<'a, str>> {
        let start = self.0.at;
        if let Some((plain, end)) = super::plain_ascii_string(self.0.text, start) {
            self.0.at = end;
            return Some(Cow::Borrowed(plain));
        }
        let (end, escaped) = super::skip_string_escaped(self.0.text, start).ok()?;
        self.0.at = end;
        let quoted = self.0.text.get(start..end)?;
        if escaped {
            return serde_json::from_slice(quoted).ok().map(Cow::Owned);
        }
        super::plain_str(quoted).map(Cow::Borrowed)
    }

    /// A number: integers that fit are read here, exactly as serde_json does; any other token
    /// (fractions, exponents, `-0`, overflow, leading zeros) is read by serde_json alone.
    pub(super) fn number(&mut self) -> Option<Number> {
        let start = self.0.at;
        let rest = self.0.text.get(start..)?;
        let len = rest
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        let token = rest.get(..len)?;
        self.0.at = start + len;
        let Some((negative, digits)) = plain_integer(token) else {
            return match serde_json::from_slice(token).ok()? {
                Value::Number(number) => Some(number),
                _ => None,
            };
        };
        let magnitude = digits
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        if negative {
            Some(Number::from(-i64::try_from(magnitude).ok()?))
        } else {
            Some(Number::from(magnitude))
        }
    }
}

/// A number token that `number` reads without serde_json: its sign and digits when it is an
/// integer of at most 18 digits (it fits) without a leading zero (and not `-0`, a float in
/// serde_json).
pub(super) fn plain_integer(token: &[u8]) -> Option<(bool, &[u8])> {
    let (negative, digits) = match token.split_first()? {
        (b'-', digits) => (true, digits),
        _ => (false, token),
    };
    let plain = !digits.is_empty()
        && digits.len() <= 18
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.first() != Some(&b'0') || (digits.len() == 1 && !negative));
    plain.then_some((negative, digits))
}

#[cfg(test)]
mod tests;
