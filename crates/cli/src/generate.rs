//! What the binary generates about itself: shell completions (`tackle completions <shell>`),
//! the man page and the tool reference data (hidden: `cargo xtask man` and `cargo xtask docs`
//! run them), and the version line with the commit it was built from.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use clap::CommandFactory as _;
use tackle_builtins::question::{QuestionError, QuestionFuture, QuestionRequest, QuestionService};
use tackle_host::{Environment, Host};

use crate::Cli;
use crate::error::CliError;

/// `tackle --version`: the version and the commit (from build.rs; `unknown commit` outside git).
pub(crate) const VERSION: &str = env!("TACKLE_VERSION");

/// `tackle completions <shell>`: the completion script on standard output.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<ExitCode, CliError> {
    // The shells' generators complete hidden subcommands too: they are left out here, so
    // what tackle runs for itself (the media worker) is never offered to a person.
    let full = Cli::command();
    let mut command = clap::Command::new("tackle")
        .args(full.get_arguments().cloned())
        .subcommands(
            full.get_subcommands()
                .filter(|subcommand| !subcommand.is_hide_set())
                .cloned(),
        );
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "tackle", &mut script);
    write(&script)
}

/// `tackle man`: the man page (roff) on standard output.
pub(crate) fn man() -> Result<ExitCode, CliError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(CliError::Output)?;
    write(&page)
}

/// `tackle reference`: every builtin's definition and permission action, as JSON, for the
/// generated tool reference (docs/tools.md). The output depends on the code alone, not on where
/// it runs: the Location is a scratch directory holding one example skill, the home is empty,
/// the shell is `/bin/bash`, and the tools offered only with a service (question, websearch)
/// get one.
pub(crate) fn reference() -> Result<ExitCode, CliError> {
    let scratch = tempfile::tempdir().map_err(CliError::Scratch)?;
    let skill = scratch.path().join(".tackle/skills/example");
    std::fs::create_dir_all(&skill).map_err(CliError::Scratch)?;
    std::fs::write(skill.join("SKILL.md"), EXAMPLE_SKILL).map_err(CliError::Scratch)?;
    let home = scratch.path().join("home");
    let env = Environment::from_vars([
        ("HOME", home.as_os_str()),
        ("EXA_API_KEY", std::ffi::OsStr::new("x")),
    ]);
    let host = Host::builder(scratch.path())
        .data_dir(scratch.path().join("data"))
        .env(env)
        .set("bash.shell", "/bin/bash".into())
        .questions(Arc::new(NoQuestions))
        .build()?;
    let snapshot = host.materialize();
    let mut entries = Vec::new();
    for definition in snapshot.definitions() {
        let mut entry = serde_json::to_value(&**definition).map_err(CliError::Json)?;
        if let (Some(object), Some(tool)) = (entry.as_object_mut(), snapshot.tool(&definition.name))
        {
            object.insert(
                "permission".to_owned(),
                tool.permission(&definition.name).into(),
            );
        }
        entries.push(entry);
    }
    let mut text = serde_json::to_vec_pretty(&entries).map_err(CliError::Json)?;
    text.push(b'\n');
    write(&text)
}

const EXAMPLE_SKILL: &str = "---\nname: example\ndescription: An example skill, \
                             to show how skills are listed.\n---\nThe skill's instructions.\n";

/// The reference never runs a tool; a question service only makes `question` offered.
struct NoQuestions;

impl QuestionService for NoQuestions {
    fn ask(&self, _request: QuestionRequest) -> QuestionFuture {
        Box::pin(async { Err(QuestionError::Dismissed) })
    }
}

fn write(bytes: &[u8]) -> Result<ExitCode, CliError> {
    std::io::stdout()
        .write_all(bytes)
        .map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}
