//! Every builtin's schema and decoder agree, field by field: values the schema allows are
//! decoded, values it refuses are refused with the field's path named.
//!
//! The values are derived from each advertised schema (types, `minimum`/`maximum`,
//! enumerations, `required`, `additionalProperties: false`), so a field added later is covered
//! without touching this test.

use serde_json::{Value, json};
use tackle_tool_core::Tool;

use super::support::Compat;

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn shown(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn slot<'a>(value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(value, |value, step| match step {
        Step::Key(key) => &mut value[key.as_str()],
        Step::Index(i) => &mut value[*i],
    })
}

fn choices(schema: &Value) -> Option<Vec<Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.clone());
    }
    let alternatives = schema.get("oneOf").or_else(|| schema.get("anyOf"))?;
    alternatives
        .as_array()?
        .iter()
        .map(|a| a.get("const").cloned())
        .collect()
}

fn kind(schema: &Value) -> &str {
    schema.get("type").and_then(Value::as_str).unwrap_or("")
}

fn bound(schema: &Value, key: &str) -> Option<i64> {
    schema.get(key).and_then(Value::as_i64)
}

/// A value `schema` allows, with every required field (and one array item) present.
fn sample(schema: &Value) -> Value {
    if let Some(choices) = choices(schema) {
        return choices[0].clone();
    }
    match kind(schema) {
        "string" => json!("x"),
        "integer" | "number" => json!(bound(schema, "minimum").unwrap_or(0).max(1)),
        "boolean" => json!(true),
        "array" => json!([sample(&schema["items"])]),
        "object" => {
            let mut object = serde_json::Map::new();
            for name in required(schema) {
                object.insert(name.clone(), sample(&schema["properties"][name.as_str()]));
            }
            Value::Object(object)
        }
        other => panic!("no sample for a schema of type {other:?}: {schema}"),
    }
}

fn required(schema: &Value) -> Vec<String> {
    schema["required"]
        .as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Values the schema allows for one field.
fn good(schema: &Value) -> Vec<Value> {
    if let Some(choices) = choices(schema) {
        return choices;
    }
    match kind(schema) {
        "string" if bound(schema, "minLength").is_some_and(|n| n > 0) => vec![json!("some text")],
        "string" => vec![json!(""), json!("some text")],
        "integer" => {
            let min = bound(schema, "minimum");
            let max = bound(schema, "maximum");
            let low = min.unwrap_or(0);
            let high = max.unwrap_or(low + 100_000);
            vec![json!(low), json!(high), json!((low + high) / 2)]
        }
        "boolean" => vec![json!(true), json!(false)],
        "array" if bound(schema, "minItems").is_some_and(|n| n > 0) => {
            vec![json!([sample(&schema["items"])])]
        }
        "array" => vec![json!([]), json!([sample(&schema["items"])])],
        "object" => vec![sample(schema)],
        other => panic!("no good values for type {other:?}: {schema}"),
    }
}

/// Values the schema refuses for one field (none of them a harmless mistake the decoding
/// layer corrects).
fn bad(schema: &Value) -> Vec<Value> {
    if choices(schema).is_some() {
        return vec![json!("not-one-of-them"), json!(7)];
    }
    match kind(schema) {
        "string" if bound(schema, "minLength").is_some_and(|n| n > 0) => {
            vec![json!(5), json!(true), json!(["x"]), json!("")]
        }
        "string" => vec![json!(5), json!(true), json!(["x"])],
        "integer" => {
            let mut bad = vec![json!("many"), json!(true), json!(1.5), json!({})];
            if let Some(min) = bound(schema, "minimum") {
                bad.push(json!(min - 1));
            }
            if let Some(max) = bound(schema, "maximum") {
                bad.push(json!(max + 1));
            }
            bad
        }
        "boolean" => vec![json!("maybe"), json!(1)],
        "array" if bound(schema, "minItems").is_some_and(|n| n > 0) => {
            vec![json!(5), json!("not a list"), json!({}), json!([])]
        }
        "array" => vec![json!(5), json!("not a list"), json!({})],
        "object" => vec![json!(5), json!([])],
        other => panic!("no bad values for type {other:?}: {schema}"),
    }
}

struct Walk<'a> {
    tool: &'a Tool,
    name: &'a str,
    base: Value,
    disagreements: Vec<String>,
    checked: usize,
}

impl Walk<'_> {
    fn expect(&mut self, input: &Value, accepted: bool, path: &[Step], what: &str) {
        self.checked += 1;
        match (self.tool.check_input(input), accepted) {
            (Ok(_), true) => {}
            (Err(failure), false) => {
                let field = shown(path);
                if !failure.message.contains(&field) {
                    self.disagreements.push(format!(
                        "{} {input}: the error does not name `{field}`: {}",
                        self.name, failure.message
                    ));
                }
            }
            (Ok(_), false) => self
                .disagreements
                .push(format!("{} {input}: {what} was accepted", self.name)),
            (Err(failure), true) => self.disagreements.push(format!(
                "{} {input}: {what} was refused: {}",
                self.name, failure.message
            )),
        }
    }

    fn with(&self, path: &[Step], value: Value) -> Value {
        let mut input = self.base.clone();
        *slot(&mut input, path) = value;
        input
    }

    /// Every field of the object at `path`, described by `schema`.
    fn object(&mut self, schema: &Value, path: &[Step]) {
        let mut unknown = self.base.clone();
        slot(&mut unknown, path)["zz_not_a_field"] = json!(1);
        let mut field_path = path.to_vec();
        field_path.push(Step::Key("zz_not_a_field".to_owned()));
        self.expect(&unknown, false, &field_path, "an unknown field");
        let Some(properties) = schema["properties"].as_object() else {
            return;
        };
        let required = required(schema);
        for (name, field) in properties {
            let mut at = path.to_vec();
            at.push(Step::Key(name.clone()));
            let mut without = self.base.clone();
            if let Value::Object(map) = slot(&mut without, path) {
                map.remove(name);
            }
            let is_required = required.contains(name);
            self.expect(&without, !is_required, &at, "leaving the field out");
            for value in good(field) {
                let input = self.with(&at, value.clone());
                self.expect(&input, true, &at, &format!("the allowed value {value}"));
            }
            for value in bad(field) {
                let input = self.with(&at, value.clone());
                self.expect(&input, false, &at, &format!("the refused value {value}"));
            }
            self.nested(field, &at);
        }
    }

    fn nested(&mut self, field: &Value, at: &[Step]) {
        match kind(field) {
            "object" if field.get("properties").is_some() => {
                let saved = self.base.clone();
                *slot(&mut self.base, at) = sample(field);
                self.object(field, at);
                self.base = saved;
            }
            "array" if kind(&field["items"]) == "object" => {
                let saved = self.base.clone();
                *slot(&mut self.base, at) = json!([sample(&field["items"])]);
                let mut item = at.to_vec();
                item.push(Step::Index(0));
                self.object(&field["items"], &item);
                self.base = saved;
            }
            _ => {}
        }
    }
}

fn every_builtin(fx: &Compat) -> Vec<(String, Tool)> {
    #[cfg_attr(not(feature = "web"), allow(unused_mut))]
    let mut tools = tackle_builtins::builtin_tools(&fx.services);
    #[cfg(feature = "web")]
    {
        use tackle_builtins::web::search::{SearchFuture, SearchRequest};
        use tackle_builtins::web::{SearchProvider, WebSearchConfig, WebServices};
        struct Stub;
        impl SearchProvider for Stub {
            fn name(&self) -> &str {
                "stub"
            }
            fn search<'a>(&'a self, _request: &'a SearchRequest) -> SearchFuture<'a> {
                Box::pin(async { Ok(None) })
            }
        }
        let mut web = WebServices::default();
        web.search = WebSearchConfig::new().with_provider(Stub);
        let services = fx.services.clone().with_web(web);
        tools.extend(
            tackle_builtins::builtin_tool(&services, "websearch")
                .map(|t| ("websearch".to_owned(), t)),
        );
    }
    tools
}

#[test]
fn every_builtin_decodes_exactly_what_its_schema_allows() {
    let fx = Compat::new();
    let tools = every_builtin(&fx);
    let names: Vec<&str> = tools.iter().map(|(name, _)| name.as_str()).collect();
    for expected in ["read", "edit", "write", "question", "skill", "todowrite"] {
        assert!(
            names.contains(&expected),
            "{expected} is not covered: {names:?}"
        );
    }
    let mut disagreements = Vec::new();
    let mut checked = 0;
    for (name, tool) in &tools {
        let schema = tool.definition(name).unwrap().input_schema.clone();
        let base = sample(&schema);
        let mut walk = Walk {
            tool,
            name,
            base: base.clone(),
            disagreements: Vec::new(),
            checked: 0,
        };
        walk.expect(&base, true, &[], "the sample input");
        walk.object(&schema, &[]);
        // A tool without inputs (job_list) has little to check.
        let has_inputs = schema["properties"]
            .as_object()
            .is_some_and(|properties| !properties.is_empty());
        assert!(
            walk.checked > 5 || !has_inputs,
            "{name}: only {} inputs checked",
            walk.checked
        );
        checked += walk.checked;
        disagreements.extend(walk.disagreements);
    }
    eprintln!("{checked} inputs checked against {} schemas", tools.len());
    assert!(
        disagreements.is_empty(),
        "schema and decoder disagree:\n{}",
        disagreements.join("\n")
    );
}

/// read's schema said `minimum: 0` for `limit` while a limit of 0 failed the call: the schema
/// now says 1, and 0 is refused while decoding, naming the field.
#[test]
fn read_limit_zero_is_refused_as_the_schema_says() {
    let fx = Compat::new();
    let read = fx.tool("read");
    let schema = read.definition("read").unwrap().input_schema.clone();
    assert_eq!(schema["properties"]["limit"]["minimum"], json!(1));
    assert_eq!(schema["properties"]["offset"]["minimum"], json!(0));
    let failure = read
        .check_input(&json!({"path": "a.txt", "limit": 0}))
        .unwrap_err();
    assert!(
        failure.message.starts_with("Invalid tool input: limit: "),
        "{}",
        failure.message
    );
    assert!(
        read.check_input(&json!({"path": "a.txt", "offset": 0}))
            .is_ok()
    );
}
