//! `cargo xtask bench --report`: runs every bench, keeps the ratios they print against their
//! peers, and writes `docs/benchmarks.md` with a table and an SVG bar chart
//! (`docs/benchmarks.svg`), so a reader sees where tackle stands.
//!
//! Each bench prints one or more lines with `ratio ... N.NNx` (tackle over its peer, or the
//! peer over tackle where the line says `peer/tackle`) and usually `(target <= T)` or
//! `(target >= T)`; those lines are the data. A bench whose peer is missing prints no ratio
//! and is listed as such. The SVG is written by hand: a few rectangles and labels need no
//! plotting library.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::Bench;

const PAGE: &str = "docs/benchmarks.md";
const CHART: &str = "docs/benchmarks.svg";

/// One ratio a bench printed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ratio {
    pub(crate) label: String,
    pub(crate) value: f64,
    /// `<=` or `>=` and the bound, when the line names a target.
    pub(crate) target: Option<(String, f64)>,
}

impl Ratio {
    fn met(&self) -> Option<bool> {
        self.target
            .as_ref()
            .map(|(sign, bound)| match sign.as_str() {
                ">=" => self.value >= *bound,
                _ => self.value <= *bound,
            })
    }
}

/// Runs every bench and writes the page and the chart.
pub(crate) fn run(root: &Path, benches: &[Bench]) -> Result<(), String> {
    let mut results = Vec::new();
    for bench in benches {
        let output = run_bench(root, bench)?;
        results.push((bench.name, parse(&output)));
    }
    let host = host_summary();
    std::fs::write(root.join(PAGE), page(&results, &host))
        .map_err(|err| format!("{PAGE}: {err}"))?;
    std::fs::write(root.join(CHART), chart(&results)).map_err(|err| format!("{CHART}: {err}"))?;
    eprintln!("xtask: wrote {PAGE} and {CHART}");
    Ok(())
}

/// `cargo bench` for one bench; its standard output, also shown as it comes.
fn run_bench(root: &Path, bench: &Bench) -> Result<String, String> {
    let mut command = crate::bench_command(root, bench)?;
    eprintln!(
        "xtask: cargo bench --package {} --bench {}",
        bench.package, bench.target
    );
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| format!("cannot run cargo: {err}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{stdout}");
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!("bench {} failed ({})", bench.name, output.status))
    }
}

/// The ratios in a bench's output.
pub(crate) fn parse(output: &str) -> Vec<Ratio> {
    output.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Ratio> {
    let at = line.find("ratio ")?;
    let after = &line[at + "ratio ".len()..];
    // The first token that is a number followed by `x`.
    let (qualifier, value) = after
        .split_whitespace()
        .enumerate()
        .find_map(|(i, token)| {
            let number = token.strip_suffix('x')?.parse::<f64>().ok()?;
            Some((i, number))
        })?;
    let qualifier: Vec<&str> = after
        .split_whitespace()
        .take(qualifier)
        .map(|t| t.trim_end_matches(':'))
        .filter(|t| !t.is_empty())
        .collect();
    // What the line measures: the words before `ratio` up to the first time or colon.
    let mut subject = Vec::new();
    let tokens: Vec<&str> = line[..at].split_whitespace().collect();
    for (i, &token) in tokens.iter().enumerate() {
        let unit = tokens.get(i + 1).copied().unwrap_or_default();
        if token.parse::<f64>().is_ok() && ["s", "ms", "µs", "ns"].contains(&unit) {
            break;
        }
        let (word, colon) = match token.strip_suffix(':') {
            Some(word) => (word, true),
            None => (token, false),
        };
        subject.push(word);
        if colon {
            break;
        }
    }
    let mut label = subject.join(" ");
    if !qualifier.is_empty() {
        if !label.is_empty() {
            label.push(' ');
        }
        label.push_str(&qualifier.join(" "));
    }
    Some(Ratio {
        label: if label.is_empty() {
            "ratio".to_owned()
        } else {
            label
        },
        value,
        target: target(after),
    })
}

fn target(text: &str) -> Option<(String, f64)> {
    let at = text.find("target")?;
    let rest = text[at + "target".len()..].trim_start_matches([':', ' ']);
    let rest = rest.strip_prefix("ratio").unwrap_or(rest).trim_start();
    let sign = if rest.starts_with("<=") {
        "<="
    } else if rest.starts_with(">=") {
        ">="
    } else {
        return None;
    };
    let number: String = rest[2..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    Some((sign.to_owned(), number.trim_end_matches('.').parse().ok()?))
}

fn host_summary() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let rustc = Command::new(crate::rustc_program())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{cores} cores, {rustc}")
}

/// The Markdown page.
pub(crate) fn page(results: &[(&str, Vec<Ratio>)], host: &str) -> String {
    let mut text = format!(
        "# Benchmarks\n\n<!-- Written by `cargo xtask bench --report`; rerun it to refresh. -->\n\n\
         Each bench times tackle and a named peer in the same run (see `cargo xtask bench \
         <name>` and the benches in `crates/*/benches`). A ratio is tackle's time (or memory) \
         over the peer's unless its label says `peer/tackle`; the target is the one the issue \
         set. Measured on {host}; shared or loaded machines move the numbers.\n\n\
         ![ratios]({})\n\n| Bench | Measurement | Ratio | Target | Met |\n|---|---|---|---|---|\n",
        CHART.trim_start_matches("docs/")
    );
    for (bench, ratios) in results {
        if ratios.is_empty() {
            let _ = writeln!(text, "| {bench} | (no ratio: the peer is missing) | | | |");
        }
        for ratio in ratios {
            let (target, met) = match (&ratio.target, ratio.met()) {
                (Some((sign, bound)), Some(met)) => (
                    format!("{sign} {bound:.2}x"),
                    if met { "yes" } else { "**no**" },
                ),
                _ => (String::new(), ""),
            };
            let _ = writeln!(
                text,
                "| {bench} | {} | {:.2}x | {target} | {met} |",
                markdown_text(&ratio.label),
                ratio.value
            );
        }
    }
    text
}

/// A horizontal bar per ratio, a line at 1.0x, a tick at each target.
pub(crate) fn chart(results: &[(&str, Vec<Ratio>)]) -> String {
    const ROW: f64 = 22.0;
    const LEFT: f64 = 330.0;
    const WIDTH: f64 = 420.0;
    let rows: Vec<(String, &Ratio)> = results
        .iter()
        .flat_map(|(bench, ratios)| {
            ratios
                .iter()
                .map(move |r| (format!("{bench}: {}", r.label), r))
        })
        .collect();
    let max = rows
        .iter()
        .flat_map(|(_, r)| [r.value, r.target.as_ref().map_or(0.0, |t| t.1)])
        .fold(1.0_f64, f64::max)
        * 1.1;
    let scale = |v: f64| LEFT + v / max * WIDTH;
    let height = 40.0 + ROW * rows.len() as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        LEFT + WIDTH + 70.0
    );
    for (i, (label, ratio)) in rows.iter().enumerate() {
        let y = 10.0 + ROW * i as f64;
        let colour = match ratio.met() {
            Some(false) => "#d9534f",
            _ => "#4a90d9",
        };
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n\
             <rect x=\"{LEFT}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\">{:.2}x</text>",
            LEFT - 6.0,
            y + 13.0,
            escape(label),
            scale(ratio.value) - LEFT,
            ROW - 6.0,
            scale(ratio.value) + 4.0,
            y + 13.0,
            ratio.value
        );
        if let Some((_, bound)) = &ratio.target {
            let x = scale(*bound);
            let _ = writeln!(
                svg,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\" \
                 stroke-width=\"2\"/>",
                y - 2.0,
                y + ROW - 4.0
            );
        }
    }
    let one = scale(1.0);
    let bottom = height - 22.0;
    let _ = writeln!(
        svg,
        "<line x1=\"{one:.1}\" x2=\"{one:.1}\" y1=\"6\" y2=\"{bottom:.1}\" stroke=\"#888\" \
         stroke-dasharray=\"4 3\"/>\n<text x=\"{one:.1}\" y=\"{:.1}\" text-anchor=\"middle\">1.0x \
         (same as the peer); black ticks: targets</text>\n</svg>",
        bottom + 14.0
    );
    svg
}

/// Text that Markdown shows as it is inside a table cell (pattern labels hold `*` and `_`).
fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '|' | '*' | '_' | '`' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_lines_of_every_bench_style_are_read() {
        let output = "\
read offset=1 limit=2000 in a 10 MB file (20 iterations, median)
  tackle      : 1.10 ms
  ratio       : 1.84x (target <= 2x): met
  ratio exact/sed: 0.91x
  echo hi        tool     1.20 ms   sh -c     1.10 ms   ratio 1.09x   (target <= 1.20x) ok
  ratio peer/tackle 1.30x   target: ratio >= 1.0 and tackle < 5000 ns -> met
peer: codex CLI unavailable, no ratio: not found
ratio settle / fastest bare round trip: 1.52x (target <= 2.0x)
write 200 MiB (peak RSS over content): tackle 300 MiB, ratio 1.50x (target <= 2.5x: met)
shipping layer + audit, read: ratio watched/unwatched 1.14x (target <= 1.2x)
";
        let ratios = parse(output);
        type Seen<'a> = (&'a str, f64, Option<(&'a str, f64)>);
        let seen: Vec<Seen<'_>> = ratios
            .iter()
            .map(|r| {
                let target = r.target.as_ref().map(|(s, b)| (s.as_str(), *b));
                (r.label.as_str(), r.value, target)
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("ratio", 1.84, Some(("<=", 2.0))),
                ("exact/sed", 0.91, None),
                ("echo hi tool", 1.09, Some(("<=", 1.2))),
                ("peer/tackle", 1.3, Some((">=", 1.0))),
                ("settle / fastest bare round trip", 1.52, Some(("<=", 2.0))),
                (
                    "write 200 MiB (peak RSS over content)",
                    1.5,
                    Some(("<=", 2.5))
                ),
                (
                    "shipping layer + audit, read watched/unwatched",
                    1.14,
                    Some(("<=", 1.2))
                ),
            ]
        );
    }

    #[test]
    fn the_page_and_chart_show_each_ratio_and_a_missed_target() {
        let ratios = vec![
            Ratio {
                label: "tackle/sed".to_owned(),
                value: 1.5,
                target: Some(("<=".to_owned(), 2.0)),
            },
            Ratio {
                label: "*a*b".to_owned(),
                value: 0.5,
                target: None,
            },
            Ratio {
                label: "a <b>".to_owned(),
                value: 3.0,
                target: Some(("<=".to_owned(), 1.2)),
            },
        ];
        let results = vec![("read", ratios), ("apply_patch", Vec::new())];
        let page = page(&results, "2 cores");
        assert!(
            page.contains("| read | tackle/sed | 1.50x | <= 2.00x | yes |"),
            "{page}"
        );
        assert!(
            page.contains("| read | a <b> | 3.00x | <= 1.20x | **no** |"),
            "{page}"
        );
        assert!(
            page.contains("| apply_patch | (no ratio: the peer is missing) |"),
            "{page}"
        );
        let svg = chart(&results);
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("read: a &lt;b&gt;"), "{svg}");
        assert!(page.contains("| read | \\*a\\*b | 0.50x |  |  |"), "{page}");
        assert_eq!(svg.matches("<rect x=").count(), 3);
        assert!(svg.contains("#d9534f"), "the missed target is red");
    }
}
