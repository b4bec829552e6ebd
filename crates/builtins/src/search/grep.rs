//! The `grep` tool (reference GR1–GR7 with the legacy V1 text): lines matching a regex, files
//! newest first, long lines clamped with a column marker.

use crate::limits::{MAX_PATH_CHARS, MAX_PATTERN_CHARS};
use std::num::NonZeroUsize;

use grep_regex::RegexMatcher;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tackle_permission::Request;
use tackle_tool_core::{Context, Execute, Rendered, Tool, ToolError, ToolFailure};

use super::Budget;
use super::grep_output::{ClippedLine, GrepFile, GrepMatch, GrepOutput};
use super::grep_text as text;
use super::hits::Mode;
use super::pattern::{self, Glob, RegexOptions};
use super::report::{Base, SkippedPaths};
use super::scan::{self, Query, Scan};
use super::scope::{self, Services, path_argument};
use crate::blocking::blocking;
use crate::location::EntryKind;
use crate::steps::Steps;

/// The default number of matching lines returned.
pub const DEFAULT_GREP_LIMIT: usize = 100;

const DESCRIPTION: &str = "Search file contents with a regular expression (Rust regex syntax, \
as in ripgrep; case-sensitive unless `ignoreCase`), one line at a time unless `multiline`. \
`path` is a directory (searched recursively) or a single file; `include` filters files by glob \
(e.g. `*.rs`, `*.{ts,tsx}`). Files ignored by .gitignore/.ignore and binary files are skipped; \
hidden files are included (except .git). Returns matching lines grouped by file, most recently \
modified files first, with line numbers; with `context`/`before`/`after` the lines are shown \
as ripgrep prints them (`path:line:match`, `path-line-context`, `--` between groups). \
`outputMode` `files_with_matches` lists only the files, `count` the matches per file. Use glob \
to find files by name.";

/// The most lines of context a call may ask for on each side of a match.
pub const MAX_CONTEXT_LINES: u32 = 1000;

/// The input of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepInput {
    /// The regular expression to search for.
    #[schemars(length(max = MAX_PATTERN_CHARS))]
    pub pattern: String,
    /// The directory or file to search, relative to the working directory or absolute.
    /// Defaults to the working directory.
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub path: Option<String>,
    /// Only search files whose path matches this glob (e.g. `*.rs`).
    #[schemars(extend("x-aliases" = ["glob"]))]
    #[schemars(length(max = MAX_PATTERN_CHARS))]
    pub include: Option<String>,
    /// The maximum number of results to return (default 100): matches in `content` mode,
    /// files in the other modes.
    #[serde(default)]
    #[schemars(extend("x-aliases" = ["head_limit"]))]
    pub limit: Option<NonZeroUsize>,
    /// Match letters of either case (like `rg -i`). Default false.
    #[serde(default, rename = "ignoreCase")]
    #[schemars(extend("x-aliases" = ["-i", "ignore_case"]))]
    pub ignore_case: Option<bool>,
    /// Search for `pattern` as a plain string, not a regex (like `rg -F`). Default false.
    #[serde(default)]
    pub literal: Option<bool>,
    /// Lines to show before and after each match (like `rg -C`; `content` mode only).
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = 1000))]
    #[schemars(extend("x-aliases" = ["-C"]))]
    pub context: Option<ContextLines>,
    /// Lines to show before each match (like `rg -B`); overrides `context` on that side.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = 1000))]
    #[schemars(extend("x-aliases" = ["-B"]))]
    pub before: Option<ContextLines>,
    /// Lines to show after each match (like `rg -A`); overrides `context` on that side.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = 1000))]
    #[schemars(extend("x-aliases" = ["-A"]))]
    pub after: Option<ContextLines>,
    /// Let a match span lines, with `.` matching newlines too (like `rg -U
    /// --multiline-dotall`). Default false.
    #[serde(default)]
    pub multiline: Option<bool>,
    /// What to return: `content` (matching lines, the default), `files_with_matches` (only
    /// the paths of matching files) or `count` (the number of matches per file).
    #[serde(default, rename = "outputMode")]
    #[schemars(extend("x-aliases" = ["output_mode"]))]
    pub output_mode: Option<OutputMode>,
}

/// A number of context lines: at most [`MAX_CONTEXT_LINES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "u32")]
pub struct ContextLines(u32);

impl ContextLines {
    /// The number of lines.
    pub fn lines(self) -> u32 {
        self.0
    }
}

impl TryFrom<u32> for ContextLines {
    type Error = String;

    fn try_from(lines: u32) -> Result<Self, String> {
        if lines > MAX_CONTEXT_LINES {
            return Err(format!(
                "context is at most {MAX_CONTEXT_LINES} lines on each side; got {lines}"
            ));
        }
        Ok(Self(lines))
    }
}

/// What `grep` returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The matching lines (and their context).
    #[default]
    Content,
    /// The paths of the files with a match.
    FilesWithMatches,
    /// The number of matches in each file with one.
    Count,
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
        let options = Options::of(&input);
        let matcher = pattern::regex(&input.pattern, options.regex)?;
        let scope = self
            .services
            .open(ctx, path, request(ctx, &input), &failure)
            .await?;
        let limit = input.limit.map_or(DEFAULT_GREP_LIMIT, NonZeroUsize::get);
        let budget_limit = self.services.settings.budget;
        let budget = Budget::new(budget_limit, Some(ctx.cancel.clone())).with_steps(Steps::new(
            &ctx.progress,
            None,
            |matches| format!("files searched, {matches} matches"),
        ));
        let root = scope.root.clone();
        let scan = match scope.kind {
            None => return Err(scope::not_found(path)),
            Some(EntryKind::File) => {
                blocking(move || {
                    scan::scan_file(&root, &options.query(&matcher, None, limit, &budget))
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
                    let query = options.query(&matcher, include.as_ref(), limit, &budget);
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
        let shape = text::Shape {
            mode: options.mode,
            context: options.before > 0 || options.after > 0,
            limit,
            budget: budget_limit,
        };
        Ok(output(scan, &scope.base, shape))
    }
}

/// The search options of one call, from its input.
#[derive(Debug, Clone, Copy)]
struct Options {
    regex: RegexOptions,
    mode: Mode,
    before: usize,
    after: usize,
}

impl Options {
    fn of(input: &GrepInput) -> Self {
        let lines = |side: Option<ContextLines>| {
            side.or(input.context)
                .map_or(0, |lines| lines.lines() as usize)
        };
        Self {
            regex: RegexOptions {
                ignore_case: input.ignore_case.unwrap_or(false),
                literal: input.literal.unwrap_or(false),
                multiline: input.multiline.unwrap_or(false),
            },
            mode: match input.output_mode.unwrap_or_default() {
                OutputMode::Content => Mode::Content,
                OutputMode::FilesWithMatches => Mode::Files,
                OutputMode::Count => Mode::Count,
            },
            before: lines(input.before),
            after: lines(input.after),
        }
    }

    fn query<'a>(
        &self,
        matcher: &'a RegexMatcher,
        include: Option<&'a Glob>,
        limit: usize,
        budget: &'a Budget,
    ) -> Query<'a> {
        Query {
            matcher,
            include,
            limit: Some(limit),
            budget,
            mode: self.mode,
            before: self.before,
            after: self.after,
            multiline: self.regex.multiline,
        }
    }
}

fn output(scan: Scan, base: &Base, shape: text::Shape) -> Rendered<GrepOutput> {
    let mut matches = Vec::new();
    let mut context = Vec::new();
    let mut files = Vec::new();
    for file in scan.files {
        let path = base.relative(&file.path);
        match shape.mode {
            Mode::Content => {}
            Mode::Files => files.push(GrepFile {
                path: path.clone(),
                count: None,
            }),
            Mode::Count => files.push(GrepFile {
                path: path.clone(),
                count: Some(file.count),
            }),
        }
        for hit in file.lines {
            let line = GrepMatch {
                path: path.clone(),
                line: hit.line,
                text: hit.text,
                clipped: hit.clip.map(|c| ClippedLine {
                    first: c.first,
                    last: c.last,
                    length: c.length,
                }),
            };
            if hit.kind.is_match() {
                matches.push(line);
            } else {
                context.push(line);
            }
        }
    }
    let output = GrepOutput {
        truncated: match shape.mode {
            Mode::Content => scan.total_matches > scan.shown,
            Mode::Files | Mode::Count => scan.total_files > scan.shown,
        },
        clipped: matches.iter().chain(&context).any(|m| m.clipped.is_some()),
        total_matches: scan.total_matches,
        total_files: scan.total_files,
        incomplete: scan.incomplete,
        binary_files: scan.skipped.binary,
        skipped: SkippedPaths::new(&scan.skipped, base),
        matches,
        context,
        files,
    };
    let text = text::model_text(&output, base, scan.shown, shape);
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

/// The `grep` tool for `location`, asserting through `permission`.
pub(crate) fn grep_tool(services: Services) -> Tool {
    Tool::typed(DESCRIPTION, GrepTool { services })
        .rendered()
        .build()
}
