//! A real `stint-node --dev` on loopback: with Aura and GRANDPA it authors and finalizes blocks;
//! with development sealing it makes a final block every few hundred milliseconds; it serves
//! modern metadata naming our pallets, and includes a signed transfer made by a third-party
//! client (subxt).

use std::{collections::BTreeSet, process::Command, time::Duration};

use anyhow::{bail, ensure, Context, Result};
use codec::{Decode, Encode};
use stint_e2e::{node_binary, Client, StintConfig, TestNode};
use subxt::{
	config::RpcConfigFor,
	dynamic::{self, At, Value},
	ext::frame_metadata::{RuntimeMetadata, RuntimeMetadataPrefixed, META_RESERVED},
	rpcs::{methods::LegacyRpcMethods, RpcClient},
};
use subxt_signer::sr25519::dev;

const STARTUP: Duration = Duration::from_secs(90);
/// Six-second slots (with Aura): a few blocks are well within this.
const BLOCKS: Duration = Duration::from_secs(90);
const STINT: u128 = 1_000_000_000_000;

/// Waits until the given stream of blocks reaches a block numbered at least `number`.
async fn wait_for_block(client: &Client, finalized: bool, number: u64) -> Result<u64> {
	let mut blocks =
		if finalized { client.stream_blocks().await? } else { client.stream_best_blocks().await? };
	let wait = async {
		while let Some(block) = blocks.next().await {
			let block = block?;
			if block.number() >= number {
				return Ok(block.number());
			}
		}
		bail!("the block subscription ended")
	};
	tokio::time::timeout(BLOCKS, wait).await.with_context(|| {
		format!(
			"no {} block #{number} within {BLOCKS:?}",
			if finalized { "finalized" } else { "best" }
		)
	})?
}

#[tokio::test(flavor = "multi_thread")]
async fn dev_chain_produces_and_finalizes_blocks_with_aura_and_grandpa() -> Result<()> {
	let node = TestNode::dev_aura()?;
	let client = node.client(STARTUP).await?;
	let best = wait_for_block(&client, false, 1).await;
	let finalized = wait_for_block(&client, true, 1).await;
	let (best, finalized) =
		(best.context(node.log_tail(30))?, finalized.context(node.log_tail(30))?);
	assert!(best >= 1 && finalized >= 1);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn development_sealing_makes_final_blocks_fast_with_aura_slots() -> Result<()> {
	let node = TestNode::shared()?;
	let client = node.client(STARTUP).await?;
	let start = std::time::Instant::now();
	let first = wait_for_block(&client, true, 1).await?;
	let tenth = wait_for_block(&client, true, first + 10).await?;
	// Ten blocks at a quarter of a second, far from ten six-second slots.
	assert!(start.elapsed() < Duration::from_secs(30), "{:?} for {tenth} blocks", start.elapsed());
	// Every block's timestamp is the start of its own, later slot, as under Aura.
	let at = client.at_current_block().await?;
	let now = dynamic::storage::<(), Value>("Timestamp", "Now");
	let slot = dynamic::storage::<(), Value>("Aura", "CurrentSlot");
	let now = at.storage().fetch(now, ()).await?.decode()?.as_u128().context("Timestamp.Now")?;
	let slot = at.storage().fetch(slot, ()).await?.decode()?;
	let slot = slot.at(0).and_then(|v| v.as_u128()).or(slot.as_u128()).context("CurrentSlot")?;
	assert_eq!(now, slot * 6_000, "the timestamp is its slot's start");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_is_v15_or_later_and_names_our_pallets() -> Result<()> {
	let node = TestNode::shared()?;
	let rpc = RpcClient::from_insecure_url(node.ws_url()).await?;
	let rpc = LegacyRpcMethods::<RpcConfigFor<StintConfig>>::new(rpc);

	let versions = rpc.state_call("Metadata_metadata_versions", None, None).await?;
	let versions = Vec::<u32>::decode(&mut &versions[..])?;
	for wanted in [14, 15, 16] {
		ensure!(versions.contains(&wanted), "metadata V{wanted} not served: {versions:?}");
	}

	for version in [15u32, 16] {
		let bytes =
			rpc.state_call("Metadata_metadata_at_version", Some(&version.encode()), None).await?;
		let opaque = Option::<Vec<u8>>::decode(&mut &bytes[..])?
			.with_context(|| format!("metadata V{version} missing"))?;
		let prefixed = RuntimeMetadataPrefixed::decode(&mut &opaque[..])?;
		assert_eq!(prefixed.0, META_RESERVED, "metadata magic");
		assert_eq!(prefixed.1.version(), version);
		let pallets: BTreeSet<String> = match prefixed.1 {
			RuntimeMetadata::V15(m) => m.pallets.into_iter().map(|p| p.name).collect(),
			RuntimeMetadata::V16(m) => m.pallets.into_iter().map(|p| p.name).collect(),
			other => bail!("unexpected metadata version {}", other.version()),
		};
		for pallet in [
			"System",
			"Timestamp",
			"Aura",
			"Grandpa",
			"Balances",
			"TransactionPayment",
			"Sudo",
			"Utility",
			"Parameters",
			"Providers",
			"Bonds",
			"Market",
			"Leases",
			"Streams",
		] {
			ensure!(pallets.contains(pallet), "V{version} lacks {pallet}: {pallets:?}");
		}
	}
	Ok(())
}

async fn free_balance(client: &Client, who: [u8; 32]) -> Result<u128> {
	let at = client.at_current_block().await?;
	let account = dynamic::storage::<([u8; 32],), Value>("System", "Account");
	let info = at.storage().fetch(account, (who,)).await?.decode()?;
	info.at("data")
		.at("free")
		.and_then(|v| v.as_u128())
		.with_context(|| format!("no data.free in {info}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn signed_transfer_is_included_and_moves_the_balance() -> Result<()> {
	let node = TestNode::shared()?;
	let client = node.client(STARTUP).await?;
	wait_for_block(&client, false, 1).await?;

	let (alice, bob) = (dev::alice(), dev::bob());
	let (alice_id, bob_id) = (alice.public_key().0, bob.public_key().0);
	let alice_before = free_balance(&client, alice_id).await?;
	let bob_before = free_balance(&client, bob_id).await?;

	let amount = 3 * STINT;
	let transfer = dynamic::transaction(
		"Balances",
		"transfer_keep_alive",
		(bob.public_key().to_address::<()>(), amount),
	);
	let events = client
		.at_current_block()
		.await?
		.transactions()
		.sign_and_submit_then_watch_default(&transfer, &alice)
		.await?
		.wait_for_finalized_success()
		.await
		.with_context(|| node.log_tail(30))?;

	let mut transferred = None;
	let mut fee = None;
	for event in events.iter() {
		let event = event?;
		let fields = event.decode_fields_unchecked_as::<Value>()?;
		match (event.pallet_name(), event.event_name()) {
			("Balances", "Transfer") => transferred = fields.at("amount").and_then(|v| v.as_u128()),
			("TransactionPayment", "TransactionFeePaid") => {
				fee = fields.at("actual_fee").and_then(|v| v.as_u128())
			}
			_ => {}
		}
	}
	assert_eq!(transferred, Some(amount), "Balances.Transfer event with the amount");
	let fee = fee.context("TransactionFeePaid event")?;
	assert!(fee > 0, "a signed transfer pays a fee");

	assert_eq!(free_balance(&client, bob_id).await?, bob_before + amount);
	assert_eq!(free_balance(&client, alice_id).await?, alice_before - amount - fee);
	Ok(())
}

#[test]
fn unknown_chain_is_a_clear_error_not_a_panic() -> Result<()> {
	let base = tempfile::tempdir()?;
	let output = Command::new(node_binary()?)
		.args(["--chain", "no-such-chain", "--base-path"])
		.arg(base.path())
		.output()?;
	let stderr = String::from_utf8_lossy(&output.stderr);
	assert!(!output.status.success(), "exit status {:?}", output.status);
	assert!(stderr.contains("unknown chain `no-such-chain`"), "stderr: {stderr}");
	assert!(!stderr.contains("panicked"), "stderr: {stderr}");
	Ok(())
}
