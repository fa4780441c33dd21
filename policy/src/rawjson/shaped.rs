//! Reading a document only as deep as its reader needs. A [`Shape`] lists the members that are
//! built as JSON values; the others are validated and stay text inside the `Value` (under a
//! marker key), and [`write`] puts that text back unchanged. The pod of an admission request is
//! read this way: injection reads a few of its fields and copies the rest, which then costs
//! neither building nor re-serialising.
//! Exact: a document is read only when serde_json would read it identically (as `value::parse`),
//! and marker keys never come from the text itself.

use super::Cursor;
use super::value::{MAX_DEPTH, Parser};
use serde_json::{Map, Value};

/// The members of an object that were not built, as their JSON text (`"key":value,...`).
pub const RAW_MEMBERS: &str = "\u{0}";
/// The whole text of an object whose unbuilt members were dropped.
pub const VERBATIM: &str = "\u{1}";

/// Prefixes the name of a member kept as its text ([`Shape::Text`]).
pub const TEXT_OF: char = '\u{2}';

/// Whether `key` is one of the markers (a document never has one when read here).
pub fn is_marker(key: &str) -> bool {
    key == RAW_MEMBERS || key == VERBATIM || key.starts_with(TEXT_OF)
}

/// How much of a value to build.
#[derive(Debug)]
pub enum Shape {
    /// All of it.
    Full,
    /// An object: the `keep` members by their shapes, the others as `rest` says. Any other JSON
    /// value there is built in full.
    Object {
        keep: &'static [(&'static str, &'static Shape)],
        rest: Rest,
    },
    /// An array whose items have this shape (any other JSON value is built in full).
    Items(&'static Shape),
    /// A list of objects (or null) kept as its checked text, a string under its name prefixed
    /// with [`TEXT_OF`], for a reader that scans it; any other value there is built in full.
    /// Only in an object whose rest is `Verbatim`, which is written whole: elsewhere the member
    /// would come out first.
    Text,
}

/// What becomes of the members an object [`Shape`] does not list.
#[derive(Debug)]
pub enum Rest {
    /// Built in full.
    Full,
    /// Kept as text under [`RAW_MEMBERS`]: the object may be edited, they come out unchanged.
    Text,
    /// Dropped, the object's whole text kept under [`VERBATIM`]: for objects that are only ever
    /// moved or replaced whole, never edited (they come out as they came in).
    Verbatim,
}

/// The document `text` built as deep as `shape` says, or `None` when serde_json must decide
/// (malformed text included).
pub fn parse(text: &[u8], shape: &Shape) -> Option<Value> {
    let mut parser = Parser(Cursor::new(text));
    let value = parser.shaped(shape, 0)?;
    parser.0.end().ok()?;
    Some(value)
}

/// Serialises `value` as serde_json does, with the text of unbuilt members put back.
pub fn write(out: &mut Vec<u8>, value: &Value) -> Result<(), serde_json::Error> {
    match value {
        Value::Object(map) => {
            if let Some((key, Value::String(text))) = map.iter().next()
                && key == VERBATIM
            {
                out.extend_from_slice(text.as_bytes());
                return Ok(());
            }
            out.push(b'{');
            for (index, (key, member)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                match member {
                    Value::String(text) if key == RAW_MEMBERS => {
                        out.extend_from_slice(text.as_bytes())
                    }
                    Value::String(text) if key.starts_with(TEXT_OF) => {
                        write_str(out, key.get(TEXT_OF.len_utf8()..).unwrap_or_default());
                        out.push(b':');
                        out.extend_from_slice(text.as_bytes());
                    }
                    _ => {
                        write_str(out, key);
                        out.push(b':');
                        write(out, member)?;
                    }
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write(out, item)?;
            }
            out.push(b']');
        }
        Value::String(text) => write_str(out, text),
        scalar => serde_json::to_writer(&mut *out, scalar)?,
    }
    Ok(())
}

/// A string as serde_json writes it, its runs without escapes copied whole (found eight bytes at
/// a time: byte by byte, escaping was the writer's largest cost in the module).
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let text = text.as_bytes();
    out.reserve(text.len() + 2);
    out.push(b'"');
    let mut start = 0;
    while let Some(at) = super::first_to_escape(text, start) {
        out.extend_from_slice(text.get(start..at).unwrap_or_default());
        let byte = text.get(at).copied().unwrap_or_default();
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let (high, low) = (HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]);
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', high, low]);
            }
        }
        start = at + 1;
    }
    out.extend_from_slice(text.get(start..).unwrap_or_default());
    out.push(b'"');
}

/// What `skip_members` reads before each value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Items {
    /// A key and a colon (an object's members).
    Keyed,
    /// Nothing (an array's items).
    Any,
    /// Nothing, but the item must be an object.
    Objects,
}

impl<'a> Parser<'a> {
    fn shaped(&mut self, shape: &Shape, depth: usize) -> Option<Value> {
        match (shape, self.peek()?) {
            (Shape::Object { keep, rest }, b'{') => self.shaped_object(keep, rest, depth + 1),
            (Shape::Items(item), b'[') => self.shaped_items(item, depth + 1),
            _ => self.value(depth),
        }
    }

    fn shaped_object(
        &mut self,
        keep: &[(&str, &Shape)],
        rest: &Rest,
        depth: usize,
    ) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let start = self.0.at;
        self.0.at += 1;
        let mut map = Map::new();
        let mut raw = String::new();
        let mut closed = self.peek()? == b'}';
        while !closed {
            if self.peek()? != b'"' {
                return None;
            }
            let key_start = self.0.at;
            let key = self.key()?;
            if self.peek()? != b':' {
                return None;
            }
            self.0.at += 1;
            match keep.iter().find(|(name, _)| *name == key.as_ref()) {
                Some((_, Shape::Text)) => {
                    self.peek()?;
                    let start = self.0.at;
                    let text_key = format!("{TEXT_OF}{key}");
                    // Of a repeated member only the last counts, kept either way.
                    if self.skip_objects(depth)? {
                        let text = self.text_since(start)?.to_string();
                        map.remove(key.as_ref());
                        map.insert(text_key, Value::String(text));
                    } else {
                        self.0.at = start;
                        let value = self.value(depth)?;
                        map.remove(&text_key);
                        map.insert(key.into_owned(), value);
                    }
                }
                Some((_, shape)) => {
                    let value = self.shaped(shape, depth)?;
                    map.insert(key.into_owned(), value);
                }
                None => match rest {
                    Rest::Full => {
                        let value = self.value(depth)?;
                        map.insert(key.into_owned(), value);
                    }
                    Rest::Text => {
                        self.skip_value(depth)?;
                        if !raw.is_empty() {
                            raw.push(',');
                        }
                        raw.push_str(self.text_since(key_start)?);
                    }
                    Rest::Verbatim => self.skip_value(depth)?,
                },
            }
            match self.peek()? {
                b',' => self.0.at += 1,
                b'}' => closed = true,
                _ => return None,
            }
        }
        self.0.at += 1;
        match rest {
            Rest::Text if !raw.is_empty() => {
                map.insert(RAW_MEMBERS.to_string(), Value::String(raw));
            }
            Rest::Verbatim => {
                let text = self.text_since(start)?.to_string();
                map.insert(VERBATIM.to_string(), Value::String(text));
            }
            _ => {}
        }
        Some(Value::Object(map))
    }

    fn shaped_items(&mut self, item: &Shape, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.0.at += 1;
        let mut items = Vec::new();
        let mut closed = self.peek()? == b']';
        while !closed {
            items.push(self.shaped(item, depth)?);
            match self.peek()? {
                b',' => self.0.at += 1,
                b']' => closed = true,
                _ => return None,
            }
        }
        self.0.at += 1;
        Some(Value::Array(items))
    }

    /// An object key, borrowed when it has no escapes; never a marker.
    fn key(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        self.string_text().filter(|key| !is_marker(key))
    }

    /// The text from `start` to the cursor, once a value from `start` has been read or skipped:
    /// every string in it was checked, the rest is JSON's ASCII (punctuation, numbers, literals).
    fn text_since(&self, start: usize) -> Option<&'a str> {
        let text = self.0.text.get(start..self.0.at)?;
        debug_assert!(std::str::from_utf8(text).is_ok(), "checked text");
        // SAFETY: UTF-8 as read above (a second check cost 2.5 % of the module's call).
        Some(unsafe { std::str::from_utf8_unchecked(text) })
    }

    /// Moves past one value, checking it exactly as `value` would read it, building nothing.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' if self.skip_plain(depth, false) => Some(()),
            b'{' => self.skip_members(b'}', depth + 1, Items::Keyed).map(drop),
            b'[' => self.skip_members(b']', depth + 1, Items::Any).map(drop),
            b't' => self.literal(b"true", Value::Null).map(drop),
            b'f' => self.literal(b"false", Value::Null).map(drop),
            b'n' => self.literal(b"null", Value::Null).map(drop),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => None,
        }
    }

    /// `skip_value` for a list of objects or null: `Some(false)`, the cursor left anywhere
    /// inside, when the value is something else.
    fn skip_objects(&mut self, depth: usize) -> Option<bool> {
        match self.peek()? {
            b'n' => self.literal(b"null", Value::Null).map(|_| true),
            b'[' if self.skip_plain(depth, true) => Some(true),
            b'[' => self.skip_members(b']', depth + 1, Items::Objects),
            _ => Some(false),
        }
    }

    /// Moves past the members of an object or the items of an array; `Some(false)` when items
    /// must be objects and one is not.
    fn skip_members(&mut self, close: u8, depth: usize, items: Items) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.0.at += 1;
        let mut closed = self.peek()? == close;
        while !closed {
            if items == Items::Objects && self.peek()? != b'{' {
                return Some(false);
            }
            if items == Items::Keyed {
                if self.peek()? != b'"' {
                    return None;
                }
                // Not even in unbuilt text: a reader may build part of it later (`share::env`).
                self.key()?;
                if self.peek()? != b':' {
                    return None;
                }
                self.0.at += 1;
            }
            self.skip_value(depth)?;
            match self.peek()? {
                b',' => self.0.at += 1,
                b if b == close => closed = true,
                _ => return None,
            }
        }
        self.0.at += 1;
        Some(true)
    }

    /// Moves past the object or array at the cursor when [`checked::plain_end`] decides it (the
    /// common case, 64 bytes at a time): `false` leaves it to be read token by token.
    ///
    /// [`checked::plain_end`]: super::checked::plain_end
    fn skip_plain(&mut self, depth: usize, objects_only: bool) -> bool {
        match super::checked::plain_end(self.0.text, self.0.at, depth, objects_only) {
            Some(end) => {
                self.0.at = end;
                true
            }
            None => false,
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        self.string_text().map(drop)
    }
}

#[cfg(test)]
mod tests;
