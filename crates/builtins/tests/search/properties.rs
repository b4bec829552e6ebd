//! Invariants over random trees: grep counts what a naive scan counts, shows at most `limit`
//! lines, files newest first; glob lists exactly the matching names.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::json;

use super::fixture::Fixture;

/// A file: (directory index, name index, lines (true = contains the needle), age in seconds).
type Spec = (usize, usize, Vec<bool>, u64);

fn tree() -> impl Strategy<Value = Vec<Spec>> {
    prop::collection::vec(
        (
            0..3usize,
            0..6usize,
            prop::collection::vec(any::<bool>(), 0..6),
            1..1000u64,
        ),
        0..12,
    )
}

/// Writes the tree; later specs with the same path win. Returns path -> (needles, age).
fn build(f: &Fixture, specs: &[Spec]) -> BTreeMap<String, (usize, u64)> {
    let mut files = BTreeMap::new();
    for (dir, name, lines, age) in specs {
        let ext = if name % 2 == 0 { "rs" } else { "txt" };
        let path = format!("d{dir}/f{name}.{ext}");
        let text: String = lines
            .iter()
            .map(|hit| if *hit { "a needle here\n" } else { "hay\n" })
            .collect();
        f.write_aged(&path, &text, *age);
        files.insert(path, (lines.iter().filter(|h| **h).count(), *age));
    }
    files
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn grep_counts_and_orders(specs in tree(), limit in 1usize..8) {
        let f = Fixture::new();
        let files = build(&f, &specs);
        let out = runtime()
            .block_on(f.call("grep", json!({"pattern": "needle", "limit": limit})))
            .unwrap();
        let s = &out.structured;
        let total: usize = files.values().map(|(n, _)| n).sum();
        let with_matches = files.values().filter(|(n, _)| *n > 0).count();
        prop_assert_eq!(s["totalMatches"].as_u64().unwrap() as usize, total);
        prop_assert_eq!(s["totalFiles"].as_u64().unwrap() as usize, with_matches);
        let shown = s["matches"].as_array().unwrap();
        prop_assert_eq!(shown.len(), total.min(limit));
        prop_assert_eq!(s["truncated"].as_bool().unwrap(), total > limit);
        // Files appear in one contiguous group each, ages non-decreasing (newest first).
        let mut seen: Vec<&str> = Vec::new();
        for m in shown {
            let path = m["path"].as_str().unwrap();
            if seen.last() != Some(&path) {
                prop_assert!(!seen.contains(&path), "{} split", path);
                seen.push(path);
            }
        }
        let ages: Vec<u64> = seen.iter().map(|p| files[*p].1).collect();
        prop_assert!(ages.windows(2).all(|w| w[0] <= w[1]), "{:?}", ages);
    }

    #[test]
    fn glob_lists_exactly_the_matches(specs in tree()) {
        let f = Fixture::new();
        let files = build(&f, &specs);
        let out = runtime()
            .block_on(f.call("glob", json!({"pattern": "*.rs", "limit": 1000})))
            .unwrap();
        let mut listed: Vec<String> = out.structured["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        listed.sort();
        let expected: Vec<String> = files.keys().filter(|p| p.ends_with(".rs")).cloned().collect();
        prop_assert_eq!(listed, expected);
    }
}
