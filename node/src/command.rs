//! What `stint-node` does with its command line.

use crate::{
	chain_spec,
	cli::{Cli, Subcommand},
	service,
};
use polkadot_sdk::{sc_cli, sc_cli::SubstrateCli, sc_consensus_grandpa, sc_network, sc_service};
use stint_runtime::opaque::Block;

impl SubstrateCli for Cli {
	fn impl_name() -> String {
		"Stint Node".into()
	}

	fn impl_version() -> String {
		env!("SUBSTRATE_CLI_IMPL_VERSION").into()
	}

	fn description() -> String {
		env!("CARGO_PKG_DESCRIPTION").into()
	}

	fn author() -> String {
		env!("CARGO_PKG_AUTHORS").into()
	}

	fn support_url() -> String {
		"https://github.com/stint-network/stint/issues".into()
	}

	fn copyright_start_year() -> i32 {
		2026
	}

	fn load_spec(&self, id: &str) -> Result<Box<dyn sc_service::ChainSpec>, String> {
		chain_spec::load(id)
	}
}

/// Parses the command line and runs the node or the subcommand.
pub fn run() -> sc_cli::Result<()> {
	let cli = Cli::from_args();

	match &cli.subcommand {
		Some(Subcommand::Key(cmd)) => cmd.run(&cli),
		Some(Subcommand::BuildSpec(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.sync_run(|config| cmd.run(config.chain_spec, config.network))
		}
		Some(Subcommand::CheckBlock(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.async_run(|config| {
				let parts = service::new_partial(&config, false)?;
				Ok((cmd.run(parts.client, parts.import_queue), parts.task_manager))
			})
		}
		Some(Subcommand::ExportBlocks(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.async_run(|config| {
				let parts = service::new_partial(&config, false)?;
				Ok((cmd.run(parts.client, config.database), parts.task_manager))
			})
		}
		Some(Subcommand::ExportState(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.async_run(|config| {
				let parts = service::new_partial(&config, false)?;
				Ok((cmd.run(parts.client, config.chain_spec), parts.task_manager))
			})
		}
		Some(Subcommand::ImportBlocks(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.async_run(|config| {
				let parts = service::new_partial(&config, false)?;
				Ok((cmd.run(parts.client, parts.import_queue), parts.task_manager))
			})
		}
		Some(Subcommand::PurgeChain(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.sync_run(|config| cmd.run(config.database))
		}
		Some(Subcommand::Revert(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.async_run(|config| {
				let parts = service::new_partial(&config, false)?;
				let aux_revert = Box::new(|client, _, blocks| {
					sc_consensus_grandpa::revert(client, blocks)?;
					Ok(())
				});
				Ok((cmd.run(parts.client, parts.backend, Some(aux_revert)), parts.task_manager))
			})
		}
		Some(Subcommand::ChainInfo(cmd)) => {
			let runner = cli.create_runner(cmd)?;
			runner.sync_run(|config| cmd.run::<Block>(&config))
		}
		None => {
			let runner = cli.create_runner(&cli.run)?;
			let dev_seal = cli
				.dev_block_time
				.map(|ms| service::DevSeal { interval: std::time::Duration::from_millis(ms) });
			runner.run_node_until_exit(|config| async move {
				if dev_seal.is_some()
					&& config.chain_spec.chain_type() == sc_service::ChainType::Live
				{
					return Err(sc_cli::Error::Input(
						"--dev-block-time is for development and local chains only".into(),
					));
				}
				match config.network.network_backend {
					sc_network::config::NetworkBackendType::Libp2p => service::new_full::<
						sc_network::NetworkWorker<
							Block,
							<Block as polkadot_sdk::sp_runtime::traits::Block>::Hash,
						>,
					>(config, dev_seal)
					.map_err(sc_cli::Error::Service),
					sc_network::config::NetworkBackendType::Litep2p => {
						service::new_full::<sc_network::Litep2pNetworkBackend>(config, dev_seal)
							.map_err(sc_cli::Error::Service)
					}
				}
			})
		}
	}
}
