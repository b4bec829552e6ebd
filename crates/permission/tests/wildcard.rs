//! The wildcard matcher, table-driven (expected values inline), plus the adversarial case.

use std::time::{Duration, Instant};

use tackle_permission::{Pattern, matches};

/// (input, pattern, expected)
const TABLE: &[(&str, &str, bool)] = &[
    // anchoring and plain text
    ("", "", true),
    ("a", "", false),
    ("abc", "abc", true),
    ("abcd", "abc", false),
    ("xabc", "abc", false),
    ("ABC", "abc", false),
    // `*`
    ("", "*", true),
    ("anything at all", "*", true),
    ("abc", "a*", true),
    ("abc", "*c", true),
    ("abc", "*b*", true),
    ("abc", "*d*", false),
    ("aXbYc", "a*b*c", true),
    ("acb", "a*b*c", false),
    ("abcabc", "*abc", true),
    ("ab", "a**b", true),
    ("aaa", "a*a*a", true),
    ("aa", "a*a*a", false),
    ("a", "a*a", false),
    ("aba", "*a*a*", true),
    ("ab", "*a*a*", false),
    ("mississippi", "m*issip*i", true),
    ("mississippi", "m*issipp*x", false),
    // `?`
    ("abc", "a?c", true),
    ("ac", "a?c", false),
    ("abbc", "a?c", false),
    ("abc", "???", true),
    ("ab", "???", false),
    ("abcd", "???", false),
    ("", "?", false),
    ("a", "?*", true),
    ("", "?*", false),
    ("file.rs", "*.??", true),
    ("file.r", "*.??", false),
    ("xyz", "*?", true),
    ("abXcdYef", "ab?cd?ef", true),
    ("abXcd", "*?cd?*", false),
    ("abXcde", "*?cd?*", true),
    // the trailing ` *` (P7)
    ("git push", "git push *", true),
    ("git push origin main", "git push *", true),
    ("git push ", "git push *", true),
    ("git pushx", "git push *", false),
    ("git", "git push *", false),
    ("git status", "git status*", true),
    ("git statusx", "git status*", true),
    ("git push", "git push*", true),
    ("ls", "ls *", true),
    ("ls -la", "ls *", true),
    ("lsof", "ls *", false),
    ("", " *", true),
    ("x", " *", false),
    (" x", " *", true),
    ("npm run", "npm *run *", true),
    ("npm x run y", "npm *run *", true),
    ("git push", "git  *", false),
    ("a b", "a\t*", false),
    ("rm -rf", "rm ?*", true),
    ("rm", "rm ?*", false),
    // paths
    ("x.env", "*.env", true),
    (".env", "*.env", true),
    ("src/.env.local", "*.env.*", true),
    ("src/.env", "*.env.*", false),
    ("src/.env.example", "*.env.example", true),
    ("/tmp/tool-output/a.txt", "/tmp/tool-output/*", true),
    ("/tmp/tool-outputx", "/tmp/tool-output/*", false),
    // backslashes are slashes, on both sides
    ("src\\main.rs", "src/*", true),
    ("src/main.rs", "src\\*", true),
    ("C:\\Users\\ann\\x", "C:/Users/*", true),
    ("a\\b", "a?b", true),
    ("a\\\\b", "a//b", true),
    ("a\\b", "a\\\\b", false),
    // `*` and `?` span newlines
    ("echo a\necho b", "echo *", true),
    ("line1\nline2", "*", true),
    ("a\nb", "a?b", true),
    ("sed x\ngit push", "git push*", false),
    ("sed x\ngit push", "*git push*", true),
    ("git push\n", "git push *", false),
    ("git push \n", "git push *", true),
    // regex metacharacters are literal
    ("a.c", "a.c", true),
    ("abc", "a.c", false),
    ("a+b", "a+b", true),
    ("aab", "a+b", false),
    ("(x)", "(x)", true),
    ("[ab]", "[ab]", true),
    ("a", "[ab]", false),
    ("x{1,2}", "x{1,2}", true),
    ("xx", "x{2}", false),
    ("^$", "^$", true),
    ("a|b", "a|b", true),
    ("a", "a|b", false),
    // characters, not bytes
    ("日本語", "日?語", true),
    ("日本語", "??", false),
    ("日本語", "???", true),
    ("héllo wörld", "h?llo *", true),
    ("🦀", "?", true),
    ("🦀🦀", "?", false),
];

#[test]
fn table() {
    assert!(TABLE.len() >= 60, "{} cases", TABLE.len());
    let wrong: Vec<String> = TABLE
        .iter()
        .filter(|(input, pattern, want)| matches(input, pattern) != *want)
        .map(|(input, pattern, want)| format!("match({input:?}, {pattern:?}) should be {want}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A compiled pattern agrees with the free function.
    for (input, pattern, want) in TABLE {
        assert_eq!(
            Pattern::new(pattern).matches(input),
            *want,
            "{input:?} {pattern:?}"
        );
    }
}

#[cfg(not(windows))]
#[test]
fn case_sensitive_off_windows() {
    assert!(!matches("README.md", "readme.md"));
    assert!(!matches(".ENV", "*.env"));
}

#[test]
fn pattern_keeps_its_text() {
    assert_eq!(Pattern::new("git \\*").as_str(), "git \\*");
}

/// Median time of `f` over a few runs, on [`cpu_clock`].
fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let start = cpu_clock();
            f();
            cpu_clock().saturating_sub(start)
        })
        .collect();
    times.sort();
    times[2]
}

/// The CPU time of this thread: unlike wall-clock time, it does not grow while other processes
/// have the CPU, so a ratio of two runs holds on a loaded machine, where a run of a few
/// milliseconds is preempted and one of microseconds is not.
#[cfg(unix)]
fn cpu_clock() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(now.tv_sec).unwrap(),
        u32::try_from(now.tv_nsec).unwrap(),
    )
}

/// Without a thread CPU clock: wall-clock time since the first call.
#[cfg(not(unix))]
fn cpu_clock() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

#[test]
fn adversarial_patterns_stay_linear() {
    let patterns = [
        "*a*a*a*a*b",
        "*a*a*a*a*b*",
        "*a?a?a?a?b*",
        "*aaaaaaaaab*",
        "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*ab",
    ];
    for pattern in patterns {
        let small = "a".repeat(10_000);
        let large = "a".repeat(160_000);
        assert!(!matches(&small, pattern));
        let compiled = Pattern::new(pattern);
        let t_small = median(|| assert!(!compiled.matches(&small)));
        let t_large = median(|| assert!(!compiled.matches(&large)));
        // 16x the input; a quadratic matcher would take 256x. Allow generous noise.
        assert!(
            t_large < t_small * 64 + Duration::from_millis(5),
            "{pattern}: {t_small:?} for 10k, {t_large:?} for 160k"
        );
    }
}

#[test]
fn long_wild_segments_stay_linear() {
    // A 1000-character `?` segment that fails at its last item at every position.
    let pattern = format!("*{}b*", "?".repeat(999));
    let input = "a".repeat(100_000);
    let start = Instant::now();
    assert!(!matches(&input, &pattern));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let hit = format!("{}b{}", "a".repeat(50_000), "a".repeat(10));
    assert!(matches(&hit, &pattern));
}
