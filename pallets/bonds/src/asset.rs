//! The only place this pallet touches the currency: holding, releasing and slashing the bond.

use crate::{BalanceOf, Config, CreditOf, Error, HoldReason};
use frame::{
	prelude::*,
	traits::{
		fungible::{self, InspectHold, MutateHold},
		tokens::{Fortitude, Precision, Restriction},
		Imbalance,
	},
};

/// Holds `amount` more of `who`'s balance as its bond.
pub fn hold<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	T::Currency::hold(&HoldReason::ProviderBond.into(), who, amount)
		.map_err(|_| Error::<T>::InsufficientBalance.into())
}

/// Returns `amount` of `who`'s bond to its free balance.
pub fn release<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	T::Currency::release(&HoldReason::ProviderBond.into(), who, amount, Precision::Exact)
		.map(|_| ())
}

/// Takes up to `amount` of `who`'s bond, as a credit to be handed on.
pub fn slash<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> CreditOf<T> {
	let (credit, _missing) = <T::Currency as fungible::BalancedHold<T::AccountId>>::slash(
		&HoldReason::ProviderBond.into(),
		who,
		amount,
	);
	credit
}

/// Pays `amount` of `credit` to `to`; returns what is left (everything, if `to` cannot receive it).
pub fn pay_from<T: Config>(
	credit: CreditOf<T>,
	amount: BalanceOf<T>,
	to: &T::AccountId,
) -> (CreditOf<T>, BalanceOf<T>) {
	let (part, rest) = credit.split(amount);
	let paid = part.peek();
	match <T::Currency as fungible::Balanced<T::AccountId>>::resolve(to, part) {
		Ok(()) => (rest, paid),
		Err(unpaid) => (rest.merge(unpaid), Zero::zero()),
	}
}

/// Pays `amount` of `who`'s bond into `to`'s free balance.
pub fn pay_held<T: Config>(
	who: &T::AccountId,
	to: &T::AccountId,
	amount: BalanceOf<T>,
) -> DispatchResult {
	T::Currency::transfer_on_hold(
		&HoldReason::ProviderBond.into(),
		who,
		to,
		amount,
		Precision::Exact,
		Restriction::Free,
		Fortitude::Force,
	)
	.map(|_| ())
}

/// Burns `amount` of `who`'s bond.
pub fn burn_held<T: Config>(who: &T::AccountId, amount: BalanceOf<T>) -> DispatchResult {
	T::Currency::burn_held(
		&HoldReason::ProviderBond.into(),
		who,
		amount,
		Precision::Exact,
		Fortitude::Force,
	)
	.map(|_| ())
}

/// What is held from `who` as its bond.
pub fn held<T: Config>(who: &T::AccountId) -> BalanceOf<T> {
	T::Currency::balance_on_hold(&HoldReason::ProviderBond.into(), who)
}
