//! The only place this pallet touches the currency: holding escrow, paying from it, refunding it.

use crate::{BalanceOf, Config, Error, HoldReason};
use frame::{
	prelude::*,
	traits::{
		fungible::{InspectHold, MutateHold},
		tokens::{Fortitude, Precision, Restriction},
	},
};

/// Holds `amount` of `who`'s balance as stream escrow.
pub fn hold<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	T::Currency::hold(&HoldReason::StreamEscrow.into(), who, amount)
		.map_err(|_| Error::<T>::InsufficientBalance.into())
}

/// Returns `amount` of `who`'s escrow to its free balance.
pub fn release<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::release(&HoldReason::StreamEscrow.into(), who, amount, Precision::Exact)
		.map(|_| ())
}

/// Pays `amount` of `from`'s escrow into `to`'s free balance.
pub fn pay<T: Config>(
	from: &T::AccountId,
	to: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::transfer_on_hold(
		&HoldReason::StreamEscrow.into(),
		from,
		to,
		amount,
		Precision::Exact,
		Restriction::Free,
		Fortitude::Force,
	)
	.map(|_| ())
}

/// What is held from `who` as stream escrow, in all streams.
pub fn held<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::StreamEscrow.into(), who)
}
