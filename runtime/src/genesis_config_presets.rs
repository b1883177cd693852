//! Genesis presets: the starting state of a `development` or `local_testnet` chain.
//!
//! The node only names a preset; what it contains is defined here, in the runtime, so every tool
//! that reads presets from the wasm (the node, chain-spec builders, zombienet) sees the same.

use crate::{
	AccountId, Balance, BalancesConfig, BondsConfig, ProvidersConfig, RuntimeGenesisConfig,
	SudoConfig, STINT,
};
use alloc::{format, vec, vec::Vec};
use pallet_providers::{HardwareSpec, ProviderInfo};
use polkadot_sdk::*;
use stint_primitives::{ComputeCapability, GpuDevice, GpuInterface, GpuVendor, WorkerKey};

use frame_support::build_struct_json_patch;
use serde_json::Value;
use sp_consensus_aura::sr25519::AuthorityId as AuraId;
use sp_consensus_grandpa::AuthorityId as GrandpaId;
use sp_genesis_builder::{PresetId, DEV_RUNTIME_PRESET, LOCAL_TESTNET_RUNTIME_PRESET};
use sp_keyring::{Ed25519Keyring, Sr25519Keyring};

/// What each well-known development account starts with.
pub const DEV_ACCOUNT_BALANCE: Balance = 1_000_000 * STINT;

/// The well-known development accounts (Alice to Ferdie and their stashes), all funded.
pub fn dev_accounts() -> Vec<AccountId> {
	Sr25519Keyring::iter()
		.filter(|k| k != &Sr25519Keyring::One && k != &Sr25519Keyring::Two)
		.map(|k| k.to_account_id())
		.collect()
}

/// What each example provider has bonded.
pub const EXAMPLE_PROVIDER_BOND: Balance = 10_000 * STINT;

/// A GPU of an example provider; its UUID hash is derived from the provider and its index.
fn example_gpu(provider: &str, index: u8, model: &str, vram_mib: u32, cc: (u8, u8)) -> GpuDevice {
	GpuDevice {
		vendor: GpuVendor::Nvidia,
		model: model.as_bytes().to_vec().try_into().expect("model names are short"),
		vram_mib,
		compute_capability: ComputeCapability { major: cc.0, minor: cc.1 },
		cuda_driver_version: 13_000,
		interface: GpuInterface::Sxm,
		uuid_hash: stint_primitives::device_id(&format!("GPU-{provider}-{index}")),
	}
}

/// Two providers a development chain starts with, so that orders get bids: Eve with two H100s in
/// Germany and Ferdie with two H200s in the United States. Each one's worker signs with its
/// `//stash` key (`//Eve//stash`, `//Ferdie//stash`), distinct from the provider account.
pub fn example_providers() -> Vec<(AccountId, ProviderInfo, WorkerKey, HardwareSpec)> {
	let machine = |provider: &str, model: &str, vram_mib: u32| HardwareSpec {
		gpus: (0..2)
			.map(|i| example_gpu(provider, i, model, vram_mib, (9, 0)))
			.collect::<Vec<_>>()
			.try_into()
			.expect("two GPUs"),
		cpu_cores: 64,
		ram_mib: 512 * 1024,
		disk_gib: 4_000,
	};
	let info = |name: &str, port: u16, region: &[u8; 2]| ProviderInfo {
		name: name.as_bytes().to_vec().try_into().expect("a short name"),
		endpoint: format!("http://127.0.0.1:{port}").into_bytes().try_into().expect("a short URL"),
		region: *region,
	};
	vec![
		(
			Sr25519Keyring::Eve.to_account_id(),
			info("eve-gpus", 8601, b"DE"),
			Sr25519Keyring::EveStash.public(),
			machine("eve", "NVIDIA H100 80GB HBM3", 81_559),
		),
		(
			Sr25519Keyring::Ferdie.to_account_id(),
			info("ferdie-gpus", 8602, b"US"),
			Sr25519Keyring::FerdieStash.public(),
			machine("ferdie", "NVIDIA H200", 143_771),
		),
	]
}

fn authority(key: Sr25519Keyring, grandpa: Ed25519Keyring) -> (AuraId, GrandpaId) {
	(key.public().into(), grandpa.public().into())
}

fn genesis(
	authorities: Vec<(AuraId, GrandpaId)>,
	endowed: Vec<AccountId>,
	root: AccountId,
) -> Value {
	build_struct_json_patch!(RuntimeGenesisConfig {
		balances: BalancesConfig {
			balances: endowed.into_iter().map(|who| (who, DEV_ACCOUNT_BALANCE)).collect::<Vec<_>>(),
		},
		aura: pallet_aura::GenesisConfig {
			authorities: authorities.iter().map(|(aura, _)| aura.clone()).collect::<Vec<_>>(),
		},
		grandpa: pallet_grandpa::GenesisConfig {
			authorities: authorities.iter().map(|(_, gran)| (gran.clone(), 1)).collect::<Vec<_>>(),
		},
		sudo: SudoConfig { key: Some(root) },
		// Both presets are for development: their providers' workers serve plain HTTP on
		// loopback. A production chain's genesis leaves it out (https:// only).
		providers: ProvidersConfig { providers: example_providers(), allow_plain_http: true },
		bonds: BondsConfig {
			bonds: example_providers()
				.into_iter()
				.map(|(who, ..)| (who, EXAMPLE_PROVIDER_BOND))
				.collect::<Vec<_>>(),
		},
	})
}

/// A single-node development chain: Alice authors and finalizes alone.
pub fn development_genesis() -> Value {
	genesis(
		vec![authority(Sr25519Keyring::Alice, Ed25519Keyring::Alice)],
		dev_accounts(),
		Sr25519Keyring::Alice.to_account_id(),
	)
}

/// A four-validator local testnet: Alice, Bob, Charlie and Dave.
pub fn local_testnet_genesis() -> Value {
	genesis(
		vec![
			authority(Sr25519Keyring::Alice, Ed25519Keyring::Alice),
			authority(Sr25519Keyring::Bob, Ed25519Keyring::Bob),
			authority(Sr25519Keyring::Charlie, Ed25519Keyring::Charlie),
			authority(Sr25519Keyring::Dave, Ed25519Keyring::Dave),
		],
		dev_accounts(),
		Sr25519Keyring::Alice.to_account_id(),
	)
}

/// The JSON patch of the preset named `id`, if there is one.
pub fn get_preset(id: &PresetId) -> Option<Vec<u8>> {
	let patch = match id.as_ref() {
		DEV_RUNTIME_PRESET => development_genesis(),
		LOCAL_TESTNET_RUNTIME_PRESET => local_testnet_genesis(),
		_ => return None,
	};
	Some(serde_json::to_string(&patch).expect("a JSON value always serializes; qed").into_bytes())
}

/// The presets this runtime offers.
pub fn preset_names() -> Vec<PresetId> {
	vec![PresetId::from(DEV_RUNTIME_PRESET), PresetId::from(LOCAL_TESTNET_RUNTIME_PRESET)]
}

#[cfg(test)]
pub(crate) mod tests {
	use super::*;
	use frame_support::traits::fungible::Inspect;
	use sp_runtime::BuildStorage;

	/// The state a chain started from preset `id` has at genesis.
	pub(crate) fn build(id: &str) -> sp_io::TestExternalities {
		let patch = get_preset(&PresetId::from(id)).expect("preset exists");
		let mut config: Value = serde_json::to_value(RuntimeGenesisConfig::default()).unwrap();
		json_merge(&mut config, serde_json::from_slice(&patch).expect("preset is valid JSON"));
		let config: RuntimeGenesisConfig =
			serde_json::from_value(config).expect("preset decodes into the genesis config");
		config.build_storage().expect("genesis builds").into()
	}

	/// Merges `patch` into `base` the way the genesis builder does.
	fn json_merge(base: &mut Value, patch: Value) {
		match (base, patch) {
			(Value::Object(base), Value::Object(patch)) => {
				for (key, value) in patch {
					json_merge(base.entry(key).or_insert(Value::Null), value);
				}
			}
			(base, patch) => *base = patch,
		}
	}

	#[test]
	fn every_preset_is_listed_builds_and_decodes() {
		let names = preset_names();
		assert_eq!(names.len(), 2);
		for name in names {
			let id = core::str::from_utf8(name.as_ref()).unwrap().to_owned();
			build(&id).execute_with(|| {
				assert!(!pallet_aura::Authorities::<crate::Runtime>::get().is_empty(), "{id}");
			});
		}
	}

	#[test]
	fn unknown_preset_is_none() {
		assert!(get_preset(&PresetId::from("mainnet")).is_none());
	}

	#[test]
	fn development_funds_the_dev_accounts_and_alice_authors_alone() {
		build(DEV_RUNTIME_PRESET).execute_with(|| {
			assert_eq!(pallet_aura::Authorities::<crate::Runtime>::get().len(), 1);
			assert_eq!(pallet_grandpa::Pallet::<crate::Runtime>::grandpa_authorities().len(), 1);
			for who in dev_accounts() {
				assert_eq!(
					pallet_balances::Pallet::<crate::Runtime>::total_balance(&who),
					DEV_ACCOUNT_BALANCE
				);
			}
			assert_eq!(dev_accounts().len(), 12);
			assert_eq!(
				pallet_balances::Pallet::<crate::Runtime>::total_issuance(),
				DEV_ACCOUNT_BALANCE * 12
			);
			assert_eq!(
				pallet_sudo::Key::<crate::Runtime>::get(),
				Some(Sr25519Keyring::Alice.to_account_id())
			);
		});
	}

	#[test]
	fn both_presets_have_two_bonded_example_providers() {
		use stint_traits::{ProviderCollateral, ProviderRegistry};
		for preset in [DEV_RUNTIME_PRESET, LOCAL_TESTNET_RUNTIME_PRESET] {
			build(preset).execute_with(|| {
				for (who, _, worker_key, hardware) in example_providers() {
					assert!(crate::Providers::is_active(&who));
					let devices: Vec<_> = hardware.gpus.iter().map(|gpu| gpu.uuid_hash).collect();
					assert_eq!(crate::Providers::worker_for(&who, &devices), Some(worker_key));
					let worker = crate::AccountId::from(worker_key.0);
					assert_eq!(
						crate::Providers::acting_for(&worker),
						Ok((who.clone(), Some(worker_key)))
					);
					assert_eq!(crate::Providers::devices(&who), hardware.gpus.into_inner());
					assert_eq!(crate::Bonds::free_bond(&who), EXAMPLE_PROVIDER_BOND);
				}
				crate::Providers::do_try_state().unwrap();
				crate::Bonds::do_try_state().unwrap();
				// Deposits and bonds are held, not created: issuance is what was endowed.
				assert_eq!(
					pallet_balances::Pallet::<crate::Runtime>::total_issuance(),
					DEV_ACCOUNT_BALANCE * 12
				);
			});
		}
	}

	#[test]
	fn local_testnet_has_four_authorities() {
		build(LOCAL_TESTNET_RUNTIME_PRESET).execute_with(|| {
			assert_eq!(pallet_aura::Authorities::<crate::Runtime>::get().len(), 4);
			assert_eq!(pallet_grandpa::Pallet::<crate::Runtime>::grandpa_authorities().len(), 4);
		});
	}
}
