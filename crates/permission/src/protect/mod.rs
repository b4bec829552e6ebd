//! Protected resources: writes that always ask, whatever the rules or saved approvals say.
//!
//! A tool that may write a configuration file could grant itself permission: with only `edit`
//! allowed, writing `tackle.json` would allow everything on the next call. So an `edit`
//! request (the [`SharedAction::Edit`] every file-changing tool declares) on a protected
//! resource is always asked in [`Permission::assert`](crate::Permission::assert), the one place
//! every such request passes: no allow rule and no saved approval pre-approves it, and a
//! configured deny still blocks it.
//!
//! Protected are, by path component (ASCII case folded, so a case-insensitive file system
//! cannot slip one through under another spelling): a file named `tackle.json`,
//! `tackle.jsonc`, `opencode.json` or `opencode.jsonc` anywhere; anything under (or named)
//! `.git`, `.tackle`, `.opencode`, `.claude`, `.agents`, `.kilo` or `.kilocode` anywhere; and anything under the user's configuration
//! and data directories ([`Protected::user_dirs`]: the data directory holds the saved
//! approvals and the host's trust records, which would grant as much as a rule), and the files
//! a host names ([`Protected::and_file`]: its audit log).
//!
//! Edit resources are canonical: relative inside the Location, absolute outside. A relative
//! resource is read against the Location ([`Protected::in_location`]) before it is compared
//! with the user's directories, so a Location at `$HOME` (or inside `~/.config/opencode`)
//! cannot reach them by a relative path. The directories are compared by their real paths
//! too (the nearest existing ancestor resolved, for one that does not exist yet), so a
//! symlinked `$HOME` or Location hides nothing; components are compared ASCII case folded.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use tackle_tool_core::SharedAction;

mod paths;

use paths::{add_with_real_path, is_or_rotates, lexical, within};

/// File names whose writes always ask, wherever they are.
const CONFIG_FILES: [&str; 4] = [
    "tackle.json",
    "tackle.jsonc",
    "opencode.json",
    "opencode.jsonc",
];

/// Directory names whose contents' writes always ask, wherever they are.
/// Besides `.git` (hooks run code), the directories where tackle and the agents whose project
/// layout it reads keep configuration, skills and agents: what is written there becomes
/// instructions a later session follows.
const CONTROL_DIRS: [&str; 7] = [
    ".git",
    ".tackle",
    ".opencode",
    ".claude",
    ".agents",
    ".kilo",
    ".kilocode",
];

/// Why a resource is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protection {
    /// A configuration file (`tackle.json`, `opencode.json`, ...); the name as written.
    ConfigFile(String),
    /// Inside a repository-control or configuration directory (`.git`, `.tackle`,
    /// `.opencode`); the directory name as written.
    ControlDir(String),
    /// Inside one of the user's directories (configuration, or the data directory that holds
    /// saved approvals and trust).
    UserDir(PathBuf),
    /// A file the host keeps its own record in (its audit log).
    HostFile(PathBuf),
}

impl fmt::Display for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConfigFile(_) => f.write_str("a configuration file"),
            Self::ControlDir(name) => write!(f, "inside {name}/"),
            Self::UserDir(dir) => write!(f, "inside the user directory {}", dir.display()),
            Self::HostFile(file) => write!(f, "the host's own file {}", file.display()),
        }
    }
}

/// Which `edit` resources always ask. [`Protected::from_env`] is what
/// [`Permission::new`](crate::Permission::new) uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Protected {
    /// The user's configuration and data directories, absolute (with their real paths too,
    /// since resources are canonical).
    pub user_dirs: Vec<PathBuf>,
    /// Files the host writes itself (its audit log), absolute, with their real paths too.
    pub files: Vec<PathBuf>,
    /// The canonical Location root relative resources are read against; without it a
    /// relative resource is compared with the configuration names only.
    pub location: Option<PathBuf>,
}

impl Protected {
    /// The user's directories from an environment lookup: `tackle`, `opencode` and `kilo` under
    /// `$XDG_CONFIG_HOME` and under `$HOME/.config`, and tackle's default data directory
    /// (`$XDG_DATA_HOME/tackle`, `$HOME/.local/share/tackle`; on macOS `~/Library/Application
    /// Support/tackle`; on Windows under `%APPDATA%` too). Pass `|key| std::env::var_os(key)`;
    /// tests pass their own map.
    pub fn from_env(get: impl Fn(&str) -> Option<OsString>) -> Self {
        let absolute = |key: &str| {
            get(key)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let home = absolute("HOME");
        let mut config = Vec::new();
        config.extend(absolute("XDG_CONFIG_HOME"));
        config.extend(home.as_ref().map(|home| home.join(".config")));
        let mut data = Vec::new();
        data.extend(absolute("XDG_DATA_HOME"));
        data.extend(home.as_ref().map(|home| home.join(".local").join("share")));
        if cfg!(target_os = "macos") {
            data.extend(home.map(|home| home.join("Library").join("Application Support")));
        }
        if cfg!(windows) {
            config.extend(absolute("APPDATA"));
            data.extend(absolute("APPDATA"));
        }
        let mut dirs = Vec::new();
        for base in config {
            dirs.push(base.join("tackle"));
            dirs.push(base.join("opencode"));
            dirs.push(base.join("kilo"));
        }
        dirs.extend(data.into_iter().map(|base| base.join("tackle")));
        Self::with_user_dirs(dirs)
    }

    /// The same, with `dir` (and its real path) protected too: a host's own data directory
    /// when it is not the default one.
    #[must_use]
    pub fn and_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let more = Self::with_user_dirs([dir.into()]);
        for dir in more.user_dirs {
            if !self.user_dirs.contains(&dir) {
                self.user_dirs.push(dir);
            }
        }
        self
    }

    /// The same, with the file `file` (and its real path) always asked, and its numbered
    /// rotations `<file>.<n>`: a file the host writes itself, such as its audit log, which a
    /// tool must not rewrite or truncate unasked.
    #[must_use]
    pub fn and_file(mut self, file: impl Into<PathBuf>) -> Self {
        add_with_real_path(&mut self.files, file.into());
        self
    }

    /// The same, reading relative resources against the canonical Location root `root` (what
    /// a host's tools resolve paths against), so the user's directories and the host's files
    /// are protected inside the Location too, and everything when the Location lies inside
    /// one of them.
    #[must_use]
    pub fn in_location(mut self, root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        self.location = root.is_absolute().then_some(root);
        self
    }

    /// `dirs` (absolute) and their real paths.
    pub fn with_user_dirs(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut user_dirs: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            add_with_real_path(&mut user_dirs, dir);
        }
        Self {
            user_dirs,
            ..Self::default()
        }
    }

    /// Why `action` on `resource` always asks, or `None` when the rules decide alone.
    pub fn check(&self, action: &str, resource: &str) -> Option<Protection> {
        if action != SharedAction::Edit.as_str() {
            return None;
        }
        let components: Vec<&str> = resource.split(['/', '\\']).collect();
        if let Some(dir) = components
            .iter()
            .find(|c| CONTROL_DIRS.iter().any(|d| c.eq_ignore_ascii_case(d)))
        {
            return Some(Protection::ControlDir((*dir).to_owned()));
        }
        if let Some(name) = components
            .last()
            .filter(|c| CONFIG_FILES.iter().any(|f| c.eq_ignore_ascii_case(f)))
        {
            return Some(Protection::ConfigFile((*name).to_owned()));
        }
        let path = Path::new(resource);
        let absolute = if path.is_absolute() {
            lexical(path)
        } else {
            lexical(&self.location.as_ref()?.join(path))
        };
        if let Some(file) = self
            .files
            .iter()
            .find(|file| is_or_rotates(&absolute, file))
        {
            return Some(Protection::HostFile(file.clone()));
        }
        self.user_dirs
            .iter()
            .find(|dir| within(&absolute, dir))
            .map(|dir| Protection::UserDir(dir.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(resource: &str) -> Option<String> {
        let protected = Protected::with_user_dirs([PathBuf::from("/home/ann/.config/tackle")]);
        protected
            .check("edit", resource)
            .map(|reason| reason.to_string())
    }

    #[test]
    fn configuration_files_anywhere() {
        for resource in [
            "tackle.json",
            "sub/dir/opencode.jsonc",
            "/elsewhere/repo/TACKLE.JSON",
            "a\\opencode.json",
        ] {
            assert!(checked(resource).is_some(), "{resource}");
        }
        assert_eq!(
            checked("tackle.json").as_deref(),
            Some("a configuration file")
        );
    }

    #[test]
    fn control_directories_anywhere() {
        for resource in [
            ".git",
            ".git/config",
            "vendor/lib/.git/hooks/pre-commit",
            ".tackle/skills/x/SKILL.md",
            ".OpenCode/agent.md",
            "/other/.git/HEAD",
        ] {
            assert!(checked(resource).is_some(), "{resource}");
        }
        assert_eq!(
            checked("a/.git/hooks/post-checkout").as_deref(),
            Some("inside .git/")
        );
    }

    #[test]
    fn the_user_configuration() {
        assert_eq!(
            checked("/home/ann/.config/tackle/skills/a/SKILL.md").as_deref(),
            Some("inside the user directory /home/ann/.config/tackle")
        );
        // A component boundary, not a string prefix; a relative resource is inside the
        // Location.
        assert_eq!(checked("/home/ann/.config/tackle2/x"), None);
        assert_eq!(checked("home/ann/.config/tackle/x"), None);
    }

    #[test]
    fn ordinary_files_and_other_actions_are_not_protected() {
        for resource in [
            "src/main.rs",
            "tackle.json.bak",
            "my-tackle.json",
            ".github/workflows/ci.yml",
            "git/config",
            "*",
        ] {
            assert_eq!(checked(resource), None, "{resource}");
        }
        let protected = Protected::default();
        assert_eq!(protected.check("read", "tackle.json"), None);
        assert_eq!(protected.check("bash", ".git/config"), None);
    }

    #[test]
    fn from_env_names_tackle_opencode_and_kilo_under_both_bases() {
        let protected = Protected::from_env(|key| match key {
            "XDG_CONFIG_HOME" => Some("/cfg".into()),
            "XDG_DATA_HOME" => Some("/data".into()),
            "HOME" => Some("/nonexistent-home-for-test".into()),
            _ => None,
        });
        for dir in [
            "/cfg/tackle",
            "/cfg/opencode",
            "/cfg/kilo",
            "/nonexistent-home-for-test/.config/tackle",
            "/nonexistent-home-for-test/.config/kilo",
            "/nonexistent-home-for-test/.config/opencode",
            "/data/tackle",
            "/nonexistent-home-for-test/.local/share/tackle",
        ] {
            assert!(
                protected.user_dirs.contains(&PathBuf::from(dir)),
                "{dir}: {:?}",
                protected.user_dirs
            );
        }
        // A relative value is ignored rather than read against the current directory.
        let relative = Protected::from_env(|key| (key == "HOME").then(|| "home".into()));
        assert!(relative.user_dirs.is_empty());
        let more = relative.and_dir("/srv/tackle-data");
        assert_eq!(more.user_dirs, [PathBuf::from("/srv/tackle-data")]);
        // A directory or file given relative is the one under the current directory.
        let file = Protected::default().and_file("no-such-dir-for-test/audit.jsonl");
        let cwd = std::env::current_dir().unwrap();
        assert!(
            file.files
                .contains(&cwd.join("no-such-dir-for-test/audit.jsonl")),
            "{:?}",
            file.files
        );
    }

    /// The protection of a host whose user directories lie under `home` and whose Location
    /// is `location`.
    fn at(home: &Path, location: &Path) -> Protected {
        let home = home.as_os_str().to_owned();
        Protected::from_env(|key| (key == "HOME").then(|| home.clone())).in_location(location)
    }

    #[test]
    fn relative_resources_inside_a_location_at_home_reach_the_user_directories() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let protected = at(&home, &home);
        for resource in [
            ".local/share/tackle/permission/x.json",
            ".local/share/tackle/trust.json",
            ".config/opencode/skills/a/SKILL.md",
            ".config/kilo/skills/a/SKILL.md",
            ".config/tackle/x",
            ".Config/OpenCode/skills/a/SKILL.md",
            "src/../.config/kilo/x",
        ] {
            assert!(
                matches!(
                    protected.check("edit", resource),
                    Some(Protection::UserDir(_))
                ),
                "{resource}"
            );
        }
        for resource in [
            "src/main.rs",
            ".config/other/x",
            ".local/share/tackle2/x",
            ".",
        ] {
            assert_eq!(protected.check("edit", resource), None, "{resource}");
        }
    }

    #[test]
    fn a_location_inside_a_protected_directory_protects_every_resource() {
        let home = tempfile::tempdir().unwrap();
        let inside = home.path().join(".config").join("opencode");
        std::fs::create_dir_all(&inside).unwrap();
        let inside = std::fs::canonicalize(inside).unwrap();
        let protected = at(home.path(), &inside);
        for resource in [".", "notes.md", "skills/a/SKILL.md"] {
            assert!(protected.check("edit", resource).is_some(), "{resource}");
        }
        // Above it, only what lies inside.
        let above = at(home.path(), inside.parent().unwrap());
        assert!(above.check("edit", "opencode/x").is_some());
        assert_eq!(above.check("edit", "notes.md"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_home_is_protected_by_its_real_path_before_the_directories_exist() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real-home");
        std::fs::create_dir(&real).unwrap();
        let link = root.path().join("linked-home");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        // HOME names the link; the Location is canonical (the real path); nothing under HOME
        // exists yet.
        let real = std::fs::canonicalize(&real).unwrap();
        let protected = at(&link, &real);
        assert!(
            protected
                .check("edit", ".config/kilo/skills/a/SKILL.md")
                .is_some()
        );
        assert!(
            protected
                .check(
                    "edit",
                    &format!("{}/.local/share/tackle/trust.json", real.display())
                )
                .is_some()
        );
    }

    #[test]
    fn a_host_file_is_protected_by_name_not_its_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let location = std::fs::canonicalize(dir.path()).unwrap();
        let protected = Protected::default()
            .and_file(location.join("logs").join("audit.jsonl"))
            .in_location(&location);
        assert_eq!(
            protected.check("edit", "logs/audit.jsonl"),
            Some(Protection::HostFile(
                location.join("logs").join("audit.jsonl")
            ))
        );
        assert!(protected.check("edit", "logs/audit.jsonl.3").is_some());
        assert_eq!(protected.check("edit", "logs/other.jsonl"), None);
        assert_eq!(protected.check("edit", "logs/audit.jsonl.bak"), None);
        assert_eq!(protected.check("edit", "logs/audit.jsonl.1/x"), None);
        assert_eq!(protected.check("read", "logs/audit.jsonl"), None);
    }
}
