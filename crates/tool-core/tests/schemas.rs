//! Snapshots of the normalised schemas models see.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_tool_core::{input_schema_for, output_schema_for};

/// Reads a file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ReadInput {
    /// The path to read.
    path: String,
    /// 1-based line to start from.
    offset: Option<u32>,
    /// How many lines.
    limit: Option<u32>,
    /// Whether to show line numbers.
    #[serde(default)]
    with_numbers: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Status {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Todo {
    content: String,
    status: Status,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct TodoInput {
    /// The whole list.
    todos: Vec<Todo>,
    owner: Option<Owner>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Owner {
    name: String,
    labels: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[allow(dead_code)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[allow(dead_code)]
struct WriteOutput {
    existed: bool,
    diff: Option<String>,
}

#[test]
fn flat_struct_with_optional_fields() {
    insta::assert_json_snapshot!(input_schema_for::<ReadInput>());
}

#[test]
fn nested_structs_vectors_and_enums_are_inlined() {
    insta::assert_json_snapshot!(input_schema_for::<TodoInput>());
}

#[test]
fn tagged_enum() {
    insta::assert_json_snapshot!(input_schema_for::<Shape>());
}

#[test]
fn recursive_types_keep_their_definitions() {
    insta::assert_json_snapshot!(input_schema_for::<Tree>());
}

#[test]
fn output_schema() {
    insta::assert_json_snapshot!(output_schema_for::<WriteOutput>());
}
