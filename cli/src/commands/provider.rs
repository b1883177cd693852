//! `stint provider`: register, update, worker keys, pause, resume, exit, deregister, show.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use stint_client::{
	parse_account, parse_worker_key,
	runtime::{
		self,
		runtime_types::{
			pallet_providers::pallet::Call as ProvidersCall, stint_runtime::RuntimeCall,
		},
	},
	worker_key_with_proof, worker_proof, Error,
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
	/// Registers the signer as a provider from a provider file (see docs/provider.md); its
	/// worker key acts for every GPU of the machine.
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
	/// Replaces a worker key by a new one (a secret URI, or `0x` and 32 bytes with --proof), for
	/// the same GPUs.
	RotateKey {
		worker_key: String,
		/// The key to replace; needed only when the provider has several worker keys.
		#[arg(long)]
		from: Option<String>,
		/// A public key's consent to act for the signer (`provider key-proof`).
		#[arg(long)]
		proof: Option<String>,
	},
	/// Binds a worker key (a secret URI, or `0x` and 32 bytes with --proof) to GPUs of one
	/// machine (ids in hex, or GPU UUIDs): it then bids, acknowledges and signs results for those
	/// GPUs only.
	BindWorker {
		worker_key: String,
		#[arg(long, value_delimiter = ',', required = true)]
		devices: Vec<String>,
		/// A public key's consent to act for the signer (`provider key-proof`).
		#[arg(long)]
		proof: Option<String>,
	},
	/// Prints the signer's consent, as a worker key, to act for PROVIDER (run it where the
	/// worker key is; the provider passes it as --proof or `worker_key_proof`). It names this
	/// chain and the key's next binding, read from the node: it binds the key once, on this
	/// chain only.
	KeyProof {
		provider: String,
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

async fn provider_file(
	ctx: &Ctx,
	file: &Path,
	probe: &ProbeArgs,
) -> Result<machine::Provider, Fail> {
	let account = ctx.account(&None)?;
	let text = read_file(file)?;
	let in_file = |e| Fail::Input(format!("{}: {e}", file.display()));
	let parsed = machine::parse(&text).map_err(in_file)?;
	let source = match probe.probe {
		true => machine::HardwareSource::Probe(&probe.scratch),
		false => machine::HardwareSource::File,
	};
	// The key's consent names this chain and the provider's next consent.
	let scope = ctx.client.consent_scope(&account).await?;
	machine::provider(parsed, source, &account, scope).map_err(|refusal| match refusal {
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
			let provider = provider_file(ctx, file, probe).await?;
			let call = tx.providers().register(
				provider.info,
				provider.worker_key,
				provider.hardware,
				provider.proof,
			);
			ctx.send(&call).await?;
		}
		ProviderCmd::Update { file, probe } => {
			let provider = provider_file(ctx, file, probe).await?;
			// Both or neither: a batch that fails as a whole.
			let calls = vec![
				RuntimeCall::Providers(ProvidersCall::update_info { info: provider.info }),
				RuntimeCall::Providers(ProvidersCall::update_hardware {
					hardware: provider.hardware,
				}),
			];
			ctx.send(&tx.utility().batch_all(calls)).await?;
		}
		ProviderCmd::RotateKey { worker_key, from, proof } => {
			let who = ctx.account(&None)?;
			let scope = ctx.client.consent_scope(&who).await?;
			let (to, proof) = worker_key_with_proof(worker_key, proof.as_deref(), &who, scope)?;
			let from = match from {
				Some(from) => parse_worker_key(from)?,
				None => {
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
			ctx.send(&tx.providers().rotate_worker_key(from, to, proof)).await?;
		}
		ProviderCmd::BindWorker { worker_key, devices, proof } => {
			let who = ctx.account(&None)?;
			let scope = ctx.client.consent_scope(&who).await?;
			let (key, proof) = worker_key_with_proof(worker_key, proof.as_deref(), &who, scope)?;
			let devices = devices.iter().map(|d| device(d)).collect::<Result<Vec<_>, _>>()?;
			ctx.send(&tx.providers().bind_worker(key, stint_client::Bounded(devices), proof))
				.await?;
		}
		ProviderCmd::KeyProof { provider } => {
			let provider = parse_account(provider)?;
			let worker = ctx.signer()?;
			// Valid on this chain, for the provider's next consent only.
			let scope = ctx.client.consent_scope(&provider).await?;
			let proof = format!("0x{}", hex::encode(worker_proof(&worker, &provider, scope)));
			if ctx.json() {
				show::json(&serde_json::json!({
					"worker_key": format!("0x{}", hex::encode(worker.public_key().0)),
					"provider": provider.to_string(),
					"proof": proof,
				}));
			} else {
				println!("{proof}");
			}
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
