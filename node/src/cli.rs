//! Command-line interface of `stint-node`.

use polkadot_sdk::sc_cli;

/// `stint-node [SUBCOMMAND] [OPTIONS]`: without a subcommand, runs a node.
#[derive(Debug, clap::Parser)]
#[command(name = "stint-node", version, propagate_version = true)]
pub struct Cli {
	/// A maintenance subcommand instead of running the node.
	#[command(subcommand)]
	pub subcommand: Option<Subcommand>,

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
