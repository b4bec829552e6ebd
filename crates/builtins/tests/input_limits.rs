//! Every string and list a model sends has a maximum, checked before the tool runs: a value
//! one past it is refused by its size (nothing is parsed, asked, written or started), a value
//! at it is taken.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_builtins::question::{QuestionFuture, QuestionRequest, QuestionService};
use tackle_builtins::web::WebServices;
use tackle_builtins::web::search::{ExaProvider, WebSearchConfig};
use tackle_builtins::{LocationServices, builtin_names, builtin_tools};
use tackle_tool_core::{REWRITE_HINT, Tool};

use super::interactive_support::{Recorder, allowing, failure, services_at, settle, text};

/// Counts the questions it is asked and answers none.
#[derive(Default)]
struct Counted(AtomicUsize);

impl QuestionService for Counted {
    fn ask(&self, _request: QuestionRequest) -> QuestionFuture {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// Every builtin over a temp Location whose permission asks about everything (and records it).
struct Builtins {
    dir: tempfile::TempDir,
    tools: BTreeMap<String, Tool>,
    recorder: Recorder,
    questions: Arc<Counted>,
}

impl Builtins {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        // A skill, so that the skill tool is offered.
        let skill = root.join(".tackle/skills/effect");
        fs::create_dir_all(&skill).unwrap();
        fs::write(
            skill.join("SKILL.md"),
            "---\nname: effect\ndescription: Use Effect.\n---\nUse it well.\n",
        )
        .unwrap();
        let (permission, recorder) = allowing();
        let questions = Arc::new(Counted::default());
        let web = {
            let mut value = WebServices::default();
            value.search = WebSearchConfig::new().with_provider(ExaProvider::new(None));
            value
        };
        let services: LocationServices = services_at(&root, permission)
            .with_questions(Arc::clone(&questions) as Arc<dyn QuestionService>)
            .with_web(web);
        let tools = builtin_tools(&services).into_iter().collect();
        Self {
            dir,
            tools,
            recorder,
            questions,
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn tool(&self, name: &str) -> &Tool {
        &self.tools[name]
    }
}

/// The string and array schemas of `schema` without a maximum, by field path.
fn unbounded(schema: &Value, path: &str, found: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    let kinds: Vec<&str> = match map.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let fixed = map.contains_key("enum") || map.contains_key("const");
    if kinds.contains(&"string") && !fixed && !map.contains_key("maxLength") {
        found.push(path.to_owned());
    }
    if kinds.contains(&"array") && !map.contains_key("maxItems") {
        found.push(path.to_owned());
    }
    if let Some(fields) = map.get("properties").and_then(Value::as_object) {
        for (name, field) in fields {
            unbounded(field, &format!("{path}.{name}"), found);
        }
    }
    if let Some(items) = map.get("items") {
        unbounded(items, &format!("{path}[]"), found);
    }
    for key in ["oneOf", "anyOf"] {
        for each in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            unbounded(each, path, found);
        }
    }
}

#[test]
fn every_string_and_list_a_model_sends_has_a_maximum() {
    let builtins = Builtins::new();
    let names: Vec<&str> = builtin_names().collect();
    let built: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| builtins.tools.contains_key(*name))
        .collect();
    assert_eq!(
        built, names,
        "every builtin is built here, so every input is audited"
    );
    let mut found = Vec::new();
    for (name, tool) in &builtins.tools {
        let definition = tool.definition(name).unwrap();
        unbounded(&definition.input_schema, name, &mut found);
    }
    assert!(found.is_empty(), "inputs without a maximum: {found:?}");
}

const PATH: usize = 4096;
const PATTERN: usize = 16 * 1024;
const COMMAND: usize = 128 * 1024 - 1;
const CONTENT: usize = 256 * 1024 * 1024;
const URL: usize = 8 * 1024;
const TEXT: usize = 4 * 1024;
const ITEMS: usize = 1000;

/// An input of `tool` with one value `size` long (characters, or items for a list).
type Input = fn(usize) -> Value;

fn chars(size: usize) -> String {
    "a".repeat(size)
}

fn question(label: &str, options: usize) -> Value {
    let option = json!({"label": label, "description": "d"});
    json!({"questions": [{"question": "q", "header": "h", "options": vec![option; options]}]})
}

/// Each bounded field: the tool, the field's path in the error, its maximum, and an input with
/// the field at a given size.
const BOUNDED: &[(&str, &str, usize, Input)] = &[
    ("read", "path", PATH, |n| json!({"path": chars(n)})),
    (
        "write",
        "path",
        PATH,
        |n| json!({"path": chars(n), "content": "x"}),
    ),
    (
        "write",
        "content",
        CONTENT,
        |n| json!({"path": "w.txt", "content": chars(n)}),
    ),
    (
        "edit",
        "path",
        PATH,
        |n| json!({"path": chars(n), "oldString": "a", "newString": "b"}),
    ),
    (
        "edit",
        "oldString",
        CONTENT,
        |n| json!({"path": "e.txt", "oldString": chars(n), "newString": "b"}),
    ),
    (
        "edit",
        "newString",
        CONTENT,
        |n| json!({"path": "e.txt", "oldString": "a", "newString": chars(n)}),
    ),
    (
        "apply_patch",
        "patchText",
        CONTENT,
        |n| json!({"patchText": chars(n)}),
    ),
    ("grep", "pattern", PATTERN, |n| json!({"pattern": chars(n)})),
    (
        "grep",
        "include",
        PATTERN,
        |n| json!({"pattern": "x", "include": chars(n)}),
    ),
    (
        "grep",
        "path",
        PATH,
        |n| json!({"pattern": "x", "path": chars(n)}),
    ),
    ("glob", "pattern", PATTERN, |n| json!({"pattern": chars(n)})),
    (
        "glob",
        "path",
        PATH,
        |n| json!({"pattern": "x", "path": chars(n)}),
    ),
    (
        "bash",
        "command",
        COMMAND,
        |n| json!({"command": format!("touch ran; : {}", chars(n - 13)), "description": "d"}),
    ),
    (
        "bash",
        "workdir",
        PATH,
        |n| json!({"command": "touch ran", "workdir": chars(n)}),
    ),
    (
        "bash",
        "description",
        TEXT,
        |n| json!({"command": "touch ran", "description": chars(n)}),
    ),
    ("job_output", "id", TEXT, |n| json!({"id": chars(n)})),
    (
        "job_output",
        "filter",
        PATTERN,
        |n| json!({"id": "j", "filter": chars(n)}),
    ),
    ("job_kill", "id", TEXT, |n| json!({"id": chars(n)})),
    (
        "webfetch",
        "url",
        URL,
        |n| json!({"url": format!("http://{}", chars(n - 7))}),
    ),
    ("websearch", "query", TEXT, |n| json!({"query": chars(n)})),
    ("skill", "name", TEXT, |n| json!({"name": chars(n)})),
    ("todowrite", "todos", ITEMS, |n| {
        let todo = json!({"content": "c", "status": "pending", "priority": "low"});
        json!({"todos": vec![todo; n]})
    }),
    (
        "todowrite",
        "todos[0].content",
        TEXT,
        |n| json!({"todos": [{"content": chars(n), "status": "pending", "priority": "low"}]}),
    ),
    ("question", "questions", ITEMS, |n| {
        let one = json!({"question": "q", "header": "h", "options": []});
        json!({"questions": vec![one; n]})
    }),
    ("question", "questions[0].options", ITEMS, |n| {
        question("l", n)
    }),
    ("question", "questions[0].options[0].label", TEXT, |n| {
        question(&chars(n), 1)
    }),
    (
        "question",
        "questions[0].question",
        TEXT,
        |n| json!({"questions": [{"question": chars(n), "header": "h", "options": []}]}),
    ),
    (
        "question",
        "questions[0].header",
        TEXT,
        |n| json!({"questions": [{"question": "q", "header": chars(n), "options": []}]}),
    ),
];

#[tokio::test]
async fn one_past_each_maximum_is_refused_by_its_size_and_nothing_runs() {
    let builtins = Builtins::new();
    fs::write(builtins.root().join("e.txt"), "a").unwrap();
    let mut seen = String::new();
    for (tool, field, max, input) in BOUNDED {
        // The schema takes the value at its maximum.
        let at = input(*max);
        assert!(
            builtins.tool(tool).check_input(&at).is_ok(),
            "{tool}.{field} at {max}"
        );
        let message = failure(settle(builtins.tool(tool), tool, input(max + 1)).await);
        let unit = if *max == ITEMS { "items" } else { "characters" };
        let expected = format!(
            "Invalid tool input: {field}: too long: {} {unit}, and at most {max} are accepted\
             \n\n{REWRITE_HINT}",
            max + 1
        );
        assert_eq!(message, expected, "{tool}.{field}");
        seen.push_str(&format!("{tool}: {}\n", message.lines().next().unwrap()));
    }
    insta::assert_snapshot!(seen);
    assert!(builtins.recorder.asked().is_empty(), "nothing was asked");
    assert_eq!(builtins.questions.0.load(Ordering::SeqCst), 0);
    let mut left: Vec<String> = fs::read_dir(builtins.root())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".tackle")
        .collect();
    left.sort();
    assert_eq!(left, ["e.txt"], "no file was written and no command ran");
    assert_eq!(
        fs::read_to_string(builtins.root().join("e.txt")).unwrap(),
        "a"
    );
}

#[tokio::test]
async fn values_at_their_maximum_work() {
    let builtins = Builtins::new();
    let root = builtins.root().to_path_buf();
    // A pattern at the maximum searches (and finds nothing).
    let long = chars(PATTERN);
    let grep = settle(
        builtins.tool("grep"),
        "grep",
        json!({"pattern": long, "literal": true}),
    );
    assert!(text(&grep.await.unwrap()).starts_with("No files found"));
    let glob = settle(builtins.tool("glob"), "glob", json!({"pattern": long}));
    assert!(text(&glob.await.unwrap()).starts_with("No files found"));
    // Content at the maximum is written whole.
    let written = settle(
        builtins.tool("write"),
        "write",
        json!({"path": "w.txt", "content": chars(CONTENT)}),
    );
    written.await.unwrap();
    assert_eq!(
        fs::metadata(root.join("w.txt")).unwrap().len(),
        CONTENT as u64
    );
    // A command at the maximum runs.
    let command = (BOUNDED[12].3)(COMMAND);
    let ran = settle(builtins.tool("bash"), "bash", command)
        .await
        .unwrap();
    assert!(root.join("ran").exists(), "{}", text(&ran));
}

/// The peak resident memory of this process (nextest runs each test in its own).
fn peak_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_hundred_megabyte_pattern_is_refused_at_once_in_little_memory() {
    const SIZE: usize = 100 << 20;
    let builtins = Builtins::new();
    let input = json!({"pattern": chars(SIZE)});
    let before = peak_kib();
    let started = Instant::now();
    let message = failure(settle(builtins.tool("grep"), "grep", input).await);
    let took = started.elapsed();
    let grown = peak_kib().saturating_sub(before);
    assert!(
        message.contains("too long: 104857600 characters"),
        "{message}"
    );
    assert!(took < Duration::from_millis(500), "took {took:?}");
    // Parsing it took about a hundred times its size; refusing it takes no copy of it.
    assert!(grown < (SIZE as u64 / 1024), "the peak grew by {grown} KiB");
}

#[tokio::test]
async fn short_patterns_that_compile_huge_are_refused_quickly() {
    let builtins = Builtins::new();
    // One group deeper than the limit, and thousands deeper (no stack is spent on them).
    let nested = |depth: usize| format!("{}a{}", "(".repeat(depth), ")".repeat(depth));
    let (past, deep) = (nested(101), nested(5000));
    let mut seen = String::new();
    for pattern in [
        "(a{1000}){1000}",
        "\\w{1000}{1000}",
        past.as_str(),
        deep.as_str(),
    ] {
        let started = Instant::now();
        let input = json!({"pattern": pattern});
        let message = failure(settle(builtins.tool("grep"), "grep", input).await);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "took {took:?}");
        if pattern == deep {
            assert!(
                message.ends_with("nested parentheses/brackets (100)"),
                "{took:?}"
            );
        } else {
            seen.push_str(&format!("{message}\n\n"));
        }
    }
    insta::assert_snapshot!(seen);
    assert!(builtins.recorder.asked().is_empty(), "nothing was asked");
}
