//! The static analysis of a command line: every simple command it runs, the paths it changes
//! directory to or writes, and what cannot be known without running it.
//!
//! The line is parsed with tree-sitter-bash. Every simple command counts wherever it sits —
//! pipelines, `&&`/`||`/`;` lists, newlines, subshells, blocks, loops, functions, command and
//! process substitutions, unquoted here-documents — and wrappers are seen through
//! ([`super::wrappers`]). Whatever cannot be resolved statically (a computed command name,
//! `eval`, `source`, `sh -c "$x"`, a computed redirect target, a line that does not parse) is
//! recorded as [`Unresolved`], which the policy turns into an ask.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

use super::hidden;
use super::words::{Word, word};

/// How deep `sh -c '...'` scripts are followed before giving up.
const MAX_SCRIPT_DEPTH: usize = 4;

/// How deep the syntax tree is walked before giving up (a guard against stack exhaustion).
const MAX_TREE_DEPTH: usize = 256;

/// At most this many possible working directories are tracked; more means "unknown".
const MAX_CWDS: usize = 8;

/// Everything permission needs to know about a command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Analysis {
    /// Each simple command, wrappers removed; a privileged wrapper (`sudo`) adds its full form
    /// as well.
    pub(crate) commands: Vec<Vec<Word>>,
    /// Parts that cannot be resolved statically.
    pub(crate) unresolved: Vec<Unresolved>,
    /// `cd` targets, path arguments of file commands, and output redirect targets.
    pub(crate) paths: Vec<PathUse>,
    /// The first interactive program run without a batch mode (`vi`), if any.
    pub(crate) interactive: Option<String>,
}

/// A part of the line whose effect cannot be known without running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unresolved {
    /// The source text of the part.
    pub(crate) text: String,
    /// Why, for the host's prompt.
    pub(crate) reason: &'static str,
}

/// What kind of path a [`PathUse`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathKind {
    /// A directory entered (`cd`, `git -C`).
    Directory,
    /// A file written, created, removed or changed.
    File,
}

/// The working directory a relative path is resolved against: the call's working directory
/// after these `cd` targets, in order; `None` when a `cd` target is not static.
pub(crate) type Cwd = Option<Vec<String>>;

/// A path the command will touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathUse {
    /// The path as written (quotes removed; `~` not yet expanded).
    pub(crate) word: Word,
    pub(crate) kind: PathKind,
    /// Every working directory it may be relative to.
    pub(crate) cwds: Vec<Cwd>,
}

/// Analyses `command`.
pub(crate) fn analyze(command: &str) -> Analysis {
    let mut walker = Walker {
        out: Analysis::default(),
        cwds: vec![Some(Vec::new())],
    };
    walker.script(command, 0);
    walker.out
}

/// The walk's state: what was found so far and where the shell may be.
#[derive(Debug)]
pub(super) struct Walker {
    pub(super) out: Analysis,
    pub(super) cwds: Vec<Cwd>,
}

impl Walker {
    /// Walks a whole script (the command line, or the text of `sh -c '...'`).
    pub(super) fn script(&mut self, src: &str, depth: usize) {
        if depth > MAX_SCRIPT_DEPTH {
            return self.unresolved(src, "shell scripts are nested too deeply to follow");
        }
        let Some(tree) = parse(src) else {
            return self.unresolved(src, "the command could not be parsed");
        };
        let root = tree.root_node();
        if root.has_error() {
            self.unresolved(src, "the command does not parse as shell syntax");
        }
        if let Some(at) = joined_line(root, src) {
            self.unresolved(
                &src[at.saturating_sub(20)..(at + 22).min(src.len())],
                "a backslash-newline joins two words",
            );
        }
        let mut ctx = Ctx { src, depth };
        self.node(root, &mut ctx, 0);
    }

    pub(super) fn unresolved(&mut self, text: &str, reason: &'static str) {
        let text = text.trim().to_owned();
        if !self.out.unresolved.iter().any(|u| u.text == text) {
            self.out.unresolved.push(Unresolved { text, reason });
        }
    }

    pub(super) fn path(&mut self, word: Word, kind: PathKind) {
        self.out.paths.push(PathUse {
            word,
            kind,
            cwds: self.cwds.clone(),
        });
    }

    /// The shell may now be in `target` (relative to where it was), or where it was.
    pub(super) fn change_dir(&mut self, target: Option<&Word>) {
        let mut next = self.cwds.clone();
        for cwd in &self.cwds {
            let moved = match (cwd, target) {
                (Some(chain), Some(word)) if word.is_literal() => {
                    let mut chain = chain.clone();
                    chain.push(word.text.clone());
                    Some(chain)
                }
                _ => None,
            };
            if !next.contains(&moved) {
                next.push(moved);
            }
        }
        if next.len() > MAX_CWDS {
            next.retain(Option::is_none);
            next.push(None);
        }
        self.cwds = next;
    }

    fn node(&mut self, node: Node<'_>, ctx: &mut Ctx<'_>, level: usize) {
        if level > MAX_TREE_DEPTH {
            return self.unresolved(
                &ctx.src[node.byte_range()],
                "the command is nested too deeply to follow",
            );
        }
        let level = level + 1;
        if let Some(script) = hidden::nested_backquotes(node, ctx.src) {
            // A substitution runs in a subshell: a `cd` in it does not move the rest.
            let saved = self.cwds.clone();
            self.script(&script, ctx.depth + 1);
            self.cwds = saved;
            return;
        }
        match node.kind() {
            "command" => self.command(node, ctx, level),
            "declaration_command" | "unset_command" => {
                let words = self.child_words(node, ctx, level);
                self.push_command(words);
            }
            "test_command" => {
                let text: Vec<&str> = ctx.src[node.byte_range()].split_whitespace().collect();
                self.out.commands.push(vec![Word::plain(text.join(" "))]);
                self.children(node, ctx, level);
            }
            // `for PATH in ...` assigns the loop variable.
            "for_statement" | "select_statement"
                if node
                    .child_by_field_name("variable")
                    .is_some_and(|v| dangerous_variable(&ctx.src[v.byte_range()])) =>
            {
                self.unresolved(
                    &ctx.src[node.byte_range()],
                    "it sets a variable that decides which program runs",
                );
                self.children(node, ctx, level);
            }
            "variable_assignment" => {
                self.assignment(node, ctx);
                self.children(node, ctx, level);
            }
            "heredoc_redirect" => {
                if hidden::heredoc_substitution(node, ctx.src) {
                    self.unresolved(
                        &ctx.src[node.byte_range()],
                        "a here-document runs a command substitution that cannot be checked",
                    );
                }
                self.children(node, ctx, level);
            }
            // Each part of a pipeline, and every substitution, runs in a subshell: a `cd` in it
            // does not move the rest of the line.
            "subshell" | "command_substitution" | "process_substitution" | "pipeline" => {
                let saved = self.cwds.clone();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.node(child, ctx, level);
                    if node.kind() == "pipeline" {
                        self.cwds.clone_from(&saved);
                    }
                }
                self.cwds = saved;
            }
            "file_redirect" => self.redirect(node, ctx, level),
            "comment" | "heredoc_start" | "heredoc_end" | "heredoc_content" => {}
            _ => self.children(node, ctx, level),
        }
    }

    fn children(&mut self, node: Node<'_>, ctx: &mut Ctx<'_>, level: usize) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.node(child, ctx, level);
        }
    }

    /// The words of a declaration (`export A=1 B`) after walking its values.
    fn child_words(&mut self, node: Node<'_>, ctx: &mut Ctx<'_>, level: usize) -> Vec<Word> {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for (index, child) in node.children(&mut cursor).enumerate() {
            if index == 0 {
                // The keyword itself (`export`, `declare`, `unset`, ...).
                words.push(Word::plain(&ctx.src[child.byte_range()]));
                continue;
            }
            if !child.is_named() || child.kind() == "comment" {
                continue;
            }
            if child.kind() == "variable_assignment" {
                self.assignment(child, ctx);
            }
            self.node(child, ctx, level);
            words.push(assignment_word(child, ctx.src));
        }
        words
    }

    /// A simple command: assignments, name, arguments, redirects.
    fn command(&mut self, node: Node<'_>, ctx: &mut Ctx<'_>, level: usize) {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for (index, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(index as u32) {
                Some("name") => {
                    self.children(child, ctx, level);
                    if let Some(inner) = child.named_child(0) {
                        words.push(word(inner, ctx.src));
                    }
                }
                Some("argument") => {
                    self.node(child, ctx, level);
                    words.push(word(child, ctx.src));
                }
                Some("redirect") => self.node(child, ctx, level),
                _ if child.kind() == "variable_assignment" => {
                    self.assignment(child, ctx);
                    self.children(child, ctx, level);
                }
                _ if child.is_named() => self.node(child, ctx, level),
                _ => {}
            }
        }
        let text = &ctx.src[node.byte_range()];
        self.simple(words, text, ctx.depth);
    }

    /// An assignment to a variable that changes what later commands run (`PATH`,
    /// `LD_PRELOAD`, ...) makes their names meaningless: ask.
    fn assignment(&mut self, node: Node<'_>, ctx: &Ctx<'_>) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = &ctx.src[name.byte_range()];
        if dangerous_variable(name) {
            self.unresolved(
                &ctx.src[node.byte_range()],
                "it changes how later commands are found or run",
            );
        }
    }

    fn redirect(&mut self, node: Node<'_>, ctx: &mut Ctx<'_>, level: usize) {
        let mut operator = "";
        let mut destination = None;
        let mut cursor = node.walk();
        for (index, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(index as u32) {
                Some("destination") => destination = Some(child),
                Some("descriptor") => {}
                _ if !child.is_named() => operator = child.kind(),
                _ => {}
            }
        }
        let Some(destination) = destination else {
            return;
        };
        self.node(destination, ctx, level);
        let target = word(destination, ctx.src);
        let duplicate = matches!(operator, ">&" | "<&" | ">&-" | "<&-")
            && (target.text == "-" || target.text.bytes().all(|b| b.is_ascii_digit()));
        if duplicate || operator.starts_with('<') {
            // `2>&1` duplicates a descriptor; `<` only reads (advisory warnings cover it).
            return;
        }
        if !target.is_literal() {
            return self.unresolved(
                &ctx.src[node.byte_range()],
                "the redirect target is computed at run time",
            );
        }
        if !harmless_device(&target.text) {
            self.path(target, PathKind::File);
        }
    }
}

thread_local! {
    /// A parser per thread: building one and loading the grammar costs more than parsing a
    /// typical command.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The syntax tree of `src`; `None` if the grammar cannot be loaded or parsing gave up.
fn parse(src: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        // Not re-entered: the tree is returned before anything walks it.
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(src, None)
    })
}

/// What a walk needs to know about the script it is in.
#[derive(Debug)]
struct Ctx<'s> {
    src: &'s str,
    depth: usize,
}

/// `NAME=value` with the value resolved when static.
fn assignment_word(node: Node<'_>, src: &str) -> Word {
    if node.kind() != "variable_assignment" {
        return word(node, src);
    }
    let name = node
        .child_by_field_name("name")
        .map_or("", |n| &src[n.byte_range()]);
    match node.child_by_field_name("value") {
        Some(value) => {
            let value = word(value, src);
            Word {
                text: format!("{name}={}", value.text),
                ..value
            }
        }
        None => Word::plain(format!("{name}=")),
    }
}

/// Variables whose change alters which program a later command name runs, or how.
pub(super) fn dangerous_variable(name: &str) -> bool {
    matches!(
        name,
        "PATH" | "BASH_ENV" | "ENV" | "IFS" | "SHELLOPTS" | "BASHOPTS" | "PROMPT_COMMAND" | "PS4"
    ) || name.starts_with("LD_")
        || name.starts_with("DYLD_")
}

/// Why a command named by a shell keyword is unresolved.
pub(super) const MISREAD_KEYWORD: &str =
    "a shell keyword is read as a command name, so the commands around it are not known";

/// Shell keywords that can never name a command the grammar understood. The grammar reads
/// some compound commands as simple ones (`! { rm x; }` as the commands `{ rm x` and `}`,
/// `time for ...` likewise), hiding the commands inside them: such a line is not resolved.
pub(super) fn misread_keyword(name: &str) -> bool {
    matches!(
        name,
        "{" | "}"
            | "!"
            | "if"
            | "then"
            | "elif"
            | "else"
            | "fi"
            | "for"
            | "select"
            | "while"
            | "until"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "in"
            | "function"
            | "[["
            | "]]"
    )
}

/// True when a builtin that assigns the variables named in its arguments (`read PATH`,
/// `printf -v PATH`, `mapfile PATH`, `getopts o PATH`) sets a dangerous one.
pub(super) fn sets_dangerous_variable(program: &str, args: &[Word]) -> bool {
    matches!(
        program,
        "read" | "readarray" | "mapfile" | "printf" | "getopts" | "let" | "local" | "typeset"
    ) && {
        // printf assigns only with `-v NAME`.
        let names = match args.iter().position(|a| a.text == "-v") {
            Some(at) if program == "printf" => &args[at + 1..(at + 2).min(args.len())],
            _ if program == "printf" => &[],
            _ => args,
        };
        names.iter().any(|a| {
            // `NAME`, `NAME=..`, `NAME[0]`; a computed name (`$n`) could be any name.
            let name = a.text.split(['=', '[']).next().unwrap_or_default();
            name.contains('$') || dangerous_variable(name)
        })
    }
}

/// Redirect targets that are not files anyone could mean to protect.
fn harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
}

/// Where a backslash-newline sits between two non-blank characters outside quotes: the shell
/// joins the two into one word, while the grammar splits them, so the parse cannot be trusted.
fn joined_line(root: Node<'_>, src: &str) -> Option<usize> {
    let bytes = src.as_bytes();
    (1..bytes.len().saturating_sub(2)).find(|&at| {
        bytes[at] == b'\\'
            && bytes[at + 1] == b'\n'
            && !bytes[at - 1].is_ascii_whitespace()
            && !bytes[at + 2].is_ascii_whitespace()
            && bytes[at - 1] != b'\\'
            && !quoted_at(root, at)
    })
}

/// True when byte `at` lies inside a quoted string, a here-document body or a comment.
fn quoted_at(root: Node<'_>, at: usize) -> bool {
    let mut node = root.descendant_for_byte_range(at, at + 1);
    while let Some(current) = node {
        if matches!(
            current.kind(),
            "raw_string" | "string" | "ansi_c_string" | "heredoc_body" | "comment"
        ) {
            return true;
        }
        node = current.parent();
    }
    false
}
