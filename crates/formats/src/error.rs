//! The formats crate's error type.

/// A provider response that does not have the shape its provider documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A recorded or received response is not what its provider sends.
    #[error("not a {provider} response: {problem}")]
    Response {
        /// Whose response was expected.
        provider: &'static str,
        /// What is missing or malformed.
        problem: String,
    },
}

pub(crate) fn malformed(provider: &'static str, problem: impl Into<String>) -> FormatError {
    FormatError::Response {
        provider,
        problem: problem.into(),
    }
}
