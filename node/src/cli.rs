//! Command-line interface of `stint-node`.

use polkadot_sdk::sc_cli;

/// `stint-node [SUBCOMMAND] [OPTIONS]`: without a subcommand, runs a node.
#[derive(Debug, clap::Parser)]
#[command(name = "stint-node", version, propagate_version = true)]
pub struct Cli {
	/// A maintenance subcommand instead of running the node.
	#[command(subcommand)]
	pub subcommand: Option<Subcommand>,

	/// Development sealing, for tests: seal a block every MS milliseconds and finalize it at
	/// once, instead of Aura's 6-second slots and GRANDPA's votes. The runtime and its checks are
	/// the same (every block carries an Aura slot; the chain's clock runs a slot ahead per
	/// block). Development and local chains only; use a fresh database (`--tmp`).
	#[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(50..=60_000))]
	pub dev_block_time: Option<u64>,

	/// Options for running the node.
	#[clap(flatten)]
	pub run: sc_cli::RunCmd,
}

/// Maintenance subcommands.
#[derive(Debug, clap::Subcommand)]
#[allow(clippy::large_enum_variant)]
pub enum Subcommand {
	/// Key management utilities.
	#[command(subcommand)]
	Key(sc_cli::KeySubcommand),

	/// Build a chain specification (JSON) from a built-in chain (`dev`, `local`).
	BuildSpec(sc_cli::BuildSpecCmd),

	/// Validate blocks.
	CheckBlock(sc_cli::CheckBlockCmd),

	/// Export blocks.
	ExportBlocks(sc_cli::ExportBlocksCmd),

	/// Export the state of a given block into a chain spec.
	ExportState(sc_cli::ExportStateCmd),

	/// Import blocks.
	ImportBlocks(sc_cli::ImportBlocksCmd),

	/// Remove the whole chain.
	PurgeChain(sc_cli::PurgeChainCmd),

	/// Revert the chain to a previous state.
	Revert(sc_cli::RevertCmd),

	/// Database metadata.
	ChainInfo(sc_cli::ChainInfoCmd),
}
