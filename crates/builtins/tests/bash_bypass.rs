//! Denied commands hidden behind launchers, shell options, env option forms and script files,
//! run through the real tool and a real shell: each must be denied or asked (the asker
//! rejects), and the file the denied `rm` would remove, or the marker `curl` would write,
//! must be untouched.

use std::fs;

use proptest::prelude::*;
use serde_json::json;
use tackle_builtins::Location;
use tackle_builtins::bash::command_permission;
use tackle_permission::{Effect, Rule, Ruleset};
use tackle_tool_core::ToolError;

use crate::bash_support::{Setup, reject_bash, rule, settle};

/// Each runs `rm victim` or `curl -so marker ...` (`{url}` is a file URL) if let through.
const BLOCKED: &[&str] = &[
    // Shell options before -c.
    "sh +x -c 'rm victim'",
    "bash +O extglob -c 'rm victim'",
    "bash -O extglob -c 'rm victim'",
    "bash +o posix -c 'rm victim'",
    "bash -o errexit -c 'rm victim'",
    "sh -xc 'rm victim'",
    "sh -e +u -c 'rm victim'",
    "bash --norc -c 'rm victim'",
    "sh - -c 'rm victim' || rm victim",
    // env option forms.
    "env - rm victim",
    "env -i rm victim",
    "env -i - A=1 rm victim",
    "env -u HOME rm victim",
    "env -uHOME rm victim",
    "env -iu HOME rm victim",
    "env --unset=HOME rm victim",
    "env --ignore-environment rm victim",
    "env -- rm victim",
    "env -S 'rm victim'",
    "env - curl -so marker {url}",
    // Launchers.
    "flock lockfile rm victim",
    "flock -w 1 lockfile rm victim",
    "flock lockfile -c 'rm victim'",
    "flock -n lockfile --command='rm victim'",
    "taskset 1 rm victim",
    "taskset -c 0 rm victim",
    "chrt -o 0 rm victim",
    "unshare rm victim",
    "unshare -U -r rm victim",
    "script -qc 'rm victim' /dev/null",
    "script -q -c 'rm victim' /dev/null",
    "su -c 'rm victim'",
    "su root -c 'rm victim'",
    "su - root -c 'rm victim'",
    "runuser -u nobody -- rm victim",
    "runuser -u nobody rm victim",
    "chroot / rm victim",
    "strace -f rm victim",
    "strace -o /dev/null rm victim",
    "ltrace rm victim",
    "setpriv --reuid=1000 rm victim",
    "prlimit --nofile=100 rm victim",
    "fakeroot rm victim",
    "fakeroot -- rm victim",
    "sg root -c 'rm victim'",
    "sg root 'rm victim'",
    "valgrind --quiet rm victim",
    "nice rm victim",
    "nice -n 5 rm victim",
    "nohup rm victim",
    "ionice -c 3 rm victim",
    "stdbuf -oL rm victim",
    "time -p rm victim",
    "doas rm victim",
    "setsid rm victim",
    "busybox rm victim",
    "gdb -batch -ex 'shell rm victim'",
    "parallel rm ::: victim",
    "ssh localhost rm victim",
    "setarch x86_64 rm victim",
    "taskset 1 curl -so marker {url}",
    // Compositions.
    "nice env - flock l sh +x -c 'taskset 1 rm victim'",
    "sudo -E env -i rm victim",
    // Placeholders filled in at run time.
    "cat cmds | xargs -I{} sh -c '{} victim'",
    "cat cmds | xargs -I CMD sh -c 'CMD victim'",
    "cat cmds | xargs -i sh -c '{} victim'",
    "cat cmds | xargs --replace=X bash -c 'X victim'",
    "find cmds -exec sh -c '$(cat {}) victim' \\;",
    "cat cmds | xargs -I{} {} victim",
    // Here-document bodies and nested backticks.
    "cat <<EOF\n  $(rm victim)\nEOF",
    "cat <<-EOF\n\t$(rm victim)\n\tEOF",
    "cat <<EOF\n`rm victim`\nEOF",
    "echo `echo \\`rm victim\\``",
    // Command-resolving variables set so that `ls` is evil/ls (which removes the victim).
    "read PATH <<< \"$PWD/evil\"; ls",
    "for PATH in \"$PWD/evil\"; do ls; done",
    "printf -v PATH %s \"$PWD/evil\"; ls",
    "export PATH=\"$PWD/evil\"; ls",
    "declare PATH=\"$PWD/evil\"; ls",
    "PATH=\"$PWD/evil\"; ls",
    "declare -x PATH=evil:$PATH; ls",
    "readarray -t PATH <<< \"$PWD/evil\"; ls",
    // `!` or `time` before a compound command (the grammar reads `{` and `}` as commands).
    "! { rm victim; }",
    "time { rm victim; }",
    "! ( rm victim )",
    "time ( rm victim )",
    "time if true; then rm victim; fi",
    "! if true; then rm victim; fi",
    "! for v in victim; do rm $v; done",
    "time while true; do rm victim; break; done",
    "true && ! { curl -so marker {url}; }",
    // Defence in depth: a wrapper we do not know (`./run` runs its arguments).
    "./run rm victim",
    "./run -x /bin/rm victim",
    "./run --then=rm victim",
];

/// Script files run by name: one policy whatever the spelling, even when a rule allows it.
const SCRIPT_FILES: &[&str] = &[
    "sh victim.sh",
    "bash victim.sh",
    "bash ./victim.sh",
    "dash -e victim.sh",
    "source victim.sh",
    ". victim.sh",
    ". ./victim.sh",
];

#[tokio::test]
async fn launchers_shell_options_and_env_forms_cannot_run_a_denied_command() {
    let mut rules = vec![
        rule("bash", "*", Effect::Allow),
        rule("bash", "rm *", Effect::Deny),
        rule("bash", "curl *", Effect::Deny),
    ];
    let mut failures = Vec::new();
    for (table, extra) in [
        (BLOCKED, &[][..]),
        (
            SCRIPT_FILES,
            &["sh *", "bash *", "dash *", "source *", ". *"][..],
        ),
    ] {
        rules.extend(extra.iter().map(|r| rule("bash", r, Effect::Allow)));
        let bash = Setup {
            rules: rules.clone(),
            reply: reject_bash,
            ..Setup::default()
        }
        .build();
        let root = bash.root.clone();
        let url = format!("file://{}", root.join("victim").display());
        for command in table {
            fs::write(root.join("victim"), "x").unwrap();
            fs::write(root.join("cmds"), "rm").unwrap();
            fs::create_dir_all(root.join("evil")).unwrap();
            fs::write(root.join("evil/ls"), "#!/bin/sh\n/bin/rm -f victim\n").unwrap();
            fs::set_permissions(
                root.join("evil/ls"),
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .unwrap();
            fs::write(root.join("victim.sh"), "rm victim\ncurl -so marker ").unwrap();
            fs::write(
                root.join("run"),
                "#!/bin/sh\n[ \"$1\" = -x ] && shift\nexec \"${1#--then=}\" \"$2\"\n",
            )
            .unwrap();
            fs::set_permissions(
                root.join("run"),
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .unwrap();
            let command = command.replace("{url}", &url);
            let result = settle(&bash.tool, json!({"command": command, "timeout": 5000})).await;
            match &result {
                Err(ToolError::Failure(f))
                    if f.message.contains("Permission denied") || f.message.ends_with("asked") => {}
                other => failures.push(format!("{command:?}: ran: {other:?}")),
            }
            if !root.join("victim").exists() || root.join("marker").exists() {
                failures.push(format!("{command:?}: the denied command ran"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Plain commands and pipelines of allowed commands ask nothing new.
#[test]
fn allowed_commands_stay_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = fs::canonicalize(dir.path()).unwrap();
    let location = Location::new(&cwd).unwrap();
    let rules = Ruleset::new(
        [
            "ls*",
            "git status*",
            "cargo test*",
            "wc*",
            "grep*",
            "nice*",
            "printf*",
            "read*",
        ]
        .iter()
        .map(|r| Rule::new("bash", *r, Effect::Allow))
        .collect(),
    );
    for command in [
        "ls",
        "ls -la | wc -l",
        "git status",
        "cargo test",
        "cargo test -p x && git status",
        "git status --short | grep x | wc -l",
        "nice cargo test",
        "printf '%s' \"$x\" | wc -l",
        "ls | while read -r line; do wc -l \"$line\"; done",
        "time ls -la",
        "! grep -q x y || ls",
        "{ ls; wc -l x; }",
        "! ls | grep x",
    ] {
        let planned = command_permission(command, &location, &cwd, None);
        assert!(planned.unresolved.is_empty(), "{command}: {planned:?}");
        for resource in &planned.resources {
            assert_eq!(
                rules.evaluate("bash", resource),
                Effect::Allow,
                "{command}: {resource}"
            );
        }
    }
}

/// What the policy decides under "allow everything but `rm *`": allow only when every
/// resource is allowed and nothing is unresolved.
fn allows(command: &str) -> bool {
    let dir = std::env::temp_dir();
    let location = Location::new(&dir).unwrap();
    let rules = Ruleset::new(vec![
        Rule::new("bash", "*", Effect::Allow),
        Rule::new("bash", "rm *", Effect::Deny),
    ]);
    let planned = command_permission(command, &location, &dir, None);
    planned.unresolved.is_empty()
        && planned
            .resources
            .iter()
            .all(|r| rules.evaluate("bash", r) == Effect::Allow)
}

/// `!` and `time` before a compound command: the commands inside it are resolved or the line
/// is unresolved, never planned as `{ rm x` and `}`.
#[test]
fn compound_commands_after_bang_or_time_are_not_allowed() {
    for command in [
        "! { rm x; }",
        "time { rm x; }",
        "! ( rm x )",
        "time ( rm x )",
        "! if true; then rm x; fi",
        "time if true; then rm x; fi",
        "! for v in x; do rm x; done",
        "time for v in x; do rm x; done",
        "! while false; do rm x; done",
        "time until true; do rm x; done",
        "! case x in x) rm x;; esac",
        "ls && ! { true; rm x; }",
        "coproc { rm x; }",
    ] {
        assert!(!allows(command), "{command}");
    }
}

/// Substitutions the grammar leaves as text though the shell runs them: nested backquotes, and
/// here-document bodies. A quoted delimiter's body is not expanded, so it runs nothing.
#[test]
fn substitutions_read_as_text_are_not_allowed() {
    for command in [
        "x=`echo; \\`echo rm\\` -f x`",
        "echo `echo \\`rm x\\``",
        "x=`echo; r\\\\m x`",
        // A newline inside a double-quoted `-c` string separates two commands.
        "sh -c \"r\\\\m\nrm\"",
        "sh -c \"echo\nrm x\"",
        "cat <<-EOF\n\t$(set -- rm x; \"$@\")\n\tEOF",
        "cat <<-EOF\n\t$(rm x)\n\tEOF",
        "cat <<EOF\n`rm x`\nEOF",
        "cat <<EOF\na `rm x` b\nEOF",
    ] {
        assert!(!allows(command), "{command}");
    }
    for command in [
        "cat <<'EOF'\n$(rm x) `rm x`\nEOF",
        "cat <<\"EOF\"\n`rm x`\nEOF",
        "cat <<EOF\nhome: $HOME ${HOME}\nEOF",
        "echo `echo ok`",
    ] {
        let dir = std::env::temp_dir();
        let location = Location::new(&dir).unwrap();
        let planned = command_permission(command, &location, &dir, None);
        assert!(allows(command), "{command}: {planned:?}");
    }
}

fn single_quoted(script: &str) -> String {
    format!("'{}'", script.replace('\'', r"'\''"))
}

/// One layer around `inner`.
fn wrap(layer: usize, inner: &str) -> String {
    const PREFIXES: &[&str] = &[
        "env -",
        "env -i",
        "env -u X",
        "env --unset=X",
        "nice",
        "nice -n 1",
        "nohup",
        "time -p",
        "timeout 5",
        "flock l",
        "flock -w 1 l",
        "taskset 1",
        "chrt -o 0",
        "unshare",
        "strace -f",
        "fakeroot",
        "setpriv --reuid=1",
        "prlimit --nofile=9",
        "stdbuf -oL",
        "ionice -c 3",
        "sudo",
        "doas",
        "command",
        "exec",
        "busybox",
        "valgrind",
        "xargs",
        "chroot /",
        "runuser -u u --",
    ];
    const SHELLS: &[&str] = &[
        "sh -c",
        "sh +x -c",
        "bash +O extglob -c",
        "bash -o posix -c",
        "sh -xc",
        "eval",
        "su -c",
        "script -qc",
        "flock l -c",
        "sg g -c",
        "watch",
    ];
    if layer < PREFIXES.len() {
        format!("{} {inner}", PREFIXES[layer])
    } else {
        let shell = SHELLS[(layer - PREFIXES.len()) % SHELLS.len()];
        format!("{shell} {}", single_quoted(inner))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn wrapped_denied_commands_are_never_allowed(layers in prop::collection::vec(0usize..40, 1..4)) {
        let mut command = "rm -rf victim".to_owned();
        for layer in layers {
            command = wrap(layer, &command);
        }
        prop_assert!(!allows(&command), "{}", command);
    }
}
