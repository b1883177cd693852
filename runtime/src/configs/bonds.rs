//! Provider bonds: minimum, unbonding period, and who gets what of a slash.

use polkadot_sdk::*;

use frame_support::{parameter_types, traits::ConstU32};
use frame_system::EnsureRoot;
use sp_runtime::Permill;

use crate::{AccountId, Balance, Balances, BlockNumber, Runtime, RuntimeHoldReason, DAYS, STINT};

parameter_types! {
	pub const MinBond: Balance = 100 * STINT;
	/// A day from `unbond` to `withdraw_unbonded`: long enough to slash for a lease that ran.
	pub const UnbondingPeriod: BlockNumber = DAYS;
	pub const BuyerShare: Permill = Permill::from_percent(50);
	pub const ReporterShare: Permill = Permill::from_percent(10);
}

impl pallet_bonds::Config for Runtime {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type MinBond = MinBond;
	type UnbondingPeriod = UnbondingPeriod;
	type MaxUnlockingChunks = ConstU32<16>;
	type BuyerShare = BuyerShare;
	type ReporterShare = ReporterShare;
	/// The rest of a slash is burnt until the chain has a treasury.
	type OnSlash = ();
	type ForceOrigin = EnsureRoot<AccountId>;
	type WeightInfo = pallet_bonds::weights::SubstrateWeight<Runtime>;
}
