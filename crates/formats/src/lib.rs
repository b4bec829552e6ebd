//! tackle's tools in the shapes model providers take, and their results back.
//!
//! A host sends a snapshot's definitions to a provider and answers the calls that come back;
//! every provider wants both in its own shape and takes its own subset of JSON Schema, and one
//! schema it refuses fails the whole request. This crate converts, for OpenAI (Chat Completions,
//! strict or not, and Responses), Anthropic, Gemini and MCP:
//! - definitions ([`export`] for a snapshot, [`export_definition`] for one tool, and each
//!   provider's module): OpenAI's strict schemas only where a schema can be made strict
//!   ([`strict_schema`]; otherwise the tool is offered non-strict and [`NotStrict`] says why),
//!   Gemini's schema subset ([`gemini_schema`]), MCP's annotations from each tool's declared
//!   [`ToolClass`](tackle_tool_core::ToolClass);
//! - results: a [`Settlement`](tackle_registry::Settlement) in each provider's result shape,
//!   attachments inline where the provider takes them in a tool result and in a following user
//!   message where it does not, errors flagged the provider's way;
//! - calls: the tool calls of a provider's response as [`Call`](tackle_tool_core::Call)s, to
//!   settle with `Materialization::settle_batch`;
//! - model-aware catalogs ([`CatalogProfile`]): `apply_patch` for the models trained on it,
//!   `edit` and `write` for the others.
//!
//! Invariants: conversion never changes what a call means. A strict schema accepts only inputs
//! the tool's own schema accepts once `null` optionals are read as absent (which tool-core's
//! decoding does), and keywords left out for a provider are still enforced by the decoder.
//! Every exported shape is checked against the providers' official SDKs in this crate's tests.
#![deny(missing_docs)]

pub mod anthropic;
mod error;
mod format;
pub mod gemini;
pub mod mcp;
pub mod openai;
mod parts;
mod profile;
mod schema;

pub use error::FormatError;
pub use format::{Catalog, Exported, Format, export, export_definition};
pub use profile::{CatalogProfile, EditTools};
pub use schema::{NotStrict, gemini_schema, strict_schema};
