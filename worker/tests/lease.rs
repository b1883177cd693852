//! The worker on a real dev chain: Alice orders a job with the `stint` CLI, Eve's worker (signing
//! with `//Eve//stash`) bids, the order is accepted without anyone's transaction, the worker
//! acknowledges, runs the job in Docker, and submits the result signed by its key; Alice fetches
//! the outputs with the CLI, which checks them against the chain (the logs' heads kept, however
//! much a job prints). Then crash safety: a worker
//! killed right after signing its result, or right after sending it, sends it exactly once (and
//! one whose signed result expired while it was down signs it again around the same report). An
//! order at fault (its image exists nowhere, or its command is not in its image) is acknowledged
//! and failed with the reserved code.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use common::chain::{
	container_state, journal_entry, lease_of, lease_result, metrics_with, post_order,
	results_on_chain, stint, stint_both, stop, write_config, Order, Setup, Worker,
	EVE_ENDPOINT_PORT,
};
use stint_client::{Client, LeaseStatus};
use stint_e2e::TestNode;

const WAIT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_runs_in_docker_and_its_result_is_fetched_and_verified() -> Result<()> {
	assert!(common::docker_available(), "this test needs a Docker engine");
	let node = TestNode::dev()?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	// 64 KiB of each stream kept: the engine's own file of a job's logs then holds about
	// 1.5 MiB of JSON lines, far less than a job printing 200,000 lines makes of them.
	let setup = Setup { api_port: EVE_ENDPOINT_PORT, log_bytes: 1 << 16, ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let worker = Worker::start(&config, None)?;
	let client = Client::connect(&url).await?;

	let command = ["/job", "write", "result.txt", "42", "say", "hello", "exit", "0"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let (lease, record) = lease_result(&client, order, Duration::from_secs(120), &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let commitment = record.result.context("a result")?.0;
	assert_eq!(commitment.exit_code, 0);
	let expected = stint_primitives::output_root(&[stint_primitives::OutputFile {
		path: b"result.txt".to_vec(),
		size: 2,
		content_hash: stint_primitives::blake2_256(b"42"),
	}]);
	assert_eq!(commitment.output_root, expected);

	// Alice fetches and verifies with the CLI; a stranger is refused.
	let out = dir.path().join("fetched");
	stint(
		&url,
		"//Alice",
		&["results", "fetch", &lease.to_string(), "--out", out.to_str().unwrap()],
	)?;
	assert_eq!(std::fs::read(out.join("outputs/result.txt"))?, b"42");
	assert_eq!(std::fs::read_to_string(out.join("logs/stdout"))?, "wrote result.txt\nhello\n");
	let refused =
		stint(&url, "//Bob", &["results", "fetch", &lease.to_string(), "--out", "/tmp/x"]);
	assert!(refused.is_err());

	// A job printing more than the engine's file keeps: the head of its stdout is kept all the
	// same, committed in its receipt and fetched as it was printed.
	let command = ["/job", "lines", "200000"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let (lease, record) = lease_result(&client, order, Duration::from_secs(120), &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let out = dir.path().join("fetched-lines");
	stint(
		&url,
		"//Alice",
		&["results", "fetch", &lease.to_string(), "--out", out.to_str().unwrap()],
	)?;
	let printed: String = (0..200_000).map(|n| format!("{n}\n")).collect();
	let kept = std::fs::read_to_string(out.join("logs/stdout"))?;
	assert_eq!(kept.len(), 1 << 16);
	assert!(printed.starts_with(&kept), "the head of stdout: {:?}", &kept[..kept.len().min(64)]);

	// A failing job is reported with its exit code, as a failure.
	let command = ["/job", "say", "oops", "exit", "3"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let (_, record) = lease_result(&client, order, Duration::from_secs(120), &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	assert_eq!(record.result.context("a result")?.0.exit_code, 3);

	// A fixed lease whose job would outlive it: Alice follows its logs with the CLI while it
	// runs; the worker stops it at the lease's end and sends its result; the CLI's copy of the
	// logs then matches the signed receipt.
	let instance = worker.instance().await?;
	let command = ["/job", "say", "one", "sleep", "1", "say", "two", "sleep", "600"];
	let fixed = Order { command: &command, duration: Some(40), ..Order::default() };
	let order = post_order(dir.path(), &url, &fixed)?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	let deadline = std::time::Instant::now() + WAIT;
	while container_state(&instance, lease) != "running" {
		anyhow::ensure!(std::time::Instant::now() < deadline, "never ran:\n{}", worker.log());
		tokio::time::sleep(Duration::from_millis(100)).await;
	}
	let (out, err) =
		stint_both(&url, "//Alice", &["lease", "logs", &lease.to_string(), "--follow"])?;
	assert_eq!(out, "one\ntwo\n");
	assert!(err.starts_with("one\ntwo\n"), "{err}");
	assert!(err.contains("verified against its signed receipt"), "{err}");
	let record = client.lease(lease).await?.context("the lease")?;
	assert!(record.result.is_some(), "{:?}", record.status);

	let journal = stop(worker)?;
	let entry = journal_entry(&journal, lease);
	assert_eq!(entry["exit"]["reason"], "TimeLimit", "{entry}");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_order_whose_image_nobody_has_is_acknowledged_and_failed_with_the_reserved_code(
) -> Result<()> {
	assert!(common::docker_available(), "this test needs a Docker engine");
	let node = TestNode::dev()?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;
	let client = Client::connect(&url).await?;

	// The order's fault, not the provider's: the lease is acknowledged (no no-show) and ends
	// with the reserved code at once, without a container.
	let image = format!("stint-test/nowhere@sha256:{}", "0".repeat(64));
	let order = Order { image: Some(&image), command: &["/job"], ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	let code = record.result.context("a result")?.0.exit_code;
	assert_eq!(code, stint_primitives::ReservedExit::ImageUnavailable.code());

	// An image that is here with a command it does not have: acknowledged, and failed as
	// soon as the engine refuses to start it (not retried, not reported lost later).
	let nope = Order { command: &["/nope"], ..Order::default() };
	let nope = post_order(dir.path(), &url, &nope)?;
	let (unstartable, record) = lease_result(&client, nope, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	let code = record.result.context("a result")?.0.exit_code;
	assert_eq!(code, stint_primitives::ReservedExit::JobUnstartable.code(), "{}", worker.log());
	assert!(!worker.log().contains("reporting it lost"), "{}", worker.log());

	// What the operator sees.
	let text = metrics_with(
		&config,
		&[
			"stint_worker_jobs_total{outcome=\"order_fault\"} 2",
			"stint_worker_submissions_total{kind=\"ack\",result=\"ok\"} 2",
			"stint_worker_submissions_total{kind=\"final\",result=\"ok\"} 2",
			"stint_worker_chain_connected 1",
		],
	)?;
	assert!(!text.contains(&format!("lease=\"{lease}\"")), "no lease ids as labels");
	let journal = stop(worker)?;
	assert!(journal_entry(&journal, lease)["container"].is_null(), "nothing was started");
	let instance = journal["meta"]["instance"].as_str().context("an instance")?;
	assert_eq!(container_state(instance, unstartable), "", "no container is left of it");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_while_committing_sends_its_result_exactly_once() -> Result<()> {
	assert!(common::docker_available(), "this test needs a Docker engine");
	// Every block's state kept: the result events are counted over the whole test.
	let ms = stint_e2e::test_block_ms().to_string();
	let node = TestNode::start(&["--dev", "--dev-block-time", &ms, "--state-pruning", "archive"])?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let client = Client::connect(&url).await?;
	// The last: the signed result's era runs out while the worker is down.
	let points = [
		("after-sign-report-final", false),
		("after-sign-final", false),
		("after-broadcast-final", false),
		("after-sign-final", true),
	];
	for (point, expire) in points {
		let from = client.finalized_head().await?.1;
		let mut crashing = Worker::start(&config, Some(point))?;
		let command = ["/job", "write", "out.txt", point];
		let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
		let status = crashing.wait_exit(Duration::from_secs(120))?;
		assert!(!status.success(), "{point}: the worker was to crash");
		let crashed_log = crashing.log();
		assert!(crashed_log.contains(&format!("crashing at {point}")), "{crashed_log}");
		let before = crashing.export()?;
		if expire {
			let lease = lease_of(&client, order, WAIT, &crashing).await?;
			let until = journal_entry(&before, lease)["extrinsics"]["final"]["valid_until"]
				.as_u64()
				.context("the signed result's era is journaled")?;
			while client.best_number().await? < until {
				tokio::time::sleep(Duration::from_millis(250)).await;
			}
		}
		drop(crashing);

		let worker = Worker::start(&config, None)?;
		let (lease, record) =
			lease_result(&client, order, Duration::from_secs(120), &worker).await?;
		assert!(matches!(record.status, LeaseStatus::Completed), "{point}: {}", worker.log());
		// Let the restarted worker see the lease end before it stops.
		tokio::time::sleep(Duration::from_secs(2)).await;
		let restarted_log = worker.log();
		let after = stop(worker)?;
		let (before, after) = (journal_entry(&before, lease), journal_entry(&after, lease));
		// The commitment on chain is the one signed before the crash.
		let signed = &before["reports"]["final"]["commitment"];
		assert!(!signed.is_null(), "{point}: nothing was signed before the crash");
		let on_chain = serde_json::to_value(record.result.context("a result")?.0)?;
		assert_eq!(signed, &on_chain, "{point}");
		assert_eq!(&after["reports"]["final"]["commitment"], signed, "{point}");
		// The extrinsic signed before the crash, if any, is the one that was sent: never a
		// second one.
		let logs = format!("{crashed_log}{restarted_log}");
		let hash_before = &before["extrinsics"]["final"]["hash"];
		if expire {
			// Past its era: signed again, around the same report.
			assert_ne!(&after["extrinsics"]["final"]["hash"], hash_before, "{point}:\n{logs}");
			assert!(restarted_log.contains("signing again"), "{restarted_log}");
		} else if !hash_before.is_null() {
			assert_eq!(&after["extrinsics"]["final"]["hash"], hash_before, "{point}:\n{logs}");
		}
		// On chain, from before the order to now: one result event, one result extrinsic.
		let to = client.finalized_head().await?.1;
		let (events, calls) = results_on_chain(&client, lease, from, to).await?;
		assert_eq!((events, calls), (1, 1), "{point}: events, extrinsics:\n{logs}");
		let refused = logs.matches(&format!("lease={lease}: final refused")).count();
		assert_eq!(refused, 0, "{point}:\n{logs}");
	}
	Ok(())
}
