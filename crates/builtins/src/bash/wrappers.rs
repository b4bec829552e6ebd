//! One simple command, seen through the programs that only run another one.
//!
//! `env A=1 cmd`, `sudo cmd`, `command cmd`, `nohup`, `time`, `timeout N`, `nice`, `xargs cmd`,
//! `exec`, `find -exec cmd ;`, `sh -c '...'` and `git -C dir` are unwrapped, so the command that
//! really runs is the one permission sees. `cd` moves the analysis instead of being a command.
//! `eval`, `source`, `sh file.sh` and shells reading a computed or piped script are
//! unresolved. Other launchers (`flock`, `taskset`, `su -c`, ...) are in `launchers.rs`.

use super::launchers::{
    SCRIPT_FILE, env_options, filled_at_run_time, shell_options, xargs_placeholder,
};
use super::parse::{
    MISREAD_KEYWORD, PathKind, Walker, dangerous_variable, misread_keyword, sets_dangerous_variable,
};
use super::words::{OptionWord, Word, options_end};

/// Shells whose `-c` string is a script in (close enough to) our grammar.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash",
];

/// Commands whose operands are paths they create, change or remove.
const FILE_COMMANDS: &[&str] = &[
    "rm", "rmdir", "cp", "mv", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "install",
    "truncate", "shred", "unlink", "tee", "dd",
];

/// Full-screen programs that only wait for a terminal that commands here do not have.
const EDITORS: &[&str] = &[
    "vi", "vim", "nvim", "view", "vimdiff", "nano", "pico", "emacs", "micro", "joe", "mcedit",
];

impl Walker {
    /// Records a simple command (`words` as the shell will split them; `text` its source).
    pub(super) fn simple(&mut self, words: Vec<Word>, text: &str, depth: usize) {
        let Some(name) = words.first() else {
            return;
        };
        if !name.is_literal() {
            return self.unresolved(text, "the command name is computed at run time");
        }
        let program = name.text.rsplit('/').next().unwrap_or_default().to_owned();
        let args = &words[1..];
        match program.as_str() {
            "cd" | "pushd" => self.cd(args),
            "popd" => self.change_dir(None),
            // `eval 'a b'` is the script `a b`; only a computed string is unknown.
            "eval" if args.iter().all(|a| a.is_static) => {
                let script: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                self.script(&script.join(" "), depth + 1);
            }
            "eval" => self.unresolved(text, "eval runs a string built at run time"),
            "source" | "." => self.unresolved(text, SCRIPT_FILE),
            "alias" if args.iter().any(|a| a.text.contains('=')) => {
                self.unresolved(text, "an alias changes what later command names run");
            }
            "trap" => self.trap(words.clone(), text, depth),
            "env" => self.env(&words, text, depth),
            "sudo" | "doas" => {
                let with_value: &[&str] = if program == "sudo" {
                    &[
                        "-u",
                        "-g",
                        "-C",
                        "-D",
                        "-h",
                        "-p",
                        "-r",
                        "-t",
                        "-T",
                        "-U",
                        "--user",
                        "--group",
                        "--close-from",
                        "--chdir",
                        "--host",
                        "--prompt",
                        "--role",
                        "--type",
                        "--command-timeout",
                        "--other-user",
                    ]
                } else {
                    &["-u", "-C"]
                };
                // Running as another user is itself worth a rule: both forms are checked.
                self.push_command(words.clone());
                self.wrapped(args, with_value, text, depth);
            }
            "command" if !args.iter().any(|a| a.text == "-v" || a.text == "-V") => {
                self.wrapped(args, &[], text, depth);
            }
            "builtin" | "nohup" | "setsid" | "coproc" => self.wrapped(args, &[], text, depth),
            "exec" => self.wrapped(args, &["-a"], text, depth),
            "nice" => self.wrapped(args, &["-n", "--adjustment"], text, depth),
            "ionice" => self.wrapped(
                args,
                &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
                text,
                depth,
            ),
            "stdbuf" => self.wrapped(
                args,
                &["-i", "-o", "-e", "--input", "--output", "--error"],
                text,
                depth,
            ),
            "time" => self.wrapped(args, &["-f", "-o", "--format", "--output"], text, depth),
            "timeout" => match skip_options(args, &["-s", "-k", "--signal", "--kill-after"]) {
                // The first operand is the duration.
                Some(at) if at < args.len() => self.simple(args[at + 1..].to_vec(), text, depth),
                Some(_) => self.push_command(words.clone()),
                None => self.unresolved(text, "the wrapped command is computed at run time"),
            },
            "xargs" => self.xargs(&words, text, depth),
            "watch" => self.watch(&words, text, depth),
            "find" => self.find(words.clone(), text, depth),
            "git" => self.git(&words),
            shell if SHELLS.contains(&shell) => self.shell(&words, text, depth),
            "fish" if args.iter().any(|a| a.text.starts_with('-')) => {
                self.unresolved(text, "fish scripts cannot be checked");
            }
            _ if misread_keyword(&name.text) => self.unresolved(text, MISREAD_KEYWORD),
            _ if sets_dangerous_variable(&program, args) => {
                self.unresolved(text, "it sets a variable that decides which program runs");
            }
            _ if self.launcher(&program, &words, text, depth) => {}
            _ => self.push_command(words),
        }
    }

    /// Records a command as it will run: its resource, its file paths, an interactive editor.
    pub(super) fn push_command(&mut self, words: Vec<Word>) {
        let Some(name) = words.first() else {
            return;
        };
        let program = name.text.rsplit('/').next().unwrap_or_default();
        if self.out.interactive.is_none() && interactive(program, &words[1..]) {
            self.out.interactive = Some(program.to_owned());
        }
        if FILE_COMMANDS.contains(&program) {
            for (word, kind) in file_operands(program, &words[1..]) {
                if word.is_literal() {
                    self.path(word, kind);
                } else {
                    let text = words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>();
                    self.unresolved(&text.join(" "), "a path it changes is computed at run time");
                }
            }
        }
        self.out.commands.push(words);
    }

    /// `wrapper [options] command...`: the command after the options.
    fn wrapped(&mut self, args: &[Word], with_value: &[&str], text: &str, depth: usize) {
        match skip_options(args, with_value) {
            Some(at) => self.simple(args[at..].to_vec(), text, depth),
            None => self.unresolved(text, "the wrapped command is computed at run time"),
        }
    }

    fn cd(&mut self, args: &[Word]) {
        let target = match skip_options(args, &[]) {
            Some(at) => args.get(at).cloned(),
            None => return self.change_dir(None),
        };
        let target = target.unwrap_or_else(|| Word {
            tilde: true,
            ..Word::plain("~")
        });
        if target.text == "-" || (target.is_static && target.text.starts_with(['+', '-'])) {
            return self.change_dir(None);
        }
        if target.is_literal() {
            self.path(target.clone(), PathKind::Directory);
            self.change_dir(Some(&target));
        } else {
            self.change_dir(None);
        }
    }

    fn env(&mut self, words: &[Word], text: &str, depth: usize) {
        let args = &words[1..];
        let Some(mut at) = env_options(args) else {
            return self.unresolved(text, "env's options change how the command is found");
        };
        let chdir = args[..at]
            .windows(2)
            .find(|pair| pair[0].text == "-C" || pair[0].text == "--chdir")
            .map(|pair| pair[1].clone());
        while let Some(arg) = args.get(at) {
            let Some((name, _)) = arg.text.split_once('=') else {
                break;
            };
            if !is_name(name) {
                break;
            }
            if dangerous_variable(name) {
                self.unresolved(text, "it changes how later commands are found or run");
            }
            at += 1;
        }
        if at == args.len() {
            return self.push_command(words.to_vec());
        }
        let saved = self.cwds.clone();
        if let Some(dir) = chdir {
            self.cd(std::slice::from_ref(&dir));
        }
        self.simple(args[at..].to_vec(), text, depth);
        self.cwds = saved;
    }

    fn trap(&mut self, words: Vec<Word>, text: &str, depth: usize) {
        let action = words.get(1);
        match action {
            Some(action) if action.text.starts_with('-') => {}
            Some(action) if action.is_static => {
                let saved = self.cwds.clone();
                self.script(&action.text.clone(), depth + 1);
                self.cwds = saved;
            }
            Some(_) => return self.unresolved(text, "the trap runs a string built at run time"),
            None => {}
        }
        self.push_command(words);
    }

    fn xargs(&mut self, words: &[Word], text: &str, depth: usize) {
        let with_value = [
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ];
        match skip_options(&words[1..], &with_value) {
            Some(at) if at + 1 < words.len() => {
                let command = &words[at + 1..];
                if let Some(r) = xargs_placeholder(&words[1..=at])
                    && filled_at_run_time(command, &r)
                {
                    self.unresolved(text, "xargs fills in what runs at run time");
                }
                self.simple(command.to_vec(), text, depth);
            }
            // Without a command, xargs runs echo.
            Some(_) => self.push_command(vec![Word::plain("echo")]),
            None => self.unresolved(text, "the wrapped command is computed at run time"),
        }
    }

    fn watch(&mut self, words: &[Word], text: &str, depth: usize) {
        let args = &words[1..];
        let Some(at) = skip_options(args, &["-n", "--interval"]) else {
            return self.unresolved(text, "the wrapped command is computed at run time");
        };
        let exec = args[..at]
            .iter()
            .any(|a| a.text == "-x" || a.text == "--exec");
        let rest = &args[at..];
        if exec {
            return self.simple(rest.to_vec(), text, depth);
        }
        // Without -x, watch hands its arguments, joined, to `sh -c`.
        if rest.iter().all(|w| w.is_static) {
            let script: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
            let saved = self.cwds.clone();
            self.script(&script.join(" "), depth + 1);
            self.cwds = saved;
        } else {
            self.unresolved(text, "watch runs a string built at run time");
        }
    }

    fn find(&mut self, words: Vec<Word>, text: &str, depth: usize) {
        let mut at = 1;
        while at < words.len() {
            let is_exec = matches!(
                words[at].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            );
            at += 1;
            if !is_exec {
                continue;
            }
            let start = at;
            while at < words.len() && words[at].text != ";" && words[at].text != "+" {
                at += 1;
            }
            if filled_at_run_time(&words[start..at], "{}") {
                self.unresolved(text, "find fills in what runs at run time");
            }
            self.simple(words[start..at].to_vec(), text, depth);
        }
        self.push_command(words);
    }

    /// `git` with its harmless global options removed; `-C dir` is checked like `cd`.
    fn git(&mut self, words: &[Word]) {
        let mut rest = vec![words[0].clone()];
        let mut at = 1;
        while at < words.len() {
            let arg = &words[at];
            match arg.text.as_str() {
                "-C" if at + 1 < words.len() => {
                    let dir = words[at + 1].clone();
                    if dir.is_literal() {
                        self.path(dir, PathKind::Directory);
                    } else {
                        self.unresolved(&arg.text, "the git directory is computed at run time");
                    }
                    at += 2;
                }
                "--no-pager"
                | "-P"
                | "-p"
                | "--paginate"
                | "--no-optional-locks"
                | "--literal-pathspecs"
                | "--glob-pathspecs"
                | "--noglob-pathspecs"
                | "--icase-pathspecs"
                | "--no-replace-objects"
                | "--no-lazy-fetch" => {
                    at += 1;
                }
                _ => break,
            }
        }
        rest.extend_from_slice(&words[at..]);
        self.push_command(rest);
    }

    /// `sh -c 'script'` is followed; a shell reading its script from stdin cannot be.
    fn shell(&mut self, words: &[Word], text: &str, depth: usize) {
        let args = &words[1..];
        let Some(at) = shell_options(args) else {
            return self.unresolved(text, "the shell's options are computed at run time");
        };
        // `-c` and `-s` may be grouped with others (`-xc`); `+c` does not exist.
        let short = |letter: char| {
            args[..at].iter().any(|a| {
                let t = &a.text;
                t.starts_with('-') && !t.starts_with("--") && t[1..].contains(letter)
            })
        };
        match args.get(at) {
            Some(script) if short('c') => self.shell_string(script, text, depth),
            // `sh file.sh` runs a file we do not read, like `source file.sh`.
            Some(_) if !short('s') => self.unresolved(text, SCRIPT_FILE),
            _ => self.unresolved(text, "the shell reads its script from standard input"),
        }
    }
}

/// The index of the first operand after a wrapper's options, those in `with_value` taking the
/// next word; `None` when an option is not static (its meaning is unknown). `--` ends the
/// options and is skipped.
fn skip_options(args: &[Word], with_value: &[&str]) -> Option<usize> {
    options_end(args, |text| {
        if !text.starts_with('-') || text == "-" {
            OptionWord::Operand
        } else if with_value.contains(&text) {
            OptionWord::Spans(2)
        } else {
            OptionWord::Spans(1)
        }
    })
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The path operands of a file command, with their kind.
fn file_operands(program: &str, args: &[Word]) -> Vec<(Word, PathKind)> {
    // Options whose separate value is not a path we need to check.
    let skip_value: &[&str] = match program {
        "mkdir" => &["-m", "--mode"],
        "touch" => &["-d", "-t", "--date"],
        "truncate" => &["-s", "--size"],
        "install" => &[
            "-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix",
        ],
        "cp" | "mv" | "ln" => &["-S", "--suffix"],
        "shred" => &["-n", "-s", "--iterations", "--size"],
        _ => &[],
    };
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        let text = arg.text.as_str();
        if options_done || !arg.is_static || !text.starts_with('-') || text == "-" {
            operands.push(arg.clone());
            continue;
        }
        if text == "--" {
            options_done = true;
        } else if skip_value.contains(&text) {
            at += 1;
        } else if matches!(text, "-t" | "-r" | "--reference" | "--target-directory") {
            // A target directory or a reference file is a path argument too.
            if let Some(value) = args.get(at) {
                out.push((value.clone(), PathKind::File));
                at += 1;
            }
        } else if let Some(value) = text
            .strip_prefix("--target-directory=")
            .or_else(|| text.strip_prefix("--reference="))
        {
            out.push((
                Word {
                    text: value.to_owned(),
                    ..arg.clone()
                },
                PathKind::File,
            ));
        }
    }
    match program {
        // The first operand is a mode or an owner, not a path.
        // The first operand is a mode or an owner, not a path, unless a reference file
        // replaces it, or the mode was written like an option (`chmod -x file`).
        "chmod" | "chown" | "chgrp" => {
            let mode_as_option = program == "chmod"
                && args.iter().any(|a| {
                    a.text.len() > 1
                        && a.text.starts_with('-')
                        && a.text[1..]
                            .chars()
                            .all(|c| "rwxXstugoa=+-,01234567".contains(c))
                });
            if out.is_empty() && !mode_as_option && !operands.is_empty() {
                operands.remove(0);
            }
        }
        // Only `of=` writes.
        "dd" => {
            operands = operands
                .into_iter()
                .filter_map(|word| {
                    let path = word.text.strip_prefix("of=")?.to_owned();
                    Some(Word { text: path, ..word })
                })
                .collect();
        }
        _ => {}
    }
    out.extend(operands.into_iter().map(|word| (word, PathKind::File)));
    out
}

/// True for a full-screen editor started without a batch mode.
fn interactive(program: &str, args: &[Word]) -> bool {
    if !EDITORS.contains(&program) {
        return false;
    }
    let batch = |flags: &[&str]| {
        args.iter()
            .any(|a| flags.iter().any(|f| a.text.starts_with(f)))
    };
    match program {
        "vi" | "vim" | "nvim" | "view" | "vimdiff" => !batch(&[
            "-e",
            "-E",
            "-s",
            "--headless",
            "-c",
            "+",
            "--version",
            "-h",
            "--help",
        ]),
        "emacs" => !batch(&["--batch", "-batch", "--script", "--version", "--help"]),
        _ => !batch(&["--version", "--help", "-V"]),
    }
}
