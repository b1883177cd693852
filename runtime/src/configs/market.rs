//! The market, the leases and the payment streams: collateral, deposits, windows and deadlines.

use polkadot_sdk::*;

use frame_support::{parameter_types, traits::ConstU32, PalletId};
use sp_runtime::{traits::AccountIdConversion, Permill};

use super::dynamic_params;
use crate::{
	AccountId, Balance, Balances, BlockNumber, Bonds, Leases, Market, Providers, Runtime,
	RuntimeHoldReason, Streams, DAYS, HOURS, MICRO_STINT, MILLI_STINT, MINUTES, STINT,
};

parameter_types! {
	/// Bond locked per GPU behind every bid and lease: what a no-show or a missed result costs.
	pub const CollateralPerGpu: Balance = 10 * STINT;
	/// Held for every standing bid, returned when it is accepted, retracted or released.
	pub const BidDeposit: Balance = STINT;
	/// Paid from an order's escrow to each bidder its buyer let go unaccepted (cancelled,
	/// expired or rejected): just under the fee of the cheapest bid there is (0.040 STINT: one
	/// GPU, a free slot; runtime test `a_bait_order_pays_every_bidder_it_froze`), so a bait
	/// order costs its buyer that per bid, and bidding to collect it earns nothing.
	pub const BidCompensation: Balance = 30 * MILLI_STINT;
	pub const MinOrderDeposit: Balance = 10 * STINT;
	/// Two blocks: enough for a provider's worker to see the order and bid.
	pub const MinBidWindow: BlockNumber = 2;
	pub const MaxBidWindow: BlockNumber = DAYS;
	pub const AcceptPeriod: BlockNumber = HOURS;
	pub const MaxTerminationNotice: BlockNumber = DAYS;
	/// An open-ended lease's provider gives at least ten minutes' notice before it leaves.
	pub const MinTerminationNotice: BlockNumber = 10 * MINUTES;
	/// At least a tenth of every payment waits for the buyer's verdict on the period it paid.
	pub const MinHoldback: Permill = Permill::from_percent(10);
	/// The longest verdict window an order may ask for (the chain's own is a parameter).
	pub const MaxVerdictWindow: BlockNumber = 7 * DAYS;
	/// A provider that leaves a lease within an hour of acknowledging it risks its whole
	/// collateral (as a no-show) if the buyer objects.
	pub const EarlyExitBlocks: BlockNumber = HOURS;
	/// A dispute's verifier is drawn four blocks after it, from the hash of the block before.
	pub const DrawDelay: BlockNumber = 4;
	/// Storage deposits: 0.1 STINT per order (its lease and stream included) and 100 µSTINT per
	/// byte of it, so a 24 KiB job spec holds about 2.5 STINT until it is pruned.
	pub const StorageDepositBase: Balance = 100 * MILLI_STINT;
	pub const StorageDepositPerByte: Balance = 100 * MICRO_STINT;
	/// A week after its lease ends, a leased order, its lease and its stream may be pruned; the
	/// worker keeps outputs as long by default.
	pub const Retention: BlockNumber = 7 * DAYS;
	pub const ReapReward: Permill = Permill::from_percent(10);

	/// A lease counts fully toward its provider's reputation once it ran an hour and paid
	/// 1 STINT; a shorter or cheaper one counts in proportion.
	pub const FullCreditBlocks: BlockNumber = HOURS;
	pub const FullCreditPayment: Balance = STINT;

	/// No protocol take yet; governance may set one.
	pub const TakeRate: Permill = Permill::zero();
	pub const TreasuryPalletId: PalletId = PalletId(*b"stint/tr");
	pub TreasuryAccount: AccountId = TreasuryPalletId::get().into_account_truncating();
}

impl pallet_market::Config for Runtime {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type Registry = Providers;
	type Collateral = Bonds;
	type Leases = Leases;
	type CollateralPerGpu = CollateralPerGpu;
	type BidDeposit = BidDeposit;
	type BidCompensation = BidCompensation;
	type MinOrderDeposit = MinOrderDeposit;
	type MinBidWindow = MinBidWindow;
	type MaxBidWindow = MaxBidWindow;
	type AcceptPeriod = AcceptPeriod;
	type MaxTerminationNotice = MaxTerminationNotice;
	type MinTerminationNotice = MinTerminationNotice;
	type MinHoldback = MinHoldback;
	type MaxVerdictWindow = MaxVerdictWindow;
	type StorageDepositBase = StorageDepositBase;
	type StorageDepositPerByte = StorageDepositPerByte;
	type Retention = Retention;
	type ReapReward = ReapReward;
	type MaxBidsPerOrder = ConstU32<32>;
	/// A worker bids on one order per device at a time: 64 covers four machines of 16 GPUs.
	type MaxStandingBids = ConstU32<64>;
	/// As many as a provider may register.
	type MaxGpusPerOrder = ConstU32<16>;
	/// Three orders' deadlines a block: at its worst (32 bids of 16 GPUs each, re-checked, the
	/// losers released, a lease and its stream created) one costs about 1.1 % of a block, and
	/// the block hooks together keep under 5 % (docs/performance.md). A busier block's orders
	/// wait for the next, in the order they fell due; anyone may close one at once
	/// (`close_order`, free).
	type MaxDeadlinesPerBlock = ConstU32<3>;
	/// Up to five providers run one order; each more replica at the close of a window costs
	/// the hook another acceptance.
	type MaxReplicas = ConstU32<5>;
	type WeightInfo = pallet_market::weights::SubstrateWeight<Runtime>;
	#[cfg(feature = "runtime-benchmarks")]
	type BenchmarkHelper = super::bench_helpers::BenchmarkHelpers;
}

impl pallet_leases::Config for Runtime {
	type Balance = Balance;
	type Registry = Providers;
	type Collateral = Bonds;
	type Slashing = Bonds;
	type Streams = Streams;
	type Reputation = Providers;
	type AckDeadline = dynamic_params::leases::AckDeadline;
	type ResultGrace = dynamic_params::leases::ResultGrace;
	type CheckpointInterval = dynamic_params::leases::CheckpointInterval;
	type MaxGpusPerLease = ConstU32<16>;
	type FullCreditBlocks = FullCreditBlocks;
	type FullCreditPayment = FullCreditPayment;
	type VerdictWindow = dynamic_params::leases::VerdictWindow;
	type MaxVerdictWindow = MaxVerdictWindow;
	type EarlyExitBlocks = EarlyExitBlocks;
	type Orders = Market;
	type DisputeBond = dynamic_params::leases::DisputeBond;
	type DrawDelay = DrawDelay;
	type RevealWindow = dynamic_params::leases::RevealWindow;
	/// A draw looks at up to 16 providers; two draws a block: with the market's and the
	/// streams' hooks, under 5 % of a block at their worst.
	type MaxDrawScan = ConstU32<16>;
	type MaxDrawsPerBlock = ConstU32<2>;
	type WeightInfo = pallet_leases::weights::SubstrateWeight<Runtime>;
	#[cfg(feature = "runtime-benchmarks")]
	type BenchmarkHelper = super::bench_helpers::BenchmarkHelpers;
}

impl pallet_streams::Config for Runtime {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type GracePeriod = dynamic_params::streams::GracePeriod;
	type TakeRate = TakeRate;
	type Treasury = TreasuryAccount;
	type Observer = Leases;
	type MaxDepositors = ConstU32<8>;
	/// Seven streams a block run dry or end their grace: each may end its lease (about 0.2 %
	/// of a block), so with the market's deadlines the hooks keep under 5 % of a block.
	type MaxWakeupsPerBlock = ConstU32<7>;
	type WeightInfo = pallet_streams::weights::SubstrateWeight<Runtime>;
}
