//! `stint`: buy and sell GPU time on Stint from a terminal.
//!
//! Human-readable output by default, `--json` for scripts. Exit codes: 0 done, 1 unexpected
//! (including a provider that cannot be reached), 2 bad usage, 3 no connection, 4 bad key, 5 bad
//! input (a malformed job file, amount or address), 6 the chain refused (its error is named),
//! 7 not found, 8 what a provider served does not match the chain, 9 the probe found no GPU (or
//! a GPU failed its self-test),
//! 10 the provider refused the request (not the buyer's, or expired).
//!
//! Each command group is a module of [`commands`], owning its clap enum and its `run`.

mod commands;
mod ctx;
mod machine;
mod results;
mod show;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use commands::{
	bid::BidCmd, bond::BondCmd, lease::LeaseCmd, order::OrderCmd, provider::ProviderCmd,
	report::ReportCmd, results::ResultsCmd, stream::StreamCmd,
};
use ctx::{Ctx, Options, Outcome};
use stint_client::{format_stint, Client};

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
	/// Send transactions without trying them on the best block first (a refused call then pays
	/// its fee).
	#[arg(long, global = true)]
	no_dry_run: bool,
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
	/// Leases: list, show, acknowledge, close, give notice, terminate, logs.
	#[command(subcommand)]
	Lease(LeaseCmd),
	/// Payment streams: show, top up, settle, withdraw.
	#[command(subcommand)]
	Stream(StreamCmd),
	/// Providers: register, update, worker keys, pause, resume, exit, deregister.
	#[command(subcommand)]
	Provider(ProviderCmd),
	/// Providers: bond, unbond, withdraw.
	#[command(subcommand)]
	Bond(BondCmd),
	/// Buyers: download a lease's outputs, receipt and logs, verified against its signed result.
	#[command(subcommand)]
	Results(ResultsCmd),
	/// Anyone: report a provider's no-show or missed result (and earn the reporter's share).
	#[command(subcommand)]
	Report(ReportCmd),
}

async fn run(cli: Cli) -> Outcome {
	let client = Client::connect(&cli.url).await?;
	let options = Options {
		json: cli.json,
		key: cli.key,
		no_wait_finality: cli.no_wait_finality,
		no_dry_run: cli.no_dry_run,
	};
	let ctx = Ctx { options, client };
	match &cli.command {
		Command::Status => show::status(&ctx.client.status().await?, ctx.json()),
		Command::Balance { account } => {
			let who = ctx.account(account)?;
			let free = ctx.client.free_balance(&who).await?;
			if ctx.json() {
				show::json(&serde_json::json!({ "account": who.to_string(), "free": free }));
			} else {
				println!("{who}: {} free", format_stint(free));
			}
		}
		Command::Order(cmd) => commands::order::run(&ctx, cmd).await?,
		Command::Bid(cmd) => commands::bid::run(&ctx, cmd).await?,
		Command::Lease(cmd) => commands::lease::run(&ctx, cmd).await?,
		Command::Stream(cmd) => commands::stream::run(&ctx, cmd).await?,
		Command::Provider(cmd) => commands::provider::run(&ctx, cmd).await?,
		Command::Bond(cmd) => commands::bond::run(&ctx, cmd).await?,
		Command::Results(cmd) => commands::results::run(&ctx, cmd).await?,
		Command::Report(cmd) => commands::report::run(&ctx, cmd).await?,
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
