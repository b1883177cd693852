//! The Stint node: Aura authors blocks, GRANDPA finalizes them, the runtime is Stint's wasm.
#![warn(missing_docs)]
// `sc_cli::Error`, the error every node command returns, is the SDK's and large by design; boxing
// it in each of our functions would only hide the framework's own signatures.
#![allow(clippy::result_large_err)]

mod chain_spec;
mod cli;
mod command;
mod rpc;
mod service;

fn main() -> polkadot_sdk::sc_cli::Result<()> {
	command::run()
}
