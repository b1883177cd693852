//! `stint lease`: list, show, acknowledge, close, give notice, terminate, settle the verdict on
//! a result or dispute it, and read the logs.

use std::{io::Read, time::Duration};

use clap::Subcommand;
use stint_client::{parse_account, runtime, Error, LeaseStatus};
use stint_primitives::output_root;

use crate::{
	commands::results::{authorisation, fetch_error, final_result, lease_and_endpoint},
	ctx::{Ctx, Fail, Outcome},
	results::{FetchError, Source},
	show,
};

#[derive(Subcommand)]
pub enum LeaseCmd {
	/// Live leases of a provider (default: the signer), or every lease of a buyer.
	List {
		provider: Option<String>,
		/// List the leases this buyer pays for instead (`me` for the signer).
		#[arg(long, conflicts_with = "provider")]
		buyer: Option<String>,
	},
	/// A lease.
	Show { lease: u64 },
	/// The provider (or its worker key) acknowledges: payment starts.
	Ack { lease: u64 },
	/// The buyer ends the lease: paid to date, the rest refunded.
	Close { lease: u64 },
	/// The provider (or its worker key) gives the notice the order asked for.
	Notice { lease: u64 },
	/// The provider ends an open-ended lease (slashed unless notice was served; with it, the
	/// buyer's verdict decides). A fixed lease ends by its result.
	Terminate { lease: u64 },
	/// The buyer accepts the result (or served notice) that ended the lease: the provider's
	/// holdback is paid, its collateral unlocked, and the outcome counts, now.
	AcceptResult { lease: u64 },
	/// The buyer objects within the verdict window: the provider's reputation records a failed
	/// delivery and, if it ended the lease early, it is slashed for the time not delivered.
	Object { lease: u64 },
	/// Anyone settles a result's verdict once its window passed without an objection.
	ConfirmResult { lease: u64 },
	/// The buyer of a deterministic order disputes the result within the verdict window: it
	/// posts a bond (twice the lease's run at its price, at least the chain's least), and a
	/// provider drawn from a later block's hash re-executes the job. The same outputs and the
	/// bond's remainder goes to the provider; others, and the provider is slashed and the
	/// buyer refunded, bond included. `lease show` follows it.
	Dispute { lease: u64 },
	/// The job's output on stdout and stderr, from its provider, asking as the buyer (`--key`).
	/// Once the lease has its result, the logs are checked against the signed receipt.
	Logs {
		lease: u64,
		/// Keep printing as the job writes, until the lease ends.
		#[arg(long)]
		follow: bool,
	},
}

pub async fn run(ctx: &Ctx, cmd: &LeaseCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		LeaseCmd::List { buyer: Some(buyer), .. } => {
			let who = if buyer == "me" { ctx.account(&None)? } else { parse_account(buyer)? };
			show::leases(&ctx.client.leases_of_buyer(&who).await?, ctx.json());
		}
		LeaseCmd::List { provider, buyer: None } => {
			let who = ctx.account(provider)?;
			show::leases(&ctx.client.leases_of(&who).await?, ctx.json());
		}
		LeaseCmd::Show { lease } => {
			let record = ctx
				.client
				.lease(*lease)
				.await?
				.ok_or_else(|| Error::NotFound(format!("lease {lease}")))?;
			let verdict = ctx.client.verdict(*lease).await?;
			let dispute = ctx.client.dispute(*lease).await?;
			let replicas = match record.replicas > 1 {
				true => ctx.client.replicas(record.order).await?,
				false => None,
			};
			let judged = show::Judged {
				verdict: verdict.as_ref(),
				dispute: dispute.as_ref(),
				replicas: replicas.as_ref(),
			};
			show::lease(*lease, &record, &judged, ctx.json());
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
		LeaseCmd::AcceptResult { lease } => {
			ctx.send(&tx.leases().accept_result(*lease)).await?;
		}
		LeaseCmd::Object { lease } => {
			ctx.send(&tx.leases().object_to_result(*lease)).await?;
		}
		LeaseCmd::ConfirmResult { lease } => {
			ctx.send(&tx.leases().confirm_result(*lease)).await?;
		}
		LeaseCmd::Dispute { lease } => {
			ctx.send(&tx.leases().dispute(*lease)).await?;
		}
		LeaseCmd::Logs { lease, follow } => logs(ctx, *lease, *follow).await?,
	}
	Ok(())
}

/// What has been read of each log so far.
#[derive(Default)]
struct Logs {
	stdout: Vec<u8>,
	stderr: Vec<u8>,
}

/// Reads what is new in `stream` (`stdout` or `stderr`) from `offset`.
fn read_from(source: &Source, stream: &str, offset: usize) -> Result<Vec<u8>, FetchError> {
	let mut bytes = Vec::new();
	source
		.get(&format!("logs/{stream}?offset={offset}"))?
		.into_reader()
		.take(64 << 20)
		.read_to_end(&mut bytes)
		.map_err(|e| FetchError::Provider(format!("{}/logs/{stream}: {e}", source.base)))?;
	Ok(bytes)
}

async fn logs(ctx: &Ctx, lease: u64, follow: bool) -> Outcome {
	use std::io::Write;
	let mut seen = Logs::default();
	loop {
		let (record, endpoint) = lease_and_endpoint(&ctx.client, lease).await?;
		let ended = !matches!(
			record.status,
			LeaseStatus::AwaitingAck | LeaseStatus::Running | LeaseStatus::Suspended
		);
		let source = Source::new(&endpoint, lease, authorisation(ctx, lease, 300)?);
		let (from_out, from_err) = (seen.stdout.len(), seen.stderr.len());
		let (out, err) = tokio::task::spawn_blocking(move || {
			Ok::<_, FetchError>((
				read_from(&source, "stdout", from_out)?,
				read_from(&source, "stderr", from_err)?,
			))
		})
		.await
		.map_err(|e| Fail::Input(e.to_string()))?
		.map_err(fetch_error)?;
		std::io::stdout().write_all(&out).map_err(|e| Fail::Input(e.to_string()))?;
		std::io::stderr().write_all(&err).map_err(|e| Fail::Input(e.to_string()))?;
		seen.stdout.extend_from_slice(&out);
		seen.stderr.extend_from_slice(&err);
		if !follow || ended {
			return verify(ctx, lease, &record, &seen, &endpoint).await;
		}
		tokio::time::sleep(Duration::from_secs(1)).await;
	}
}

/// Checks the logs read against the receipt, once the lease has its result.
async fn verify(
	ctx: &Ctx,
	lease: u64,
	record: &stint_client::LeaseRecord,
	logs: &Logs,
	endpoint: &str,
) -> Outcome {
	let Some(commitment) = final_result(record) else {
		eprintln!("(lease {lease} has no result yet: these logs are not verified)");
		return Ok(());
	};
	let source = Source::new(endpoint, lease, authorisation(ctx, lease, 300)?);
	let genesis = ctx.client.genesis_hash();
	let (receipt, _) =
		tokio::task::spawn_blocking(move || source.receipt(&commitment, &genesis, lease))
			.await
			.map_err(|e| Fail::Input(e.to_string()))?
			.map_err(fetch_error)?;
	let files = [("stderr", &logs.stderr), ("stdout", &logs.stdout)].map(|(name, bytes)| {
		stint_primitives::OutputFile {
			path: name.as_bytes().to_vec(),
			size: bytes.len() as u64,
			content_hash: stint_primitives::blake2_256(bytes),
		}
	});
	if output_root(&files) != receipt.logs_root {
		return Err(Fail::Verification(format!(
			"the logs of lease {lease} do not match its signed receipt"
		)));
	}
	eprintln!("(logs of lease {lease} verified against its signed receipt)");
	Ok(())
}
