//! What each call does, after the origin is checked.

use crate::{asset, BalanceOf, BondLedgerOf, Config, Error, Event, Ledgers, Pallet, UnlockChunk};
use frame::prelude::*;
use stint_primitives::SlashReason;
use stint_traits::Slashing;

impl<T: Config> Pallet<T> {
	pub(crate) fn do_bond(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
		ensure!(!Ledgers::<T>::contains_key(who), Error::<T>::AlreadyBonded);
		ensure!(amount >= T::MinBond::get() && !amount.is_zero(), Error::<T>::BondTooSmall);
		asset::hold::<T>(who, amount)?;
		Ledgers::<T>::insert(who, BondLedgerOf::<T>::new(amount));
		Self::deposit_event(Event::Bonded { provider: who.clone(), amount });
		Ok(())
	}

	pub(crate) fn do_bond_more(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
		let mut ledger = Self::ledger(who)?;
		ensure!(!amount.is_zero(), Error::<T>::ZeroAmount);
		asset::hold::<T>(who, amount)?;
		ledger.active.saturating_accrue(amount);
		Ledgers::<T>::insert(who, ledger);
		Self::deposit_event(Event::Bonded { provider: who.clone(), amount });
		Ok(())
	}

	pub(crate) fn do_unbond(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
		let mut ledger = Self::ledger(who)?;
		ensure!(!amount.is_zero(), Error::<T>::ZeroAmount);
		ensure!(amount <= ledger.active, Error::<T>::UnbondMoreThanBonded);
		ensure!(amount <= ledger.free(), Error::<T>::CollateralLocked);
		let remaining = ledger.active - amount;
		ensure!(remaining.is_zero() || remaining >= T::MinBond::get(), Error::<T>::BondTooSmall);

		let unlocks_at =
			frame_system::Pallet::<T>::block_number().saturating_add(T::UnbondingPeriod::get());
		ledger.active = remaining;
		match ledger.unlocking.last_mut() {
			Some(chunk) if chunk.unlocks_at == unlocks_at => chunk.value.saturating_accrue(amount),
			_ => ledger
				.unlocking
				.try_push(UnlockChunk { value: amount, unlocks_at })
				.map_err(|_| Error::<T>::TooManyUnlockingChunks)?,
		}
		Ledgers::<T>::insert(who, ledger);
		Self::deposit_event(Event::Unbonded { provider: who.clone(), amount, unlocks_at });
		Ok(())
	}

	pub(crate) fn do_rebond(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
		let mut ledger = Self::ledger(who)?;
		ensure!(!amount.is_zero(), Error::<T>::ZeroAmount);
		let unlocking = ledger.total().saturating_sub(ledger.active);
		ensure!(amount <= unlocking, Error::<T>::RebondMoreThanUnbonding);
		let mut left = amount;
		for chunk in ledger.unlocking.iter_mut().rev() {
			let take = left.min(chunk.value);
			chunk.value.saturating_reduce(take);
			left.saturating_reduce(take);
			if left.is_zero() {
				break;
			}
		}
		ledger.unlocking.retain(|chunk| !chunk.value.is_zero());
		ledger.active.saturating_accrue(amount);
		Ledgers::<T>::insert(who, ledger);
		Self::deposit_event(Event::Rebonded { provider: who.clone(), amount });
		Ok(())
	}

	pub(crate) fn do_withdraw_unbonded(who: &T::AccountId) -> DispatchResult {
		let mut ledger = Self::ledger(who)?;
		let now = frame_system::Pallet::<T>::block_number();
		let matured = ledger
			.unlocking
			.iter()
			.filter(|chunk| chunk.unlocks_at <= now)
			.fold(BalanceOf::<T>::zero(), |sum, chunk| sum.saturating_add(chunk.value));
		ensure!(!matured.is_zero(), Error::<T>::NothingToWithdraw);
		ledger.unlocking.retain(|chunk| chunk.unlocks_at > now);
		asset::release::<T>(who, matured)?;
		Self::store(who, ledger);
		Self::deposit_event(Event::Withdrawn { provider: who.clone(), amount: matured });
		Ok(())
	}

	pub(crate) fn do_force_slash(
		who: &T::AccountId,
		amount: BalanceOf<T>,
		beneficiary: Option<&T::AccountId>,
	) -> DispatchResult {
		Self::ledger(who)?;
		ensure!(!amount.is_zero(), Error::<T>::ZeroAmount);
		<Self as Slashing<T::AccountId, BalanceOf<T>>>::slash(
			who,
			amount,
			beneficiary,
			None,
			SlashReason::Governance,
		);
		Ok(())
	}

	/// The ledger of a provider with a bond.
	pub(crate) fn ledger(who: &T::AccountId) -> Result<BondLedgerOf<T>, DispatchError> {
		Ledgers::<T>::get(who).ok_or_else(|| Error::<T>::NotBonded.into())
	}

	/// Stores `ledger`, or removes it once nothing is left in it.
	pub(crate) fn store(who: &T::AccountId, ledger: BondLedgerOf<T>) {
		if ledger.is_empty() {
			Ledgers::<T>::remove(who);
		} else {
			Ledgers::<T>::insert(who, ledger);
		}
	}
}
