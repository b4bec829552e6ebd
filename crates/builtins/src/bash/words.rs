//! Shell words as the shell will see them, when that can be known without running anything.
//!
//! A word is *static* when it has no parameter expansion, command substitution or arithmetic:
//! its quotes and escapes are then removed exactly as the shell removes them. Unquoted glob
//! and brace characters and a leading unquoted `~` are remembered, because the shell expands
//! them at run time.

use tree_sitter::Node;

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The value after quote removal when static, else the source text.
    pub(crate) text: String,
    /// No expansion or substitution: `text` is exactly what the program receives (up to
    /// globbing, brace and tilde expansion, flagged below).
    pub(crate) is_static: bool,
    /// Unquoted `*`, `?` or `[`: the shell may replace the word with file names.
    pub(crate) glob: bool,
    /// Unquoted `{`…`}` with `,` or `..`: the shell may turn the word into several.
    pub(crate) brace: bool,
    /// Starts with an unquoted `~`: the shell replaces it with a home directory.
    pub(crate) tilde: bool,
}

impl Word {
    /// A static word with no special characters (for words made up by the analysis).
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_static: true,
            glob: false,
            brace: false,
            tilde: false,
        }
    }

    /// True when the word is static and the shell will not expand it into something else.
    pub(crate) fn is_literal(&self) -> bool {
        self.is_static && !self.glob && !self.brace
    }
}

/// The word a node stands for.
pub(crate) fn word(node: Node<'_>, src: &str) -> Word {
    let mut builder = Builder::default();
    builder.add(node, src, true);
    let raw = &src[node.byte_range()];
    let text = if builder.is_static {
        builder.text
    } else {
        raw.to_owned()
    };
    Word {
        text,
        is_static: builder.is_static,
        glob: builder.glob,
        brace: builder.brace_open && (builder.brace_comma || builder.brace_range),
        tilde: builder.tilde,
    }
}

#[derive(Debug)]
struct Builder {
    text: String,
    is_static: bool,
    glob: bool,
    brace_open: bool,
    brace_comma: bool,
    brace_range: bool,
    tilde: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            text: String::new(),
            is_static: true,
            glob: false,
            brace_open: false,
            brace_comma: false,
            brace_range: false,
            tilde: false,
        }
    }
}

impl Builder {
    fn add(&mut self, node: Node<'_>, src: &str, first: bool) {
        let raw = &src[node.byte_range()];
        match node.kind() {
            "word" | "number" => {
                if first && raw.starts_with('~') {
                    self.tilde = true;
                }
                self.unquoted(raw);
            }
            "raw_string" => self.text.push_str(strip(raw, "'", "'")),
            "ansi_c_string" => match ansi_c(strip(raw, "$'", "'")) {
                Some(text) => self.text.push_str(&text),
                None => self.is_static = false,
            },
            "string" | "translated_string" => self.string(node, src),
            "concatenation" => {
                let mut cursor = node.walk();
                for (index, child) in node.children(&mut cursor).enumerate() {
                    self.add(child, src, first && index == 0);
                }
            }
            "brace_expression" => {
                self.brace_open = true;
                self.brace_range = true;
                self.text.push_str(raw);
            }
            // Anything else expands at run time (`$x`, `${x}`, `$(...)`, `$((...))`, `<(...)`),
            // or is a bare `$` token, which the shell keeps literally.
            "$" => self.text.push('$'),
            _ => self.is_static = false,
        }
    }

    /// A double-quoted string: static when it holds only text.
    fn string(&mut self, node: Node<'_>, src: &str) {
        // The grammar leaves a newline inside the quotes out of every child: keep the text
        // between children (after the opening quote, before the closing one) as it is.
        let raw = &src[node.byte_range()];
        let mut at = node.start_byte() + raw.find('"').map_or(0, |quote| quote + 1);
        let end = node.end_byte() - usize::from(raw.len() > 1 && raw.ends_with('"'));
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if let Some(gap) = src.get(at..child.start_byte()) {
                self.text.push_str(gap);
            }
            at = child.end_byte();
            match child.kind() {
                "string_content" => unescape_double(&src[child.byte_range()], &mut self.text),
                "string" => self.string(child, src),
                _ => self.is_static = false,
            }
        }
        if let Some(gap) = src.get(at..end) {
            self.text.push_str(gap);
        }
    }

    /// An unquoted piece: backslash escapes the next character, `\`-newline disappears.
    fn unquoted(&mut self, raw: &str) {
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') | None => {}
                    Some(next) => self.text.push(next),
                },
                '*' | '?' | '[' => {
                    self.glob = true;
                    self.text.push(c);
                }
                '{' => {
                    self.brace_open = true;
                    self.text.push(c);
                }
                ',' => {
                    self.brace_comma = true;
                    self.text.push(c);
                }
                '.' if self.text.ends_with('.') => {
                    self.brace_range = true;
                    self.text.push(c);
                }
                _ => self.text.push(c),
            }
        }
    }
}

fn strip<'a>(raw: &'a str, open: &str, close: &str) -> &'a str {
    raw.strip_prefix(open)
        .and_then(|rest| rest.strip_suffix(close))
        .unwrap_or(raw)
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
fn unescape_double(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&next @ ('$' | '`' | '"' | '\\')) => {
                    out.push(next);
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
}

/// The value of a `$'...'` body; `None` for escapes we do not decode.
fn ansi_c(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next()?;
        let simple = match escaped {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(escaped),
            _ => None,
        };
        if let Some(simple) = simple {
            out.push(simple);
            continue;
        }
        let (radix, max) = match escaped {
            '0'..='7' => (8, 3),
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            _ => return None,
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(escaped);
        }
        while digits.len() < max {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        let value = u32::from_str_radix(&digits, radix).ok()?;
        out.push(char::from_u32(value)?);
    }
    Some(out)
}

/// What one static option word (not `--`) means to a program's option parser.
pub(super) enum OptionWord {
    /// The options have ended: this word is the first operand.
    Operand,
    /// An option spanning this many words (itself and its values).
    Spans(usize),
    /// An option whose effect cannot be followed statically.
    Unknown,
}

/// The index of the first operand after the options at the start of `args`, each word read by
/// `classify`; `None` when an option is unknown or not static. `--` ends the options and is
/// skipped.
pub(super) fn options_end(args: &[Word], classify: impl Fn(&str) -> OptionWord) -> Option<usize> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if !arg.is_static {
            return None;
        }
        let text = arg.text.as_str();
        if text == "--" {
            return Some(at + 1);
        }
        match classify(text) {
            OptionWord::Operand => return Some(at),
            OptionWord::Spans(words) => at += words,
            OptionWord::Unknown => return None,
        }
    }
    Some(args.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of the first command in `src`.
    fn words(src: &str) -> Vec<Word> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(src, None).unwrap();
        let command = tree.root_node().named_child(0).unwrap();
        assert_eq!(command.kind(), "command", "{src}");
        let mut cursor = command.walk();
        command
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "variable_assignment")
            .map(|n| {
                let n = if n.kind() == "command_name" {
                    n.named_child(0).unwrap()
                } else {
                    n
                };
                word(n, src)
            })
            .collect()
    }

    fn texts(src: &str) -> Vec<String> {
        words(src).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(
            texts(r#"grep 'a|b' "c d" e\ f \rm r\m"#),
            ["grep", "a|b", "c d", "e f", "rm", "rm"]
        );
        assert_eq!(texts(r#"echo "a\"b\$c\x""#), ["echo", r#"a"b$c\x"#]);
        assert_eq!(texts(r#"echo a'b'"c""#), ["echo", "abc"]);
        assert_eq!(texts(r"echo $'a\tb\x41\101\u00e9'"), ["echo", "a\tbAAé"]);
        assert_eq!(texts(r#"echo """#), ["echo", ""]);
    }

    #[test]
    fn expansions_are_not_static() {
        let got = words(r#"echo $x "a$(b)" ${y} $((1+2)) `z`"#);
        assert!(got[0].is_static);
        assert!(got[1..].iter().all(|w| !w.is_static), "{got:?}");
        assert_eq!(got[1].text, "$x");
    }

    #[test]
    fn run_time_expansions_are_flagged() {
        let got = words("ls *.rs '*.rs' {a,b} x{1..3} ~/x '~/y' a..b");
        assert!(got[1].glob && !got[2].glob);
        assert!(got[3].brace && got[4].brace, "{got:?}");
        assert!(got[5].tilde && !got[6].tilde);
        assert!(!got[7].brace);
        assert!(got[0].is_literal() && !got[1].is_literal());
    }
}
