//! The one catalog of builtins: every builtin, built the same way from a Location's services.
//!
//! A builtin's entry is `fn(&LocationServices) -> Option<Tool>`: the file leaves take the
//! services whole; the others are given the parts they need here, so their modules stay below
//! the services (which hold their configuration types) and nothing imports in a circle.

use std::sync::Arc;

use tackle_tool_core::{Tool, ToolClass};

use crate::services::LocationServices;
use crate::skill::SkillCatalog;
use crate::{edit, question, read, skill, todo, write};

/// How a builtin is built from a Location's services; `None` when it cannot work with them
/// (no question service, no skill, no search provider), so it is not offered.
type Build = fn(&LocationServices) -> Option<Tool>;

/// Every builtin, in catalog order; each family is there only with its cargo feature.
const CATALOG: &[(&str, Build)] = &[
    #[cfg(feature = "bash")]
    ("bash", bash),
    ("read", read::tool),
    ("edit", edit::tool),
    ("write", write::tool),
    #[cfg(feature = "apply-patch")]
    ("apply_patch", crate::apply_patch::tool),
    #[cfg(feature = "search")]
    ("glob", glob),
    #[cfg(feature = "search")]
    ("grep", grep),
    ("question", question),
    ("skill", skill),
    ("todowrite", todowrite),
    #[cfg(feature = "web")]
    ("webfetch", webfetch),
    #[cfg(feature = "web")]
    ("websearch", websearch),
    #[cfg(feature = "bash")]
    ("job_output", job_output),
    #[cfg(feature = "bash")]
    ("job_kill", job_kill),
    #[cfg(feature = "bash")]
    ("job_list", job_list),
];

/// Every builtin that can work with `services`, by name, in catalog order.
pub fn builtin_tools(services: &LocationServices) -> Vec<(String, Tool)> {
    CATALOG
        .iter()
        .filter_map(|(name, build)| Some(((*name).to_owned(), declared(name, build(services)?))))
        .collect()
}

/// The name of every builtin this build has (whether or not a Location's services can build
/// it), in catalog order: names an extension must not take.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    CATALOG.iter().map(|(name, _)| *name)
}

/// `tool` declaring what the builtin `name` may change: the search and read tools and skill
/// only read the Location, the web tools only read the web; the rest change files, run
/// commands, write the todo list or wait for the user, so they run one at a time.
fn declared(name: &str, tool: Tool) -> Tool {
    let class = match name {
        "read" | "glob" | "grep" | "skill" | "job_output" | "job_list" => ToolClass::ReadOnly,
        "webfetch" | "websearch" => ToolClass::OpenWorld,
        _ => return tool,
    };
    tool.with_class(class)
}

/// The builtin `name` alone, when it exists and can work with `services`: a host settling one
/// call builds only the tool it calls.
pub fn builtin_tool(services: &LocationServices, name: &str) -> Option<Tool> {
    let (_, build) = CATALOG.iter().find(|(candidate, _)| *candidate == name)?;
    Some(declared(name, build(services)?))
}

#[cfg(feature = "bash")]
fn bash(services: &LocationServices) -> Option<Tool> {
    let (location, permission) = (services.location.clone(), services.permission.clone());
    Some(crate::bash::bash_tool(
        location,
        permission,
        services.bash.clone(),
        services.jobs.clone(),
    ))
}

/// The job tools are offered only where background jobs can start.
#[cfg(feature = "bash")]
fn job_output(services: &LocationServices) -> Option<Tool> {
    (!services.jobs.refuses()).then(|| crate::bash::job_output_tool(services.jobs.clone()))
}

#[cfg(feature = "bash")]
fn job_kill(services: &LocationServices) -> Option<Tool> {
    (!services.jobs.refuses()).then(|| crate::bash::job_kill_tool(services.jobs.clone()))
}

#[cfg(feature = "bash")]
fn job_list(services: &LocationServices) -> Option<Tool> {
    (!services.jobs.refuses()).then(|| crate::bash::job_list_tool(services.jobs.clone()))
}

/// What the search tools of the Location work with.
#[cfg(feature = "search")]
fn search_services(services: &LocationServices) -> crate::search::Services {
    crate::search::Services {
        location: services.location.clone(),
        permission: services.permission.clone(),
        settings: services.search,
    }
}

#[cfg(feature = "search")]
fn glob(services: &LocationServices) -> Option<Tool> {
    Some(crate::search::glob_tool(search_services(services)))
}

#[cfg(feature = "search")]
fn grep(services: &LocationServices) -> Option<Tool> {
    Some(crate::search::grep_tool(search_services(services)))
}

/// Offered only when the host can ask.
fn question(services: &LocationServices) -> Option<Tool> {
    let asker = Arc::clone(services.questions.as_ref()?);
    Some(question::question_tool(services.permission.clone(), asker))
}

/// Offered only when a skill is discovered for the Location; hosts that want to report
/// unusable skill files call [`SkillCatalog::discover`] with the same arguments.
fn skill(services: &LocationServices) -> Option<Tool> {
    let catalog = SkillCatalog::discover(services.location.root(), &services.skills);
    skill::skill_tool(services.permission.clone(), catalog)
}

fn todowrite(services: &LocationServices) -> Option<Tool> {
    let (permission, store) = (services.permission.clone(), services.todos.clone());
    Some(todo::todowrite_tool(permission, store))
}

#[cfg(feature = "web")]
fn webfetch(services: &LocationServices) -> Option<Tool> {
    let (permission, access) = (services.permission.clone(), services.web.access.clone());
    Some(crate::web::webfetch_tool(
        permission,
        access,
        services.web.fetch,
    ))
}

/// Offered only when a search provider is configured.
#[cfg(feature = "web")]
fn websearch(services: &LocationServices) -> Option<Tool> {
    let (permission, config) = (services.permission.clone(), services.web.search.clone());
    crate::web::websearch_tool(permission, config)
}
