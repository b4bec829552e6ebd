//! The sandbox the bash execution target runs allowed lines in.
//!
//! - `PATH` holds only `<scratch>/bin`: harmless programs (links to the system's `echo`,
//!   `cat`, `env`, `xargs`, ...) and, for every denied name, a script that only creates the
//!   file `<scratch>/markers/<name>`.
//! - The shell is a wrapper that, when `unshare` works, enters new user, mount and network
//!   namespaces, binds the marker scripts over the system's own copies of the denied programs
//!   (so `env -i rm`, `command -p rm` or `/bin/rm` also only leave a marker), makes `/`
//!   read-only and sets no-new-privileges before running `/bin/sh`. Only tmpfs mounts such as
//!   the scratch directory stay writable.
//! - The generated lines use words from a small alphabet without `/`, so they name nothing
//!   outside the working directory.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Programs the denied rules name; each is replaced by a marker script.
pub const DENIED: &[&str] = &["rm", "curl"];

/// Harmless programs linked into the sandbox's `PATH`.
const HARMLESS: &[&str] = &[
    "echo", "cat", "true", "false", "printf", "env", "nice", "timeout", "nohup", "xargs", "sh",
    "bash", "dash", "find", "sort", "head", "tr", "tee", "test", "stdbuf", "setsid", "seq", "wc",
];

/// Where the sandbox lives and which shell runs in it.
#[derive(Debug)]
pub struct Sandbox {
    pub bin: PathBuf,
    pub markers: PathBuf,
    /// The wrapper to give the bash tool as its shell.
    pub shell: PathBuf,
    /// Whether the namespaces could be entered (otherwise only `PATH` guards).
    pub isolated: bool,
}

impl Sandbox {
    /// Builds the sandbox in `scratch`.
    pub fn new(scratch: &Path) -> Self {
        let bin = scratch.join("bin");
        let markers = scratch.join("markers");
        std::fs::create_dir_all(&bin).expect("the sandbox bin directory");
        std::fs::create_dir_all(&markers).expect("the markers directory");
        for name in HARMLESS {
            if let Some(real) = which(name) {
                std::os::unix::fs::symlink(real, bin.join(name)).expect("a harmless program");
            }
        }
        for name in DENIED {
            let script = format!("#!/bin/sh\n: > '{}'\n", markers.join(name).display());
            write_executable(&bin.join(name), &script);
        }
        let isolated = namespaces_work();
        let shell = scratch.join("sandbox-sh");
        let script = if isolated {
            let mut binds = String::new();
            for name in DENIED {
                for dir in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"] {
                    let real = Path::new(dir).join(name);
                    if real.exists() {
                        binds.push_str(&format!(
                            "/usr/bin/mount --bind \"{}\" \"{}\" || exit 97\n",
                            bin.join(name).display(),
                            real.display()
                        ));
                    }
                }
            }
            format!(
                "#!/bin/sh\nexec /usr/bin/unshare -rnm --propagation private /bin/sh -c '\n{binds}\
                 /usr/bin/mount -o remount,bind,ro / || exit 97\n\
                 exec /usr/bin/setpriv --no-new-privs /bin/sh \"$@\"' sh \"$@\"\n"
            )
        } else {
            eprintln!("bash_exec: unshare is not available; only PATH guards the sandbox");
            "#!/bin/sh\nexec /bin/sh \"$@\"\n".to_owned()
        };
        write_executable(&shell, &script);
        Self {
            bin,
            markers,
            shell,
            isolated,
        }
    }

    /// The denied programs that ran (their markers exist).
    pub fn ran(&self) -> Vec<&'static str> {
        DENIED
            .iter()
            .copied()
            .filter(|name| self.markers.join(name).exists())
            .collect()
    }

    /// The environment commands start from.
    pub fn env(&self, home: &Path) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        vec![
            ("PATH".into(), self.bin.clone().into_os_string()),
            ("HOME".into(), home.as_os_str().to_owned()),
            ("LC_ALL".into(), "C".into()),
        ]
    }
}

fn which(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.exists())
}

fn write_executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("a sandbox script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .expect("an executable sandbox script");
}

fn namespaces_work() -> bool {
    Path::new("/usr/bin/unshare").exists()
        && Path::new("/usr/bin/setpriv").exists()
        && Command::new("/usr/bin/unshare")
            .args(["-rnm", "--propagation", "private", "/bin/sh", "-c"])
            .arg("/usr/bin/mount -o remount,bind,ro / && exec /usr/bin/setpriv --no-new-privs true")
            .status()
            .is_ok_and(|status| status.success())
}
