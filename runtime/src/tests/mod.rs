//! Runtime-level checks of Stint's pallets, on the real runtime types (32-byte accounts).

use crate::{genesis_config_presets::tests::build, Providers, Runtime, RuntimeOrigin};
use codec::Encode;
use pallet_providers::{Error, HardwareSpec, ProviderInfo};
use polkadot_sdk::{
	sp_core::Pair, sp_genesis_builder::DEV_RUNTIME_PRESET, sp_keyring::Sr25519Keyring,
};
use stint_primitives::{ComputeCapability, GpuDevice, GpuInterface, GpuVendor};

fn machine() -> HardwareSpec {
	HardwareSpec {
		gpus: polkadot_sdk::sp_runtime::bounded_vec![GpuDevice {
			vendor: GpuVendor::Nvidia,
			model: b"NVIDIA L4".to_vec().try_into().unwrap(),
			vram_mib: 23_034,
			compute_capability: ComputeCapability { major: 8, minor: 9 },
			cuda_driver_version: 13_000,
			interface: GpuInterface::Pcie,
			uuid_hash: [0x4c; 32],
		}],
		cpu_cores: 16,
		ram_mib: 65_536,
		disk_gib: 500,
	}
}

/// One NVIDIA H100 SXM whose UUID hashes to `uuid_hash`: the device the runtime tests rent out.
pub(super) fn h100_device(uuid_hash: stint_primitives::DeviceId) -> GpuDevice {
	GpuDevice {
		vendor: GpuVendor::Nvidia,
		model: b"NVIDIA H100 80GB HBM3".to_vec().try_into().unwrap(),
		vram_mib: 81_559,
		compute_capability: ComputeCapability { major: 9, minor: 0 },
		cuda_driver_version: 13_000,
		interface: GpuInterface::Sxm,
		uuid_hash,
	}
}

fn info() -> ProviderInfo {
	ProviderInfo {
		name: b"bob-l4".to_vec().try_into().unwrap(),
		endpoint: b"https://bob.example".to_vec().try_into().unwrap(),
		region: *b"NL",
	}
}

#[test]
fn a_provider_cannot_use_its_account_key_as_worker_key() {
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let bob = Sr25519Keyring::Bob;
		let consent = |key: Sr25519Keyring| {
			key.pair().sign(&stint_primitives::worker_proof_payload(
				&Providers::genesis_hash(),
				&bob.to_account_id().encode(),
				Providers::consent_nonce(&bob.to_account_id()),
			))
		};
		let refused = Providers::register(
			RuntimeOrigin::signed(bob.to_account_id()),
			info(),
			bob.public(),
			machine(),
			consent(bob),
		);
		assert_eq!(refused, Err(Error::<Runtime>::WorkerKeyIsAccount.into()));
		// A key that did not consent to act for Bob is refused too.
		let refused = Providers::register(
			RuntimeOrigin::signed(bob.to_account_id()),
			info(),
			Sr25519Keyring::BobStash.public(),
			machine(),
			consent(Sr25519Keyring::Charlie),
		);
		assert_eq!(refused, Err(Error::<Runtime>::BadWorkerKeyProof.into()));
		assert!(Providers::register(
			RuntimeOrigin::signed(bob.to_account_id()),
			info(),
			Sr25519Keyring::BobStash.public(),
			machine(),
			consent(Sr25519Keyring::BobStash),
		)
		.is_ok());
		Providers::do_try_state().unwrap();
	});
}

#[test]
fn fees_price_computation_and_length_as_a_real_chain_would() {
	use crate::{RuntimeCall, TransactionPayment};
	use polkadot_sdk::frame_support::dispatch::GetDispatchInfo;
	use stint_primitives::{MILLI_STINT, STINT};
	build(DEV_RUNTIME_PRESET).execute_with(|| {
		let transfer =
			RuntimeCall::Balances(polkadot_sdk::pallet_balances::Call::transfer_keep_alive {
				dest: Sr25519Keyring::Bob.to_account_id().into(),
				value: STINT,
			});
		// A signed transfer: the call, an address, a signature and the extensions.
		let len = transfer.encoded_size() as u32 + 110;
		let fee = TransactionPayment::compute_fee(len, &transfer.get_dispatch_info(), 0);
		assert!(
			(5 * MILLI_STINT..20 * MILLI_STINT).contains(&fee),
			"a transfer costs about 0.01 STINT, not {fee}"
		);
		// Length has a real price: the bytes of a large job spec alone cost a quarter STINT.
		assert!(TransactionPayment::length_to_fee(24 * 1024) >= 200 * MILLI_STINT);
	});
}

mod attacks;
mod disputes;
mod hardening;
mod lifecycle;
mod replicas;
// The benchmark and try-runtime builds serve two more runtime APIs, which production leaves out.
#[cfg(feature = "runtime-benchmarks")]
mod benchmark_helpers;
#[cfg(not(any(feature = "runtime-benchmarks", feature = "try-runtime")))]
mod metadata;
mod performance;
mod property;
mod verdicts;
mod workers;
