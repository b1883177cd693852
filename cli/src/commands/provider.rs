//! `stint provider`: register, update, worker keys, pause, resume, exit, deregister, show.

use std::path::PathBuf;

use clap::Subcommand;
use stint_client::{
	parse_worker_key,
	runtime::{
		self,
		runtime_types::{
			pallet_providers::pallet::Call as ProvidersCall, stint_runtime::RuntimeCall,
		},
	},
	Error,
};

use crate::{
	ctx::{device, read_file, Ctx, Fail, Outcome},
	machine, show,
};

#[derive(Subcommand)]
pub enum ProviderCmd {
	/// A provider's record (default: the signer's).
	Show {
		account: Option<String>,
	},
	/// Registers the signer as a provider from a provider file (see README.md); its worker key
	/// acts for every GPU of the machine.
	Register {
		file: PathBuf,
		#[command(flatten)]
		probe: ProbeArgs,
	},
	/// Replaces the signer's name, endpoint, region and hardware with a provider file's, in one
	/// transaction.
	Update {
		file: PathBuf,
		#[command(flatten)]
		probe: ProbeArgs,
	},
	/// Replaces a worker key by a new one (a secret URI or `0x` and 32 bytes), for the same GPUs.
	RotateKey {
		worker_key: String,
		/// The key to replace; needed only when the provider has several worker keys.
		#[arg(long)]
		from: Option<String>,
	},
	/// Binds a worker key to GPUs of one machine (ids in hex, or GPU UUIDs): it then bids,
	/// acknowledges and signs results for those GPUs only.
	BindWorker {
		worker_key: String,
		#[arg(long, value_delimiter = ',', required = true)]
		devices: Vec<String>,
	},
	/// Unbinds a worker key: it acts for nobody from then on.
	UnbindWorker {
		worker_key: String,
	},
	Pause,
	Resume,
	/// Announces the exit: no new leases, deregister after the notice.
	Exit,
	Deregister,
}

#[derive(clap::Args)]
pub struct ProbeArgs {
	/// Read the hardware off this machine with the worker's probe (GPUs through the CUDA driver,
	/// CPU cores, memory, free disk) instead of the file's `[hardware]` section.
	#[arg(long)]
	probe: bool,
	/// With --probe: the directory jobs write to; its free space is the disk offered.
	#[arg(long, default_value = ".", requires = "probe")]
	scratch: PathBuf,
}

fn provider_file(file: &PathBuf, probe: &ProbeArgs) -> Result<machine::Provider, Fail> {
	let text = read_file(file)?;
	let in_file = |e| Fail::Input(format!("{}: {e}", file.display()));
	let parsed = machine::parse(&text).map_err(in_file)?;
	let source = match probe.probe {
		true => machine::HardwareSource::Probe(&probe.scratch),
		false => machine::HardwareSource::File,
	};
	machine::provider(parsed, source).map_err(|refusal| match refusal {
		machine::Refusal::File(e) => in_file(e),
		machine::Refusal::Probe(e) => Fail::Probe(e),
	})
}

pub async fn run(ctx: &Ctx, cmd: &ProviderCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		ProviderCmd::Show { account } => {
			let who = ctx.account(account)?;
			let record = ctx
				.client
				.provider(&who)
				.await?
				.ok_or_else(|| Error::NotFound(format!("provider {who}")))?;
			show::provider(&who, &record, ctx.json());
		}
		ProviderCmd::Register { file, probe } => {
			let provider = provider_file(file, probe)?;
			let call =
				tx.providers().register(provider.info, provider.worker_key, provider.hardware);
			ctx.send(&call).await?;
		}
		ProviderCmd::Update { file, probe } => {
			let provider = provider_file(file, probe)?;
			// Both or neither: a batch that fails as a whole.
			let calls = vec![
				RuntimeCall::Providers(ProvidersCall::update_info { info: provider.info }),
				RuntimeCall::Providers(ProvidersCall::update_hardware {
					hardware: provider.hardware,
				}),
			];
			ctx.send(&tx.utility().batch_all(calls)).await?;
		}
		ProviderCmd::RotateKey { worker_key, from } => {
			let to = parse_worker_key(worker_key)?;
			let from = match from {
				Some(from) => parse_worker_key(from)?,
				None => {
					let who = ctx.account(&None)?;
					let record = ctx
						.client
						.provider(&who)
						.await?
						.ok_or_else(|| Error::NotFound(format!("provider {who}")))?;
					match record.workers.0.as_slice() {
						[only] => only.key,
						_ => {
							return Err(Fail::Input(format!(
								"provider {who} has {} worker keys: name the one to replace with \
								 --from",
								record.workers.0.len()
							)))
						}
					}
				}
			};
			ctx.send(&tx.providers().rotate_worker_key(from, to)).await?;
		}
		ProviderCmd::BindWorker { worker_key, devices } => {
			let key = parse_worker_key(worker_key)?;
			let devices = devices.iter().map(|d| device(d)).collect::<Result<Vec<_>, _>>()?;
			ctx.send(&tx.providers().bind_worker(key, devices)).await?;
		}
		ProviderCmd::UnbindWorker { worker_key } => {
			let key = parse_worker_key(worker_key)?;
			ctx.send(&tx.providers().unbind_worker(key)).await?;
		}
		ProviderCmd::Pause => {
			ctx.send(&tx.providers().pause()).await?;
		}
		ProviderCmd::Resume => {
			ctx.send(&tx.providers().resume()).await?;
		}
		ProviderCmd::Exit => {
			ctx.send(&tx.providers().announce_exit()).await?;
		}
		ProviderCmd::Deregister => {
			ctx.send(&tx.providers().deregister()).await?;
		}
	}
	Ok(())
}
