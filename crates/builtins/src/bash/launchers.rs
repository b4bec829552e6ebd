//! Programs that start another program, described by a table of their option grammar, so
//! the command they really run is the one permission sees (`flock f rm x` is `rm x`).
//! A launcher whose command we cannot follow (a remote host, a debugger script) is
//! unresolved: the call asks.

use super::parse::Walker;
use super::words::Word;

/// How a launcher finds the command it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runs {
    /// The words after its options and `operands` are the command (`taskset MASK cmd`).
    Argv,
    /// Only a script option (`-c CMD`) runs something; other operands (a user) change who
    /// runs the login shell, which we do not follow.
    Script,
    /// The words after `operands` are joined into a script for `sh -c` (`sg group 'cmd'`).
    Joined,
    /// What runs cannot be known from the line.
    Opaque(&'static str),
}

/// One launcher's grammar.
struct Launcher {
    name: &'static str,
    /// Options followed by a separate value.
    with_value: &'static [&'static str],
    /// Operands before the command (a lock file, a CPU mask, a priority, a new root).
    operands: usize,
    /// Options whose value is a shell script.
    script: &'static [&'static str],
    runs: Runs,
    /// It changes the user or privileges: the launcher itself is a command a rule may name.
    privileged: bool,
}

const fn argv(
    name: &'static str,
    with_value: &'static [&'static str],
    operands: usize,
) -> Launcher {
    Launcher {
        name,
        with_value,
        operands,
        script: &[],
        runs: Runs::Argv,
        privileged: false,
    }
}

const fn opaque(name: &'static str, reason: &'static str) -> Launcher {
    Launcher {
        name,
        with_value: &[],
        operands: 0,
        script: &[],
        runs: Runs::Opaque(reason),
        privileged: false,
    }
}

const USER_SWITCH: &[&str] = &[
    "-u",
    "-g",
    "-G",
    "-s",
    "-w",
    "--user",
    "--group",
    "--supp-group",
    "--shell",
    "--whitelist-environment",
];
const SCRIPT_OPTIONS: &[&str] = &["-c", "--command", "--session-command"];

const LAUNCHERS: &[Launcher] = &[
    Launcher {
        script: SCRIPT_OPTIONS,
        ..argv(
            "flock",
            &["-w", "--timeout", "-E", "--conflict-exit-code"],
            1,
        )
    },
    argv("taskset", &[], 1),
    argv(
        "chrt",
        &[
            "-T",
            "-P",
            "-D",
            "--sched-runtime",
            "--sched-period",
            "--sched-deadline",
        ],
        1,
    ),
    argv(
        "unshare",
        &[
            "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd",
        ],
        0,
    ),
    argv(
        "nsenter",
        &[
            "-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root",
        ],
        0,
    ),
    argv("chroot", &["--userspec", "--groups"], 1),
    argv(
        "strace",
        &[
            "-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X", "-U",
        ],
        0,
    ),
    argv(
        "ltrace",
        &[
            "-e", "-o", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-L", "-n", "-x",
        ],
        0,
    ),
    argv(
        "setpriv",
        &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
        ],
        0,
    ),
    argv("prlimit", &["-p", "--pid", "-o", "--output"], 0),
    argv("fakeroot", &["-l", "--lib", "--faked", "-s", "-i", "-b"], 0),
    argv("valgrind", &[], 0),
    argv("setarch", &[], 1),
    argv("linux32", &[], 0),
    argv("linux64", &[], 0),
    argv(
        "numactl",
        &[
            "-C",
            "-N",
            "-m",
            "-p",
            "-i",
            "--physcpubind",
            "--cpunodebind",
            "--membind",
            "--preferred",
            "--interleave",
        ],
        0,
    ),
    argv("faketime", &["-f"], 1),
    argv("unbuffer", &[], 0),
    argv("catchsegv", &[], 0),
    argv("torsocks", &[], 0),
    argv("proxychains", &["-f"], 0),
    argv("proxychains4", &["-f"], 0),
    argv("firejail", &[], 0),
    argv("dbus-run-session", &["--config-file", "--dbus-daemon"], 0),
    argv(
        "xvfb-run",
        &[
            "-n",
            "-s",
            "-e",
            "-f",
            "-p",
            "--server-num",
            "--server-args",
            "--error-file",
            "--auth-file",
        ],
        0,
    ),
    argv("busybox", &[], 0),
    argv("toybox", &[], 0),
    argv("pkexec", &["--user"], 0),
    argv(
        "systemd-run",
        &[
            "-u",
            "-p",
            "-E",
            "-M",
            "-H",
            "--unit",
            "--property",
            "--setenv",
            "--machine",
            "--host",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
            "--slice",
            "--description",
        ],
        0,
    ),
    argv("cgexec", &["-g"], 0),
    Launcher {
        script: &["-c", "--command"],
        ..argv(
            "script",
            &[
                "-E",
                "--echo",
                "-I",
                "--log-in",
                "-O",
                "--log-out",
                "-B",
                "--log-io",
                "-T",
                "--log-timing",
                "-m",
                "--logging-format",
                "-o",
                "--output-limit",
            ],
            0,
        )
    },
    Launcher {
        script: SCRIPT_OPTIONS,
        runs: Runs::Script,
        privileged: true,
        ..argv("su", USER_SWITCH, 0)
    },
    Launcher {
        script: SCRIPT_OPTIONS,
        privileged: true,
        ..argv("runuser", USER_SWITCH, 0)
    },
    Launcher {
        script: &["-c"],
        runs: Runs::Joined,
        privileged: true,
        ..argv("sg", &[], 1)
    },
    opaque("ssh", "it runs a command on another host"),
    opaque(
        "gdb",
        "a debugger can run any command from its own commands",
    ),
    opaque(
        "lldb",
        "a debugger can run any command from its own commands",
    ),
    opaque("parallel", "parallel builds its commands at run time"),
    opaque("rush", "it builds its commands at run time"),
    opaque("nix-shell", "it runs a string in a shell it prepares"),
    opaque("expect", "it runs a script file"),
];

impl Walker {
    /// True when `program` is a launcher; its command was recorded.
    pub(super) fn launcher(
        &mut self,
        program: &str,
        words: &[Word],
        text: &str,
        depth: usize,
    ) -> bool {
        let Some(spec) = LAUNCHERS.iter().find(|l| l.name == program) else {
            return false;
        };
        if let Runs::Opaque(reason) = spec.runs {
            self.unresolved(text, reason);
            self.push_command(words.to_vec());
            return true;
        }
        if spec.privileged {
            self.push_command(words.to_vec());
        }
        let args = &words[1..];
        let mut operands = Vec::new();
        let mut script = None;
        let mut at = 0;
        let mut options_done = false;
        while let Some(arg) = args.get(at) {
            at += 1;
            if !arg.is_static {
                if options_done || operands.len() >= spec.operands {
                    operands.push(arg.clone());
                    if spec.runs == Runs::Argv {
                        break;
                    }
                    continue;
                }
                self.unresolved(text, "the wrapped command is computed at run time");
                return true;
            }
            let t = arg.text.as_str();
            if options_done || !t.starts_with('-') || t == "-" {
                operands.push(arg.clone());
                // Options end at the command (`flock f rm -rf x`).
                if spec.runs == Runs::Argv && operands.len() > spec.operands {
                    break;
                }
                continue;
            }
            if t == "--" {
                options_done = true;
            } else if spec.script.contains(&t) {
                script = args.get(at).cloned();
                at += 1;
            } else if let Some((name, value)) = t.split_once('=')
                && spec.script.contains(&name)
            {
                script = Some(Word {
                    text: value.to_owned(),
                    ..arg.clone()
                });
            } else if let Some(value) = spec
                .script
                .iter()
                .filter(|o| o.len() == 2)
                .find_map(|o| t.strip_prefix(o).filter(|v| !v.is_empty()))
            {
                script = Some(Word {
                    text: value.to_owned(),
                    ..arg.clone()
                });
            } else if !t.starts_with("--")
                && spec
                    .script
                    .iter()
                    .any(|o| o.len() == 2 && t.ends_with(&o[1..]))
            {
                // A group ending in the script option (`script -qc CMD`).
                script = args.get(at).cloned();
                at += 1;
            } else if spec.with_value.contains(&t) {
                at += 1;
            }
        }
        let command: Vec<Word> = operands
            .iter()
            .skip(spec.operands)
            .cloned()
            .chain(args.get(at..).unwrap_or_default().iter().cloned())
            .collect();
        if let Some(script) = script {
            self.shell_string(&script, text, depth);
            if !command.is_empty() && spec.runs != Runs::Argv {
                self.unresolved(text, "the launched shell gets arguments we do not follow");
            }
            return true;
        }
        match spec.runs {
            Runs::Argv if !command.is_empty() => self.simple(command, text, depth),
            Runs::Joined if command.iter().all(|w| w.is_static) && !command.is_empty() => {
                let joined: Vec<&str> = command.iter().map(|w| w.text.as_str()).collect();
                self.shell_string(&Word::plain(joined.join(" ")), text, depth);
            }
            Runs::Script | Runs::Joined if !command.is_empty() => {
                self.unresolved(text, "the launched shell gets arguments we do not follow");
            }
            _ if !spec.privileged => self.push_command(words.to_vec()),
            _ => {}
        }
        true
    }

    /// A script a launcher hands to a shell: walked when static, else unresolved.
    pub(super) fn shell_string(&mut self, script: &Word, text: &str, depth: usize) {
        if script.is_static {
            let saved = self.cwds.clone();
            self.script(&script.text.clone(), depth + 1);
            self.cwds = saved;
        } else {
            self.unresolved(text, "the shell runs a string built at run time");
        }
    }
}

/// Why a script file run by name (`sh f.sh`, `source f.sh`, `. f.sh`) asks.
pub(super) const SCRIPT_FILE: &str = "it runs a script file whose commands are not checked";

/// The index of the first operand after a shell's options, which start with `-` or `+`
/// (`sh +x -c`, `bash +O extglob -c`); `None` when one is not static.
pub(super) fn shell_options(args: &[Word]) -> Option<usize> {
    let with_value = ["-o", "+o", "-O", "+O", "--rcfile", "--init-file"];
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if !arg.is_static {
            return None;
        }
        let text = arg.text.as_str();
        if text == "--" || text == "-" {
            return Some(at + 1);
        }
        if !(text.starts_with('-') || text.starts_with('+')) || text == "+" {
            return Some(at);
        }
        at += if with_value.contains(&text) { 2 } else { 1 };
    }
    Some(args.len())
}

/// The index of the first operand after env's options (`-`, `-i`, `-u NAME`, `-uNAME`,
/// `--unset=NAME`, `-C dir`, `-0`, `-v`, signal options); `None` for options that change how
/// the command is found or split (`-S`, `-P`) or are not static.
pub(super) fn env_options(args: &[Word]) -> Option<usize> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if !arg.is_static {
            return None;
        }
        let text = arg.text.as_str();
        if text == "--" {
            return Some(at + 1);
        }
        if text == "-" {
            at += 1;
            continue;
        }
        if !text.starts_with('-') {
            return Some(at);
        }
        if text.starts_with("-S") || text.starts_with("-P") || text.starts_with("--split-string") {
            return None;
        }
        let long = text.starts_with("--");
        // A short group ending in `u` or `C` takes the next word (`-iu NAME`).
        let takes_next = matches!(text, "--unset" | "--chdir")
            || (!long && (text.ends_with('u') || text.ends_with('C')));
        at += if takes_next { 2 } else { 1 };
    }
    Some(args.len())
}

/// Programs that run one of their arguments as code.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash", "fish", "eval", "env",
    "sudo", "doas", "su", "runuser", "sg", "script", "flock", "parallel", "ssh", "watch", "xargs",
    "find", "exec", "command", "busybox", "perl", "python", "python3", "ruby", "node",
];

/// True when `placeholder` (`{}` of `find -exec`, `xargs -I R`) is filled in at run time where
/// it chooses what runs: the program itself, or an argument of a program that runs code.
pub(super) fn filled_at_run_time(words: &[Word], placeholder: &str) -> bool {
    let Some(head) = words.first() else {
        return false;
    };
    let program = head.text.rsplit('/').next().unwrap_or_default();
    head.text.contains(placeholder)
        || (INTERPRETERS.contains(&program) && words.iter().any(|w| w.text.contains(placeholder)))
}

/// The replace string of `xargs` options (`-I R`, `-IR`, `-i`, `--replace[=R]`), if any.
pub(super) fn xargs_placeholder(options: &[Word]) -> Option<String> {
    let mut found = None;
    for (at, word) in options.iter().enumerate() {
        let t = word.text.as_str();
        if t == "-I" {
            found = options.get(at + 1).map(|w| w.text.clone());
        } else if let Some(r) = t.strip_prefix("--replace=").or(t.strip_prefix("-I")) {
            found = Some(r.to_owned());
        } else if t == "-i" || t == "--replace" || t.starts_with("-i") && !t.starts_with("-i-") {
            found = Some(
                t.strip_prefix("-i")
                    .filter(|r| !r.is_empty())
                    .unwrap_or("{}")
                    .to_owned(),
            );
        }
    }
    found.filter(|r| !r.is_empty())
}
