//! The patch grammar, parsed leniently where models are sloppy (reference PA1–PA3, codex's
//! lenient mode).
//!
//! Accepted beyond the strict grammar: a heredoc wrapper (`<<'EOF' … EOF`, optionally behind
//! `cat` or `apply_patch`), blank lines around the patch, surrounding whitespace on `***` marker
//! lines, CRLF line breaks, a first chunk without `@@`, several `@@ <context>` lines in a row
//! (nested anchors), a unified-diff range header (`@@ -1,3 +1,4 @@ fn x`, whose trailing text is
//! the context), blank lines inside a chunk (empty context lines) and inside an added file
//! (empty lines). Everything else is an error naming the 1-based line of `patchText` and the
//! offending line.

use std::fmt;

/// A parsed patch: its hunks in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Patch {
    pub(crate) hunks: Vec<Hunk>,
}

/// One `*** Add/Delete/Update File:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// The line of its header in `patchText` (1-based).
    pub(crate) line: usize,
    pub(crate) kind: HunkKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HunkKind {
    /// A new file with `lines` (each written with a line break).
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    /// Chunks may be empty only when the hunk moves the file.
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

impl Hunk {
    /// The path the hunk names first (the source of a move).
    pub(crate) fn path(&self) -> &str {
        match &self.kind {
            HunkKind::Add { path, .. }
            | HunkKind::Delete { path }
            | HunkKind::Update { path, .. } => path,
        }
    }
}

/// One change inside an update: optional anchors, then its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The line in `patchText` where the chunk starts (1-based).
    pub(crate) line: usize,
    /// `@@ <context>` anchors, located in order before the chunk's old lines.
    pub(crate) contexts: Vec<String>,
    pub(crate) ops: Vec<Op>,
    /// `*** End of File` closed the chunk: its old lines end the file.
    pub(crate) end_of_file: bool,
}

/// A chunk line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// ` line`: in both the old and the new text.
    Keep(String),
    /// `-line`: only in the old text.
    Remove(String),
    /// `+line`: only in the new text.
    Insert(String),
}

impl Chunk {
    /// The lines the file holds before the chunk (kept and removed).
    pub(crate) fn old_lines(&self) -> impl Iterator<Item = &str> {
        self.ops.iter().filter_map(|op| match op {
            Op::Keep(s) | Op::Remove(s) => Some(s.as_str()),
            Op::Insert(_) => None,
        })
    }

    /// The lines the file holds after the chunk (kept and inserted).
    pub(crate) fn new_lines(&self) -> impl Iterator<Item = &str> {
        self.ops.iter().filter_map(|op| match op {
            Op::Keep(s) | Op::Insert(s) => Some(s.as_str()),
            Op::Remove(_) => None,
        })
    }
}

/// A syntax error: the line number in `patchText`, the offending line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
const HUNK_HEADERS: &str = "'*** Add File: <path>', '*** Delete File: <path>', '*** Update File: <path>' or '*** End Patch'";

/// Parses `text` (the whole `patchText`).
pub(crate) fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<Line<'_>> = text
        .split('\n')
        .enumerate()
        .map(|(index, raw)| Line {
            number: index + 1,
            text: raw.strip_suffix('\r').unwrap_or(raw),
        })
        .collect();
    let lines = unwrap_heredoc(trim_blank(&lines));
    let Some((first, body)) = lines.split_first() else {
        return Err(ParseError {
            line: 1,
            message: format!("the patch is empty; it must start with '{BEGIN}'"),
        });
    };
    if first.text.trim() != BEGIN {
        return Err(first.error(format!(
            "the first line of the patch must be '{BEGIN}', got {}",
            quoted(first.text)
        )));
    }
    Parser {
        lines: body,
        at: 0,
        last_line: first.number,
    }
    .patch()
}

#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    number: usize,
    text: &'a str,
}

impl Line<'_> {
    fn error(&self, message: String) -> ParseError {
        ParseError {
            line: self.number,
            message,
        }
    }

    fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The text after a marker `prefix`, matched with surrounding whitespace ignored.
    fn marker<'b>(&'b self, prefix: &str) -> Option<&'b str> {
        self.text.trim().strip_prefix(prefix).map(str::trim)
    }
}

fn trim_blank<'s, 'a>(lines: &'s [Line<'a>]) -> &'s [Line<'a>] {
    let start = lines
        .iter()
        .position(|l| !l.is_blank())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_blank())
        .map_or(start, |i| i + 1);
    &lines[start..end]
}

/// Strips `[cat|apply_patch] <<['"]TAG['"]` … `TAG` around the patch.
fn unwrap_heredoc<'s, 'a>(lines: &'s [Line<'a>]) -> &'s [Line<'a>] {
    if let [first, inner @ .., last] = lines
        && let Some(tag) = heredoc_tag(first.text)
        && last.text.trim() == tag
    {
        return trim_blank(inner);
    }
    lines
}

fn heredoc_tag(line: &str) -> Option<&str> {
    let mut rest = line.trim();
    for command in ["cat", "apply_patch", "applypatch"] {
        if let Some(after) = rest.strip_prefix(command)
            && after.starts_with(char::is_whitespace)
        {
            rest = after.trim_start();
            break;
        }
    }
    let rest = rest.strip_prefix("<<")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let (quote, rest) = match rest.chars().next() {
        Some(q @ ('\'' | '"')) => (Some(q), &rest[1..]),
        _ => (None, rest),
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (tag, rest) = rest.split_at(end);
    let rest = match quote {
        Some(q) => rest.strip_prefix(q)?,
        None => rest,
    };
    (!tag.is_empty() && rest.trim().is_empty()).then_some(tag)
}

fn quoted(line: &str) -> String {
    format!("'{line}'")
}

struct Parser<'s, 'a> {
    lines: &'s [Line<'a>],
    at: usize,
    /// The last line seen, for "the patch ends here" errors.
    last_line: usize,
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    fn next(&mut self) -> Option<Line<'a>> {
        let line = self.peek()?;
        self.at += 1;
        self.last_line = line.number;
        Some(line)
    }

    fn patch(mut self) -> Result<Patch, ParseError> {
        let mut hunks = Vec::new();
        loop {
            let Some(line) = self.next() else {
                return Err(ParseError {
                    line: self.last_line,
                    message: format!("the patch ends without '{END}'"),
                });
            };
            if line.is_blank() {
                continue;
            }
            if line.text.trim() == END {
                break;
            }
            hunks.push(self.hunk(line)?);
        }
        if let Some(extra) = self.lines[self.at..].iter().find(|l| !l.is_blank()) {
            return Err(extra.error(format!(
                "unexpected text after '{END}': {}",
                quoted(extra.text)
            )));
        }
        Ok(Patch { hunks })
    }

    fn hunk(&mut self, header: Line<'a>) -> Result<Hunk, ParseError> {
        let path = |rest: &str, what: &str| {
            if rest.is_empty() {
                Err(header.error(format!("Invalid {what} file path: {}", quoted(header.text))))
            } else {
                Ok(rest.to_owned())
            }
        };
        let kind = if let Some(rest) = header.marker(ADD) {
            HunkKind::Add {
                path: path(rest, "add")?,
                lines: self.add_lines()?,
            }
        } else if let Some(rest) = header.marker(DELETE) {
            HunkKind::Delete {
                path: path(rest, "delete")?,
            }
        } else if let Some(rest) = header.marker(UPDATE) {
            let path = path(rest, "update")?;
            self.update(header, path)?
        } else {
            return Err(header.error(format!(
                "Invalid patch line: {}. Expected {HUNK_HEADERS}",
                quoted(header.text)
            )));
        };
        Ok(Hunk {
            line: header.number,
            kind,
        })
    }

    /// The `+` lines of an added file. Blank lines between them are empty lines of the file;
    /// blank lines after the last one separate hunks.
    fn add_lines(&mut self) -> Result<Vec<String>, ParseError> {
        let mut lines = Vec::new();
        let mut blanks = 0;
        while let Some(line) = self.peek() {
            if line.text.trim_start().starts_with("***") {
                break;
            }
            self.next();
            if let Some(content) = line.text.strip_prefix('+') {
                lines.extend(std::iter::repeat_n(String::new(), blanks));
                blanks = 0;
                lines.push(content.to_owned());
            } else if line.is_blank() {
                blanks += 1;
            } else {
                return Err(line.error(format!(
                    "Invalid add file line: {}. Every line of an added file starts with '+'",
                    quoted(line.text)
                )));
            }
        }
        Ok(lines)
    }

    fn update(&mut self, header: Line<'a>, path: String) -> Result<HunkKind, ParseError> {
        let mut move_to = None;
        while let Some(line) = self.peek() {
            if line.is_blank() {
                self.next();
                continue;
            }
            if let Some(rest) = line.marker(MOVE) {
                self.next();
                if rest.is_empty() {
                    return Err(
                        line.error(format!("Invalid move file path: {}", quoted(line.text)))
                    );
                }
                move_to = Some(rest.to_owned());
            }
            break;
        }
        let chunks = self.chunks()?;
        if chunks.is_empty() && move_to.is_none() {
            return Err(header.error(format!(
                "Invalid update hunk for {path}: expected at least one @@ chunk"
            )));
        }
        Ok(HunkKind::Update {
            path,
            move_to,
            chunks,
        })
    }

    fn chunks(&mut self) -> Result<Vec<Chunk>, ParseError> {
        let mut chunks: Vec<Chunk> = Vec::new();
        // The chunk being filled, and whether it may still take lines.
        let mut open: Option<Chunk> = None;
        let close = |open: &mut Option<Chunk>, chunks: &mut Vec<Chunk>| -> Result<(), ParseError> {
            if let Some(chunk) = open.take() {
                if chunk.ops.is_empty() {
                    return Err(ParseError {
                        line: chunk.line,
                        message: "the @@ chunk has no lines; each line starts with ' ', '-' or '+'"
                            .to_owned(),
                    });
                }
                chunks.push(chunk);
            }
            Ok(())
        };
        while let Some(line) = self.peek() {
            let trimmed = line.text.trim();
            if trimmed == END_OF_FILE {
                self.next();
                match open.as_mut() {
                    Some(chunk) if !chunk.ops.is_empty() => chunk.end_of_file = true,
                    _ => {
                        return Err(
                            line.error(format!("'{END_OF_FILE}' must follow the lines of a chunk"))
                        );
                    }
                }
                close(&mut open, &mut chunks)?;
                continue;
            }
            if trimmed.starts_with("*** ") || trimmed == "***" {
                break;
            }
            self.next();
            if let Some(rest) = line.text.strip_prefix("@@") {
                let context = context_of(rest);
                match open.as_mut() {
                    Some(chunk) if chunk.ops.is_empty() => chunk.contexts.extend(context),
                    _ => {
                        close(&mut open, &mut chunks)?;
                        open = Some(Chunk {
                            line: line.number,
                            contexts: context.into_iter().collect(),
                            ops: Vec::new(),
                            end_of_file: false,
                        });
                    }
                }
                continue;
            }
            let op = match line.text.chars().next() {
                Some(' ') => Op::Keep(line.text[1..].to_owned()),
                Some('-') => Op::Remove(line.text[1..].to_owned()),
                Some('+') => Op::Insert(line.text[1..].to_owned()),
                None => Op::Keep(String::new()),
                Some(_) if line.is_blank() => Op::Keep(String::new()),
                Some(_) => {
                    return Err(line.error(format!(
                        "Invalid update chunk line: {}. Every line of a chunk starts with ' ' (context), '-' (removed) or '+' (added)",
                        quoted(line.text)
                    )));
                }
            };
            match open.as_mut() {
                Some(chunk) => chunk.ops.push(op),
                // Blank lines between chunks (or after `*** End of File`) are separators.
                None if matches!(&op, Op::Keep(s) if s.is_empty()) => {}
                // The first chunk may omit its `@@` line; later ones may not.
                None if chunks.is_empty() => {
                    open = Some(Chunk {
                        line: line.number,
                        contexts: Vec::new(),
                        ops: vec![op],
                        end_of_file: false,
                    });
                }
                None => {
                    return Err(line.error(format!(
                        "Invalid update file line: {}. A new chunk must start with '@@' after '{END_OF_FILE}'",
                        quoted(line.text)
                    )));
                }
            }
        }
        close(&mut open, &mut chunks)?;
        Ok(chunks)
    }
}

/// The context text of an `@@` line: the text after `@@`, or after a unified-diff range header
/// (`@@ -12,7 +12,8 @@ fn name`).
fn context_of(rest: &str) -> Option<String> {
    let rest = rest.trim();
    let rest = strip_range_header(rest).unwrap_or(rest);
    (!rest.is_empty()).then(|| rest.to_owned())
}

fn strip_range_header(rest: &str) -> Option<&str> {
    let mut words = rest.splitn(3, ' ');
    let old = words.next()?.strip_prefix('-')?;
    let new = words.next()?.strip_prefix('+')?;
    let is_range = |s: &str| {
        !s.is_empty()
            && s.split(',').count() <= 2
            && s.split(',')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if !is_range(old) || !is_range(new) {
        return None;
    }
    let tail = words.next().unwrap_or("");
    Some(tail.strip_prefix("@@").map_or(tail, str::trim))
}

#[cfg(test)]
mod tests;
