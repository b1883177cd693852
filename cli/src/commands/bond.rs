//! `stint bond`: providers bond, unbond and withdraw.

use clap::Subcommand;
use stint_client::{runtime, Error};

use crate::{
	ctx::{amount, Ctx, Outcome},
	show,
};

#[derive(Subcommand)]
pub enum BondCmd {
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

pub async fn run(ctx: &Ctx, cmd: &BondCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		BondCmd::Show { account } => {
			let who = ctx.account(account)?;
			let ledger = ctx
				.client
				.bond(&who)
				.await?
				.ok_or_else(|| Error::NotFound(format!("bond of {who}")))?;
			show::bond(&who, &ledger, ctx.json());
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
	}
	Ok(())
}
