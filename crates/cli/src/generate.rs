//! What the binary generates about itself: shell completions (`tackle completions <shell>`),
//! the man page and the tool reference data (hidden: `cargo xtask man` and `cargo xtask docs`
//! run them), and the version line with the commit it was built from.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use clap::CommandFactory as _;
use tackle_builtins::bash::BashOptions;
use tackle_builtins::question::{QuestionError, QuestionFuture, QuestionRequest, QuestionService};
use tackle_builtins::skill::SkillSources;
use tackle_builtins::web::{WebSearchConfig, WebServices};
use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{Permission, Ruleset, SavedApprovals};

use crate::Cli;
use crate::error::CliError;

/// `tackle --version`: the version and the commit (from build.rs; `unknown commit` outside git).
pub(crate) const VERSION: &str = env!("TACKLE_VERSION");

/// `tackle completions <shell>`: the completion script on standard output.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<ExitCode, CliError> {
    let mut command = Cli::command();
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
/// it runs: the Location is a scratch directory holding one example skill, the shell is
/// `/bin/bash`, and the tools offered only with a service (question, skill, websearch) get one.
pub(crate) fn reference() -> Result<ExitCode, CliError> {
    let scratch = tempfile::tempdir().map_err(CliError::Scratch)?;
    let skill = scratch.path().join(".tackle/skills/example");
    std::fs::create_dir_all(&skill).map_err(CliError::Scratch)?;
    std::fs::write(skill.join("SKILL.md"), EXAMPLE_SKILL).map_err(CliError::Scratch)?;
    let location = Location::new(scratch.path()).map_err(CliError::Builtins)?;
    let permission = Permission::new(
        Ruleset::defaults(),
        SavedApprovals::in_memory(),
        Arc::new(crate::asker::Headless),
    );
    let store = OutputStore::new(StoreConfig::in_data_dir(scratch.path().join("data")));
    let mut bash = BashOptions::default();
    bash.shell = "/bin/bash".into();
    let mut web = WebServices::default();
    web.search = WebSearchConfig::from_env(|key| (key == "EXA_API_KEY").then(|| "x".to_owned()));
    let services = LocationServices::new(location, permission, store, FileMutation::default())
        .with_skills(SkillSources::default())
        .with_bash(bash)
        .with_questions(Arc::new(NoQuestions))
        .with_web(web);
    let mut entries = Vec::new();
    for (name, tool) in tackle_builtins::builtin_tools(&services) {
        let definition = tool.definition(&name).map_err(CliError::Registration)?;
        let mut entry = serde_json::to_value(&*definition).map_err(CliError::Json)?;
        if let Some(object) = entry.as_object_mut() {
            object.insert("permission".to_owned(), tool.permission(&name).into());
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
