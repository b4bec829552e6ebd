//! What the edit tool tells the model: actionable misses and the short success diff (ED8).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::ladder::{Rung, Shift};
use super::needle::Needle;
use crate::text::lines::Lines;

/// Lines of each side the success preview shows (reference ED8).
const PREVIEW_LINES: usize = 6;
/// Characters of one preview line (reference ED8).
const PREVIEW_CHARS: usize = 240;
/// Lines of the closest region a miss shows.
const REGION_LINES: usize = 12;
/// Line numbers a "multiple matches" error lists.
const LISTED_MATCHES: usize = 20;

const CONTRACT: &str = "It must match exactly, except that line endings, trailing whitespace, a \
consistent indentation offset and typographic quotes, dashes and spaces may differ.";

/// `Could not find oldString ...` with the closest region and its first difference.
pub(crate) fn not_found(lines: &Lines<'_>, old: &str) -> String {
    let mut message = format!("Could not find oldString in the file. {CONTRACT}");
    let needle = Needle::new(old);
    let Some(start) = closest(lines, &needle) else {
        return message;
    };
    let count = needle.lines.len().max(1);
    let end = (start + count).min(lines.len());
    let _ = write!(
        message,
        "\nThe closest region is line{} {}:",
        if end - start == 1 { "" } else { "s" },
        span(start + 1, end)
    );
    for index in start..end.min(start + REGION_LINES) {
        let _ = write!(message, "\n{}: {}", index + 1, lines.content(index));
    }
    if end - start > REGION_LINES {
        message.push_str("\n...");
    }
    if let Some(difference) = first_difference(lines, start, &needle) {
        message.push('\n');
        message.push_str(&difference);
    }
    message
}

/// `Found N ... matches` with the lines they are on.
pub(crate) fn multiple(rung: Rung, at: &[usize]) -> String {
    let kind = match rung {
        Rung::Exact => "exact matches",
        Rung::Whitespace => "matches (ignoring line endings and trailing whitespace)",
        Rung::Indentation => "matches (ignoring indentation)",
        Rung::Unicode => "matches (ignoring typographic punctuation)",
    };
    let mut lines = at.to_vec();
    lines.dedup();
    let mut listed: Vec<String> = lines
        .iter()
        .take(LISTED_MATCHES)
        .map(ToString::to_string)
        .collect();
    if lines.len() > LISTED_MATCHES {
        listed.push(format!("and {} more", lines.len() - LISTED_MATCHES));
    }
    format!(
        "Found {} {kind} for oldString, at line{} {}. Provide more surrounding context to make it \
         unique, or set replaceAll to true to replace every occurrence.",
        at.len(),
        if lines.len() == 1 { "" } else { "s" },
        listed.join(", ")
    )
}

/// The sentence saying how a non-exact match was made, if it was.
pub(crate) fn rung_note(rung: Rung, shift: Option<&Shift>) -> Option<String> {
    let reindent = shift.map(|shift| match shift {
        Shift::Add(prefix) => format!(
            "; newString was re-indented by adding {}",
            indent_words(prefix)
        ),
        Shift::Remove(prefix) => format!(
            "; newString was re-indented by removing {}",
            indent_words(prefix)
        ),
    });
    let reindent = reindent.unwrap_or_default();
    match rung {
        Rung::Exact => None,
        Rung::Whitespace => {
            Some("Matched ignoring line endings and trailing whitespace.".to_owned())
        }
        Rung::Indentation => Some(format!("Matched ignoring indentation{reindent}.")),
        Rung::Unicode => Some(format!(
            "Matched ignoring typographic quotes, dashes and spaces{reindent}."
        )),
    }
}

/// The ED8 preview: up to 6 removed and 6 added lines in a diff block.
pub(crate) fn preview(removed: &str, added: &str) -> String {
    let mut out = String::from("```diff\n");
    side(&mut out, '-', removed);
    side(&mut out, '+', added);
    out.push_str("```");
    out
}

fn side(out: &mut String, sign: char, text: &str) {
    if text.is_empty() {
        return;
    }
    let needle = Needle::new(text);
    for line in needle.lines.iter().take(PREVIEW_LINES) {
        out.push(sign);
        match line.char_indices().nth(PREVIEW_CHARS) {
            Some((at, _)) => {
                out.push_str(&line[..at]);
                out.push_str("...");
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    if needle.lines.len() > PREVIEW_LINES {
        out.push(sign);
        out.push_str("...\n");
    }
}

fn span(first: usize, last: usize) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

fn indent_words(prefix: &str) -> String {
    let tabs = prefix.matches('\t').count();
    let spaces = prefix.len() - tabs;
    let word = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match (tabs, spaces) {
        (0, n) => word(n, "space", "spaces"),
        (t, 0) => word(t, "tab", "tabs"),
        (t, n) => format!(
            "{} and {}",
            word(t, "tab", "tabs"),
            word(n, "space", "spaces")
        ),
    }
}

/// The 0-based start of the region most like `needle`: the window where the most of its lines
/// appear (trimmed), else the line sharing the longest start with its first non-blank line.
fn closest(lines: &Lines<'_>, needle: &Needle<'_>) -> Option<usize> {
    let mut wanted: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, line) in needle.lines.iter().enumerate() {
        let trimmed = line.trim();
        if !trimmed.is_empty() {
            wanted.entry(trimmed).or_default().push(index);
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for index in 0..lines.len() {
        if let Some(offsets) = wanted.get(lines.content(index).trim()) {
            for &offset in offsets.iter().filter(|&&offset| offset <= index) {
                *votes.entry(index - offset).or_default() += 1;
            }
        }
    }
    if let Some((&start, _)) = votes
        .iter()
        .max_by(|(s1, v1), (s2, v2)| v1.cmp(v2).then(s2.cmp(s1)))
    {
        return Some(start);
    }
    let (offset, first) = needle
        .lines
        .iter()
        .enumerate()
        .find(|(_, line)| !line.trim().is_empty())?;
    let first = first.trim();
    let (index, shared) = (0..lines.len())
        .map(|index| (index, common_prefix(lines.content(index).trim(), first)))
        .max_by(|(i1, n1), (i2, n2)| n1.cmp(n2).then(i2.cmp(i1)))?;
    (shared >= 3 && shared * 2 >= first.chars().count()).then(|| index.saturating_sub(offset))
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// `First difference at line N, column C: ...` with both lines, whitespace made visible.
fn first_difference(lines: &Lines<'_>, start: usize, needle: &Needle<'_>) -> Option<String> {
    for (offset, want) in needle.lines.iter().enumerate() {
        let index = start + offset;
        if index >= lines.len() {
            return Some(format!(
                "The file ends at line {}, but oldString continues with: {}",
                lines.len(),
                visible(want)
            ));
        }
        let have = lines.content(index);
        if have == *want {
            continue;
        }
        let column = common_prefix(have, want);
        return Some(format!(
            "First difference at line {}, column {}: the file has {}, oldString has {}.\n  file:      {}\n  oldString: {}",
            index + 1,
            column + 1,
            describe(have.chars().nth(column)),
            describe(want.chars().nth(column)),
            visible(have),
            visible(want)
        ));
    }
    None
}

fn describe(c: Option<char>) -> String {
    match c {
        None => "the end of the line".to_owned(),
        Some(' ') => "a space".to_owned(),
        Some('\t') => "a tab".to_owned(),
        Some(c) if c.is_whitespace() || c.is_control() || c == '\u{FEFF}' => {
            format!("U+{:04X}", u32::from(c))
        }
        Some(c) if c.is_ascii() => format!("'{c}'"),
        Some(c) => format!("'{c}' (U+{:04X})", u32::from(c)),
    }
}

/// A line with spaces as `·`, tabs as `→` and other invisible characters as `<U+XXXX>`.
fn visible(line: &str) -> String {
    let mut out = String::new();
    for (count, c) in line.chars().enumerate() {
        if count == PREVIEW_CHARS {
            out.push_str("...");
            break;
        }
        match c {
            ' ' => out.push('·'),
            '\t' => out.push('→'),
            c if c.is_whitespace() || c.is_control() || c == '\u{FEFF}' => {
                let _ = write!(out, "<U+{:04X}>", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_follows_ed8() {
        assert_eq!(preview("before", "after"), "```diff\n-before\n+after\n```");
        let many = (1..=8)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let shown = preview(&many, "");
        assert_eq!(shown, "```diff\n-1\n-2\n-3\n-4\n-5\n-6\n-...\n```");
        let long = "x".repeat(300);
        assert_eq!(
            preview("", &long),
            format!("```diff\n+{}...\n```", "x".repeat(240))
        );
    }

    #[test]
    fn indentation_words() {
        assert_eq!(indent_words("    "), "4 spaces");
        assert_eq!(indent_words("\t"), "1 tab");
        assert_eq!(indent_words("\t  "), "1 tab and 2 spaces");
    }
}
