//! The `grep` tool (reference GR1–GR7 with the legacy V1 text): lines matching a regex, files
//! newest first, long lines clamped with a column marker.

use std::fmt::Write as _;
use std::num::NonZeroUsize;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tackle_permission::Request;
use tackle_tool_core::{Context, Execute, Rendered, Tool, ToolError, ToolFailure};

use super::Budget;
use super::pattern::{self, Glob};
use super::report::{self, Base, SkippedPaths, plural};
use super::scan::{self, Query, Scan};
use super::scope::{self, Services, path_argument};
use crate::blocking::blocking;
use crate::location::EntryKind;

/// The default number of matching lines returned.
pub const DEFAULT_GREP_LIMIT: usize = 100;

const DESCRIPTION: &str = "Search file contents with a regular expression (Rust regex syntax, \
case-sensitive; use (?i) for case-insensitive), one line at a time. `path` is a directory (searched \
recursively) or a single file; `include` filters files by glob (e.g. `*.rs`, `*.{ts,tsx}`). \
Files ignored by .gitignore/.ignore and binary files are skipped; hidden files are included \
(except .git). Returns matching lines grouped by file, most recently modified files first, with \
line numbers. Use glob to find files by name.";

/// The input of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepInput {
    /// The regular expression to search for.
    pub pattern: String,
    /// The directory or file to search, relative to the working directory or absolute.
    /// Defaults to the working directory.
    pub path: Option<String>,
    /// Only search files whose path matches this glob (e.g. `*.rs`).
    #[schemars(extend("x-aliases" = ["glob"]))]
    pub include: Option<String>,
    /// The maximum number of matching lines to return (default 100).
    #[schemars(extend("x-aliases" = ["head_limit"]))]
    pub limit: Option<NonZeroUsize>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, relative to the working directory (absolute outside it).
    pub path: String,
    /// The 1-based line number.
    pub line: u64,
    /// The line without its line ending; only the shown window when `clipped`.
    pub text: String,
    /// Present when the line was longer than 2000 characters and only a window is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clipped: Option<ClippedLine>,
}

/// The window shown of an over-long line, as 1-based inclusive character columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClippedLine {
    /// The first column shown.
    pub first: usize,
    /// The last column shown.
    pub last: usize,
    /// The line's full length in characters.
    pub length: usize,
}

/// The output of `grep`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepOutput {
    /// The matching lines, grouped by file, files newest first.
    pub matches: Vec<GrepMatch>,
    /// Matching lines seen in all; more than `matches` holds when `truncated`.
    pub total_matches: usize,
    /// Files with at least one matching line.
    pub total_files: usize,
    /// More lines matched than the limit allowed.
    pub truncated: bool,
    /// Some lines were longer than 2000 characters and only a window of them is shown.
    pub clipped: bool,
    /// The time budget ran out: only part of the tree was searched.
    pub incomplete: bool,
    /// Files not searched because they contain binary data.
    pub binary_files: usize,
    /// What was passed over.
    pub skipped: SkippedPaths,
}

struct GrepTool {
    services: Services,
}

impl Execute for GrepTool {
    type Input = GrepInput;
    type Output = Rendered<GrepOutput>;

    async fn execute(
        &self,
        input: GrepInput,
        ctx: &Context,
    ) -> Result<Rendered<GrepOutput>, ToolError> {
        let path = path_argument(input.path.as_deref());
        let failure = format!("Unable to grep for {}", input.pattern);
        // An invalid pattern is the model's to fix; nobody is asked to approve it first.
        scope::check_argument("regex pattern", &input.pattern)?;
        if let Some(include) = input.include.as_deref().filter(|i| !i.trim().is_empty()) {
            scope::check_argument("include glob", include)?;
        }
        let matcher = pattern::regex(&input.pattern)?;
        let scope = self
            .services
            .open(ctx, path, request(ctx, &input), &failure)
            .await?;
        let limit = input.limit.map_or(DEFAULT_GREP_LIMIT, NonZeroUsize::get);
        let budget_limit = self.services.settings.budget;
        let budget = Budget::new(budget_limit, Some(ctx.cancel.clone()));
        let root = scope.root.clone();
        let scan = match scope.kind {
            None => return Err(scope::not_found(path)),
            Some(EntryKind::File) => {
                blocking(move || {
                    let query = Query {
                        matcher: &matcher,
                        include: None,
                        limit: Some(limit),
                        budget: &budget,
                    };
                    scan::scan_file(&root, &query)
                })
                .await?
            }
            Some(EntryKind::Directory) => {
                let include = match input.include.as_deref().map(str::trim) {
                    Some(glob) if !glob.is_empty() => Some(Glob::new(glob, &root)?),
                    _ => None,
                };
                let boundary = scope.base.boundary.clone();
                blocking(move || {
                    let query = Query {
                        matcher: &matcher,
                        include: include.as_ref(),
                        limit: Some(limit),
                        budget: &budget,
                    };
                    scan::scan_dir(&root, &boundary, &query)
                })
                .await?
            }
            Some(EntryKind::Other) => {
                return Err(ToolFailure::new(format!(
                    "Search path is neither a file nor a directory: {path}"
                ))
                .into());
            }
        };
        Ok(output(scan, &scope.base, limit, budget_limit))
    }
}

fn output(scan: Scan, base: &Base, limit: usize, budget: Duration) -> Rendered<GrepOutput> {
    let mut matches = Vec::new();
    for file in scan.files {
        let path = base.relative(&file.path);
        for hit in file.lines {
            matches.push(GrepMatch {
                path: path.clone(),
                line: hit.line,
                text: hit.text,
                clipped: hit.clip.map(|c| ClippedLine {
                    first: c.first,
                    last: c.last,
                    length: c.length,
                }),
            });
        }
    }
    let output = GrepOutput {
        truncated: scan.total_matches > matches.len(),
        clipped: matches.iter().any(|m| m.clipped.is_some()),
        total_matches: scan.total_matches,
        total_files: scan.total_files,
        incomplete: scan.incomplete,
        binary_files: scan.skipped.binary,
        skipped: SkippedPaths::new(&scan.skipped, base),
        matches,
    };
    let text = model_text(&output, base, limit, budget);
    Rendered::text(output, text)
}

/// GR1: `grep` on the pattern, saving `*`, with metadata `{root, path?, include?, limit?}`.
fn request(ctx: &Context, input: &GrepInput) -> Request {
    let mut request = Request::new(ctx, "grep", vec![input.pattern.clone()])
        .with_save(vec!["*".to_owned()])
        .with_metadata("root", Value::from(path_argument(input.path.as_deref())));
    if let Some(path) = &input.path {
        request = request.with_metadata("path", Value::from(path.as_str()));
    }
    if let Some(include) = &input.include {
        request = request.with_metadata("include", Value::from(include.as_str()));
    }
    if let Some(limit) = input.limit {
        request = request.with_metadata("limit", Value::from(limit.get()));
    }
    request
}

/// The model text (GR6 and the legacy V1 notes): `Found N matches`, then per file its absolute
/// path and `  Line n: text` lines, groups separated by a blank line, then the notes.
fn model_text(out: &GrepOutput, base: &Base, limit: usize, budget: Duration) -> String {
    let mut text = String::new();
    if out.matches.is_empty() {
        text.push_str("No files found");
    } else {
        let _ = write!(text, "Found {} matches", out.matches.len());
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
                        " [line clamped: showing columns {}-{} of {}; read the file at line {} \
                         for the full line]",
                        clip.first, clip.last, clip.length, m.line
                    );
                }
            }
        }
    }
    if out.matches.is_empty() && out.binary_files > 0 {
        let _ = write!(
            text,
            "\n\n({} not searched: binary data.)",
            plural(out.binary_files, "file was", "files were")
        );
    }
    if out.truncated {
        let _ = write!(
            text,
            "\n\n(Showing {} of {} matches in {}: limit={} reached. Use a larger limit for \
             more, or refine the pattern, path or include.)",
            out.matches.len(),
            out.total_matches,
            plural(out.total_files, "file", "files"),
            limit,
        );
    }
    report::notes(&mut text, &out.skipped, base, out.incomplete, budget);
    text
}

/// The `grep` tool for `location`, asserting through `permission`.
pub(crate) fn grep_tool(services: Services) -> Tool {
    Tool::typed(DESCRIPTION, GrepTool { services })
        .rendered()
        .build()
}
