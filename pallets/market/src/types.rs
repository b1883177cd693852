//! Orders, their terms, and bids.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use frame::prelude::*;
use scale_info::TypeInfo;
use stint_primitives::{DeviceId, GpuRequirements, JobSpec, LeaseId};
use stint_traits::{buckets::Slot, OrderId};

/// What a buyer asks for besides the job itself: hardware, price, time, and how a bid is chosen.
#[derive(
	Clone,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub struct OrderTerms<Balance, BlockNumber> {
	/// The GPUs the job needs.
	pub requirements: GpuRequirements,
	/// The most the buyer pays per block. Bids above it are refused.
	pub max_price_per_block: Balance,
	/// `Some(blocks)` runs the job for that long; `None` runs it while the escrow lasts.
	pub duration: Option<BlockNumber>,
	/// Blocks during which providers may bid, from the order's creation.
	pub bid_window: BlockNumber,
	/// When the window closes, accept the best bid without the buyer.
	pub auto_accept: bool,
	/// How many providers run the job, each on its own lease (at most the chain's
	/// `MaxReplicas`). Above 1 the order must be deterministic, of fixed duration and
	/// auto-accepted: the best bids of that many distinct providers win, each replica seals
	/// its result, then reveals it, and the majority's output root decides who is paid.
	pub replicas: u32,
	/// Blocks of notice a provider must give before ending an open-ended lease (at least the
	/// chain's `MinTerminationNotice`). A fixed lease ends only by its result.
	pub termination_notice: BlockNumber,
	/// The share of every payment withheld from the provider until the buyer's verdict on
	/// the period it paid for (at least the chain's `MinHoldback`).
	pub holdback: Permill,
	/// Blocks the buyer wants to judge each result in; zero (or less than the chain's
	/// verdict window) takes the chain's. At most `MaxVerdictWindow`.
	pub verdict_window: BlockNumber,
	/// The job promises the same outputs (the same output root and exit code) for the same
	/// inputs on any provider's GPUs: the buyer may then dispute a result, and another
	/// provider re-executes it to decide.
	pub deterministic: bool,
}

/// Where an order is in its life. Cancelled and expired orders are removed.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub enum OrderStatus {
	/// Taking bids (inside the window) or waiting for the buyer to accept one.
	Open,
	/// A bid was accepted and became this lease (with `replicas`, the first of that many
	/// consecutive leases, one per replica).
	Leased { lease: LeaseId },
}

/// A buyer's order.
#[derive(
	Clone, PartialEq, Eq, Debug, Encode, Decode, DecodeWithMemTracking, MaxEncodedLen, TypeInfo,
)]
pub struct Order<AccountId, Balance, BlockNumber> {
	pub buyer: AccountId,
	pub spec: JobSpec,
	pub terms: OrderTerms<Balance, BlockNumber>,
	/// The escrow held on the buyer while the order is open (zero once leased).
	pub deposit: Balance,
	/// Held on the buyer for the order's storage (and its lease's and stream's) until pruned.
	pub storage_deposit: Balance,
	pub created_at: BlockNumber,
	/// The first block in which bids are refused.
	pub bids_close_at: BlockNumber,
	pub status: OrderStatus,
	/// Bids standing now.
	pub bid_count: u32,
	/// Bids ever placed: the next bid's sequence number, which breaks ties.
	pub bids_placed: u32,
	/// Where this order waits for its next deadline, while it is open.
	pub deadline: Option<Slot<BlockNumber>>,
}

/// A provider's offer to run an order.
#[derive(
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
)]
#[scale_info(skip_type_params(MaxGpus))]
pub struct Bid<Balance, BlockNumber, MaxGpus>
where
	Balance: Clone + PartialEq + Eq + core::fmt::Debug,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxGpus: Get<u32>,
{
	pub price_per_block: Balance,
	/// The exact registered devices the provider will use.
	pub devices: BoundedVec<DeviceId, MaxGpus>,
	/// Bond locked while the bid stands, and for the lease if it wins.
	pub collateral: Balance,
	/// Held on the provider while the bid stands.
	pub deposit: Balance,
	pub placed_at: BlockNumber,
	/// The order's count of bids before this one: earlier bids win ties.
	pub sequence: u32,
	/// Whether a worker key of the provider signed it (rather than the provider's account):
	/// a deposit such a bid forfeits is burnt, never paid to the buyer, since whoever holds the
	/// key may be that buyer.
	pub by_worker: bool,
}

/// A provider's bidding, as the market keeps it: the index of its standing bids and what its
/// worker keys have put at risk this era, in one record, so a bid writes it once.
#[derive(
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
	DefaultNoBound,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
#[scale_info(skip_type_params(MaxStanding))]
pub struct Bidder<Balance, BlockNumber, MaxStanding>
where
	Balance: Clone + PartialEq + Eq + core::fmt::Debug + Default,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug + Default,
	MaxStanding: Get<u32>,
{
	/// The orders it has a bid standing on, oldest first.
	pub bids: BoundedVec<OrderId, MaxStanding>,
	/// The era `by_workers` counts in: the block number divided by `WorkerEra`.
	pub era: BlockNumber,
	/// The deposits and collateral of the bids its worker keys placed in `era` that were not
	/// released cleanly: those standing, those won, those forfeited. A bid that lost the
	/// auction, was withdrawn in time, or whose order was cancelled or expired gives its part
	/// back, so orders that never lease cannot use up an honest worker's cap.
	pub by_workers: Balance,
}

impl<Balance, BlockNumber, MaxStanding> Bidder<Balance, BlockNumber, MaxStanding>
where
	Balance: Clone + PartialEq + Eq + core::fmt::Debug + Default + Copy,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug + Default,
	MaxStanding: Get<u32>,
{
	/// Bids standing now.
	pub fn standing(&self) -> u32 {
		self.bids.len() as u32
	}

	/// What its worker keys committed in era `era`.
	pub fn committed_in(&self, era: &BlockNumber) -> Balance {
		if &self.era == era {
			self.by_workers
		} else {
			Balance::default()
		}
	}
}

/// The bidder type for a runtime.
pub type BidderOf<T> = Bidder<
	crate::BalanceOf<T>,
	frame_system::pallet_prelude::BlockNumberFor<T>,
	<T as crate::Config>::MaxStandingBids,
>;

/// The order type for a runtime.
pub type OrderOf<T> = Order<
	<T as frame_system::Config>::AccountId,
	crate::BalanceOf<T>,
	frame_system::pallet_prelude::BlockNumberFor<T>,
>;

/// The terms type for a runtime.
pub type TermsOf<T> =
	OrderTerms<crate::BalanceOf<T>, frame_system::pallet_prelude::BlockNumberFor<T>>;

/// The bid type for a runtime.
pub type BidOf<T> = Bid<
	crate::BalanceOf<T>,
	frame_system::pallet_prelude::BlockNumberFor<T>,
	<T as crate::Config>::MaxGpusPerOrder,
>;
