#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub use pallet::*;

#[cfg(feature = "runtime-benchmarks")]
mod benchmarking;
mod dispatchable_impls;
mod dispute_impls;
mod lease_impls;
#[cfg(test)]
mod mock;
mod replica_impls;
#[cfg(test)]
mod tests;
mod types;
pub mod weights;

pub use dispute_impls::DrawQueue;
pub use types::*;
pub use weights::WeightInfo;

use frame::prelude::*;
#[cfg(feature = "runtime-benchmarks")]
use stint_primitives::WorkerKey;
use stint_primitives::{LeaseId, Outcome, ResultCommitment};

/// A worker's signature over a [`stint_primitives::Report`].
pub type WorkerSignature = frame::deps::sp_core::sr25519::Signature;

/// What the benchmarks need from other pallets.
#[cfg(feature = "runtime-benchmarks")]
pub trait BenchmarkHelper<AccountId, Balance> {
	/// A funded, bonded, active provider whose worker key is `worker`, with `gpus` registered
	/// devices, none committed, and `collateral` of its bond locked (as a won bid leaves it).
	fn provider(
		index: u32,
		gpus: u32,
		worker: WorkerKey,
		collateral: Balance,
	) -> (AccountId, alloc::vec::Vec<stint_primitives::DeviceId>);
	/// A buyer with plenty of free balance.
	fn buyer(index: u32) -> AccountId;
	/// Tops `stream` up from new depositors until it has `depositors` (at most as many as the
	/// streams allow, the worst case of every call that settles or closes it).
	fn fill_stream(stream: stint_traits::StreamId, depositors: u32);
}

#[frame::pallet]
pub mod pallet {
	use super::*;
	use stint_traits::{
		buckets, OrderRequirements, PaymentStreams, ProviderCollateral, ProviderRegistry,
		ReputationRecorder, Slashing,
	};

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
			type MaxGpusPerLease = ConstU32<8>;
			type WeightInfo = ();
		}
	}

	#[pallet::config(with_default)]
	pub trait Config: frame_system::Config<RuntimeEvent: From<Event<Self>>> {
		/// The balance type of payments and bonds.
		#[pallet::no_default]
		type Balance: Parameter
			+ Member
			+ AtLeast32BitUnsigned
			+ Copy
			+ MaxEncodedLen
			+ Default
			+ core::fmt::Debug;

		/// Providers' devices and worker keys.
		#[pallet::no_default]
		type Registry: ProviderRegistry<Self::AccountId>;

		/// The bonds locked behind leases.
		#[pallet::no_default]
		type Collateral: ProviderCollateral<Self::AccountId, Self::Balance>;

		/// Takes a provider's bond for a fault.
		#[pallet::no_default]
		type Slashing: Slashing<Self::AccountId, Self::Balance>;

		/// The payment streams leases are paid through.
		#[pallet::no_default]
		type Streams: PaymentStreams<Self::AccountId, Self::Balance, BlockNumberFor<Self>>;

		/// Where each lease's outcome goes, for the provider's reputation.
		#[pallet::no_default]
		type Reputation: ReputationRecorder<Self::AccountId>;

		/// Blocks a provider has to acknowledge a new lease.
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type AckDeadline: Get<BlockNumberFor<Self>>;

		/// Blocks after the end of a fixed-duration lease in which its result may still land.
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type ResultGrace: Get<BlockNumberFor<Self>>;

		/// The most blocks an open-ended lease may run between checkpoints.
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type CheckpointInterval: Get<BlockNumberFor<Self>>;

		/// The most GPUs of one lease.
		#[pallet::constant]
		type MaxGpusPerLease: Get<u32>;

		/// Blocks a lease must run to count fully toward its provider's reputation; a shorter
		/// one counts in proportion.
		#[pallet::constant]
		#[pallet::no_default]
		type FullCreditBlocks: Get<BlockNumberFor<Self>>;

		/// What a lease must pay to count fully toward its provider's reputation; one that paid
		/// less counts in proportion (the lesser of the two proportions applies).
		#[pallet::constant]
		#[pallet::no_default]
		type FullCreditPayment: Get<Self::Balance>;

		/// Blocks the buyer has to accept or object to a result (and to each checkpoint's
		/// holdback) before it counts by itself: the provider's collateral stays locked and the
		/// holdback withheld until then. An order may ask for longer.
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type VerdictWindow: Get<BlockNumberFor<Self>>;

		/// The longest verdict window, whatever the parameter or the order asks.
		#[pallet::constant]
		#[pallet::no_default]
		type MaxVerdictWindow: Get<BlockNumberFor<Self>>;

		/// A provider that ends a lease (an early result, a terminate) within this many blocks
		/// of acknowledging it risks its whole collateral if the buyer objects, as a no-show
		/// would; later, the share of the lease's time it did not deliver.
		#[pallet::constant]
		#[pallet::no_default]
		type EarlyExitBlocks: Get<BlockNumberFor<Self>>;

		/// The orders' GPU requirements: what a disputed result's verifier must have.
		#[pallet::no_default]
		type Orders: OrderRequirements;

		/// The least bond a dispute posts, however short the lease: it also pays for the
		/// verifier's time at the disputed lease's price (twice the time the lease ran).
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type DisputeBond: Get<Self::Balance>;

		/// Blocks from a dispute (or a failed draw) to the draw of its verifier, whose seed is
		/// the hash of the block before: nobody knows it when the dispute is opened.
		#[pallet::constant]
		#[pallet::no_default]
		type DrawDelay: Get<BlockNumberFor<Self>>;

		/// The most registered providers one draw looks at before it gives up (and tries
		/// again after `DrawDelay`, within the draws a dispute has).
		#[pallet::constant]
		#[pallet::no_default]
		type MaxDrawScan: Get<u32>;

		/// The most draws the block hook makes in one block; more wait for the next block, in
		/// the order they fell due.
		#[pallet::constant]
		#[pallet::no_default]
		type MaxDrawsPerBlock: Get<u32>;

		/// Blocks the replicas of a replicated order have to reveal their sealed results once
		/// the reveals open (every replica committed, or the last block any could commit in
		/// passed).
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type RevealWindow: Get<BlockNumberFor<Self>>;

		/// Weights of this pallet's calls.
		type WeightInfo: WeightInfo;

		/// Sets up what the benchmarks need from the registry and the bonds.
		#[cfg(feature = "runtime-benchmarks")]
		#[pallet::no_default]
		type BenchmarkHelper: BenchmarkHelper<Self::AccountId, Self::Balance>;
	}

	/// Every lease, by id. Ended leases stay, with their result, until the market prunes their
	/// order (`Market.reap_order`, after its retention period).
	#[pallet::storage]
	pub type Leases<T: Config> = StorageMap<_, Blake2_128Concat, LeaseId, LeaseOf<T>, OptionQuery>;

	/// The id the next lease gets.
	#[pallet::storage]
	pub type NextLeaseId<T: Config> = StorageValue<_, LeaseId, ValueQuery>;

	/// Outcomes of leases ended by their provider's result or notice, waiting for the buyer to
	/// accept or object, or for the verdict window to pass.
	#[pallet::storage]
	pub type PendingVerdicts<T: Config> =
		StorageMap<_, Blake2_128Concat, LeaseId, PendingVerdictOf<T>, OptionQuery>;

	/// What each buyer's verdicts were: how often it objects, for providers to see before they
	/// bid. One small record per buyer that ever reached a verdict, kept for good, like a
	/// provider's reputation.
	#[pallet::storage]
	pub type BuyerRecords<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, BuyerRecord, ValueQuery>;

	/// How many of each provider's results wait for a verdict: it cannot deregister until none
	/// does.
	#[pallet::storage]
	pub type VerdictsOwed<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, u32, ValueQuery>;

	/// Disputes of results, by the disputed lease: open ones, and decided ones until the lease
	/// is pruned (with its verification leases).
	#[pallet::storage]
	pub type Disputes<T: Config> =
		StorageMap<_, Blake2_128Concat, LeaseId, DisputeOf<T>, OptionQuery>;

	/// Disputes whose verifier is drawn at the start of a block, by block and page.
	#[pallet::storage]
	pub type Draws<T: Config> =
		StorageMap<_, Twox64Concat, (BlockNumberFor<T>, u32), buckets::Page<LeaseId>, ValueQuery>;

	/// How many pages of [`Draws`] each block has had.
	#[pallet::storage]
	pub type DrawPages<T: Config> = StorageMap<_, Twox64Concat, BlockNumberFor<T>, u32, ValueQuery>;

	/// The first page of [`Draws`] the hook has not handled.
	#[pallet::storage]
	pub type DrawCursor<T: Config> = StorageValue<_, buckets::Slot<BlockNumberFor<T>>, OptionQuery>;

	/// The replicas of each replicated order, by order: their seals and, once decided, the
	/// majority. Pruned with the order.
	#[pallet::storage]
	pub type ReplicaGroups<T: Config> =
		StorageMap<_, Blake2_128Concat, stint_traits::OrderId, ReplicaGroupOf<T>, OptionQuery>;

	/// The live leases of each provider: what its worker must be running.
	#[pallet::storage]
	pub type LiveLeases<T: Config> = StorageDoubleMap<
		_,
		Blake2_128Concat,
		T::AccountId,
		Blake2_128Concat,
		LeaseId,
		(),
		OptionQuery,
	>;

	#[pallet::event]
	#[pallet::generate_deposit(pub(super) fn deposit_event)]
	pub enum Event<T: Config> {
		/// An accepted bid became a lease; the provider must acknowledge it.
		Created {
			/// The lease.
			lease: LeaseId,
			/// The order it runs.
			order: stint_traits::OrderId,
			/// Who pays.
			buyer: T::AccountId,
			/// Who runs it.
			provider: T::AccountId,
			/// Its payment stream.
			stream: stint_traits::StreamId,
			/// Paid per block once running.
			price_per_block: T::Balance,
			/// The last block to acknowledge in.
			ack_by: BlockNumberFor<T>,
		},
		/// The provider acknowledged: the job runs and payment starts.
		Acknowledged {
			/// The lease.
			lease: LeaseId,
			/// The end of a fixed-duration lease.
			ends_at: Option<BlockNumberFor<T>>,
		},
		/// A signed checkpoint of an open-ended lease was accepted.
		Checkpointed {
			/// The lease.
			lease: LeaseId,
			/// Its number, from 1.
			sequence: u32,
			/// The commitment signed.
			commitment: ResultCommitment,
		},
		/// A signed result ended the lease.
		ResultSubmitted {
			/// The lease.
			lease: LeaseId,
			/// The commitment signed.
			commitment: ResultCommitment,
			/// Completed (exit code 0) or Failed.
			status: LeaseStatus,
		},
		/// The provider gave notice.
		NoticeGiven {
			/// The lease.
			lease: LeaseId,
			/// From this block it may end the lease without a slash.
			notice_ends_at: BlockNumberFor<T>,
		},
		/// The stream ran out: nothing is charged until it is topped up.
		Suspended {
			/// The lease.
			lease: LeaseId,
		},
		/// A top-up resumed the lease.
		Resumed {
			/// The lease.
			lease: LeaseId,
		},
		/// The lease ended by its provider's result or notice: it counts toward the provider's
		/// reputation, its holdback is paid and its collateral unlocked once the buyer accepts
		/// it, or when the verdict window passes without an objection.
		VerdictPending {
			/// The lease.
			lease: LeaseId,
			/// What will be recorded.
			outcome: Outcome,
			/// The last block in which the buyer may object.
			objections_until: BlockNumberFor<T>,
			/// Withheld from the provider until then.
			holdback: T::Balance,
			/// Slashed if the buyer objects (the provider ended the lease early).
			at_stake: T::Balance,
		},
		/// A verdict was reached: the outcome was recorded for the provider's reputation.
		VerdictRecorded {
			/// The lease.
			lease: LeaseId,
			/// What was recorded: the provider's outcome, or `Objected`.
			outcome: Outcome,
			/// The holdback paid to the provider.
			released: T::Balance,
			/// The holdback returned to the buyer.
			forfeited: T::Balance,
			/// Taken from the provider's bond (an objected early end).
			slashed: T::Balance,
		},
		/// An ended lease's record (and its stream's) was pruned with its order.
		Reaped {
			/// The lease.
			lease: LeaseId,
		},
		/// The lease ended without a result.
		Terminated {
			/// The lease.
			lease: LeaseId,
			/// Why.
			reason: TerminationReason,
			/// Taken from the provider's bond.
			slashed: T::Balance,
		},
		/// The buyer disputed the result: a verifier is drawn at `draw_at`.
		Disputed {
			/// The disputed lease.
			lease: LeaseId,
			/// Held from the buyer: it pays the verifier.
			bond: T::Balance,
			/// The block whose parent's hash draws the verifier.
			draw_at: BlockNumberFor<T>,
		},
		/// A verifier was drawn: it must acknowledge and run the verification lease like any
		/// other.
		VerifierDrawn {
			/// The disputed lease.
			lease: LeaseId,
			/// The verification lease.
			verification: LeaseId,
			/// Who re-executes the job.
			verifier: T::AccountId,
		},
		/// A draw found no eligible verifier (or the last verifier did not deliver): another
		/// is drawn at `draw_at`.
		Redraw {
			/// The disputed lease.
			lease: LeaseId,
			/// The block of the next draw.
			draw_at: BlockNumberFor<T>,
		},
		/// The verifier's result decided the dispute.
		DisputeDecided {
			/// The disputed lease.
			lease: LeaseId,
			/// The verification lease.
			verification: LeaseId,
			/// Whether the result stood (the same outputs): the provider got the holdback and
			/// the bond's remainder. Otherwise the provider was slashed and the buyer refunded.
			upheld: bool,
			/// The bond's remainder paid to the provider (upheld).
			to_provider: T::Balance,
			/// Returned to the buyer from the provider's holdback and bond: what it paid for
			/// the lease and the verifier (overturned).
			restituted: T::Balance,
			/// Taken from the provider's bond besides (overturned).
			slashed: T::Balance,
		},
		/// No verifier delivered within the draws: the bond was refunded and the result
		/// stands.
		DisputeVoid {
			/// The disputed lease.
			lease: LeaseId,
		},
		/// A replica committed its sealed result: its payment stopped and its devices are
		/// free; it reveals once the reveals open.
		ResultSealed {
			/// The replica's lease.
			lease: LeaseId,
			/// What it committed to.
			seal: [u8; 32],
		},
		/// The reveals of a replicated order opened: every replica has ended.
		RevealsOpened {
			/// The order.
			order: stint_traits::OrderId,
			/// The last block to reveal in.
			reveal_until: BlockNumberFor<T>,
		},
		/// A replicated order's replicas were decided by their revealed results.
		ReplicasDecided {
			/// The order.
			order: stint_traits::OrderId,
			/// The majority's result, or none.
			verdict: ReplicaVerdict,
			/// Replicas paid (the majority's).
			paid: u32,
			/// Replicas slashed: outvoted, or committed and not revealed.
			slashed: u32,
		},
	}

	#[pallet::error]
	pub enum Error<T> {
		/// No lease with this id.
		UnknownLease,
		/// Only the lease's provider (or its worker key for the lease's devices) may do this.
		NotProvider,
		/// The signer is a worker key of the lease's provider, but not the one bound to the
		/// lease's devices.
		NotThisWorker,
		/// Only the lease's buyer may do this.
		NotBuyer,
		/// The lease is not waiting for its acknowledgement.
		NotAwaitingAck,
		/// The acknowledgement deadline has passed.
		AckDeadlinePassed,
		/// The acknowledgement deadline has not passed yet.
		AckNotOverdue,
		/// The lease is not running (not yet acknowledged, or already ended).
		NotRunning,
		/// The lease has ended.
		LeaseEnded,
		/// No worker key of the provider is bound to the lease's devices.
		NoWorkerKey,
		/// The signature is not the provider's worker key over this report for this lease on
		/// this chain.
		BadSignature,
		/// The result names another image than the order pinned.
		WrongImage,
		/// The result deadline has passed: report the missed result instead.
		ResultTooLate,
		/// Checkpoints are for open-ended leases.
		NotOpenEnded,
		/// The result or checkpoint is not overdue yet.
		NotOverdue,
		/// The provider already gave notice.
		NoticeAlreadyGiven,
		/// The lease has more devices than `MaxGpusPerLease`.
		TooManyDevices,
		/// A provider cannot report its own lease.
		SelfReport,
		/// No result of this lease waits for a verdict.
		NoPendingVerdict,
		/// The verdict window is over: the outcome stands.
		ObjectionWindowClosed,
		/// The verdict window is still open: only the buyer may settle the verdict now.
		ObjectionWindowOpen,
		/// The lease is live: only an ended one may be pruned.
		LeaseLive,
		/// The open-ended lease's checkpoint is overdue: a late checkpoint, result or
		/// termination would escape the slash the missed one earned; report the missed
		/// checkpoint instead.
		CheckpointOverdue,
		/// A fixed-duration lease ends by its result, not by its provider's `terminate`.
		FixedDuration,
		/// Only results of orders that promised deterministic outputs can be disputed.
		NotDeterministic,
		/// The result is already disputed.
		AlreadyDisputed,
		/// The lease ended by its provider's notice: there is no result to re-execute.
		NoResultToDispute,
		/// The buyer's free balance cannot hold the dispute bond.
		BondUnavailable,
		/// A dispute of this result is open: its verifier's result decides.
		DisputeOpen,
		/// A verification lease ends by its result (or its verifier's fault), not by the
		/// buyer.
		VerificationLease,
		/// A replica's result is decided by its order's replicas (`commit_result`, then
		/// `reveal_result`): no plain result applies, nor, until the replicas are decided, the
		/// buyer's verdict or a dispute (then only to a result revealed alone).
		Replicated,
		/// Only a replica of a replicated order commits a sealed result.
		NotReplicated,
		/// The lease committed no sealed result, or revealed it already.
		NotSealed,
		/// The reveals of this order have not opened: a replica has not committed or ended
		/// yet, and the last block to commit in has not passed.
		RevealsNotOpen,
		/// The reveal window is over: the replica counts as not revealed.
		RevealTooLate,
		/// The result and salt do not open the seal this lease committed (another account's
		/// seal, a wrong salt or a different result).
		SealMismatch,
		/// The replicas cannot be decided yet: a sealed result may still be revealed.
		RevealsOpen,
		/// The replicas were decided already.
		AlreadyDecided,
	}

	#[pallet::hooks]
	impl<T: Config> Hooks<BlockNumberFor<T>> for Pallet<T> {
		fn integrity_test() {
			Self::check_bounds()
		}

		fn on_initialize(now: BlockNumberFor<T>) -> Weight {
			Self::draw_due(now)
		}

		#[cfg(feature = "try-runtime")]
		fn try_state(_: BlockNumberFor<T>) -> Result<(), frame::deps::sp_runtime::TryRuntimeError> {
			Self::do_try_state()
		}
	}

	#[pallet::call(weight(<T as Config>::WeightInfo))]
	impl<T: Config> Pallet<T> {
		/// The provider, or its worker key bound to the lease's devices, acknowledges `lease`:
		/// the job runs from this block and payment starts.
		#[pallet::call_index(0)]
		pub fn ack_lease(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_ack_lease(&who, lease).map_err(Self::refused)?;
			Ok(().into())
		}

		/// Submits the result of `lease`, signed by the provider's worker key over the
		/// [`stint_primitives::Report`] of kind `Final`. Anyone may send it. The provider is paid
		/// to this block (less the holdback), the rest of the escrow is refunded, the lease ends
		/// and its verdict window opens: the holdback and the collateral wait for it. Refused
		/// once a fixed lease's result deadline, or an open-ended lease's checkpoint, is
		/// overdue.
		///
		/// Weighed at the most devices and depositors a lease can have; refunded to its own.
		#[pallet::call_index(1)]
		#[pallet::weight(T::WeightInfo::submit_result(
			T::MaxGpusPerLease::get(),
			T::Streams::max_depositors(),
		))]
		pub fn submit_result(
			origin: OriginFor<T>,
			lease: LeaseId,
			commitment: ResultCommitment,
			signature: WorkerSignature,
		) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			let (gpus, depositors) = Self::do_submit_result(lease, commitment, signature)?;
			Ok(Some(T::WeightInfo::submit_result(gpus, depositors)).into())
		}

		/// Records the next checkpoint of open-ended `lease`, signed by the provider's worker key
		/// over the report of kind `Checkpoint { sequence }` (one more than the last). Anyone may
		/// send it. The provider is paid to this block, less the holdback, which is paid when
		/// this checkpoint's verdict window has passed (at a later checkpoint or the lease's
		/// end). Refused once the checkpoint is overdue.
		///
		/// Weighed at the most depositors a stream can have; refunded to the stream's own.
		#[pallet::call_index(2)]
		#[pallet::weight(T::WeightInfo::checkpoint(T::Streams::max_depositors()))]
		pub fn checkpoint(
			origin: OriginFor<T>,
			lease: LeaseId,
			commitment: ResultCommitment,
			signature: WorkerSignature,
		) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			let depositors = Self::do_checkpoint(lease, commitment, signature)?;
			Ok(Some(T::WeightInfo::checkpoint(depositors)).into())
		}

		/// The provider (or its worker key bound to the lease's devices) gives notice: after the
		/// order's `termination_notice` blocks the provider may end the lease with `terminate`
		/// without being slashed.
		#[pallet::call_index(3)]
		pub fn give_notice(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_give_notice(&who, lease).map_err(Self::refused)?;
			Ok(().into())
		}

		/// The provider ends open-ended `lease`: paid to date, the rest refunded. Without the
		/// notice served in full, its collateral is slashed and the buyer compensated; with it,
		/// the lease waits for the buyer's verdict like a result that ended it early. A lease
		/// not yet acknowledged ends as a no-show (slashed as one), whatever the notice.
		/// Refused for a fixed-duration lease (it ends by its result) and once a checkpoint is
		/// overdue (only a report, and its slash, ends such a lease).
		#[pallet::call_index(4)]
		#[pallet::weight(T::WeightInfo::terminate(
			T::MaxGpusPerLease::get(),
			T::Streams::max_depositors(),
		))]
		pub fn terminate(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let (gpus, depositors) = Self::do_terminate(&who, lease).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::terminate(gpus, depositors)).into())
		}

		/// The buyer ends `lease` at any time: the provider is paid to date, the rest refunded,
		/// nobody is slashed.
		#[pallet::call_index(5)]
		#[pallet::weight(T::WeightInfo::close_lease(
			T::MaxGpusPerLease::get(),
			T::Streams::max_depositors(),
		))]
		pub fn close_lease(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let (gpus, depositors) = Self::do_close_lease(&who, lease).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::close_lease(gpus, depositors)).into())
		}

		/// Anyone reports that the provider did not acknowledge `lease` in time: the provider is
		/// slashed, the buyer refunded and compensated, the reporter rewarded.
		#[pallet::call_index(6)]
		#[pallet::weight(T::WeightInfo::report_no_show(
			T::MaxGpusPerLease::get(),
			T::Streams::max_depositors(),
		))]
		pub fn report_no_show(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let (gpus, depositors) = Self::do_report_no_show(&who, lease).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::report_no_show(gpus, depositors)).into())
		}

		/// Anyone reports that `lease` missed its result (fixed duration: `ends_at +
		/// ResultGrace`) or its checkpoint (open-ended: `CheckpointInterval` while running):
		/// slashed and refunded as for a no-show.
		#[pallet::call_index(7)]
		#[pallet::weight(T::WeightInfo::report_missed_result(
			T::MaxGpusPerLease::get(),
			T::Streams::max_depositors(),
		))]
		pub fn report_missed_result(
			origin: OriginFor<T>,
			lease: LeaseId,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let (gpus, depositors) =
				Self::do_report_missed_result(&who, lease).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::report_missed_result(gpus, depositors)).into())
		}

		/// The buyer accepts the result (or the notice) that ended `lease`: its outcome counts
		/// toward the provider's reputation, its holdback is paid and its collateral unlocked,
		/// now.
		#[pallet::call_index(8)]
		pub fn accept_result(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_accept_result(&who, lease).map_err(Self::refused)?;
			Ok(().into())
		}

		/// The buyer objects, within the verdict window, to the result (or the notice) that
		/// ended `lease`: the provider's reputation records a failed delivery instead. If the
		/// provider ended the lease before its end, it is slashed for the time it did not
		/// deliver (all its collateral within `EarlyExitBlocks` of the acknowledgement): burnt
		/// for an early result, half to the buyer (and the holdback back to it) for a
		/// `terminate`. The objection is counted on the buyer's record.
		#[pallet::call_index(9)]
		pub fn object_to_result(
			origin: OriginFor<T>,
			lease: LeaseId,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_object_to_result(&who, lease).map_err(Self::refused)?;
			Ok(().into())
		}

		/// Anyone settles the verdict on a result whose verdict window passed without an
		/// objection (the provider has reason to): its outcome counts, its holdback is paid and
		/// its collateral unlocked.
		#[pallet::call_index(10)]
		pub fn confirm_result(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			Self::do_confirm_result(lease).map_err(Self::refused)?;
			Ok(().into())
		}

		/// The buyer disputes, within the verdict window, the result of a deterministic
		/// order's `lease`: it posts a bond (twice the lease's run at its price, at least
		/// `DisputeBond`), and `DrawDelay` blocks later a verifier is drawn from the block hash
		/// among the providers that could serve the order (neither the provider, its worker
		/// keys' accounts nor the buyer) to re-execute the job on a verification lease paid
		/// from the bond. Its outputs decide: the same, and the provider gets the holdback and
		/// the bond's remainder; others, and the provider is slashed and the buyer refunded
		/// what it paid, bond included. A verifier that does not deliver is slashed and
		/// another drawn; after `MAX_DISPUTE_DRAWS` the dispute is void and the bond refunded.
		#[pallet::call_index(11)]
		pub fn dispute(origin: OriginFor<T>, lease: LeaseId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_dispute(&who, lease).map_err(Self::refused)?;
			Ok(().into())
		}

		/// The provider (or its worker key bound to the lease's devices) of a replica commits
		/// its result sealed: `stint_primitives::seal(commitment, provider, salt)`, which
		/// nobody can read before the reveals, nor copy (it names the provider). It counts as
		/// the replica's result for its deadline: the provider is paid to this block (less the
		/// holdback), the rest of the escrow refunded, the devices released; the collateral and
		/// the holdback wait for the replicas' decision.
		///
		/// Weighed at the most devices; refunded to the lease's own.
		#[pallet::call_index(12)]
		#[pallet::weight(T::WeightInfo::commit_result(T::MaxGpusPerLease::get()))]
		pub fn commit_result(
			origin: OriginFor<T>,
			lease: LeaseId,
			seal: [u8; 32],
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let (gpus, _) = Self::do_commit_result(&who, lease, seal).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::commit_result(gpus)).into())
		}

		/// Reveals the sealed result of replica `lease`: the result, signed by the provider's
		/// worker key as a `Final` report, and the salt that opens its seal. Anyone may send
		/// it, from the block the reveals open (every replica ended, or the last block to
		/// commit in passed) for `RevealWindow` blocks. The last reveal decides the replicas
		/// (see `decide_replicas`).
		///
		/// Weighed with the decision of the most replicas; refunded when it decides nothing.
		#[pallet::call_index(13)]
		#[pallet::weight(T::WeightInfo::reveal_result(stint_primitives::MAX_REPLICAS))]
		pub fn reveal_result(
			origin: OriginFor<T>,
			lease: LeaseId,
			commitment: ResultCommitment,
			salt: [u8; 32],
			signature: WorkerSignature,
		) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			let decided = Self::do_reveal_result(lease, commitment, salt, signature)?;
			Ok(Some(T::WeightInfo::reveal_result(decided)).into())
		}

		/// Anyone decides the replicas of replicated `order` once its reveal window is over:
		/// the majority's output root and exit code (more than half of the replicas) is paid
		/// (holdback and collateral released); a replica that revealed another result, or
		/// committed and did not reveal, is slashed: its holdback goes back to the buyer, its
		/// bond restitutes what it was paid and its collateral is slashed, half to the buyer.
		/// With no majority, what every revealed replica was paid goes back to the buyer and
		/// nobody is slashed for its result. A result revealed alone (every other replica ended
		/// without one) waits for the buyer's verdict from then, disputes included, as the
		/// result of an order of one replica does.
		#[pallet::call_index(14)]
		#[pallet::weight(T::WeightInfo::decide_replicas(stint_primitives::MAX_REPLICAS))]
		pub fn decide_replicas(
			origin: OriginFor<T>,
			order: stint_traits::OrderId,
		) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			let replicas = Self::do_decide_replicas(order).map_err(Self::refused)?;
			Ok(Some(T::WeightInfo::decide_replicas(replicas)).into())
		}
	}
}
