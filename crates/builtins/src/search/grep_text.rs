//! What the model reads of a grep: the legacy V1 text for plain matches (reference GR6),
//! ripgrep's own line format when context is shown, and file lists for the other modes.

use std::fmt::Write as _;
use std::time::Duration;

use super::grep_output::{GrepMatch, GrepOutput};
use super::hits::Mode;
use super::report::{self, Base, plural};

/// How the output was asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) mode: Mode,
    /// Context lines were asked for: lines are printed as ripgrep prints them.
    pub(crate) context: bool,
    pub(crate) limit: usize,
    pub(crate) budget: Duration,
}

/// The model text; `shown` is the number of results shown (matches, or files).
pub(crate) fn model_text(out: &GrepOutput, base: &Base, shown: usize, shape: Shape) -> String {
    let mut text = String::new();
    if shown == 0 {
        text.push_str("No files found");
    } else {
        match shape.mode {
            Mode::Content if shape.context => with_context(&mut text, out, base, shown),
            Mode::Content => plain(&mut text, out, base, shown),
            Mode::Files => {
                let _ = write!(text, "Found {}", plural(shown, "file", "files"));
                for file in &out.files {
                    text.push('\n');
                    base.push_absolute(&mut text, &file.path);
                }
            }
            Mode::Count => {
                let counted: usize = out.files.iter().filter_map(|f| f.count).sum();
                let _ = write!(
                    text,
                    "Found {counted} matches in {}",
                    plural(shown, "file", "files")
                );
                for file in &out.files {
                    text.push('\n');
                    base.push_absolute(&mut text, &file.path);
                    let _ = write!(text, ":{}", file.count.unwrap_or(0));
                }
            }
        }
    }
    if shown == 0 && out.binary_files > 0 {
        let _ = write!(
            text,
            "\n\n({} not searched: binary data.)",
            plural(out.binary_files, "file was", "files were")
        );
    }
    if out.truncated {
        let _ = match shape.mode {
            Mode::Content => write!(
                text,
                "\n\n(Showing {shown} of {} matches in {}: limit={} reached. Use a larger limit \
                 for more, or refine the pattern, path or include.)",
                out.total_matches,
                plural(out.total_files, "file", "files"),
                shape.limit,
            ),
            Mode::Files | Mode::Count => write!(
                text,
                "\n\n(Showing {shown} of {} files: limit={} reached. Use a larger limit for \
                 more, or refine the pattern, path or include.)",
                out.total_files, shape.limit,
            ),
        };
    }
    report::notes(&mut text, &out.skipped, base, out.incomplete, shape.budget);
    text
}

/// GR6 and the legacy V1 notes: `Found N matches`, then per file its absolute path and
/// `  Line n: text` lines, groups separated by a blank line.
fn plain(text: &mut String, out: &GrepOutput, base: &Base, shown: usize) {
    let _ = write!(text, "Found {shown} matches");
    if out.truncated {
        text.push_str(" (more matches available)");
    }
    let mut current: Option<&str> = None;
    for m in &out.matches {
        if current != Some(m.path.as_str()) {
            if current.is_some() {
                text.push('\n');
            }
            let _ = write!(text, "\n{}:", base.absolute(&m.path));
            current = Some(&m.path);
        }
        let _ = write!(text, "\n  Line {}: ", m.line);
        push_line(text, m);
    }
}

/// `Found N matches`, then ripgrep's lines: `path:n:match`, `path-n-context`, and `--`
/// between groups that do not touch (also between files).
fn with_context(text: &mut String, out: &GrepOutput, base: &Base, shown: usize) {
    let _ = write!(text, "Found {shown} matches");
    if out.truncated {
        text.push_str(" (more matches available)");
    }
    // Both lists are in file order, and by line within a file: merge them.
    let (mut matches, mut context) = (out.matches.iter().peekable(), out.context.iter().peekable());
    let mut previous: Option<(&str, u64)> = None;
    loop {
        let (line, separator) = match (matches.peek(), context.peek()) {
            (Some(m), Some(c)) if c.path == m.path && c.line < m.line => (context.next(), '-'),
            (Some(m), Some(c))
                if previous.is_some_and(|(path, _)| path == c.path && path != m.path) =>
            {
                (context.next(), '-')
            }
            (Some(_), _) => (matches.next(), ':'),
            (None, Some(_)) => (context.next(), '-'),
            (None, None) => break,
        };
        let Some(line) = line else { break };
        if let Some((path, number)) = previous
            && (path != line.path || number + 1 != line.line)
        {
            text.push_str("\n--");
        }
        text.push('\n');
        base.push_absolute(text, &line.path);
        let _ = write!(text, "{separator}{}{separator}", line.line);
        push_line(text, line);
        previous = Some((&line.path, line.line));
    }
}

/// A line's text, with the marker of a clamped line.
fn push_line(text: &mut String, m: &GrepMatch) {
    match m.clipped {
        None => text.push_str(&m.text),
        Some(clip) => {
            if clip.first > 1 {
                text.push('…');
            }
            text.push_str(&m.text);
            if clip.last < clip.length {
                text.push('…');
            }
            let _ = write!(
                text,
                " [line clamped: showing columns {}-{} of {}; read the file at line {} for the \
                 full line]",
                clip.first, clip.last, clip.length, m.line
            );
        }
    }
}
