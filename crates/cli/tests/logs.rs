//! `-v` logs each settle, permission decision and process to stderr; stdout keeps the result
//! alone.

use crate::Workspace;

fn call_bash(ws: &Workspace, extra: &[&str]) -> (String, String) {
    let mut args = vec!["call", "bash", r#"{"command":"echo hi"}"#, "--yes"];
    args.extend_from_slice(extra);
    let out = ws
        .tackle(&args)
        .env_remove("RUST_LOG")
        .env_remove("TACKLE_LOG")
        .assert()
        .code(0);
    let output = out.get_output();
    (
        String::from_utf8(output.stdout.clone()).unwrap(),
        String::from_utf8(output.stderr.clone()).unwrap(),
    )
}

#[test]
fn verbose_logs_go_to_stderr_and_the_result_is_unchanged() {
    let ws = Workspace::new();
    let (quiet_out, quiet_err) = call_bash(&ws, &[]);
    assert_eq!(quiet_err, "", "nothing is logged without -v");
    let (out, err) = call_bash(&ws, &["-v"]);
    assert_eq!(out, quiet_out, "stdout is the result alone");
    assert!(out.contains("hi"), "{out}");
    // The permission decision, inside the call's settle span.
    let decision = err
        .lines()
        .find(|line| line.contains("permission decision"))
        .unwrap_or_else(|| panic!("no decision in {err}"));
    for field in [
        "settle{tool=bash call_id=call_cli session=cli",
        "action=bash",
        r#"resources=["echo hi"]"#,
        "effect=\"ask\"",
        "reply=\"once\"",
        "verdict=\"allowed\"",
    ] {
        assert!(decision.contains(field), "{field} not in {decision}");
    }
    let process = err
        .lines()
        .find(|line| line.contains("process ended"))
        .unwrap_or_else(|| panic!("no process in {err}"));
    for field in [
        "command=\"echo hi\"",
        "exit=exit status: 0",
        "duration_ms=",
        "pid=",
    ] {
        assert!(process.contains(field), "{field} not in {process}");
    }
    let settled = err
        .lines()
        .find(|line| line.contains("settle{") && line.contains("close"))
        .unwrap_or_else(|| panic!("no settle in {err}"));
    for field in [
        "result=\"text\"",
        "bytes_in=21",
        "truncated=false",
        "duration_ms=",
    ] {
        assert!(settled.contains(field), "{field} not in {settled}");
    }
    // -vv shows the process starting too.
    let (_, err) = call_bash(&ws, &["-vv"]);
    assert!(err.contains("process started"), "{err}");
}
