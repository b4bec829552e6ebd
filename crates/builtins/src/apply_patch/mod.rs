//! The `apply_patch` tool: the `*** Begin Patch` format models are trained on, applied all or
//! nothing (reference PA1–PA12, made transactional).
//!
//! Order of a call, each step finishing before the next starts:
//! 1. parse leniently (`parse.rs`); errors name the patch line and the offending text;
//! 2. resolve every path (sources and move destinations) against the Location, assert
//!    `external_directory` once per distinct outside directory, then one `edit` with every
//!    resource, de-duplicated in hunk order. Nothing is read before approval;
//! 3. read every named file and compute every new content in memory (`plan.rs`, `derive.rs`):
//!    later hunks see earlier ones, a replayed change is recognised as already applied, each
//!    file keeps its BOM, line endings and trailing-newline state, non-UTF-8 files are refused;
//! 4. commit each file atomically, checking it still holds the bytes the patch was computed
//!    from, and restore every file already changed if a later one fails (`commit.rs`).
//!
//! Invariants: a failure leaves the tree as it was (or says exactly which files could not be
//! restored); an added file never replaces one, a move never replaces another file; success
//! is reported only when every hunk was applied or found already applied.

mod commit;
mod derive;
mod miss;
mod parse;
mod plan;
mod report;
mod seek;
mod text;

use crate::limits::MAX_CONTENT_CHARS;
use std::collections::{HashMap, HashSet};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Content, Context, Execute, SharedAction, Tool, ToolError, ToolFailure};

use crate::authorize::{authorize_external, prefixed_denial};
use crate::beneath;
use crate::blocking::blocking;
use crate::error::Error;
use crate::location::{ExternalDirectory, Kind, Location};
use crate::mutation::FileMutation;
use crate::services::LocationServices;
use crate::steps::Steps;
pub use report::ApplyPatchOutput;

use parse::HunkKind;
use plan::{Disk, Resolved, Target};

const NOTHING_CHANGED: &str = "No files were changed.";

const DESCRIPTION: &str = "\
Applies a patch that adds, deletes, updates or moves files, all or nothing: if any part fails, \
no file is changed. The patch text looks like this:

*** Begin Patch
*** Add File: path/to/new.txt
+every line of the new file, each starting with +
*** Delete File: path/to/old.txt
*** Update File: path/to/file.py
*** Move to: path/to/renamed.py
@@ def some_function():
 a context line (a space, then the line as it is in the file)
-a line to remove
+a line to add
*** End of File
*** End Patch

Each @@ chunk is located after the previous one; `@@ <text>` first finds the line <text> \
(e.g. a class or function header) and the chunk is searched after it. Give about 3 lines of \
context above and below each change, copied exactly from the file. `*** End of File` marks a \
chunk that ends at the end of the file; `*** Move to:` (optional) renames the updated file. \
Paths are relative to the working directory (absolute paths outside it need permission). A \
change that is already in the file is reported as already applied.";

/// The input of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchInput {
    /// The full patch text, from `*** Begin Patch` to `*** End Patch`.
    // `input` is what models trained on codex's apply_patch send.
    #[schemars(extend("x-aliases" = ["patch_text", "patch", "input"]))]
    #[schemars(length(max = MAX_CONTENT_CHARS))]
    pub patch_text: String,
}

/// The `apply_patch` tool for the Location of `services`; its permission action is `edit`
/// (PA12).
pub(crate) fn tool(services: &LocationServices) -> Option<Tool> {
    let leaf = ApplyPatch {
        location: services.location.clone(),
        permission: services.permission.clone(),
        mutation: services.files.clone(),
    };
    let tool = Tool::typed(DESCRIPTION, leaf)
        .model_output(|output: &ApplyPatchOutput| vec![Content::text(report::model_text(output))])
        .build()
        .with_action(SharedAction::Edit);
    Some(tool)
}

/// The `apply_patch` leaf of one Location.
struct ApplyPatch {
    location: Location,
    permission: Permission,
    mutation: FileMutation,
}

impl Execute for ApplyPatch {
    type Input = ApplyPatchInput;
    type Output = ApplyPatchOutput;

    async fn execute(
        &self,
        input: ApplyPatchInput,
        ctx: &Context,
    ) -> Result<ApplyPatchOutput, ToolError> {
        if input.patch_text.trim().is_empty() {
            return Err(ToolError::failure("patchText is required"));
        }
        let patch = parse::parse(&input.patch_text)
            .map_err(|err| ToolError::failure(format!("apply_patch verification failed: {err}")))?;
        if patch.hunks.is_empty() {
            return Err(ToolError::failure("patch rejected: empty patch"));
        }
        let resolved = self.resolve(&patch)?;
        self.authorize(&resolved, &input.patch_text, ctx).await?;
        // Every named file stays locked from its read to the commit, so an edit of one of them
        // in this process waits its turn instead of making the commit find it changed.
        let held = self
            .mutation
            .lock_all(targets(&resolved).into_iter().map(|t| t.path.clone()))
            .await;
        let disk = self.read(&resolved).await?;
        let total = patch.hunks.iter().map(plan::chunks).sum();
        let steps = Steps::new(&ctx.progress, Some(total), |_| "chunks applied".to_owned());
        let changes = plan::plan(&resolved, disk, steps.as_ref())
            .map_err(|why| ToolError::failure(format!("{}\n{NOTHING_CHANGED}", why.trim_end())))?;
        // Above the call's structured budget the diff texts go and the per-file counts stay, so
        // settle never has to replace the report (and lose the statuses) itself.
        let output = report::output(&changes, ctx.budget.max_structured_bytes());
        commit::commit(&self.mutation, &held, changes)
            .await
            .map_err(|failure| ToolError::failure(failure.message()))?;
        Ok(output)
    }
}

impl ApplyPatch {
    fn resolve<'p>(&self, patch: &'p parse::Patch) -> Result<Vec<Resolved<'p>>, ToolError> {
        let target = |path: &str| -> Result<Target, ToolError> {
            let resolved = self.location.resolve(path, Kind::File).map_err(|err| {
                let why = match &err {
                    Error::Path { reason, .. } => reason.to_string(),
                    other => other.to_string(),
                };
                ToolFailure::new(format!(
                    "Unable to apply patch at {path}: {why}. {NOTHING_CHANGED}"
                ))
            })?;
            Ok(Target {
                resource: resolved.resource,
                path: resolved.canonical,
                external: resolved.external,
            })
        };
        patch
            .hunks
            .iter()
            .map(|hunk| {
                let move_to = match &hunk.kind {
                    HunkKind::Update {
                        move_to: Some(to), ..
                    } => Some(target(to)?),
                    _ => None,
                };
                Ok(Resolved {
                    hunk,
                    target: target(hunk.path())?,
                    move_to,
                })
            })
            .collect()
    }

    /// One `external_directory` per distinct outside directory, then one `edit` for all. A
    /// configured denial reads `Unable to apply patch: Permission denied: ...`.
    async fn authorize(
        &self,
        resolved: &[Resolved<'_>],
        patch_text: &str,
        ctx: &Context,
    ) -> Result<(), ToolError> {
        let denied = |err| prefixed_denial("Unable to apply patch", err);
        let targets = targets(resolved);
        let mut directories: Vec<&ExternalDirectory> = Vec::new();
        for external in targets.iter().filter_map(|t| t.external.as_ref()) {
            if !directories.iter().any(|d| d.pattern == external.pattern) {
                directories.push(external);
            }
        }
        for external in directories {
            authorize_external(&self.permission, ctx, external)
                .await
                .map_err(denied)?;
        }
        let mut resources: Vec<String> = Vec::new();
        for target in targets {
            if !resources.contains(&target.resource) {
                resources.push(target.resource.clone());
            }
        }
        let request = Request::new(ctx, "edit", resources)
            .with_save(vec!["*".to_owned()])
            .with_metadata(
                "patchText",
                serde_json::Value::String(patch_text.to_owned()),
            );
        self.permission.assert(request).await.map_err(denied)
    }

    /// Reads every named path once, after approval (never before: see the module order),
    /// several files at a time: every read starts at once on the blocking pool and the results
    /// are taken in hunk order, so the failure reported is the first the patch names. The
    /// caller holds every file's lock; the commit still checks that each holds the bytes read
    /// here (against writers outside this process).
    async fn read(&self, resolved: &[Resolved<'_>]) -> Result<HashMap<PathBuf, Disk>, ToolError> {
        let mut seen = HashSet::new();
        let jobs: Vec<_> = targets(resolved)
            .into_iter()
            .filter(|target| seen.insert(&target.path))
            .map(|target| {
                let path = target.path.clone();
                (target, blocking(move || read_disk(&path)))
            })
            .collect();
        let mut disk = HashMap::with_capacity(jobs.len());
        for (target, job) in jobs {
            match job.await? {
                Ok(state) => {
                    disk.insert(target.path.clone(), state);
                }
                Err(err) => {
                    return Err(ToolError::failure(format!(
                        "Unable to apply patch at {}: cannot read it: {err}. {NOTHING_CHANGED}",
                        target.resource
                    )));
                }
            }
        }
        Ok(disk)
    }
}

/// What is at `path` (a canonical path: symlinks are already resolved), opened exactly there.
fn read_disk(path: &Path) -> io::Result<Disk> {
    let mut file = match beneath::open_file(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Disk::Missing),
        Err(err) => return Err(err),
        Ok(file) => file,
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        Ok(Disk::Directory)
    } else if meta.is_file() {
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        Ok(Disk::File(bytes))
    } else {
        Ok(Disk::Other)
    }
}

/// Every path the hunks name, in hunk order (a move's source, then its destination).
fn targets<'r>(resolved: &'r [Resolved<'_>]) -> Vec<&'r Target> {
    let mut targets = Vec::with_capacity(resolved.len());
    for r in resolved {
        targets.push(&r.target);
        targets.extend(r.move_to.as_ref());
    }
    targets
}
