#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub use pallet::*;

mod asset;
#[cfg(feature = "runtime-benchmarks")]
mod benchmarking;
mod dispatchable_impls;
#[cfg(test)]
mod mock;
mod stream_impls;
#[cfg(test)]
mod tests;
mod tick_impls;
mod types;
pub mod weights;

pub use stint_traits::{CloseReason, StreamId};
pub use types::*;
pub use weights::WeightInfo;

use frame::{prelude::*, traits::fungible};

/// The balance type of the escrow's currency.
pub type BalanceOf<T> =
	<<T as Config>::Currency as fungible::Inspect<<T as frame_system::Config>::AccountId>>::Balance;

pub use tick_impls::WakeupQueue;

#[frame::pallet]
pub mod pallet {
	use super::*;
	use stint_traits::{buckets, StreamObserver};

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
			type MaxDepositors = ConstU32<8>;
			type MaxWakeupsPerBlock = ConstU32<64>;
			type WeightInfo = ();
		}
	}

	#[pallet::config(with_default)]
	pub trait Config: frame_system::Config<RuntimeEvent: From<Event<Self>>> {
		/// The currency escrow is held in.
		#[pallet::no_default]
		type Currency: fungible::Inspect<Self::AccountId>
			+ fungible::Mutate<Self::AccountId>
			+ fungible::MutateHold<Self::AccountId, Reason = Self::RuntimeHoldReason>;

		/// The runtime's hold reasons, which include this pallet's.
		#[pallet::no_default]
		type RuntimeHoldReason: From<HoldReason>;

		/// Blocks a depleted stream waits for a top-up before it closes.
		/// Not a metadata constant: runtimes may make it a runtime parameter.
		#[pallet::no_default]
		type GracePeriod: Get<BlockNumberFor<Self>>;

		/// The protocol's part of every payment, burnt: what makes reputation cost real money
		/// to farm (a payment from a buyer to its own provider still loses it).
		#[pallet::constant]
		#[pallet::no_default]
		type TakeRate: Get<Permill>;

		/// Told when a stream is suspended, resumed or closed without its owner asking.
		#[pallet::no_default]
		type Observer: StreamObserver;

		/// The most accounts that may fund one stream.
		#[pallet::constant]
		type MaxDepositors: Get<u32>;

		/// The most streams the block hook wakes in one block; more wait for the next block, in
		/// the order they fell due.
		#[pallet::constant]
		type MaxWakeupsPerBlock: Get<u32>;

		/// Weights of this pallet's calls and hook.
		type WeightInfo: WeightInfo;
	}

	/// Why this pallet holds funds.
	#[pallet::composite_enum]
	pub enum HoldReason {
		/// Escrow of a payment stream, held on the depositor's account.
		#[codec(index = 0)]
		StreamEscrow,
		/// A payment's holdback, held on the payee until the verdict on the period it paid for.
		#[codec(index = 1)]
		Holdback,
	}

	/// Every stream, by id. Closed streams stay, with their final accounts, until their owner
	/// (the lease) is pruned.
	#[pallet::storage]
	pub type Records<T: Config> =
		StorageMap<_, Blake2_128Concat, StreamId, StreamOf<T>, OptionQuery>;

	/// The id the next stream gets.
	#[pallet::storage]
	pub type NextStreamId<T: Config> = StorageValue<_, StreamId, ValueQuery>;

	/// Streams to look at, by block and page: their depletion, or the end of their grace.
	#[pallet::storage]
	pub type Wakeups<T: Config> =
		StorageMap<_, Twox64Concat, (BlockNumberFor<T>, u32), buckets::Page<StreamId>, ValueQuery>;

	/// How many pages of [`Wakeups`] each block has had.
	#[pallet::storage]
	pub type WakeupPages<T: Config> =
		StorageMap<_, Twox64Concat, BlockNumberFor<T>, u32, ValueQuery>;

	/// The first page of [`Wakeups`] the hook has not handled.
	#[pallet::storage]
	pub type WakeupCursor<T: Config> =
		StorageValue<_, buckets::Slot<BlockNumberFor<T>>, OptionQuery>;

	#[pallet::event]
	#[pallet::generate_deposit(pub(super) fn deposit_event)]
	pub enum Event<T: Config> {
		/// A stream opened.
		Opened {
			/// The stream.
			stream: StreamId,
			/// Who pays.
			payer: T::AccountId,
			/// Who is paid.
			payee: T::AccountId,
			/// Paid per block.
			rate: BalanceOf<T>,
			/// The escrow held.
			deposit: BalanceOf<T>,
		},
		/// A pending stream started charging.
		Started {
			/// The stream.
			stream: StreamId,
			/// When the escrow runs out at its rate.
			depletes_at: BlockNumberFor<T>,
		},
		/// What was owed was paid.
		Settled {
			/// The stream.
			stream: StreamId,
			/// Paid to the payee.
			to_payee: BalanceOf<T>,
			/// The protocol's take, burnt.
			burnt: BalanceOf<T>,
			/// Withheld, on the payee, until its verdict.
			withheld: BalanceOf<T>,
			/// Escrow still held.
			held: BalanceOf<T>,
		},
		/// Someone added escrow.
		ToppedUp {
			/// The stream.
			stream: StreamId,
			/// Who added it.
			depositor: T::AccountId,
			/// How much.
			amount: BalanceOf<T>,
			/// When the escrow now runs out.
			depletes_at: BlockNumberFor<T>,
		},
		/// The stream ran out of escrow and charges nothing until topped up.
		Suspended {
			/// The stream.
			stream: StreamId,
			/// When it closes unless topped up.
			grace_ends: BlockNumberFor<T>,
		},
		/// A top-up resumed a suspended stream.
		Resumed {
			/// The stream.
			stream: StreamId,
			/// When the escrow now runs out.
			depletes_at: BlockNumberFor<T>,
		},
		/// The stream closed.
		Closed {
			/// The stream.
			stream: StreamId,
			/// Why.
			reason: CloseReason,
			/// Everything paid over its life.
			paid: BalanceOf<T>,
			/// Everything refunded to depositors (or paid to whom the owner named: a dispute
			/// bond's remainder).
			refunded: BalanceOf<T>,
		},
		/// Withheld payments were released to the payee.
		Released {
			/// The stream.
			stream: StreamId,
			/// Paid to the payee.
			to_payee: BalanceOf<T>,
			/// The protocol's take, burnt.
			burnt: BalanceOf<T>,
			/// Still withheld.
			withheld: BalanceOf<T>,
		},
		/// Withheld payments were returned to the payer.
		Forfeited {
			/// The stream.
			stream: StreamId,
			/// Returned to the payer.
			amount: BalanceOf<T>,
		},
		/// A closed stream's record was pruned, with its owner's.
		Reaped {
			/// The stream.
			stream: StreamId,
		},
		/// A pending stream was given another payee (a dispute bond, once its verifier is
		/// drawn).
		Redirected {
			/// The stream.
			stream: StreamId,
			/// Who it will pay.
			payee: T::AccountId,
		},
	}

	#[pallet::error]
	pub enum Error<T> {
		/// No stream with this id.
		UnknownStream,
		/// The stream is closed.
		StreamClosed,
		/// The rate is zero.
		ZeroRate,
		/// The amount is zero.
		ZeroAmount,
		/// The stream already holds all it may ever pay (a fixed-duration lease is paid in
		/// full from its escrow): nothing more is taken.
		FullyFunded,
		/// A top-up that resumes a suspended stream must pay for at least its grace period.
		TopUpTooSmall,
		/// The account cannot afford the escrow.
		InsufficientBalance,
		/// The stream already has `MaxDepositors` depositors.
		TooManyDepositors,
		/// Only the payee may do this.
		NotPayee,
		/// The stream has already started.
		AlreadyStarted,
		/// The stream is still open: only a closed one may be pruned.
		StreamOpen,
		/// Part of the stream's payments is still withheld, waiting for a verdict.
		HoldbackPending,
	}

	#[pallet::hooks]
	impl<T: Config> Hooks<BlockNumberFor<T>> for Pallet<T> {
		fn on_initialize(now: BlockNumberFor<T>) -> Weight {
			Self::wake_up(now)
		}

		fn integrity_test() {
			assert!(T::MaxDepositors::get() > 0, "MaxDepositors must be positive");
			assert!(T::MaxWakeupsPerBlock::get() > 0, "MaxWakeupsPerBlock must be positive");
		}

		#[cfg(feature = "try-runtime")]
		fn try_state(_: BlockNumberFor<T>) -> Result<(), frame::deps::sp_runtime::TryRuntimeError> {
			Self::do_try_state()
		}
	}

	#[pallet::call(weight(<T as Config>::WeightInfo))]
	impl<T: Config> Pallet<T> {
		/// Pays the payee of `stream` what is owed up to this block. Anyone may call it.
		#[pallet::call_index(0)]
		#[pallet::weight(T::WeightInfo::settle(T::MaxDepositors::get()))]
		pub fn settle(origin: OriginFor<T>, stream: StreamId) -> DispatchResultWithPostInfo {
			ensure_signed(origin)?;
			Self::do_settle(stream).map_err(Self::refused)?;
			Ok(Self::charged(stream, T::WeightInfo::settle))
		}

		/// The payee of `stream` collects what is owed up to this block.
		#[pallet::call_index(1)]
		#[pallet::weight(T::WeightInfo::withdraw(T::MaxDepositors::get()))]
		pub fn withdraw(origin: OriginFor<T>, stream: StreamId) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			Self::do_withdraw(&who, stream).map_err(Self::refused)?;
			Ok(Self::charged(stream, T::WeightInfo::withdraw))
		}

		/// Adds `amount` of the signer's balance to the escrow of `stream`. Resumes a suspended
		/// stream. Anyone may fund any open stream.
		#[pallet::call_index(2)]
		#[pallet::weight(T::WeightInfo::top_up(T::MaxDepositors::get())
			.saturating_add(T::Observer::resume_weight()))]
		pub fn top_up(
			origin: OriginFor<T>,
			stream: StreamId,
			#[pallet::compact] amount: BalanceOf<T>,
		) -> DispatchResultWithPostInfo {
			let who = ensure_signed(origin)?;
			let resumed = Self::do_top_up(&who, stream, amount).map_err(Self::refused)?;
			let resume = if resumed { T::Observer::resume_weight() } else { Weight::zero() };
			Ok(Self::charged(stream, |depositors| {
				T::WeightInfo::top_up(depositors).saturating_add(resume)
			}))
		}

		// Call index 3 (`close` by the payer) is retired: a stream's payer ends it through its
		// owner (`Leases.close_lease`), the one door a buyer has, so a lease and its stream end
		// together, in one order of steps.
	}
}
