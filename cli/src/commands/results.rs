//! `stint results fetch`: a lease's outputs, receipt and logs, verified against its signed result.

use std::{path::PathBuf, time::SystemTime};

use clap::Subcommand;
use stint_client::{Client, Error, LeaseRecord, LeaseStatus};
use stint_primitives::{FetchAuth, ResultCommitment, SignedFetchAuth};

use crate::{
	ctx::{Ctx, Fail, Outcome},
	results::{self, FetchError, Source},
	show,
};

#[derive(Subcommand)]
pub enum ResultsCmd {
	/// Downloads a finished lease's outputs, receipt and logs from its provider into DIR
	/// (`outputs/`, `logs/`, `receipt.json`), asking as the buyer (`--key`). Refuses a manifest
	/// that does not match the on-chain output root, a receipt that does not match its hash,
	/// and deletes any file that does not match.
	Fetch {
		lease: u64,
		#[arg(long)]
		out: PathBuf,
		/// How long the signed request stays valid, in seconds (the provider honours at most an
		/// hour).
		#[arg(long, default_value_t = 300)]
		valid_for: u64,
	},
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
	SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The `x-stint-fetch-auth` value for `lease`, signed by `--key`, if one was given.
pub fn authorisation(ctx: &Ctx, lease: u64, valid_for: u64) -> Result<Option<String>, Fail> {
	if ctx.options.key.is_none() {
		return Ok(None);
	}
	let signer = ctx.signer()?;
	let auth = FetchAuth::new(ctx.client.genesis_hash(), lease, unix_now() + valid_for);
	let signature = signer.sign(&auth.signing_bytes()).0;
	Ok(Some(SignedFetchAuth { auth, signature }.to_header()))
}

/// The lease and where its provider serves results.
pub async fn lease_and_endpoint(
	client: &Client,
	lease: u64,
) -> Result<(LeaseRecord, String), Fail> {
	let record =
		client.lease(lease).await?.ok_or_else(|| Error::NotFound(format!("lease {lease}")))?;
	let provider = client
		.provider(&record.provider)
		.await?
		.ok_or_else(|| Error::NotFound(format!("provider {}", record.provider)))?;
	let endpoint = String::from_utf8_lossy(&provider.endpoint.0).into_owned();
	if results::check_endpoint(&endpoint).map_err(fetch_error)? {
		eprintln!(
			"warning: the provider serves results over plain http ({endpoint}): the fetch's \
			 authorisation travels in clear"
		);
	}
	Ok((record, endpoint))
}

/// The final result of a lease that has one.
pub fn final_result(record: &LeaseRecord) -> Option<ResultCommitment> {
	match (&record.result, &record.status) {
		(Some(result), LeaseStatus::Completed | LeaseStatus::Failed) => Some(result.0),
		_ => None,
	}
}

pub fn fetch_error(error: FetchError) -> Fail {
	match error {
		FetchError::Mismatch(why) => Fail::Verification(why),
		FetchError::Unauthorised(why) => Fail::Unauthorised(why),
		FetchError::Provider(why) => Fail::Client(Error::Rpc(why)),
		FetchError::Local(why) => Fail::Input(why),
	}
}

pub async fn run(ctx: &Ctx, cmd: &ResultsCmd) -> Outcome {
	let ResultsCmd::Fetch { lease, out, valid_for } = cmd;
	let (record, endpoint) = lease_and_endpoint(&ctx.client, *lease).await?;
	let commitment = final_result(&record)
		.ok_or_else(|| Error::NotFound(format!("a final result of lease {lease}")))?;
	let source = Source::new(&endpoint, *lease, authorisation(ctx, *lease, *valid_for)?);
	let (genesis, lease, out) = (ctx.client.genesis_hash(), *lease, out.clone());
	let report = tokio::task::spawn_blocking(move || {
		results::fetch(&source, &commitment, &genesis, lease, &out)
	})
	.await
	.map_err(|e| Fail::Input(e.to_string()))?
	.map_err(fetch_error)?;
	if ctx.json() {
		show::json(&report);
	} else {
		for file in &report.outputs {
			println!("outputs/{}  {} bytes  verified", file.path, file.size);
		}
		for file in &report.logs {
			println!("logs/{}  {} bytes  verified", file.path, file.size);
		}
		println!(
			"{} output file(s) match the output root 0x{}; receipt and logs match the receipt hash \
			 (exit code {}, {}, {} GPU-seconds)",
			report.outputs.len(),
			hex::encode(commitment.output_root),
			report.exit_code,
			report.stop_reason,
			report.gpu_seconds
		);
	}
	Ok(())
}
