use serde_json::json;

use super::{schema, settle, tools};

/// What `cargo xtask ci` does with a generated page: a checked-in file that differs fails with
/// a diff naming the line, and `--bless` rewrites it. Run on the real docs/tools.md.
#[test]
fn a_drifted_tools_page_fails_the_check_and_bless_rewrites_it() {
    let checked_in =
        std::fs::read_to_string(crate::workspace_root().join(super::TOOLS_PAGE)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.md");
    std::fs::write(&path, &checked_in).unwrap();
    settle(&path, "docs/tools.md", &checked_in, false).unwrap();

    let drifted = checked_in.replacen("Permission action: `edit`", "Permission action: `write`", 1);
    assert_ne!(drifted, checked_in);
    std::fs::write(&path, &drifted).unwrap();
    let failure = settle(&path, "docs/tools.md", &checked_in, false).unwrap_err();
    assert!(
        failure.contains("docs/tools.md is out of date"),
        "{failure}"
    );
    assert!(failure.contains("-Permission action: `write`"), "{failure}");
    assert!(failure.contains("+Permission action: `edit`"), "{failure}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        drifted,
        "a check writes nothing"
    );

    settle(&path, "docs/tools.md", &checked_in, true).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), checked_in);
}

#[test]
fn input_tables_flatten_items_and_name_bounds_and_choices() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file.\nRelative | absolute."},
            "limit": {"type": "integer", "minimum": 1, "default": 2000},
            "todos": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {
                    "status": {"oneOf": [{"const": "pending"}, {"const": "done"}]},
                    "kind": {"$ref": "#/$defs/Kind"}
                },
                "required": ["status"]
            }}
        },
        "required": ["path"],
        "$defs": {"Kind": {"type": "string", "enum": ["a", "b"], "description": "Which."}}
    });
    insta::assert_snapshot!(schema::table(&schema, &schema), @r"
    | Field | Type | Required | Description |
    |---|---|---|---|
    | `path` | string | yes | The file.<br>Relative \| absolute. |
    | `limit` | integer ≥ 1, default `2000` | no |  |
    | `todos` | array of object items ≥ 1 | no |  |
    | `todos[].status` | one of: `pending`, `done` | yes |  |
    | `todos[].kind` | one of: `a`, `b` | no | Which. |
    ");
}

#[test]
fn examples_are_the_first_success_of_each_tool() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = "---\nsource: x.rs\nexpression: seen\n---\n\
                    > read {\"path\":\"missing\"}\nerror: File not found\n\n\
                    > read {\"path\":\"a.txt\"}\ntext: 1: alpha\n\n\
                    > Read {\"path\":\"a.txt\"}\n(settled as read)\ntext: 1: alpha\n\n\
                    > Glob {\"pattern\":\"*\"}\n(settled as glob)\ntext: b.txt\n\n\
                    > glob {\"pattern\":\"*\"}\ntext: a.txt\n";
    std::fs::write(dir.path().join("all__calls.snap"), snapshot).unwrap();
    let examples = tools::examples(dir.path()).unwrap();
    assert_eq!(examples.len(), 2);
    assert!(examples.contains_key("glob"));
    assert_eq!(
        examples["read"].text,
        "> read {\"path\":\"a.txt\"}\ntext: 1: alpha\n"
    );
    assert_eq!(examples["glob"].source, "all__calls.snap");
    assert_eq!(
        examples["glob"].text,
        "> Glob {\"pattern\":\"*\"}\n(settled as glob)\ntext: b.txt\n"
    );
}
