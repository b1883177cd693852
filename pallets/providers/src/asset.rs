//! The only place this pallet touches the currency: the registration deposit.

use crate::{BalanceOf, Config, Error, HoldReason};
use frame::{
	prelude::*,
	traits::{
		fungible::{InspectHold, MutateHold},
		tokens::Precision,
	},
};

/// Holds `amount` more from `who` as its registration deposit.
pub fn hold_deposit<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::hold(&HoldReason::ProviderDeposit.into(), who, amount)
		.map_err(|_| Error::<T>::InsufficientBalance.into())
}

/// Releases `amount` of `who`'s registration deposit.
pub fn release_deposit<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::release(&HoldReason::ProviderDeposit.into(), who, amount, Precision::Exact)
		.map(|_| ())
}

/// Brings `who`'s deposit from `current` to `wanted`.
pub fn adjust_deposit<T: Config>(
	who: &T::AccountId,
	current: BalanceOf<T>,
	wanted: BalanceOf<T>,
) -> DispatchResult {
	if wanted > current {
		hold_deposit::<T>(who, wanted - current)
	} else {
		release_deposit::<T>(who, current - wanted)
	}
}

/// What is held from `who` as its registration deposit.
pub fn held_deposit<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::ProviderDeposit.into(), who)
}
