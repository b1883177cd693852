//! A provider's bond ledger.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use frame::prelude::*;
use scale_info::TypeInfo;

/// Part of a bond on its way out: withdrawable from `unlocks_at`.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub struct UnlockChunk<Balance, BlockNumber> {
	pub value: Balance,
	pub unlocks_at: BlockNumber,
}

/// What one provider has bonded.
#[derive(
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
)]
#[scale_info(skip_type_params(MaxChunks))]
pub struct BondLedger<Balance, BlockNumber, MaxChunks>
where
	Balance: Clone + PartialEq + Eq + core::fmt::Debug,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxChunks: Get<u32>,
{
	/// Bonded and not unbonding.
	pub active: Balance,
	/// Unbonding, oldest first.
	pub unlocking: BoundedVec<UnlockChunk<Balance, BlockNumber>, MaxChunks>,
	/// The collateral claimed by standing bids and running leases. It is part of `active`,
	/// except after a slash that cut below it: then it exceeds `active` and nothing is free.
	pub locked: Balance,
}

impl<Balance, BlockNumber, MaxChunks> BondLedger<Balance, BlockNumber, MaxChunks>
where
	Balance:
		Clone + PartialEq + Eq + core::fmt::Debug + frame::arithmetic::AtLeast32BitUnsigned + Copy,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxChunks: Get<u32>,
{
	/// A ledger with `active` bonded and nothing else.
	pub fn new(active: Balance) -> Self {
		Self { active, unlocking: Default::default(), locked: Zero::zero() }
	}

	/// Everything held: active plus unlocking.
	pub fn total(&self) -> Balance {
		self.unlocking.iter().fold(self.active, |sum, chunk| sum.saturating_add(chunk.value))
	}

	/// The active bond that no bid or lease claims.
	pub fn free(&self) -> Balance {
		self.active.saturating_sub(self.locked)
	}

	/// Whether nothing is left in it.
	pub fn is_empty(&self) -> bool {
		self.active.is_zero() && self.unlocking.is_empty() && self.locked.is_zero()
	}
}

/// The ledger type for a runtime.
pub type BondLedgerOf<T> = BondLedger<
	crate::BalanceOf<T>,
	frame_system::pallet_prelude::BlockNumberFor<T>,
	<T as crate::Config>::MaxUnlockingChunks,
>;
