//! Parsing a page within bounds: html5ever's tokenizer and tree builder, as htmd drives them,
//! with a stop between any two tokens.
//!
//! A hostile page is cheap to send and expensive to parse: the tree builder's scope checks walk
//! the stack of open elements, so deeply nested blocks parse in quadratic time, and reopening
//! formatting elements (`<b id=1>`…`<b id=N>` closed by every paragraph) creates N nodes per
//! paragraph. So:
//! - A start tag that would open an element deeper than [`PARSE_DEPTH`] is dropped, with its
//!   end tag, and its content goes to the element already open (a space for the edges of a
//!   block), as browsers flatten past their own nesting limit. Tags that change how what follows is read (script, style, tables,
//!   foreign content, …) and void elements are never dropped. The depth is the DOM depth of the
//!   node the builder last inserted into, so a scope check walks at most about that many.
//! - The parse stops when the deadline passes (checked every few tokens and node creations) or
//!   when the document holds [`MAX_NODES`] nodes; then nothing more is attached and the
//!   tokenizer is paused for good, so a stopped parse costs at most one token's work more.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{
    ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeBuilderOpts, TreeSink,
};
use html5ever::{Attribute, ExpandedName, LocalName, QualName, TokenizerResult};
use markup5ever_rcdom::{Handle, NodeData, RcDom};

use super::{HIDDEN, separates_words};

/// A page is converted up to this many DOM nodes (elements, text runs, comments): some 90 MB
/// of tree at most, more than a 5 MiB page of real content has.
pub(crate) const MAX_NODES: usize = 500_000;

/// Start tags that would open an element deeper than this are dropped (the shaping pass
/// flattens the tree further, to its own depth).
const PARSE_DEPTH: u32 = 256;

/// Elements without content or end tag: dropping them would lose a line break or an image.
const VOID: [&str; 15] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr",
];

/// Start tags never dropped besides [`HIDDEN`] and [`VOID`]: they switch the tokenizer to raw
/// text, or the tree builder to another insertion mode or namespace, so dropping one would
/// change how everything after it reads (a hidden element's text would show).
const STRUCTURAL: [&str; 21] = [
    "body",
    "caption",
    "colgroup",
    "frame",
    "frameset",
    "html",
    "math",
    "noembed",
    "noframes",
    "plaintext",
    "select",
    "table",
    "tbody",
    "td",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "xmp",
];

/// The deadline is read once per this many tokens or node creations (a clock read per token
/// would be a measurable share of a fast parse).
const CLOCK_EVERY: u32 = 256;

/// How a parse ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// The whole page was parsed.
    Whole,
    /// The page has more nodes than the budget; the document holds those before.
    Cut,
}

/// Why the parse stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Budget,
    Deadline,
}

/// Parses `html` as htmd does (a document, scripting enabled), up to `max_nodes` nodes
/// ([`MAX_NODES`] but in tests). `None` when `deadline` passed first.
pub(super) fn parse(html: &str, deadline: Instant, max_nodes: usize) -> Option<(Handle, Ending)> {
    let sink = Bounded {
        dom: RcDom::default(),
        nodes: Cell::new(0),
        max_nodes,
        stop: Cell::new(None),
        clock: Clock::new(deadline),
        depths: RefCell::new(HashMap::new()),
        current: Cell::new(0),
    };
    let document = sink.dom.document.clone();
    let builder = TreeBuilder::new(
        sink,
        TreeBuilderOpts {
            scripting_enabled: true,
            ..TreeBuilderOpts::default()
        },
    );
    let tokenizer = Tokenizer::new(
        Pausing {
            builder,
            dropped: RefCell::new(HashMap::new()),
        },
        TokenizerOpts::default(),
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // A script end tag or a `<meta charset>` pauses the tokenizer too, and is passed over as
    // html5ever's own driver does; only the end of the input or a stop ends the feeding.
    while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {
        if tokenizer.sink.stop().is_some() {
            break;
        }
    }
    if tokenizer.sink.stop().is_none() {
        tokenizer.end();
    }
    let stop = tokenizer.sink.stop();
    // The builder's handles (open elements, formatting list) go before the tree is used.
    drop(tokenizer);
    match stop {
        None => Some((document, Ending::Whole)),
        Some(Stop::Budget) => Some((document, Ending::Cut)),
        Some(Stop::Deadline) => None,
    }
}

/// A deadline read every [`CLOCK_EVERY`] ticks.
pub(super) struct Clock {
    deadline: Instant,
    ticks: Cell<u32>,
}

impl Clock {
    pub(super) fn new(deadline: Instant) -> Self {
        Self {
            deadline,
            ticks: Cell::new(0),
        }
    }

    /// True when the deadline has passed (noticed within [`CLOCK_EVERY`] ticks).
    pub(super) fn expired(&self) -> bool {
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        ticks.is_multiple_of(CLOCK_EVERY) && Instant::now() >= self.deadline
    }
}

/// The tokenizer's sink: the tree builder, without the tags too deep to open, and paused for
/// good once the parse stopped.
struct Pausing {
    builder: TreeBuilder<Handle, Bounded>,
    /// Start tags dropped, by name, whose end tags are still to come.
    dropped: RefCell<HashMap<LocalName, usize>>,
}

impl Pausing {
    fn stop(&self) -> Option<Stop> {
        self.builder.sink.stop.get()
    }

    /// True when `tag` is dropped: a start tag too deep to open, or the end of one.
    fn dropped(&self, tag: &Tag) -> bool {
        let mut dropped = self.dropped.borrow_mut();
        match tag.kind {
            TagKind::StartTag => {
                let name: &str = &tag.name;
                if self.builder.sink.current.get() < PARSE_DEPTH
                    || HIDDEN.contains(&name)
                    || VOID.contains(&name)
                    || STRUCTURAL.contains(&name)
                {
                    return false;
                }
                *dropped.entry(tag.name.clone()).or_default() += 1;
                true
            }
            TagKind::EndTag => match dropped.get_mut(&tag.name) {
                Some(open) if *open > 0 => {
                    *open -= 1;
                    true
                }
                _ => false,
            },
        }
    }
}

impl TokenSink for Pausing {
    type Handle = Handle;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<Handle> {
        let sink = &self.builder.sink;
        if sink.stop.get().is_none() && sink.clock.expired() {
            sink.stop.set(Some(Stop::Deadline));
        }
        if sink.stop.get().is_some() {
            // "Script" is the one way a sink makes `feed` return before its input is used up,
            // and the tokenizer accepts it only for a tag; anything else is dropped until one.
            return match token {
                Token::TagToken(_) => TokenSinkResult::Script(sink.dom.document.clone()),
                _ => TokenSinkResult::Continue,
            };
        }
        if let Token::TagToken(tag) = &token
            && self.dropped(tag)
        {
            if !separates_words(&tag.name) {
                return TokenSinkResult::Continue;
            }
            // The words on either side of a dropped paragraph stay apart.
            let space = Token::CharacterTokens(StrTendril::from_slice(" "));
            return self.builder.process_token(space, line_number);
        }
        self.builder.process_token(token, line_number)
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// htmd's tree (an `RcDom`) that counts what is created, tracks the depth of the last
/// insertion and, once stopped, attaches nothing more. Parse errors are not kept (a hostile
/// page has millions).
struct Bounded {
    dom: RcDom,
    nodes: Cell<usize>,
    max_nodes: usize,
    stop: Cell<Option<Stop>>,
    clock: Clock,
    /// The DOM depth of each element inserted by `append`, by address (the document is 0).
    depths: RefCell<HashMap<usize, u32>>,
    /// The depth of the element the builder last inserted into (or opened).
    current: Cell<u32>,
}

fn address(node: &Handle) -> usize {
    Rc::as_ptr(node).addr()
}

impl Bounded {
    fn depth(&self, node: &Handle) -> u32 {
        self.depths
            .borrow()
            .get(&address(node))
            .copied()
            .unwrap_or(0)
    }

    /// Records an insertion into `parent`. Insertions elsewhere (foster parenting, the adoption
    /// agency) are not tracked: the next plain one corrects the depth.
    fn inserted(&self, parent: &Handle, child: &NodeOrText<Handle>) {
        let depth = self.depth(parent);
        let opened = match child {
            NodeOrText::AppendNode(node) => match &node.data {
                NodeData::Element { name, .. } if !VOID.contains(&&*name.local) => {
                    self.depths.borrow_mut().insert(address(node), depth + 1);
                    depth + 1
                }
                _ => depth,
            },
            NodeOrText::AppendText(_) => depth,
        };
        self.current.set(opened);
    }

    fn created(&self) {
        let nodes = self.nodes.get() + 1;
        self.nodes.set(nodes);
        if self.stop.get().is_some() {
            return;
        }
        if nodes > self.max_nodes {
            self.stop.set(Some(Stop::Budget));
        } else if self.clock.expired() {
            self.stop.set(Some(Stop::Deadline));
        }
    }

    fn attaching(&self, child: &NodeOrText<Handle>) -> bool {
        if matches!(child, NodeOrText::AppendText(_)) {
            // A text run may become a node; counting every append keeps the bound an upper one.
            self.created();
        }
        self.stop.get().is_none()
    }

    fn stopped(&self) -> bool {
        self.stop.get().is_some()
    }
}

impl TreeSink for Bounded {
    type Handle = Handle;
    type Output = Self;
    type ElemName<'a> = ExpandedName<'a>;

    fn finish(self) -> Self {
        self
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Handle {
        self.dom.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a Handle) -> ExpandedName<'a> {
        self.dom.elem_name(target)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.created();
        self.dom.create_element(name, attrs, flags)
    }

    fn create_comment(&self, text: StrTendril) -> Handle {
        self.created();
        self.dom.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        self.created();
        self.dom.create_pi(target, data)
    }

    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        if self.attaching(&child) {
            self.inserted(parent, &child);
            self.dom.append(parent, child);
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        if self.attaching(&child) {
            self.dom
                .append_based_on_parent_node(element, prev_element, child);
        }
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        if !self.stopped() {
            self.dom
                .append_doctype_to_document(name, public_id, system_id);
        }
    }

    fn mark_script_already_started(&self, node: &Handle) {
        self.dom.mark_script_already_started(node);
    }

    fn pop(&self, node: &Handle) {
        // Not every pop is reported (closing several at once is not): a guide, like `inserted`.
        self.current.set(self.depth(node).saturating_sub(1));
        self.dom.pop(node);
    }

    fn get_template_contents(&self, target: &Handle) -> Handle {
        self.dom.get_template_contents(target)
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        // Once stopped, `sibling` may be a node that was never attached (RcDom panics on it).
        if self.attaching(&new_node) {
            self.dom.append_before_sibling(sibling, new_node);
        }
    }

    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        if !self.stopped() {
            self.dom.add_attrs_if_missing(target, attrs);
        }
    }

    fn associate_with_form(
        &self,
        target: &Handle,
        form: &Handle,
        nodes: (&Handle, Option<&Handle>),
    ) {
        self.dom.associate_with_form(target, form, nodes);
    }

    fn remove_from_parent(&self, target: &Handle) {
        if !self.stopped() {
            self.dom.remove_from_parent(target);
        }
    }

    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        if !self.stopped() {
            self.dom.reparent_children(node, new_parent);
        }
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &Handle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }

    fn set_current_line(&self, line_number: u64) {
        self.dom.set_current_line(line_number);
    }

    fn allow_declarative_shadow_roots(&self, intended_parent: &Handle) -> bool {
        self.dom.allow_declarative_shadow_roots(intended_parent)
    }

    fn attach_declarative_shadow(
        &self,
        location: &Handle,
        template: &Handle,
        attrs: &[Attribute],
    ) -> bool {
        !self.stopped()
            && self
                .dom
                .attach_declarative_shadow(location, template, attrs)
    }

    fn maybe_clone_an_option_into_selectedcontent(&self, option: &Handle) {
        if !self.stopped() {
            self.dom.maybe_clone_an_option_into_selectedcontent(option);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(600)
    }

    #[test]
    fn a_page_within_the_budget_is_whole() {
        let parsed = parse("<p>a<b>b</b></p>", far(), MAX_NODES);
        assert!(matches!(parsed, Some((_, Ending::Whole))));
    }

    #[test]
    fn a_passed_deadline_stops_the_parse() {
        let page = "<p>x</p>".repeat(10_000);
        assert!(parse(&page, Instant::now(), MAX_NODES).is_none());
    }

    #[test]
    fn reopened_formatting_elements_stop_at_the_node_budget() {
        // Every paragraph reopens 2000 distinct <b>: four billion nodes if nothing stopped it.
        let formatting: String = (0..2000).map(|i| format!("<b id={i}>")).collect();
        let page = format!("<p>{formatting}x{}", "<p>y".repeat(2_000_000));
        let parsed = parse(&page, far(), 100_000);
        assert!(matches!(parsed, Some((_, Ending::Cut))));
    }
}
