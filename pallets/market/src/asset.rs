//! The only place this pallet touches the currency: the buyers' order escrow and storage
//! deposits, as holds on their own accounts. (A bid's deposit is locked in its provider's bond,
//! through `Config::Collateral`, with its collateral.)

use crate::{BalanceOf, Config, Error, HoldReason};
use frame::{
	prelude::*,
	traits::{
		fungible::InspectHold,
		fungible::MutateHold,
		tokens::{Fortitude, Precision, Restriction},
	},
};

fn hold<T: Config>(reason: HoldReason, who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::hold(&reason.into(), who, amount)
		.map_err(|_| Error::<T>::InsufficientBalance.into())
}

fn release<T: Config>(
	reason: HoldReason,
	who: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	if amount.is_zero() {
		return Ok(());
	}
	T::Currency::release(&reason.into(), who, amount, Precision::Exact).map(|_| ())
}

/// Holds an order's escrow on its buyer.
pub fn hold_escrow<T: Config>(buyer: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	hold::<T>(HoldReason::OrderEscrow, buyer, amount)
}

/// Returns an order's escrow to its buyer's free balance.
pub fn release_escrow<T: Config>(buyer: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	release::<T>(HoldReason::OrderEscrow, buyer, amount)
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

/// Pays `amount` of an order's escrow to a bidder whose standing bid the buyer let go
/// unaccepted (cancelled, rejected, or left to expire): its time, paid for.
pub fn compensate_bidder<T: Config>(
	buyer: &T::AccountId,
	bidder: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	pay_held::<T>(HoldReason::OrderEscrow, buyer, bidder, amount)
}

/// Holds an order's storage deposit on its buyer.
pub fn hold_storage_deposit<T: Config>(
	buyer: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	hold::<T>(HoldReason::StorageDeposit, buyer, amount)
}

/// Returns an order's storage deposit to its buyer.
pub fn release_storage_deposit<T: Config>(
	buyer: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	release::<T>(HoldReason::StorageDeposit, buyer, amount)
}

/// Pays part of an order's storage deposit to whoever pruned it.
pub fn reward_reaper<T: Config>(
	buyer: &T::AccountId,
	reaper: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	pay_held::<T>(HoldReason::StorageDeposit, buyer, reaper, amount)
}

/// Storage deposits held on `who`, in all its orders.
pub fn storage_deposits_held<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::StorageDeposit.into(), who)
}

/// Order escrow held on `who`, in all its orders.
pub fn escrow_held<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::OrderEscrow.into(), who)
}
