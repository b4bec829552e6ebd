//! Shell lines built from fuzz bytes, for the bash targets.
//!
//! A line is a tree of shell constructs whose leaves are simple commands. A *denied* leaf runs
//! one of [`DENIED`] through some spelling of its name (quoted, escaped, through a variable or
//! a command substitution, ...), and every construct around it runs that leaf when the line
//! runs in bash (or could, depending on a condition): pipelines, lists, subshells, command
//! substitutions in arguments and here-documents, `sh -c`/`bash -c`/`eval` strings, scripts
//! fed to a shell on standard input, wrappers (`env`, `nice`, `timeout`, `xargs`, ...),
//! placeholders filled at run time (`xargs -I{}`, `find -exec`), functions, traps, loops and
//! conditionals. So a line with a denied leaf must never be allowed by a policy that denies
//! that name.
//!
//! Words come from a small alphabet without `/` (only `. /dev/stdin` has one), so a line names
//! nothing outside its working directory; the only programs it runs are shell builtins and
//! names on `PATH`.

use arbitrary::{Result, Unstructured};

pub use crate::sandbox::DENIED;

/// A generated line and whether it holds a denied leaf.
#[derive(Debug, Clone)]
pub struct Line {
    pub text: String,
    pub denied: bool,
}

/// A line from `u`; with `need_denied`, it holds at least one denied leaf.
pub fn line(u: &mut Unstructured<'_>, need_denied: bool) -> Result<Line> {
    let mut generator = Generator {
        u,
        denied: false,
        exports: Vec::new(),
        fresh: 0,
    };
    let body = generator.command(4, need_denied)?;
    let mut text = String::new();
    for export in &generator.exports {
        text.push_str(export);
        text.push_str("; ");
    }
    text.push_str(&body);
    Ok(Line {
        text,
        denied: generator.denied,
    })
}

struct Generator<'u, 'd> {
    u: &'u mut Unstructured<'d>,
    denied: bool,
    /// `export v=rm` prefixes the line needs (variables are exported so inner shells see them).
    exports: Vec<String>,
    fresh: usize,
}

const HARMLESS: &[&str] = &[
    "echo", "true", ":", "printf", "cat", "test", "sort", "wc", "head", "tr",
];
const WORDS: &[&str] = &[
    "x", "y", "-f", "-rf", "a1", "rm", "curl", "sh", "-c", "echo", "--", "'z z'", "\"q\"", "-n",
    "1", "%s", "-e",
];
const WRAPPERS: &[&str] = &[
    "env",
    "env -",
    "env -i",
    "env X=1",
    "nice",
    "nice -n 1",
    "timeout 5",
    "nohup",
    "command",
    "exec",
    "stdbuf -o0",
    "setsid",
    "xargs",
    "xargs -0",
    "xargs -r",
    "time",
    "FOO=1",
];
const SEPARATORS: &[&str] = &[" ; ", " && ", " || ", " | ", "\n", " & ", " |& "];

impl Generator<'_, '_> {
    fn pick<'a>(&mut self, from: &[&'a str]) -> Result<&'a str> {
        Ok(from[self.u.choose_index(from.len())?])
    }

    fn args(&mut self) -> Result<String> {
        let n = self.u.int_in_range(0..=3)?;
        let mut out = String::new();
        for _ in 0..n {
            out.push(' ');
            out.push_str(self.pick(WORDS)?);
        }
        Ok(out)
    }

    /// A simple command: a harmless one, or (when `need` or by choice) a denied one.
    fn simple(&mut self, need: bool) -> Result<String> {
        if need || self.u.ratio(1, 4)? {
            self.denied = true;
            let name = self.pick(DENIED)?;
            let spelled = self.spell(name)?;
            let args = self.pick(&["", " -f x", " x", " -rf y"])?;
            return Ok(format!("{spelled}{args}"));
        }
        let name = self.pick(HARMLESS)?;
        let args = self.args()?;
        let redirect = self.pick(&["", "", " > out", " 2>&1", " >> out", " < in"])?;
        Ok(format!("{name}{args}{redirect}"))
    }

    /// A spelling of the command name `name` that the shell turns back into `name`.
    fn spell(&mut self, name: &str) -> Result<String> {
        let (first, rest) = name.split_at(1);
        let spelled = match self.u.int_in_range(0..=17)? {
            0 => name.to_owned(),
            1 => format!("\\{name}"),
            2 => format!("'{name}'"),
            3 => format!("\"{name}\""),
            4 => format!("{first}''{rest}"),
            5 => format!("{first}\"\"{rest}"),
            6 => format!("$'{name}'"),
            7 => format!(
                "$'{}'",
                name.bytes()
                    .map(|b| format!("\\{b:03o}"))
                    .collect::<String>()
            ),
            8 => format!("${}", self.variable(name)),
            9 => format!("\"${{{}}}\"", self.variable(name)),
            10 => format!("$(echo {name})"),
            11 => format!("`echo {name}`"),
            12 => format!("$(printf %s {name})"),
            13 => format!("\"$(echo {first})\"{rest}"),
            14 => format!("{first}\\{rest}"),
            15 => {
                self.fresh += 1;
                format!("${{unset{}:-{name}}}", self.fresh)
            }
            16 => format!("command {name}"),
            _ => format!("{first}${{empty{}}}{rest}", self.fresh),
        };
        Ok(spelled)
    }

    /// A here-document delimiter no other here-document of the line uses.
    fn tag(&mut self) -> String {
        self.fresh += 1;
        format!("EOF{}", self.fresh)
    }

    fn variable(&mut self, value: &str) -> String {
        self.fresh += 1;
        let name = format!("v{}", self.fresh);
        self.exports.push(format!("export {name}={value}"));
        name
    }

    /// A command of at most `depth` levels; with `need`, a denied leaf runs in it.
    fn command(&mut self, depth: usize, need: bool) -> Result<String> {
        let kind = if depth == 0 {
            0
        } else {
            self.u.int_in_range(0..=14)?
        };
        let d = depth.saturating_sub(1);
        let text = match kind {
            0 => self.simple(need)?,
            1 => {
                // A list or pipeline: the needed leaf goes to one side.
                let left_needs = need && self.u.arbitrary()?;
                let left = self.command(d, left_needs)?;
                let separator = self.pick(SEPARATORS)?;
                let right = self.command(d, need && !left_needs)?;
                format!("{left}{separator}{right}")
            }
            2 => {
                let inner = self.command(d, need)?;
                match self.u.int_in_range(0..=3)? {
                    0 => format!("( {inner} )"),
                    1 => format!("{{ {inner}; }}"),
                    2 => format!("! {inner}"),
                    _ => format!("time {inner}"),
                }
            }
            3 => {
                // A command substitution in an argument (or as the command itself).
                let inner = self.command(d, need)?;
                match self.u.int_in_range(0..=6)? {
                    0 => format!("echo \"$( {inner} )\""),
                    1 => format!("echo $( {inner} )"),
                    2 if !inner.contains('`') => format!("echo `{inner}`"),
                    3 => format!("x=$( {inner} )"),
                    4 => format!(": \"${{x:-$( {inner} )}}\""),
                    5 => format!("echo $(( $( {inner} ) + 1 ))"),
                    _ => format!("echo <({inner})"),
                }
            }
            4 => {
                // A string another shell runs.
                let inner = self.command(d, need)?;
                let runner = self.pick(&[
                    "sh -c",
                    "bash -c",
                    "eval",
                    "sh +x -c",
                    "bash +O extglob -c",
                    "sh -ec",
                    "env sh -c",
                    "bash --norc -c",
                    "trap",
                ])?;
                let quoted = if self.u.arbitrary()? {
                    single_quoted(&inner)
                } else {
                    double_quoted(&inner)
                };
                if runner == "trap" {
                    format!("trap {quoted} EXIT")
                } else {
                    format!("{runner} {quoted}")
                }
            }
            5 => {
                // A script on a shell's standard input.
                let inner = self.command(d, need)?;
                let tag = self.tag();
                match self.u.int_in_range(0..=4)? {
                    0 => format!("echo {} | sh", single_quoted(&inner)),
                    1 => format!("printf '%s\\n' {} | bash", single_quoted(&inner)),
                    2 => format!("sh <<'{tag}'\n{inner}\n{tag}\ntrue"),
                    3 => format!("bash <<< {}", single_quoted(&inner)),
                    _ => format!(". /dev/stdin <<'{tag}'\n{inner}\n{tag}\ntrue"),
                }
            }
            6 => {
                // A command substitution in a here-document body.
                let inner = self.command(d, need)?;
                let tag = self.tag();
                match self.u.int_in_range(0..=3)? {
                    0 => format!("cat <<{tag}\n$( {inner} )\n{tag}\ntrue"),
                    1 => format!("cat <<-{tag}\n\t$( {inner} )\n\t{tag}\ntrue"),
                    2 if !inner.contains('`') => {
                        format!("cat <<{tag}\n  `{inner}`\n{tag}\ntrue")
                    }
                    _ => format!("cat <<{tag}\nx ${{y:-$( {inner} )}}\n{tag}\ntrue"),
                }
            }
            7 => {
                // A wrapper around a simple command.
                let wrapper = self.pick(WRAPPERS)?;
                let inner = if self.u.arbitrary()? && d > 0 {
                    self.command(0, need)?
                } else {
                    self.simple(need)?
                };
                format!("{wrapper} {inner}")
            }
            8 => {
                // Placeholders filled at run time.
                let inner = self.simple(need)?;
                match self.u.int_in_range(0..=3)? {
                    0 => format!(
                        "printf '%s\\n' {} | xargs -I{{}} sh -c '{{}}'",
                        single_quoted(&inner)
                    ),
                    1 => format!("find . -maxdepth 0 -exec {inner} \\;"),
                    2 => format!(
                        "find . -maxdepth 0 -exec sh -c {} \\;",
                        single_quoted(&inner)
                    ),
                    _ => format!("echo {} | xargs -I{{}} bash -c {{}}", single_quoted(&inner)),
                }
            }
            9 => {
                let inner = self.command(d, need)?;
                match self.u.int_in_range(0..=6)? {
                    0 => format!("if {inner}; then :; fi"),
                    1 => format!("if true; then {inner}; fi"),
                    2 => format!("while false; do {inner}; done"),
                    3 => format!("for i in x; do {inner}; done"),
                    4 => format!("case x in x) {inner};; esac"),
                    5 => format!("f() {{ {inner}; }}; f"),
                    _ => format!("until true; do {inner}; done"),
                }
            }
            10 => {
                // A name that only exists once the line runs.
                let name = self.pick(DENIED)?;
                if need || self.u.arbitrary()? {
                    self.denied = true;
                    match self.u.int_in_range(0..=3)? {
                        0 => format!("for v in {name}; do $v x; done"),
                        1 => {
                            let tag = self.tag();
                            format!("read v <<{tag}\n{name}\n{tag}\n$v x")
                        }
                        2 => format!("v={name}; $v x"),
                        _ => format!("set -- {name} x; \"$@\""),
                    }
                } else {
                    self.simple(false)?
                }
            }
            11 => {
                // A command in a redirect target or an assignment.
                let inner = self.command(d, need)?;
                match self.u.int_in_range(0..=2)? {
                    0 => format!("echo x > \"$( {inner} )\""),
                    1 => format!("y=\"$( {inner} )\" true"),
                    _ => format!("local_x=`echo; {}`", escape_backticks(&inner)),
                }
            }
            12 => {
                let inner = self.command(d, need)?;
                format!("echo $( {inner}\n)")
            }
            _ => self.simple(need)?,
        };
        Ok(text)
    }
}

/// `text` in single quotes, for a shell to read back as `text`.
pub fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `text` in double quotes, for a shell to read back as `text`.
pub fn double_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn escape_backticks(text: &str) -> String {
    text.replace('\\', "\\\\").replace('`', "\\`")
}
