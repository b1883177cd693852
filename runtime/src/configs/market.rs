//! The market, the leases and the payment streams: collateral, deposits, windows and deadlines.

use polkadot_sdk::*;

use frame_support::{
	parameter_types,
	traits::{ConstU128, ConstU32},
};
use sp_runtime::Permill;

use super::{dynamic_params, Clamped};
use crate::{
	Balance, Balances, BlockNumber, Bonds, Leases, Market, Providers, Runtime, RuntimeHoldReason,
	Streams, DAYS, HOURS, MICRO_STINT, MILLI_STINT, MINUTES, STINT,
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
	/// What a provider's worker keys may commit of its funds in bids (deposits and collateral)
	/// in an hour, per GPU it registered: about 90 one-GPU bids an hour per GPU. A stolen key
	/// burns at most 1/11 of it an hour in late retractions (runtime test
	/// `a_stolen_worker_key_burns_no_more_than_its_cap_an_era`).
	pub const WorkerCommitPerGpu: Balance = 1_000 * STINT;
	pub const WorkerEra: BlockNumber = HOURS;
	pub const MinOrderDeposit: Balance = 10 * STINT;
	/// The least any deadline or window root sets may be (30 s): time for a worker to see a
	/// block and answer, and for a buyer to top up or object.
	pub const MinWindow: BlockNumber = 5;
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

	/// The protocol's take on every payment, burnt: 2 %. A buyer paying its own provider
	/// (one party on both sides, farming reputation) loses it like anyone else: a full unit of
	/// reputation (`FullCreditPayment`, 1 STINT paid over an hour) costs 0.02 STINT burnt, and
	/// going from 50 % to 95 % (21 hour-long leases of 1.2 STINT, from 11 buyers: one buyer
	/// counts for two) 0.50 STINT, besides 5.9 STINT of fees (runtime test
	/// `farming_reputation_costs_the_take_and_one_buyer_cannot_carry_a_score`).
	pub const TakeRate: Permill = Permill::from_percent(2);
}

// A result's verdict is always in before its order may be pruned.
const _: () = assert!(MaxVerdictWindow::get() <= Retention::get());

impl pallet_market::Config for Runtime {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type Registry = Providers;
	type Collateral = Bonds;
	type Leases = Leases;
	type CollateralPerGpu = CollateralPerGpu;
	type BidDeposit = BidDeposit;
	type BidCompensation = BidCompensation;
	type WorkerCommitPerGpu = WorkerCommitPerGpu;
	type WorkerEra = WorkerEra;
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
	/// Between 5 blocks and a day: a worker needs a few blocks to see a lease and answer.
	type AckDeadline = Clamped<dynamic_params::leases::AckDeadline, MinWindow, ConstU32<DAYS>>;
	type ResultGrace = Clamped<dynamic_params::leases::ResultGrace, MinWindow, ConstU32<DAYS>>;
	type CheckpointInterval =
		Clamped<dynamic_params::leases::CheckpointInterval, MinWindow, ConstU32<DAYS>>;
	type MaxGpusPerLease = ConstU32<16>;
	type FullCreditBlocks = FullCreditBlocks;
	type FullCreditPayment = FullCreditPayment;
	/// At most `MaxVerdictWindow`, which is `Retention`: a result's verdict is always in before
	/// its order may be pruned.
	type VerdictWindow =
		Clamped<dynamic_params::leases::VerdictWindow, MinWindow, MaxVerdictWindow>;
	type MaxVerdictWindow = MaxVerdictWindow;
	type EarlyExitBlocks = EarlyExitBlocks;
	type Orders = Market;
	/// At least 0.1 STINT: a dispute is never free.
	type DisputeBond = Clamped<
		dynamic_params::leases::DisputeBond,
		ConstU128<{ 100 * MILLI_STINT }>,
		ConstU128<{ 10_000 * STINT }>,
	>;
	type DrawDelay = DrawDelay;
	type RevealWindow = Clamped<dynamic_params::leases::RevealWindow, MinWindow, ConstU32<DAYS>>;
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
	/// At least 5 blocks: a depleted stream is never closed before its buyer can top it up,
	/// and never woken again and again for dust.
	type GracePeriod = Clamped<dynamic_params::streams::GracePeriod, MinWindow, ConstU32<DAYS>>;
	type TakeRate = TakeRate;
	type Observer = Leases;
	type MaxDepositors = ConstU32<8>;
	/// Seven streams a block run dry or end their grace: each may end its lease (about 0.2 %
	/// of a block), so with the market's deadlines the hooks keep under 5 % of a block.
	type MaxWakeupsPerBlock = ConstU32<7>;
	type WeightInfo = pallet_streams::weights::SubstrateWeight<Runtime>;
}
