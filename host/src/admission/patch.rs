//! The RFC 6902 JSONPatch from the request's object to the mutated one, computed on their JSON
//! text and written straight to JSON.
//!
//! Byte-identical to `serde_json::to_vec(&json_patch::diff(left, right))` over the two texts
//! parsed as `Value`s (policy-evaluator's diff, the tests compare them): the same operations in
//! the same order (object keys sorted, the last of duplicates winning). But neither object is
//! built: each text is scanned once into a [`Tape`], a member whose text is the same on both
//! sides is equal after one byte comparison, and only the values that are added or replaced are
//! parsed, to be written as serde_json writes them. The policy copies what it does not edit
//! verbatim, so most of a pod is never looked at twice.

mod tape;
mod written;

use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;
use tape::{Malformed, Tape};

/// Nesting past which a diff gives up, as serde_json's parser does at 128 levels.
const MAX_DEPTH: usize = 128;

/// Why no patch could be computed from the two texts.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// Either text is not JSON.
    #[error("the object is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Either text is not JSON (found by the scan).
    #[error("the object is not valid JSON: {0}")]
    Malformed(#[from] Malformed),
    /// The objects differ deeper than serde_json reads.
    #[error("the object nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// The patch as JSON bytes, or `None` when the two JSON texts hold equal values.
pub fn diff(left: &str, right: &str) -> Result<Option<Vec<u8>>, PatchError> {
    let mut writer = PatchWriter {
        left: Tape::new(left)?,
        right: Tape::new(right)?,
        out: Vec::new(),
        pointer: String::new(),
    };
    writer.value(0, 0, 0)?;
    if writer.out.is_empty() {
        return Ok(None);
    }
    writer.out.push(b']');
    Ok(Some(writer.out))
}

struct PatchWriter<'a> {
    left: Tape<'a>,
    right: Tape<'a>,
    out: Vec<u8>,
    /// The RFC 6901 pointer of the current location, already escaped.
    pointer: String,
}

type Diffed = Result<(), PatchError>;

/// An object's members as `Value` would hold them: (key, node), sorted, the last duplicate kept.
type Members<'a> = Vec<(Cow<'a, str>, usize)>;

impl<'a> PatchWriter<'a> {
    /// Node `l` of the left tape against node `r` of the right one.
    fn value(&mut self, l: usize, r: usize, depth: usize) -> Diffed {
        let (left, right) = (self.left.text_of(l), self.right.text_of(r));
        // The same text is the same value.
        if left == right {
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Err(PatchError::TooDeep);
        }
        match (self.left.first_byte(l), self.right.first_byte(r)) {
            (b'{', b'{') => self.object(l, r, depth),
            (b'[', b'[') => self.array(l, r, depth),
            // Scalars written differently may still be equal (`1.0` and `1.00`, escapes).
            (a, b) if !matches!(a, b'{' | b'[') && !matches!(b, b'{' | b'[') => {
                let equal =
                    serde_json::from_str::<Value>(left)? == serde_json::from_str::<Value>(right)?;
                if equal {
                    Ok(())
                } else {
                    self.operation("replace", Some(right))
                }
            }
            _ => self.operation("replace", Some(right)),
        }
    }

    fn object(&mut self, l: usize, r: usize, depth: usize) -> Diffed {
        let left = members(&self.left, l)?;
        let right = members(&self.right, r)?;
        let mut old = left.iter().peekable();
        for (key, right_node) in &right {
            while old.next_if(|(k, _)| k < key).is_some() {}
            let mark = self.push_key(key);
            match old.next_if(|(k, _)| k == key) {
                Some(&(_, left_node)) => self.value(left_node, *right_node, depth + 1)?,
                None => self.operation("add", Some(self.right.text_of(*right_node)))?,
            }
            self.pointer.truncate(mark);
        }
        let mut new = right.iter().peekable();
        for (key, _) in &left {
            while new.next_if(|(k, _)| k < key).is_some() {}
            if new.next_if(|(k, _)| k == key).is_none() {
                let mark = self.push_key(key);
                self.operation("remove", None)?;
                self.pointer.truncate(mark);
            }
        }
        Ok(())
    }

    fn array(&mut self, l: usize, r: usize, depth: usize) -> Diffed {
        let left: Vec<usize> = self.left.children(l).collect();
        let right: Vec<usize> = self.right.children(r).collect();
        let mut shift = 0usize;
        for index in 0..left.len().max(right.len()) {
            let mark = self.pointer.len();
            // Writing to a String cannot fail.
            let _ = write!(self.pointer, "/{}", index - shift);
            match (left.get(index), right.get(index)) {
                (Some(&left), Some(&right)) => self.value(left, right, depth + 1)?,
                (Some(_), None) => {
                    shift += 1;
                    self.operation("remove", None)?;
                }
                (None, Some(&right)) => self.operation("add", Some(self.right.text_of(right)))?,
                (None, None) => {}
            }
            self.pointer.truncate(mark);
        }
        Ok(())
    }

    /// Appends `/key` (with `~` and `/` escaped) and returns the length to truncate back to.
    fn push_key(&mut self, key: &str) -> usize {
        let mark = self.pointer.len();
        self.pointer.push('/');
        for c in key.chars() {
            match c {
                '~' => self.pointer.push_str("~0"),
                '/' => self.pointer.push_str("~1"),
                c => self.pointer.push(c),
            }
        }
        mark
    }

    /// `{"op":…,"path":…[,"value":…]}` after `[` or `,`, the value written as serde_json writes
    /// it once parsed (text it wrote itself is copied).
    fn operation(&mut self, op: &str, value: Option<&str>) -> Diffed {
        let value = match value {
            Some(text) if written::written_by_serde_json(text) => Some(Written::Text(text)),
            Some(text) => Some(Written::Parsed(serde_json::from_str(text)?)),
            None => None,
        };
        self.out.push(if self.out.is_empty() { b'[' } else { b',' });
        self.out.extend_from_slice(b"{\"op\":\"");
        self.out.extend_from_slice(op.as_bytes());
        self.out.extend_from_slice(b"\",\"path\":");
        serde_json::to_writer(&mut self.out, self.pointer.as_str())?;
        match value {
            Some(Written::Text(text)) => {
                self.out.extend_from_slice(b",\"value\":");
                self.out.extend_from_slice(text.as_bytes());
            }
            Some(Written::Parsed(value)) => {
                self.out.extend_from_slice(b",\"value\":");
                serde_json::to_writer(&mut self.out, &value)?;
            }
            None => {}
        }
        self.out.push(b'}');
        Ok(())
    }
}

/// A value as the patch writes it.
enum Written<'a> {
    /// Already as serde_json writes it.
    Text(&'a str),
    Parsed(Value),
}

/// The members of the object at `node`, as `Value` would hold them.
fn members<'a>(tape: &Tape<'a>, node: usize) -> Result<Members<'a>, serde_json::Error> {
    let mut members = tape
        .children(node)
        .map(|child| Ok((tape.key(child)?, child)))
        .collect::<Result<Members<'a>, serde_json::Error>>()?;
    // Stable: equal keys keep their order, and the last of each run is the one kept.
    members.sort_by(|(a, _), (b, _)| a.cmp(b));
    members.dedup_by(|later, earlier| {
        let same = later.0 == earlier.0;
        if same {
            std::mem::swap(later, earlier);
        }
        same
    });
    Ok(members)
}

#[cfg(test)]
mod tests;
