//! The bash command splitter and policy: a line that runs a denied command is never allowed.
//!
//! The line is generated (`tackle_fuzz::shell`): it holds at least one leaf that runs `rm` or
//! `curl` (both denied; everything else allowed) through some spelling and some construct
//! around it. The decision is the one the bash tool makes from `command_permission` (its public
//! plan): any resource denied → deny; an unresolved part or an outside directory → ask;
//! otherwise allow when every resource is allowed. Property: the decision is never "allow".
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tackle_builtins::Location;
use tackle_builtins::bash::command_permission;
use tackle_fuzz::harness::scratch_dir;
use tackle_fuzz::shell;
use tackle_permission::{Effect, Rule, Ruleset};

struct Setup {
    location: Location,
    root: PathBuf,
    rules: Ruleset,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let root = scratch_dir("tackle-fuzz-policy-");
        let mut rules = vec![Rule::new("bash", "*", Effect::Allow)];
        for name in shell::DENIED {
            rules.push(Rule::new("bash", format!("{name} *"), Effect::Deny));
        }
        Setup {
            location: Location::new(&root).expect("a Location"),
            root,
            rules: Ruleset::new(rules),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(line) = shell::line(&mut u, true) else {
        return;
    };
    let setup = setup();
    let plan = command_permission(&line.text, &setup.location, &setup.root, None);
    let asks = !plan.unresolved.is_empty() || !plan.external_directories.is_empty();
    let effects: Vec<Effect> = plan
        .resources
        .iter()
        .map(|resource| setup.rules.evaluate("bash", resource))
        .collect();
    let allowed = !asks && !effects.is_empty() && effects.iter().all(|e| *e == Effect::Allow);
    assert!(
        !allowed,
        "a line that runs a denied command is allowed:\n{}\nresources: {:?}",
        line.text, plan.resources
    );
});
