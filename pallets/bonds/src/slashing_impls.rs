//! The bond as other pallets see it: collateral to lock, and a bond to slash.

use crate::{asset, BalanceOf, Config, Error, Event, Ledgers, Pallet};
use frame::{
	prelude::*,
	traits::{Imbalance, OnUnbalanced},
};
use stint_primitives::SlashReason;
use stint_traits::{ProviderCollateral, Slashing};

impl<T: Config> ProviderCollateral<T::AccountId, BalanceOf<T>> for Pallet<T> {
	fn free_bond(who: &T::AccountId) -> BalanceOf<T> {
		Ledgers::<T>::get(who).map(|ledger| ledger.free()).unwrap_or_default()
	}

	fn lock_collateral(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
		let mut ledger = Self::ledger(who)?;
		ensure!(amount <= ledger.free(), Error::<T>::InsufficientFreeBond);
		ledger.locked.saturating_accrue(amount);
		Ledgers::<T>::insert(who, ledger);
		Self::deposit_event(Event::CollateralLocked { provider: who.clone(), amount });
		Ok(())
	}

	fn unlock_collateral(who: &T::AccountId, amount: BalanceOf<T>) {
		let Some(mut ledger) = Ledgers::<T>::get(who) else { return };
		let amount = amount.min(ledger.locked);
		if amount.is_zero() {
			return;
		}
		ledger.locked.saturating_reduce(amount);
		Self::store(who, ledger);
		Self::deposit_event(Event::CollateralUnlocked { provider: who.clone(), amount });
	}

	fn forfeit_locked(
		who: &T::AccountId,
		amount: BalanceOf<T>,
		to: Option<&T::AccountId>,
	) -> BalanceOf<T> {
		let Some(mut ledger) = Ledgers::<T>::get(who) else { return Zero::zero() };
		let amount = amount.min(ledger.locked).min(ledger.active);
		if amount.is_zero() {
			return Zero::zero();
		}
		let moved = match to {
			Some(to) => asset::pay_held::<T>(who, to, amount),
			None => asset::burn_held::<T>(who, amount),
		};
		if moved.is_err() {
			// The hold is the ledger's total (try_state): this cannot fail. If it did, nothing
			// moved and the ledger stays as it is.
			return Zero::zero();
		}
		ledger.locked.saturating_reduce(amount);
		ledger.active.saturating_reduce(amount);
		Self::store(who, ledger);
		Self::deposit_event(Event::Forfeited { provider: who.clone(), amount, to: to.cloned() });
		amount
	}
}

impl<T: Config> Slashing<T::AccountId, BalanceOf<T>> for Pallet<T> {
	fn slash(
		who: &T::AccountId,
		amount: BalanceOf<T>,
		buyer: Option<&T::AccountId>,
		reporter: Option<&T::AccountId>,
		reason: SlashReason,
	) -> BalanceOf<T> {
		Self::take_bond(who, amount, buyer.map(|b| (b, T::BuyerShare::get())), reporter, reason)
	}

	fn restitute(
		who: &T::AccountId,
		amount: BalanceOf<T>,
		to: &T::AccountId,
		reason: SlashReason,
	) -> BalanceOf<T> {
		Self::take_bond(who, amount, Some((to, Permill::one())), None, reason)
	}
}

impl<T: Config> Pallet<T> {
	/// Takes up to `amount` of `who`'s bond (active first, then the unlocking chunks, newest
	/// first): `buyer` gets its share, the reporter the configured one, the slash handler the
	/// rest. Returns what was taken.
	fn take_bond(
		who: &T::AccountId,
		amount: BalanceOf<T>,
		buyer: Option<(&T::AccountId, Permill)>,
		reporter: Option<&T::AccountId>,
		reason: SlashReason,
	) -> BalanceOf<T> {
		let Some(mut ledger) = Ledgers::<T>::get(who) else { return Zero::zero() };

		let mut left = amount;
		let from_active = left.min(ledger.active);
		ledger.active.saturating_reduce(from_active);
		left.saturating_reduce(from_active);
		for chunk in ledger.unlocking.iter_mut().rev() {
			let take = left.min(chunk.value);
			chunk.value.saturating_reduce(take);
			left.saturating_reduce(take);
		}
		ledger.unlocking.retain(|chunk| !chunk.value.is_zero());
		// `locked` stays the sum of the collateral that bids and leases claim, even when a slash
		// leaves less bonded than that: nothing is free (to unbond or to bid with) until enough
		// of those claims end or the provider bonds more, so no lease's backing can be released
		// by another's end.
		let slashed = amount.saturating_sub(left);
		if slashed.is_zero() {
			return Zero::zero();
		}

		let credit = asset::slash::<T>(who, slashed);
		let (credit, to_buyer) = match buyer {
			Some((buyer, share)) => asset::pay_from::<T>(credit, share.mul_floor(slashed), buyer),
			None => (credit, Zero::zero()),
		};
		let (credit, to_reporter) = match reporter {
			Some(reporter) => {
				asset::pay_from::<T>(credit, T::ReporterShare::get().mul_floor(slashed), reporter)
			}
			None => (credit, Zero::zero()),
		};
		let to_handler = credit.peek();
		T::OnSlash::on_unbalanced(credit);

		Self::store(who, ledger);
		Self::deposit_event(Event::Slashed {
			provider: who.clone(),
			reason,
			amount: slashed,
			buyer: buyer.map(|(buyer, _)| buyer.clone()),
			to_buyer,
			reporter: reporter.cloned(),
			to_reporter,
			to_handler,
		});
		slashed
	}
}
