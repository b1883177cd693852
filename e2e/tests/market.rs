//! A job's whole life on a real dev chain, through a client that knows nothing of Stint but the
//! metadata (subxt, dynamic values): Alice orders a GPU, the runtime API tells Eve which of her
//! GPUs can serve it, Eve bids, the window closes and the bid is accepted without anyone's
//! transaction, Eve acknowledges, and a result signed by Eve's worker key (`//Eve//stash`) and
//! sent by Bob completes the lease.

use std::{str::FromStr, time::Duration};

use anyhow::{bail, Context, Result};
use stint_e2e::{Client, TestNode};
use stint_primitives::{Report, ReportKind, ResultCommitment};
use subxt::{
	dynamic::{self, At, Value},
	ext::scale_value::{Composite, ValueDef},
};
use subxt_signer::{
	sr25519::{dev, Keypair},
	SecretUri,
};

const STARTUP: Duration = Duration::from_secs(90);
const STINT: u128 = 1_000_000_000_000;
const DIGEST: [u8; 32] = [0x5d; 32];

fn hex(bytes: &[u8]) -> String {
	bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn order_args() -> (Value, Value, Value) {
	let image = format!("ghcr.io/acme/train@sha256:{}", hex(&DIGEST));
	let empty = || Value::unnamed_composite(Vec::<Value>::new());
	let spec = Value::named_composite([
		("image", Value::from_bytes(image.as_bytes())),
		("command", empty()),
		("env", empty()),
		("inputs", empty()),
		("max_output_bytes", Value::u128(1 << 30)),
	]);
	let requirements = Value::named_composite([
		("gpu_count", Value::u128(1)),
		("min_vram_mib", Value::u128(80_000)),
		(
			"min_compute_capability",
			Value::named_composite([("major", Value::u128(9)), ("minor", Value::u128(0))]),
		),
		("models", empty()),
		("min_cuda_driver_version", Value::u128(12_000)),
		("region", Value::unnamed_variant("Some", [Value::from_bytes(b"DE")])),
		("min_reputation", Value::u128(0)),
	]);
	let terms = Value::named_composite([
		("requirements", requirements),
		("max_price_per_block", Value::u128(STINT)),
		("duration", Value::unnamed_variant("Some", [Value::u128(100)])),
		("bid_window", Value::u128(8)),
		("auto_accept", Value::bool(true)),
		("replicas", Value::u128(1)),
		("termination_notice", Value::u128(0)),
		// A tenth of every payment waits for the buyer's verdict (the chain's least).
		("holdback", Value::u128(100_000)),
		("verdict_window", Value::u128(0)),
		("deterministic", Value::bool(false)),
	]);
	(spec, terms, Value::u128(100 * STINT))
}

/// Signs and submits `call`, waits for finality, returns the (pallet, event) names emitted.
async fn submit(
	client: &Client,
	node: &TestNode,
	call: &impl subxt::tx::Payload,
	who: &Keypair,
) -> Result<Vec<(String, String)>> {
	let events = client
		.at_current_block()
		.await?
		.transactions()
		.sign_and_submit_then_watch_default(call, who)
		.await?
		.wait_for_finalized_success()
		.await
		.with_context(|| node.log_tail(30))?;
	let mut names = Vec::new();
	for event in events.iter() {
		let event = event?;
		names.push((event.pallet_name().to_string(), event.event_name().to_string()));
	}
	Ok(names)
}

/// Calls `MarketApi_<method>` at the best block and decodes the answer dynamically.
macro_rules! api {
	($client:expr, $method:expr, $args:expr) => {{
		let call = dynamic::runtime_api_call::<_, Value>("MarketApi", $method, $args);
		let answer: Result<Value> =
			Ok($client.at_current_block().await?.runtime_apis().call(call).await?);
		answer
	}};
}

fn variant_name(value: &Value) -> Option<&str> {
	match &value.value {
		ValueDef::Variant(v) => Some(&v.name),
		_ => None,
	}
}

fn list(value: &Value) -> Vec<Value> {
	match &value.value {
		ValueDef::Composite(Composite::Unnamed(items)) => items.clone(),
		ValueDef::Composite(Composite::Named(items)) => {
			items.iter().map(|(_, v)| v.clone()).collect()
		}
		_ => Vec::new(),
	}
}

#[tokio::test(flavor = "multi_thread")]
async fn an_order_is_bid_on_accepted_acknowledged_and_completed_with_a_signed_result() -> Result<()>
{
	let node = TestNode::shared()?;
	let client = node.client(STARTUP).await?;
	let (alice, bob, eve) = (dev::alice(), dev::bob(), dev::eve());
	let eve_id = eve.public_key().0;

	let (spec, terms, deposit) = order_args();
	submit(
		&client,
		node,
		&dynamic::transaction("Market", "create_order", (spec, terms, deposit)),
		&alice,
	)
	.await?;

	// Eve's worker would ask which orders her GPUs can serve (only she is in region DE).
	let servable = api!(&client, "servable_orders", (eve_id, Option::<u64>::None, 10u32))?;
	let servable = servable.at("orders").context("a page of orders")?.clone();
	let first = list(&servable).into_iter().next().context("Eve can serve the order")?;
	let order = first.at(0).and_then(|v| v.as_u128()).context("order id")?;
	let devices = first.at(1).context("devices")?.clone();
	let ferdie = api!(
		&client,
		"servable_orders",
		(dev::ferdie().public_key().0, Option::<u64>::None, 10u32)
	)?;
	let none = ferdie.at("orders").map(list);
	assert!(none.is_some_and(|orders| orders.is_empty()), "Ferdie is in the US: {ferdie}");
	assert!(ferdie.at("next").is_some(), "the page carries its cursor: {ferdie}");

	let bid = dynamic::transaction(
		"Market",
		"place_bid",
		(Value::u128(order), Value::u128(STINT / 2), devices),
	);
	submit(&client, node, &bid, &eve).await?;

	// The window closes eight blocks after the order: the block hook accepts Eve's bid.
	let mut lease = None;
	for _ in 0..320 {
		let value = api!(&client, "order", (order as u64,))?;
		let status = value.at(0).and_then(|o| o.at("status")).context("order status")?;
		if variant_name(status) == Some("Leased") {
			lease = status.at("lease").or_else(|| status.at(0)).and_then(|v| v.as_u128());
			break;
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	let lease = lease.context("the bid was accepted within 80 s")? as u64;
	let live = api!(&client, "leases_of", (eve_id,))?;
	assert_eq!(list(&live).len(), 1, "Eve's worker sees one live lease: {live}");

	// Eve's worker key (`//Eve//stash`, a funded dev account) acknowledges on Eve's behalf.
	let worker = Keypair::from_uri(&SecretUri::from_str("//Eve//stash")?)?;
	let ack = dynamic::transaction("Leases", "ack_lease", (lease,));
	submit(&client, node, &ack, &worker).await?;

	let commitment = ResultCommitment {
		output_root: [1; 32],
		receipt_hash: [2; 32],
		exit_code: 0,
		gpu_seconds: 42,
		image_digest: DIGEST,
	};
	let genesis: [u8; 32] = client.genesis_hash().0;
	let report = Report::new(genesis, lease, ReportKind::Final, commitment);
	let signature = worker.sign(&report.signing_bytes());
	let commitment_value = Value::named_composite([
		("output_root", Value::from_bytes(commitment.output_root)),
		("receipt_hash", Value::from_bytes(commitment.receipt_hash)),
		("exit_code", Value::i128(0)),
		("gpu_seconds", Value::u128(42)),
		("image_digest", Value::from_bytes(commitment.image_digest)),
	]);
	let result = dynamic::transaction(
		"Leases",
		"submit_result",
		(Value::u128(lease.into()), commitment_value, Value::from_bytes(signature.0)),
	);
	let events = submit(&client, node, &result, &bob).await?;
	assert!(
		events.contains(&("Leases".into(), "ResultSubmitted".into())),
		"Leases.ResultSubmitted was emitted: {events:?}"
	);

	let after = api!(&client, "lease", (lease,))?;
	let status = after.at(0).and_then(|l| l.at("status")).context("lease status")?;
	if variant_name(status) != Some("Completed") {
		bail!("the lease is not completed: {after}");
	}
	assert!(list(&api!(&client, "leases_of", (eve_id,))?).is_empty());
	Ok(())
}
