//! glob and grep run on fixture trees built in temp dirs.

mod fixture;
mod glob;
mod grep;
mod policy;
mod properties;
