//! `question` (reference QU1–QU6).

use std::sync::{Arc, Mutex};

use serde_json::json;
use tackle_builtins::question::{QuestionError, QuestionFuture, QuestionRequest, QuestionService};
use tackle_permission::{Effect, Reply, Rule, Ruleset};
use tackle_tool_core::{Defect, Halt, ToolError};

use super::interactive_support::{
    allowing, built, ctx, denying, failure, offered, permission_with, services, settle, text,
};

/// The `question` tool asking through `service`.
fn question_tool(
    permission: tackle_permission::Permission,
    service: Arc<dyn QuestionService>,
) -> tackle_tool_core::Tool {
    built(&services(permission).with_questions(service), "question")
}

/// Answers every request with the same result and records what it was asked.
#[derive(Clone)]
struct Scripted {
    answer: Result<Vec<Vec<String>>, QuestionError>,
    seen: Arc<Mutex<Vec<QuestionRequest>>>,
}

impl Scripted {
    fn new(answer: Result<Vec<Vec<String>>, QuestionError>) -> Self {
        Self {
            answer,
            seen: Arc::default(),
        }
    }

    fn seen(&self) -> Vec<QuestionRequest> {
        self.seen.lock().unwrap().clone()
    }
}

impl QuestionService for Scripted {
    fn ask(&self, request: QuestionRequest) -> QuestionFuture {
        self.seen.lock().unwrap().push(request);
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

fn answers(lists: &[&[&str]]) -> Vec<Vec<String>> {
    lists
        .iter()
        .map(|list| list.iter().map(|s| (*s).to_owned()).collect())
        .collect()
}

fn prompt(question: &str) -> serde_json::Value {
    json!({
        "question": question,
        "header": "Choice",
        "options": [{"label": "Build", "description": "Build it"}, {"label": "Dev", "description": "Develop"}],
    })
}

fn three_questions() -> serde_json::Value {
    json!({"questions": [prompt("What should happen?"), prompt("Which environment?"), prompt("Anything else?")]})
}

#[tokio::test]
async fn answers_become_the_reference_text() {
    let (permission, recorder) = allowing();
    let service = Scripted::new(Ok(answers(&[&["Build"], &["Dev"], &[]])));
    let tool = question_tool(permission, Arc::new(service.clone()));
    let output = settle(&tool, "question", three_questions()).await.unwrap();
    assert_eq!(
        text(&output),
        "User has answered your questions: \"What should happen?\"=\"Build\", \
         \"Which environment?\"=\"Dev\", \"Anything else?\"=\"Unanswered\". \
         You can now continue with the user's answers in mind."
    );
    assert_eq!(
        output.structured,
        json!({"answers": [["Build"], ["Dev"], []]})
    );
    // QU2: one assertion on "*", nothing saved.
    assert_eq!(
        recorder.summary(),
        [("question".to_owned(), vec!["*".to_owned()], vec![])]
    );
    let seen = service.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].session_id, "s");
    assert_eq!(seen[0].call_id, "call_1");
    assert_eq!(seen[0].message_id, "msg_1");
    assert_eq!(seen[0].questions.len(), 3);
    assert!(!seen[0].questions[0].multiple);
}

#[tokio::test]
async fn several_labels_are_joined() {
    let (permission, _) = allowing();
    let service = Scripted::new(Ok(answers(&[&["Build", "Dev"]])));
    let tool = question_tool(permission, Arc::new(service));
    let mut input = json!({"questions": [prompt("Which?")]});
    input["questions"][0]["multiple"] = json!(true);
    let output = settle(&tool, "question", input).await.unwrap();
    assert!(text(&output).contains("\"Which?\"=\"Build, Dev\""));
}

#[tokio::test]
async fn a_denied_question_is_hidden_and_fails_without_asking() {
    let rules = Ruleset::new(vec![
        Rule::new("*", "*", Effect::Allow),
        Rule::new("question", "*", Effect::Deny),
    ]);
    assert!(rules.wholly_disabled("question"));
    let (permission, recorder) = denying("question");
    let service = Scripted::new(Ok(answers(&[&["Build"]])));
    let tool = question_tool(permission, Arc::new(service.clone()));
    let message = failure(settle(&tool, "question", json!({"questions": [prompt("Go?")]})).await);
    assert!(
        message.starts_with("Permission denied: question"),
        "{message}"
    );
    assert!(recorder.asked().is_empty());
    assert!(service.seen().is_empty());
}

#[tokio::test]
async fn a_dismissal_is_a_failure_the_model_reads() {
    let (permission, _) = allowing();
    let tool = question_tool(
        permission,
        Arc::new(Scripted::new(Err(QuestionError::Dismissed))),
    );
    let message = failure(settle(&tool, "question", three_questions()).await);
    insta::assert_snapshot!(message, @"User dismissed the question.");
}

#[tokio::test]
async fn a_cancelled_question_halts_the_turn() {
    let (permission, _) = allowing();
    let tool = question_tool(permission, Arc::new(Unanswered));
    let ctx = ctx("s");
    let cancel = ctx.cancel.clone();
    let call = tackle_tool_core::Call::new("call_1", "question", three_questions());
    let (result, ()) = tokio::join!(tool.run_unbounded(&call, &ctx), async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        cancel.cancel();
    });
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Cancelled))),
        "{result:?}"
    );
}

/// A user who never answers.
struct Unanswered;

impl QuestionService for Unanswered {
    fn ask(&self, _: QuestionRequest) -> QuestionFuture {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_declined_permission_halts_before_asking() {
    let (permission, _) = permission_with(Reply::Reject { message: None }, &[]);
    let service = Scripted::new(Ok(answers(&[&["Build"]])));
    let tool = question_tool(permission, Arc::new(service.clone()));
    let result = settle(&tool, "question", json!({"questions": [prompt("Go?")]})).await;
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Declined))),
        "{result:?}"
    );
    assert!(service.seen().is_empty());
}

#[tokio::test]
async fn a_broken_host_is_a_defect() {
    let (permission, _) = allowing();
    let broken = Scripted::new(Err(QuestionError::Failed("terminal closed".into())));
    let tool = question_tool(permission.clone(), Arc::new(broken));
    let result = settle(&tool, "question", three_questions()).await;
    let Err(ToolError::Defect(defect)) = result else {
        panic!("{result:?}")
    };
    assert_eq!(Defect::message(&defect), "the question service failed");
    let short = Scripted::new(Ok(answers(&[&["Build"]])));
    let tool = question_tool(permission, Arc::new(short));
    let result = settle(&tool, "question", three_questions()).await;
    assert!(matches!(result, Err(ToolError::Defect(_))), "{result:?}");
}

#[tokio::test]
async fn bad_input_is_refused_before_asking() {
    let (permission, recorder) = allowing();
    let service = Scripted::new(Ok(Vec::new()));
    let tool = question_tool(permission, Arc::new(service.clone()));
    let empty = failure(settle(&tool, "question", json!({"questions": []})).await);
    let blank = failure(settle(&tool, "question", json!({"questions": [prompt(" ")]})).await);
    let missing =
        failure(settle(&tool, "question", json!({"questions": [{"question": "q"}]})).await);
    insta::assert_snapshot!(format!("{empty}\n{blank}\n{missing}"), @r#"
    Invalid tool input: questions: expected a non-empty array of objects, got []

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input: questions[0].question: the question is blank

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input:
    - questions[0].header: missing required field; expected a string
    - questions[0].options: missing required field; expected an array of objects

    Correct the input so that it matches the tool's input schema, then call the tool again.
    "#);
    assert!(recorder.asked().is_empty());
    assert!(service.seen().is_empty());
}

#[test]
fn a_headless_host_does_not_offer_question() {
    let dir = tempfile::tempdir().unwrap();
    let (permission, _) = allowing();
    let headless = super::interactive_support::services_at(dir.path(), permission);
    assert!(!headless.can_ask());
    let names = offered(&headless);
    assert!(!names.contains(&"question".to_owned()), "{names:?}");
    let asking = headless.with_questions(Arc::new(Scripted::new(Ok(Vec::new()))));
    assert!(asking.can_ask());
    assert!(offered(&asking).contains(&"question".to_owned()));
}

#[test]
fn the_definition() {
    let (permission, _) = allowing();
    let tool = question_tool(permission, Arc::new(Scripted::new(Ok(Vec::new()))));
    let definition = tool.definition("question").unwrap();
    insta::assert_json_snapshot!(definition.as_ref());
}
