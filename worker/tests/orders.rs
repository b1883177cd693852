//! What an order brings with it, and a worker that moves, on a dev chain with Eve's worker:
//! - an order's inputs are fetched over HTTP, checked against their hashes and given to the job
//!   read-only; an input whose content does not match its hash is the order's fault
//!   (acknowledged, failed with the reserved code, no container);
//! - an input that trickles in past the ack deadline is the order's fault too: the lease is
//!   acknowledged two blocks before its deadline and failed with the reserved code, never left
//!   to be a no-show the provider is slashed for;
//! - a job whose outputs grow past the order's limit is stopped during the lease and its result
//!   sent, the receipt saying why;
//! - a job that takes disk at once (`fallocate`, 2 GiB against a limit of 1 MiB) is held by the
//!   kernel to its outputs' filesystem: the disk the lease takes stays within the limit and its
//!   margin, and the next order on the same worker is acknowledged and run (needs root);
//! - a worker killed after signing its result, whose journal is exported and imported into a
//!   fresh data directory (`stint-worker journal export | import`), sends that signed result from
//!   there, once;
//! - a worker whose Docker engine stops answering retracts its standing bids and bids on nothing
//!   new (a lease it won could not be acknowledged), and bids and runs jobs again once it answers;
//! - a worker started while its Docker engine is down starts anyway, leaves a lease it won
//!   unacknowledged while the engine is down, and acknowledges and runs it once it answers;
//! - a worker whose disk filled up after it bid leaves the lease unacknowledged and alerts (the
//!   provider's fault: the order is not failed), and acknowledges and runs it once space is
//!   freed; one whose disk is still full two blocks before the ack deadline acknowledges the
//!   lease and ends it with `HostShort` (the provider's fault, never a no-show), and bids on
//!   nothing, not even an order that would fit, until the space is back. Its data directory is
//!   a small tmpfs the test mounts, which needs root.

mod common;

use std::{
	path::{Path, PathBuf},
	process::{Command, Stdio},
	time::Duration,
};

use anyhow::{bail, Context, Result};
use common::{
	chain::{
		dev_node, journal_entry, lease_of, lease_result, live, metrics_with, post_order, stop,
		wait_lease, write_config, Order, Setup, Worker,
	},
	DockerSocket,
};
use stint_client::{Client, LeaseStatus};
use stint_primitives::{blake2_256, output_root, OutputFile, ReservedExit};

const WAIT: Duration = Duration::from_secs(120);

/// Serves `body` at `http://127.0.0.1:<port>/data` to every request, from a thread; the URI.
fn serve(body: &'static [u8]) -> Result<String> {
	let server = tiny_http::Server::http("127.0.0.1:0").map_err(|e| anyhow::anyhow!("{e}"))?;
	let port = server.server_addr().to_ip().context("an IP address")?.port();
	std::thread::spawn(move || {
		for request in server.incoming_requests() {
			let _ = request.respond(tiny_http::Response::from_data(body));
		}
	});
	Ok(format!("http://127.0.0.1:{port}/data"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_orders_inputs_are_fetched_checked_and_read_only_and_a_wrong_one_fails_the_order(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let setup = Setup { allow_private_inputs: true, ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let worker = Worker::start(&config, None)?;
	const DATA: &[u8] = b"the buyer's data set\n";
	let uri = serve(DATA)?;

	// The job copies its input (at /inputs/0) to its outputs.
	let inputs = [(uri.as_str(), blake2_256(DATA))];
	let command = ["/job", "copy", "0"];
	let order = Order { command: &command, inputs: &inputs, ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let expected = output_root(&[OutputFile {
		path: b"copy-0".to_vec(),
		size: DATA.len() as u64,
		content_hash: blake2_256(DATA),
	}]);
	assert_eq!(record.result.context("a result")?.0.output_root, expected);
	let kept = dir.path().join(format!("data/leases/{lease}/inputs/0"));
	assert_eq!(std::fs::read(kept)?, DATA);

	// The same data under another hash: the order's fault, found before anything runs.
	let inputs = [(uri.as_str(), [7; 32])];
	let order = Order { command: &command, inputs: &inputs, ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	let code = record.result.context("a result")?.0.exit_code;
	assert_eq!(code, ReservedExit::InputHashMismatch.code(), "{}", worker.log());
	let journal = stop(worker)?;
	assert!(journal_entry(&journal, lease)["container"].is_null(), "nothing was started");
	Ok(())
}

/// A body that never ends: a byte every half second.
struct Trickle;

impl std::io::Read for Trickle {
	fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
		std::thread::sleep(Duration::from_millis(500));
		match buf.first_mut() {
			Some(byte) => {
				*byte = b'x';
				Ok(1)
			}
			None => Ok(0),
		}
	}
}

#[tokio::test(flavor = "multi_thread")]
async fn an_input_that_trickles_past_the_ack_deadline_is_the_orders_fault_not_a_no_show(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let setup = Setup { allow_private_inputs: true, ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let worker = Worker::start(&config, None)?;
	let server = tiny_http::Server::http("127.0.0.1:0").map_err(|e| anyhow::anyhow!("{e}"))?;
	let port = server.server_addr().to_ip().context("an IP address")?.port();
	std::thread::spawn(move || {
		for request in server.incoming_requests() {
			std::thread::spawn(move || {
				let _ = request.respond(tiny_http::Response::new(
					200.into(),
					vec![],
					Trickle,
					None,
					None,
				));
			});
		}
	});
	let uri = format!("http://127.0.0.1:{port}/data");
	let inputs = [(uri.as_str(), [7; 32])];
	let command = ["/job", "copy", "0"];
	let order = Order { command: &command, inputs: &inputs, ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	// Acknowledged before its deadline with the order at fault, never left to be a no-show.
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	let code = record.result.context("a result")?.0.exit_code;
	assert_eq!(code, ReservedExit::InputUnreachable.code(), "{}", worker.log());
	assert!(worker.log().contains("before the ack deadline"), "{}", worker.log());
	let journal = stop(worker)?;
	assert!(journal_entry(&journal, lease)["container"].is_null(), "nothing was started");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_whose_outputs_outgrow_the_order_is_stopped_and_its_result_sent() -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;

	// 64 MiB, written a MiB every 20 ms, against a limit of 1 MiB: stopped within seconds. Its
	// name is no output path (a backslash): left out of the manifest, counted all the same.
	let command = ["/job", "big-at", "a\\b", "67108864", "sleep", "600"];
	let order = Order { command: &command, max_output_bytes: 1 << 20, ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(record.result.is_some(), "{:?}: {}", record.status, worker.log());
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	let log = worker.log();
	assert!(log.contains(&format!("lease={lease}: outputs over the order's limit")), "{log}");
	let journal = stop(worker)?;
	let entry = journal_entry(&journal, lease);
	assert_eq!(entry["exit"]["reason"], "OutputOverLimit", "{entry}");
	Ok(())
}

/// Issue 38, hole 1: with the walk of the outputs alone, `fallocate` takes a job's disk before
/// any walk sees it and the file stays for the whole retention: the worker then refuses the
/// provider's next lease (less disk than it may write), a no-show the same buyer reports. Held
/// by the kernel, the job gets no more than its filesystem.
#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_takes_disk_at_once_gets_no_more_than_its_outputs_filesystem() -> Result<()> {
	if !rustix::process::geteuid().is_root() {
		eprintln!("skipped: mounting the outputs' filesystems needs root");
		return Ok(());
	}
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let _unmounts = common::Unmounts(dir.path().to_path_buf());
	let setup = Setup { outputs_filesystem: true, ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let worker = Worker::start(&config, None)?;
	let limit = 1u64 << 20;
	let command = ["/job", "falloc", "2147483648", "exit", "0"];
	let order = Order { command: &command, max_output_bytes: limit, ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(record.result.is_some(), "{:?}: {}", record.status, worker.log());
	// The disk the lease's outputs take: their image's blocks, within the limit and its margin.
	let root = dir.path().join(format!("data/leases/{lease}"));
	let image = std::fs::metadata(root.join("outputs.img"))?;
	let taken = std::os::unix::fs::MetadataExt::blocks(&image) * 512;
	let bound = stint_worker::quota::image_bytes(limit);
	assert!(taken <= bound, "{taken} bytes taken, {bound} at most");
	let falloc = std::fs::metadata(root.join("outputs/falloc"))?;
	assert!(std::os::unix::fs::MetadataExt::blocks(&falloc) * 512 <= bound);

	// The next order runs on the same worker as if nothing happened.
	let command = ["/job", "write", "result.txt", "42", "exit", "0"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let (_, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	stop(worker)?;
	eprintln!("falloc of 2 GiB against 1 MiB of outputs: {taken} bytes of disk taken");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_moved_to_a_fresh_data_directory_sends_the_result_it_signed_once() -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let old = tempfile::tempdir()?;
	let config = write_config(old.path(), &url, &Setup::default())?;
	let mut crashing = Worker::start(&config, Some("after-sign-final"))?;
	let command = ["/job", "write", "moved.txt", "signed before the move"];
	let order = post_order(old.path(), &url, &Order { command: &command, ..Order::default() })?;
	let status = crashing.wait_exit(WAIT)?;
	assert!(!status.success(), "the worker was to crash after signing");
	let crashed_log = crashing.log();

	// The operator moves the journal: export on the old machine, import on the new one.
	let export = old.path().join("journal.json");
	let out = Command::new(env!("CARGO_BIN_EXE_stint-worker"))
		.args(["journal", "export", "--config"])
		.arg(&config)
		.output()?;
	if !out.status.success() {
		bail!("journal export: {}", String::from_utf8_lossy(&out.stderr));
	}
	std::fs::write(&export, &out.stdout)?;
	drop(crashing);
	let new = tempfile::tempdir()?;
	std::fs::create_dir_all(new.path().join("data"))?;
	let moved = write_config(new.path(), &url, &Setup::default())?;
	let imported = Command::new(env!("CARGO_BIN_EXE_stint-worker"))
		.args(["journal", "import", "--config"])
		.arg(&moved)
		.arg(&export)
		.output()?;
	if !imported.status.success() {
		bail!("journal import: {}", String::from_utf8_lossy(&imported.stderr));
	}
	let before: serde_json::Value = serde_json::from_slice(&out.stdout)?;

	let worker = Worker::start(&moved, None)?;
	let (lease, record) = lease_result(&client, order, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	tokio::time::sleep(Duration::from_secs(2)).await;
	let moved_log = worker.log();
	let after = stop(worker)?;
	let (before, after) = (journal_entry(&before, lease), journal_entry(&after, lease));
	// What was signed on the old machine is what the chain holds, sent in the same extrinsic.
	let signed = &before["reports"]["final"]["commitment"];
	assert!(!signed.is_null(), "nothing was signed before the crash:\n{crashed_log}");
	assert_eq!(signed, &serde_json::to_value(record.result.context("a result")?.0)?);
	let hash = &before["extrinsics"]["final"]["hash"];
	assert!(!hash.is_null(), "no extrinsic was signed before the crash:\n{crashed_log}");
	assert_eq!(&after["extrinsics"]["final"]["hash"], hash, "{moved_log}");
	let logs = format!("{crashed_log}{moved_log}");
	let sent = logs.matches(&format!("lease={lease}: final in a block")).count();
	let refused = logs.matches(&format!("lease={lease}: final refused")).count();
	assert!(sent <= 1 && refused == 0, "{sent} sent, {refused} refused:\n{logs}");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_whose_docker_engine_stops_answering_bids_on_nothing_until_it_answers_again(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let docker = DockerSocket::start(dir.path());
	let config = write_config(dir.path(), &url, &Setup::default())?;
	// Standing bids go once the engine has been silent this long.
	let text = std::fs::read_to_string(&config)?;
	std::fs::write(&config, text.replace("[bidding]\n", "[bidding]\nretract_after_secs = 2\n"))?;
	let worker =
		Worker::start_with_env(&config, None, &[], &[("DOCKER_HOST", docker.host().as_str())])?;
	worker.wait_log("compatible", WAIT).await?;
	// Bid windows of 40 blocks: a bid stands for a while before its order becomes a lease.
	let command = ["/job", "write", "back.txt", "up"];
	let order = Order { command: &command, bid_window: 40, ..Order::default() };
	let first = post_order(dir.path(), &url, &order)?;
	worker.wait_log(&format!("order {first}: bid "), WAIT).await?;

	docker.down();
	worker.wait_log(&format!("order {first}: bid retracted"), WAIT).await?;
	assert!(client.bids(first).await?.is_empty(), "{}", worker.log());
	let second = post_order(dir.path(), &url, &order)?;
	let posted = client.best_number().await?;
	while client.best_number().await? < posted + 8 {
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	assert!(client.bids(second).await?.is_empty(), "{}", worker.log());
	let log = worker.log();
	assert!(log.contains("the Docker engine does not answer"), "{log}");
	assert_eq!(log.matches("no new bids until it answers").count(), 1, "said once: {log}");
	metrics_with(&config, &["stint_worker_errors_total{component=\"executor\"} 1"])?;

	docker.up();
	worker.wait_log("the executor answers again", WAIT).await?;
	let (_, record) = lease_result(&client, second, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	stop(worker)?;
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_started_while_its_docker_engine_is_down_acknowledges_only_once_it_answers(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let docker = DockerSocket::start(dir.path());
	let host = docker.host();
	let env = [("DOCKER_HOST", host.as_str())];
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let mut worker = Worker::start_with_env(&config, None, &[], &env)?;
	let command = ["/job", "write", "late.txt", "ok"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	// The worker bids, then goes down; its engine goes down too; the bid becomes a lease.
	worker.wait_log(&format!("order {order}: bid "), WAIT).await?;
	worker.kill();
	docker.down();
	let lease = lease_of(&client, order, WAIT, &worker).await?;

	let worker = Worker::start_with_env(&config, None, &[], &env)?;
	worker.wait_log("starting without it", WAIT).await?;
	let from = client.best_number().await?;
	while client.best_number().await? < from + 12 {
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	let record = client.lease(lease).await?.context("the lease")?;
	assert!(matches!(record.status, LeaseStatus::AwaitingAck), "{}", worker.log());

	// The engine answers again, well before the ack deadline: acknowledged, run, committed.
	docker.up();
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	stop(worker)?;
	Ok(())
}

/// A tmpfs mounted at a path, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
	/// `None` where this user may not mount one (not root).
	fn mount(path: &Path, mib: u64) -> Result<Option<Self>> {
		std::fs::create_dir_all(path)?;
		let size = format!("size={mib}m");
		let mounted = Command::new("mount")
			.args(["-t", "tmpfs", "-o", &size, "tmpfs"])
			.arg(path)
			.stderr(Stdio::null())
			.status()?
			.success();
		Ok(mounted.then(|| Self(path.to_path_buf())))
	}
}

impl Drop for Tmpfs {
	fn drop(&mut self) {
		let _ = Command::new("umount").arg("-l").arg(&self.0).status();
	}
}

/// A worker on a 64 MiB disk of its own (a tmpfs under its data directory) bid on an order that
/// may write 16 MiB, was down when the bid became a lease, and meanwhile its disk filled up:
/// 4 MiB left. `None` where a tmpfs cannot be mounted (not root).
struct FilledAfterBid {
	/// Unmounted first when dropped (fields drop in order), before its folder is removed.
	_disk: Tmpfs,
	node: stint_e2e::TestNode,
	client: Client,
	dir: tempfile::TempDir,
	config: PathBuf,
	lease: u64,
	filler: PathBuf,
}

const FILLED_ORDER_BYTES: u64 = 16 << 20;

async fn a_lease_then_a_full_disk() -> Result<Option<FilledAfterBid>> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	// The worker's data directory: its journal, and each lease's inputs, outputs and logs.
	let data = dir.path().join("data");
	let Some(disk) = Tmpfs::mount(&data, 64)? else {
		eprintln!("skipped: mounting a tmpfs needs root");
		return Ok(None);
	};
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let mut worker = Worker::start(&config, None)?;
	let command = ["/job", "write", "late.txt", "ok"];
	let order =
		Order { command: &command, max_output_bytes: FILLED_ORDER_BYTES, ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	// The worker bids (64 MiB free), goes down, and the bid becomes a lease.
	worker.wait_log(&format!("order {order}: bid "), WAIT).await?;
	worker.kill();
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	let free = stint_probe::free_bytes(&data).map_err(anyhow::Error::msg)?;
	let filler = data.join("filler");
	std::fs::write(&filler, vec![0u8; (free - (4 << 20)) as usize])?;
	Ok(Some(FilledAfterBid { _disk: disk, node, client, dir, config, lease, filler }))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_whose_disk_filled_up_acknowledges_only_once_space_is_freed() -> Result<()> {
	let Some(filled) = a_lease_then_a_full_disk().await? else {
		return Ok(());
	};
	let FilledAfterBid { client, config, lease, filler, .. } = &filled;
	let worker = Worker::start(config, None)?;
	worker
		.wait_log(
			&format!("the order may write ({FILLED_ORDER_BYTES} bytes): not acknowledged"),
			WAIT,
		)
		.await?;
	let from = client.best_number().await?;
	while client.best_number().await? < from + 6 {
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	let record = client.lease(*lease).await?.context("the lease")?;
	assert!(matches!(record.status, LeaseStatus::AwaitingAck), "{}", worker.log());
	assert!(record.result.is_none(), "the provider's fault fails no order: {}", worker.log());
	let log = worker.log();
	assert_eq!(log.matches("not acknowledged").count(), 1, "alerted once: {log}");

	// Space is freed well before the ack deadline: acknowledged, run, committed.
	std::fs::remove_file(filler)?;
	let record = wait_lease(client, *lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	stop(worker)?;
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disk_still_full_near_the_ack_deadline_ends_the_lease_as_the_providers_fault_and_bidding_waits(
) -> Result<()> {
	let Some(filled) = a_lease_then_a_full_disk().await? else {
		return Ok(());
	};
	let FilledAfterBid { node, client, dir, config, lease, filler, .. } = &filled;
	let url = node.ws_url();
	let worker = Worker::start(config, None)?;
	worker.wait_log(&format!("({FILLED_ORDER_BYTES} bytes): not acknowledged"), WAIT).await?;
	// Two blocks before the deadline: acknowledged (no no-show) and ended as the provider's
	// fault, with nothing run.
	let record = wait_lease(client, *lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	let code = record.result.context("a result")?.0.exit_code;
	assert_eq!(code, ReservedExit::HostShort.code(), "{}", worker.log());
	worker.wait_log("no new bids until the disk is back", WAIT).await?;

	// An order that would fit in what is left gets no bid while the disk is short of what the
	// lease needed...
	let small = ["/job", "write", "small.txt", "ok"];
	let small =
		Order { command: &small, max_output_bytes: 1 << 20, bid_window: 40, ..Order::default() };
	let small = post_order(dir.path(), &url, &small)?;
	let from = client.best_number().await?;
	while client.best_number().await? < from + 6 {
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	assert!(!worker.log().contains(&format!("order {small}: bid ")), "{}", worker.log());
	// ... and gets one once the space is back.
	std::fs::remove_file(filler)?;
	worker.wait_log("the disk is back: bidding again", WAIT).await?;
	worker.wait_log(&format!("order {small}: bid "), WAIT).await?;
	let journal = stop(worker)?;
	assert!(journal_entry(&journal, *lease)["container"].is_null(), "nothing was started");
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bait_order_that_would_hold_a_bid_for_a_day_does_not_stop_the_worker_bidding_elsewhere(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;
	worker.wait_log("compatible", WAIT).await?;
	// Four baits: a day to bid, then an hour for their buyer to accept by hand, priced well
	// above the worker's ask. Before, each took a slot of the worker's four for a day.
	let bait = Order {
		bid_window: 14_400,
		auto_accept: false,
		max_price: "0.5",
		deposit: "100",
		..Order::default()
	};
	let baits: Vec<u64> =
		(0..4).map(|_| post_order(dir.path(), &url, &bait)).collect::<Result<_>>()?;
	let command = ["/job", "write", "back.txt", "up"];
	let normal = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let (_, record) = lease_result(&client, normal, WAIT, &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	for bait in baits {
		assert!(client.bids(bait).await?.is_empty(), "order {bait}: {}", worker.log());
	}
	stop(worker)?;
	Ok(())
}
