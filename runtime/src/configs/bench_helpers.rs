//! What the market's and the leases' benchmarks need from the other pallets, done through the
//! real registry, bonds and leases: providers are registered (with a worker key from the
//! keystore, which consents), bonded and funded exactly as a user would make them.

use alloc::vec::Vec;
use polkadot_sdk::*;

use codec::Encode;
use frame_support::{assert_ok, traits::fungible::Mutate};
use pallet_providers::{HardwareSpec, ProviderInfo};
use sp_core::crypto::KeyTypeId;
use stint_primitives::{
	ComputeCapability, DeviceId, GpuDevice, GpuInterface, GpuVendor, WorkerKey,
};
use stint_traits::ProviderCollateral;

use crate::{
	AccountId, Balance, Balances, Bonds, Leases, Providers, RuntimeOrigin, Streams, STINT,
};

/// The keystore's key type the pallets' benchmarks use for worker keys.
const WORKER: KeyTypeId = KeyTypeId(*b"stwk");

/// The benchmark helper of the market and the leases.
pub struct BenchmarkHelpers;

/// Provider number `index`, registered with `gpus` H100-class GPUs bound to `key`, funded and
/// bonded with 10,000 STINT.
fn provider(index: u32, gpus: u32, key: WorkerKey) -> (AccountId, Vec<DeviceId>) {
	let who: AccountId = frame_benchmarking::account("stint-provider", index, 0);
	Balances::set_balance(&who, 1_000_000 * STINT);
	let devices: Vec<DeviceId> = (0..gpus)
		.map(|i| sp_io::hashing::blake2_256(&(b"stint-bench-gpu", &who, i).encode()))
		.collect();
	let hardware = HardwareSpec {
		gpus: devices
			.iter()
			.map(|device| GpuDevice {
				vendor: GpuVendor::Nvidia,
				model: b"NVIDIA H100 80GB HBM3".to_vec().try_into().expect("a short model"),
				vram_mib: 81_559,
				compute_capability: ComputeCapability { major: 9, minor: 0 },
				cuda_driver_version: 13_000,
				interface: GpuInterface::Sxm,
				uuid_hash: *device,
			})
			.collect::<Vec<_>>()
			.try_into()
			.expect("no more GPUs than a call carries"),
		cpu_cores: 64,
		ram_mib: 1 << 20,
		disk_gib: 8_000,
	};
	let info = ProviderInfo {
		name: b"bench".to_vec().try_into().expect("a short name"),
		endpoint: b"https://bench.example".to_vec().try_into().expect("a short endpoint"),
		region: *b"DE",
	};
	let payload = stint_primitives::worker_proof_payload(
		&Providers::genesis_hash(),
		&who.encode(),
		Providers::consent_nonce(&who),
	);
	let consent = sp_io::crypto::sr25519_sign(WORKER, &key, &payload).expect("the keystore signs");
	assert_ok!(Providers::register(
		RuntimeOrigin::signed(who.clone()),
		info,
		key,
		hardware,
		consent
	));
	assert_ok!(Bonds::bond(RuntimeOrigin::signed(who.clone()), 10_000 * STINT));
	(who, devices)
}

impl pallet_market::BenchmarkHelper<AccountId> for BenchmarkHelpers {
	fn end_lease(lease: stint_primitives::LeaseId) {
		let record = pallet_leases::Leases::<crate::Runtime>::get(lease).expect("the lease");
		assert_ok!(Leases::ack_lease(RuntimeOrigin::signed(record.provider), lease));
		assert_ok!(Leases::close_lease(RuntimeOrigin::signed(record.buyer), lease));
	}

	fn provider(index: u32, gpus: u32) -> (AccountId, Vec<DeviceId>) {
		provider(index, gpus, sp_io::crypto::sr25519_generate(WORKER, None))
	}
}

impl pallet_leases::BenchmarkHelper<AccountId, Balance> for BenchmarkHelpers {
	fn provider(
		index: u32,
		gpus: u32,
		worker: WorkerKey,
		collateral: Balance,
	) -> (AccountId, Vec<DeviceId>) {
		let (who, devices) = provider(index, gpus, worker);
		assert_ok!(<Bonds as ProviderCollateral<_, _>>::lock_collateral(&who, collateral));
		(who, devices)
	}

	fn buyer(index: u32) -> AccountId {
		let who: AccountId = frame_benchmarking::account("stint-buyer", index, 0);
		Balances::set_balance(&who, 1_000_000_000 * STINT);
		who
	}

	fn fill_stream(stream: stint_traits::StreamId, depositors: u32) {
		for i in 1..depositors {
			let who: AccountId = frame_benchmarking::account("stint-depositor", i, 0);
			Balances::set_balance(&who, 1_000_000 * STINT);
			assert_ok!(Streams::top_up(RuntimeOrigin::signed(who), stream, 100 * STINT));
		}
	}
}
