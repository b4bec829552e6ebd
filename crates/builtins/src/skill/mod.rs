//! `skill`: load a discovered skill's instructions (reference SK2–SK5).
//!
//! Discovery ([`SkillCatalog`]) happens when the tool is built, so the tool's description can
//! list every available skill (`name: description`); the skill's file is read again when it
//! is loaded, after the `skill` permission on its name was granted.

mod discover;

use crate::limits::MAX_TEXT_CHARS;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Context, Execute, Rendered, Tool, ToolError};

pub use discover::{
    PROJECT_SKILL_DIRS, SKILL_FILE, Skill, SkillCatalog, SkillProblem, SkillProblemKind,
    SkillSources, USER_CONFIG_SKILL_DIRS, USER_HOME_SKILL_DIRS,
};

use crate::authorize::prefixed_denial;
use crate::shape::keep_if_fits;

/// At most this many of a skill's files are listed (SK4 `FILE_LIMIT`).
pub const FILE_LIMIT: usize = 10;
/// At most this many directory entries are looked at when sampling a skill's files.
const MAX_SCANNED: usize = 10_000;

const DESCRIPTION: &str = "\
Load a specialized skill: instructions, workflows and bundled resources for a specific kind of \
task. When a task matches one of the skills below, load it with its name before starting, and \
follow its instructions. The result contains the skill's content, its base directory (relative \
paths in the skill are relative to it) and a sample of its files.";

/// Which skill to load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillInput {
    /// The name of the skill, from the list of available skills.
    #[schemars(extend("x-aliases" = ["skill"]))]
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub name: String,
}

/// Output of `skill` (SK5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillOutput {
    /// The skill's name.
    pub name: String,
    /// Its base directory.
    pub directory: PathBuf,
    /// The text the model reads; absent when it does not fit the call's structured budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Always false: a skill is loaded whole (model output is bounded at settlement).
    pub truncated: bool,
}

struct LoadSkill {
    permission: Permission,
    catalog: SkillCatalog,
}

impl Execute for LoadSkill {
    type Input = SkillInput;
    type Output = Rendered<SkillOutput>;

    async fn execute(
        &self,
        input: SkillInput,
        ctx: &Context,
    ) -> Result<Rendered<SkillOutput>, ToolError> {
        let name = input.name;
        let unable =
            |detail: &str| ToolError::failure(format!("Unable to load skill {name}: {detail}"));
        // SK2: an unknown name is refused before anything is asked.
        let Some(skill) = self.catalog.get(&name) else {
            let available: Vec<&str> = self
                .catalog
                .skills()
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            return Err(unable(&format!(
                "no such skill. Available skills: {}",
                available.join(", ")
            )));
        };
        let request = Request::new(ctx, "skill", vec![name.clone()]).with_save(vec![name.clone()]);
        self.permission
            .assert(request)
            .await
            .map_err(|err| prefixed_denial(&format!("Unable to load skill {name}"), err))?;
        let parsed =
            discover::read_skill_file(&skill.location).map_err(|err| unable(&err.to_string()))?;
        let directory = skill.directory().to_path_buf();
        let files = if skill.is_directory_skill() {
            sample_files(&directory)
        } else {
            // A flat skill file shares its directory with others: list none (SK4).
            Vec::new()
        };
        let output = render(&name, &parsed.body, &directory, &files);
        let mut loaded = SkillOutput {
            name,
            directory,
            output: None,
            truncated: false,
        };
        let max = ctx.budget.max_structured_bytes();
        keep_if_fits(&mut loaded, |o| &mut o.output, &output, max);
        Ok(Rendered::text(loaded, output))
    }
}

/// The model text of a loaded skill (SK5).
pub fn render(name: &str, content: &str, directory: &Path, files: &[PathBuf]) -> String {
    let base = url::Url::from_file_path(directory)
        .map_or_else(|()| directory.display().to_string(), |url| url.to_string());
    let mut lines = vec![
        format!("<skill_content name=\"{name}\">"),
        format!("# Skill: {name}"),
        String::new(),
        content.trim().to_owned(),
        String::new(),
        format!("Base directory for this skill: {base}"),
        "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.".to_owned(),
        "Note: file list is sampled.".to_owned(),
        String::new(),
        "<skill_files>".to_owned(),
    ];
    lines.extend(
        files
            .iter()
            .map(|file| format!("<file>{}</file>", file.display())),
    );
    lines.push("</skill_files>".to_owned());
    lines.push("</skill_content>".to_owned());
    lines.join("\n")
}

/// SK4: the files below `directory` (dotfiles included, `SKILL.md` files left out), as
/// absolute paths, sorted, the first [`FILE_LIMIT`]. Symlinked directories are not followed.
pub fn sample_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    let mut scanned = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            scanned += 1;
            if scanned > MAX_SCANNED {
                break;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if entry.file_name() != SKILL_FILE
                && fs::metadata(&path).is_ok_and(|m| m.is_file())
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files.truncate(FILE_LIMIT);
    files
}

/// The tool description: the fixed text and the available skills (`name: description`).
pub fn description(catalog: &SkillCatalog) -> String {
    let mut text = format!("{DESCRIPTION}\n\nAvailable skills:");
    for skill in catalog.skills() {
        let summary = skill
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let _ = write!(text, "\n- {}: {summary}", skill.name);
    }
    text
}

/// The `skill` tool over `catalog`, asserting through `permission`; `None` when the catalog
/// has no skill.
pub(crate) fn skill_tool(permission: Permission, catalog: SkillCatalog) -> Option<Tool> {
    if catalog.is_empty() {
        return None;
    }
    let tool = Tool::typed(
        description(&catalog),
        LoadSkill {
            permission,
            catalog,
        },
    )
    .rendered()
    .build();
    Some(tool)
}
