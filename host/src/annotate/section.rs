//! Rewrites wasm custom sections without a wasm parser dependency.

use super::AnnotateError;

const WASM_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/// One top-level section: its id and the byte range of its whole encoding (id, size, body).
struct Section<'a> {
    id: u8,
    body: &'a [u8],
    encoded: &'a [u8],
}

fn read_leb_u32(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut result: u32 = 0;
    for (i, &byte) in bytes.iter().enumerate().take(5) {
        result |= u32::from(byte & 0x7f).checked_shl(7 * i as u32)?;
        if byte & 0x80 == 0 {
            return Some((result, i + 1));
        }
    }
    None
}

fn write_leb_u32(mut n: u32, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn sections(wasm: &[u8]) -> Result<Vec<Section<'_>>, AnnotateError> {
    let malformed = |why: &str| AnnotateError::Module(format!("not a wasm core module: {why}"));
    let mut rest = wasm
        .strip_prefix(&WASM_HEADER[..])
        .ok_or_else(|| malformed("bad header"))?;
    let mut out = Vec::new();
    while let Some((&id, after_id)) = rest.split_first() {
        let (size, used) = read_leb_u32(after_id).ok_or_else(|| malformed("bad section size"))?;
        let size = usize::try_from(size).map_err(|_| malformed("section too large"))?;
        let header = 1 + used;
        let total = header
            .checked_add(size)
            .ok_or_else(|| malformed("section too large"))?;
        let encoded = rest
            .get(..total)
            .ok_or_else(|| malformed("truncated section"))?;
        out.push(Section {
            id,
            body: &encoded[header..],
            encoded,
        });
        rest = &rest[total..];
    }
    Ok(out)
}

fn custom_name(body: &[u8]) -> Option<&[u8]> {
    let (len, used) = read_leb_u32(body)?;
    body.get(used..used.checked_add(usize::try_from(len).ok()?)?)
}

/// Returns `wasm` with every custom section called `name` removed.
pub fn remove_custom_section(wasm: &[u8], name: &str) -> Result<Vec<u8>, AnnotateError> {
    let mut out = Vec::with_capacity(wasm.len());
    out.extend_from_slice(&WASM_HEADER);
    for section in sections(wasm)? {
        if section.id == 0 && custom_name(section.body) == Some(name.as_bytes()) {
            continue;
        }
        out.extend_from_slice(section.encoded);
    }
    Ok(out)
}

/// Returns `wasm` with every custom section called `name` removed and one new section
/// `name` holding `contents` appended at the end (where `kwctl annotate` puts it).
pub fn replace_custom_section(
    wasm: &[u8],
    name: &str,
    contents: &[u8],
) -> Result<Vec<u8>, AnnotateError> {
    let mut out = remove_custom_section(wasm, name)?;
    out.reserve(contents.len() + name.len() + 16);
    let too_large = || AnnotateError::Module("custom section larger than 4 GiB".into());
    let mut body = Vec::with_capacity(name.len() + contents.len() + 5);
    write_leb_u32(
        u32::try_from(name.len()).map_err(|_| too_large())?,
        &mut body,
    );
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(contents);
    out.push(0);
    write_leb_u32(
        u32::try_from(body.len()).map_err(|_| too_large())?,
        &mut out,
    );
    out.extend_from_slice(&body);
    Ok(out)
}

/// Number of custom sections called `name` (a well-annotated module has exactly one).
pub fn count_custom_sections(wasm: &[u8], name: &str) -> Result<usize, AnnotateError> {
    Ok(sections(wasm)?
        .iter()
        .filter(|s| s.id == 0 && custom_name(s.body) == Some(name.as_bytes()))
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_MODULE: [u8; 8] = WASM_HEADER;

    #[test]
    fn replacing_twice_keeps_one_section() {
        let once = replace_custom_section(&EMPTY_MODULE, "x", b"one").unwrap();
        let twice = replace_custom_section(&once, "x", b"two").unwrap();
        assert_eq!(count_custom_sections(&twice, "x").unwrap(), 1);
        assert_eq!(
            crate::engine::custom_section(&twice, "x"),
            Some(&b"two"[..])
        );
    }

    #[test]
    fn removing_leaves_the_other_sections() {
        let a = replace_custom_section(&EMPTY_MODULE, "a", b"1").unwrap();
        let ab = replace_custom_section(&a, "b", b"2").unwrap();
        let b = remove_custom_section(&ab, "a").unwrap();
        assert_eq!(count_custom_sections(&b, "a").unwrap(), 0);
        assert_eq!(crate::engine::custom_section(&b, "b"), Some(&b"2"[..]));
    }

    #[test]
    fn other_sections_are_kept() {
        let a = replace_custom_section(&EMPTY_MODULE, "a", b"1").unwrap();
        let ab = replace_custom_section(&a, "b", b"2").unwrap();
        assert_eq!(crate::engine::custom_section(&ab, "a"), Some(&b"1"[..]));
        assert_eq!(crate::engine::custom_section(&ab, "b"), Some(&b"2"[..]));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(replace_custom_section(b"not wasm", "a", b"").is_err());
        let mut truncated = EMPTY_MODULE.to_vec();
        truncated.extend_from_slice(&[1, 10, 0]);
        assert!(replace_custom_section(&truncated, "a", b"").is_err());
    }
}
