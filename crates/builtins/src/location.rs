//! The Location (one workspace directory) and path resolution against it (reference LM1–LM8).
//!
//! Invariants:
//! - A relative path never leaves the Location (`relative_escape`); a path inside it whose real
//!   target lies outside through a symlink is refused (`location_escape`).
//! - Every resolved path is canonical: symlinks are resolved, also for a file that does not
//!   exist yet (its nearest existing ancestor is canonicalized, a dangling symlink is followed),
//!   so a write through a symlink reaches the real file.
//! - Resources shown to permission are canonical: relative to the canonical root inside the
//!   Location (`"."` for the root), absolute with `/` outside it.
//! - `~` is never expanded; a trailing newline of the argument is dropped; `\` separators are
//!   read as `/` unless a file with the literal name exists.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, PathReason};

/// Symlinks followed while resolving one path before giving up (Linux's own limit).
const MAX_SYMLINK_HOPS: u32 = 40;

/// One workspace directory that tools resolve paths against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    directory: PathBuf,
    root: PathBuf,
}

/// What the caller expects the path to name; it decides the `external_directory` anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file (existing or to be created).
    File,
    /// A directory: an existing external directory is itself the anchor.
    Directory,
}

/// What an existing path is, after following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Anything else (a socket, a device, a FIFO).
    Other,
}

impl EntryKind {
    pub(crate) fn of(file_type: fs::FileType) -> Self {
        if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_file() {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// A path argument resolved against a [`Location`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The argument as the caller gave it (for messages).
    pub input: String,
    /// The canonical absolute path (symlinks resolved; for a missing file, its canonical
    /// nearest existing ancestor joined with the rest).
    pub canonical: PathBuf,
    /// What permission is asked about: relative to the Location root, or absolute outside it.
    pub resource: String,
    /// What exists at `canonical`, or `None` when nothing does yet.
    pub kind: Option<EntryKind>,
    /// The nearest existing canonical directory: the path itself for a directory, else the
    /// directory that holds (or will hold) it.
    pub directory: PathBuf,
    /// Present when the path lies outside the Location.
    pub external: Option<ExternalDirectory>,
}

impl Resolved {
    /// True when the path lies outside the Location.
    pub fn is_external(&self) -> bool {
        self.external.is_some()
    }
}

/// The `external_directory` permission an outside path needs first (LM6, LM7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalDirectory {
    /// The anchor directory (canonical).
    pub directory: PathBuf,
    /// `<directory>/*`: both the resource asked about and the pattern an "always" saves.
    pub pattern: String,
}

impl Location {
    /// The Location for `directory`, which must be an absolute path to an existing directory.
    pub fn new(directory: impl Into<PathBuf>) -> Result<Self, Error> {
        let directory = directory.into();
        let invalid = |problem: String| Error::InvalidLocation {
            directory: directory.clone(),
            problem,
        };
        if !directory.is_absolute() {
            return Err(invalid("the path is not absolute".to_owned()));
        }
        let root = fs::canonicalize(&directory).map_err(|err| invalid(err.to_string()))?;
        if !root.is_dir() {
            return Err(invalid("not a directory".to_owned()));
        }
        Ok(Self {
            directory: normalize(&directory),
            root,
        })
    }

    /// The directory as given (lexically normalized).
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// The canonical directory (symlinks resolved), computed once.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path argument (LM1–LM6). Touches the filesystem only to stat and read links.
    pub fn resolve(&self, path: &str, kind: Kind) -> Result<Resolved, Error> {
        let refuse = |reason| Error::Path {
            path: path.to_owned(),
            reason,
        };
        let cleaned = path.trim_end_matches(['\n', '\r']);
        if cleaned.contains('\0') {
            return Err(refuse(PathReason::Invalid));
        }
        let cleaned = self.separators(cleaned);
        let input = Path::new(&cleaned);
        let relative = !input.is_absolute();
        let absolute = normalize(&self.directory.join(input));
        let lexically_internal =
            contains(&self.directory, &absolute) || contains(&self.root, &absolute);
        if relative && !lexically_internal {
            return Err(refuse(PathReason::RelativeEscape));
        }
        let real = match real_path_below(&self.root, &absolute) {
            Some(real) => real,
            None => real_path(&absolute).map_err(|err| match err {
                RealError::Reason(reason) => refuse(reason),
                RealError::Io(op, at, source) => Error::io(op, at, source),
            })?,
        };
        let inside = contains(&self.root, &real.canonical);
        if lexically_internal && !inside {
            return Err(refuse(PathReason::LocationEscape));
        }
        let resource = if inside {
            relative_resource(&self.root, &real.canonical)
        } else {
            slashed(&real.canonical)
        };
        let external = (!inside).then(|| {
            let anchor = match (kind, real.kind) {
                (Kind::Directory, Some(EntryKind::Directory)) => real.canonical.clone(),
                _ => real.directory.clone(),
            };
            let base = slashed(&anchor);
            ExternalDirectory {
                pattern: format!("{}/*", base.trim_end_matches('/')),
                directory: anchor,
            }
        });
        Ok(Resolved {
            input: path.to_owned(),
            canonical: real.canonical,
            resource,
            kind: real.kind,
            directory: real.directory,
            external,
        })
    }

    /// A Windows-style path (`src\main.rs`) means `src/main.rs`, unless the literal name exists.
    fn separators(&self, path: &str) -> String {
        if !path.contains('\\') || fs::symlink_metadata(self.directory.join(path)).is_ok() {
            return path.to_owned();
        }
        path.replace('\\', "/")
    }
}

/// `parent` contains `child` lexically (reference LC2); a path contains itself.
pub fn contains(parent: &Path, child: &Path) -> bool {
    child.starts_with(parent)
}

/// `path` with `.` and `..` removed lexically, like Node's `path.resolve` (no filesystem access).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `..` of the root is the root; of a relative start it stays.
                if out.file_name().is_some() {
                    out.pop();
                } else if !out.has_root() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` with `/` separators, as permission resources are written (on Unix `\\` is an
/// ordinary file-name character and stays).
fn slashed(path: &Path) -> String {
    let text = path.to_string_lossy();
    if cfg!(windows) {
        text.replace('\\', "/")
    } else {
        text.into_owned()
    }
}

fn relative_resource(root: &Path, canonical: &Path) -> String {
    match canonical.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => slashed(rest),
        Err(_) => slashed(canonical),
    }
}

/// A canonical path and what is there.
#[derive(Debug)]
pub(crate) struct Real {
    pub(crate) canonical: PathBuf,
    pub(crate) kind: Option<EntryKind>,
    pub(crate) directory: PathBuf,
}

impl Real {
    /// What exists at the canonical `canonical`: a directory is its own directory, anything
    /// else is held by its parent.
    fn existing(canonical: PathBuf, kind: EntryKind) -> Self {
        let directory = if kind == EntryKind::Directory {
            canonical.clone()
        } else {
            canonical.parent().unwrap_or(&canonical).to_path_buf()
        };
        Self {
            canonical,
            kind: Some(kind),
            directory,
        }
    }
}

#[derive(Debug)]
pub(crate) enum RealError {
    Reason(PathReason),
    Io(&'static str, PathBuf, io::Error),
}

impl From<RealError> for Error {
    fn from(err: RealError) -> Self {
        match err {
            RealError::Reason(reason) => Error::Path {
                path: String::new(),
                reason,
            },
            RealError::Io(op, at, source) => Error::io(op, at, source),
        }
    }
}

/// The real path of the absolute, normalized `path` when it lies below the canonical `root`,
/// exists, and no component below the root is a symbolic link: the path is then canonical
/// already, which one `lstat` per component below the root shows (canonicalizing reads every
/// component of the whole path as a link). `None` leaves it to [`real_path`]: a link, a
/// missing component, the root itself, anything to look at more closely.
fn real_path_below(root: &Path, path: &Path) -> Option<Real> {
    let rest = path.strip_prefix(root).ok()?;
    let mut canonical = root.to_path_buf();
    let mut kind = None;
    for component in rest.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        canonical.push(name);
        // A component that is not a directory fails the next one's lookup.
        let meta = fs::symlink_metadata(&canonical).ok()?;
        if meta.file_type().is_symlink() {
            return None;
        }
        kind = Some(EntryKind::of(meta.file_type()));
    }
    Some(Real::existing(canonical, kind?))
}

/// The canonical form of an absolute, normalized path that may not exist yet (LM3): existing
/// paths are canonicalized; otherwise the nearest existing ancestor is, a dangling symlink is
/// followed to its target, and the rest is appended.
pub(crate) fn real_path(absolute: &Path) -> Result<Real, RealError> {
    let mut hops = 0;
    real_path_inner(absolute, &mut hops)
}

fn real_path_inner(path: &Path, hops: &mut u32) -> Result<Real, RealError> {
    match fs::canonicalize(path) {
        Ok(canonical) => {
            let meta = fs::metadata(&canonical)
                .map_err(|err| RealError::Io("stat", canonical.clone(), err))?;
            Ok(Real::existing(canonical, EntryKind::of(meta.file_type())))
        }
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(RealError::Reason(PathReason::NonDirectoryAncestor));
            };
            let parent = real_path_inner(parent, hops)?;
            match parent.kind {
                Some(EntryKind::Directory) => {}
                Some(_) => return Err(RealError::Reason(PathReason::NonDirectoryAncestor)),
                None => {
                    return Ok(Real {
                        canonical: parent.canonical.join(name),
                        kind: None,
                        directory: parent.directory,
                    });
                }
            }
            let candidate = parent.canonical.join(name);
            let is_link = fs::symlink_metadata(&candidate)
                .map(|meta| meta.file_type().is_symlink())
                .unwrap_or(false);
            if is_link {
                // A dangling symlink: writing "to it" creates its target, so resolve to that.
                *hops += 1;
                if *hops > MAX_SYMLINK_HOPS {
                    return Err(RealError::Reason(PathReason::SymlinkLoop));
                }
                let target = fs::read_link(&candidate)
                    .map_err(|err| RealError::Io("read link", candidate.clone(), err))?;
                // Not normalized: `..` after a symlinked component must follow that link.
                return real_path_inner(&parent.canonical.join(target), hops);
            }
            Ok(Real {
                canonical: candidate,
                kind: None,
                directory: parent.directory,
            })
        }
        Err(err) => Err(RealError::Io("resolve", path.to_path_buf(), err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize(Path::new("/a/../../b")), PathBuf::from("/b"));
        assert_eq!(normalize(Path::new("/")), PathBuf::from("/"));
    }

    #[test]
    fn contains_is_component_wise() {
        assert!(contains(Path::new("/a/b"), Path::new("/a/b")));
        assert!(contains(Path::new("/a/b"), Path::new("/a/b/c")));
        assert!(!contains(Path::new("/a/b"), Path::new("/a/bc")));
        assert!(!contains(Path::new("/a/b"), Path::new("/a")));
    }

    #[test]
    fn the_walk_below_the_root_agrees_with_canonicalizing_or_leaves_it_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("src/deep/main.rs"), "x").unwrap();
        fs::write(root.join("file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("src/deep/main.rs"), root.join("to_file")).unwrap();
        for taken in ["src", "src/deep", "src/deep/main.rs", "file"] {
            let path = root.join(taken);
            let below = real_path_below(&root, &path).unwrap();
            let real = real_path(&path).unwrap();
            assert_eq!(
                (&below.canonical, below.kind, &below.directory),
                (&real.canonical, real.kind, &real.directory),
                "{taken}"
            );
        }
        // A link anywhere below the root, a missing component, a file used as a directory,
        // the root itself and a path outside it are left to `real_path`.
        for left in [
            "link/deep",
            "to_file",
            "missing",
            "src/missing.rs",
            "file/x",
            "",
        ] {
            assert!(
                real_path_below(&root, &root.join(left)).is_none(),
                "{left:?}"
            );
        }
        assert!(real_path_below(&root, Path::new("/")).is_none());
    }

    #[test]
    fn relative_resources() {
        assert_eq!(relative_resource(Path::new("/r"), Path::new("/r")), ".");
        assert_eq!(
            relative_resource(Path::new("/r"), Path::new("/r/a/b.txt")),
            "a/b.txt"
        );
    }
}
