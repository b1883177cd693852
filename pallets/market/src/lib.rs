#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub use pallet::*;

mod api_impls;
mod asset;
mod auction_impls;
#[cfg(feature = "runtime-benchmarks")]
mod benchmarking;
mod dispatchable_impls;
#[cfg(test)]
mod mock;
#[cfg(test)]
mod tests;
mod types;
pub mod weights;

pub use api_impls::{MAX_PAGE, SERVABLE_SCAN_BUDGET};
pub use auction_impls::DeadlineQueue;
pub use stint_traits::OrderId;
pub use types::*;
pub use weights::WeightInfo;

use frame::{prelude::*, traits::fungible};
use stint_primitives::{DeviceId, JobSpec, LeaseId};

/// How many of the best bids the close of a window tries before the order expires (a bid fails
/// when its devices were committed to another lease since it was placed).
pub const MAX_AUTO_ACCEPT_ATTEMPTS: u32 = 3;

/// The balance type of the escrow's currency.
pub type BalanceOf<T> =
	<<T as Config>::Currency as fungible::Inspect<<T as frame_system::Config>::AccountId>>::Balance;

/// What the benchmarks need from other pallets.
#[cfg(feature = "runtime-benchmarks")]
pub trait BenchmarkHelper<AccountId> {
	/// Ends `lease` now, as its provider's result would.
	fn end_lease(lease: LeaseId);
	/// A funded, bonded, active provider with `gpus` registered devices that meet requirements
	/// with no minimums, none of them committed.
	fn provider(index: u32, gpus: u32) -> (AccountId, alloc::vec::Vec<DeviceId>);
}

#[frame::pallet]
pub mod pallet {
	use super::*;
	use stint_traits::{buckets, LeaseFactory, ProviderCollateral, ProviderRegistry};

	const STORAGE_VERSION: StorageVersion = StorageVersion::new(0);

	#[pallet::pallet]
	#[pallet::storage_version(STORAGE_VERSION)]
	pub struct Pallet<T>(_);

	/// Defaults for bounds and weights; money and time are set by each runtime.
	pub mod config_preludes {
		use super::*;
		use frame::runtime::prelude::derive_impl;

		pub struct TestDefaultConfig;

		#[derive_impl(frame_system::config_preludes::TestDefaultConfig, no_aggregated_types)]
		impl frame_system::DefaultConfig for TestDefaultConfig {}

		#[frame::deps::frame_support::register_default_impl(TestDefaultConfig)]
		impl DefaultConfig for TestDefaultConfig {
			type MaxBidsPerOrder = ConstU32<32>;
			type MaxStandingBids = ConstU32<64>;
			type MaxGpusPerOrder = ConstU32<8>;
			type MaxDeadlinesPerBlock = ConstU32<16>;
			type MaxReplicas = ConstU32<5>;
			type WeightInfo = ();
		}
	}

	#[pallet::config(with_default)]
	pub trait Config: frame_system::Config<RuntimeEvent: From<Event<Self>>> {
		/// The currency orders are paid in.
		#[pallet::no_default]
		type Currency: fungible::Inspect<Self::AccountId>
			+ fungible::Mutate<Self::AccountId>
			+ fungible::MutateHold<Self::AccountId, Reason = Self::RuntimeHoldReason>;

		/// The runtime's hold reasons, which include this pallet's.
		#[pallet::no_default]
		type RuntimeHoldReason: From<HoldReason>;

		/// Who may bid, with which devices.
		#[pallet::no_default]
		type Registry: ProviderRegistry<Self::AccountId>;

		/// The bonds that back bids and leases.
		#[pallet::no_default]
		type Collateral: ProviderCollateral<Self::AccountId, BalanceOf<Self>>;

		/// Turns an accepted bid into a lease.
		#[pallet::no_default]
		type Leases: LeaseFactory<Self::AccountId, BalanceOf<Self>, BlockNumberFor<Self>>;

		/// Bond locked per GPU of a bid, and of the lease it becomes.
		#[pallet::constant]
		#[pallet::no_default]
		type CollateralPerGpu: Get<BalanceOf<Self>>;

		/// Locked in a provider's bond, with the bid's collateral, for every standing bid: lost
		/// if it withdraws in the window's last quarter or can no longer honour the bid.
		#[pallet::constant]
		#[pallet::no_default]
		type BidDeposit: Get<BalanceOf<Self>>;

		/// Paid from an order's escrow to each provider whose bid still stood, and could still be
		/// honoured, when the buyer let it go unaccepted: the order cancelled or expired, or the
		/// bid rejected. Its time and fee, paid for: an order that draws bids and is then
		/// dropped (a bait that freezes workers' bids for a day) costs its buyer this per bid.
		/// No more than a bid's fee, so bidding to collect it earns nothing.
		#[pallet::constant]
		#[pallet::no_default]
		type BidCompensation: Get<BalanceOf<Self>>;

		/// What a provider's worker keys, together, may commit of its funds per GPU it has
		/// registered in one `WorkerEra`: the deposits and collateral of the bids they place.
		/// Bids its own account signs are not counted. Whoever steals a worker key can do no
		/// more with it than this per era (its forfeits are burnt, never paid to a buyer).
		#[pallet::constant]
		#[pallet::no_default]
		type WorkerCommitPerGpu: Get<BalanceOf<Self>>;

		/// The blocks of one era of [`Config::WorkerCommitPerGpu`].
		#[pallet::constant]
		#[pallet::no_default]
		type WorkerEra: Get<BlockNumberFor<Self>>;

		/// The least escrow of any order (a fixed one also needs `max_price × duration`).
		#[pallet::constant]
		#[pallet::no_default]
		type MinOrderDeposit: Get<BalanceOf<Self>>;

		/// The shortest bid window.
		#[pallet::constant]
		#[pallet::no_default]
		type MinBidWindow: Get<BlockNumberFor<Self>>;

		/// The longest bid window.
		#[pallet::constant]
		#[pallet::no_default]
		type MaxBidWindow: Get<BlockNumberFor<Self>>;

		/// Blocks after the window a buyer has to accept a bid by hand, before the order expires.
		#[pallet::constant]
		#[pallet::no_default]
		type AcceptPeriod: Get<BlockNumberFor<Self>>;

		/// Held from a buyer for each order whatever its size; it also covers the order's lease
		/// and payment stream, whose records are small and bounded.
		#[pallet::constant]
		#[pallet::no_default]
		type StorageDepositBase: Get<BalanceOf<Self>>;

		/// Held from a buyer per byte of its order (the job spec, mostly).
		#[pallet::constant]
		#[pallet::no_default]
		type StorageDepositPerByte: Get<BalanceOf<Self>>;

		/// Blocks after its lease ends that a leased order, its lease and its stream stay
		/// readable (for the buyer to fetch and check the results); then anyone may prune them.
		#[pallet::constant]
		#[pallet::no_default]
		type Retention: Get<BlockNumberFor<Self>>;

		/// The part of an order's storage deposit paid to whoever prunes it, if not its buyer.
		#[pallet::constant]
		#[pallet::no_default]
		type ReapReward: Get<Permill>;

		/// The longest termination notice an order may ask for.
		#[pallet::constant]
		#[pallet::no_default]
		type MaxTerminationNotice: Get<BlockNumberFor<Self>>;

		/// The least termination notice an open-ended order may ask of its provider: a
		/// provider cannot leave one at once. (A fixed lease ends only by its result.)
		#[pallet::constant]
		#[pallet::no_default]
		type MinTerminationNotice: Get<BlockNumberFor<Self>>;

		/// The least holdback an order may set: the share of every payment withheld until the
		/// verdict on the period it paid for.
		#[pallet::constant]
		#[pallet::no_default]
		type MinHoldback: Get<Permill>;

		/// The longest verdict window an order may ask for.
		#[pallet::constant]
		#[pallet::no_default]
		type MaxVerdictWindow: Get<BlockNumberFor<Self>>;

		/// The most bids standing on one order.
		#[pallet::constant]
		type MaxBidsPerOrder: Get<u32>;

		/// The most bids one provider may have standing at once (on as many orders): what
		/// withdrawing them all when it pauses or leaves costs is bounded by it.
		#[pallet::constant]
		type MaxStandingBids: Get<u32>;

		/// The most GPUs one order may ask for.
		#[pallet::constant]
		type MaxGpusPerOrder: Get<u32>;

		/// The most orders whose deadline the block hook handles in one block; more wait for the
		/// next block, in the order they fell due.
		#[pallet::constant]
		type MaxDeadlinesPerBlock: Get<u32>;

		/// The most replicas an order may ask for (at most
		/// [`stint_primitives::MAX_REPLICAS`]): each runs on another provider's devices and
		/// their majority decides the result.
		#[pallet::constant]
		type MaxReplicas: Get<u32>;

		/// Weights of this pallet's calls and hook.
		type WeightInfo: WeightInfo;

		/// Sets up what the benchmarks need from the registry and the bonds.
		#[cfg(feature = "runtime-benchmarks")]
		#[pallet::no_default]
		type BenchmarkHelper: BenchmarkHelper<Self::AccountId>;
	}

	/// Why this pallet holds funds.
	#[pallet::composite_enum]
	pub enum HoldReason {
		/// The escrow of an open order, held on its buyer.
		#[codec(index = 0)]
		OrderEscrow,
		// Index 1 was a standing bid's deposit: it is locked in the provider's bond now.
		/// The storage deposit of an order (and of its lease and stream), held on its buyer
		/// until they are pruned.
		#[codec(index = 2)]
		StorageDeposit,
	}

	/// Open and leased orders. Cancelled and expired orders are removed at once, leased ones
	/// `Retention` blocks after their lease ended, by `reap_order`.
	#[pallet::storage]
	pub type Orders<T: Config> = StorageMap<_, Blake2_128Concat, OrderId, OrderOf<T>, OptionQuery>;

	/// The id the next order gets.
	#[pallet::storage]
	pub type NextOrderId<T: Config> = StorageValue<_, OrderId, ValueQuery>;

	/// Standing bids, by order and provider: one per provider per order.
	#[pallet::storage]
	pub type Bids<T: Config> = StorageDoubleMap<
		_,
		Blake2_128Concat,
		OrderId,
		Blake2_128Concat,
		T::AccountId,
		BidOf<T>,
		OptionQuery,
	>;

	/// Each bidding provider's standing bids (an index of [`Bids`] by provider) and what its
	/// worker keys committed of its funds this era. Removed when it has no bid standing and its
	/// worker keys committed nothing this era.
	#[pallet::storage]
	pub type Bidders<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, BidderOf<T>, OptionQuery>;

	/// Orders the block hook looks at, by the block they fall due in and page: the close of
	/// their bid window, or the end of the time their buyer had to accept.
	#[pallet::storage]
	pub type Deadlines<T: Config> =
		StorageMap<_, Twox64Concat, (BlockNumberFor<T>, u32), buckets::Page<OrderId>, ValueQuery>;

	/// How many pages of [`Deadlines`] each block has had.
	#[pallet::storage]
	pub type DeadlinePages<T: Config> =
		StorageMap<_, Twox64Concat, BlockNumberFor<T>, u32, ValueQuery>;

	/// The first page of [`Deadlines`] the hook has not handled.
	#[pallet::storage]
	pub type DeadlineCursor<T: Config> =
		StorageValue<_, buckets::Slot<BlockNumberFor<T>>, OptionQuery>;

	/// The providers whose bids the buyer of an open order rejected: none of them may bid on it
	/// again. Removed with the order's bids, when it is leased, cancelled or expires.
	#[pallet::storage]
	pub type Rejections<T: Config> = StorageMap<
		_,
		Blake2_128Concat,
		OrderId,
		BoundedVec<T::AccountId, T::MaxBidsPerOrder>,
		ValueQuery,
	>;

	/// Every open order: what the order queries walk, so leased orders cost them nothing.
	#[pallet::storage]
	pub type OpenOrders<T: Config> = StorageMap<_, Twox64Concat, OrderId, (), OptionQuery>;

	#[pallet::event]
	#[pallet::generate_deposit(pub(super) fn deposit_event)]
	pub enum Event<T: Config> {
		/// A buyer posted an order.
		OrderCreated {
			/// The order.
			order: OrderId,
			/// Who pays.
			buyer: T::AccountId,
			/// The escrow held.
			deposit: BalanceOf<T>,
			/// The ceiling on bids.
			max_price_per_block: BalanceOf<T>,
			/// The first block in which bids are refused.
			bids_close_at: BlockNumberFor<T>,
		},
		/// A provider bid on an order.
		BidPlaced {
			/// The order.
			order: OrderId,
			/// Who bid.
			provider: T::AccountId,
			/// Asked per block.
			price_per_block: BalanceOf<T>,
			/// The devices offered.
			devices: u32,
			/// Bond locked.
			collateral: BalanceOf<T>,
		},
		/// A provider withdrew its bid (itself, or by pausing, leaving, changing its hardware or
		/// unbinding the worker of the bid's devices).
		BidRetracted {
			/// The order.
			order: OrderId,
			/// Who bid.
			provider: T::AccountId,
			/// The deposit forfeited: a bid withdrawn in the last quarter of the window.
			forfeited: BalanceOf<T>,
			/// Whether it was burnt (a worker key placed the bid) rather than paid to the buyer.
			burnt: bool,
		},
		/// A cheaper bid on a full order took the place of this one, which was released.
		BidOutbid {
			/// The order.
			order: OrderId,
			/// Whose bid.
			provider: T::AccountId,
		},
		/// A bid its provider can no longer honour (its devices went elsewhere, it paused or
		/// left, its worker changed) was dropped, at the close of the window, when the order was
		/// cancelled or expired, or by anyone's `drop_dead_bid`: its collateral was released
		/// and its deposit forfeited.
		BidDropped {
			/// The order.
			order: OrderId,
			/// Whose bid.
			provider: T::AccountId,
			/// The bid deposit forfeited.
			forfeited: BalanceOf<T>,
			/// Whether it was burnt (a worker key placed the bid) rather than paid to the buyer.
			burnt: bool,
		},
		/// The buyer rejected a bid it can still be honoured: released, its provider paid
		/// `BidCompensation` from the escrow, and barred from bidding on this order again.
		BidRejected {
			/// The order.
			order: OrderId,
			/// Whose bid.
			provider: T::AccountId,
			/// Paid to the provider from the order's escrow.
			compensation: BalanceOf<T>,
		},
		/// A bid won: the lease starts.
		BidAccepted {
			/// The order.
			order: OrderId,
			/// The winner.
			provider: T::AccountId,
			/// The lease created.
			lease: LeaseId,
			/// Paid per block.
			price_per_block: BalanceOf<T>,
			/// Moved into the lease's payment stream.
			escrow: BalanceOf<T>,
			/// Returned to the buyer: escrow the accepted price does not need.
			refunded: BalanceOf<T>,
			/// Whether the block hook chose it (auto-accept) rather than the buyer.
			automatic: bool,
		},
		/// The buyer cancelled an open order: every bid was released, each bidder whose bid
		/// could still be honoured paid `BidCompensation`, the rest of the escrow returned.
		OrderCancelled {
			/// The order.
			order: OrderId,
			/// Returned to the buyer.
			refunded: BalanceOf<T>,
			/// Paid to the bidders from the escrow, in all.
			compensated: BalanceOf<T>,
		},
		/// A leased order was pruned, with its lease and stream, `Retention` after the lease
		/// ended: its storage deposit went back to its buyer, but for the reaper's reward.
		OrderReaped {
			/// The order.
			order: OrderId,
			/// Its lease, pruned too.
			lease: LeaseId,
			/// Who pruned it.
			reaper: T::AccountId,
			/// Paid to the reaper from the storage deposit.
			reward: BalanceOf<T>,
		},
		/// An order found no (usable) bid in time, or its buyer accepted none: every bid was
		/// released, each bidder whose bid could still be honoured paid `BidCompensation`, the
		/// rest of the escrow returned.
		OrderExpired {
			/// The order.
			order: OrderId,
			/// Returned to the buyer.
			refunded: BalanceOf<T>,
			/// Paid to the bidders from the escrow, in all.
			compensated: BalanceOf<T>,
		},
	}

	#[pallet::error]
	pub enum Error<T> {
		/// No order with this id.
		UnknownOrder,
		/// The order is no longer open.
		OrderNotOpen,
		/// Only the order's buyer may do this.
		NotBuyer,
		/// The image is not pinned by digest (`name@sha256:<64 hex>`).
		ImageNotPinned,
		/// The order asks for no GPU.
		NoGpus,
		/// The order asks for more GPUs than `MaxGpusPerOrder`.
		TooManyGpus,
		/// `replicas` is zero or above `MaxReplicas`.
		TooManyReplicas,
		/// A price of zero.
		ZeroPrice,
		/// A fixed duration of zero blocks.
		ZeroDuration,
		/// The bid window is shorter than `MinBidWindow`.
		BidWindowTooShort,
		/// The bid window is longer than `MaxBidWindow`.
		BidWindowTooLong,
		/// The termination notice is longer than `MaxTerminationNotice`.
		NoticeTooLong,
		/// An open-ended order's termination notice is shorter than `MinTerminationNotice`.
		NoticeTooShort,
		/// The holdback is below `MinHoldback`.
		HoldbackTooLow,
		/// The verdict window is longer than `MaxVerdictWindow`.
		VerdictWindowTooLong,
		/// The escrow is below `MinOrderDeposit`, or below `max_price × duration` (fixed).
		DepositTooLow,
		/// The account cannot afford the escrow or the storage deposit.
		InsufficientBalance,
		/// The bid window has closed.
		BiddingClosed,
		/// The price is above the order's ceiling.
		PriceAboveCeiling,
		/// This provider already bid on this order.
		AlreadyBid,
		/// The order has no lease: an open order is cancelled or expires instead of being pruned.
		NotLeased,
		/// The order's lease has not ended.
		LeaseNotEnded,
		/// The order's lease ended less than `Retention` blocks ago.
		RetentionNotOver,
		/// The order already has `MaxBidsPerOrder` bids, and this one is not cheaper than the
		/// worst of them.
		TooManyBids,
		/// The buyer cannot bid on its own order, and neither can a provider whose worker key is
		/// the buyer, nor a worker key of a provider that is.
		BuyerCannotBid,
		/// No bid from this provider on this order.
		UnknownBid,
		/// The signer is a worker key of the provider, but not the one bound to these devices.
		NotThisWorker,
		/// The bid's price or devices are not the ones the buyer accepted: it changed since.
		BidChanged,
		/// The provider already has `MaxStandingBids` bids standing.
		TooManyStandingBids,
		/// The job sets an environment variable that is not a portable name or that workers
		/// reserve (`STINT_*`, `NVIDIA_*`, `LD_*`, `CUDA_VISIBLE_DEVICES`, `PATH`…): no worker
		/// would run it.
		ReservedEnvName,
		/// An order with more than one replica must be deterministic (the replicas' outputs are
		/// compared), of fixed duration (each ends by its result) and auto-accepted (the chain
		/// picks its replicas).
		UnreplicableOrder,
		/// The chain picks a replicated order's bids when its window closes: the buyer cannot
		/// accept one.
		ReplicatedOrder,
		/// The buyer rejected this provider's bid on this order: it may not bid on it again.
		BidRejected,
		/// The order's buyer already rejected `MaxBidsPerOrder` bids.
		TooManyRejections,
		/// The bid can still be honoured: only its buyer may reject it.
		BidStillHonourable,
		/// A command argument or an environment value holds a NUL byte or is not UTF-8: no
		/// process can be given it.
		UnpassableText,
		/// The order's deadline has not come yet (or the block hook handled it already).
		NotDue,
		/// The provider's worker keys already committed `WorkerCommitPerGpu` per registered GPU
		/// of its funds in bids this era: its worker bids again next era (its own account
		/// may bid now).
		WorkerCommitCapReached,
	}

	#[pallet::hooks]
	impl<T: Config> Hooks<BlockNumberFor<T>> for Pallet<T> {
		fn on_initialize(now: BlockNumberFor<T>) -> Weight {
			Self::process_deadlines(now)
		}

		fn integrity_test() {
			assert!(T::MaxBidsPerOrder::get() > 0, "MaxBidsPerOrder must be positive");
			assert!(T::MaxGpusPerOrder::get() > 0, "MaxGpusPerOrder must be positive");
			assert!(T::MaxDeadlinesPerBlock::get() > 0, "MaxDeadlinesPerBlock must be positive");
			assert!(
				(1..=stint_primitives::MAX_REPLICAS).contains(&T::MaxReplicas::get()),
				"MaxReplicas must be between 1 and MAX_REPLICAS"
			);
			assert!(T::MinBidWindow::get() > Zero::zero(), "MinBidWindow must be positive");
			assert!(T::WorkerEra::get() > Zero::zero(), "WorkerEra must be positive");
			assert!(
				T::MinBidWindow::get() <= T::MaxBidWindow::get(),
				"MinBidWindow > MaxBidWindow"
			);
		}

		#[cfg(feature = "try-runtime")]
		fn try_state(_: BlockNumberFor<T>) -> Result<(), frame::deps::sp_runtime::TryRuntimeError> {
			Self::do_try_state()
		}
	}

	#[pallet::call(weight(<T as Config>::WeightInfo))]
	impl<T: Config> Pallet<T> {
		/// Posts an order for `spec` on `terms`, holding `deposit` of the signer's balance as
		/// escrow. A fixed-duration order needs at least `max_price_per_block × duration`; an
		/// open-ended one at least `MinOrderDeposit`, and runs while its escrow lasts.
		#[pallet::call_index(0)]
		pub fn create_order(
			origin: OriginFor<T>,
			spec: JobSpec,
			terms: TermsOf<T>,
			#[pallet::compact] deposit: BalanceOf<T>,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_create_order(who, spec, terms, deposit).map_err(Self::refused)?;
			Ok(().into())
		}

		/// Bids `price_per_block` to run `order` on exactly `devices` of the signer's registered
		/// GPUs. Locks `CollateralPerGpu` per device and `BidDeposit` of the signer's bond.
		/// A provider's worker key may sign it for the devices bound to it: the bid, the deposit
		/// and the collateral are the provider's.
		///
		/// Weighed by the devices offered, as if it took a full order's worst slot; a bid that
		/// found a free slot is refunded the search.
		#[pallet::call_index(1)]
		#[pallet::weight(T::WeightInfo::place_bid(Pallet::<T>::gpus_weighed(devices.len()), 1))]
		pub fn place_bid(
			origin: OriginFor<T>,
			order: OrderId,
			#[pallet::compact] price_per_block: BalanceOf<T>,
			devices: BoundedVec<DeviceId, T::MaxGpusPerOrder>,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let gpus = Self::gpus_weighed(devices.len());
			let outbid =
				Self::do_place_bid(who, order, price_per_block, devices).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::place_bid(gpus, outbid.into())).into())
		}

		/// Withdraws the signer's bid on `order` (or, signed by a worker key, its provider's bid
		/// on the worker's devices): its collateral and deposit are released.
		#[pallet::call_index(2)]
		pub fn retract_bid(origin: OriginFor<T>, order: OrderId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_retract_bid(&who, order).map_err(Self::refused)?;
			Ok(().into())
		}

		/// The buyer cancels an open order: its escrow and every bid are released.
		#[pallet::call_index(3)]
		#[pallet::weight(T::WeightInfo::cancel_order(T::MaxBidsPerOrder::get()))]
		pub fn cancel_order(origin: OriginFor<T>, order: OrderId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let bids = Self::do_cancel_order(&who, order).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::cancel_order(bids)).into())
		}

		/// The buyer accepts `provider`'s bid on `order` at `price_per_block` on `devices`,
		/// exactly as the buyer saw it: a bid retracted and placed again at another price or on
		/// other devices is refused (`BidChanged`). The other bids are released, the lease is
		/// created, the escrow it needs moves into its payment stream and the rest is refunded.
		#[pallet::call_index(4)]
		#[pallet::weight(T::WeightInfo::accept_bid(T::MaxBidsPerOrder::get()))]
		pub fn accept_bid(
			origin: OriginFor<T>,
			order: OrderId,
			provider: T::AccountId,
			#[pallet::compact] price_per_block: BalanceOf<T>,
			devices: BoundedVec<DeviceId, T::MaxGpusPerOrder>,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let bids = Self::do_accept_bid(&who, order, &provider, price_per_block, &devices)
				.map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::accept_bid(bids)).into())
		}

		/// Prunes a leased order whose lease ended at least `Retention` blocks ago, with its
		/// lease and payment stream. Anyone may: the caller, unless it is the buyer, gets
		/// `ReapReward` of the order's storage deposit; the buyer gets the rest back.
		#[pallet::call_index(5)]
		pub fn reap_order(origin: OriginFor<T>, order: OrderId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_reap_order(&who, order).map_err(Self::refused)?;
			Ok(().into())
		}

		/// The buyer turns down `provider`'s bid on its open `order`. A bid that can still be
		/// honoured is released, its provider paid `BidCompensation` from the escrow and barred
		/// from bidding on this order again; one that cannot is dropped, its deposit forfeited
		/// (`BidDropped`), as at the close of the window.
		#[pallet::call_index(6)]
		pub fn reject_bid(
			origin: OriginFor<T>,
			order: OrderId,
			provider: T::AccountId,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_reject_bid(&who, order, &provider).map_err(Self::refused)?;
			Ok(().into())
		}

		/// Anyone drops `provider`'s bid on open `order` if its provider can no longer honour it
		/// (paused or leaving, its devices committed elsewhere, no longer its own or no longer
		/// on one worker): its collateral is released and its deposit forfeited (`BidDropped`),
		/// whatever its price. A bidder kept out of a full order by dead bids makes room so.
		#[pallet::call_index(7)]
		pub fn drop_dead_bid(
			origin: OriginFor<T>,
			order: OrderId,
			provider: T::AccountId,
		) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			Self::do_drop_dead_bid(order, &provider).map_err(Self::refused)?;
			Ok(().into())
		}

		/// Anyone closes open `order` whose deadline has come (its bid window closed, or its
		/// buyer's time to accept ended) but which the block hook has not reached yet: the hook
		/// handles `MaxDeadlinesPerBlock` orders a block, in the order they fell due, so a flood
		/// of orders can make it late. Does exactly what the hook would, and is free when it
		/// does; refused (`NotDue`) otherwise, at the cost of reading the order.
		#[pallet::call_index(8)]
		#[pallet::weight(Pallet::<T>::close_weight(None))]
		pub fn close_order(origin: OriginFor<T>, order: OrderId) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			let leases = Self::do_close_order(order).map_err(Self::refused)?;
			Ok(PostDispatchInfo {
				actual_weight: Some(Self::close_weight(Some(leases))),
				pays_fee: Pays::No,
			})
		}
	}
}
