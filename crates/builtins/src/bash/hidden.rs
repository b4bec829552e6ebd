//! Command substitutions the grammar does not read as commands, though the shell runs them:
//! backquotes whose text escapes `` ` ``, `\` or `$`, and substitutions in here-document bodies that stay plain
//! text (any backquote, and `$(` on a `<<-` line after its tabs).

use tree_sitter::Node;

/// The script a backquoted substitution runs when it escapes `` ` ``, `\` or `$` (nested
/// backquotes `` `a \`b\`` ``, `` `r\\m` ``): the shell removes those backslashes first, while
/// the grammar reads the text as it is. `None` for other substitutions, which the grammar
/// reads right.
pub(super) fn nested_backquotes(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "command_substitution" {
        return None;
    }
    let inner = src[node.byte_range()]
        .strip_prefix('`')?
        .strip_suffix('`')?;
    if !["\\`", "\\\\", "\\$"]
        .iter()
        .any(|escape| inner.contains(escape))
    {
        return None;
    }
    let mut script = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            script.push(c);
            continue;
        }
        match chars.next() {
            Some(next @ ('`' | '\\' | '$')) => script.push(next),
            Some(next) => {
                script.push('\\');
                script.push(next);
            }
            None => script.push('\\'),
        }
    }
    Some(script)
}

/// True when the body of `redirect` (a here-document with an unquoted delimiter, so the shell
/// expands it) holds a command substitution that the grammar left as text.
pub(super) fn heredoc_substitution(redirect: Node<'_>, src: &str) -> bool {
    let mut cursor = redirect.walk();
    let children: Vec<Node<'_>> = redirect.named_children(&mut cursor).collect();
    let expanded = children
        .iter()
        .find(|child| child.kind() == "heredoc_start")
        .is_some_and(|start| !src[start.byte_range()].contains(['\'', '"', '\\']));
    if !expanded {
        return false;
    }
    children
        .iter()
        .filter(|child| child.kind() == "heredoc_body")
        .any(|body| {
            // The body's text outside the expansions and substitutions the grammar did read.
            let mut at = body.start_byte();
            let mut cursor = body.walk();
            let mut text = String::new();
            for child in body.named_children(&mut cursor) {
                if child.kind() != "heredoc_content" {
                    text.push_str(&src[at..child.start_byte()]);
                    at = child.end_byte();
                }
            }
            text.push_str(&src[at..body.end_byte()]);
            runs_command(&text)
        })
}

/// True when here-document text holds `` ` `` or `$(` that no backslash escapes.
fn runs_command(text: &str) -> bool {
    let mut bytes = text.bytes().peekable();
    while let Some(byte) = bytes.next() {
        match byte {
            b'\\' => {
                bytes.next();
            }
            b'`' => return true,
            b'$' if bytes.peek() == Some(&b'(') => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::runs_command;

    #[test]
    fn escaped_substitutions_run_nothing() {
        assert!(runs_command("a `b` c"));
        assert!(runs_command("\t$(b)"));
        assert!(runs_command("\\\\$(b)"));
        assert!(!runs_command("\\$(b) \\`b\\` $b ${b}"));
    }
}
