//! The `glob` tool (reference GL1–GL5 with the legacy V1 ordering): files whose path matches a
//! glob, newest first.

use crate::limits::{MAX_PATH_CHARS, MAX_PATTERN_CHARS};
use std::num::NonZeroUsize;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tackle_permission::Request;
use tackle_tool_core::{Context, Execute, Rendered, Tool, ToolError, ToolFailure};

use super::Budget;
use super::find::find;
use super::pattern::Listing;
use super::report::{self, Base, SkippedPaths};
use super::scope::{self, Services, path_argument};
use crate::blocking::blocking;
use crate::location::EntryKind;
use crate::steps::Steps;

/// The default number of files returned.
pub const DEFAULT_GLOB_LIMIT: usize = 100;

const DESCRIPTION: &str = "Find files by name with a glob pattern, e.g. `**/*.rs` or \
`src/**/*.{ts,tsx}`. A pattern without `/` matches file names at any depth (`*.md`); a pattern \
with `/` is matched from the search directory; a pattern ending in `/` lists directories \
(`tests/`, `src/*/`). Files ignored by .gitignore/.ignore are skipped. Hidden files and \
directories (names starting with `.`) are left out, as `rg --files` does, unless the pattern \
names them with a leading dot (`.*`, `.github/**`, `**/.env`); .git is never listed. Returns \
absolute paths, most recently modified first. Use grep to search file contents.";

/// The input of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobInput {
    /// The glob pattern to match file paths against.
    #[schemars(length(max = MAX_PATTERN_CHARS))]
    pub pattern: String,
    /// The directory to search in, relative to the working directory or absolute. Defaults to
    /// the working directory.
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub path: Option<String>,
    /// The maximum number of files to return (default 100).
    pub limit: Option<NonZeroUsize>,
}

/// The output of `glob`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobOutput {
    /// The matching files, newest first: paths relative to the working directory (absolute
    /// outside it); directories, listed for a pattern ending in `/`, end in `/`.
    pub files: Vec<String>,
    /// How many files matched in all; more than `files` holds when `truncated`.
    pub total: usize,
    /// More files matched than the limit allowed.
    pub truncated: bool,
    /// The time budget ran out: only part of the tree was searched.
    pub incomplete: bool,
    /// What was passed over.
    pub skipped: SkippedPaths,
}

struct GlobTool {
    services: Services,
}

impl Execute for GlobTool {
    type Input = GlobInput;
    type Output = Rendered<GlobOutput>;

    async fn execute(
        &self,
        input: GlobInput,
        ctx: &Context,
    ) -> Result<Rendered<GlobOutput>, ToolError> {
        scope::check_argument("glob pattern", &input.pattern)?;
        let path = path_argument(input.path.as_deref());
        let failure = format!("Unable to find files matching {}", input.pattern);
        let scope = self
            .services
            .open(ctx, path, request(ctx, &input), &failure)
            .await?;
        match scope.kind {
            None => return Err(scope::not_found(path)),
            Some(EntryKind::Directory) => {}
            Some(_) => {
                return Err(ToolFailure::new(format!(
                    "Search path is not a directory: {path}. glob searches directories; use \
                     read for a single file."
                ))
                .into());
            }
        }
        let glob = Listing::new(&input.pattern, &scope.root)?;
        let directories = glob.directories;
        let limit = input.limit.map_or(DEFAULT_GLOB_LIMIT, NonZeroUsize::get);
        let budget_limit = self.services.settings.budget;
        let budget = Budget::new(budget_limit, Some(ctx.cancel.clone())).with_steps(Steps::new(
            &ctx.progress,
            None,
            |found| format!("paths scanned, {found} matching"),
        ));
        let root = scope.root.clone();
        let boundary = scope.base.boundary.clone();
        let found = blocking(move || find(&root, &boundary, &glob, Some(limit), &budget)).await?;
        let output = GlobOutput {
            files: found
                .files
                .iter()
                .map(|f| {
                    let mut path = scope.base.relative(&f.path);
                    if directories {
                        path.push('/');
                    }
                    path
                })
                .collect(),
            total: found.total,
            truncated: found.total > found.files.len(),
            incomplete: found.incomplete,
            skipped: SkippedPaths::new(&found.skipped, &scope.base),
        };
        let text = model_text(&output, &scope.base, budget_limit);
        Ok(Rendered::text(output, text))
    }
}

/// GL1: `glob` on the pattern, saving `*`, with metadata `{root, path?, limit?}` (no keys for
/// absent inputs).
fn request(ctx: &Context, input: &GlobInput) -> Request {
    let mut request = Request::new(ctx, "glob", vec![input.pattern.clone()])
        .with_save(vec!["*".to_owned()])
        .with_metadata("root", Value::from(path_argument(input.path.as_deref())));
    if let Some(path) = &input.path {
        request = request.with_metadata("path", Value::from(path.as_str()));
    }
    if let Some(limit) = input.limit {
        request = request.with_metadata("limit", Value::from(limit.get()));
    }
    request
}

/// The model text: absolute paths, one per line, then the notes.
fn model_text(out: &GlobOutput, base: &Base, budget: Duration) -> String {
    let mut text = String::new();
    if out.files.is_empty() {
        text.push_str("No files found");
    } else {
        let width = base.location.as_os_str().len() + 1;
        text.reserve(out.files.iter().map(|f| f.len() + width + 1).sum());
        for (i, file) in out.files.iter().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            base.push_absolute(&mut text, file);
        }
    }
    if out.truncated {
        let more = out.total - out.files.len();
        text.push_str(&format!(
            "\n\n(Results are truncated: showing the first {} of {} files, {more} more not \
             shown. Consider using a more specific path or pattern.)",
            out.files.len(),
            out.total,
        ));
    }
    report::notes(&mut text, &out.skipped, base, out.incomplete, budget);
    text
}

/// The `glob` tool for `location`, asserting through `permission`.
pub(crate) fn glob_tool(services: Services) -> Tool {
    Tool::typed(DESCRIPTION, GlobTool { services })
        .rendered()
        .build()
}
