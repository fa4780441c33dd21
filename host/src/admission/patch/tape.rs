//! A JSON text's values as a flat list of extents, found in one pass: the diff compares and
//! descends through it without scanning a subtree again at every level.
//! Lenient: the texts were already checked by serde_json; what is not JSON here is an error,
//! never a panic.

use std::borrow::Cow;

/// One value: its text is `text[start..end]`; its descendants follow it, up to `next`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub start: usize,
    pub end: usize,
    /// The index after this value's subtree: its next sibling, or its parent's end.
    pub next: usize,
    /// For an object member, its key's text between the quotes.
    pub key: Option<(usize, usize)>,
}

/// The text is not JSON where the tape expected it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed JSON at byte {0}")]
pub struct Malformed(pub usize);

/// A document's nodes in document order, the root first.
pub(super) struct Tape<'a> {
    pub text: &'a str,
    pub nodes: Vec<Node>,
}

impl<'a> Tape<'a> {
    pub fn new(text: &'a str) -> Result<Self, Malformed> {
        let mut tape = Tape {
            text,
            nodes: Vec::with_capacity(text.len() / 16),
        };
        tape.scan()?;
        Ok(tape)
    }

    /// The text of node `index`.
    pub fn text_of(&self, index: usize) -> &'a str {
        let node = self.nodes.get(index);
        node.and_then(|n| self.text.get(n.start..n.end))
            .unwrap_or_default()
    }

    /// The first byte of node `index`'s text.
    pub fn first_byte(&self, index: usize) -> u8 {
        self.text_of(index)
            .as_bytes()
            .first()
            .copied()
            .unwrap_or_default()
    }

    /// The children of the object or array at `index`.
    pub fn children(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.nodes.get(index).map_or(index, |n| n.next);
        std::iter::successors(Some(index + 1), move |&child| {
            self.nodes.get(child).map(|n| n.next)
        })
        .take_while(move |&child| child < end)
    }

    /// The decoded key of the member at `index` (escapes are rare: only those are decoded).
    pub fn key(&self, index: usize) -> Result<Cow<'a, str>, serde_json::Error> {
        let (start, end) = self
            .nodes
            .get(index)
            .and_then(|n| n.key)
            .unwrap_or_default();
        let raw = self.text.get(start..end).unwrap_or_default();
        if !raw.contains('\\') {
            return Ok(Cow::Borrowed(raw));
        }
        let quoted = self
            .text
            .get(start.saturating_sub(1)..end + 1)
            .unwrap_or_default();
        serde_json::from_str(quoted).map(Cow::Owned)
    }

    fn scan(&mut self) -> Result<(), Malformed> {
        let bytes = self.text.as_bytes();
        // The open containers: their node index and closing byte.
        let mut open: Vec<(usize, u8)> = Vec::new();
        let mut at = skip_ws(bytes, 0);
        let mut key = None;
        loop {
            let index = self.nodes.len();
            let start = at;
            let Some(&first) = bytes.get(at) else {
                return Err(Malformed(at));
            };
            let end = match first {
                b'{' | b'[' => {
                    open.push((index, if first == b'{' { b'}' } else { b']' }));
                    at = skip_ws(bytes, at + 1);
                    start
                }
                b'"' => {
                    at = string_end(bytes, at)?;
                    at
                }
                b',' | b':' | b'}' | b']' => return Err(Malformed(at)),
                _ => {
                    at += bytes
                        .get(at..)
                        .unwrap_or_default()
                        .iter()
                        .position(|b| {
                            matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                        })
                        .unwrap_or(bytes.len().saturating_sub(at));
                    at
                }
            };
            self.nodes.push(Node {
                start,
                end,
                next: index + 1,
                key: key.take(),
            });
            // After a value, or just inside a container: close what ends here, then find the
            // next member's start.
            let mut just_opened = matches!(first, b'{' | b'[');
            loop {
                at = skip_ws(bytes, at);
                let Some(&(container, close)) = open.last() else {
                    return if at == bytes.len() {
                        Ok(())
                    } else {
                        Err(Malformed(at))
                    };
                };
                match bytes.get(at) {
                    Some(&b) if b == close => {
                        at += 1;
                        let next = self.nodes.len();
                        if let Some(node) = self.nodes.get_mut(container) {
                            node.end = at;
                            node.next = next;
                        }
                        open.pop();
                        just_opened = false;
                    }
                    Some(b',') if !just_opened => {
                        at = skip_ws(bytes, at + 1);
                        break;
                    }
                    Some(_) if just_opened => break,
                    _ => return Err(Malformed(at)),
                }
            }
            if open.last().is_some_and(|&(_, close)| close == b'}') {
                let key_start = at;
                at = string_end(bytes, at)?;
                key = Some((key_start + 1, at - 1));
                at = skip_ws(bytes, at);
                if bytes.get(at) != Some(&b':') {
                    return Err(Malformed(at));
                }
                at = skip_ws(bytes, at + 1);
            }
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the string whose opening quote is at `at`.
fn string_end(bytes: &[u8], at: usize) -> Result<usize, Malformed> {
    if bytes.get(at) != Some(&b'"') {
        return Err(Malformed(at));
    }
    let mut from = at + 1;
    loop {
        let found = bytes
            .get(from..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
            .ok_or(Malformed(at))?;
        if bytes.get(from + found) == Some(&b'"') {
            return Ok(from + found + 1);
        }
        from += found + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_nest_and_keys_decode() {
        let tape = Tape::new(r#" {"a": [1, {"b\u0063": "x\"y"}], "d" : {} , "e":[]} "#).unwrap();
        let texts: Vec<&str> = (0..tape.nodes.len()).map(|i| tape.text_of(i)).collect();
        assert_eq!(
            texts,
            [
                r#"{"a": [1, {"b\u0063": "x\"y"}], "d" : {} , "e":[]}"#,
                r#"[1, {"b\u0063": "x\"y"}]"#,
                "1",
                r#"{"b\u0063": "x\"y"}"#,
                r#""x\"y""#,
                "{}",
                "[]",
            ]
        );
        assert_eq!(tape.children(0).collect::<Vec<_>>(), [1, 5, 6]);
        assert_eq!(tape.children(1).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(tape.children(5).count(), 0);
        assert_eq!(tape.key(1).unwrap(), "a");
        assert_eq!(tape.key(4).unwrap(), "bc");
        assert_eq!(tape.key(0).unwrap(), "");
    }

    #[test]
    fn malformed_text_is_an_error() {
        for text in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "[1 2]",
            "\"x",
            "1 2",
            "}",
        ] {
            assert!(Tape::new(text).is_err(), "{text:?}");
        }
        assert!(Tape::new("[[],{}]").is_ok());
    }
}
