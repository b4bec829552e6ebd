//! A project's configuration only tightens the user's rules until the user trusts it
//! (`tackle trust`), and writes to configuration files always ask. Every run points HOME and
//! the XDG directories of the child at temporary directories, so the default data directory
//! is exercised without touching the user's.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// A project directory and a user's home whose XDG directories are temporary.
struct User {
    home: TempDir,
    project: TempDir,
}

impl User {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    /// The canonical project directory.
    fn dir(&self) -> PathBuf {
        std::fs::canonicalize(self.project.path()).unwrap()
    }

    /// `tackle <args>` as this user, in the project directory.
    fn tackle(&self, args: &[&str]) -> Command {
        let home = self.home.path();
        let mut command = Command::cargo_bin("tackle").unwrap();
        command
            .env("HOME", home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .current_dir(self.project.path())
            .args(args);
        command
    }

    /// Runs `tackle <args>` and returns (stdout, stderr), the project path as `[dir]`; the exit
    /// code must be `code`.
    fn run(&self, args: &[&str], code: i32) -> (String, String) {
        let out = self.tackle(args).assert().code(code);
        let output = out.get_output();
        let text = |bytes: &[u8]| {
            String::from_utf8(bytes.to_vec())
                .unwrap()
                .replace(&self.dir().display().to_string(), "[dir]")
        };
        (text(&output.stdout), text(&output.stderr))
    }

    fn write(&self, name: &str, text: &str) {
        let path = self.project.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.project.path().join(name)).ok()
    }

    fn exists(&self, name: &str) -> bool {
        Path::new(&self.project.path().join(name)).exists()
    }
}

const BASH_MARKER: &str = r#"{"command":"echo ran > marker.txt"}"#;

#[test]
fn a_project_cannot_grant_itself_permission() {
    let user = User::new();
    user.write("tackle.json", r#"{"permission": "allow"}"#);
    // The project's allow is ignored: bash asks, and without a terminal that declines.
    let (_, stderr) = user.run(&["call", "bash", BASH_MARKER], 2);
    assert!(!user.exists("marker.txt"));
    insta::assert_snapshot!(stderr, @r#"
    tackle: [dir]/tackle.json is not trusted: its allow rules are ignored (permission); its deny and ask rules apply.
      If you trust this project, review the file and run: tackle trust [dir]
    tackle: bash echo ran needs permission and there is no terminal to ask, so it is declined; pass --yes to allow it once, or allow it in your configuration
    tackle: halted: the user declined the tool call
    "#);
}

#[test]
fn the_escalation_through_tackle_json_fails() {
    let user = User::new();
    user.write("tackle.json", r#"{"permission": {"edit": "allow"}}"#);
    // Untrusted, the edit allow is ignored too.
    user.run(
        &["call", "write", r#"{"path":"notes.md","content":"x"}"#],
        2,
    );
    assert!(!user.exists("notes.md"));
    // Trusted, edits are allowed without asking.
    user.run(&["trust"], 0);
    user.run(
        &["call", "write", r#"{"path":"notes.md","content":"x"}"#],
        0,
    );
    assert_eq!(user.read("notes.md").as_deref(), Some("x"));
    // Writing tackle.json itself still asks, whatever the rules say: refused without an answer.
    let escalate = r#"{"path":"tackle.json","content":"{\"permission\":\"allow\"}"}"#;
    let (_, stderr) = user.run(&["call", "write", escalate], 2);
    assert!(stderr.contains("protected: tackle.json"), "{stderr}");
    assert_eq!(
        user.read("tackle.json").as_deref(),
        Some(r#"{"permission": {"edit": "allow"}}"#)
    );
    // Even when the user lets it through (--yes), the changed file is untrusted again: the
    // next call does not run bash unasked.
    user.run(&["call", "write", escalate, "--yes"], 0);
    let (_, stderr) = user.run(&["call", "bash", BASH_MARKER], 2);
    assert!(!user.exists("marker.txt"));
    insta::assert_snapshot!(stderr, @r#"
    tackle: [dir]/tackle.json changed since you trusted it, so it is untrusted again: its allow rules are ignored (permission); its deny and ask rules apply.
      If you trust this project, review the file and run: tackle trust [dir]
    tackle: bash echo ran needs permission and there is no terminal to ask, so it is declined; pass --yes to allow it once, or allow it in your configuration
    tackle: halted: the user declined the tool call
    "#);
}

#[test]
fn after_tackle_trust_the_project_allow_applies_until_the_file_changes() {
    let user = User::new();
    user.write(
        "tackle.json",
        r#"{"permission": {"bash": {"echo *": "allow"}}}"#,
    );
    let (stdout, _) = user.run(&["trust"], 0);
    insta::assert_snapshot!(stdout, @r"
    trusted [dir]/tackle.json (sha256 f28b374ee5884d57): its rules apply in full, 1 allow rule included
    Any change to a trusted file makes it untrusted again.
    ");
    // Recorded in the default data directory ($XDG_DATA_HOME/tackle).
    assert!(user.home.path().join("data/tackle/trust.json").is_file());
    let (_, stderr) = user.run(&["call", "bash", BASH_MARKER], 0);
    assert_eq!(stderr, "");
    assert_eq!(user.read("marker.txt").as_deref(), Some("ran\n"));
    // One byte changes: untrusted again, and the user is told.
    user.write(
        "tackle.json",
        r#"{"permission": {"bash": {"echo *": "allow"}} }"#,
    );
    let (_, stderr) = user.run(&["call", "bash", BASH_MARKER], 2);
    assert!(
        stderr.starts_with("tackle: [dir]/tackle.json changed since you trusted it"),
        "{stderr}"
    );
}

#[test]
fn an_untrusted_project_deny_and_ask_still_apply() {
    let user = User::new();
    user.write(
        "tackle.json",
        r#"{"permission": {"bash": {"*": "allow", "rm *": "deny"}, "read": {"*.md": "ask"}}}"#,
    );
    user.write("README.md", "hello\n");
    user.write("victim.txt", "keep\n");
    // The deny holds even with --yes (the user answers asks, not denies).
    let (stdout, _) = user.run(
        &["call", "bash", r#"{"command":"rm victim.txt"}"#, "--yes"],
        1,
    );
    assert!(stdout.contains("Permission denied"), "{stdout}");
    assert!(user.exists("victim.txt"));
    // The ask tightens the user's allow on reads: declined without a terminal...
    user.run(&["call", "read", r#"{"path":"README.md"}"#], 2);
    // ...answered with --yes.
    user.run(&["call", "read", r#"{"path":"README.md"}"#, "--yes"], 0);
    // Reads the project does not mention keep the user's allow.
    user.write("src.rs", "fn main() {}\n");
    user.run(&["call", "read", r#"{"path":"src.rs"}"#], 0);
    let (stdout, _) = user.run(&["permission", "explain", "bash", "rm victim.txt"], 0);
    insta::assert_snapshot!(stdout, @r#"
    bash "rm victim.txt": deny
      decided by {action: "bash", resource: "rm *", effect: "deny"}
      from [dir]/tackle.json, permission.bash["rm *"] (rule #2 of that file)
    configuration: [dir]/tackle.json (untrusted: its rules can only tighten yours)
    "#);
}

#[test]
fn trust_list_and_untrust() {
    let user = User::new();
    let (stdout, _) = user.run(&["trust", "--list"], 0);
    assert_eq!(stdout, "no project configuration is trusted\n");
    user.write("tackle.json", r#"{"permission": {"edit": "allow"}}"#);
    user.write("opencode.json", r#"{"model": "x", "permission": {}}"#);
    let dir = user.dir().display().to_string();
    let (stdout, _) = user.run(&["trust", &dir], 0);
    insta::assert_snapshot!(stdout, @r"
    trusted [dir]/opencode.json (sha256 4cbb783255815e48): its rules apply in full, 0 allow rules included
    trusted [dir]/tackle.json (sha256 3a1196bf1f846bd4): its rules apply in full, 1 allow rule included
    Any change to a trusted file makes it untrusted again.
    ");
    user.write("opencode.json", r#"{"model": "y", "permission": {}}"#);
    let (stdout, _) = user.run(&["trust", "--list"], 0);
    insta::assert_snapshot!(stdout, @r"
    changed  [dir]/opencode.json (sha256 4cbb783255815e48)
    trusted  [dir]/tackle.json (sha256 3a1196bf1f846bd4)
    ");
    let (stdout, _) = user.run(&["untrust"], 0);
    insta::assert_snapshot!(stdout, @r"
    untrusted [dir]/opencode.json: its rules can only tighten yours
    untrusted [dir]/tackle.json: its rules can only tighten yours
    ");
    let (stdout, _) = user.run(&["trust", "--list"], 0);
    assert_eq!(stdout, "no project configuration is trusted\n");
    let (stdout, _) = user.run(&["untrust", &dir], 0);
    assert_eq!(stdout, "nothing in [dir] was trusted\n");
}

#[test]
fn trust_needs_a_configuration_that_loads() {
    let user = User::new();
    let (_, stderr) = user.run(&["trust"], 2);
    assert_eq!(
        stderr,
        "tackle: [dir]: no project configuration to trust (looked for tackle.json[c], opencode.json[c] and .opencode/opencode.json[c] up to the repository root)\n"
    );
    user.write("tackle.json", r#"{"permission": {"edit": "sometimes"}}"#);
    let (_, stderr) = user.run(&["trust"], 2);
    assert!(stderr.contains("unknown effect \"sometimes\""), "{stderr}");
    let (stdout, _) = user.run(&["trust", "--list"], 0);
    assert_eq!(stdout, "no project configuration is trusted\n");
}

#[test]
fn the_trust_records_are_protected_from_tools() {
    let user = User::new();
    let data = user.home.path().join("data").join("tackle");
    std::fs::create_dir_all(&data).unwrap();
    let record = data.join("trust.json");
    let input = serde_json::json!({
        "path": record.display().to_string(),
        "content": "{\"version\":1,\"files\":[]}",
    })
    .to_string();
    // The user's configuration allows every edit and every outside directory.
    let config = user.home.path().join("mine.json");
    std::fs::write(
        &config,
        r#"{"permission": {"edit": "allow", "external_directory": "allow"}}"#,
    )
    .unwrap();
    let (_, stderr) = user.run(
        &[
            "call",
            "write",
            &input,
            "--config",
            config.to_str().unwrap(),
        ],
        2,
    );
    assert!(stderr.contains("protected:"), "{stderr}");
    assert!(!record.exists());
}
