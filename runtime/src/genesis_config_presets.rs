//! Genesis presets: the starting state of a `development` or `local_testnet` chain.
//!
//! The node only names a preset; what it contains is defined here, in the runtime, so every tool
//! that reads presets from the wasm (the node, chain-spec builders, zombienet) sees the same.

use crate::{AccountId, Balance, BalancesConfig, RuntimeGenesisConfig, SudoConfig, STINT};
use alloc::{vec, vec::Vec};
use polkadot_sdk::*;

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
mod tests {
	use super::*;
	use sp_runtime::BuildStorage;

	fn build(id: &str) -> sp_io::TestExternalities {
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
					pallet_balances::Pallet::<crate::Runtime>::free_balance(&who),
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
	fn local_testnet_has_four_authorities() {
		build(LOCAL_TESTNET_RUNTIME_PRESET).execute_with(|| {
			assert_eq!(pallet_aura::Authorities::<crate::Runtime>::get().len(), 4);
			assert_eq!(pallet_grandpa::Pallet::<crate::Runtime>::grandpa_authorities().len(), 4);
		});
	}
}
