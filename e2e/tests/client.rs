//! `stint-client` against a real node: reads pinned to a block, a transaction signed now and
//! sent later (and the same bytes sent again after a "crash" changing nothing), and a failover
//! connection that skips a dead URL and comes back after a reconnect.

use std::time::Duration;

use anyhow::{Context, Result};
use stint_client::{
	account_of, keypair, runtime, Backoff, Client, Error, Failover, SignedTx, Wait,
};
use stint_e2e::TestNode;

const STARTUP: Duration = Duration::from_secs(90);
const STINT: u128 = 1_000_000_000_000;

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_transaction_kept_and_sent_later_lands_once_and_reads_see_any_block() -> Result<()>
{
	let node = TestNode::shared()?;
	node.client(STARTUP).await?;
	let client = Client::connect(&node.ws_url()).await?;
	let (charlie, dave) = (keypair("//Charlie")?, keypair("//Dave")?);
	let dave_id = account_of(&dave);
	let (before_hash, before_number) = client.finalized_head().await?;
	let dave_before = client.free_balance(&dave_id).await?;

	// Sign now; keep the bytes (as a worker's journal would, here through JSON); send later.
	let call = runtime::tx().balances().transfer_keep_alive(dave_id.into(), 7 * STINT);
	let signed = client.sign(&call, &charlie, None).await?;
	let kept: SignedTx = serde_json::from_str(&serde_json::to_string(&signed)?)?;
	assert_eq!(kept, signed);
	let included = client.broadcast(&kept.bytes, Wait::Finalized, |_| {}).await?;
	assert!(included.event("Balances", "Transfer").is_some(), "{:?}", included.events);
	assert_eq!(client.free_balance(&dave_id).await?, dave_before + 7 * STINT);

	// The same bytes again (a worker restarted before it recorded the inclusion): refused, and
	// nothing moves twice.
	match client.broadcast(&kept.bytes, Wait::InBlock, |_| {}).await {
		Err(Error::Rejected(_)) => {}
		other => {
			anyhow::bail!("a replayed transaction was not rejected: {:?}", other.map(|i| i.events))
		}
	}
	assert_eq!(client.free_balance(&dave_id).await?, dave_before + 7 * STINT);

	// Its bytes are found in the best chain after the block before it, and no other's are; nor
	// are they after the best block.
	let hash: [u8; 32] = kept.hash.clone().try_into().expect("32 bytes");
	assert!(client.in_best_chain_after(hash, before_number).await?);
	assert!(!client.in_best_chain_after([7; 32], before_number).await?);
	let (_, best) = client.best_head().await?;
	assert!(!client.in_best_chain_after(hash, best).await?);

	// Reads at the block before the transfer still see the old balance.
	let earlier = client.at_block(before_hash);
	assert_eq!(earlier.free_balance(&dave_id).await?, dave_before);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn failover_skips_a_dead_node_and_reconnects() -> Result<()> {
	let node = TestNode::shared()?;
	node.client(STARTUP).await?;
	let fast =
		Backoff { first: Duration::from_millis(50), max: Duration::from_millis(200), rounds: 3 };
	let dead = format!("ws://127.0.0.1:{}", stint_e2e::free_port()?);
	let failover = Failover::new(vec![dead.clone(), node.ws_url()], fast)?;
	let client = failover.client().await?;
	assert_eq!(failover.connected_to().await, Some(node.ws_url()));
	assert_eq!(client.status().await?.chain, "Stint Development");
	// Reconnecting moves past the live node, finds the dead one dead, and comes back round.
	let again = failover.reconnect().await?;
	assert_eq!(failover.connected_to().await, Some(node.ws_url()));
	again.status().await.context("the reconnected client answers")?;
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn failover_that_expects_a_chain_passes_over_a_node_of_another() -> Result<()> {
	let node = TestNode::shared()?;
	let dev = node.client(STARTUP).await?;
	// A node of the local testnet: another genesis.
	let other = TestNode::start(&["--chain", "local"])?;
	other.wait_for_rpc(STARTUP)?;
	let fast =
		Backoff { first: Duration::from_millis(50), max: Duration::from_millis(200), rounds: 2 };
	let failover = Failover::new(vec![other.ws_url(), node.ws_url()], fast)?;
	// Not told which chain: the first that answers.
	failover.client().await?;
	assert_eq!(failover.connected_to().await, Some(other.ws_url()));
	// Told: the other chain's node is passed over, now and at every reconnection.
	failover.expect_genesis(dev.genesis_hash().0);
	let client = failover.reconnect().await?;
	assert_eq!(failover.connected_to().await, Some(node.ws_url()));
	assert_eq!(client.genesis_hash(), dev.genesis_hash().0);
	failover.reconnect().await?;
	assert_eq!(failover.connected_to().await, Some(node.ws_url()));
	// Only the other chain's node: no connection, and the reason is named.
	let alone = Failover::new(vec![other.ws_url()], fast)?;
	alone.expect_genesis(dev.genesis_hash().0);
	match alone.client().await {
		Err(Error::Connect { reason, .. }) => assert!(reason.contains("another chain"), "{reason}"),
		Err(other) => anyhow::bail!("not the expected error: {other}"),
		Ok(_) => anyhow::bail!("connected to a node of another chain"),
	}
	Ok(())
}
