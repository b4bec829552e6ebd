//! The terminal's permission asker: a prompt on stderr, an answer from stdin.
//!
//! Offered only when stdin is a terminal ([`TerminalAsker::detect`]); without one (and without
//! `--yes`) every ask is declined, so a headless run never hangs on a prompt.

use std::io::{self, BufRead, IsTerminal, Write};

use tackle_permission::{Asker, PendingRequest, Reply};

/// Asks on the terminal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TerminalAsker;

impl TerminalAsker {
    /// The asker when stdin is a terminal, else `None`.
    pub(crate) fn detect() -> Option<Self> {
        io::stdin().is_terminal().then_some(Self)
    }
}

impl Asker for TerminalAsker {
    fn ask(
        &self,
        pending: PendingRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send>> {
        Box::pin(async move {
            // Terminal reads block; keep them off the async workers. A failed read declines.
            tokio::task::spawn_blocking(move || {
                ask(&pending, &mut io::stdin().lock(), &mut io::stderr().lock())
            })
            .await
            .unwrap_or(Reply::Reject { message: None })
        })
    }
}

/// Shows `pending` on `output` and reads the reply from `input`: `y` (once), `a` (always), `n`
/// (reject), or any other text (reject, with that text as feedback for the model).
pub(crate) fn ask(
    pending: &PendingRequest,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Reply {
    let request = &pending.request;
    let _ = writeln!(
        output,
        "tackle wants permission: {} {}",
        request.action,
        request.resources.join(", ")
    );
    for line in protected_notes(request) {
        let _ = writeln!(output, "  {line}");
    }
    let _ = write!(
        output,
        "allow? [y]es once / [a]lways / [n]o / or type feedback: "
    );
    let _ = output.flush();
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => Reply::Reject { message: None },
        Ok(_) => parse_reply(line.trim()),
    }
}

/// One line per protected resource of `request`: why it is asked whatever the rules say.
fn protected_notes(request: &tackle_permission::Request) -> Vec<String> {
    let Some(serde_json::Value::Array(entries)) = request.metadata.get("protected") else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|entry| {
            format!(
                "protected: {} ({}): rules and saved approvals cannot allow writing it",
                entry["resource"].as_str().unwrap_or_default(),
                entry["reason"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

pub(crate) fn parse_reply(answer: &str) -> Reply {
    match answer.to_ascii_lowercase().as_str() {
        "y" | "yes" | "once" => Reply::Once,
        "a" | "always" => Reply::Always,
        "" | "n" | "no" => Reply::Reject { message: None },
        _ => Reply::Reject {
            message: Some(answer.to_owned()),
        },
    }
}

/// Declines every ask and says so on stderr: without a terminal and without `--yes` nobody can
/// answer, and "the user declined" alone would not say why.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Headless;

impl Asker for Headless {
    fn ask(
        &self,
        pending: PendingRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send>> {
        let request = &pending.request;
        let notes = protected_notes(request);
        // A protected write is asked whatever the rules say, so a rule would not help.
        let remedy = if notes.is_empty() {
            "pass --yes to allow it once, or allow it in your configuration"
        } else {
            "pass --yes to allow it once"
        };
        let mut text = format!(
            "tackle: {} {} needs permission and there is no terminal to ask, so it is declined; \
             {remedy}",
            request.action,
            request.resources.join(", ")
        );
        for note in notes {
            text.push_str("\n  ");
            text.push_str(&note);
        }
        let _ = writeln!(io::stderr(), "{text}");
        Box::pin(async { Reply::Reject { message: None } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_permission::Request;
    use tackle_tool_core::Context;

    #[test]
    fn replies() {
        assert_eq!(parse_reply("y"), Reply::Once);
        assert_eq!(parse_reply("Always"), Reply::Always);
        assert_eq!(parse_reply(""), Reply::Reject { message: None });
        assert_eq!(
            parse_reply("use git status instead"),
            Reply::Reject {
                message: Some("use git status instead".into())
            }
        );
    }

    #[test]
    fn prompts_on_output_and_reads_input() {
        let request = Request::new(&Context::new("s"), "bash", vec!["rm -rf build".into()]);
        let pending = PendingRequest {
            id: "per_1".into(),
            request,
        };
        let mut out = Vec::new();
        let reply = ask(&pending, &mut "a\n".as_bytes(), &mut out);
        assert_eq!(reply, Reply::Always);
        let shown = String::from_utf8(out).unwrap();
        assert!(
            shown.starts_with("tackle wants permission: bash rm -rf build\n"),
            "{shown}"
        );
        assert_eq!(
            ask(&pending, &mut "".as_bytes(), &mut Vec::new()),
            Reply::Reject { message: None }
        );
    }
}
