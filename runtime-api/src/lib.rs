//! The runtime API of Stint's market: what a provider's worker reconciles from (its live leases,
//! the orders it can serve) and what clients show (orders, leases, streams), without scanning
//! storage themselves.
//!
//! The order and lease types are parameters, so this crate depends on no pallet: the runtime
//! names `pallet_market::Order` and `pallet_leases::Lease`, and a client decodes them from the
//! metadata's type registry.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

use alloc::vec::Vec;
use codec::{Codec, Decode, Encode};
use scale_info::TypeInfo;
use stint_primitives::{DeviceId, JobSpec, LeaseId, NextDuty};

/// Identifies an order.
pub type OrderId = u64;
/// Identifies a payment stream.
pub type StreamId = u64;

/// A payment stream as of the block the API was called at.
#[derive(Clone, PartialEq, Eq, Debug, Encode, Decode, TypeInfo)]
pub struct StreamView<Balance, BlockNumber> {
	/// Owed to the payee now and not yet paid.
	pub owed: Balance,
	/// Escrow still held (including what is owed).
	pub remaining: Balance,
	/// The block the escrow runs out, while the stream is charging.
	pub depletes_at: Option<BlockNumber>,
}

/// One page of the orders a provider can serve, and where to go on from.
#[derive(Clone, PartialEq, Eq, Debug, Encode, Decode, TypeInfo)]
pub struct ServablePage {
	/// Orders with the devices the provider would offer for each.
	pub orders: Vec<(OrderId, Vec<DeviceId>)>,
	/// The id to pass as `start_after` for the next page; `None` once every open order was
	/// looked at.
	pub next: Option<OrderId>,
}

/// A live lease, the job it runs, and what its provider must do next by when.
#[derive(Clone, PartialEq, Eq, Debug, Encode, Decode, TypeInfo)]
pub struct Duty<Lease, BlockNumber> {
	pub id: LeaseId,
	pub lease: Lease,
	/// The order's job spec (`None` only if the order is no longer stored).
	pub spec: Option<JobSpec>,
	pub next: NextDuty<BlockNumber>,
}

polkadot_sdk::sp_api::decl_runtime_apis! {
	/// Reads of the market, the leases and the streams.
	///
	/// Version 2: `duties`, `bids_of` and `acting_for`; `servable_orders` takes a provider or
	/// one of its worker keys and leaves out orders the provider bid on and full ones.
	/// Version 3: `servable_orders` reads a bounded number of orders per call and returns a
	/// page with the cursor to go on from.
	#[api_version(3)]
	pub trait MarketApi<AccountId, Balance, BlockNumber, Order, Lease, Bid>
	where
		AccountId: Codec,
		Balance: Codec,
		BlockNumber: Codec,
		Order: Codec,
		Lease: Codec,
		Bid: Codec,
	{
		/// An order, open or leased.
		fn order(id: OrderId) -> Option<Order>;
		/// Open orders, at most `limit`, after `start_after` in storage order (page with the last
		/// id returned).
		fn open_orders(start_after: Option<OrderId>, limit: u32) -> Vec<(OrderId, Order)>;
		/// Open orders still taking bids that `provider` can serve now, each with the devices it
		/// would offer (uncommitted, meeting the requirements, on one machine, checked as a bid
		/// would be). `provider` may be a worker key's account: then only its devices are
		/// offered. Orders the provider already bid on and orders with the most bids are left
		/// out. At most `limit`, after `start_after`; each call reads a bounded number of open
		/// orders, so page on with `next` until it is `None` to see them all.
		fn servable_orders(
			provider: AccountId,
			start_after: Option<OrderId>,
			limit: u32,
		) -> ServablePage;
		/// A lease, live or ended.
		fn lease(id: LeaseId) -> Option<Lease>;
		/// The live leases of `provider`: what its worker must be running.
		fn leases_of(provider: AccountId) -> Vec<(LeaseId, Lease)>;
		/// A stream's money now, if it is open.
		fn stream(id: StreamId) -> Option<StreamView<Balance, BlockNumber>>;
		/// What `who` (a provider, or one of its worker keys: the leases on its devices) must do:
		/// each live lease with its job spec and the next duty's deadline, read from the chain.
		fn duties(who: AccountId) -> Vec<Duty<Lease, BlockNumber>>;
		/// The standing bids of `who` (a provider, or one of its worker keys), by order.
		fn bids_of(who: AccountId) -> Vec<(OrderId, Bid)>;
		/// Whom `who` acts for: itself if it is a provider, or the provider that bound it as a
		/// worker key, with the devices the key acts for (`None` for the provider itself).
		fn acting_for(who: AccountId) -> Option<(AccountId, Option<Vec<DeviceId>>)>;
	}
}
