//! Location, file mutation and the read, edit and write leaves.

mod composition;
mod concurrency;
mod crash;
mod edit;
mod encoding;
mod location;
mod mutation;
mod read;
mod support;
mod typographic;
mod write;
