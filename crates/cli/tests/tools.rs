use crate::tackle;

#[test]
fn tools_json_lists_the_registered_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let out = tackle()
        .args(["tools", "--format", "json", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    let list: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = tackle_builtins::builtin_tools()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, expected);
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    tackle()
        .args(["tools", "--format", "yaml"])
        .assert()
        .code(2);
}
