//! Location, file mutation and the read, edit and write leaves.

mod append_race;
mod composition;
mod concurrency;
mod crash;
mod edit;
mod encoding;
mod location;
mod mutation;
mod paging;
mod protected;
mod race;
mod read;
mod read_bound;
#[cfg(feature = "media")]
mod read_hostile;
#[cfg(feature = "media")]
mod read_media;
mod support;
#[cfg(feature = "apply-patch")]
mod typographic;
mod write;
