//! Shaping a parsed page so that converting it is bounded, in one iterative pass.
//!
//! htmd converts recursively, one stack frame chain per element level, and indents or quotes
//! every line of a list item or blockquote once per enclosing one; a hostile page nests
//! thousands deep to overflow the stack or multiply its size. Three rules bound the tree
//! without losing text, and leave real pages (far shallower) unchanged (they apply inside
//! hidden elements too):
//! - Depth: an element at depth [`MAX_DEPTH`] keeps its text and leaf elements (`img`, `br`,
//!   `hr`) as direct children, in order; the elements between are dissolved (a space stands
//!   for a dissolved block's edges), as a browser flattens past its own nesting limit.
//! - Indentation: a `blockquote` or `li` inside [`MAX_INDENTS`] others is replaced by its
//!   children.
//! - Long sibling runs: htmd merges adjacent alike inline elements (`<i>a</i><i>b</i>`) by
//!   removing from the middle of a list, quadratic in the run; runs of [`MERGE_FROM`] or more
//!   siblings are merged here the same way, linearly, so htmd finds nothing left to merge.

use std::mem;
use std::rc::Rc;
use std::time::Instant;

use html5ever::tendril::StrTendril;
use markup5ever_rcdom::{Handle, Node, NodeData};

use super::parse::Clock;
use super::{HIDDEN, separates_words};

/// Elements deeper than this are dissolved (real pages stay well under 64; htmd uses a few KiB
/// of stack per level).
pub(crate) const MAX_DEPTH: usize = 128;
/// At most this many nested `blockquote`/`li` elements (each one prefixes every line inside).
pub(crate) const MAX_INDENTS: usize = 8;
/// Sibling lists at least this long have their alike inline elements merged here.
const MERGE_FROM: usize = 512;

/// Elements kept when the elements around them are dissolved.
const LEAVES: [&str; 3] = ["img", "br", "hr"];

/// Applies the three rules to `document`; `None` when `deadline` passed first.
pub(super) fn shape(document: &Handle, deadline: Instant) -> Option<()> {
    let clock = Clock::new(deadline);
    let mut pending = vec![(Rc::clone(document), 0usize, 0usize)];
    while let Some((node, depth, indents)) = pending.pop() {
        if clock.expired() {
            return None;
        }
        // Hidden elements are shaped too: nothing shows them, but htmd's table handler still
        // searches them (recursively) for header cells.
        let tag = tag(&node);
        let indents = indents + usize::from(tag.is_some_and(indenting));
        if depth >= MAX_DEPTH {
            dissolve_below(&node);
            continue;
        }
        reshape_children(&node, indents);
        for child in node.children.borrow().iter() {
            pending.push((Rc::clone(child), depth + 1, indents));
        }
    }
    Some(())
}

fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn indenting(tag: &str) -> bool {
    matches!(tag, "blockquote" | "li")
}

fn take_children(node: &Node) -> Vec<Handle> {
    mem::take(&mut *node.children.borrow_mut())
}

fn set_children(parent: &Handle, children: Vec<Handle>) {
    for child in &children {
        child.parent.set(Some(Rc::downgrade(parent)));
    }
    *parent.children.borrow_mut() = children;
}

/// The indentation and merge rules on `node`'s children.
fn reshape_children(node: &Handle, indents: usize) {
    let (unwrap, merge) = {
        let children = node.children.borrow();
        let unwrap =
            indents >= MAX_INDENTS && children.iter().any(|c| tag(c).is_some_and(indenting));
        (unwrap, children.len() >= MERGE_FROM)
    };
    if !unwrap && !merge {
        return;
    }
    let mut work: Vec<Handle> = take_children(node);
    work.reverse();
    let mut kept: Vec<Handle> = Vec::with_capacity(work.len());
    while let Some(child) = work.pop() {
        if unwrap && tag(&child).is_some_and(indenting) {
            let mut grandchildren = take_children(&child);
            grandchildren.reverse();
            work.append(&mut grandchildren);
            continue;
        }
        if merge
            && let Some(last) = kept.last()
            && merged(last, &child)
        {
            continue;
        }
        kept.push(child);
    }
    set_children(node, kept);
}

/// Replaces everything below `node` with its text and leaf elements, in order.
fn dissolve_below(node: &Handle) {
    enum Item {
        Node(Handle),
        Space,
    }
    let mut work: Vec<Item> = take_children(node)
        .into_iter()
        .rev()
        .map(Item::Node)
        .collect();
    let mut kept: Vec<Handle> = Vec::new();
    while let Some(item) = work.pop() {
        let child = match item {
            Item::Space => {
                push_text(&mut kept, " ");
                continue;
            }
            Item::Node(child) => child,
        };
        match &child.data {
            NodeData::Text { contents } => push_text(&mut kept, &contents.borrow()),
            NodeData::Element { name, .. } => {
                let tag: &str = &name.local;
                if HIDDEN.contains(&tag) {
                    continue;
                }
                let children = take_children(&child);
                if children.is_empty() {
                    if LEAVES.contains(&tag) {
                        kept.push(child);
                    }
                    continue;
                }
                if separates_words(tag) {
                    push_text(&mut kept, " ");
                    work.push(Item::Space);
                }
                work.extend(children.into_iter().rev().map(Item::Node));
            }
            _ => {}
        }
    }
    set_children(node, kept);
}

/// Appends `text`, to the last kept node when that is text.
fn push_text(kept: &mut Vec<Handle>, text: &str) {
    if let Some(NodeData::Text { contents }) = kept.last().map(|last| &last.data) {
        contents.borrow_mut().push_slice(text);
        return;
    }
    kept.push(Node::new(NodeData::Text {
        contents: StrTendril::from_slice(text).into(),
    }));
}

/// htmd's block elements (CommonMark's HTML blocks): htmd never merges a run starting with one.
const HTMD_BLOCKS: [&str; 66] = [
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "pre",
    "script",
    "search",
    "section",
    "style",
    "summary",
    "table",
    "tbody",
    "td",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// htmd's merge of two adjacent siblings, done when it applies: both elements of the same
/// inline kind (`i`/`em` and `b`/`strong` alike, never `a`) with equal attributes, each holding
/// exactly one text node; the text of `next` joins `last`'s.
fn merged(last: &Handle, next: &Handle) -> bool {
    let (
        NodeData::Element {
            name: name1,
            attrs: attrs1,
            template_contents: template1,
            mathml_annotation_xml_integration_point: mathml1,
        },
        NodeData::Element {
            name: name2,
            attrs: attrs2,
            template_contents: template2,
            mathml_annotation_xml_integration_point: mathml2,
        },
    ) = (&last.data, &next.data)
    else {
        return false;
    };
    let local1: &str = &name1.local;
    let local2: &str = &name2.local;
    let alike = name1 == name2
        || matches!(
            (local1, local2),
            ("i", "em") | ("em", "i") | ("b", "strong") | ("strong", "b")
        );
    if !alike
        || local1 == "a"
        || HTMD_BLOCKS.contains(&local1)
        || mathml1 != mathml2
        || template1.borrow().is_some()
        || template2.borrow().is_some()
        || *attrs1.borrow() != *attrs2.borrow()
    {
        return false;
    }
    let (into, from) = (last.children.borrow(), next.children.borrow());
    let ([into], [from]) = (into.as_slice(), from.as_slice()) else {
        return false;
    };
    let (NodeData::Text { contents: into }, NodeData::Text { contents: from }) =
        (&into.data, &from.data)
    else {
        return false;
    };
    into.borrow_mut().push_tendril(&from.borrow());
    true
}
