//! The match ladder: where oldString is in a file, tried rung by rung.
//!
//! 1. exact (oldString's line endings converted to the file's, as the reference does; the lines
//!    newString adds take the ending of the region they go into);
//! 2. line endings and trailing whitespace ignored;
//! 3. leading indentation ignored, with newString re-indented by the same offset;
//! 4. typographic quotes, dashes and spaces folded (then also with indentation ignored).
//!
//! Each rung must find exactly one region (all of them with `replaceAll`); a rung that finds
//! several stops the ladder, since a looser rung would find at least as many. Regions are byte
//! spans of the original text, so every byte outside them is kept. Nothing is scored: a region
//! either equals oldString under the rung's rule or it is not a match.

use schemars::JsonSchema;
use serde::Serialize;

use super::needle::{Needle, equal, find_all, prefix_end, split_indent, suffix_start};
use crate::text::lines::{Ending, Line, Lines};

/// The rung that matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Rung {
    /// Byte for byte (line endings converted to the file's).
    Exact,
    /// Ignoring line endings and trailing whitespace.
    Whitespace,
    /// Ignoring leading indentation; newString re-indented.
    Indentation,
    /// Folding typographic quotes, dashes and spaces.
    Unicode,
}

/// How newString was re-indented to the file's indentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shift {
    /// The file is indented deeper: this prefix was added to every non-blank line.
    Add(String),
    /// The file is indented shallower: this prefix was removed.
    Remove(String),
}

/// One region to replace: a byte span of the original text and what goes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) text: String,
    pub(crate) shift: Option<Shift>,
}

/// Where the ladder found oldString.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) rung: Rung,
    pub(crate) replacements: Vec<Replacement>,
}

impl Plan {
    /// The text with every replacement applied.
    pub(crate) fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for replacement in &self.replacements {
            out.push_str(&text[at..replacement.start]);
            out.push_str(&replacement.text);
            at = replacement.end;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// Why the ladder found nothing to replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    /// No rung found oldString.
    NotFound,
    /// A rung found it at these 1-based lines and `replaceAll` was not set.
    Multiple { rung: Rung, lines: Vec<usize> },
}

/// Runs the ladder for `old` → `new` over `text`.
pub(crate) fn find(text: &str, old: &str, new: &str, replace_all: bool) -> Result<Plan, Miss> {
    // Exact first, without splitting the text into lines: the common case stays a plain search.
    if let Some(plan) = decide(Rung::Exact, exact(text, old, new), replace_all, || {
        Lines::new(text)
    })? {
        return Ok(plan);
    }
    let lines = Lines::new(text);
    let old_needle = Needle::new(old);
    let new_needle = Needle::new(new);
    let loose = [
        (Rung::Whitespace, false, false),
        (Rung::Indentation, true, false),
        (Rung::Unicode, false, true),
        (Rung::Unicode, true, true),
    ];
    for (rung, indent, unicode) in loose {
        let found = windows(&lines, &old_needle, &new_needle, indent, unicode);
        if let Some(plan) = decide(rung, found, replace_all, || Lines::new(text))? {
            return Ok(plan);
        }
    }
    Err(Miss::NotFound)
}

/// The plan of a rung that found exactly one region (or any, with `replace_all`); `None` to go
/// on to the next rung; a miss when it found several.
fn decide<'a>(
    rung: Rung,
    replacements: Vec<Replacement>,
    replace_all: bool,
    lines: impl FnOnce() -> Lines<'a>,
) -> Result<Option<Plan>, Miss> {
    match replacements.len() {
        0 => Ok(None),
        1 => Ok(Some(Plan { rung, replacements })),
        _ if replace_all => Ok(Some(Plan { rung, replacements })),
        _ => {
            let lines = lines();
            let at = replacements
                .iter()
                .map(|r| lines.number_at(r.start))
                .collect();
            Err(Miss::Multiple { rung, lines: at })
        }
    }
}

/// Rung 1: exact occurrences; if none, oldString with its line endings converted to CRLF or LF.
/// newString's line endings follow [`fitted`].
fn exact(text: &str, old: &str, new: &str) -> Vec<Replacement> {
    let mut variants = vec![(old.to_owned(), new.to_owned())];
    if old.contains('\n') {
        if text.contains("\r\n") {
            variants.push((to_crlf(old), to_crlf(new)));
        }
        if old.contains("\r\n") {
            variants.push((old.replace("\r\n", "\n"), new.replace("\r\n", "\n")));
        }
    }
    for (old, new) in variants {
        let copied = endings_used(&new).within(endings_used(&old));
        let found: Vec<Replacement> = text
            .match_indices(old.as_str())
            .map(|(start, hit)| Replacement {
                start,
                end: start + hit.len(),
                text: if copied {
                    new.clone()
                } else {
                    fitted(&new, ending_at(text, start))
                },
                shift: None,
            })
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Which line endings a text uses.
#[derive(Debug, Clone, Copy)]
struct EndingsUsed {
    crlf: bool,
    lf: bool,
}

impl EndingsUsed {
    /// True when every ending used here is also used by `other`.
    fn within(self, other: Self) -> bool {
        (!self.crlf || other.crlf) && (!self.lf || other.lf)
    }
}

fn endings_used(text: &str) -> EndingsUsed {
    let bytes = text.as_bytes();
    let mut used = EndingsUsed {
        crlf: false,
        lf: false,
    };
    for at in memchr::memchr_iter(b'\n', bytes) {
        if at > 0 && bytes[at - 1] == b'\r' {
            used.crlf = true;
        } else {
            used.lf = true;
        }
    }
    used
}

/// newString with every line ending made `ending`. An exact match keeps newString as written
/// only when oldString already used every ending it uses (the model copied the file's, also in
/// a region of mixed endings); otherwise the lines it adds would not take the file's ending.
fn fitted(new: &str, ending: &str) -> String {
    let lf = new.replace("\r\n", "\n");
    if ending == "\n" {
        lf
    } else {
        lf.replace('\n', ending)
    }
}

/// The ending of the line holding byte `start` (the region's first line), or the file's
/// ([`Lines::crlf_if_any`]) when that line has none.
fn ending_at(text: &str, start: usize) -> &'static str {
    let bytes = text.as_bytes();
    match memchr::memchr(b'\n', &bytes[start..]) {
        Some(at) if start + at > 0 && bytes[start + at - 1] == b'\r' => "\r\n",
        Some(_) => "\n",
        None => Lines::new(text).crlf_if_any().as_str(),
    }
}

/// Rungs 2–4: whole-line windows (the first line may be matched by its end and the last by its
/// start) compared with trailing whitespace ignored, optionally with leading indentation
/// ignored (`indent`) and typographic characters folded (`unicode`).
fn windows(
    lines: &Lines<'_>,
    old: &Needle<'_>,
    new: &Needle<'_>,
    indent: bool,
    unicode: bool,
) -> Vec<Replacement> {
    let count = old.lines.len();
    if count == 0 || old.lines.iter().all(|line| line.trim().is_empty()) {
        return Vec::new();
    }
    if count == 1 && !old.ends_with_newline && !indent {
        return single_line(lines, old.lines[0], new, unicode);
    }
    let starts = candidates(lines, old, unicode);
    let mut found = Vec::new();
    let mut next_free = 0;
    for index in starts {
        if index < next_free || index + count > lines.len() {
            continue;
        }
        let hit = if indent {
            indented_window(lines, index, old, unicode)
        } else {
            plain_window(lines, index, old, unicode).map(|(start, end)| (start, end, None))
        };
        let Some((start, end, shift)) = hit else {
            continue;
        };
        let ending = region_ending(lines, index, count);
        let text = match &shift {
            Some(shift) => reindent(new, shift, ending),
            None => new.join(ending),
        };
        found.push(Replacement {
            start,
            end,
            text,
            shift,
        });
        next_free = index + count;
    }
    found
}

/// The line indexes where a window may start. Without folding, oldString's first non-blank
/// line (trimmed) is a substring of the matching file line under every rule, so one substring
/// search finds all candidates; with folding every line is a candidate.
fn candidates(lines: &Lines<'_>, old: &Needle<'_>, unicode: bool) -> Vec<usize> {
    let anchor = old
        .lines
        .iter()
        .enumerate()
        .find(|(_, line)| !line.trim().is_empty());
    let Some((offset, anchor)) = anchor.filter(|_| !unicode) else {
        return (0..lines.len()).collect();
    };
    let mut starts: Vec<usize> = lines
        .text()
        .match_indices(anchor.trim())
        .filter_map(|(at, _)| (lines.number_at(at) - 1).checked_sub(offset))
        .collect();
    starts.dedup();
    starts
}

/// One line of oldString without a final newline: rung 2 matches it at a line's end with its
/// trailing whitespace ignored; rung 4 also anywhere inside a line, with folded characters.
fn single_line(lines: &Lines<'_>, old: &str, new: &Needle<'_>, unicode: bool) -> Vec<Replacement> {
    let trimmed = old.trim_end();
    let had_trailing = trimmed.len() != old.len();
    let mut found = Vec::new();
    for index in 0..lines.len() {
        let Line {
            start, content_end, ..
        } = lines.span(index);
        let content = lines.content(index);
        let content_trimmed = content.trim_end();
        let spans: Vec<(usize, usize)> = if unicode && !had_trailing {
            find_all(content, trimmed, true)
        } else if had_trailing || unicode {
            suffix_start(content_trimmed, trimmed, unicode)
                .map(|at| vec![(at, content_end - start)])
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let ending = match lines.ending(index) {
            Ending::None => lines.crlf_if_any(),
            ending => ending,
        }
        .as_str();
        found.extend(spans.into_iter().map(|(from, to)| Replacement {
            start: start + from,
            end: start + to,
            text: new.join(ending),
            shift: None,
        }));
    }
    found
}

/// Window at `index` for rungs 2 and 4 without indentation: the byte span if it matches.
fn plain_window(
    lines: &Lines<'_>,
    index: usize,
    old: &Needle<'_>,
    unicode: bool,
) -> Option<(usize, usize)> {
    let count = old.lines.len();
    let last = count - 1;
    let first_line = lines.span(index);
    let first = lines.content(index).trim_end();
    let start = first_line.start + suffix_start(first, old.lines[0].trim_end(), unicode)?;
    let mut end = if count == 1 {
        first_line.content_end
    } else {
        0
    };
    for (offset, want) in old.lines.iter().enumerate().skip(1) {
        let line = lines.span(index + offset);
        let content = lines.content(index + offset);
        if offset == last && !old.ends_with_newline {
            end = if let Some(at) = prefix_end(content, want, unicode) {
                line.start + at
            } else if equal(content.trim_end(), want.trim_end(), unicode) {
                line.content_end
            } else {
                return None;
            };
        } else if !equal(content.trim_end(), want.trim_end(), unicode) {
            return None;
        }
    }
    if old.ends_with_newline {
        end = lines.span(index + last).end;
    }
    Some((start, end))
}

/// Window at `index` for rungs 3 and 4 with indentation ignored: whole lines whose
/// indentation differs from oldString's by one consistent prefix.
fn indented_window(
    lines: &Lines<'_>,
    index: usize,
    old: &Needle<'_>,
    unicode: bool,
) -> Option<(usize, usize, Option<Shift>)> {
    let count = old.lines.len();
    let mut shift: Option<Shift> = None;
    for (offset, want) in old.lines.iter().enumerate() {
        let (file_indent, file_rest) = split_indent(lines.content(index + offset));
        let (old_indent, old_rest) = split_indent(want);
        let file_rest = file_rest.trim_end();
        if !equal(file_rest, old_rest.trim_end(), unicode) {
            return None;
        }
        if file_rest.is_empty() {
            continue;
        }
        match &shift {
            None => shift = Some(derive_shift(file_indent, old_indent)?),
            Some(Shift::Add(prefix)) => {
                if file_indent.strip_prefix(prefix.as_str()) != Some(old_indent) {
                    return None;
                }
            }
            Some(Shift::Remove(prefix)) => {
                if old_indent.strip_prefix(prefix.as_str()) != Some(file_indent) {
                    return None;
                }
            }
        }
    }
    let start = lines.span(index).start;
    let last = lines.span(index + count - 1);
    let end = if old.ends_with_newline {
        last.end
    } else {
        last.content_end
    };
    Some((start, end, shift))
}

fn derive_shift(file_indent: &str, old_indent: &str) -> Option<Shift> {
    if let Some(prefix) = file_indent.strip_suffix(old_indent) {
        Some(Shift::Add(prefix.to_owned()))
    } else {
        old_indent
            .strip_suffix(file_indent)
            .map(|prefix| Shift::Remove(prefix.to_owned()))
    }
}

/// newString re-indented by `shift` and joined with `ending`; blank lines are kept as they are.
fn reindent(new: &Needle<'_>, shift: &Shift, ending: &str) -> String {
    let mut out = String::new();
    for (index, line) in new.lines.iter().enumerate() {
        if index > 0 {
            out.push_str(ending);
        }
        if line.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        match shift {
            Shift::Add(prefix) => {
                out.push_str(prefix);
                out.push_str(line);
            }
            Shift::Remove(prefix) => out.push_str(remove_indent(line, prefix)),
        }
    }
    if new.ends_with_newline {
        out.push_str(ending);
    }
    out
}

/// `line` without as much of `prefix` as it starts with.
fn remove_indent<'a>(line: &'a str, prefix: &str) -> &'a str {
    let common = line
        .char_indices()
        .zip(prefix.chars())
        .take_while(|((_, a), b)| a == b)
        .last()
        .map_or(0, |((at, c), _)| at + c.len_utf8());
    &line[common..]
}

/// The ending newString's lines get: the region's first line ending, else the file's.
fn region_ending(lines: &Lines<'_>, index: usize, count: usize) -> &'static str {
    (index..index + count)
        .map(|i| lines.ending(i))
        .find(|ending| *ending != Ending::None)
        .unwrap_or_else(|| lines.crlf_if_any())
        .as_str()
}

#[cfg(test)]
mod tests;
