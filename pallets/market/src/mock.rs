//! A test runtime: system, balances, the real streams pallet, and the market, with stand-ins for
//! the registry, the bonds and the lease pallet (which opens a real stream for the escrow).

use crate::{self as pallet_market, *};
use codec::{Decode, Encode};
use core::cell::RefCell;
use frame::{runtime::prelude::*, testing_prelude::*, traits::fungible::InspectHold};
use polkadot_sdk::pallet_balances;
use std::collections::{BTreeMap, BTreeSet};
use stint_primitives::{ComputeCapability, GpuRequirements, Input, MAX_IMAGE_LEN};
use stint_testkit::{owner_of, Books, Devices};
use stint_traits::{LeaseFactory, NewLease, PaymentStreams, ProviderRegistry};

pub use stint_testkit::device as dev;

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
	pub type Market = pallet_market;
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

#[derive_impl(pallet_streams::config_preludes::TestDefaultConfig)]
impl pallet_streams::Config for Test {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type GracePeriod = ConstU64<5>;
	type TakeRate = ();
	type Observer = ();
}

pub const ENDOWMENT: Balance = 1_000_000;
pub const BUYER: u64 = 1;
pub const OTHER_BUYER: u64 = 2;
/// Active providers with two devices each and a bond of `BOND`.
pub const P1: u64 = 10;
pub const P2: u64 = 11;
pub const P3: u64 = 12;
/// A registered provider that is paused.
pub const PAUSED: u64 = 13;
/// A fourth active provider.
pub const P4: u64 = 14;
pub const BOND: Balance = 1_000;
pub const COLLATERAL_PER_GPU: Balance = 100;
pub const BID_DEPOSIT: Balance = 10;
pub const BID_COMPENSATION: Balance = 3;
pub const ACCEPT_PERIOD: u64 = 10;
pub const RETENTION: u64 = 20;
/// Three one-GPU bids of a worker key an era (the stand-in registry lists no GPUs: one counts).
pub const WORKER_COMMIT_PER_GPU: Balance = 3 * (COLLATERAL_PER_GPU + BID_DEPOSIT);
pub const WORKER_ERA: u64 = 20;

parameter_types! {
	/// Storage deposits are zero unless a test sets them, so that other tests count escrow only.
	pub static StorageDepositBase: Balance = 0;
	pub static StorageDepositPerByte: Balance = 0;
	pub ReapReward: Permill = Permill::from_percent(10);
}
pub const ACCOUNTS: [u64; 8] = [BUYER, OTHER_BUYER, P1, P2, P3, PAUSED, P4, 99];

/// `P1`'s worker key for its devices 0..4, as an account.
pub const WORKER: u64 = 20;

/// `devices` as a call carries them.
pub fn bounded(
	devices: Vec<DeviceId>,
) -> BoundedVec<DeviceId, <Test as crate::Config>::MaxGpusPerOrder> {
	devices.try_into().expect("no more than an order may ask for")
}

/// The worker key of machine `machine` of a provider.
pub fn worker_key(machine: u8) -> stint_primitives::WorkerKey {
	stint_primitives::WorkerKey::from_raw([machine + 1; 32])
}

thread_local! {
	static REPUTATION: RefCell<BTreeMap<u64, Permill>> = const { RefCell::new(BTreeMap::new()) };
}

/// A lease as the stand-in lease pallet keeps it.
#[derive(Clone, PartialEq, Debug, Encode, Decode)]
pub struct FakeLease {
	pub provider: u64,
	pub devices: Vec<DeviceId>,
	pub price_per_block: Balance,
	pub escrow: Balance,
	pub duration: Option<u64>,
	pub collateral: Balance,
	pub ended_at: Option<u64>,
	pub reaped: bool,
}

// The stand-in leases live in storage, so that a rolled-back attempt leaves no trace.
#[frame::deps::frame_support::storage_alias]
pub type FakeLeaseList = StorageValue<Fakes, Vec<FakeLease>, ValueQuery>;

pub fn set_reputation(who: u64, score: Permill) {
	REPUTATION.with(|r| r.borrow_mut().insert(who, score));
}

pub fn locked(who: u64) -> Balance {
	FakeBonds::locked(who)
}

/// The leases the market created, in order.
pub fn leases() -> Vec<FakeLease> {
	FakeLeaseList::get()
}

/// Commits a device to some other lease, as if another order had taken it.
pub fn commit_elsewhere(device: DeviceId) {
	Devices::commit(&[device], 999).unwrap();
}

pub struct FakeRegistry;
impl ProviderRegistry<u64> for FakeRegistry {
	/// Every account from 10 on is a provider with eight devices; all but `PAUSED` are active.
	fn is_active(who: &u64) -> bool {
		*who >= P1 && *who != PAUSED
	}
	/// Everyone acts for itself, but `WORKER`, `P1`'s worker key for its devices 0..4.
	fn acting_for(who: &u64) -> Result<(u64, Option<stint_primitives::WorkerKey>), DispatchError> {
		Ok(if *who == WORKER { (P1, Some(worker_key(0))) } else { (*who, None) })
	}
	/// `P1`'s devices 0..4 are one machine (worker key 0), 4..8 another (key 1); every other
	/// provider has one machine.
	fn worker_for(who: &u64, devices: &[DeviceId]) -> Option<stint_primitives::WorkerKey> {
		let machine = |d: &DeviceId| if *who == P1 { d[8] / 4 } else { 0 };
		let first = machine(devices.first()?);
		devices
			.iter()
			.all(|d| owner_of(d) == *who && machine(d) == first)
			.then(|| worker_key(first))
	}
	fn worker_devices(who: &u64, key: &stint_primitives::WorkerKey) -> Vec<DeviceId> {
		let first = if *key == worker_key(1) { 4 } else { 0 };
		(first..first + 4).map(|i| dev(*who, i)).collect()
	}
	fn devices(_: &u64) -> Vec<stint_primitives::GpuDevice> {
		Vec::new()
	}
	fn reputation(who: &u64) -> Option<Permill> {
		REPUTATION.with(|r| r.borrow().get(who).copied()).or(Some(Permill::from_percent(50)))
	}
	fn check_offer(who: &u64, devices: &[DeviceId], req: &GpuRequirements) -> DispatchResult {
		ensure!(Self::is_active(who), DispatchError::Other("ProviderNotActive"));
		ensure!(
			Self::reputation(who).unwrap_or_default() >= req.min_reputation,
			DispatchError::Other("ReputationTooLow")
		);
		let unique: BTreeSet<_> = devices.iter().collect();
		ensure!(unique.len() == devices.len(), DispatchError::Other("DuplicateDevice"));
		ensure!(
			devices.iter().all(|d| owner_of(d) == *who && d[8] < 8),
			DispatchError::Other("NotYourDevice")
		);
		ensure!(
			devices.iter().all(|d| Devices::committed_to(d).is_none()),
			DispatchError::Other("DeviceCommitted")
		);
		ensure!(devices.len() as u32 == req.gpu_count, DispatchError::Other("Unfit"));
		Ok(())
	}
	fn committed_to(_: &u64, device: &DeviceId) -> Option<LeaseId> {
		Devices::committed_to(device)
	}
	fn commit_devices(_: &u64, devices: &[DeviceId], lease: LeaseId) -> DispatchResult {
		Devices::commit(devices, lease)
	}
	fn release_devices(_: &u64, devices: &[DeviceId], lease: LeaseId) {
		Devices::release(devices, lease)
	}
}

/// Every provider's bond is `BOND`.
pub type FakeBonds = stint_testkit::FakeBonds<ConstU64<BOND>>;

/// Creates a "lease": commits the devices and opens a real stream for the escrow.
pub struct FakeLeases;
impl LeaseFactory<u64, Balance, u64> for FakeLeases {
	fn create_lease(lease: NewLease<u64, Balance, u64>) -> Result<LeaseId, DispatchError> {
		let id = leases().len() as LeaseId;
		FakeRegistry::commit_devices(&lease.provider, &lease.devices, id)?;
		Streams::open(
			&lease.buyer,
			&lease.provider,
			lease.price_per_block,
			lease.escrow,
			id,
			None,
			lease.holdback,
		)?;
		FakeLeaseList::append(FakeLease {
			provider: lease.provider,
			devices: lease.devices,
			price_per_block: lease.price_per_block,
			escrow: lease.escrow,
			duration: lease.duration,
			collateral: lease.collateral,
			ended_at: None,
			reaped: false,
		});
		Ok(id)
	}

	fn ended_at(lease: LeaseId) -> Option<u64> {
		leases().get(lease as usize).and_then(|l| l.ended_at)
	}

	fn record_bytes(replicas: u32) -> u32 {
		500 * replicas.max(1)
	}

	fn reap(lease: LeaseId) -> DispatchResult {
		let mut all = leases();
		let l = all.get_mut(lease as usize).ok_or(DispatchError::Other("UnknownLease"))?;
		ensure!(l.ended_at.is_some() && !l.reaped, DispatchError::Other("LeaseLive"));
		l.reaped = true;
		FakeLeaseList::put(all);
		Ok(())
	}
}

/// Ends the stand-in `lease` now, as a result would (its collateral stays counted as locked
/// by the stand-in: the market does not unlock it).
pub fn end_lease(lease: LeaseId) {
	FakeLeaseList::mutate(|all| all[lease as usize].ended_at = Some(System::block_number()));
}

#[derive_impl(pallet_market::config_preludes::TestDefaultConfig)]
impl pallet_market::Config for Test {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type Registry = FakeRegistry;
	type Collateral = FakeBonds;
	type Leases = FakeLeases;
	type CollateralPerGpu = ConstU64<COLLATERAL_PER_GPU>;
	type BidDeposit = ConstU64<BID_DEPOSIT>;
	type BidCompensation = ConstU64<BID_COMPENSATION>;
	type WorkerCommitPerGpu = ConstU64<WORKER_COMMIT_PER_GPU>;
	type WorkerEra = ConstU64<WORKER_ERA>;
	type MinOrderDeposit = ConstU64<1_000>;
	type StorageDepositBase = StorageDepositBase;
	type StorageDepositPerByte = StorageDepositPerByte;
	type Retention = ConstU64<RETENTION>;
	type ReapReward = ReapReward;
	type MinBidWindow = ConstU64<2>;
	type MaxBidWindow = ConstU64<100>;
	type AcceptPeriod = ConstU64<ACCEPT_PERIOD>;
	type MaxTerminationNotice = ConstU64<50>;
	type MinTerminationNotice = ConstU64<MIN_NOTICE>;
	type MinHoldback = MinHoldback;
	type MaxVerdictWindow = ConstU64<100>;
	type MaxBidsPerOrder = ConstU32<3>;
	type MaxStandingBids = ConstU32<6>;
	type MaxGpusPerOrder = ConstU32<4>;
	type MaxDeadlinesPerBlock = ConstU32<2>;
	#[cfg(feature = "runtime-benchmarks")]
	type BenchmarkHelper = FakeProviders;
}

/// Providers from account 1000 on, for the benchmarks.
#[cfg(feature = "runtime-benchmarks")]
pub struct FakeProviders;
#[cfg(feature = "runtime-benchmarks")]
use frame::traits::fungible::Mutate;
#[cfg(feature = "runtime-benchmarks")]
impl crate::BenchmarkHelper<u64> for FakeProviders {
	fn end_lease(lease: LeaseId) {
		end_lease(lease)
	}

	fn provider(index: u32, gpus: u32) -> (u64, Vec<DeviceId>) {
		let who = 1_000 + u64::from(index);
		Balances::set_balance(&who, ENDOWMENT);
		(who, (0..gpus as u8).map(|i| dev(who, i)).collect())
	}
}

pub struct ExtBuilder;

impl ExtBuilder {
	pub fn build() -> TestState {
		stint_testkit::ext::<Test>(ACCOUNTS.iter().map(|who| (*who, ENDOWMENT)).collect())
	}

	/// Runs `test`, then checks the market's and the streams' invariants, that every bond lock
	/// is accounted for by a bid or a lease, and that no money was created or lost.
	pub fn build_and_execute(test: impl FnOnce()) {
		Self::build().execute_with(|| {
			REPUTATION.with(|r| r.borrow_mut().clear());
			let books = Books::<Test>::open();
			test();
			Market::do_try_state().expect("market invariants hold");
			Streams::do_try_state().expect("stream invariants hold");
			stint_testkit::assert_collateral_adds_up(&[P1, P2, P3, P4], |provider| {
				let in_bids: Balance = Bids::<Test>::iter()
					.filter(|(_, p, _)| *p == provider)
					.map(|(_, _, b)| b.collateral + b.deposit)
					.sum();
				let in_leases: Balance =
					leases().iter().filter(|l| l.provider == provider).map(|l| l.collateral).sum();
				in_bids + in_leases
			});
			// The market mints and burns nothing: a forfeited deposit leaves the (fake) bond,
			// which moves no money.
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
		Market::on_initialize(next);
	}
}

pub fn storage_deposits(who: u64) -> Balance {
	Balances::balance_on_hold(&HoldReason::StorageDeposit.into(), &who)
}

pub fn escrow(who: u64) -> Balance {
	Balances::balance_on_hold(&HoldReason::OrderEscrow.into(), &who)
}

/// The deposits of `who`'s standing bids (locked in its bond with their collateral).
pub fn bid_deposits(who: u64) -> Balance {
	Bids::<Test>::iter().filter(|(_, p, _)| *p == who).map(|(_, _, b)| b.deposit).sum()
}

/// The bid deposits forfeited so far: (provider, amount, paid to; burnt if none).
pub fn forfeits() -> Vec<stint_testkit::ForfeitRecord> {
	stint_testkit::forfeits()
}

pub fn stream_escrow(who: u64) -> Balance {
	Balances::balance_on_hold(&pallet_streams::HoldReason::StreamEscrow.into(), &who)
}

pub fn free(who: u64) -> Balance {
	Balances::free_balance(who)
}

/// A valid job: a pinned image and one input.
pub fn spec() -> JobSpec {
	let image = format!("ghcr.io/acme/train@sha256:{}", "ab".repeat(32));
	assert!(image.len() <= MAX_IMAGE_LEN as usize);
	JobSpec {
		image: image.into_bytes().try_into().unwrap(),
		command: vec![b"python".to_vec().try_into().unwrap()].try_into().unwrap(),
		env: Default::default(),
		inputs: vec![Input {
			uri: b"https://data.example/set.tar".to_vec().try_into().unwrap(),
			content_hash: [1; 32],
		}]
		.try_into()
		.unwrap(),
		max_output_bytes: 1 << 30,
	}
}

/// Terms for one GPU at up to 10 per block for 100 blocks, bids for 10 blocks, auto-accept.
/// The least notice an open-ended order asks.
pub const MIN_NOTICE: u64 = 5;

parameter_types! {
	pub const MinHoldback: Permill = Permill::from_percent(10);
}

pub fn terms() -> TermsOf<Test> {
	OrderTerms {
		requirements: GpuRequirements {
			gpu_count: 1,
			min_vram_mib: 0,
			min_compute_capability: ComputeCapability::default(),
			models: Default::default(),
			min_cuda_driver_version: 0,
			region: None,
			min_reputation: Permill::zero(),
		},
		max_price_per_block: 10,
		duration: Some(100),
		bid_window: 10,
		auto_accept: true,
		replicas: 1,
		termination_notice: 0,
		holdback: MinHoldback::get(),
		verdict_window: 0,
		deterministic: false,
	}
}

/// The last event of this pallet.
pub fn last_event() -> Event<Test> {
	stint_testkit::last_event::<Test, _>()
}
