//! A typed output with the model content its leaf rendered alongside it.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};

use crate::Content;

/// A typed tool's output together with the model content rendered while producing it.
///
/// Use it as [`Execute::Output`](crate::Execute::Output) when what the model reads needs
/// something the structured output does not keep (a page rendered with line numbers, the bytes
/// of an attachment), and build the tool with
/// [`TypedTool::rendered`](crate::TypedTool::rendered). It serializes as `output` alone and its
/// schema is `O`'s, so the structured output and its schema are exactly `O`'s; the content is
/// moved, not copied, into the model projection.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered<O> {
    /// The structured output.
    pub output: O,
    /// What the model reads.
    pub content: Vec<Content>,
}

impl<O> Rendered<O> {
    /// `output` with the model `content`.
    pub fn new(output: O, content: Vec<Content>) -> Self {
        Self { output, content }
    }

    /// `output` with one text part.
    pub fn text(output: O, text: impl Into<String>) -> Self {
        Self::new(output, vec![Content::text(text)])
    }
}

impl<O: Serialize> Serialize for Rendered<O> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.output.serialize(serializer)
    }
}

impl<O: JsonSchema> JsonSchema for Rendered<O> {
    fn inline_schema() -> bool {
        O::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        O::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        O::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        O::json_schema(generator)
    }
}
