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
mod slashing_impls;
#[cfg(test)]
mod tests;
mod types;
pub mod weights;

pub use types::*;
pub use weights::WeightInfo;

use frame::{
	deps::sp_runtime::TryRuntimeError,
	prelude::*,
	traits::{fungible, tokens::fungible::Credit},
};

/// The balance type of the bond's currency.
pub type BalanceOf<T> =
	<<T as Config>::Currency as fungible::Inspect<<T as frame_system::Config>::AccountId>>::Balance;
/// Slashed funds on their way to the buyer, the reporter and the slash handler.
pub type CreditOf<T> = Credit<<T as frame_system::Config>::AccountId, <T as Config>::Currency>;

#[frame::pallet]
pub mod pallet {
	use super::*;
	use alloc::vec::Vec;
	use stint_primitives::SlashReason;

	const STORAGE_VERSION: StorageVersion = StorageVersion::new(0);

	#[pallet::pallet]
	#[pallet::storage_version(STORAGE_VERSION)]
	pub struct Pallet<T>(_);

	/// Defaults for bounds and weights; money, time and shares are set by each runtime.
	pub mod config_preludes {
		use super::*;
		use frame::runtime::prelude::derive_impl;

		pub struct TestDefaultConfig;

		#[derive_impl(frame_system::config_preludes::TestDefaultConfig, no_aggregated_types)]
		impl frame_system::DefaultConfig for TestDefaultConfig {}

		#[frame::deps::frame_support::register_default_impl(TestDefaultConfig)]
		impl DefaultConfig for TestDefaultConfig {
			type MaxUnlockingChunks = ConstU32<8>;
			type WeightInfo = ();
		}
	}

	#[pallet::config(with_default)]
	pub trait Config: frame_system::Config<RuntimeEvent: From<Event<Self>>> {
		/// The currency bonds are held in.
		#[pallet::no_default]
		type Currency: fungible::Inspect<Self::AccountId>
			+ fungible::Mutate<Self::AccountId>
			+ fungible::Balanced<Self::AccountId>
			+ fungible::MutateHold<Self::AccountId, Reason = Self::RuntimeHoldReason>
			+ fungible::BalancedHold<Self::AccountId>;

		/// The runtime's hold reasons, which include this pallet's.
		#[pallet::no_default]
		type RuntimeHoldReason: From<HoldReason>;

		/// The smallest bond, and the smallest active bond left after an unbond (other than none).
		#[pallet::constant]
		#[pallet::no_default]
		type MinBond: Get<BalanceOf<Self>>;

		/// Blocks from `unbond` until the chunk can be withdrawn.
		#[pallet::constant]
		#[pallet::no_default]
		type UnbondingPeriod: Get<BlockNumberFor<Self>>;

		/// The most unbonding chunks a provider may have at once.
		#[pallet::constant]
		type MaxUnlockingChunks: Get<u32>;

		/// The part of a slash paid to the buyer the fault harmed.
		#[pallet::constant]
		#[pallet::no_default]
		type BuyerShare: Get<Permill>;

		/// The part of a slash paid to whoever reported the fault.
		#[pallet::constant]
		#[pallet::no_default]
		type ReporterShare: Get<Permill>;

		/// Receives the rest of every slash: burn it (`()`) or send it to a treasury.
		#[pallet::no_default]
		type OnSlash: frame::traits::OnUnbalanced<CreditOf<Self>>;

		/// Who may `force_slash` (governance; root on the dev chain).
		#[pallet::no_default]
		type ForceOrigin: EnsureOrigin<Self::RuntimeOrigin>;

		/// Weights of this pallet's calls.
		type WeightInfo: WeightInfo;
	}

	/// Why this pallet holds funds.
	#[pallet::composite_enum]
	pub enum HoldReason {
		/// A provider's bond: collateral for its leases, slashable until withdrawn.
		#[codec(index = 0)]
		ProviderBond,
	}

	/// The bond of every provider that has one.
	#[pallet::storage]
	pub type Ledgers<T: Config> =
		StorageMap<_, Blake2_128Concat, T::AccountId, BondLedgerOf<T>, OptionQuery>;

	#[pallet::event]
	#[pallet::generate_deposit(pub(super) fn deposit_event)]
	pub enum Event<T: Config> {
		/// A provider bonded more.
		Bonded {
			/// The provider.
			provider: T::AccountId,
			/// How much was added to the active bond.
			amount: BalanceOf<T>,
		},
		/// A provider started unbonding.
		Unbonded {
			/// The provider.
			provider: T::AccountId,
			/// How much left the active bond.
			amount: BalanceOf<T>,
			/// When it can be withdrawn.
			unlocks_at: BlockNumberFor<T>,
		},
		/// A provider moved unbonding funds back into its active bond.
		Rebonded {
			/// The provider.
			provider: T::AccountId,
			/// How much came back.
			amount: BalanceOf<T>,
		},
		/// A provider withdrew matured unbonding chunks to its free balance.
		Withdrawn {
			/// The provider.
			provider: T::AccountId,
			/// How much was released.
			amount: BalanceOf<T>,
		},
		/// Part of a provider's bond was locked: a bid's collateral and deposit, or a lease's
		/// collateral.
		CollateralLocked {
			/// The provider.
			provider: T::AccountId,
			/// How much was locked.
			amount: BalanceOf<T>,
		},
		/// Locked bond was unlocked: a bid released, a lease ended.
		CollateralUnlocked {
			/// The provider.
			provider: T::AccountId,
			/// How much was unlocked.
			amount: BalanceOf<T>,
		},
		/// A provider's bond was slashed.
		Slashed {
			/// The provider.
			provider: T::AccountId,
			/// Why.
			reason: SlashReason,
			/// How much was taken in all.
			amount: BalanceOf<T>,
			/// The buyer compensated, if any.
			buyer: Option<T::AccountId>,
			/// What the buyer received.
			to_buyer: BalanceOf<T>,
			/// The reporter rewarded, if any.
			reporter: Option<T::AccountId>,
			/// What the reporter received.
			to_reporter: BalanceOf<T>,
			/// What went to the slash handler (burnt or to the treasury).
			to_handler: BalanceOf<T>,
		},
		/// Locked bond was forfeited: a bid's deposit, its provider having withdrawn late or
		/// become unable to honour it.
		Forfeited {
			/// The provider.
			provider: T::AccountId,
			/// How much left the bond.
			amount: BalanceOf<T>,
			/// Who received it (the order's buyer); burnt if none.
			to: Option<T::AccountId>,
		},
	}

	#[pallet::error]
	pub enum Error<T> {
		/// This account already has a bond; use `bond_more`.
		AlreadyBonded,
		/// This account has no bond.
		NotBonded,
		/// The amount is zero.
		ZeroAmount,
		/// The bond (or what would remain active) is below `MinBond`.
		BondTooSmall,
		/// The account cannot afford to bond that much.
		InsufficientBalance,
		/// Unbonding more than is actively bonded.
		UnbondMoreThanBonded,
		/// That much of the bond is locked as collateral for running leases.
		CollateralLocked,
		/// Too many unbonding chunks: withdraw or rebond first.
		TooManyUnlockingChunks,
		/// Rebonding more than is unbonding.
		RebondMoreThanUnbonding,
		/// No unbonding chunk has matured yet.
		NothingToWithdraw,
		/// The free bond does not cover the collateral asked for.
		InsufficientFreeBond,
	}

	#[pallet::genesis_config]
	#[derive(frame::prelude::DefaultNoBound)]
	pub struct GenesisConfig<T: Config> {
		/// Bonds held at genesis.
		pub bonds: Vec<(T::AccountId, BalanceOf<T>)>,
	}

	#[pallet::genesis_build]
	impl<T: Config> BuildGenesisConfig for GenesisConfig<T> {
		fn build(&self) {
			for (who, amount) in &self.bonds {
				Pallet::<T>::do_bond(who, *amount).expect("genesis bonds must be affordable");
			}
		}
	}

	#[pallet::hooks]
	impl<T: Config> Hooks<BlockNumberFor<T>> for Pallet<T> {
		fn integrity_test() {
			assert!(
				T::BuyerShare::get().deconstruct() + T::ReporterShare::get().deconstruct()
					<= Permill::ACCURACY,
				"BuyerShare + ReporterShare must not exceed 100%"
			);
			assert!(T::MaxUnlockingChunks::get() > 0, "MaxUnlockingChunks must be positive");
		}

		#[cfg(feature = "try-runtime")]
		fn try_state(_: BlockNumberFor<T>) -> Result<(), TryRuntimeError> {
			Self::do_try_state()
		}
	}

	#[pallet::call(weight(<T as Config>::WeightInfo))]
	impl<T: Config> Pallet<T> {
		/// Bonds `amount` (at least `MinBond`) of the signer's balance. The signer must not have
		/// a bond yet.
		#[pallet::call_index(0)]
		pub fn bond(
			origin: OriginFor<T>,
			#[pallet::compact] amount: BalanceOf<T>,
		) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_bond(&who, amount)
		}

		/// Adds `amount` to the signer's active bond.
		#[pallet::call_index(1)]
		pub fn bond_more(
			origin: OriginFor<T>,
			#[pallet::compact] amount: BalanceOf<T>,
		) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_bond_more(&who, amount)
		}

		/// Starts unbonding `amount` of the signer's active, unlocked bond. It stays slashable
		/// and can be withdrawn after `UnbondingPeriod`.
		#[pallet::call_index(2)]
		pub fn unbond(
			origin: OriginFor<T>,
			#[pallet::compact] amount: BalanceOf<T>,
		) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_unbond(&who, amount)
		}

		/// Moves `amount` of the signer's unbonding funds (newest first) back into its active bond.
		#[pallet::call_index(3)]
		pub fn rebond(
			origin: OriginFor<T>,
			#[pallet::compact] amount: BalanceOf<T>,
		) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_rebond(&who, amount)
		}

		/// Releases the signer's matured unbonding chunks to its free balance.
		#[pallet::call_index(4)]
		pub fn withdraw_unbonded(origin: OriginFor<T>) -> DispatchResult {
			let who = ensure_signed(origin)?;
			Self::do_withdraw_unbonded(&who)
		}

		/// Governance: slashes up to `amount` of `provider`'s bond, paying the buyer share to
		/// `beneficiary` if one is given.
		#[pallet::call_index(5)]
		pub fn force_slash(
			origin: OriginFor<T>,
			provider: T::AccountId,
			#[pallet::compact] amount: BalanceOf<T>,
			beneficiary: Option<T::AccountId>,
		) -> DispatchResult {
			T::ForceOrigin::ensure_origin(origin)?;
			Self::do_force_slash(&provider, amount, beneficiary.as_ref())
		}
	}

	impl<T: Config> Pallet<T> {
		/// The bonds' invariants: held equals active plus unlocking, no empty chunk or ledger.
		/// (Locked collateral may exceed the active bond after a slash; the runtime's tests check
		/// it equals what bids and leases claim.)
		pub fn do_try_state() -> Result<(), TryRuntimeError> {
			for (who, ledger) in Ledgers::<T>::iter() {
				ensure!(
					asset::held::<T>(&who) == ledger.total(),
					"held bond differs from the ledger"
				);
				ensure!(
					ledger.unlocking.iter().all(|c| !c.value.is_zero()),
					"an unlocking chunk is empty"
				);
				ensure!(!ledger.is_empty(), "an empty ledger is stored");
			}
			Ok(())
		}
	}
}
