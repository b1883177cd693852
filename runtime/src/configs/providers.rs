//! The provider registry: deposits, bounds, exit notice and reputation decay.

use polkadot_sdk::*;

use frame_support::{parameter_types, traits::ConstU32};
use sp_runtime::Permill;

use crate::{Balance, Balances, BlockNumber, Runtime, RuntimeHoldReason, HOURS, STINT};

parameter_types! {
	pub const RegistrationDeposit: Balance = 10 * STINT;
	pub const DepositPerGpu: Balance = STINT;
	/// An hour of notice before a provider may leave.
	pub const ExitNotice: BlockNumber = HOURS;
	pub const ReputationDecay: Permill = Permill::from_percent(2);
}

impl pallet_providers::Config for Runtime {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type RegistrationDeposit = RegistrationDeposit;
	type DepositPerGpu = DepositPerGpu;
	type ExitNotice = ExitNotice;
	type MaxNameLen = ConstU32<64>;
	type MaxEndpointLen = ConstU32<128>;
	type MaxGpus = ConstU32<16>;
	type ReputationDecay = ReputationDecay;
	type WeightInfo = pallet_providers::weights::SubstrateWeight<Runtime>;
}
