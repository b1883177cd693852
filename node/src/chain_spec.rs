//! Chain specifications. The genesis state itself lives in the runtime's presets; the node only
//! names a preset and adds the chain's properties.

use polkadot_sdk::{sc_service, sp_genesis_builder};
use stint_runtime::WASM_BINARY;

/// A chain specification with no node-side extensions.
pub type ChainSpec = sc_service::GenericChainSpec;

/// The built-in chains `--chain` accepts by name.
pub const BUILT_IN: &[&str] = &["dev", "local"];

fn properties() -> sc_service::Properties {
	let mut properties = sc_service::Properties::new();
	properties.insert("tokenSymbol".into(), stint_runtime::TOKEN_SYMBOL.into());
	properties.insert("tokenDecimals".into(), stint_runtime::TOKEN_DECIMALS.into());
	properties.insert("ss58Format".into(), stint_primitives_ss58().into());
	properties
}

fn stint_primitives_ss58() -> u16 {
	<stint_runtime::configs::SS58Prefix as polkadot_sdk::frame_support::traits::Get<u16>>::get()
}

fn from_preset(
	name: &str,
	id: &str,
	chain_type: sc_service::ChainType,
	preset: &str,
) -> Result<ChainSpec, String> {
	let wasm = WASM_BINARY.ok_or("this node was built without the wasm runtime")?;
	Ok(ChainSpec::builder(wasm, None)
		.with_name(name)
		.with_id(id)
		.with_chain_type(chain_type)
		.with_genesis_config_preset_name(preset)
		.with_properties(properties())
		.build())
}

/// A single-validator development chain (`--dev`, `--chain dev`).
pub fn development() -> Result<ChainSpec, String> {
	from_preset(
		"Stint Development",
		"stint_dev",
		sc_service::ChainType::Development,
		sp_genesis_builder::DEV_RUNTIME_PRESET,
	)
}

/// A four-validator local testnet (`--chain local`).
pub fn local_testnet() -> Result<ChainSpec, String> {
	from_preset(
		"Stint Local Testnet",
		"stint_local",
		sc_service::ChainType::Local,
		sp_genesis_builder::LOCAL_TESTNET_RUNTIME_PRESET,
	)
}

/// Resolves `--chain`: a built-in name, or the path of a chain spec JSON file.
pub fn load(id: &str) -> Result<Box<dyn sc_service::ChainSpec>, String> {
	Ok(match id {
		"dev" => Box::new(development()?),
		"" | "local" => Box::new(local_testnet()?),
		path => {
			let path = std::path::PathBuf::from(path);
			if !path.is_file() {
				return Err(format!(
					"unknown chain `{id}`: use one of {} or the path of a chain spec JSON file",
					BUILT_IN.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
				));
			}
			Box::new(ChainSpec::from_json_file(path)?)
		}
	})
}
