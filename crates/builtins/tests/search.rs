//! glob and grep through `Tool::settle`, on fixture trees built in temp dirs.

mod fixture;
mod glob;
mod grep;
mod policy;
mod properties;
