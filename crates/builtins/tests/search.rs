//! glob and grep run on fixture trees built in temp dirs.

pub(crate) mod fixture;
mod glob;
mod grep;
mod grep_options;
mod policy;
mod properties;
mod rg_agreement;
