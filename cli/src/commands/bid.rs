//! `stint bid`: providers (or their worker keys) find orders to serve, place and retract bids.

use clap::Subcommand;
use stint_client::runtime;

use crate::{
	ctx::{amount, device, Ctx, Fail, Outcome},
	show,
};

#[derive(Subcommand)]
pub enum BidCmd {
	/// Open orders the signer's GPUs can serve now, with the devices it would offer (a worker
	/// key: its own machine's GPUs).
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
		/// Devices (ids in hex, or GPU UUIDs), comma-separated.
		#[arg(long, value_delimiter = ',')]
		devices: Vec<String>,
	},
	/// Withdraws the signer's (or its provider's) bid.
	Retract { order: u64 },
	/// Drops another provider's bid that can no longer win (its devices went to another lease,
	/// it paused or left, its machine changed): its deposit goes to the order's buyer. Makes
	/// room on a full order, whatever the dead bid's price.
	Drop { order: u64, provider: String },
}

pub async fn run(ctx: &Ctx, cmd: &BidCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		BidCmd::Servable { limit } => {
			let who = ctx.account(&None)?;
			let servable = ctx.client.all_servable_orders(&who, *limit).await?;
			show::servable(&servable, ctx.json());
		}
		BidCmd::Place { order, price, devices } => {
			let price = amount(price)?;
			let devices = if devices.is_empty() {
				let who = ctx.account(&None)?;
				ctx.client
					.all_servable_orders(&who, u32::MAX)
					.await?
					.into_iter()
					.find(|(id, _)| id == order)
					.map(|(_, devices)| devices)
					.ok_or_else(|| {
						Fail::Input(format!(
							"none of your free GPUs can serve order {order} now (is it open, have \
							 you bid on it already, are you active and in its region?)"
						))
					})?
			} else {
				devices.iter().map(|d| device(d)).collect::<Result<_, _>>()?
			};
			ctx.send(&tx.market().place_bid(*order, price, stint_client::Bounded(devices))).await?;
		}
		BidCmd::Retract { order } => {
			ctx.send(&tx.market().retract_bid(*order)).await?;
		}
		BidCmd::Drop { order, provider } => {
			let provider = stint_client::parse_account(provider)?;
			ctx.send(&tx.market().drop_dead_bid(*order, provider)).await?;
		}
	}
	Ok(())
}
