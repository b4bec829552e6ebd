//! The command line and the reading of libFuzzer's output.

use super::*;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn parses_the_command_line() {
    assert_eq!(
        parse_args(&args(&["--seconds", "5", "html", "config"])).unwrap(),
        Request {
            seconds: 5,
            build_only: false,
            keep_going: false,
            targets: args(&["html", "config"]),
        }
    );
    assert!(parse_args(&args(&["--build-only"])).unwrap().build_only);
    assert!(parse_args(&args(&["--keep-going"])).unwrap().keep_going);
    assert!(parse_args(&args(&["--seconds", "0"])).is_err());
    assert!(parse_args(&args(&["--jobs"])).is_err());
}

#[test]
fn reads_a_clean_run() {
    let log = "INFO: Seed: 1\n#2\tINITED cov: 10 ft: 11 corp: 3/60b exec/s: 0\n\
               #900\tDONE   cov: 99 ft: 120 corp: 41/2Kb lim: 4096 exec/s: 15\n\
               Done 900 runs in 61 second(s)\nstat::number_of_executed_units: 900\n";
    let outcome = summarize("html", log);
    assert_eq!(outcome.executions, Some(900));
    assert_eq!(outcome.corpus, Some(41));
    assert_eq!(outcome.failure, None);
}

#[test]
fn reads_a_crash_and_its_reproducer() {
    let log = "#5\tNEW cov: 10 ft: 11 corp: 4/60b\nthread '<unnamed>' panicked at x.rs:1:1:\n\
               boom\n==123== ERROR: libFuzzer: deadly signal\n\
               artifact_prefix='fuzz/artifacts/html/'; Test unit written to fuzz/artifacts/html/crash-abc\n\
               stat::number_of_executed_units: 7\n";
    let outcome = summarize("html", log);
    assert_eq!(outcome.executions, Some(7));
    assert_eq!(
        outcome.failure.as_deref(),
        Some("crash; reproducer: fuzz/artifacts/html/crash-abc")
    );
    assert_eq!(panic_lines(log)[1], "boom");
}

#[test]
fn reads_a_fork_mode_run() {
    let log = "#1200: cov: 99 ft: 120 corp: 41 exec/s 20 oom/timeout/crash: 0/0/2 time: 60s\n\
               INFO: exiting: 0 time: 61s\n";
    let outcome = summarize("bash_exec", log);
    assert_eq!(outcome.executions, Some(1200));
    assert_eq!(outcome.corpus, Some(41));
}

#[test]
fn every_target_has_seeds() {
    let root = crate::workspace_root();
    for target in targets(&root.join("fuzz")).unwrap() {
        let seeds = root.join("fuzz/corpus").join(&target);
        let count = std::fs::read_dir(&seeds).map_or(0, |d| d.count());
        assert!(count > 0, "no seeds in {}", seeds.display());
    }
}
