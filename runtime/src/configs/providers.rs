//! The provider registry: deposits, bounds, exit notice and reputation decay.

use polkadot_sdk::*;

use frame_support::{parameter_types, traits::ConstU32};
use sp_runtime::{traits::Convert, Permill};
use stint_primitives::WorkerKey;

use crate::{AccountId, Balance, Balances, BlockNumber, Runtime, RuntimeHoldReason, HOURS, STINT};

parameter_types! {
	pub const RegistrationDeposit: Balance = 10 * STINT;
	pub const DepositPerGpu: Balance = STINT;
	/// An hour of notice before a provider may leave.
	pub const ExitNotice: BlockNumber = HOURS;
	pub const ReputationDecay: Permill = Permill::from_percent(2);
}

/// A worker key's account: accounts are sr25519 public keys, so the same 32 bytes.
pub struct WorkerAccount;
impl Convert<WorkerKey, AccountId> for WorkerAccount {
	fn convert(key: WorkerKey) -> AccountId {
		AccountId::from(key.0)
	}
}

impl pallet_providers::Config for Runtime {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type RegistrationDeposit = RegistrationDeposit;
	type DepositPerGpu = DepositPerGpu;
	/// As for an order's records: a provider that leaves keeps its history row paid for.
	type DepositPerByte = super::market::StorageDepositPerByte;
	type ExitNotice = ExitNotice;
	type MaxNameLen = ConstU32<64>;
	type MaxEndpointLen = ConstU32<128>;
	type MaxGpus = ConstU32<16>;
	/// Eight machines per provider, each with its own worker key.
	type MaxWorkers = ConstU32<8>;
	type WorkerAccount = WorkerAccount;
	type ReputationDecay = ReputationDecay;
	/// One buyer's leases count for at most two full outcomes (two hours and 2 STINT served)
	/// toward a provider's score, among its 16 latest buyers: 95 % takes at least nine buyers.
	type CreditPerBuyer = ConstU32<2>;
	type MaxCreditors = ConstU32<16>;
	/// Pausing, leaving or changing hardware withdraws the provider's standing bids.
	type Bids = crate::Market;
	/// Results waiting for their buyers' verdicts keep a provider from leaving.
	type Obligations = crate::Leases;
	type WeightInfo = pallet_providers::weights::SubstrateWeight<Runtime>;
}
