//! The registry and the bonds on a real dev chain: the example providers are there from genesis,
//! and a bond made with a third-party client is held on the account.

use std::time::Duration;

use anyhow::{Context, Result};
use stint_e2e::{Client, TestNode};
use subxt::{
	dynamic::{self, At, Value},
	ext::scale_value::ValueDef,
};
use subxt_signer::sr25519::dev;

const STARTUP: Duration = Duration::from_secs(90);
const STINT: u128 = 1_000_000_000_000;

async fn storage_value(
	client: &Client,
	pallet: &str,
	entry: &str,
	who: [u8; 32],
) -> Result<Option<Value>> {
	let at = client.at_current_block().await?;
	let address = dynamic::storage::<([u8; 32],), Value>(pallet, entry);
	match at.storage().try_fetch(address, (who,)).await? {
		Some(value) => Ok(Some(value.decode()?)),
		None => Ok(None),
	}
}

#[tokio::test(flavor = "multi_thread")]
async fn dev_chain_starts_with_two_bonded_providers() -> Result<()> {
	let node = TestNode::shared()?;
	let client = node.client(STARTUP).await?;
	for (who, gpus) in [(dev::eve(), 2), (dev::ferdie(), 2)] {
		let id = who.public_key().0;
		let record = storage_value(&client, "Providers", "Registry", id)
			.await?
			.context("example provider registered")?;
		let registered = record.at("hardware").and_then(|h| h.at("gpus")).context("gpus")?;
		// A BoundedVec is a newtype around its list.
		let registered = registered.at(0).context("the BoundedVec's list")?;
		let count = match &registered.value {
			ValueDef::Composite(gpus) => gpus.len(),
			other => anyhow::bail!("gpus is not a list: {other:?}"),
		};
		assert_eq!(count, gpus);
		let ledger =
			storage_value(&client, "Bonds", "Ledgers", id).await?.context("example bond")?;
		assert_eq!(ledger.at("active").and_then(|v| v.as_u128()), Some(10_000 * STINT));
	}
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bond_made_over_rpc_is_held() -> Result<()> {
	let node = TestNode::shared()?;
	let client = node.client(STARTUP).await?;
	let alice = dev::alice();
	let bond = dynamic::transaction("Bonds", "bond", (500 * STINT,));
	client
		.at_current_block()
		.await?
		.transactions()
		.sign_and_submit_then_watch_default(&bond, &alice)
		.await?
		.wait_for_finalized_success()
		.await
		.with_context(|| node.log_tail(30))?;
	let ledger = storage_value(&client, "Bonds", "Ledgers", alice.public_key().0)
		.await?
		.context("Alice's bond")?;
	assert_eq!(ledger.at("active").and_then(|v| v.as_u128()), Some(500 * STINT));
	let account = storage_value(&client, "System", "Account", alice.public_key().0)
		.await?
		.context("Alice's account")?;
	let held = account.at("data").and_then(|d| d.at("reserved")).and_then(|v| v.as_u128());
	assert_eq!(held, Some(500 * STINT), "the bond is a hold on the balance");
	Ok(())
}
