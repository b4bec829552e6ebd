//! Jupyter notebooks (`.ipynb`): the cells in order, numbered, with their type, source and
//! outputs; `offset` and `limit` count cells. Image outputs are attached as images, within the
//! host's bound and a few per page.

use std::fmt::Write as _;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tackle_tool_core::{Content, Rendered};

use super::super::render::page_lines;
use super::super::{NotebookOutput, ReadOutput};
use super::image::{mime_name, prepare};
use super::{ReadOptions, Span};

/// Images attached from one page of a notebook at most; the rest are named with the offset
/// that shows them.
const MAX_IMAGES: usize = 8;

/// Image output types a notebook stores as base64 and models take.
const IMAGE_MIMES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

#[derive(Deserialize)]
struct Notebook {
    cells: Vec<Cell>,
}

#[derive(Deserialize)]
struct Cell {
    cell_type: CellType,
    #[serde(default)]
    id: Option<String>,
    source: MultiLine,
    #[serde(default)]
    outputs: Vec<Output>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum CellType {
    Code,
    Markdown,
    Raw,
}

impl CellType {
    fn name(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Markdown => "markdown",
            Self::Raw => "raw",
        }
    }
}

/// nbformat stores text as one string or as a list of lines (each keeping its newline).
#[derive(Deserialize)]
#[serde(untagged, expecting = "expected a string or an array of strings")]
enum MultiLine {
    One(String),
    Lines(Vec<String>),
}

impl MultiLine {
    fn text(&self) -> String {
        match self {
            Self::One(text) => text.clone(),
            Self::Lines(lines) => lines.concat(),
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "output_type", rename_all = "snake_case")]
enum Output {
    Stream {
        text: MultiLine,
    },
    ExecuteResult {
        data: Map<String, Value>,
    },
    DisplayData {
        data: Map<String, Value>,
    },
    Error {
        ename: String,
        evalue: String,
        #[serde(default)]
        traceback: Vec<String>,
    },
}

/// What one page of cells attaches.
struct Images<'a> {
    options: &'a ReadOptions,
    resource: &'a str,
    files: Vec<Attached>,
    bytes: usize,
}

/// One page of a notebook as the worker sends it back: the model text, the
/// structured output's counts and the images attached.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct NotebookPage {
    path: String,
    text: String,
    offset: u64,
    cells: usize,
    total_cells: u64,
    next: Option<u64>,
    images: Vec<Attached>,
}

/// An image output attached after the text.
#[derive(Debug, Serialize, Deserialize)]
struct Attached {
    mime: String,
    #[serde(with = "super::job::base64_bytes")]
    data: Vec<u8>,
    name: String,
}

/// `Notebook could not be parsed: <resource>: <why>`.
pub(crate) fn unparsable(resource: &str, why: &str) -> String {
    format!("Notebook could not be parsed: {resource}: {why}")
}

impl NotebookPage {
    /// The result the model reads.
    pub(crate) fn render(self) -> Rendered<ReadOutput> {
        let output = ReadOutput::Notebook(NotebookOutput {
            path: self.path,
            offset: self.offset,
            cells: self.cells,
            total_cells: self.total_cells,
            truncated: self.next.is_some(),
            next: self.next,
            images: self.images.len(),
        });
        let mut content = vec![Content::text(self.text)];
        content.extend(self.images.into_iter().map(|image| Content::File {
            mime: image.mime,
            data: image.data,
            name: Some(image.name),
        }));
        Rendered::new(output, content)
    }
}

/// A page of the notebook `data` at `resource`, or the whole message of why there is none.
pub(crate) fn page(
    options: &ReadOptions,
    resource: &str,
    data: &[u8],
    span: Span,
) -> Result<NotebookPage, String> {
    let notebook = parse(data).map_err(|problem| unparsable(resource, &problem))?;
    let total = notebook.cells.len() as u64;
    if span.offset > total.max(1) {
        return Err(format!(
            "Offset {} is out of range for this file ({total} cells)",
            span.offset
        ));
    }
    let max_lines = page_lines(&span.budget);
    let mut images = Images {
        options,
        resource,
        files: Vec::new(),
        bytes: 0,
    };
    let mut body = String::new();
    let (mut lines, mut shown) = (0usize, 0u64);
    let first = usize::try_from(span.offset - 1).unwrap_or(usize::MAX);
    for (index, cell) in notebook.cells.iter().enumerate().skip(first) {
        if shown >= span.limit {
            break;
        }
        let number = index as u64 + 1;
        let rendered = render_cell(number, cell, &mut images);
        let cell_lines = rendered.lines().count();
        // The first cell is always shown: settle's bound keeps what does not fit.
        if shown > 0
            && (lines + cell_lines > max_lines
                || body.len() + rendered.len() > span.budget.max_bytes)
        {
            break;
        }
        lines += cell_lines;
        body.push_str(&rendered);
        body.push('\n');
        shown += 1;
    }
    let last = span.offset + shown - u64::from(shown > 0);
    let next = (last < total).then_some(last + 1);
    let mut out = format!("<path>{resource}</path>\n<type>notebook</type>\n<content>\n");
    out.push_str(&body);
    match next {
        Some(next) if last == span.offset => {
            let _ = write!(
                out,
                "(Showing cell {last} of {total}. Use offset={next} to continue.)"
            );
        }
        Some(next) => {
            let _ = write!(
                out,
                "(Showing cells {}-{last} of {total}. Use offset={next} to continue.)",
                span.offset
            );
        }
        None => {
            let _ = write!(out, "(End of notebook - total {total} cells)");
        }
    }
    out.push_str(
        "\n(Cell N is entry N of the file's \"cells\" array. To change a cell with edit, quote \
         its source as the file stores it: a JSON array of strings, one per line, escaped.)\n\
         </content>",
    );
    Ok(NotebookPage {
        path: resource.to_owned(),
        text: out,
        offset: span.offset,
        cells: usize::try_from(shown).unwrap_or(usize::MAX),
        total_cells: total,
        next,
        images: images.files,
    })
}

/// The notebook, or the JSON problem and where it is (`cells[2].source: ...`).
fn parse(data: &[u8]) -> Result<Notebook, String> {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut json = serde_json::Deserializer::from_slice(data);
    serde_path_to_error::deserialize(&mut json).map_err(|err| {
        let path = err.path().to_string();
        if path == "." {
            err.into_inner().to_string()
        } else {
            format!("{path}: {}", err.into_inner())
        }
    })
}

fn render_cell(number: u64, cell: &Cell, images: &mut Images<'_>) -> String {
    let mut out = format!("Cell {number} [{}]", cell.cell_type.name());
    if let Some(id) = &cell.id {
        let _ = write!(out, " id={id}");
    }
    out.push('\n');
    push_text(&mut out, &cell.source.text());
    for (index, output) in cell.outputs.iter().enumerate() {
        match output {
            Output::Stream { text } => {
                out.push_str("Output:\n");
                push_text(&mut out, &text.text());
            }
            Output::ExecuteResult { data } | Output::DisplayData { data } => {
                let label = format!("cell {number}, output {}", index + 1);
                render_data(&mut out, data, &label, images);
            }
            Output::Error {
                ename,
                evalue,
                traceback,
            } => {
                let _ = writeln!(out, "Error: {ename}: {evalue}");
                for line in traceback {
                    push_text(&mut out, &strip_ansi(line));
                }
            }
        }
    }
    out
}

/// A rich output: its image (attached) or else its plain text.
fn render_data(out: &mut String, data: &Map<String, Value>, label: &str, images: &mut Images<'_>) {
    if let Some((mime, value)) = IMAGE_MIMES
        .iter()
        .find_map(|mime| data.get(*mime).map(|value| (*mime, value)))
    {
        let _ = writeln!(out, "Output [{mime}]: {}", images.attach(value, label));
        return;
    }
    match data.get("text/plain").and_then(text_of) {
        Some(text) => {
            out.push_str("Output:\n");
            push_text(out, &text);
        }
        None => {
            let kinds: Vec<&str> = data.keys().map(String::as_str).collect();
            let _ = writeln!(
                out,
                "Output [{}]: not shown (no text form)",
                kinds.join(", ")
            );
        }
    }
}

impl Images<'_> {
    /// Attaches the base64 image `value`; returns what the cell text says about it.
    fn attach(&mut self, value: &Value, label: &str) -> String {
        let Some(encoded) = text_of(value) else {
            return "not shown (not a base64 string)".to_owned();
        };
        let compact: String = encoded.split_whitespace().collect();
        let bytes = match base64::engine::general_purpose::STANDARD.decode(compact) {
            Ok(bytes) => bytes,
            Err(err) => return format!("not shown (invalid base64: {err})"),
        };
        if !self.options.image_input() {
            return match super::image::describe(&bytes) {
                Ok(size) => format!(
                    "a {}x{} px {} image, not shown: images cannot be sent to this model",
                    size.width,
                    size.height,
                    mime_name(&size.mime)
                ),
                Err(reason) => format!("not shown (the image could not be decoded: {reason})"),
            };
        }
        let bound = self.options.image_bound();
        if self.files.len() >= MAX_IMAGES || self.bytes >= bound.max_bytes() {
            return "not attached: this page already carries as many images as it may; read \
                    this cell alone (offset, limit=1) to see it"
                .to_owned();
        }
        match prepare(&bytes, &bound) {
            Ok(prepared) if self.bytes + prepared.data.len() <= bound.max_bytes() => {
                self.bytes += prepared.data.len();
                self.files.push(Attached {
                    mime: prepared.sent.mime.clone(),
                    data: prepared.data,
                    name: format!("{} ({label})", self.resource),
                });
                format!(
                    "attached as image {} ({}x{} px)",
                    self.files.len(),
                    prepared.sent.width,
                    prepared.sent.height
                )
            }
            Ok(_) => "not attached: this page's images already fill the size bound; read this \
                      cell alone (offset, limit=1) to see it"
                .to_owned(),
            Err(reason) => format!("not shown (the image could not be decoded: {reason})"),
        }
    }
}

fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(lines) => lines
            .iter()
            .map(|line| line.as_str())
            .collect::<Option<Vec<&str>>>()
            .map(|lines| lines.concat()),
        _ => None,
    }
}

/// `text` on its own lines, ending with a newline.
fn push_text(out: &mut String, text: &str) {
    out.push_str(text);
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
}

/// `text` without terminal escape sequences (tracebacks colour their lines).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // CSI: ESC [ parameters… final byte in @..~; any other escape drops one character.
        if chars.next() == Some('[') {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_escapes_are_dropped() {
        assert_eq!(
            strip_ansi("\u{1b}[0;31mValueError\u{1b}[0m: bad"),
            "ValueError: bad"
        );
    }

    #[test]
    fn a_problem_names_its_place() {
        let err = parse(br#"{"cells": [{"cell_type": "code", "source": 5}]}"#)
            .err()
            .unwrap_or_default();
        assert!(err.starts_with("cells[0].source: "), "{err}");
    }
}
