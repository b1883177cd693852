//! `stint report`: anyone reports a provider's fault (and earns the reporter's share).

use clap::Subcommand;
use stint_client::runtime;

use crate::ctx::{Ctx, Outcome};

#[derive(Subcommand)]
pub enum ReportCmd {
	/// The provider did not acknowledge in time.
	NoShow { lease: u64 },
	/// The lease missed its result or checkpoint.
	Missed { lease: u64 },
}

pub async fn run(ctx: &Ctx, cmd: &ReportCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		ReportCmd::NoShow { lease } => {
			ctx.send(&tx.leases().report_no_show(*lease)).await?;
		}
		ReportCmd::Missed { lease } => {
			ctx.send(&tx.leases().report_missed_result(*lease)).await?;
		}
	}
	Ok(())
}
