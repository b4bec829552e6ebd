//! Which shell runs commands by default: the tool is named `bash` and models write bash
//! (`{1..3}`, `[[ ]]`, arrays, `set -o pipefail`), so it is bash wherever bash is installed,
//! and `/bin/sh` only where it is not.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The fallback where no bash is installed.
const POSIX_SHELL: &str = "/bin/sh";

/// `bash` from the absolute directories of `path` (a `PATH` value), then `/bin/bash`, then
/// `/bin/sh`. Relative `PATH` entries are skipped: they would name a shell by the host's
/// working directory, which a project could fill.
pub(crate) fn default_shell(path: Option<&OsStr>) -> PathBuf {
    let on_path = path
        .into_iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bash"));
    on_path
        .chain(std::iter::once(PathBuf::from("/bin/bash")))
        .find(|candidate| is_executable(candidate))
        .unwrap_or_else(|| PathBuf::from(POSIX_SHELL))
}

/// The shell as the tool description names it: bash by name, anything else with a warning
/// that bash syntax is not available.
pub(crate) fn named(shell: &Path) -> String {
    if shell.file_name() == Some(OsStr::new("bash")) {
        format!("bash ({})", shell.display())
    } else {
        format!(
            "{} (not bash: write POSIX sh, without `[[ ]]`, arrays or `{{a..b}}`)",
            shell.display()
        )
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_on_the_path_first_then_bin_bash_then_sh() {
        let dir = tempfile::tempdir().unwrap();
        let bash = dir.path().join("bash");
        std::fs::write(&bash, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bash, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = std::env::join_paths(["relative", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(default_shell(Some(&path)), bash);
        // Not executable: passed over.
        std::fs::set_permissions(&bash, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .unwrap();
        let fallback = default_shell(Some(&path));
        if Path::new("/bin/bash").exists() {
            assert_eq!(fallback, Path::new("/bin/bash"));
        } else {
            assert_eq!(fallback, Path::new(POSIX_SHELL));
        }
    }

    #[test]
    fn the_description_says_when_it_is_not_bash() {
        assert_eq!(named(Path::new("/usr/bin/bash")), "bash (/usr/bin/bash)");
        assert_eq!(
            named(Path::new("/bin/sh")),
            "/bin/sh (not bash: write POSIX sh, without `[[ ]]`, arrays or `{a..b}`)"
        );
    }
}
