//! Benchmarks (v2) of every call, each at its worst case.

use crate::*;
use alloc::vec::Vec;
use codec::Encode;
use frame::{
	benchmarking::prelude::*,
	deps::{sp_core::crypto::KeyTypeId, sp_io},
	traits::fungible::{Inspect, Mutate},
};
use stint_primitives::{ComputeCapability, GpuDevice, GpuInterface, GpuVendor, WorkerKey};

fn gpu(seed: u32) -> GpuDevice {
	GpuDevice {
		vendor: GpuVendor::Nvidia,
		model: alloc::vec![b'M'; stint_primitives::MAX_GPU_MODEL_LEN as usize].try_into().unwrap(),
		vram_mib: 81_559,
		compute_capability: ComputeCapability { major: 9, minor: 0 },
		cuda_driver_version: 13_000,
		interface: GpuInterface::Sxm,
		uuid_hash: frame::hashing::blake2_256(&(b"bench-gpu", seed).encode()),
	}
}

fn hardware(first: u32, count: u32) -> HardwareSpec {
	HardwareSpec {
		gpus: (first..first + count).map(gpu).collect::<Vec<_>>().try_into().unwrap(),
		cpu_cores: 64,
		ram_mib: 1 << 20,
		disk_gib: 8_000,
	}
}

/// The longest name and endpoint the runtime allows.
fn info<T: Config>() -> ProviderInfo {
	let endpoint_len = T::MaxEndpointLen::get() as usize;
	let mut endpoint = b"https://".to_vec();
	endpoint.resize(endpoint_len.max(9), b'e');
	ProviderInfo {
		name: alloc::vec![b'n'; T::MaxNameLen::get() as usize].try_into().unwrap(),
		endpoint: endpoint.try_into().unwrap(),
		region: *b"DE",
	}
}

fn funded<T: Config>() -> T::AccountId {
	let who: T::AccountId = whitelisted_caller();
	let gpus: BalanceOf<T> = T::MaxGpus::get().into();
	let needed = T::RegistrationDeposit::get()
		.saturating_add(T::DepositPerGpu::get().saturating_mul(gpus))
		.saturating_mul(4u32.into())
		.saturating_add(T::Currency::minimum_balance());
	T::Currency::set_balance(&who, needed);
	who
}

fn registered<T: Config>(gpus: u32) -> T::AccountId {
	let who = funded::<T>();
	let key = WorkerKey::from_raw([7; 32]);
	Pallet::<T>::do_register(&who, info::<T>(), key, hardware(0, gpus), None)
		.expect("benchmark provider registers");
	who
}

/// The keystore's key type for the benchmarks' worker keys.
const WORKER: KeyTypeId = KeyTypeId(*b"stwk");

/// A new worker key (from the keystore) and its consent to act for `who`.
fn worker<T: Config>(who: &T::AccountId) -> (WorkerKey, WorkerProof) {
	let key = sp_io::crypto::sr25519_generate(WORKER, None);
	let payload = stint_primitives::worker_proof_payload(
		&Pallet::<T>::genesis_hash(),
		&who.encode(),
		Pallet::<T>::consent_nonce(who),
	);
	let proof = sp_io::crypto::sr25519_sign(WORKER, &key, &payload).expect("the keystore signs");
	(key, proof)
}

#[benchmarks]
mod benches {
	use super::*;

	#[benchmark]
	fn register(g: Linear<1, { T::MaxGpus::get() }>) {
		let who = funded::<T>();
		let (key, proof) = worker::<T>(&who);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), info::<T>(), key, hardware(0, g), proof);
		assert!(Registry::<T>::contains_key(&who));
	}

	#[benchmark]
	fn update_info() {
		let who = registered::<T>(1);
		#[extrinsic_call]
		_(RawOrigin::Signed(who), info::<T>());
	}

	/// Replaces `g` devices with `g` new ones: every owner entry is removed and written.
	#[benchmark]
	fn update_hardware(g: Linear<1, { T::MaxGpus::get() }>) {
		let who = registered::<T>(g);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), hardware(1_000, g));
		assert_eq!(Registry::<T>::get(&who).unwrap().hardware.gpus.len() as u32, g);
	}

	#[benchmark]
	fn rotate_worker_key() {
		let who = registered::<T>(1);
		let (to, proof) = worker::<T>(&who);
		#[extrinsic_call]
		_(RawOrigin::Signed(who), WorkerKey::from_raw([7; 32]), to, proof);
	}

	/// A second worker for all but the first device: every device is looked at.
	#[benchmark]
	fn bind_worker(d: Linear<1, { T::MaxGpus::get() - 1 }>) {
		let who = registered::<T>(d + 1);
		// The first worker keeps one device (its proof is not what is measured).
		Registry::<T>::mutate(&who, |record| {
			let record = record.as_mut().expect("registered");
			record.workers[0].devices = alloc::vec![gpu(0).uuid_hash].try_into().expect("one");
		});
		let devices: alloc::vec::Vec<_> = (1..=d).map(|i| gpu(i).uuid_hash).collect();
		let devices = devices.try_into().unwrap();
		let (second, proof) = worker::<T>(&who);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), second, devices, proof);
		assert_eq!(Registry::<T>::get(&who).unwrap().workers.len(), 2);
	}

	/// A worker bound to every device.
	#[benchmark]
	fn unbind_worker() {
		let who = registered::<T>(T::MaxGpus::get());
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()), WorkerKey::from_raw([7; 32]));
		assert!(Registry::<T>::get(&who).unwrap().workers.is_empty());
	}

	#[benchmark]
	fn pause() {
		let who = registered::<T>(1);
		#[extrinsic_call]
		_(RawOrigin::Signed(who));
	}

	#[benchmark]
	fn resume() {
		let who = registered::<T>(1);
		Pallet::<T>::do_pause(&who).unwrap();
		#[extrinsic_call]
		_(RawOrigin::Signed(who));
	}

	#[benchmark]
	fn announce_exit() {
		let who = registered::<T>(1);
		#[extrinsic_call]
		_(RawOrigin::Signed(who));
	}

	/// With the most GPUs: every owner entry is removed.
	#[benchmark]
	fn deregister() {
		let who = registered::<T>(T::MaxGpus::get());
		Pallet::<T>::do_announce_exit(&who).unwrap();
		frame_system::Pallet::<T>::set_block_number(
			frame_system::Pallet::<T>::block_number().saturating_add(T::ExitNotice::get()),
		);
		#[extrinsic_call]
		_(RawOrigin::Signed(who.clone()));
		assert!(!Registry::<T>::contains_key(&who));
	}

	impl_benchmark_test_suite!(
		Pallet,
		crate::mock::ExtBuilder::default().build(),
		crate::mock::Test
	);
}
