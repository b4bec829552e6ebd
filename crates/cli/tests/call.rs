use predicates::str::contains;

use crate::tackle;

#[test]
fn an_unknown_tool_is_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    tackle()
        .args(["call", "no_such_tool", "{}", "--dir"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout("Unknown tool: no_such_tool\n");
}

#[test]
fn json_prints_the_settlement() {
    let dir = tempfile::tempdir().unwrap();
    let out = tackle()
        .args(["call", "nope", "--json", "--dir"])
        .arg(dir.path())
        .assert()
        .code(1);
    let settlement: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        settlement,
        serde_json::json!({"result": {"type": "error", "value": "Unknown tool: nope"}})
    );
}

#[test]
fn invalid_json_input_is_a_clear_usage_error() {
    tackle()
        .args(["call", "read", "{path:"])
        .assert()
        .code(2)
        .stderr(contains(
            "tackle: the input is not valid JSON: key must be a string at line 1 column 2",
        ));
}

#[test]
fn input_can_come_from_stdin() {
    tackle()
        .args(["call", "x", "-"])
        .write_stdin("[1,")
        .assert()
        .code(2)
        .stderr(contains("not valid JSON"));
}

#[test]
fn a_missing_location_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    tackle()
        .args(["call", "read", "{}", "--dir"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(contains("No such file or directory"));
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    tackle()
        .args(["call", "read", "{}", "--dir"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(contains("not a directory"));
}
