//! What a page costs the text extractor, measured before it runs.
//!
//! The extractor decompresses every content stream of a page and, for each `Do`, the drawn
//! XObject's stream again, recursing without a depth limit or a cycle check. A small file can
//! therefore ask for unbounded stack (a form that draws itself), memory (a stream listed
//! thousands of times, or compressed a thousandfold twice over) or time (forms drawing forms,
//! ten times at each of eight levels). This walk follows the same path the extractor will —
//! `/Contents`, then each `Do` through the resources it resolves names in — but inflates each
//! stream under a cap, counts operators with a scanner that allocates nothing per token, and
//! multiplies a form's cost by how often it is drawn, so such a page is refused before the
//! extractor sees it.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

use super::pdf_streams::{contents, scan};
use super::size_text;

/// Forms drawn inside forms, at most: real documents nest a handful (a page, an annotation's
/// appearance, a transparency group inside it); each level is a recursion of the extractor.
pub(crate) const MAX_FORM_DEPTH: usize = 12;
/// Content operators the extractor may run for one call, forms expanded each time drawn: a
/// dense vector drawing has a few hundred thousand; the extractor runs about a million a
/// second and keeps a stream's operators in memory while it runs them.
pub(crate) const MAX_OPERATIONS: u64 = 2_000_000;
/// Bytes of content the extractor may decompress for one call, forms counted each time drawn
/// (it inflates them anew each time): a text page takes kilobytes, a dense drawing megabytes.
pub(crate) const MAX_CONTENT_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes the streams a page's resources hold (embedded fonts, their maps, colour profiles) may
/// decompress to for one call, each counted once: a large embedded CJK font is some 20 MiB.
pub(crate) const MAX_RESOURCE_BYTES: u64 = 128 * 1024 * 1024;

/// Why a page is refused, in the words the model reads after the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A form draws itself, directly or through others.
    Cycle { page: u32 },
    /// Forms nest deeper than [`MAX_FORM_DEPTH`].
    TooDeep { page: u32 },
    /// More than [`MAX_OPERATIONS`] operators, forms expanded.
    TooManyOperations { page: u32 },
    /// More than [`MAX_CONTENT_BYTES`] decompressed, forms expanded.
    TooLarge { page: u32 },
    /// Resource streams past [`MAX_RESOURCE_BYTES`] decompressed.
    ResourcesTooLarge { page: u32 },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cycle { page } => write!(f, "a form on page {page} draws itself"),
            Self::TooDeep { page } => write!(
                f,
                "the forms on page {page} nest more than {MAX_FORM_DEPTH} deep"
            ),
            Self::TooManyOperations { page } => write!(
                f,
                "page {page} would take more than {MAX_OPERATIONS} drawing operations"
            ),
            Self::TooLarge { page } => write!(
                f,
                "page {page} would decompress to more than {}",
                size_text(MAX_CONTENT_BYTES)
            ),
            Self::ResourcesTooLarge { page } => write!(
                f,
                "the fonts and colour spaces of page {page} would decompress to more than {}",
                size_text(MAX_RESOURCE_BYTES)
            ),
        }
    }
}

/// What one stream costs when drawn once, everything it draws included.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    operations: u64,
    bytes: u64,
}

impl Cost {
    fn add(self, other: Cost) -> Cost {
        Cost {
            operations: self.operations.saturating_add(other.operations),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

/// The pages of one call, checked in the order they are extracted; the limits hold for all of
/// them together, since they are extracted within one call's time.
pub(crate) struct PageCheck<'a> {
    doc: &'a Document,
    spent: Cost,
    /// A stream's cost, by the stream and the resources its names resolve in.
    known: HashMap<(ObjectId, usize), Cost>,
    /// Objects reached from resources so far, each measured once.
    measured: HashSet<ObjectId>,
    resource_bytes: u64,
}

impl<'a> PageCheck<'a> {
    pub(crate) fn new(doc: &'a Document) -> Self {
        Self {
            doc,
            spent: Cost::default(),
            known: HashMap::new(),
            measured: HashSet::new(),
            resource_bytes: 0,
        }
    }

    /// Checks page `number` (whose object is `page_id`) and counts it against the call.
    pub(crate) fn check(&mut self, number: u32, page_id: ObjectId) -> Result<(), Refusal> {
        // A page without resources resolves no names: one empty dictionary serves every call.
        static EMPTY: LazyLock<Dictionary> = LazyLock::new(Dictionary::new);
        let resources = inherited_resources(self.doc, page_id).unwrap_or(&EMPTY);
        let mut walk = Walk {
            doc: self.doc,
            page: number,
            drawing: Vec::new(),
            known: &mut self.known,
            spent: self.spent,
            resources: vec![resources],
        };
        // A stream listed twice in /Contents is decompressed twice.
        for id in self.doc.get_page_contents(page_id) {
            let Ok(stream) = self.doc.get_object(id).and_then(Object::as_stream) else {
                continue;
            };
            let cost = walk.expand(Some(id), stream, resources, 0)?;
            walk.spend(cost)?;
        }
        self.spent = walk.spent;
        let used = std::mem::take(&mut walk.resources);
        for resources in used {
            self.measure(number, resources)?;
        }
        Ok(())
    }

    /// Counts the streams reachable from `resources` (but its forms and images, which the
    /// walk counts as drawn) against [`MAX_RESOURCE_BYTES`], each once per call: the extractor
    /// decompresses fonts, their maps and colour profiles when it meets them.
    fn measure(&mut self, page: u32, resources: &'a Dictionary) -> Result<(), Refusal> {
        let mut pending: Vec<&'a Object> = resources
            .iter()
            .filter(|(key, _)| key.as_slice() != b"XObject")
            .map(|(_, value)| value)
            .collect();
        while let Some(object) = pending.pop() {
            match object {
                Object::Reference(id) if self.measured.insert(*id) => {
                    pending.extend(self.doc.get_object(*id).ok());
                }
                Object::Array(items) => pending.extend(items),
                Object::Dictionary(dict) => pending.extend(values(dict)),
                Object::Stream(stream) => {
                    let left = MAX_RESOURCE_BYTES.saturating_sub(self.resource_bytes);
                    let size = contents(stream, left)
                        .ok_or(Refusal::ResourcesTooLarge { page })?
                        .len() as u64;
                    self.resource_bytes += size;
                    pending.extend(values(&stream.dict));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// A dictionary's values, but the way back up the page tree.
fn values(dict: &Dictionary) -> impl Iterator<Item = &Object> {
    dict.iter()
        .filter(|(key, _)| key.as_slice() != b"Parent")
        .map(|(_, value)| value)
}

struct Walk<'a, 'k> {
    doc: &'a Document,
    page: u32,
    /// The forms being expanded, outermost first: one met again is a cycle.
    drawing: Vec<ObjectId>,
    known: &'k mut HashMap<(ObjectId, usize), Cost>,
    /// The call's cost so far; each stream's cost is checked against what is left.
    spent: Cost,
    /// The resource dictionaries names were resolved in, to be measured after the walk.
    resources: Vec<&'a Dictionary>,
}

impl<'a> Walk<'a, '_> {
    fn spend(&mut self, cost: Cost) -> Result<(), Refusal> {
        self.spent = self.spent.add(cost);
        self.within(self.spent)
    }

    fn within(&self, cost: Cost) -> Result<(), Refusal> {
        let page = self.page;
        if cost.operations > MAX_OPERATIONS {
            return Err(Refusal::TooManyOperations { page });
        }
        if cost.bytes > MAX_CONTENT_BYTES {
            return Err(Refusal::TooLarge { page });
        }
        Ok(())
    }

    /// The cost of drawing `stream` once with `resources`, at nesting `depth`.
    fn expand(
        &mut self,
        id: Option<ObjectId>,
        stream: &'a Stream,
        resources: &'a Dictionary,
        depth: usize,
    ) -> Result<Cost, Refusal> {
        let page = self.page;
        if id.is_some_and(|id| self.drawing.contains(&id)) {
            return Err(Refusal::Cycle { page });
        }
        if depth > MAX_FORM_DEPTH {
            return Err(Refusal::TooDeep { page });
        }
        // Identity of the resources: names inside a form without its own resolve in its
        // caller's, so the same form may cost differently under different callers.
        let key = id.map(|id| (id, std::ptr::from_ref(resources) as usize));
        if let Some(cost) = key.and_then(|key| self.known.get(&key)) {
            return Ok(*cost);
        }
        let left = MAX_CONTENT_BYTES.saturating_sub(self.spent.bytes);
        let content = contents(stream, left).ok_or(Refusal::TooLarge { page })?;
        let scan = scan(&content);
        drop(content);
        let mut cost = Cost {
            operations: scan.operations,
            bytes: scan.bytes,
        };
        self.within(self.spent.add(cost))?;
        if let Some(id) = id {
            self.drawing.push(id);
        }
        for name in &scan.drawn {
            let Some((child_id, child)) = xobject(self.doc, resources, name) else {
                continue;
            };
            let child_resources = own_resources(self.doc, &child.dict).unwrap_or(resources);
            if !self
                .resources
                .iter()
                .any(|seen| std::ptr::eq(*seen, child_resources))
            {
                self.resources.push(child_resources);
            }
            let drawn = self.expand(child_id, child, child_resources, depth + 1)?;
            cost = cost.add(drawn);
            self.within(self.spent.add(cost))?;
        }
        if id.is_some() {
            self.drawing.pop();
        }
        if let Some(key) = key {
            self.known.insert(key, cost);
        }
        Ok(cost)
    }
}

/// The XObject `name` of `resources`, as the extractor finds it.
fn xobject<'a>(
    doc: &'a Document,
    resources: &'a Dictionary,
    name: &[u8],
) -> Option<(Option<ObjectId>, &'a Stream)> {
    let (_, xobjects) = doc.dereference(resources.get(b"XObject").ok()?).ok()?;
    let (id, object) = doc
        .dereference(xobjects.as_dict().ok()?.get(name).ok()?)
        .ok()?;
    Some((id, object.as_stream().ok()?))
}

fn own_resources<'a>(doc: &'a Document, dict: &'a Dictionary) -> Option<&'a Dictionary> {
    let (_, resources) = doc.dereference(dict.get(b"Resources").ok()?).ok()?;
    resources.as_dict().ok()
}

/// A page's resources, from it or the nearest ancestor that has them.
fn inherited_resources(doc: &Document, page_id: ObjectId) -> Option<&Dictionary> {
    let mut node = doc.get_object(page_id).ok()?.as_dict().ok()?;
    // A page tree is shallow; a /Parent loop must not keep the walk going.
    for _ in 0..64 {
        if let Some(resources) = own_resources(doc, node) {
            return Some(resources);
        }
        let (_, parent) = doc.dereference(node.get(b"Parent").ok()?).ok()?;
        node = parent.as_dict().ok()?;
    }
    None
}
