//! The htmd converter: ATX headings, `-` bullets, fenced code, hidden elements skipped, and
//! the handlers that keep its output readable and bounded.

use std::rc::Rc;

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, CodeBlockStyle, HeadingStyle, Options};
use htmd::{Element, HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;

use super::HIDDEN;

/// A table is drawn as a Markdown table only while padding its cells to their column's width
/// keeps it within this many times its cells' size (plus [`TABLE_SLACK`]); a hostile table
/// (one wide cell over many rows, or one row of many cells) would otherwise be drawn
/// rows × columns × width large. Wider tables read as their cells' text, row by row.
const TABLE_GROWTH: usize = 4;
const TABLE_SLACK: usize = 64 * 1024;

pub(super) fn converter() -> HtmlToMarkdown {
    let options = Options {
        heading_style: HeadingStyle::Atx,
        code_block_style: CodeBlockStyle::Fenced,
        bullet_list_marker: BulletListMarker::Dash,
        ..Options::default()
    };
    let mut skipped: Vec<&str> = HIDDEN.to_vec();
    skipped.extend(["meta", "link"]);
    HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(skipped)
        .add_handler(vec!["hr"], |_: &dyn Handlers, _: Element<'_>| {
            Some(HandlerResult::from("\n\n---\n\n"))
        })
        .add_handler(vec!["pre"], pre_handler)
        .add_handler(
            vec!["a"],
            |handlers: &dyn Handlers, element: Element<'_>| {
                // A link with nothing visible (an icon anchor) would read `[](#x)`.
                if visible(element.node) {
                    handlers.fallback(element)
                } else {
                    Some(HandlerResult::from(""))
                }
            },
        )
        .add_handler(
            vec!["table"],
            |handlers: &dyn Handlers, element: Element<'_>| {
                if padded_fits(element.node) {
                    handlers.fallback(element)
                } else {
                    Some(handlers.walk_children(element.node))
                }
            },
        )
        .build()
}

/// `<pre>` without a `<code>` child (syntax-highlighted READMEs) is still a code block.
fn pre_handler(handlers: &dyn Handlers, element: Element<'_>) -> Option<HandlerResult> {
    let has_code = element.node.children.borrow().iter().any(
        |child| matches!(&child.data, NodeData::Element { name, .. } if &*name.local == "code"),
    );
    if has_code {
        return handlers.fallback(element);
    }
    let mut code = String::new();
    raw_text(element.node, &mut code);
    let code = code.trim_matches('\n');
    let mut fence = "```".to_owned();
    while code.contains(fence.as_str()) {
        fence.push('`');
    }
    Some(HandlerResult::from(format!(
        "\n\n{fence}\n{code}\n{fence}\n\n"
    )))
}

/// Every node below `node` (itself included) in document order, hidden elements skipped with
/// their content; `visit` returns false to stop.
fn each_shown(node: &Rc<Node>, mut visit: impl FnMut(&Rc<Node>) -> bool) {
    let mut pending = vec![Rc::clone(node)];
    while let Some(node) = pending.pop() {
        if let NodeData::Element { name, .. } = &node.data
            && HIDDEN.contains(&&*name.local)
        {
            continue;
        }
        if !visit(&node) {
            return;
        }
        pending.extend(node.children.borrow().iter().rev().cloned());
    }
}

/// Every text below `node`, as written.
fn raw_text(node: &Rc<Node>, out: &mut String) {
    each_shown(node, |node| {
        if let NodeData::Text { contents } = &node.data {
            out.push_str(&contents.borrow());
        }
        true
    });
}

/// True when `node` shows text or an image.
fn visible(node: &Rc<Node>) -> bool {
    let mut found = false;
    each_shown(node, |node| {
        found = match &node.data {
            NodeData::Text { contents } => !contents.borrow().trim().is_empty(),
            NodeData::Element { name, .. } => &*name.local == "img",
            _ => false,
        };
        !found
    });
    found
}

/// The children of `node` that are elements named in `tags`.
fn element_children(node: &Node, tags: &[&str]) -> Vec<Rc<Node>> {
    node.children
        .borrow()
        .iter()
        .filter(|child| {
            matches!(&child.data, NodeData::Element { name, .. } if tags.contains(&&*name.local))
        })
        .cloned()
        .collect()
}

/// An upper estimate of the Markdown a cell becomes: its text and attribute values (link
/// targets, image sources) plus a few characters of markup per element.
fn cell_size(cell: &Rc<Node>) -> usize {
    let mut size = 0usize;
    each_shown(cell, |node| {
        size += match &node.data {
            NodeData::Text { contents } => contents.borrow().len(),
            NodeData::Element { attrs, .. } => {
                8 + attrs
                    .borrow()
                    .iter()
                    .map(|attr| attr.value.len())
                    .sum::<usize>()
            }
            _ => 0,
        };
        true
    });
    size
}

/// True when htmd's padded table (every cell as wide as its column's widest) stays within
/// [`TABLE_GROWTH`] times its cells' size plus [`TABLE_SLACK`]. Rows and cells are found where
/// htmd looks for them: `tr` in the table or its sections, `td`/`th` in a row.
fn padded_fits(table: &Rc<Node>) -> bool {
    let mut rows = element_children(table, &["tr"]);
    for section in element_children(table, &["thead", "tbody", "tfoot"]) {
        rows.extend(element_children(&section, &["tr"]));
    }
    let mut widths: Vec<usize> = Vec::new();
    let mut cells_size = 0usize;
    for row in &rows {
        for (column, cell) in element_children(row, &["td", "th"]).iter().enumerate() {
            let size = cell_size(cell);
            cells_size = cells_size.saturating_add(size);
            match widths.get_mut(column) {
                Some(width) => *width = (*width).max(size),
                None => widths.push(size),
            }
        }
    }
    let line = widths
        .iter()
        .fold(2usize, |line, width| line.saturating_add(width + 3));
    let padded = line.saturating_mul(rows.len() + 1);
    padded
        <= cells_size
            .saturating_mul(TABLE_GROWTH)
            .saturating_add(TABLE_SLACK)
}
