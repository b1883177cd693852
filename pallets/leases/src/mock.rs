//! A test runtime: system, balances, the real streams pallet (observed by the leases) and the
//! leases, with stand-ins for the registry, the bonds (collateral and slashing) and reputation.

use crate::{self as pallet_leases, *};
use core::cell::RefCell;
use frame::{
	deps::sp_core::{sr25519, Pair},
	runtime::prelude::*,
	testing_prelude::*,
	traits::fungible::InspectHold,
};
use polkadot_sdk::pallet_balances;
use std::collections::BTreeMap;
use stint_primitives::{DeviceId, GpuRequirements, Outcome, Report, ReportKind};
use stint_testkit::{Books, Devices};
use stint_traits::{
	LeaseFactory, NewLease, ProviderCollateral, ProviderRegistry, ReputationRecorder,
};

pub use stint_testkit::{device as dev, slashes};

pub type Balance = u64;
type Block = frame_system::mocking::MockBlock<Test>;

#[frame_construct_runtime]
mod runtime {
	#[runtime::runtime]
	#[runtime::derive(
		RuntimeCall,
		RuntimeError,
		RuntimeEvent,
		RuntimeFreezeReason,
		RuntimeHoldReason,
		RuntimeOrigin,
		RuntimeTask
	)]
	pub struct Test;

	#[runtime::pallet_index(0)]
	pub type System = frame_system;
	#[runtime::pallet_index(1)]
	pub type Balances = pallet_balances;
	#[runtime::pallet_index(2)]
	pub type Streams = pallet_streams;
	#[runtime::pallet_index(3)]
	pub type Leases = pallet_leases;
}

#[derive_impl(frame_system::config_preludes::TestDefaultConfig)]
impl frame_system::Config for Test {
	type Block = Block;
	type AccountData = pallet_balances::AccountData<Balance>;
}

#[derive_impl(pallet_balances::config_preludes::TestDefaultConfig)]
impl pallet_balances::Config for Test {
	type AccountStore = System;
	type RuntimeHoldReason = RuntimeHoldReason;
}

pub const GRACE: u64 = 5;
pub const ACK_DEADLINE: u64 = 5;
pub const RESULT_GRACE: u64 = 10;
pub const CHECKPOINT_INTERVAL: u64 = 20;
/// A lease counts fully toward reputation after 20 blocks and 100 paid.
pub const FULL_CREDIT_BLOCKS: u64 = 20;
pub const FULL_CREDIT_PAYMENT: Balance = 100;
pub const OBJECTION_WINDOW: u64 = 10;
pub const EARLY_EXIT_BLOCKS: u64 = 3;

#[derive_impl(pallet_streams::config_preludes::TestDefaultConfig)]
impl pallet_streams::Config for Test {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type GracePeriod = ConstU64<GRACE>;
	type TakeRate = ();
	type Observer = Leases;
}

pub const ENDOWMENT: Balance = 1_000_000;
pub const BUYER: u64 = 1;
pub const STRANGER: u64 = 2;
/// Providers are accounts from 10 on; each has eight devices and a worker key from its number.
pub const PROVIDER: u64 = 10;
pub const OTHER_PROVIDER: u64 = 11;
/// `PROVIDER`'s worker key for its devices 0..4 (one machine), as an account.
pub const WORKER: u64 = 50;
/// `PROVIDER`'s worker key for its devices 4..8 (another machine).
pub const OTHER_WORKER: u64 = 51;
pub const BOND: Balance = 1_000;
pub const COLLATERAL: Balance = 300;
pub const ACCOUNTS: [u64; 5] = [BUYER, STRANGER, PROVIDER, OTHER_PROVIDER, 99];

/// The worker key pair of provider `who`.
pub fn worker(who: u64) -> sr25519::Pair {
	sr25519::Pair::from_seed(&[who as u8; 32])
}

thread_local! {
	static OUTCOMES: RefCell<Vec<(u64, Outcome, Permill)>> = const { RefCell::new(Vec::new()) };
	static WORKER_KEYS: RefCell<BTreeMap<u64, stint_primitives::WorkerKey>> =
		const { RefCell::new(BTreeMap::new()) };
}

pub fn locked(who: u64) -> Balance {
	FakeBonds::locked(who)
}
pub fn outcomes() -> Vec<(u64, Outcome)> {
	OUTCOMES.with(|o| o.borrow().iter().map(|(who, outcome, _)| (*who, *outcome)).collect())
}

/// The outcomes recorded, with how much of a full one each counted.
pub fn weighted_outcomes() -> Vec<(u64, Outcome, Permill)> {
	OUTCOMES.with(|o| o.borrow().clone())
}
pub fn committed(device: DeviceId) -> Option<LeaseId> {
	Devices::committed_to(&device)
}
/// Registers `key` as `who`'s worker key (benchmarks use keys from the keystore).
#[cfg(feature = "runtime-benchmarks")]
pub fn set_worker_key(who: u64, key: stint_primitives::WorkerKey) {
	WORKER_KEYS.with(|k| k.borrow_mut().insert(who, key));
}

pub struct FakeRegistry;
impl ProviderRegistry<u64> for FakeRegistry {
	fn is_active(who: &u64) -> bool {
		*who >= PROVIDER
	}
	/// Providers act for themselves; `WORKER` is `PROVIDER`'s worker key for its devices 0..4,
	/// `OTHER_WORKER` for 4..8.
	fn acting_for(who: &u64) -> Result<(u64, Option<stint_primitives::WorkerKey>), DispatchError> {
		match *who {
			WORKER => Ok((PROVIDER, Some(worker(PROVIDER).public()))),
			OTHER_WORKER => Ok((PROVIDER, Some(worker(OTHER_WORKER).public()))),
			who if who >= PROVIDER => Ok((who, None)),
			_ => Err(DispatchError::Other("NotProviderOrWorker")),
		}
	}
	fn worker_for(who: &u64, devices: &[DeviceId]) -> Option<stint_primitives::WorkerKey> {
		if let Some(key) = WORKER_KEYS.with(|k| k.borrow().get(who).copied()) {
			return Some(key);
		}
		if !Self::is_active(who) || devices.is_empty() {
			return None;
		}
		if *who == PROVIDER && devices.iter().all(|d| d[8] >= 4) {
			return Some(worker(OTHER_WORKER).public());
		}
		devices.iter().all(|d| d[8] < 4 || *who != PROVIDER).then(|| worker(*who).public())
	}
	fn worker_devices(who: &u64, key: &stint_primitives::WorkerKey) -> Vec<DeviceId> {
		let range = if *key == worker(OTHER_WORKER).public() { 4..8 } else { 0..4 };
		range.map(|i| dev(*who, i)).collect()
	}
	fn devices(_: &u64) -> Vec<stint_primitives::GpuDevice> {
		Vec::new()
	}
	fn reputation(_: &u64) -> Option<Permill> {
		Some(Permill::from_percent(50))
	}
	fn check_offer(_: &u64, _: &[DeviceId], _: &GpuRequirements) -> DispatchResult {
		Ok(())
	}
	fn committed_to(_: &u64, device: &DeviceId) -> Option<LeaseId> {
		committed(*device)
	}
	fn commit_devices(_: &u64, devices: &[DeviceId], lease: LeaseId) -> DispatchResult {
		Devices::commit(devices, lease)
	}
	fn release_devices(_: &u64, devices: &[DeviceId], lease: LeaseId) {
		Devices::release(devices, lease)
	}
}

/// Every provider's bond is `BOND`; slashes are recorded, not taken (see `slashes`).
pub type FakeBonds = stint_testkit::FakeBonds<ConstU64<BOND>>;

pub struct FakeReputation;
impl ReputationRecorder<u64> for FakeReputation {
	fn record(who: &u64, _: &u64, outcome: Outcome, weight: Permill) {
		OUTCOMES.with(|o| o.borrow_mut().push((*who, outcome, weight)));
	}
}

#[derive_impl(pallet_leases::config_preludes::TestDefaultConfig)]
impl pallet_leases::Config for Test {
	type Balance = Balance;
	type Registry = FakeRegistry;
	type Collateral = FakeBonds;
	type Slashing = FakeBonds;
	type Streams = Streams;
	type Reputation = FakeReputation;
	type AckDeadline = ConstU64<ACK_DEADLINE>;
	type ResultGrace = ConstU64<RESULT_GRACE>;
	type CheckpointInterval = ConstU64<CHECKPOINT_INTERVAL>;
	type MaxGpusPerLease = ConstU32<4>;
	type FullCreditBlocks = ConstU64<FULL_CREDIT_BLOCKS>;
	type FullCreditPayment = ConstU64<FULL_CREDIT_PAYMENT>;
	type VerdictWindow = ConstU64<OBJECTION_WINDOW>;
	type MaxVerdictWindow = ConstU64<100>;
	type EarlyExitBlocks = ConstU64<EARLY_EXIT_BLOCKS>;
	type Orders = FakeOrders;
	type DisputeBond = ConstU64<DISPUTE_BOND>;
	type DrawDelay = ConstU64<DRAW_DELAY>;
	type RevealWindow = ConstU64<10>;
	type MaxDrawScan = ConstU32<8>;
	type MaxDrawsPerBlock = ConstU32<2>;
	#[cfg(feature = "runtime-benchmarks")]
	type BenchmarkHelper = FakeProviders;
}

pub const DISPUTE_BOND: Balance = 50;
pub const DRAW_DELAY: u64 = 5;

/// Orders as the leases see them: the registry stand-in draws nobody whatever they ask.
pub struct FakeOrders;
impl stint_traits::OrderRequirements for FakeOrders {
	fn requirements(_: stint_traits::OrderId) -> Option<GpuRequirements> {
		None
	}
}

/// Providers from account 1000 on, buyers from 2000 on, for the benchmarks.
#[cfg(feature = "runtime-benchmarks")]
pub struct FakeProviders;
#[cfg(feature = "runtime-benchmarks")]
use frame::traits::fungible::Mutate;
#[cfg(feature = "runtime-benchmarks")]
impl crate::BenchmarkHelper<u64, Balance> for FakeProviders {
	fn provider(
		index: u32,
		gpus: u32,
		key: stint_primitives::WorkerKey,
		collateral: Balance,
	) -> (u64, Vec<DeviceId>) {
		let who = 1_000 + u64::from(index);
		Balances::set_balance(&who, ENDOWMENT);
		set_worker_key(who, key);
		FakeBonds::lock_collateral(&who, collateral).unwrap();
		(who, (0..gpus as u8).map(|i| dev(who, i)).collect())
	}
	fn buyer(index: u32) -> u64 {
		let who = 2_000 + u64::from(index);
		Balances::set_balance(&who, 1 << 40);
		who
	}
	fn fill_stream(stream: stint_traits::StreamId, depositors: u32) {
		for i in 1..depositors {
			let who = 3_000 + u64::from(i);
			Balances::set_balance(&who, 1 << 40);
			Streams::top_up(RuntimeOrigin::signed(who), stream, 1_000).unwrap();
		}
	}
}

pub struct ExtBuilder;

impl ExtBuilder {
	pub fn build() -> TestState {
		stint_testkit::ext::<Test>(ACCOUNTS.iter().map(|who| (*who, ENDOWMENT)).collect())
	}

	/// Runs `test`, then checks the leases' and the streams' invariants, that every locked
	/// collateral belongs to a live lease, and that no money was created or lost.
	pub fn build_and_execute(test: impl FnOnce()) {
		Self::build().execute_with(|| {
			OUTCOMES.with(|o| o.borrow_mut().clear());
			let books = Books::<Test>::open();
			test();
			Leases::do_try_state().expect("lease invariants hold");
			Streams::do_try_state().expect("stream invariants hold");
			stint_testkit::assert_collateral_adds_up(&[PROVIDER, OTHER_PROVIDER], |provider| {
				crate::Leases::<Test>::iter()
					.filter(|(id, l)| {
						l.provider == provider
							&& (l.status.is_live()
								|| crate::PendingVerdicts::<Test>::contains_key(id))
					})
					.map(|(_, l)| l.collateral)
					.sum()
			});
			// The stand-in bonds record slashes without taking them: nothing is minted or burnt.
			books.check(0);
		});
	}
}

/// Runs the hooks of every block up to and including `n`.
pub fn run_to_block(n: u64) {
	while System::block_number() < n {
		let next = System::block_number() + 1;
		System::set_block_number(next);
		Streams::on_initialize(next);
		Leases::on_initialize(next);
	}
}

pub fn free(who: u64) -> Balance {
	Balances::free_balance(who)
}

pub fn stream_escrow(who: u64) -> Balance {
	Balances::balance_on_hold(&pallet_streams::HoldReason::StreamEscrow.into(), &who)
}

/// The image digest every test order pins.
pub const DIGEST: [u8; 32] = [0xab; 32];

/// A lease of PROVIDER's first device for BUYER at `price`, funded with `escrow`, as the market
/// would create it (collateral locked first).
pub fn new_lease(price: Balance, escrow: Balance, duration: Option<u64>, notice: u64) -> LeaseId {
	new_lease_with(price, escrow, duration, notice, Permill::zero())
}

/// As [`new_lease`], with `holdback` of every payment withheld until its verdict.
pub fn new_lease_with(
	price: Balance,
	escrow: Balance,
	duration: Option<u64>,
	notice: u64,
	holdback: Permill,
) -> LeaseId {
	FakeBonds::lock_collateral(&PROVIDER, COLLATERAL).unwrap();
	<Leases as LeaseFactory<_, _, _>>::create_lease(NewLease {
		order: 7,
		buyer: BUYER,
		provider: PROVIDER,
		devices: vec![dev(PROVIDER, 0)],
		price_per_block: price,
		escrow,
		duration,
		collateral: COLLATERAL,
		termination_notice: notice,
		image_digest: DIGEST,
		holdback,
		verdict_window: 0,
		deterministic: false,
		replicas: 1,
	})
	.unwrap()
}

pub fn holdback_of(who: u64) -> Balance {
	Balances::balance_on_hold(&pallet_streams::HoldReason::Holdback.into(), &who)
}

/// A result with `exit_code` for the pinned image.
pub fn commitment(exit_code: i32) -> ResultCommitment {
	ResultCommitment {
		output_root: [1; 32],
		receipt_hash: [2; 32],
		exit_code,
		gpu_seconds: 3_600,
		image_digest: DIGEST,
	}
}

/// `signer`'s signature over the report of `kind` for `lease` on the chain with `genesis`.
pub fn sign_for(
	signer: &sr25519::Pair,
	genesis: [u8; 32],
	lease: LeaseId,
	kind: ReportKind,
	c: &ResultCommitment,
) -> WorkerSignature {
	signer.sign(&Report::new(genesis, lease, kind, *c).signing_bytes())
}

/// PROVIDER's worker signature over the report of `kind` for `lease` on this chain.
pub fn sign(lease: LeaseId, kind: ReportKind, c: &ResultCommitment) -> WorkerSignature {
	sign_for(&worker(PROVIDER), Leases::genesis_hash(), lease, kind, c)
}

pub fn lease(id: LeaseId) -> LeaseOf<Test> {
	crate::Leases::<Test>::get(id).expect("lease exists")
}

/// The last event of this pallet.
pub fn last_event() -> Event<Test> {
	stint_testkit::last_event::<Test, _>()
}
