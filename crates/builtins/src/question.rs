//! `question`: ask the user through the host (reference QU1–QU6).
//!
//! The host supplies a [`QuestionService`]; a host that cannot ask anyone (headless) supplies
//! none, and the tool is then left out of the catalog instead of being offered and hanging
//! (see [`LocationServices::with_questions`](crate::LocationServices::with_questions)). A dismissal is
//! a failure the model reads (`User dismissed the question.`, what the reference CLI answers): the user chose not to answer, and the model goes on without the answer instead of
//! the turn ending. Cancelling the call is still a halt. There is no timeout: the user answers
//! when they answer (QU5).

use crate::limits::{MAX_ITEMS, MAX_TEXT_CHARS};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Content, Context, Defect, Execute, REWRITE_HINT, Tool, ToolError};

/// The model-facing description of `question` (QU6).
const DESCRIPTION: &str = "\
Use this tool when you need to ask the user questions during execution. This allows you to:
1. Gather user preferences or requirements
2. Clarify ambiguous instructions
3. Get decisions on implementation choices as you work
4. Offer choices to the user about what direction to take.

Usage notes:
- The user can always type their own answer instead of picking an option (\"Type your own \
answer\"), so do not add an \"Other\" option yourself
- Answers are returned as arrays of labels; set `multiple: true` to allow selecting more than one
- If you recommend a specific option, make that the first option in the list and add \
\"(Recommended)\" at the end of the label";

/// One choice offered for a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// Display text (1-5 words, concise).
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub label: String,
    /// Explanation of the choice.
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub description: String,
}

/// One question for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prompt {
    /// The complete question.
    #[schemars(length(min = 1, max = MAX_TEXT_CHARS))]
    pub question: String,
    /// A very short label for the question (max 30 characters).
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub header: String,
    /// The available choices.
    #[schemars(length(max = MAX_ITEMS))]
    pub options: Vec<QuestionOption>,
    /// Allow selecting more than one choice.
    #[serde(default)]
    #[schemars(extend("x-aliases" = ["multiSelect"]))]
    pub multiple: bool,
}

/// Questions for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionInput {
    /// The questions to ask.
    #[schemars(length(min = 1, max = MAX_ITEMS))]
    pub questions: Vec<Prompt>,
}

/// Output of `question`: for each question, in order, the labels (or typed texts) the user
/// chose; an empty list means the question was left unanswered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOutput {
    /// The answers, one list per question.
    pub answers: Vec<Vec<String>>,
}

/// What a [`QuestionService`] is asked to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionRequest {
    /// The host's session id.
    pub session_id: String,
    /// The assistant message that contains the call.
    pub message_id: String,
    /// The call's id.
    pub call_id: String,
    /// The questions, in order.
    pub questions: Vec<Prompt>,
}

/// Why a [`QuestionService`] did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuestionError {
    /// The user dismissed the questions: the model is told so and goes on without answers.
    #[error("User dismissed the question.")]
    Dismissed,
    /// The host could not ask (its terminal or connection broke): a defect of the host.
    #[error("the question could not be asked: {0}")]
    Failed(String),
}

/// The future a [`QuestionService`] returns.
pub type QuestionFuture =
    Pin<Box<dyn Future<Output = Result<Vec<Vec<String>>, QuestionError>> + Send>>;

/// The host's way of asking the user questions.
///
/// The answer must hold exactly one list per question, in order; an empty list marks a
/// question the user left unanswered. A host that cannot ask anyone implements no service at
/// all rather than one that fails, so that the tool is not offered.
pub trait QuestionService: Send + Sync + 'static {
    /// Shows `request` and waits for the user.
    fn ask(&self, request: QuestionRequest) -> QuestionFuture;
}

/// What execution produces: the questions with their answers. The structured output is only
/// the answers ([`QuestionOutput`]); the model text needs the questions too (QU4).
#[derive(Debug, Serialize, JsonSchema)]
struct Answered {
    questions: Vec<Prompt>,
    answers: Vec<Vec<String>>,
}

struct Question {
    permission: Permission,
    service: Arc<dyn QuestionService>,
}

impl fmt::Debug for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Question").finish_non_exhaustive()
    }
}

/// What the schema cannot say: a question of blanks only is no question. (An empty list and an
/// empty question are refused while decoding: the schema says `minItems`/`minLength` 1.)
fn check(input: &QuestionInput) -> Result<(), ToolError> {
    for (index, prompt) in input.questions.iter().enumerate() {
        if prompt.question.trim().is_empty() {
            return Err(ToolError::failure(format!(
                "Invalid tool input: questions[{index}].question: the question is blank\n\n\
                 {REWRITE_HINT}"
            )));
        }
    }
    Ok(())
}

impl Execute for Question {
    type Input = QuestionInput;
    type Output = Answered;

    async fn execute(&self, input: QuestionInput, ctx: &Context) -> Result<Answered, ToolError> {
        check(&input)?;
        // QU2: no `save`, so "always" cannot silently turn questions off. Unlike the other
        // leaves a denial is not prefixed: question has no failure text of its own, and the
        // reference expects exactly `Permission denied: question`.
        self.permission
            .assert(Request::new(ctx, "question", vec!["*".to_owned()]))
            .await?;
        let count = input.questions.len();
        let request = QuestionRequest {
            session_id: ctx.session_id.clone(),
            message_id: ctx.assistant_message_id.clone(),
            call_id: ctx.tool_call_id.clone(),
            questions: input.questions.clone(),
        };
        let answers = match self.service.ask(request).await {
            Ok(answers) => answers,
            Err(dismissed @ QuestionError::Dismissed) => {
                return Err(ToolError::failure(dismissed.to_string()));
            }
            Err(failed @ QuestionError::Failed(_)) => {
                return Err(Defect::with_source("the question service failed", failed).into());
            }
        };
        if answers.len() != count {
            return Err(ToolError::defect(format!(
                "the question service answered {} of {count} questions",
                answers.len()
            )));
        }
        Ok(Answered {
            questions: input.questions,
            answers,
        })
    }
}

/// The model text (QU4) for `questions` answered with `answers`.
pub fn answers_text(questions: &[Prompt], answers: &[Vec<String>]) -> String {
    let pairs: Vec<String> = questions
        .iter()
        .enumerate()
        .map(|(index, prompt)| {
            let answer = answers
                .get(index)
                .filter(|answer| !answer.is_empty())
                .map_or_else(|| "Unanswered".to_owned(), |answer| answer.join(", "));
            format!("\"{}\"=\"{answer}\"", prompt.question)
        })
        .collect();
    format!(
        "User has answered your questions: {}. You can now continue with the user's answers in mind.",
        pairs.join(", ")
    )
}

/// The `question` tool asking through `service`, asserting through `permission`.
pub(crate) fn question_tool(permission: Permission, service: Arc<dyn QuestionService>) -> Tool {
    Tool::typed(
        DESCRIPTION,
        Question {
            permission,
            service,
        },
    )
    .structured(|answered: &Answered| QuestionOutput {
        answers: answered.answers.clone(),
    })
    .model_output(|answered: &Answered| {
        vec![Content::text(answers_text(
            &answered.questions,
            &answered.answers,
        ))]
    })
    .build()
}
