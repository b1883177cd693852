//! `stint`: buy and sell GPU time on Stint from a terminal.
//!
//! Human-readable output by default, `--json` for scripts. Exit codes: 0 done, 1 unexpected
//! (including a provider that cannot be reached), 2 bad usage, 3 no connection, 4 bad key, 5 bad
//! input (a malformed job file, amount or address), 6 the chain refused (its error is named),
//! 7 not found, 8 what a provider served does not match the chain.

mod job;
mod machine;
mod results;
mod show;

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};
use stint_client::{
	account_of, format_stint, keypair, parse_account, parse_stint, runtime, AccountId, Client,
	Error, Included, Keypair, Progress, Wait,
};
use stint_primitives::DeviceId;

#[derive(Parser)]
#[command(name = "stint", version, about = "Buy and sell GPU time on Stint.")]
struct Cli {
	/// The node to talk to.
	#[arg(long, global = true, env = "STINT_URL", default_value = "ws://127.0.0.1:9944")]
	url: String,
	/// Print JSON instead of tables.
	#[arg(long, global = true)]
	json: bool,
	/// Who signs: a secret URI (`//Alice` on a dev chain, a mnemonic) or a file holding one.
	#[arg(long, global = true, env = "STINT_KEY")]
	key: Option<String>,
	/// Return once the transaction is in a block, without waiting for finality.
	#[arg(long, global = true)]
	no_wait_finality: bool,
	#[command(subcommand)]
	command: Command,
}

#[derive(Subcommand)]
enum Command {
	/// The chain's name, best and finalized blocks, runtime version.
	Status,
	/// An account's free balance (default: the signer's).
	Balance { account: Option<String> },
	/// Buyers: post, list, show, cancel orders and accept bids.
	#[command(subcommand)]
	Order(OrderCmd),
	/// Providers: find orders to serve, place and retract bids.
	#[command(subcommand)]
	Bid(BidCmd),
	/// Leases: list, show, acknowledge, close, give notice, terminate.
	#[command(subcommand)]
	Lease(LeaseCmd),
	/// Payment streams: show, top up, settle, withdraw.
	#[command(subcommand)]
	Stream(StreamCmd),
	/// Providers: show a record, pause, resume, announce exit, deregister.
	#[command(subcommand)]
	Provider(ProviderCmd),
	/// Providers: bond, unbond, withdraw.
	#[command(subcommand)]
	Bond(BondCmd),
	/// Buyers: download a lease's outputs, verified against the signed output root.
	#[command(subcommand)]
	Results(ResultsCmd),
	/// Anyone: report a provider's no-show or missed result (and earn the reporter's share).
	#[command(subcommand)]
	Report(ReportCmd),
}

#[derive(Subcommand)]
enum OrderCmd {
	/// Posts the order described by a TOML job file (see README.md).
	Create {
		file: PathBuf,
		/// Escrow in STINT, overriding the file.
		#[arg(long)]
		deposit: Option<String>,
	},
	/// Open orders.
	List {
		#[arg(long, default_value_t = 50)]
		limit: u32,
	},
	/// An order and its bids.
	Show { order: u64 },
	/// Cancels an open order: everything is refunded.
	Cancel { order: u64 },
	/// Accepts a provider's bid: the lease starts.
	Accept { order: u64, provider: String },
}

#[derive(Subcommand)]
enum BidCmd {
	/// Open orders the signer's GPUs can serve now, with the devices it would offer.
	Servable {
		#[arg(long, default_value_t = 50)]
		limit: u32,
	},
	/// Bids on an order. Without --devices, offers the devices the chain says fit.
	Place {
		order: u64,
		/// Price per block in STINT.
		#[arg(long)]
		price: String,
		/// Device ids (hex), comma-separated.
		#[arg(long, value_delimiter = ',')]
		devices: Vec<String>,
	},
	/// Withdraws the signer's bid.
	Retract { order: u64 },
}

#[derive(Subcommand)]
enum LeaseCmd {
	/// Live leases of a provider (default: the signer), or every lease of a buyer.
	List {
		provider: Option<String>,
		/// List the leases this buyer pays for instead (`me` for the signer).
		#[arg(long, conflicts_with = "provider")]
		buyer: Option<String>,
	},
	/// A lease.
	Show { lease: u64 },
	/// The provider acknowledges: payment starts.
	Ack { lease: u64 },
	/// The buyer ends the lease: paid to date, the rest refunded.
	Close { lease: u64 },
	/// The provider gives the notice the order asked for.
	Notice { lease: u64 },
	/// The provider ends the lease (slashed unless notice was served).
	Terminate { lease: u64 },
}

#[derive(Subcommand)]
enum StreamCmd {
	/// What a stream owes, holds, and when it runs out.
	Show { stream: u64 },
	/// Adds escrow (resumes a suspended lease).
	TopUp { stream: u64, amount: String },
	/// Pays the provider what is owed (anyone).
	Settle { stream: u64 },
	/// The provider collects what is owed.
	Withdraw { stream: u64 },
}

#[derive(Subcommand)]
enum ProviderCmd {
	/// A provider's record (default: the signer's).
	Show {
		account: Option<String>,
	},
	/// Registers the signer as a provider from a provider file (see README.md).
	Register {
		file: PathBuf,
		#[command(flatten)]
		probe: ProbeArgs,
	},
	/// Replaces the signer's name, endpoint, region and hardware with a provider file's.
	Update {
		file: PathBuf,
		#[command(flatten)]
		probe: ProbeArgs,
	},
	/// Registers a new worker key (a secret URI or `0x` and 32 bytes).
	RotateKey {
		worker_key: String,
	},
	Pause,
	Resume,
	/// Announces the exit: no new leases, deregister after the notice.
	Exit,
	Deregister,
}

#[derive(clap::Args)]
struct ProbeArgs {
	/// Read the hardware off this machine with the worker's probe (GPUs through the CUDA driver,
	/// CPU cores, memory, free disk) instead of the file's `[hardware]` section.
	#[arg(long)]
	probe: bool,
	/// With --probe: the directory jobs write to; its free space is the disk offered.
	#[arg(long, default_value = ".", requires = "probe")]
	scratch: PathBuf,
}

#[derive(Subcommand)]
enum BondCmd {
	/// A bond (default: the signer's).
	Show { account: Option<String> },
	/// Bonds an amount of STINT (first bond).
	Bond { amount: String },
	/// Adds to the bond.
	More { amount: String },
	/// Starts unbonding an amount.
	Unbond { amount: String },
	/// Withdraws what finished unbonding.
	Withdraw,
}

#[derive(Subcommand)]
enum ResultsCmd {
	/// Downloads the outputs of a completed lease from its provider into DIR. Refuses a manifest
	/// that does not match the on-chain output root, and deletes any file that does not match.
	Fetch {
		lease: u64,
		#[arg(long)]
		out: PathBuf,
	},
}

#[derive(Subcommand)]
enum ReportCmd {
	/// The provider did not acknowledge in time.
	NoShow { lease: u64 },
	/// The lease missed its result or checkpoint.
	Missed { lease: u64 },
}

/// Why the command failed, and its exit code.
pub enum Fail {
	Input(String),
	Client(Error),
	/// What a provider served does not match what the chain says (exit 8).
	Verification(String),
	/// The probe could not read this machine's GPUs (exit 9).
	Probe(String),
}

impl From<Error> for Fail {
	fn from(error: Error) -> Self {
		Self::Client(error)
	}
}

impl Fail {
	fn code(&self) -> u8 {
		match self {
			Self::Input(_) => 5,
			Self::Verification(_) => 8,
			Self::Probe(_) => 9,
			Self::Client(Error::Connect { .. }) => 3,
			Self::Client(Error::Key(_)) => 4,
			Self::Client(Error::Dispatch { .. } | Error::Refused(_) | Error::Rejected(_)) => 6,
			Self::Client(Error::NotFound(_)) => 7,
			Self::Client(Error::Rpc(_)) => 1,
		}
	}

	fn message(&self) -> String {
		match self {
			Self::Input(message) | Self::Verification(message) | Self::Probe(message) => {
				message.clone()
			}
			Self::Client(error) => error.to_string(),
		}
	}
}

type Outcome = Result<(), Fail>;

struct Ctx {
	cli: Cli,
	client: Client,
}

impl Ctx {
	fn signer(&self) -> Result<Keypair, Fail> {
		let source = self.cli.key.as_deref().ok_or_else(|| {
			Fail::Input("this command signs a transaction: pass --key (e.g. --key //Alice)".into())
		})?;
		Ok(keypair(source)?)
	}

	/// The named account, else the signer's.
	fn account(&self, named: &Option<String>) -> Result<AccountId, Fail> {
		match named {
			Some(text) => Ok(parse_account(text)?),
			None => Ok(account_of(&self.signer()?)),
		}
	}

	async fn send(&self, call: &impl stint_client::Payload) -> Result<Included, Fail> {
		let signer = self.signer()?;
		let wait = if self.cli.no_wait_finality { Wait::InBlock } else { Wait::Finalized };
		let quiet = self.cli.json;
		let included = self
			.client
			.submit(call, &signer, wait, |step| {
				if !quiet {
					match step {
						Progress::Submitted => eprintln!("submitted"),
						Progress::InBlock(hash) => eprintln!("in block {hash}"),
						Progress::Finalized(hash) => eprintln!("finalized in {hash}"),
						_ => {}
					}
				}
			})
			.await?;
		if self.cli.json {
			show::json(&included);
		} else {
			for event in &included.events {
				if !matches!(event.pallet.as_str(), "System" | "TransactionPayment" | "Balances") {
					println!("{}.{} {}", event.pallet, event.name, event.fields);
				}
			}
		}
		Ok(included)
	}
}

fn amount(text: &str) -> Result<u128, Fail> {
	parse_stint(text).map_err(Fail::Input)
}

fn device(text: &str) -> Result<DeviceId, Fail> {
	stint_client::parse_hex32(text)
		.ok_or_else(|| Fail::Input(format!("`{text}` is not a device id (32 bytes of hex)")))
}

async fn run(cli: Cli) -> Outcome {
	let client = Client::connect(&cli.url).await?;
	let ctx = Ctx { cli, client };
	let tx = runtime::tx();
	match &ctx.cli.command {
		Command::Status => show::status(&ctx.client.status().await?, ctx.cli.json),
		Command::Balance { account } => {
			let who = ctx.account(account)?;
			let free = ctx.client.free_balance(&who).await?;
			if ctx.cli.json {
				show::json(&serde_json::json!({ "account": who.to_string(), "free": free }));
			} else {
				println!("{who}: {} free", format_stint(free));
			}
		}
		Command::Order(cmd) => match cmd {
			OrderCmd::Create { file, deposit } => {
				let text = std::fs::read_to_string(file)
					.map_err(|e| Fail::Input(format!("cannot read {}: {e}", file.display())))?;
				let mut order = job::parse(&text)
					.map_err(|e| Fail::Input(format!("{}: {e}", file.display())))?;
				if let Some(deposit) = deposit {
					order.deposit = amount(deposit)?;
				}
				let included = ctx
					.send(&tx.market().create_order(
						stint_client::Static(order.spec),
						order.terms,
						order.deposit,
					))
					.await?;
				if let Some(created) =
					included.find_first::<runtime::market::events::OrderCreated>()
				{
					if !ctx.cli.json {
						println!("order {} created", created.order);
					}
				}
			}
			OrderCmd::List { limit } => {
				let orders = ctx.client.open_orders(None, *limit).await?;
				show::orders(&orders, ctx.cli.json);
			}
			OrderCmd::Show { order } => {
				let record = ctx
					.client
					.order(*order)
					.await?
					.ok_or_else(|| Error::NotFound(format!("order {order}")))?;
				let bids = ctx.client.bids(*order).await?;
				show::order(*order, &record, &bids, ctx.cli.json);
			}
			OrderCmd::Cancel { order } => {
				ctx.send(&tx.market().cancel_order(*order)).await?;
			}
			OrderCmd::Accept { order, provider } => {
				let provider = parse_account(provider)?;
				ctx.send(&tx.market().accept_bid(*order, provider)).await?;
			}
		},
		Command::Bid(cmd) => match cmd {
			BidCmd::Servable { limit } => {
				let who = ctx.account(&None)?;
				let servable = ctx.client.servable_orders(&who, None, *limit).await?;
				show::servable(&servable, ctx.cli.json);
			}
			BidCmd::Place { order, price, devices } => {
				let price = amount(price)?;
				let devices = if devices.is_empty() {
					let who = ctx.account(&None)?;
					ctx.client
						.servable_orders(&who, None, u32::MAX)
						.await?
						.into_iter()
						.find(|(id, _)| id == order)
						.map(|(_, devices)| devices)
						.ok_or_else(|| {
							Fail::Input(format!(
								"none of your free GPUs can serve order {order} now (is it open, \
								 and are you active and in its region?)"
							))
						})?
				} else {
					devices.iter().map(|d| device(d)).collect::<Result<_, _>>()?
				};
				ctx.send(&tx.market().place_bid(*order, price, devices)).await?;
			}
			BidCmd::Retract { order } => {
				ctx.send(&tx.market().retract_bid(*order)).await?;
			}
		},
		Command::Lease(cmd) => match cmd {
			LeaseCmd::List { buyer: Some(buyer), .. } => {
				let who = if buyer == "me" { ctx.account(&None)? } else { parse_account(buyer)? };
				show::leases(&ctx.client.leases_of_buyer(&who).await?, ctx.cli.json);
			}
			LeaseCmd::List { provider, buyer: None } => {
				let who = ctx.account(provider)?;
				show::leases(&ctx.client.leases_of(&who).await?, ctx.cli.json);
			}
			LeaseCmd::Show { lease } => {
				let record = ctx
					.client
					.lease(*lease)
					.await?
					.ok_or_else(|| Error::NotFound(format!("lease {lease}")))?;
				show::lease(*lease, &record, ctx.cli.json);
			}
			LeaseCmd::Ack { lease } => {
				ctx.send(&tx.leases().ack_lease(*lease)).await?;
			}
			LeaseCmd::Close { lease } => {
				ctx.send(&tx.leases().close_lease(*lease)).await?;
			}
			LeaseCmd::Notice { lease } => {
				ctx.send(&tx.leases().give_notice(*lease)).await?;
			}
			LeaseCmd::Terminate { lease } => {
				ctx.send(&tx.leases().terminate(*lease)).await?;
			}
		},
		Command::Stream(cmd) => match cmd {
			StreamCmd::Show { stream } => {
				let view = ctx
					.client
					.stream(*stream)
					.await?
					.ok_or_else(|| Error::NotFound(format!("open stream {stream}")))?;
				show::stream(*stream, &view, ctx.cli.json);
			}
			StreamCmd::TopUp { stream, amount: text } => {
				ctx.send(&tx.streams().top_up(*stream, amount(text)?)).await?;
			}
			StreamCmd::Settle { stream } => {
				ctx.send(&tx.streams().settle(*stream)).await?;
			}
			StreamCmd::Withdraw { stream } => {
				ctx.send(&tx.streams().withdraw(*stream)).await?;
			}
		},
		Command::Provider(cmd) => match cmd {
			ProviderCmd::Show { account } => {
				let who = ctx.account(account)?;
				let record = ctx
					.client
					.provider(&who)
					.await?
					.ok_or_else(|| Error::NotFound(format!("provider {who}")))?;
				show::provider(&who, &record, ctx.cli.json);
			}
			ProviderCmd::Register { file, probe } | ProviderCmd::Update { file, probe } => {
				let text = std::fs::read_to_string(file)
					.map_err(|e| Fail::Input(format!("cannot read {}: {e}", file.display())))?;
				let in_file = |e| Fail::Input(format!("{}: {e}", file.display()));
				let parsed = machine::parse(&text).map_err(in_file)?;
				let source = match probe.probe {
					true => machine::HardwareSource::Probe(&probe.scratch),
					false => machine::HardwareSource::File,
				};
				let provider =
					machine::provider(parsed, source).map_err(|refusal| match refusal {
						machine::Refusal::File(e) => in_file(e),
						machine::Refusal::Probe(e) => Fail::Probe(e),
					})?;
				if matches!(cmd, ProviderCmd::Register { .. }) {
					ctx.send(&tx.providers().register(
						provider.info,
						provider.worker_key,
						provider.hardware,
					))
					.await?;
				} else {
					ctx.send(&tx.providers().update_info(provider.info)).await?;
					ctx.send(&tx.providers().update_hardware(provider.hardware)).await?;
				}
			}
			ProviderCmd::RotateKey { worker_key } => {
				let key = stint_client::parse_worker_key(worker_key)?;
				ctx.send(&tx.providers().rotate_worker_key(key)).await?;
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
		},
		Command::Bond(cmd) => match cmd {
			BondCmd::Show { account } => {
				let who = ctx.account(account)?;
				let ledger = ctx
					.client
					.bond(&who)
					.await?
					.ok_or_else(|| Error::NotFound(format!("bond of {who}")))?;
				show::bond(&who, &ledger, ctx.cli.json);
			}
			BondCmd::Bond { amount: text } => {
				ctx.send(&tx.bonds().bond(amount(text)?)).await?;
			}
			BondCmd::More { amount: text } => {
				ctx.send(&tx.bonds().bond_more(amount(text)?)).await?;
			}
			BondCmd::Unbond { amount: text } => {
				ctx.send(&tx.bonds().unbond(amount(text)?)).await?;
			}
			BondCmd::Withdraw => {
				ctx.send(&tx.bonds().withdraw_unbonded()).await?;
			}
		},
		Command::Results(ResultsCmd::Fetch { lease, out }) => {
			let record = ctx
				.client
				.lease(*lease)
				.await?
				.ok_or_else(|| Error::NotFound(format!("lease {lease}")))?;
			let result = match (&record.result, &record.status) {
				(
					Some(result),
					stint_client::LeaseStatus::Completed | stint_client::LeaseStatus::Failed,
				) => result.0,
				_ => return Err(Error::NotFound(format!("a final result of lease {lease}")).into()),
			};
			let provider = ctx
				.client
				.provider(&record.provider)
				.await?
				.ok_or_else(|| Error::NotFound(format!("provider {}", record.provider)))?;
			let endpoint = String::from_utf8_lossy(&provider.endpoint.0).into_owned();
			let (root, out) = (result.output_root, out.clone());
			let lease = *lease;
			let fetched =
				tokio::task::spawn_blocking(move || results::fetch(&endpoint, lease, root, &out))
					.await
					.map_err(|e| Fail::Input(e.to_string()))?
					.map_err(|e| match e {
						results::FetchError::Mismatch(why) => Fail::Verification(why),
						results::FetchError::Provider(why) => Fail::Client(Error::Rpc(why)),
						results::FetchError::Local(why) => Fail::Input(why),
					})?;
			if ctx.cli.json {
				show::json(&fetched);
			} else {
				for file in &fetched {
					println!("{}  {} bytes  verified", file.path, file.size);
				}
				println!("{} file(s) match the output root 0x{}", fetched.len(), hex::encode(root));
			}
		}
		Command::Report(cmd) => match cmd {
			ReportCmd::NoShow { lease } => {
				ctx.send(&tx.leases().report_no_show(*lease)).await?;
			}
			ReportCmd::Missed { lease } => {
				ctx.send(&tx.leases().report_missed_result(*lease)).await?;
			}
		},
	}
	Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
	let cli = Cli::parse();
	let json = cli.json;
	match run(cli).await {
		Ok(()) => ExitCode::SUCCESS,
		Err(fail) => {
			if json {
				show::json(&serde_json::json!({ "error": fail.message(), "code": fail.code() }));
			}
			eprintln!("error: {}", fail.message());
			ExitCode::from(fail.code())
		}
	}
}
