//! The `edit` leaf: replace one region of a file (or every one, with `replaceAll`).
//!
//! Order (reference ED1–ED7): identical strings → resolve → `external_directory` → `edit` →
//! read, match, commit; a denial means nothing was read. An empty oldString creates the file
//! (or fills an empty one) after the same checks, and is refused on a file with content.
//!
//! Invariants:
//! - Byte-faithful: the encoding (UTF-8, UTF-16 or Windows-1252, decided by read's rule), the
//!   BOM, each line's own ending and the final-newline state are kept, and every byte outside
//!   the replaced regions is written back unchanged. A file whose bytes are not text in its
//!   encoding is refused, as is a newString character the encoding cannot hold; U+FFFD is
//!   never written.
//! - Read, match and commit happen in one [`FileMutation`](crate::FileMutation) transaction,
//!   so concurrent edits of one file are serialized and none is lost; the commit still checks
//!   the bytes' hash, so a writer outside this process is never overwritten.

mod create;
mod ladder;
mod needle;
mod report;

use crate::limits::{MAX_CONTENT_CHARS, MAX_PATH_CHARS};
use std::ops::Not;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_tool_core::{Context, Execute, Rendered, SharedAction, Tool, ToolError};

pub use ladder::Rung;

use crate::authorize::{authorize, prefixed_denial};
use crate::diff::{DiffStatus, FileDiff};
use crate::error::Error;
use crate::location::Kind;
use crate::mutation::{ContentHash, Transaction};
use crate::services::LocationServices;
use crate::text::encoding::{self, Encoding, Malformed, Unencodable};
use crate::text::{self, FileText, Unreadable, lines::Lines};
use ladder::{Miss, Plan};

const DESCRIPTION: &str = "Replace text in a file. oldString must identify one region of the \
file: copy it from read's output without the line-number prefix (\"12: \"), with enough \
surrounding lines to be unique, or set replaceAll to replace every occurrence. Matching is \
exact first; if that fails, differences in line endings and trailing whitespace, then a \
consistent indentation offset (newString is re-indented to match), then typographic quotes, \
dashes and spaces are tolerated, always requiring exactly one region. The file keeps its \
encoding, byte order mark and line endings. An empty oldString creates a file that does not \
exist yet (or fills an empty one) with newString; to replace all of a file, use write.";

/// The input of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditInput {
    /// The file to change (relative to the working directory, or absolute).
    #[schemars(extend("x-aliases" = ["filePath", "file_path"]))]
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub path: String,
    /// The text to replace.
    #[schemars(extend("x-aliases" = ["old_string"]))]
    #[schemars(length(max = MAX_CONTENT_CHARS))]
    pub old_string: String,
    /// The text to put in its place (must differ from oldString).
    #[schemars(extend("x-aliases" = ["new_string"]))]
    #[schemars(length(max = MAX_CONTENT_CHARS))]
    pub new_string: String,
    /// Replace every occurrence of oldString instead of exactly one.
    #[schemars(extend("x-aliases" = ["replace_all"]))]
    pub replace_all: Option<bool>,
}

/// What `edit` returns (the structured output).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditOutput {
    /// The changed file, with its diff (the patch is left out when the output would be too big).
    pub files: Vec<FileDiff>,
    /// Regions replaced.
    pub replacements: usize,
    /// The match-ladder rung that found oldString.
    pub matched_with: Rung,
    /// Line-number prefixes copied from read's output were removed from the strings.
    #[serde(skip_serializing_if = "Not::not")]
    pub line_numbers_stripped: bool,
    /// The file's encoding when it is not UTF-8 (it keeps it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// The `edit` tool for the Location of `services` (its permission action is `edit`).
pub(crate) fn tool(services: &LocationServices) -> Option<Tool> {
    Some(
        Tool::typed(
            DESCRIPTION,
            Edit {
                services: services.clone(),
            },
        )
        .rendered()
        .build()
        .with_action(SharedAction::Edit),
    )
}

struct Edit {
    services: LocationServices,
}

impl Execute for Edit {
    type Input = EditInput;
    type Output = Rendered<EditOutput>;

    async fn execute(
        &self,
        input: EditInput,
        ctx: &Context,
    ) -> Result<Rendered<EditOutput>, ToolError> {
        if input.old_string == input.new_string {
            return Err(ToolError::failure(
                "No changes to apply: oldString and newString are identical.",
            ));
        }
        let unable = format!("Unable to edit {}", input.path);
        let resolved = self
            .services
            .location
            .resolve(&input.path, Kind::File)
            .map_err(|err| ToolError::failure(format!("{unable}: {err}")))?;
        authorize(&self.services.permission, ctx, &resolved, "edit")
            .await
            .map_err(|err| prefixed_denial(&unable, err))?;
        let limit = ctx.budget.max_structured_bytes();
        let path = input.path;
        if input.old_string.is_empty() {
            let (resource, new) = (resolved.resource.clone(), input.new_string);
            let outcome = self
                .services
                .files
                .transact_canonical(&resolved.canonical, move |tx| {
                    create::create(tx, &resource, &new)
                })
                .await;
            return match outcome {
                Ok(created) => Ok(created.into_output(&resolved.resource, limit)),
                Err(failure) => Err(ToolError::failure(failure.message(&path))),
            };
        }
        let request = Request {
            resource: resolved.resource.clone(),
            old: input.old_string,
            new: input.new_string,
            replace_all: input.replace_all.unwrap_or(false),
        };
        let outcome = self
            .services
            .files
            .transact_canonical(&resolved.canonical, move |tx| {
                let bytes = tx.read()?.ok_or(Failure::NotFound)?;
                let prepared = prepare(&bytes, &request)?;
                commit(tx, &prepared)?;
                Ok::<_, Failure>(prepared)
            })
            .await;
        match outcome {
            Ok(prepared) => Ok(prepared.into_output(limit)),
            Err(failure) => Err(ToolError::failure(failure.message(&path))),
        }
    }
}

/// One edit, decoded from the input.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) resource: String,
    pub(crate) old: String,
    pub(crate) new: String,
    pub(crate) replace_all: bool,
}

/// A matched edit ready to commit.
#[derive(Debug)]
pub(crate) struct Prepared {
    resource: String,
    expected: ContentHash,
    encoding: Encoding,
    bytes: Vec<u8>,
    before: String,
    after: String,
    plan: Plan,
    removed: String,
    stripped: bool,
}

/// Why an edit was not made.
#[derive(Debug)]
pub(crate) enum Failure {
    NotFound,
    /// An empty oldString for a file that has content.
    HasContent,
    NotUtf8 {
        offset: usize,
        line: usize,
    },
    Malformed {
        encoding: &'static str,
        error: Malformed,
    },
    Unencodable(Unencodable),
    Miss(String),
    Stale,
    Mutation(Error),
}

impl From<Unreadable> for Failure {
    fn from(unreadable: Unreadable) -> Self {
        match unreadable {
            Unreadable::NotUtf8(bad) => Self::NotUtf8 {
                offset: bad.offset,
                line: bad.line,
            },
            Unreadable::Malformed { encoding, error } => Self::Malformed { encoding, error },
        }
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Self {
        match err {
            Error::StaleContent { .. } => Self::Stale,
            other => Self::Mutation(other),
        }
    }
}

impl Failure {
    fn message(&self, path: &str) -> String {
        match self {
            Self::NotFound => format!("File not found: {path}. Use write to create it."),
            Self::HasContent => format!(
                "oldString must not be empty: {path} already has content. Give the text to \
                 replace, or use write to replace the whole file."
            ),
            Self::NotUtf8 { offset, line } => format!(
                "Cannot edit {path}: the file is not valid UTF-8 (first invalid byte at byte offset \
                 {offset}, line {line}). edit changes UTF-8, UTF-16 and Latin-1 files and never \
                 rewrites bytes it cannot read; use write to replace the whole file."
            ),
            Self::Malformed { encoding, error } => format!(
                "Cannot edit {path}: {error} (read as {encoding}). edit never rewrites bytes it \
                 cannot read; use write to replace the whole file."
            ),
            Self::Unencodable(unencodable) => format!("Cannot edit {path}: {unencodable}."),
            Self::Miss(message) => message.clone(),
            Self::Stale => {
                "File changed after permission approval. Read it again before editing.".to_owned()
            }
            Self::Mutation(err) => format!("Unable to edit {path}: {err}"),
        }
    }
}

/// Decodes `bytes`, runs the ladder (again without read's line numbers if that fails) and
/// builds the new bytes.
pub(crate) fn prepare(bytes: &[u8], request: &Request) -> Result<Prepared, Failure> {
    let FileText { encoding, body } =
        text::read_text(bytes, Path::new(&request.resource)).map_err(Failure::from)?;
    let text: &str = &body;
    let mut stripped = false;
    let plan = match ladder::find(text, &request.old, &request.new, request.replace_all) {
        Ok(plan) => plan,
        Err(Miss::NotFound) => match strip_line_numbers(&request.old, true) {
            Some(old) => {
                let new =
                    strip_line_numbers(&request.new, false).unwrap_or_else(|| request.new.clone());
                stripped = true;
                ladder::find(text, &old, &new, request.replace_all)
                    .map_err(|miss| miss_message(text, &request.old, miss))?
            }
            None => return Err(miss_message(text, &request.old, Miss::NotFound)),
        },
        Err(miss) => return Err(miss_message(text, &request.old, miss)),
    };
    let mut after = plan.apply(text);
    if !encoding.bom().is_empty() && after.starts_with('\u{FEFF}') {
        // The file keeps its one BOM; a U+FEFF now at the start would make it two.
        after.remove(0);
    }
    let out = encoding::encode(&after, encoding).map_err(Failure::Unencodable)?;
    let removed = plan
        .replacements
        .first()
        .map(|r| text[r.start..r.end].to_owned())
        .unwrap_or_default();
    Ok(Prepared {
        resource: request.resource.clone(),
        expected: ContentHash::of(bytes),
        encoding,
        bytes: out,
        before: text.to_owned(),
        after,
        plan,
        removed,
        stripped,
    })
}

/// Writes the prepared bytes if the file still holds what was matched.
pub(crate) fn commit(tx: &mut Transaction, prepared: &Prepared) -> Result<(), Failure> {
    tx.write_if_unchanged(prepared.expected, &prepared.bytes)?;
    Ok(())
}

fn miss_message(text: &str, old: &str, miss: Miss) -> Failure {
    Failure::Miss(match miss {
        Miss::NotFound => report::not_found(&Lines::new(text), old),
        Miss::Multiple { rung, lines: at } => report::multiple(rung, &at),
    })
}

impl Prepared {
    fn into_output(self, max_structured_bytes: usize) -> Rendered<EditOutput> {
        let first = self.plan.replacements.first();
        let inserted = first.map(|r| r.text.as_str()).unwrap_or_default();
        let mut text = format!(
            "Edited file successfully: {}\nReplacements: {}\n",
            self.resource,
            self.plan.replacements.len()
        );
        if let Some(note) = report::rung_note(self.plan.rung, first.and_then(|r| r.shift.as_ref()))
        {
            text.push_str(&note);
            text.push('\n');
        }
        if self.stripped {
            text.push_str("Removed read's line-number prefixes from oldString and newString.\n");
        }
        let label = self.encoding.label();
        if let Some(label) = label {
            text.push_str("The file keeps its encoding, ");
            text.push_str(label);
            text.push_str(".\n");
        }
        text.push_str(&report::preview(&self.removed, inserted));
        let diff = FileDiff::new(
            &self.resource,
            DiffStatus::Modified,
            &self.before,
            &self.after,
        );
        let mut output = EditOutput {
            files: vec![diff],
            replacements: self.plan.replacements.len(),
            matched_with: self.plan.rung,
            line_numbers_stripped: self.stripped,
            encoding: label.map(str::to_owned),
        };
        output.compact_if_over(max_structured_bytes);
        Rendered::text(output, text)
    }
}

impl EditOutput {
    /// The reference's compact form when the output is over `max_structured_bytes`: the counts
    /// stay, the bulky patch goes.
    fn compact_if_over(&mut self, max_structured_bytes: usize) {
        let size = serde_json::to_vec(&*self).map_or(usize::MAX, |json| json.len());
        if size > max_structured_bytes {
            self.files = std::mem::take(&mut self.files)
                .into_iter()
                .map(FileDiff::compact)
                .collect();
        }
    }
}

/// `text` without the `"<n>: "` prefixes read puts before lines, when every line has one (and,
/// for oldString, `consecutive` numbers as read prints them); `None` otherwise.
fn strip_line_numbers(text: &str, consecutive: bool) -> Option<String> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut out = Vec::new();
    let mut previous: Option<u64> = None;
    for line in body.split('\n') {
        let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let number: u64 = line[..digits].parse().ok()?;
        let rest = line[digits..].strip_prefix(':')?;
        let rest = match rest.strip_prefix(' ') {
            Some(rest) => rest,
            None if rest.is_empty() || rest == "\r" => rest,
            None => return None,
        };
        if consecutive && previous.is_some_and(|p| p + 1 != number) {
            return None;
        }
        previous = Some(number);
        out.push(rest);
    }
    let mut joined = out.join("\n");
    if body.len() != text.len() {
        joined.push('\n');
    }
    Some(joined)
}

#[cfg(test)]
mod tests;
