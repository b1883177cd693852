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
use stint_primitives::{DeviceId, LeaseId};

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

polkadot_sdk::sp_api::decl_runtime_apis! {
	/// Reads of the market, the leases and the streams.
	pub trait MarketApi<AccountId, Balance, BlockNumber, Order, Lease>
	where
		AccountId: Codec,
		Balance: Codec,
		BlockNumber: Codec,
		Order: Codec,
		Lease: Codec,
	{
		/// An order, open or leased.
		fn order(id: OrderId) -> Option<Order>;
		/// Open orders, at most `limit`, after `start_after` in storage order (page with the last
		/// id returned).
		fn open_orders(start_after: Option<OrderId>, limit: u32) -> Vec<(OrderId, Order)>;
		/// Open orders still taking bids that `provider` can serve now, each with the devices it
		/// would offer (uncommitted, meeting the requirements, checked as a bid would be). At most
		/// `limit`, after `start_after`.
		fn servable_orders(
			provider: AccountId,
			start_after: Option<OrderId>,
			limit: u32,
		) -> Vec<(OrderId, Vec<DeviceId>)>;
		/// A lease, live or ended.
		fn lease(id: LeaseId) -> Option<Lease>;
		/// The live leases of `provider`: what its worker must be running.
		fn leases_of(provider: AccountId) -> Vec<(LeaseId, Lease)>;
		/// A stream's money now, if it is open.
		fn stream(id: StreamId) -> Option<StreamView<Balance, BlockNumber>>;
	}
}
