//! `stint stream`: payment streams: show, top up, settle, withdraw.

use clap::Subcommand;
use stint_client::{runtime, Error};

use crate::{
	ctx::{amount, Ctx, Outcome},
	show,
};

#[derive(Subcommand)]
pub enum StreamCmd {
	/// What a stream owes, holds, and when it runs out.
	Show { stream: u64 },
	/// Adds escrow (resumes a suspended lease).
	TopUp { stream: u64, amount: String },
	/// Pays the provider what is owed (anyone).
	Settle { stream: u64 },
	/// The provider collects what is owed.
	Withdraw { stream: u64 },
}

pub async fn run(ctx: &Ctx, cmd: &StreamCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		StreamCmd::Show { stream } => {
			let view = ctx
				.client
				.stream(*stream)
				.await?
				.ok_or_else(|| Error::NotFound(format!("open stream {stream}")))?;
			show::stream(*stream, &view, ctx.json());
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
	}
	Ok(())
}
