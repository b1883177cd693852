//! The only place this pallet touches the currency: holding escrow, paying from it, refunding it,
//! and withholding a payment's holdback until its verdict.

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
	pay_held::<T>(HoldReason::StreamEscrow, from, to, amount)
}

/// Pays `amount` held on `from` for `reason` into `to`'s free balance.
fn pay_held<T: Config>(
	reason: HoldReason,
	from: &T::AccountId,
	to: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::transfer_on_hold(
		&reason.into(),
		from,
		to,
		amount,
		Precision::Exact,
		Restriction::Free,
		Fortitude::Force,
	)
	.map(|_| ())
}

/// Moves `amount` of `from`'s escrow onto `to`'s holdback: taken from the payer, not yet the
/// payee's to spend.
pub fn withhold<T: Config>(
	from: &T::AccountId,
	to: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	pay::<T>(from, to, amount)?;
	T::Currency::hold(&HoldReason::Holdback.into(), to, amount)
}

/// Releases `amount` of `payee`'s holdback: `burnt` of it (the protocol's take) is burnt, the
/// rest goes to the payee's free balance.
pub fn release_holdback<T: Config>(
	payee: &T::AccountId,
	amount: BalanceOf<T>,
	burnt: BalanceOf<T>,
) -> DispatchResult {
	burn_held::<T>(HoldReason::Holdback, payee, burnt)?;
	let rest = amount.saturating_sub(burnt);
	if !rest.is_zero() {
		T::Currency::release(&HoldReason::Holdback.into(), payee, rest, Precision::Exact)?;
	}
	Ok(())
}

/// Burns `amount` of `from`'s escrow: the protocol's take on a payment.
pub fn burn<T: Config>(from: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	burn_held::<T>(HoldReason::StreamEscrow, from, amount)
}

/// Burns `amount` held on `from` for `reason`.
fn burn_held<T: Config>(
	reason: HoldReason,
	from: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::burn_held(&reason.into(), from, amount, Precision::Exact, Fortitude::Force)
		.map(|_| ())
}

/// Returns `amount` of `payee`'s holdback to `payer`'s free balance.
pub fn forfeit_holdback<T: Config>(
	payee: &T::AccountId,
	payer: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	pay_held::<T>(HoldReason::Holdback, payee, payer, amount)
}

/// What is held on `who` as holdback, in all streams.
pub fn withheld<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::Holdback.into(), who)
}

/// What is held from `who` as stream escrow, in all streams.
pub fn held<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::StreamEscrow.into(), who)
}
