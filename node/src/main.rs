//! The Stint node: Aura authors blocks, GRANDPA finalizes them, the runtime is Stint's wasm.
#![warn(missing_docs)]

mod chain_spec;
mod cli;
mod command;
mod rpc;
mod service;

fn main() -> polkadot_sdk::sc_cli::Result<()> {
	command::run()
}
