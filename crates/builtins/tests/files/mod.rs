//! Location, file mutation and the read, edit and write leaves.

mod composition;
mod concurrency;
mod crash;
mod edit;
mod encoding;
mod location;
mod mutation;
mod protected;
mod race;
mod read;
mod support;
#[cfg(feature = "apply-patch")]
mod typographic;
mod write;
