//! A test runtime: system, balances and the registry.

use crate::{self as pallet_providers, *};
use frame::{runtime::prelude::*, testing_prelude::*, traits::Convert};
use polkadot_sdk::pallet_balances;
use polkadot_sdk::sp_core::{sr25519, Pair};
use stint_primitives::{ComputeCapability, GpuDevice, GpuInterface, GpuVendor, WorkerKey};

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
	pub type Providers = pallet_providers;
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

pub const DEPOSIT: Balance = 100;
pub const DEPOSIT_PER_GPU: Balance = 10;
pub const EXIT_NOTICE: u64 = 10;
pub const ENDOWMENT: Balance = 1_000_000;

#[derive_impl(pallet_providers::config_preludes::TestDefaultConfig)]
impl pallet_providers::Config for Test {
	type Currency = Balances;
	type RuntimeHoldReason = RuntimeHoldReason;
	type RegistrationDeposit = ConstU64<DEPOSIT>;
	type DepositPerGpu = ConstU64<DEPOSIT_PER_GPU>;
	type DepositPerByte = ConstU64<1>;
	type ExitNotice = ConstU64<EXIT_NOTICE>;
	type MaxGpus = ConstU32<4>;
	type MaxNameLen = ConstU32<16>;
	type MaxEndpointLen = ConstU32<32>;
	type MaxWorkers = ConstU32<3>;
	type WorkerAccount = WorkerAccount;
	type Bids = RecordedBids;
	type Obligations = PendingVerdicts;
}

thread_local! {
	static RETRACTED: core::cell::RefCell<Vec<u64>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// The market as the registry sees it: records whose standing bids were withdrawn, and says
/// every provider had [`STANDING_BIDS`] of them (of at most 64), each costing 1 µs.
pub struct RecordedBids;
pub const STANDING_BIDS: u32 = 3;
impl stint_traits::StandingBids<u64> for RecordedBids {
	fn retract_all(provider: &u64) -> u32 {
		RETRACTED.with(|r| r.borrow_mut().push(*provider));
		STANDING_BIDS
	}
	fn retract_on(provider: &u64, _: &[stint_primitives::DeviceId]) -> u32 {
		Self::retract_all(provider)
	}
	fn retract_weight(bids: u32) -> Weight {
		Weight::from_parts(1_000_000 * u64::from(bids.min(64)), 0)
	}
	fn retract_all_weight() -> Weight {
		Self::retract_weight(64)
	}
}

/// The providers whose standing bids were withdrawn, in order.
pub fn retracted() -> Vec<u64> {
	RETRACTED.with(|r| r.borrow().clone())
}

/// A worker key's account in this runtime: its first eight bytes as a number.
pub struct WorkerAccount;
impl Convert<WorkerKey, u64> for WorkerAccount {
	fn convert(key: WorkerKey) -> u64 {
		u64::from_le_bytes(key.0[..8].try_into().expect("32 bytes"))
	}
}

/// The worker key pair number `seed`.
pub fn pair(seed: u8) -> sr25519::Pair {
	sr25519::Pair::from_seed(&[seed; 32])
}

/// The worker key number `seed`.
pub fn worker_key(seed: u8) -> WorkerKey {
	pair(seed).public()
}

/// The account worker key `seed` signs transactions as.
pub fn worker_account(seed: u8) -> u64 {
	WorkerAccount::convert(worker_key(seed))
}

/// Worker key `seed`'s consent to act for `who`.
pub fn proof(seed: u8, who: u64) -> WorkerProof {
	stale_proof(seed, who, Providers::consent_nonce(&who))
}

/// Worker key `seed`'s consent to act for `who` as `who`'s consent number `nonce`.
pub fn stale_proof(seed: u8, who: u64, nonce: u32) -> WorkerProof {
	use codec::Encode;
	let payload =
		stint_primitives::worker_proof_payload(&Providers::genesis_hash(), &who.encode(), nonce);
	pair(seed).sign(&payload)
}

/// An H100-class GPU whose UUID hash is `[seed; 32]`.
pub fn gpu(seed: u8) -> GpuDevice {
	GpuDevice {
		vendor: GpuVendor::Nvidia,
		model: b"NVIDIA H100".to_vec().try_into().unwrap(),
		vram_mib: 81_559,
		compute_capability: ComputeCapability { major: 9, minor: 0 },
		cuda_driver_version: 12_080,
		interface: GpuInterface::Sxm,
		uuid_hash: [seed; 32],
	}
}

/// A machine with the GPUs `seeds`.
pub fn hardware(seeds: &[u8]) -> HardwareSpec {
	HardwareSpec {
		gpus: seeds.iter().map(|s| gpu(*s)).collect::<Vec<_>>().try_into().unwrap(),
		cpu_cores: 32,
		ram_mib: 262_144,
		disk_gib: 2_000,
	}
}

pub fn info() -> ProviderInfo {
	ProviderInfo {
		name: b"gpu-farm".to_vec().try_into().unwrap(),
		endpoint: b"https://gpu.example".to_vec().try_into().unwrap(),
		region: *b"DE",
	}
}

pub struct ExtBuilder {
	balances: Vec<(u64, Balance)>,
}

impl Default for ExtBuilder {
	fn default() -> Self {
		Self { balances: (1..=5).map(|who| (who, ENDOWMENT)).collect() }
	}
}

impl ExtBuilder {
	pub fn build(self) -> TestState {
		stint_testkit::ext::<Test>(self.balances)
	}

	/// Runs `test`, then checks the registry's invariants and that not a unit was created or
	/// lost: the registry only holds and releases deposits.
	pub fn build_and_execute(self, test: impl FnOnce()) {
		self.build().execute_with(|| {
			let books = stint_testkit::Books::<Test>::open();
			test();
			Providers::do_try_state().expect("registry invariants hold");
			// The registry neither mints nor burns.
			books.check(0);
		});
	}
}

/// The last event of this pallet.
pub fn last_event() -> Event<Test> {
	stint_testkit::last_event::<Test, _>()
}

/// Registers `who` with the GPUs `seeds`.
pub fn register(who: u64, seeds: &[u8]) {
	frame::testing_prelude::assert_ok!(Providers::register(
		RuntimeOrigin::signed(who),
		info(),
		worker_key(who as u8 + 100),
		hardware(seeds),
		proof(who as u8 + 100, who)
	));
}

pub fn held(who: u64) -> Balance {
	use frame::traits::fungible::InspectHold;
	Balances::balance_on_hold(&HoldReason::ProviderDeposit.into(), &who)
}

pub fn free(who: u64) -> Balance {
	Balances::free_balance(who)
}

parameter_types! {
	/// Results of each provider waiting for a verdict, as the leases would count them.
	pub static Pending: Vec<(u64, u32)> = Vec::new();
}

/// Stand-in for the leases' count of pending verdicts.
pub struct PendingVerdicts;
impl stint_traits::Obligations<u64> for PendingVerdicts {
	fn pending(who: &u64) -> u32 {
		Pending::get().iter().find(|(w, _)| w == who).map_or(0, |(_, n)| *n)
	}
}
