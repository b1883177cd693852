//! One module per command group: each owns its clap enum and its `run`.

pub mod bid;
pub mod bond;
pub mod lease;
pub mod order;
pub mod provider;
pub mod report;
pub mod results;
pub mod stream;
