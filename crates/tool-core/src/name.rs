//! Tool names: what a model may call.

use crate::RegistrationError;

/// Longest accepted tool name, in characters.
const MAX_NAME_LEN: usize = 64;

/// Checks a tool name against `^[A-Za-z][A-Za-z0-9_-]{0,63}$`.
///
/// ```
/// assert!(tackle_tool_core::validate_name("apply_patch").is_ok());
/// let err = tackle_tool_core::validate_name("9lives").unwrap_err();
/// assert_eq!(err.to_string(), "Invalid tool name: 9lives");
/// ```
pub fn validate_name(name: &str) -> Result<(), RegistrationError> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if first_ok && rest_ok && name.len() <= MAX_NAME_LEN {
        Ok(())
    } else {
        Err(RegistrationError::invalid_name(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_rejects() {
        for ok in [
            "a",
            "read",
            "apply_patch",
            "web-fetch",
            "A1",
            &"x".repeat(64),
        ] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "1a",
            "_a",
            "-a",
            "a b",
            "a.b",
            "é",
            "a/b",
            &"x".repeat(65),
            "tool\n",
        ] {
            let err = validate_name(bad).unwrap_err();
            assert_eq!(err.name, bad);
            assert_eq!(err.message, format!("Invalid tool name: {bad}"));
        }
    }
}
