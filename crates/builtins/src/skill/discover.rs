//! Finding skills: `SKILL.md` files (and flat `*.md` skill files) with YAML front matter.
//!
//! Sources, in precedence order (the first skill of a name wins; later ones are reported as
//! shadowed):
//! 1. the Location's [`PROJECT_SKILL_DIRS`]: tackle's own, then where opencode, Kilo, Claude
//!    Code and other agents (`.agents`) keep skills, so a project set up for one of them works;
//! 2. the user's directories, in the order given ([`SkillSources::user_dirs`]; by default
//!    [`SkillSources::for_user`]: the same agents' places in the user's configuration and home
//!    directories, tackle's first).
//!
//! Within a source, every `SKILL.md` below it is a skill (directories are followed through
//! symlinks, each real directory once), as is a `*.md` file directly in it that starts with a
//! `---` front matter line. A `SKILL.md` that cannot be used is reported with its reason;
//! other Markdown files without front matter (a README) are not skills and not reported.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The skill directories of a project, relative to the Location, in precedence order.
pub const PROJECT_SKILL_DIRS: [&str; 7] = [
    ".tackle/skills",
    ".opencode/skills",
    ".opencode/skill",
    ".kilo/skills",
    ".kilocode/skills",
    ".claude/skills",
    ".agents/skills",
];

/// The user's skill directories below their configuration directory (`~/.config`), in
/// precedence order.
pub const USER_CONFIG_SKILL_DIRS: [&str; 4] = [
    "tackle/skills",
    "opencode/skills",
    "opencode/skill",
    "kilo/skills",
];

/// The user's skill directories below their home directory, after those of
/// [`USER_CONFIG_SKILL_DIRS`], in precedence order.
pub const USER_HOME_SKILL_DIRS: [&str; 3] =
    [".kilocode/skills", ".claude/skills", ".agents/skills"];

/// The file name that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// Skill files larger than this are reported instead of parsed.
const MAX_SKILL_BYTES: u64 = 1024 * 1024;
/// How deep below a source directory skills are looked for.
const MAX_DEPTH: usize = 8;
/// Directories never searched for skills.
const SKIPPED_DIRS: [&str; 2] = [".git", "node_modules"];

/// Where skills are looked for besides the Location's own directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSources {
    /// The user's skill directories, after the project's, in precedence order.
    pub user_dirs: Vec<PathBuf>,
}

impl SkillSources {
    /// The user's skill directories from an environment lookup: [`SkillSources::for_user`] of
    /// `$HOME` and `$XDG_CONFIG_HOME` (else `$HOME/.config`; on Windows `%USERPROFILE%` and
    /// `%APPDATA%`). Pass `|key| std::env::var_os(key)`; tests pass their own map.
    pub fn from_env(get: impl Fn(&str) -> Option<OsString>) -> Self {
        let non_empty = |key: &str| {
            get(key)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let (home, config) = if cfg!(windows) {
            (non_empty("USERPROFILE"), non_empty("APPDATA"))
        } else {
            let home = non_empty("HOME");
            let config = non_empty("XDG_CONFIG_HOME")
                .or_else(|| home.as_ref().map(|home| home.join(".config")));
            (home, config)
        };
        Self::for_user(home.as_deref(), config.as_deref())
    }

    /// The skill directories of a user whose home is `home` and configuration directory
    /// `config`: [`USER_CONFIG_SKILL_DIRS`] below `config`, then [`USER_HOME_SKILL_DIRS`] below
    /// `home`. Either may be unknown; missing directories are skipped when discovering.
    pub fn for_user(home: Option<&Path>, config: Option<&Path>) -> Self {
        fn below(base: Option<&Path>, dirs: &[&str]) -> Vec<PathBuf> {
            base.map(|base| dirs.iter().map(|dir| base.join(dir)).collect())
                .unwrap_or_default()
        }
        let mut user_dirs = below(config, &USER_CONFIG_SKILL_DIRS);
        user_dirs.extend(below(home, &USER_HOME_SKILL_DIRS));
        Self { user_dirs }
    }

    /// Every source directory for a Location at `location_dir`, in precedence order.
    pub fn directories(&self, location_dir: &Path) -> Vec<PathBuf> {
        PROJECT_SKILL_DIRS
            .iter()
            .map(|dir| location_dir.join(dir))
            .chain(self.user_dirs.iter().cloned())
            .collect()
    }
}

/// A skill that can be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (front matter `name`).
    pub name: String,
    /// What it is for (front matter `description`).
    pub description: String,
    /// The skill file (`.../<dir>/SKILL.md` or a flat `.../<name>.md`).
    pub location: PathBuf,
}

impl Skill {
    /// The skill's base directory: the directory of its file.
    pub fn directory(&self) -> &Path {
        self.location.parent().unwrap_or(&self.location)
    }

    /// True for a `SKILL.md` skill, whose directory holds its other files.
    pub fn is_directory_skill(&self) -> bool {
        self.location
            .file_name()
            .is_some_and(|name| name == SKILL_FILE)
    }
}

/// A skill file that was found but is not offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    /// The file.
    pub path: PathBuf,
    /// Why it is not offered.
    pub kind: SkillProblemKind,
}

/// Why a skill file is not offered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillProblemKind {
    /// It cannot be read or its front matter is not valid; the text says what is wrong.
    Invalid(String),
    /// A skill of the same name from a source of higher precedence wins.
    Shadowed {
        /// The file of the winning skill.
        by: PathBuf,
    },
}

impl std::fmt::Display for SkillProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            SkillProblemKind::Invalid(reason) => write!(f, "{}: {reason}", self.path.display()),
            SkillProblemKind::Shadowed { by } => write!(
                f,
                "{}: shadowed by the skill of the same name in {}",
                self.path.display(),
                by.display()
            ),
        }
    }
}

/// The skills of one Location, sorted by name, and the skill files that were not usable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    skills: Vec<Skill>,
    problems: Vec<SkillProblem>,
}

impl SkillCatalog {
    /// Discovers the skills of the Location at `location_dir` from `sources`.
    pub fn discover(location_dir: &Path, sources: &SkillSources) -> Self {
        Self::from_directories(&sources.directories(location_dir))
    }

    /// Discovers the skills below `directories`, the first having the highest precedence.
    /// Missing directories are skipped.
    pub fn from_directories(directories: &[PathBuf]) -> Self {
        let mut catalog = Self::default();
        let mut visited = HashSet::new();
        for root in directories {
            let mut found = Vec::new();
            collect(root, 0, &mut visited, &mut found);
            found.sort();
            for path in found {
                catalog.add(path);
            }
        }
        catalog.skills.sort_by(|a, b| a.name.cmp(&b.name));
        catalog
    }

    fn add(&mut self, path: PathBuf) {
        let flat = path.file_name().is_none_or(|name| name != SKILL_FILE);
        match read_skill_file(&path) {
            Ok(parsed) => {
                if let Some(winner) = self.skills.iter().find(|s| s.name == parsed.name) {
                    let by = winner.location.clone();
                    self.problems.push(SkillProblem {
                        path,
                        kind: SkillProblemKind::Shadowed { by },
                    });
                } else {
                    self.skills.push(Skill {
                        name: parsed.name,
                        description: parsed.description,
                        location: path,
                    });
                }
            }
            // A flat Markdown file without front matter is documentation, not a skill.
            Err(FrontMatterError::Missing) if flat => {}
            Err(err) => self.problems.push(SkillProblem {
                path,
                kind: SkillProblemKind::Invalid(err.to_string()),
            }),
        }
    }

    /// The usable skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// The skill files that are not offered, with the reason, in discovery order.
    pub fn problems(&self) -> &[SkillProblem] {
        &self.problems
    }

    /// True when there is no usable skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
}

/// Collects skill files below `dir`: every `SKILL.md`, and flat `*.md` files directly in the
/// source directory (`depth == 0`). Each real directory is visited once (symlink cycles).
fn collect(dir: &Path, depth: usize, visited: &mut HashSet<PathBuf>, found: &mut Vec<PathBuf>) {
    let Ok(real) = fs::canonicalize(dir) else {
        return;
    };
    if depth > MAX_DEPTH || !visited.insert(real) {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // `metadata` follows symlinks, so linked skill directories are found too.
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        let name = entry.file_name();
        if meta.is_dir() {
            if !SKIPPED_DIRS.iter().any(|skip| name == *skip) {
                collect(&path, depth + 1, visited, found);
            }
        } else if meta.is_file()
            && (name == SKILL_FILE
                || (depth == 0 && path.extension().is_some_and(|ext| ext == "md")))
        {
            found.push(path);
        }
    }
}

/// A parsed skill file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkillFile {
    pub(crate) name: String,
    pub(crate) description: String,
    /// The Markdown after the front matter.
    pub(crate) body: String,
}

/// Why a skill file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrontMatterError {
    #[error("no front matter: the file must start with a `---` line")]
    Missing,
    #[error("unterminated front matter: no closing `---` line")]
    Unterminated,
    #[error("invalid YAML front matter: {0}")]
    Yaml(String),
    #[error("the front matter has no `{0}`")]
    MissingField(&'static str),
    #[error(
        "invalid name {0:?}: use 1-64 lowercase letters, digits and single hyphens (e.g. `git-release`)"
    )]
    InvalidName(String),
    #[error("cannot read the file: {0}")]
    Unreadable(String),
    #[error("the file is larger than {MAX_SKILL_BYTES} bytes")]
    TooLarge,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
}

pub(crate) fn read_skill_file(path: &Path) -> Result<SkillFile, FrontMatterError> {
    let size = fs::metadata(path)
        .map_err(|err| FrontMatterError::Unreadable(err.to_string()))?
        .len();
    if size > MAX_SKILL_BYTES {
        return Err(FrontMatterError::TooLarge);
    }
    let text =
        fs::read_to_string(path).map_err(|err| FrontMatterError::Unreadable(err.to_string()))?;
    parse_skill(&text)
}

/// Splits `---\n<yaml>\n---\n<body>` and validates `name` and `description`.
pub(crate) fn parse_skill(text: &str) -> Result<SkillFile, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end() != "---" {
        return Err(FrontMatterError::Missing);
    }
    let mut yaml = String::new();
    let mut body_start = None;
    let mut offset = first.len();
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            body_start = Some(offset + line.len());
            break;
        }
        yaml.push_str(line);
        offset += line.len();
    }
    let body_start = body_start.ok_or(FrontMatterError::Unterminated)?;
    let front: FrontMatter = if yaml.trim().is_empty() {
        FrontMatter {
            name: None,
            description: None,
        }
    } else {
        serde_saphyr::from_str(&yaml).map_err(|err| FrontMatterError::Yaml(one_line(&err)))?
    };
    let name = front
        .name
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .ok_or(FrontMatterError::MissingField("name"))?;
    if !valid_name(&name) {
        return Err(FrontMatterError::InvalidName(name));
    }
    let description = front
        .description
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .ok_or(FrontMatterError::MissingField("description"))?;
    Ok(SkillFile {
        name,
        description,
        body: text[body_start..].to_owned(),
    })
}

fn one_line(err: &impl std::fmt::Display) -> String {
    err.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `^[a-z0-9]+(-[a-z0-9]+)*$`, at most 64 characters (the Agent Skills naming rule).
pub(crate) fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && !name.is_empty()
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests;
