//! Navigating JSON text without decoding it: a cursor that walks an object's keys and an array's
//! items, descending into the values it wants and skipping the rest structurally. Selection reads a
//! few fields of every listed SidecarSet; one such pass costs a fraction of a serde_json pass.
//! Lenient on purpose: skipped values and scalars are not validated (whatever is decoded from a
//! slice afterwards goes through serde_json, which is exact). Never panics, never recurses.

mod checked;
mod escapes;
mod nested;
pub mod shaped;
pub mod value;

use nested::skip_nested;

/// A byte offset where the text is not the JSON shape expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed JSON at byte {0}")]
pub struct ScanError(pub usize);

type Scan<T> = Result<T, ScanError>;

/// Bytes that open, close or quote a nested value.
const STRUCTURAL: [bool; 256] = table(b"\"{}[]");
/// Bytes that end a scalar.
const DELIMITER: [bool; 256] = table(b",}] \t\n\r");

const fn table(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// Where the cursor is inside one object or array.
#[derive(Debug)]
pub struct Members {
    first: bool,
    close: u8,
}

#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a [u8]) -> Self {
        Cursor { text, at: 0 }
    }

    /// A cursor on `text` at `at` (a position another cursor reported).
    pub fn at(text: &'a [u8], at: usize) -> Self {
        Cursor { text, at }
    }

    pub fn position(&self) -> usize {
        self.at
    }

    /// The text from `start` to the cursor.
    pub fn since(&self, start: usize) -> &'a [u8] {
        self.text.get(start..self.at).unwrap_or_default()
    }

    fn error<T>(&self) -> Scan<T> {
        Err(ScanError(self.at))
    }

    fn skip_ws(&mut self) {
        // One comparison for the common case: every JSON whitespace byte is at most b' '.
        if self.text.get(self.at).is_none_or(|&b| b > b' ') {
            return;
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.get(self.at).copied()
    }

    /// Only whitespace remains.
    pub fn end(&mut self) -> Scan<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => self.error(),
        }
    }

    /// Enters the object at the cursor; `None` (consumed) when the value is `null`.
    pub fn object(&mut self) -> Scan<Option<Members>> {
        self.open(b'{', b'}')
    }

    /// Enters the array at the cursor; `None` (consumed) when the value is `null`.
    pub fn array(&mut self) -> Scan<Option<Members>> {
        self.open(b'[', b']')
    }

    fn open(&mut self, open: u8, close: u8) -> Scan<Option<Members>> {
        match self.peek() {
            Some(b) if b == open => {
                self.at += 1;
                Ok(Some(Members { first: true, close }))
            }
            Some(b'n') if self.text.get(self.at..self.at + 4) == Some(b"null") => {
                self.at += 4;
                Ok(None)
            }
            _ => self.error(),
        }
    }

    /// Moves to the next member; `false` (the closing bracket consumed) when there is none.
    fn next_member(&mut self, members: &mut Members) -> Scan<bool> {
        let next = self.peek();
        if members.first {
            members.first = false;
            if next == Some(members.close) {
                self.at += 1;
                return Ok(false);
            }
            return if next.is_some() {
                Ok(true)
            } else {
                self.error()
            };
        }
        match next {
            Some(b',') => {
                self.at += 1;
                self.skip_ws();
                Ok(true)
            }
            Some(b) if b == members.close => {
                self.at += 1;
                Ok(false)
            }
            _ => self.error(),
        }
    }

    /// The next raw key of an object (between the quotes, escapes not decoded), the cursor then on
    /// its value, which the caller must consume; `None` after the last member.
    pub fn next_key(&mut self, members: &mut Members) -> Scan<Option<&'a [u8]>> {
        Ok(self.next_name(members)?.map(|key| key.raw))
    }

    /// As `next_key`, as a `Key` (whether it has escapes is known from the scan, for free).
    pub fn next_name(&mut self, members: &mut Members) -> Scan<Option<Key<'a>>> {
        if !self.next_member(members)? {
            return Ok(None);
        }
        if self.peek() != Some(b'"') {
            return self.error();
        }
        let start = self.at;
        let (end, escaped) = skip_string_escaped(self.text, start)?;
        self.at = end;
        let raw = self.text.get(start + 1..end - 1).unwrap_or_default();
        if self.peek() != Some(b':') {
            return self.error();
        }
        self.at += 1;
        self.skip_ws();
        Ok(Some(Key { raw, escaped }))
    }

    /// Whether another array item follows (the cursor then on it; the caller must consume it).
    pub fn next_item(&mut self, members: &mut Members) -> Scan<bool> {
        self.next_member(members)
    }

    /// Skips one value and returns its text.
    pub fn skip(&mut self) -> Scan<&'a [u8]> {
        let Some(first) = self.peek() else {
            return self.error();
        };
        let start = self.at;
        self.at = match first {
            b'"' => skip_string(self.text, start)?,
            b'{' | b'[' => skip_nested(self.text, start)?,
            b',' | b'}' | b']' | b':' => return self.error(),
            _ => {
                let rest = self.text.get(start..).unwrap_or_default();
                start
                    + rest
                        .iter()
                        .position(|&b| DELIMITER[b as usize])
                        .unwrap_or(rest.len())
            }
        };
        Ok(self.since(start))
    }
}

/// Bytes of a word, for the word-at-a-time scans below.
const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
const QUOTES: u64 = ONES * b'"' as u64;
const BACKSLASHES: u64 = ONES * b'\\' as u64;

/// How far a string is read in blocks past its first one (SIMD), or in words, before handing
/// over to `memchr`.
const SHORT_STRING: usize = 128;

/// The end (exclusive) of the string whose opening quote is at `at`.
#[inline(always)]
fn skip_string(text: &[u8], at: usize) -> Scan<usize> {
    skip_string_escaped(text, at).map(|(end, _)| end)
}

/// The end (exclusive) of the string whose opening quote is at `at`, and whether it has escapes.
#[inline(always)]
fn skip_string_escaped(text: &[u8], at: usize) -> Scan<(usize, bool)> {
    let mut i = at + 1;
    let mut escaped = false;
    while let Some(found) = quote_or_backslash(text, i) {
        if text.get(found) == Some(&b'"') {
            return Ok((found + 1, escaped));
        }
        escaped = true;
        i = found + 2;
    }
    Err(ScanError(at))
}

/// The first `"` or `\\` at or after `from`: most strings in Kubernetes objects are short, so the
/// first sixteen bytes are read here (SIMD), the rest by [`string_rest`]; without SIMD, a word at
/// a time, then `memchr`.
#[inline(always)]
fn quote_or_backslash(text: &[u8], from: usize) -> Option<usize> {
    if escapes::SIMD {
        let Some(block) = text.get(from..from + escapes::BLOCK) else {
            return string_rest(text, from);
        };
        let found = escapes::quotes_or_backslashes(block.try_into().ok()?);
        if found != 0 {
            return Some(from + found.trailing_zeros() as usize);
        }
        return string_rest(text, from + escapes::BLOCK);
    }
    let rest = text.get(from..)?;
    let mut scanned = 0;
    // Whole words only, straight from the slice (no bounds check per word).
    for word in rest.chunks_exact(8).take(SHORT_STRING / 8) {
        let word = u64::from_le_bytes(word.try_into().ok()?);
        let (quotes, backslashes) = (word ^ QUOTES, word ^ BACKSLASHES);
        // The high bit of each zero byte; exact up to the first one.
        let zeros =
            (quotes.wrapping_sub(ONES) & !quotes) | (backslashes.wrapping_sub(ONES) & !backslashes);
        let found = zeros & HIGHS;
        if found != 0 {
            return Some(from + scanned + (found.trailing_zeros() / 8) as usize);
        }
        scanned += 8;
    }
    long_string_rest(text, from + scanned)
}

/// [`quote_or_backslash`] past a string's first block: [`SHORT_STRING`] more bytes in blocks,
/// then `memchr`; the text's last bytes one by one. Out of line in the module (most strings end
/// in their first block: 2 KB smaller, and -0.3 % instructions there), inlined natively (-1 %).
#[cfg_attr(target_arch = "wasm32", inline(never))]
#[cfg_attr(not(target_arch = "wasm32"), inline(always))]
fn string_rest(text: &[u8], from: usize) -> Option<usize> {
    let rest = text.get(from..)?;
    let mut blocks = rest.chunks_exact(escapes::BLOCK);
    let mut scanned = 0;
    for block in blocks.by_ref().take(SHORT_STRING / escapes::BLOCK) {
        let found = escapes::quotes_or_backslashes(block.try_into().ok()?);
        if found != 0 {
            return Some(from + scanned + found.trailing_zeros() as usize);
        }
        scanned += escapes::BLOCK;
    }
    if scanned < SHORT_STRING {
        // The text ends within a block (a short text, e.g. a selector): its last bytes.
        let stop = |b: &u8| *b == b'"' || *b == b'\\';
        return blocks
            .remainder()
            .iter()
            .position(stop)
            .map(|p| from + scanned + p);
    }
    long_string_rest(text, from + scanned)
}

/// Past a string's first blocks or words (and, without SIMD, in the last few bytes of the text).
#[inline(never)]
fn long_string_rest(text: &[u8], from: usize) -> Option<usize> {
    memchr::memchr2(b'"', b'\\', text.get(from..)?).map(|p| from + p)
}

/// Whether a raw key is `key` (which has no escapes); escaped keys are decoded first.
pub fn key_is(raw: &[u8], key: &str) -> bool {
    // An escape is longer than what it stands for: a raw key of `key`'s length or shorter
    // matches only byte for byte.
    if raw.len() <= key.len() {
        return raw == key.as_bytes();
    }
    if memchr::memchr(b'\\', raw).is_none() {
        return false;
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted).is_ok_and(|decoded| decoded == key)
}

/// A raw key whose escapes the scan noticed, compared with several names.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    raw: &'a [u8],
    escaped: bool,
}

impl Key<'_> {
    /// Whether the key is `name` (which has no escapes).
    pub fn is(&self, name: &str) -> bool {
        if self.escaped {
            key_is(self.raw, name)
        } else {
            self.raw == name.as_bytes()
        }
    }
}

/// The contents of a JSON string's text (quotes included) when it reads as itself: no escapes,
/// no control characters, valid UTF-8, exactly what serde_json would decode it to.
pub fn plain_str(text: &[u8]) -> Option<&str> {
    plain_contents(text.strip_prefix(b"\"")?.strip_suffix(b"\"")?)
}

/// The high bit of each byte of `word` that is a quote, a backslash or below 0x20, or (with
/// `high` = [`HIGHS`]) not ASCII. A borrow can only flag a byte above a truly flagged one, so the
/// lowest flag is exact (and so is "any").
#[inline(always)]
fn escape_flags(word: u64, high: u64) -> u64 {
    let (quotes, backslashes) = (word ^ QUOTES, word ^ BACKSLASHES);
    let flags = (quotes.wrapping_sub(ONES) & !quotes)
        | (backslashes.wrapping_sub(ONES) & !backslashes)
        | (word.wrapping_sub(ONES * 0x20) & !word)
        | (word & high);
    flags & HIGHS
}

/// The first byte at or after `from` that serde_json escapes when it writes a string: a quote,
/// a backslash or a control character (below 0x20).
pub fn first_to_escape(text: &[u8], from: usize) -> Option<usize> {
    first_flagged(text, from, 0)
}

/// The first byte at or after `from` that [`escape_flags`] flags with `high`: sixteen at a time
/// with SIMD, then eight at a time.
#[inline(always)]
fn first_flagged(text: &[u8], from: usize, high: u64) -> Option<usize> {
    let mut rest = text.get(from..)?;
    let mut at = from;
    if escapes::SIMD {
        let mut blocks = rest.chunks_exact(escapes::BLOCK);
        for block in &mut blocks {
            let flags = escapes::flags(block.try_into().ok()?, high != 0);
            if flags != 0 {
                return Some(at + flags.trailing_zeros() as usize);
            }
            at += escapes::BLOCK;
        }
        rest = blocks.remainder();
    }
    let mut words = rest.chunks_exact(8);
    for word in &mut words {
        let flags = escape_flags(u64::from_le_bytes(word.try_into().ok()?), high);
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let not_ascii = high != 0;
    let flagged = |&b: &u8| b < 0x20 || b == b'"' || b == b'\\' || (not_ascii && b >= 0x80);
    words.remainder().iter().position(flagged).map(|p| at + p)
}

/// Whether any byte needs an escape or is not ASCII. Eight bytes at a time: byte by byte, this
/// was a large part of the module's reading of strings.
#[inline(always)]
fn any_flagged(text: &[u8]) -> bool {
    let flagged = |word: u64| escape_flags(word, HIGHS) != 0;
    let word_at = |at: usize| match text.get(at..at + 8).map(<[u8; 8]>::try_from) {
        Some(Ok(word)) => u64::from_le_bytes(word),
        _ => 0,
    };
    let half_at = |at: usize| match text.get(at..at + 4).map(<[u8; 4]>::try_from) {
        Some(Ok(half)) => u64::from(u32::from_le_bytes(half)),
        _ => 0,
    };
    let len = text.len();
    match len {
        0..4 => text
            .iter()
            .any(|&b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80),
        // Two overlapping halves, or whole words and an overlapping last one: a byte checked
        // twice is still checked once.
        4..8 => flagged(half_at(0) | half_at(len - 4) << 32),
        _ => (0..len / 8).any(|word| flagged(word_at(word * 8))) || flagged(word_at(len - 8)),
    }
}

/// The contents and end (exclusive) of the string whose opening quote is at `at`, when it reads
/// as itself in printable ASCII (no escapes): the common case, found in one pass where
/// `skip_string_escaped` and `plain_str` take two. `None`: let them decide.
#[inline(always)]
pub fn plain_ascii_string(text: &[u8], at: usize) -> Option<(&str, usize)> {
    let from = at + 1;
    let found = first_flagged(text, from, HIGHS)?;
    if text.get(found) != Some(&b'"') {
        return None;
    }
    let inner = text.get(from..found)?;
    // SAFETY: every byte before `found` is ASCII, and ASCII is UTF-8.
    Some((unsafe { std::str::from_utf8_unchecked(inner) }, found + 1))
}

/// A string's contents (between the quotes, e.g. a raw key) when they read as themselves.
pub fn plain_contents(inner: &[u8]) -> Option<&str> {
    // One pass for the common case, printable ASCII without quotes or backslashes.
    if !any_flagged(inner) {
        // SAFETY: every byte is ASCII, and ASCII is UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(inner) });
    }
    if inner.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        return None;
    }
    std::str::from_utf8(inner).ok()
}

/// `value` as serde_json writes it, indented or not: the documents the proptests read.
#[cfg(test)]
fn serialised(value: &serde_json::Value, pretty: bool) -> Vec<u8> {
    let text = if pretty {
        serde_json::to_vec_pretty(value)
    } else {
        serde_json::to_vec(value)
    };
    text.expect("serialisable")
}

#[cfg(test)]
mod tests;
