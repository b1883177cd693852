//! `stint order`: buyers post, list, show, cancel orders and accept bids; anyone prunes old
//! leased orders.

use std::path::PathBuf;

use clap::Subcommand;
use stint_client::{parse_account, runtime, Error};

use crate::{
	ctx::{amount, read_file, Ctx, Fail, Outcome},
	show,
};

#[derive(Subcommand)]
pub enum OrderCmd {
	/// Posts the order described by a TOML job file (see docs/buyer.md).
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
	/// Cancels an open order: every bid is released and each bidder whose bid could still win is
	/// paid the chain's bid compensation (0.03 STINT on Stint's runtime) from the escrow; the rest
	/// is refunded.
	Cancel { order: u64 },
	/// Turns down a provider's bid on your open order: a bid that could still win is released,
	/// its provider paid the bid compensation and barred from bidding on this order again; one
	/// that cannot is dropped and its deposit is yours.
	Reject { order: u64, provider: String },
	/// Closes an order whose bid window (or time to accept) is over but which the chain's block
	/// hook has not reached yet, as the hook would: free. Providers' workers do it for the
	/// orders they bid on.
	Close { order: u64 },
	/// Prunes a leased order a week after its lease ended, with its lease and stream: the
	/// storage deposit goes back to the buyer (a tenth to you, if you are not the buyer).
	Reap { order: u64 },
	/// Accepts a provider's bid as it stands now (its price and devices are named in the
	/// transaction: if the provider changes its bid before it lands, the chain refuses it).
	Accept {
		order: u64,
		provider: String,
		/// The most you accept per block, in STINT: refused here if the bid is above it.
		#[arg(long)]
		max_price: Option<String>,
	},
}

pub async fn run(ctx: &Ctx, cmd: &OrderCmd) -> Outcome {
	let tx = runtime::tx();
	match cmd {
		OrderCmd::Create { file, deposit } => {
			let text = read_file(file)?;
			let mut order = stint_client::job_file::parse(&text)
				.map_err(|e| Fail::Input(format!("{}: {e}", file.display())))?;
			if let Some(deposit) = deposit {
				order.deposit = amount(deposit)?;
			}
			let least = ctx.client.order_minimums().await?;
			order.complete(least.termination_notice, least.holdback);
			let call = tx.market().create_order(
				stint_client::Static(order.spec),
				order.terms,
				order.deposit,
			);
			let included = ctx.send(&call).await?;
			if let Some(created) = included.find_first::<runtime::market::events::OrderCreated>() {
				if !ctx.json() {
					println!("order {} created", created.order);
				}
			}
		}
		OrderCmd::List { limit } => {
			let orders = ctx.client.open_orders(None, *limit).await?;
			show::orders(&orders, ctx.json());
		}
		OrderCmd::Show { order } => {
			let record = ctx
				.client
				.order(*order)
				.await?
				.ok_or_else(|| Error::NotFound(format!("order {order}")))?;
			let bids = ctx.client.bids(*order).await?;
			show::order(*order, &record, &bids, ctx.json());
		}
		OrderCmd::Cancel { order } => {
			ctx.send(&tx.market().cancel_order(*order)).await?;
		}
		OrderCmd::Reject { order, provider } => {
			let provider = parse_account(provider)?;
			ctx.send(&tx.market().reject_bid(*order, provider)).await?;
		}
		OrderCmd::Close { order } => {
			ctx.send(&tx.market().close_order(*order)).await?;
		}
		OrderCmd::Reap { order } => {
			ctx.send(&tx.market().reap_order(*order)).await?;
		}
		OrderCmd::Accept { order, provider, max_price } => {
			let provider = parse_account(provider)?;
			let bids = ctx.client.bids(*order).await?;
			let (_, bid) = bids
				.into_iter()
				.find(|(who, _)| who == &provider)
				.ok_or_else(|| Error::NotFound(format!("a bid of {provider} on order {order}")))?;
			if let Some(max) = max_price {
				if bid.price_per_block > amount(max)? {
					return Err(Fail::Input(format!(
						"the bid is {} per block, above your --max-price {max}",
						stint_client::format_stint(bid.price_per_block)
					)));
				}
			}
			let devices = bid.devices.0.clone();
			let call = tx.market().accept_bid(
				*order,
				provider,
				bid.price_per_block,
				stint_client::Bounded(devices),
			);
			ctx.send(&call).await?;
		}
	}
	Ok(())
}
