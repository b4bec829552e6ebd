//! `cargo xtask bench permission`: the cost of deciding a permission.
//!
//! 1. 10,000 (action, resource) pairs evaluated against a 200-rule ruleset with
//!    `Ruleset::evaluate`, against the peer: the reference's regex translation of every
//!    pattern (P6–P8), compiled once, scanned last-to-first the same way. Target: faster than
//!    the peer, and under 5 µs per evaluation (negligible next to any tool call).
//! 2. The adversarial pattern `*a*a*a*a*b` against 10,000 and 100,000 `a`s (and two more
//!    adversarial shapes), against the same regex translation. Target: linear: 10x the input
//!    costs about 10x the time (at most 20x).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a bench may panic on broken setup

use std::hint::black_box;
use std::time::{Duration, Instant};

use regex::Regex;
use tackle_permission::{Effect, Pattern, Rule, Ruleset};

const RUNS: usize = 9;

#[path = "../tests/regex_reference.rs"]
mod regex_reference;

use regex_reference::translate;

/// The peer: every rule as two regexes compiled once, last match wins.
struct RegexRuleset {
    rules: Vec<(Regex, Regex, Effect)>,
}

impl RegexRuleset {
    fn new(rules: &[Rule]) -> Self {
        Self {
            rules: rules
                .iter()
                .map(|r| (translate(&r.action), translate(&r.resource), r.effect))
                .collect(),
        }
    }

    fn evaluate(&self, action: &str, resource: &str) -> Effect {
        let resource = resource.replace('\\', "/");
        self.rules
            .iter()
            .rev()
            .find(|(a, r, _)| a.is_match(action) && r.is_match(&resource))
            .map_or(Effect::Ask, |(_, _, effect)| *effect)
    }
}

/// 200 rules of the kinds users write: shell command prefixes, path globs, per-action
/// defaults, MCP tool families.
fn ruleset() -> Vec<Rule> {
    use Effect::{Allow, Ask, Deny};
    let mut rules = vec![
        Rule::new("*", "*", Ask),
        Rule::new("read", "*", Allow),
        Rule::new("read", "*.env", Ask),
        Rule::new("read", "*.env.*", Ask),
        Rule::new("bash", "*", Ask),
    ];
    let effects = [Allow, Deny, Ask];
    for i in 0..90 {
        rules.push(Rule::new(
            "bash",
            format!("tool{i} sub{} *", i % 7),
            effects[i % 3],
        ));
    }
    for i in 0..10 {
        rules.push(Rule::new("bash", format!("*--danger{i}*"), Deny));
    }
    for i in 0..50 {
        rules.push(Rule::new(
            if i % 2 == 0 { "edit" } else { "read" },
            format!("/work/project/module{i}/*"),
            effects[i % 3],
        ));
    }
    for i in 0..20 {
        rules.push(Rule::new("read", format!("*/secret{i}/??.key"), Deny));
    }
    for i in 0..25 {
        rules.push(Rule::new(format!("mcp_server{i}_*"), "*", effects[i % 3]));
    }
    assert_eq!(rules.len(), 200);
    rules
}

fn resources() -> Vec<(String, String)> {
    (0..10_000)
        .map(|i| match i % 5 {
            0 => (
                "bash".to_owned(),
                format!("tool{} sub{} --flag value{i}", i % 120, i % 7),
            ),
            1 => (
                "bash".to_owned(),
                format!("git status --short && tool{} --danger{}", i % 90, i % 13),
            ),
            2 => (
                "read".to_owned(),
                format!("/work/project/module{}/src/file{i}.rs", i % 70),
            ),
            3 => (
                "read".to_owned(),
                format!("/work/project/secret{}/{:02}.key", i % 30, i % 100),
            ),
            _ => (format!("mcp_server{}_query", i % 40), format!("q{i}")),
        })
        .collect()
}

/// Median wall time of `f` over `RUNS` runs (after one warm-up).
fn median(mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn per(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e9 / n as f64
}

fn main() {
    let rules = ruleset();
    let tackle = Ruleset::new(rules.clone());
    let peer = RegexRuleset::new(&rules);
    let pairs = resources();

    // Both must decide the same; a fast wrong answer is no answer.
    let mut counts = [0usize; 3];
    for (action, resource) in &pairs {
        let effect = tackle.evaluate(action, resource);
        assert_eq!(
            effect,
            peer.evaluate(action, resource),
            "{action} {resource}"
        );
        counts[effect as usize] += 1;
    }

    let t_tackle = median(|| {
        for (action, resource) in &pairs {
            black_box(tackle.evaluate(black_box(action), black_box(resource)));
        }
    });
    let t_peer = median(|| {
        for (action, resource) in &pairs {
            black_box(peer.evaluate(black_box(action), black_box(resource)));
        }
    });
    let (ns_tackle, ns_peer) = (per(t_tackle, pairs.len()), per(t_peer, pairs.len()));
    println!(
        "evaluate: {} pairs x 200 rules (allow {}, deny {}, ask {})",
        pairs.len(),
        counts[0],
        counts[1],
        counts[2]
    );
    println!("  tackle Ruleset::evaluate   {ns_tackle:>9.1} ns/evaluation");
    println!("  peer   regex, compiled once {ns_peer:>8.1} ns/evaluation");
    println!(
        "  ratio peer/tackle {:.2}x   target: ratio >= 1.0 and tackle < 5000 ns -> {}",
        ns_peer / ns_tackle,
        if ns_tackle < 5000.0 && ns_peer >= ns_tackle {
            "met"
        } else {
            "NOT met"
        }
    );

    println!("adversarial (no match; time per match call):");
    for pattern in ["*a*a*a*a*b", "*a?a?a?a?b*", "a*a*a*a*a*a*a*a*a*a*ab*"] {
        let compiled = Pattern::new(pattern);
        let regex = translate(pattern);
        let mut times = Vec::new();
        for n in [10_000usize, 100_000] {
            let input = "a".repeat(n);
            assert!(!compiled.matches(&input));
            assert!(!regex.is_match(&input));
            let t = median(|| {
                black_box(compiled.matches(black_box(&input)));
            });
            let r = median(|| {
                black_box(regex.is_match(black_box(&input)));
            });
            println!(
                "  {pattern:<26} {n:>7} a's: tackle {:>10.1} µs   peer regex {:>10.1} µs   ratio peer/tackle {:.2}x",
                t.as_secs_f64() * 1e6,
                r.as_secs_f64() * 1e6,
                r.as_secs_f64() / t.as_secs_f64().max(1e-9)
            );
            times.push(t);
        }
        let growth = times[1].as_secs_f64() / times[0].as_secs_f64().max(1e-9);
        println!(
            "  {pattern:<26} 10x input -> {growth:.1}x time   target: <= 20x (linear) -> {}",
            if growth <= 20.0 { "met" } else { "NOT met" }
        );
    }
}
