//! The visible text of a parsed page: block elements on their own lines, whitespace collapsed
//! outside `<pre>`. The walk is iterative, so no page nests deep enough to exhaust the stack.

use std::rc::Rc;
use std::time::Instant;

use markup5ever_rcdom::{Handle, NodeData};

use super::parse::Clock;
use super::{BLOCKS, HIDDEN, PARAGRAPHS};

/// The visible text below `document`, trimmed; `None` when `deadline` passed first.
pub(super) fn visible_text(document: &Handle, deadline: Instant) -> Option<String> {
    enum Step {
        Enter(Handle, bool),
        Leave(usize),
    }
    let clock = Clock::new(deadline);
    let mut out = TextOut::default();
    let mut pending = vec![Step::Enter(Rc::clone(document), false)];
    while let Some(step) = pending.pop() {
        if clock.expired() {
            return None;
        }
        let (node, pre) = match step {
            Step::Leave(breaks) => {
                out.block(breaks);
                continue;
            }
            Step::Enter(node, pre) => (node, pre),
        };
        let pre = match &node.data {
            NodeData::Text { contents } => {
                let text = contents.borrow();
                if pre {
                    out.preformatted(&text);
                } else {
                    out.inline(&text);
                }
                continue;
            }
            NodeData::Element { name, .. } => {
                let tag: &str = &name.local;
                if HIDDEN.contains(&tag) {
                    continue;
                }
                let breaks = if PARAGRAPHS.contains(&tag) {
                    2
                } else if BLOCKS.contains(&tag) {
                    1
                } else {
                    0
                };
                match tag {
                    "br" => out.block(1),
                    "td" | "th" => out.space = true,
                    _ => {}
                }
                out.block(breaks);
                pending.push(Step::Leave(breaks));
                pre || tag == "pre"
            }
            NodeData::Document => pre,
            _ => continue,
        };
        let children = node.children.borrow();
        pending.extend(
            children
                .iter()
                .rev()
                .map(|child| Step::Enter(Rc::clone(child), pre)),
        );
    }
    Some(out.text.trim().to_owned())
}

#[derive(Default)]
struct TextOut {
    text: String,
    /// Line breaks owed before the next text (the maximum requested).
    breaks: usize,
    /// A space owed before the next text.
    space: bool,
}

impl TextOut {
    fn block(&mut self, breaks: usize) {
        if breaks == 0 {
            return;
        }
        self.breaks = self.breaks.max(breaks);
        self.space = false;
    }

    fn flush(&mut self) {
        if self.breaks > 0 {
            if !self.text.is_empty() {
                let have = self.text.len() - self.text.trim_end_matches('\n').len();
                for _ in have..self.breaks {
                    self.text.push('\n');
                }
            }
            self.breaks = 0;
        } else if self.space && !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push(' ');
        }
        self.space = false;
    }

    fn inline(&mut self, raw: &str) {
        let words = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if raw.starts_with(char::is_whitespace) {
            self.space = true;
        }
        if words.is_empty() {
            return;
        }
        self.flush();
        self.text.push_str(&words);
        self.space = raw.ends_with(char::is_whitespace);
    }

    fn preformatted(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        self.flush();
        self.text.push_str(raw);
    }
}
