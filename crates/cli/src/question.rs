//! The terminal's question service: `question` asks on stderr and reads answers from stdin.
//!
//! Offered only when stdin is a terminal ([`TerminalQuestions::detect`]); without one the host
//! has no question service, so `question` is not in the catalog (instead of hanging). For each
//! question the user types option numbers (several, comma-separated, when `multiple` is set),
//! their own answer, or nothing to leave it unanswered; end of input (Ctrl-D) dismisses them,
//! and the call's error result tells the model so.

use std::io::{self, BufRead, IsTerminal, Write};

use tackle_builtins::question::{
    Prompt, QuestionError, QuestionFuture, QuestionRequest, QuestionService,
};

/// Asks on the terminal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TerminalQuestions;

impl TerminalQuestions {
    /// The service when stdin is a terminal, else `None` (a headless run).
    pub(crate) fn detect() -> Option<Self> {
        io::stdin().is_terminal().then_some(Self)
    }
}

impl QuestionService for TerminalQuestions {
    fn ask(&self, request: QuestionRequest) -> QuestionFuture {
        Box::pin(async move {
            // Terminal reads block; keep them off the async workers.
            let asked = tokio::task::spawn_blocking(move || {
                ask_all(&request, &mut io::stdin().lock(), &mut io::stderr().lock())
            })
            .await;
            asked.map_err(|err| QuestionError::Failed(err.to_string()))?
        })
    }
}

/// Asks every question of `request` on `output`, reading answers from `input`.
pub(crate) fn ask_all(
    request: &QuestionRequest,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> Result<Vec<Vec<String>>, QuestionError> {
    let failed = |err: io::Error| QuestionError::Failed(err.to_string());
    let mut answers = Vec::with_capacity(request.questions.len());
    for prompt in &request.questions {
        show(prompt, output).map_err(failed)?;
        answers.push(read_answer(prompt, input, output)?);
    }
    Ok(answers)
}

fn show(prompt: &Prompt, output: &mut impl Write) -> io::Result<()> {
    writeln!(output)?;
    writeln!(output, "[{}] {}", prompt.header, prompt.question)?;
    for (index, option) in prompt.options.iter().enumerate() {
        if option.description.is_empty() {
            writeln!(output, "  {}. {}", index + 1, option.label)?;
        } else {
            writeln!(
                output,
                "  {}. {} - {}",
                index + 1,
                option.label,
                option.description
            )?;
        }
    }
    let how = match (prompt.options.is_empty(), prompt.multiple) {
        (true, _) => "Type your answer",
        (false, false) => "Pick a number or type your own answer",
        (false, true) => "Pick numbers (e.g. 1,3) or type your own answer",
    };
    writeln!(output, "{how}; leave empty to skip, Ctrl-D to dismiss.")
}

/// Reads lines until one is a valid answer to `prompt`.
fn read_answer(
    prompt: &Prompt,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> Result<Vec<String>, QuestionError> {
    let failed = |err: io::Error| QuestionError::Failed(err.to_string());
    loop {
        write!(output, "> ").map_err(failed)?;
        output.flush().map_err(failed)?;
        let mut line = String::new();
        if input.read_line(&mut line).map_err(failed)? == 0 {
            writeln!(output).map_err(failed)?;
            return Err(QuestionError::Dismissed);
        }
        match parse_answer(prompt, line.trim()) {
            Ok(answer) => return Ok(answer),
            Err(problem) => writeln!(output, "{problem}").map_err(failed)?,
        }
    }
}

/// One typed line as an answer: option numbers, or the user's own text.
pub(crate) fn parse_answer(prompt: &Prompt, line: &str) -> Result<Vec<String>, String> {
    if line.is_empty() {
        return Ok(Vec::new());
    }
    let tokens: Vec<&str> = line
        .split([',', ' '])
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .collect();
    let numbers: Option<Vec<usize>> = tokens.iter().map(|token| token.parse().ok()).collect();
    let Some(numbers) = numbers else {
        // Not a list of numbers: the user's own answer.
        return Ok(vec![line.to_owned()]);
    };
    let count = prompt.options.len();
    if count == 0 {
        return Ok(vec![line.to_owned()]);
    }
    if let Some(bad) = numbers.iter().find(|n| !(1..=count).contains(*n)) {
        return Err(format!("There is no option {bad}; pick 1 to {count}."));
    }
    if numbers.len() > 1 && !prompt.multiple {
        return Err("Pick one option.".to_owned());
    }
    let mut labels: Vec<String> = Vec::with_capacity(numbers.len());
    for number in numbers {
        let label = &prompt.options[number - 1].label;
        if !labels.contains(label) {
            labels.push(label.clone());
        }
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_builtins::question::QuestionOption;

    fn prompt(multiple: bool) -> Prompt {
        Prompt {
            question: "Which environment?".into(),
            header: "Env".into(),
            options: vec![
                QuestionOption {
                    label: "Dev (Recommended)".into(),
                    description: "Local".into(),
                },
                QuestionOption {
                    label: "Prod".into(),
                    description: String::new(),
                },
            ],
            multiple,
        }
    }

    fn request(prompts: Vec<Prompt>) -> QuestionRequest {
        QuestionRequest {
            session_id: "s".into(),
            message_id: "m".into(),
            call_id: "c".into(),
            questions: prompts,
        }
    }

    #[test]
    fn numbers_pick_labels_and_text_is_a_custom_answer() {
        let single = prompt(false);
        assert_eq!(parse_answer(&single, "2").unwrap(), ["Prod"]);
        assert_eq!(parse_answer(&single, "").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse_answer(&single, "staging please").unwrap(),
            ["staging please"]
        );
        assert_eq!(
            parse_answer(&single, "3").unwrap_err(),
            "There is no option 3; pick 1 to 2."
        );
        assert_eq!(
            parse_answer(&single, "1,2").unwrap_err(),
            "Pick one option."
        );
        let multiple = prompt(true);
        assert_eq!(
            parse_answer(&multiple, "2, 1 2").unwrap(),
            ["Prod", "Dev (Recommended)"]
        );
    }

    #[test]
    fn a_session_on_the_terminal() {
        let mut input = io::Cursor::new("5\n1\n\n");
        let mut output = Vec::new();
        let answers = ask_all(
            &request(vec![prompt(false), prompt(true)]),
            &mut input,
            &mut output,
        )
        .unwrap();
        assert_eq!(answers, [vec!["Dev (Recommended)".to_owned()], vec![]]);
        let shown = String::from_utf8(output).unwrap();
        assert_eq!(
            shown,
            "\n[Env] Which environment?\n  1. Dev (Recommended) - Local\n  2. Prod\n\
             Pick a number or type your own answer; leave empty to skip, Ctrl-D to dismiss.\n\
             > There is no option 5; pick 1 to 2.\n> \n[Env] Which environment?\n\
             \x20 1. Dev (Recommended) - Local\n  2. Prod\n\
             Pick numbers (e.g. 1,3) or type your own answer; leave empty to skip, Ctrl-D to dismiss.\n> "
        );
    }

    #[test]
    fn end_of_input_dismisses() {
        let mut input = io::Cursor::new("1\n");
        let mut output = Vec::new();
        let result = ask_all(
            &request(vec![prompt(false), prompt(false)]),
            &mut input,
            &mut output,
        );
        assert_eq!(result, Err(QuestionError::Dismissed));
    }
}
