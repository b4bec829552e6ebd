//! The credentials bash withholds from commands are redacted from every result, whichever way
//! they would reach the model: a command's output, a file read, an error message, or a result
//! large enough to be saved as a managed output (which must not hold them either).

use crate::Workspace;

/// A value bash withholds by its variable's name (`*_TOKEN`).
const SECRET: &str = "tk-6f1c2e9a7b3d4c5e8f90";

fn call(ws: &Workspace, tool: &str, input: &serde_json::Value, code: i32) -> String {
    let out = ws
        .tackle(&["call", tool, "--yes", &input.to_string()])
        .env("TACKLE_TEST_TOKEN", SECRET)
        .assert()
        .code(code);
    let output = out.get_output();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(
        !text.contains(SECRET) && !errors.contains(SECRET),
        "{text}\n{errors}"
    );
    text
}

/// Every file under `dir`, recursively.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_command_printing_the_secret_from_a_file_shows_it_redacted() {
    let ws = Workspace::new();
    ws.write("token.txt", &format!("token={SECRET}\n"));
    let input =
        serde_json::json!({"command": "cat token.txt; echo \"env=${TACKLE_TEST_TOKEN:-unset}\""});
    let text = call(&ws, "bash", &input, 0);
    assert!(text.contains("token=[REDACTED]\n"), "{text}");
    assert!(text.contains("env=unset"), "{text}");
}

#[test]
fn reading_a_file_that_holds_the_secret_shows_it_redacted() {
    let ws = Workspace::new();
    ws.write(
        ".netrc",
        &format!("machine example.com login me password {SECRET}\n"),
    );
    let text = call(&ws, "read", &serde_json::json!({"path": ".netrc"}), 0);
    assert!(
        text.contains("1: machine example.com login me password [REDACTED]"),
        "{text}"
    );
}

#[test]
fn an_error_quoting_the_secret_shows_it_redacted() {
    let ws = Workspace::new();
    let path = format!("missing-{SECRET}.txt");
    let text = call(&ws, "read", &serde_json::json!({"path": path}), 1);
    assert!(text.contains("missing-[REDACTED].txt"), "{text}");
}

#[test]
fn a_spilled_result_is_redacted_in_its_preview_and_on_disk() {
    let ws = Workspace::new();
    // 200 KB of output with the secret straddling the 64 KiB boundaries a pipe is read in,
    // near the preview's cut, and at the very end.
    let filler = |n: usize| "x".repeat(n);
    let mut body = filler(65_536 - 7);
    body.push_str(SECRET);
    body.push('\n');
    body.push_str(&format!("{}\n", filler(100)).repeat(600));
    body.push_str(&filler(131_072 - 5 - body.len()));
    body.push_str(SECRET);
    body.push('\n');
    body.push_str(&format!("{}\n", filler(100)).repeat(700));
    body.push_str(SECRET);
    ws.write("big.txt", &body);
    let text = call(
        &ws,
        "bash",
        &serde_json::json!({"command": "cat big.txt"}),
        0,
    );
    assert!(
        text.contains("tool-output://"),
        "the output was saved: {text}"
    );
    assert!(text.contains("[REDACTED]"), "{text}");
    let saved = files(ws.data.path());
    let outputs: Vec<_> = saved
        .iter()
        // The directory's sweep record is the store's bookkeeping, not an output.
        .filter(|path| path.to_string_lossy().contains("tool-output") && !path.ends_with(".sweep"))
        .collect();
    assert!(!outputs.is_empty(), "{saved:?}");
    for path in &saved {
        let bytes = std::fs::read(path).unwrap();
        let content = String::from_utf8_lossy(&bytes);
        assert!(
            !content.contains(SECRET),
            "{} holds the secret",
            path.display()
        );
    }
    for path in outputs {
        let content = std::fs::read_to_string(path).unwrap();
        assert_eq!(
            content.matches("[REDACTED]").count(),
            3,
            "{}",
            content.len()
        );
    }
}
