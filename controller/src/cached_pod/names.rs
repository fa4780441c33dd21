//! The strings every plan compares for every pod (container and status names, injected-list
//! names, hash entries, working-map entries, labels, images, namespace and name) packed into one buffer: a plan then reads a few
//! contiguous cache lines per pod instead of one heap object per string.

/// Where one string sits in [`NameTable::text`]. Pods are at most a few MiB (the API server's
/// object limit), so offsets fit a `u32`; reads go through `str::get` and stay total regardless.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
    /// What the planner reads of the entry besides its text (see the flag constants).
    flags: u8,
}

/// Flag of a [`Section::Containers`] entry: the spec image is a digest reference.
pub(crate) const DIGEST_IMAGE: u8 = 1;
/// Flag of a [`Section::Containers`] entry: a status of this name runs the spec image's digest.
pub(crate) const RUNS_SPEC_IMAGE: u8 = 2;
/// Flag of a [`Section::Statuses`] entry: the container is ready.
pub(crate) const CONTAINER_READY: u8 = 1;

/// The sections of a table, in packing order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Section {
    /// Spec container names, in container order.
    Containers,
    /// Container status names, in status order.
    Statuses,
    /// Injected-list names, sorted.
    Injected,
    /// (SidecarSet name, hash) pairs of the hash annotation, sorted by name.
    Hashes,
    /// The same of the without-image hash annotation.
    HashesWithoutImage,
    /// (sidecar, working container) pairs of the working-container annotation, sorted.
    Working,
    /// (key, value) pairs of the labels, sorted: what the priority and scatter sorts read.
    Labels,
    /// Spec container images, in container order (`""` when absent).
    Images,
    /// The namespace, then the name (`""` when absent): the sorts' tie-breaks.
    Identity,
}

const SECTIONS: usize = 9;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NameTable {
    text: Box<str>,
    spans: Box<[Span]>,
    /// Where each section ends in `spans` (each starts where the previous one ends).
    ends: [u32; SECTIONS],
}

/// Fills a [`NameTable`] section by section, in [`Section`] order.
#[derive(Default)]
pub(crate) struct NameTableBuilder {
    text: String,
    spans: Vec<Span>,
    ends: [u32; SECTIONS],
}

fn offset(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

impl NameTableBuilder {
    pub fn push(&mut self, value: &str) {
        self.push_flagged(value, 0);
    }

    pub fn push_flagged(&mut self, value: &str, flags: u8) {
        let start = offset(self.text.len());
        self.text.push_str(value);
        self.spans.push(Span {
            start,
            end: offset(self.text.len()),
            flags,
        });
    }

    /// Closes `section`: what was pushed since the previous section belongs to it.
    pub fn end(&mut self, section: Section) {
        let count = offset(self.spans.len());
        self.ends[section as usize..].fill(count);
    }

    pub fn build(self) -> NameTable {
        NameTable {
            text: self.text.into_boxed_str(),
            spans: self.spans.into_boxed_slice(),
            ends: self.ends,
        }
    }
}

impl NameTable {
    fn section(&self, section: Section) -> &[Span] {
        let index = section as usize;
        let start = index
            .checked_sub(1)
            .map_or(0, |previous| self.ends[previous]);
        let range = start as usize..self.ends[index] as usize;
        self.spans.get(range).unwrap_or(&[])
    }

    /// Whether `span` holds `wanted`: lengths first, the hot loops mostly compare unequal names.
    fn is(&self, span: Span, wanted: &str) -> bool {
        span.end.saturating_sub(span.start) as usize == wanted.len()
            && self
                .text
                .as_bytes()
                .get(span.start as usize..span.end as usize)
                == Some(wanted.as_bytes())
    }

    fn text(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// The `position`th string of `section` (`""` past its end).
    pub fn name(&self, section: Section, position: usize) -> &str {
        self.section(section)
            .get(position)
            .map_or("", |&span| self.text(span))
    }

    /// Every string of `section` in order, with its flags (the section is located once).
    pub fn entries(&self, section: Section) -> impl Iterator<Item = (&str, u8)> + '_ {
        self.section(section)
            .iter()
            .map(|&span| (self.text(span), span.flags))
    }

    /// Whether the `position`th entry of `section` has `flag`.
    pub fn has_flag(&self, section: Section, position: usize, flag: u8) -> bool {
        self.section(section)
            .get(position)
            .is_some_and(|span| span.flags & flag != 0)
    }

    /// Where `name` first appears in `section`.
    pub fn position(&self, section: Section, name: &str) -> Option<usize> {
        self.section(section)
            .iter()
            .position(|&span| self.is(span, name))
    }

    /// The value paired with `key` in a section of pairs.
    pub fn value(&self, section: Section, key: &str) -> Option<&str> {
        self.section(section)
            .chunks_exact(2)
            .find(|pair| self.is(pair[0], key))
            .map(|pair| self.text(pair[1]))
    }
}
