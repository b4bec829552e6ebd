//! Versions: the bump a release asks for, and writing it into the workspace manifest.

use std::fmt;
use std::path::Path;

use cargo_metadata::Metadata;
use cargo_metadata::semver;

/// A release version, `MAJOR.MINOR.PATCH` (no pre-release or build suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
}

impl Version {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split('.').collect();
        let [major, minor, patch] = parts.as_slice() else {
            return Err(format!("`{text}` is not a version MAJOR.MINOR.PATCH"));
        };
        let number = |part: &str| {
            part.parse::<u64>()
                .map_err(|_| format!("`{text}` is not a version MAJOR.MINOR.PATCH"))
        };
        Ok(Self {
            major: number(major)?,
            minor: number(minor)?,
            patch: number(patch)?,
        })
    }

    /// The version after this one for `bump`: `major`, `minor`, `patch` or an explicit version,
    /// which must be greater.
    pub(crate) fn bump(self, bump: &str) -> Result<Self, String> {
        let next = match bump {
            "major" => Self {
                major: self.major + 1,
                minor: 0,
                patch: 0,
            },
            "minor" => Self {
                minor: self.minor + 1,
                patch: 0,
                ..self
            },
            "patch" => Self {
                patch: self.patch + 1,
                ..self
            },
            explicit => Self::parse(explicit)?,
        };
        if next <= self {
            return Err(format!("{next} is not after the current version {self}"));
        }
        Ok(next)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Rewrites the root manifest: `[workspace.package] version` and the `version` of every
/// workspace crate in `[workspace.dependencies]` (a line naming a `path`). Only those lines
/// change, so comments and layout stay.
pub(crate) fn write(root: &Path, current: &Version, next: &Version) -> Result<(), String> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|err| format!("Cargo.toml: {err}"))?;
    let updated = bump_manifest(&text, current, next)?;
    std::fs::write(&path, updated).map_err(|err| format!("Cargo.toml: {err}"))
}

pub(crate) fn bump_manifest(
    text: &str,
    current: &Version,
    next: &Version,
) -> Result<String, String> {
    let old = format!("version = \"{current}\"");
    let new = format!("version = \"{next}\"");
    let mut section = "";
    let mut package_version = false;
    let mut requirements = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed;
        }
        let replaced = match section {
            "[workspace.package]" if trimmed == old => {
                package_version = true;
                line.replace(&old, &new)
            }
            "[workspace.dependencies]" if trimmed.contains("path = \"") && line.contains(&old) => {
                requirements += 1;
                line.replace(&old, &new)
            }
            _ => line.to_owned(),
        };
        out.push_str(&replaced);
    }
    if !package_version {
        return Err(format!(
            "Cargo.toml: no `{old}` line in [workspace.package]"
        ));
    }
    if requirements == 0 {
        return Err(format!(
            "Cargo.toml: no workspace crate with `{old}` in [workspace.dependencies]"
        ));
    }
    toml::from_str::<toml::Table>(&out).map_err(|err| format!("bumped Cargo.toml: {err}"))?;
    Ok(out)
}

/// After the bump: every member has the new version and every requirement on a member accepts
/// it (a crate that pins a workspace crate outside `[workspace.dependencies]` fails here).
pub(crate) fn confirm(metadata: &Metadata, next: &Version) -> Result<(), String> {
    let version = semver::Version::new(next.major, next.minor, next.patch);
    let members: Vec<_> = metadata.workspace_packages();
    let mut problems = Vec::new();
    for package in &members {
        if package.version != version {
            problems.push(format!("{} is still {}", package.name, package.version));
        }
        for dep in &package.dependencies {
            let on_member = members.iter().any(|m| m.name.as_str() == dep.name);
            if on_member && !dep.req.comparators.is_empty() && !dep.req.matches(&version) {
                problems.push(format!(
                    "{} requires {} {}, which {version} does not meet",
                    package.name, dep.name, dep.req
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}
