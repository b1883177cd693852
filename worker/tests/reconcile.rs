//! The worker keeps its leases right whatever happens around it, on dev nodes: a lease made while
//! it was down is acknowledged and run; a buyer's close stops the job within a block or two; a
//! worker killed while its job runs finds the job again and commits it; a node that stops
//! answering for a while, or restarting, is survived; with no node left the worker exits for its
//! supervisor; a lease this journal never saw is left alone unless adopted, and adopted only with its outputs;
//! a real runtime upgrade that renames a call the worker uses stops its new work (its standing bids
//! are retracted, no new one is placed), not its running job; a disputed result is re-executed by
//! the drawn provider's worker exactly once, through a kill and restart.

mod common;

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use common::chain::{
	container_state, dev_node, lease_of, live, metrics_with, post_order, remove_containers, stint,
	wait_lease, write_config, Order, Setup, Worker,
};
use stint_client::{
	runtime::runtime_types::stint_runtime::configs::parameters::dynamic_params::leases, Client,
	DisputeState, LeaseStatus, ReplicaDecision,
};

const WAIT: Duration = Duration::from_secs(120);

async fn wait_container(instance: &str, lease: u64, state: &str, worker: &Worker) -> Result<()> {
	let deadline = Instant::now() + WAIT;
	while container_state(instance, lease) != state {
		if Instant::now() > deadline {
			bail!(
				"the container of lease {lease} is {:?}, not {state}:\n{}",
				container_state(instance, lease),
				worker.log()
			);
		}
		tokio::time::sleep(Duration::from_millis(100)).await;
	}
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_made_while_the_worker_was_down_is_acknowledged_and_run() -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let mut worker = Worker::start(&config, None)?;
	let command = ["/job", "write", "late.txt", "ok"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	// The worker bids, then goes down before the window closes and the bid becomes a lease.
	worker.wait_log(&format!("order {order}: bid"), WAIT).await?;
	worker.kill();
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	let record = client.lease(lease).await?.expect("the lease");
	assert!(matches!(record.status, LeaseStatus::AwaitingAck));
	let worker = Worker::start(&config, None)?;
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let instance = worker.instance().await?;
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_buyers_close_stops_the_job_within_a_block_or_two() -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	let command = ["/job", "write", "partial.txt", "so far", "sleep", "600"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	stint(&url, "//Alice", &["lease", "close", &lease.to_string()])?;
	let closed_at = Instant::now();
	let record = client.lease(lease).await?.expect("the lease");
	assert!(!live(&record), "{:?}", record.status);
	wait_container(&instance, lease, "exited", &worker).await?;
	// A block is 250 ms here; the stop itself has a 1 s grace before SIGKILL.
	let took = closed_at.elapsed();
	assert!(took < Duration::from_secs(4), "stopped {took:?} after the close");
	worker.wait_log(&format!("lease={lease}: ended on chain"), WAIT).await?;
	// The outputs are kept for the retention period.
	let kept = dir.path().join(format!("data/leases/{lease}/outputs/partial.txt"));
	assert_eq!(std::fs::read_to_string(kept)?, "so far");
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_while_its_job_runs_finds_the_job_again_and_commits_it() -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let mut worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	let command = ["/job", "sleep", "4", "write", "done.txt", "yes"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	worker.kill();
	// The job goes on without the worker, and finishes while it is down.
	wait_container(&instance, lease, "exited", &worker).await?;
	let worker = Worker::start(&config, None)?;
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let expected = stint_primitives::output_root(&[stint_primitives::OutputFile {
		path: b"done.txt".to_vec(),
		size: 3,
		content_hash: stint_primitives::blake2_256(b"yes"),
	}]);
	assert_eq!(record.result.expect("a result").0.output_root, expected);
	let ids = std::process::Command::new("docker")
		.args(["ps", "-aq", "--filter", &format!("label=stint.instance={instance}")])
		.output()?;
	assert_eq!(String::from_utf8_lossy(&ids.stdout).lines().count(), 1, "one container");
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_acknowledged_by_another_journal_is_left_alone_until_adopted() -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let (first, second) = (tempfile::tempdir()?, tempfile::tempdir()?);
	let config = write_config(first.path(), &url, &Setup::default())?;
	let mut worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	let command = ["/job", "sleep", "25", "write", "adopted.txt", "yes"];
	let order = post_order(first.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	worker.kill();

	// The same key with a journal that never saw the lease: the running job is left alone
	// until the operator says otherwise, and even then only by the worker whose data folder
	// holds the job's outputs.
	let elsewhere = write_config(second.path(), &url, &Setup::default())?;
	let stranger = Worker::start(&elsewhere, None)?;
	let alert = format!("lease={lease}: a live lease on this worker key that this journal never");
	stranger.wait_log(&alert, WAIT).await?;
	drop(stranger);
	let stranger = Worker::start_with(&elsewhere, None, &["--adopt", &lease.to_string()])?;
	let refused = format!("Adopt({lease}): not adopted: its job writes its outputs");
	stranger.wait_log(&refused, WAIT).await?;
	drop(stranger);
	assert_eq!(container_state(&instance, lease), "running", "left alone");

	// The journal lost, the data folder kept: adopted, and the same job's result is sent.
	std::fs::remove_file(first.path().join("data/journal.redb"))?;
	let adopter = Worker::start_with(&config, None, &["--adopt", &lease.to_string()])?;
	let record = wait_lease(&client, lease, WAIT, &adopter, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", adopter.log());
	let expected = stint_primitives::output_root(&[stint_primitives::OutputFile {
		path: b"adopted.txt".to_vec(),
		size: 3,
		content_hash: stint_primitives::blake2_256(b"yes"),
	}]);
	assert_eq!(record.result.expect("a result").0.output_root, expected, "the same job's outputs");
	let adopter_instance = adopter.instance().await?;
	assert_eq!(container_state(&adopter_instance, lease), "", "no second container");
	drop(adopter);
	remove_containers(&instance);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_that_stops_answering_is_survived_and_no_node_at_all_ends_the_worker() -> Result<()>
{
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	// The first URL has no node: the worker fails over to the second, at start and after each
	// reconnection. Six failed reconnections in a row (about 45 s) end it: a node restarted on
	// a loaded machine (this binary's other tests run nodes and jobs beside it) has taken more
	// than the default three (about 22 s) to answer again.
	let setup = Setup { stall_secs: 2, dead_url_first: true, max_failures: 6, ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let mut worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	let command = ["/job", "sleep", "12", "write", "after.txt", "stall"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	// The node freezes (its socket stays open: a half-open connection) for 8 s.
	let pid = node.pid().to_string();
	std::process::Command::new("kill").args(["-STOP", &pid]).status()?;
	tokio::time::sleep(Duration::from_secs(8)).await;
	std::process::Command::new("kill").args(["-CONT", &pid]).status()?;
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let log = worker.log();
	assert!(log.contains("the node does not answer"), "{log}");
	assert!(log.contains(&format!("connected to {url}")), "{log}");
	// The job was never touched while the chain could not be read.
	assert!(!log.contains("vanished") && !log.contains("stopping the job"), "{log}");

	// The node restarts (killed, down 3 s, started again on its database) under a running job.
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	node.restart(Duration::from_secs(3))?;
	node.wait_for_rpc(Duration::from_secs(60))?;
	let client = common::chain::connect(&url).await?;
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());
	let log = worker.log();
	assert!(!log.contains("vanished") && !log.contains("stopping the job"), "{log}");

	// Without any node, the worker gives up after its reconnections, non-zero.
	drop(node);
	let status = worker.wait_exit(Duration::from_secs(120))?;
	assert_eq!(status.code(), Some(2), "{}", worker.log());
	assert!(worker.log().contains("exiting for the supervisor"));
	remove_containers(&instance);
	Ok(())
}

/// Root sets one of the leases' parameters on a dev chain.
async fn set_leases_parameter(client: &Client, parameter: leases::Parameters) -> Result<()> {
	use stint_client::runtime::{
		self,
		runtime_types::{
			pallet_parameters::pallet::Call as ParametersCall,
			stint_runtime::{configs::parameters::RuntimeParameters, RuntimeCall},
		},
	};
	let key_value = RuntimeParameters::Leases(parameter);
	let call = RuntimeCall::Parameters(ParametersCall::set_parameter { key_value });
	let alice = stint_client::keypair("//Alice")?;
	client
		.submit(&runtime::tx().sudo().sudo(call), &alice, stint_client::Wait::Finalized, |_| {})
		.await?;
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_ended_lease_is_checkpointed_paused_when_suspended_and_resumed_by_a_top_up(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let interval = leases::Parameters::CheckpointInterval(leases::CheckpointInterval, Some(8));
	set_leases_parameter(&client, interval).await?;
	let dir = tempfile::tempdir()?;
	// One STINT a block from ten in escrow: the stream runs dry ten blocks after the ack.
	let setup = Setup { price: "1", ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	let command = ["/job", "write", "progress.txt", "1", "sleep", "600"];
	let order = Order { command: &command, duration: None, max_price: "1", ..Order::default() };
	let order = post_order(dir.path(), &url, &order)?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;

	// Checkpointed (half the 8-block interval before each deadline), then suspended: paused.
	let record =
		wait_lease(&client, lease, WAIT, &worker, |r| matches!(r.status, LeaseStatus::Suspended))
			.await?;
	assert!(record.checkpoints >= 1, "no checkpoint before the escrow ran dry");
	wait_container(&instance, lease, "paused", &worker).await?;
	// The worker settled the stream as it ran (`settle_every = 5` blocks).
	metrics_with(&config, &["stint_worker_submissions_total{kind=\"settle\",result=\"ok\"}"])?;

	// A top-up resumes the lease, and the worker unpauses the job.
	stint(&url, "//Alice", &["stream", "top-up", &record.stream.to_string(), "1000"])?;
	wait_lease(&client, lease, WAIT, &worker, |r| matches!(r.status, LeaseStatus::Running)).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	let before = client.lease(lease).await?.expect("the lease").checkpoints;
	let record = wait_lease(&client, lease, WAIT, &worker, |r| r.checkpoints > before).await?;
	assert!(live(&record));

	stint(&url, "//Alice", &["lease", "close", &lease.to_string()])?;
	wait_container(&instance, lease, "exited", &worker).await?;
	let log = worker.log();
	assert!(log.contains(&format!("lease={lease}: checkpoint/1 in a block")), "{log}");
	assert!(!log.contains("refused"), "{log}");
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

/// The next spec version of the runtime (`runtime/next`: the real runtime, built with
/// `next-spec`), with `Market.place_bid` renamed in its metadata: what an upgrade that changed a
/// call the worker uses looks like to it. Only the name in the metadata changes (the bytes of a
/// string of the same length), so the chain itself goes on as before.
fn next_runtime_renaming_place_bid() -> Result<Vec<u8>> {
	use sp_maybe_compressed_blob::{compress_weakly, decompress, CODE_BLOB_BOMB_LIMIT};
	let Some(wasm) = stint_runtime_next::WASM_BINARY else {
		bail!("runtime/next was built without its wasm (SKIP_WASM_BUILD)");
	};
	let mut code = decompress(wasm, CODE_BLOB_BOMB_LIMIT)?.into_owned();
	let (from, to) = (b"place_bid", b"place_bix");
	let mut renamed = 0;
	for at in 0..code.len() - from.len() {
		if &code[at..at + from.len()] == from {
			code[at..at + from.len()].copy_from_slice(to);
			renamed += 1;
		}
	}
	assert!(renamed > 0, "no \"place_bid\" in the runtime's wasm");
	compress_weakly(&code, CODE_BLOB_BOMB_LIMIT).context("compressing the runtime")
}

/// Root upgrades the runtime to `code` (`System::set_code`) and waits until the chain runs it;
/// the new spec version.
async fn upgrade_runtime(client: &Client, code: Vec<u8>) -> Result<u32> {
	use stint_client::runtime::{
		self,
		runtime_types::{frame_system::pallet::Call as SystemCall, stint_runtime::RuntimeCall},
	};
	let (before, _) = client.worker_compatibility().await?;
	let call = RuntimeCall::System(SystemCall::set_code { code });
	let alice = stint_client::keypair("//Alice")?;
	client
		.submit(&runtime::tx().sudo().sudo(call), &alice, stint_client::Wait::Finalized, |_| {})
		.await?;
	let deadline = Instant::now() + Duration::from_secs(30);
	loop {
		let (spec, _) = client.worker_compatibility().await?;
		if spec != before {
			assert_eq!(
				spec,
				before + 1,
				"runtime/src/lib.rs: the next-spec VERSION must be the spec version plus one"
			);
			return Ok(spec);
		}
		if Instant::now() > deadline {
			bail!("the chain still runs spec version {before} after set_code");
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
}

#[tokio::test(flavor = "multi_thread")]
async fn after_an_upgrade_that_renames_a_call_it_uses_the_worker_runs_its_job_and_withdraws_its_bids(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	worker.wait_log("compatible", WAIT).await?;
	let command = ["/job", "sleep", "10", "write", "upgraded.txt", "done"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;
	// A bid that stands when the upgrade comes (Eve's other GPU): its order's window (400
	// blocks) outlasts the test.
	let waiting = post_order(dir.path(), &url, &Order { bid_window: 400, ..Order::default() })?;
	let deadline = Instant::now() + WAIT;
	while client.bids(waiting).await?.is_empty() {
		if Instant::now() > deadline {
			bail!("no bid on order {waiting}:\n{}", worker.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}

	let spec = upgrade_runtime(&client, next_runtime_renaming_place_bid()?).await?;
	let (_, incompatible) = client.worker_compatibility().await?;
	assert!(incompatible.iter().any(|c| c.starts_with("Market.place_bid")), "{incompatible:?}");
	worker
		.wait_log(&format!("runtime spec version {spec} changed calls this worker uses"), WAIT)
		.await?;
	// The standing bid is retracted: a worker that takes no new work must not win any.
	let deadline = Instant::now() + WAIT;
	while !client.bids(waiting).await?.is_empty() {
		if Instant::now() > deadline {
			bail!("the bid on order {waiting} still stands:\n{}", worker.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	// The running job goes on under the new runtime: its result is signed and included.
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());

	// A new order gets no bid from this worker: its bid window (8 blocks) passes twice over.
	let order = post_order(dir.path(), &url, &Order::default())?;
	let posted = client.best_number().await?;
	while client.best_number().await? < posted + 16 {
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	assert!(client.bids(order).await?.is_empty(), "{}", worker.log());
	assert!(!worker.log().contains(&format!("order {order}: bid")), "{}", worker.log());
	metrics_with(&config, &["stint_worker_errors_total{component=\"upgrade\"} 1"])?;
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_early_result_nobody_objects_to_is_confirmed_by_the_worker_once_its_window_passes(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let window = leases::Parameters::VerdictWindow(leases::VerdictWindow, Some(6));
	set_leases_parameter(&client, window).await?;
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	// A 200-block lease whose job is done at once: its result is early, and waits for objections.
	let command = ["/job", "write", "early.txt", "done"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	let record = wait_lease(&client, lease, WAIT, &worker, |r| !live(r)).await?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", worker.log());

	// Nobody objects: past its window the worker confirms it, and it counts.
	worker.wait_log(&format!("lease={lease}: result confirmed"), WAIT).await?;
	assert_eq!(client.pending_verdict(lease).await?, None);
	metrics_with(&config, &["stint_worker_submissions_total{kind=\"confirm\",result=\"ok\"} 1"])?;
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_its_provider_ended_by_notice_is_confirmed_by_the_worker_once_its_window_passes(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let window = leases::Parameters::VerdictWindow(leases::VerdictWindow, Some(6));
	set_leases_parameter(&client, window).await?;
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, &Setup::default())?;
	let worker = Worker::start(&config, None)?;
	let instance = worker.instance().await?;
	// An open-ended job that keeps running; the order asks the chain's least notice.
	let command = ["/job", "sleep", "600"];
	let open = Order { command: &command, duration: None, ..Order::default() };
	let order = post_order(dir.path(), &url, &open)?;
	let lease = lease_of(&client, order, WAIT, &worker).await?;
	wait_container(&instance, lease, "running", &worker).await?;

	// Eve's account (not her worker) gives notice and leaves once it is served: no slash, but
	// the lease waits for Alice's verdict with Eve's collateral. Nobody else confirms it.
	stint(&url, "//Eve", &["lease", "notice", &lease.to_string()])?;
	let noticed = client.lease(lease).await?.context("the lease")?;
	let served = noticed.notice_ends_at.context("the notice")?;
	while client.best_head().await?.1 < u64::from(served) {
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
	stint(&url, "//Eve", &["lease", "terminate", &lease.to_string()])?;
	assert!(client.pending_verdict(lease).await?.is_some(), "{}", worker.log());
	// The worker stops the job, and past the window confirms the verdict.
	worker.wait_log(&format!("lease={lease}: result confirmed"), WAIT).await?;
	assert_eq!(client.pending_verdict(lease).await?, None);
	drop(worker);
	remove_containers(&instance);
	Ok(())
}

/// The verification lease the dispute of `lease` runs, once one is drawn.
async fn verification_of(client: &Client, lease: u64, worker: &Worker) -> Result<u64> {
	let deadline = Instant::now() + WAIT;
	loop {
		if let Some(dispute) = client.dispute(lease).await? {
			match dispute.state {
				DisputeState::Verifying { lease } => return Ok(lease),
				DisputeState::Drawing { .. } => {}
				other => bail!("the dispute of {lease} is {other:?}:\n{}", worker.log()),
			}
		}
		if Instant::now() > deadline {
			bail!("no verifier was drawn for lease {lease}:\n{}", worker.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disputed_result_is_re_executed_by_the_drawn_provider_exactly_once_through_a_restart(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let (eve_dir, ferdie_dir) = (tempfile::tempdir()?, tempfile::tempdir()?);
	let eve_config = write_config(eve_dir.path(), &url, &Setup::default())?;
	let eve = Worker::start(&eve_config, None)?;
	let eve_instance = eve.instance().await?;
	// A deterministic job any region may run: Eve's worker (Ferdie's is not running) wins it.
	let command = ["/job", "sleep", "4", "write", "answer.txt", "42"];
	let job = Order { command: &command, region: None, deterministic: true, ..Order::default() };
	let order = post_order(eve_dir.path(), &url, &job)?;
	let lease = lease_of(&client, order, WAIT, &eve).await?;
	let original = wait_lease(&client, lease, WAIT, &eve, |r| !live(r)).await?;
	assert!(matches!(original.status, LeaseStatus::Completed), "{}", eve.log());

	// Ferdie's worker runs; Alice disputes Eve's result; Ferdie, the only other provider, is
	// drawn and its worker runs the verification lease like any other.
	let ferdie_setup = Setup { key: "//Ferdie//stash", ..Setup::default() };
	let ferdie_config = write_config(ferdie_dir.path(), &url, &ferdie_setup)?;
	let mut ferdie = Worker::start(&ferdie_config, None)?;
	let ferdie_instance = ferdie.instance().await?;
	stint(&url, "//Alice", &["lease", "dispute", &lease.to_string()])?;
	let check = verification_of(&client, lease, &ferdie).await?;
	wait_container(&ferdie_instance, check, "running", &ferdie).await?;
	// Killed while the re-execution runs: the job finishes meanwhile, the restarted worker
	// finds it and commits it, once.
	ferdie.kill();
	wait_container(&ferdie_instance, check, "exited", &ferdie).await?;
	let ferdie = Worker::start(&ferdie_config, None)?;
	let verified = wait_lease(&client, check, WAIT, &ferdie, |r| !live(r)).await?;
	assert!(matches!(verified.status, LeaseStatus::Completed), "{}", ferdie.log());
	let root = |r: &stint_client::LeaseRecord| r.result.as_ref().map(|c| c.0.output_root);
	assert_eq!(root(&verified), root(&original), "the same outputs");
	let dispute = client.dispute(lease).await?.context("the dispute")?;
	assert_eq!(dispute.state, DisputeState::Upheld, "{}", ferdie.log());
	assert_eq!(client.pending_verdict(lease).await?, None, "settled by the re-execution");
	let ids = std::process::Command::new("docker")
		.args(["ps", "-aq", "--filter", &format!("label=stint.instance={ferdie_instance}")])
		.output()?;
	assert_eq!(String::from_utf8_lossy(&ids.stdout).lines().count(), 1, "one re-execution");
	drop((eve, ferdie));
	remove_containers(&eve_instance);
	remove_containers(&ferdie_instance);
	Ok(())
}

/// A replicated order on a dev chain, run by Eve's and Ferdie's workers: each seals its
/// result, reveals it once both have, and the two agree. Ferdie's worker crashes having signed
/// its reveal and before sending it; restarted, it sends the same bytes: one reveal.
#[tokio::test(flavor = "multi_thread")]
async fn a_replicated_order_is_sealed_then_revealed_by_each_worker_exactly_once_through_a_crash(
) -> Result<()> {
	let (node, client) = dev_node().await?;
	let url = node.ws_url();
	let (eve_dir, ferdie_dir) = (tempfile::tempdir()?, tempfile::tempdir()?);
	let eve = Worker::start(&write_config(eve_dir.path(), &url, &Setup::default())?, None)?;
	let ferdie_setup = Setup { key: "//Ferdie//stash", ..Setup::default() };
	let ferdie_config = write_config(ferdie_dir.path(), &url, &ferdie_setup)?;
	let mut ferdie = Worker::start(&ferdie_config, Some("after-sign-reveal"))?;
	let (eve_instance, ferdie_instance) = (eve.instance().await?, ferdie.instance().await?);
	let command = ["/job", "sleep", "4", "write", "answer.txt", "42"];
	// Two replicas at up to 0.05 a block for 200 blocks: the deposit covers both.
	let job = Order {
		command: &command,
		region: None,
		deterministic: true,
		replicas: 2,
		deposit: "20",
		..Order::default()
	};
	let order = post_order(eve_dir.path(), &url, &job)?;
	lease_of(&client, order, WAIT, &eve).await?;
	let group = client.replicas(order).await?.context("the replicas")?;
	let leases: Vec<u64> = group.replicas.iter().map(|(lease, _)| *lease).collect();
	assert_eq!(leases.len(), 2);

	// Ferdie's worker seals, then dies having signed its reveal; restarted, it reveals.
	ferdie.wait_exit(WAIT)?;
	let ferdie = Worker::start(&ferdie_config, None)?;
	let deadline = Instant::now() + WAIT;
	let decided = loop {
		let group = client.replicas(order).await?.context("the replicas")?;
		if let Some((_, decision)) = group.decided {
			break decision;
		}
		if Instant::now() > deadline {
			bail!("not decided in time:\n{}\n{}", eve.log(), ferdie.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	};
	let ReplicaDecision::Majority { votes, exit_code, .. } = decided else {
		bail!("no majority: {decided:?}\n{}\n{}", eve.log(), ferdie.log());
	};
	assert_eq!((votes, exit_code), (2, 0));
	for lease in &leases {
		let record = client.lease(*lease).await?.context("the lease")?;
		assert!(matches!(record.status, LeaseStatus::Completed), "{}", ferdie.log());
		assert_eq!(client.pending_verdict(*lease).await?, None, "paid by the decision");
	}
	// Revealed, and never a second time (the chain would have refused it: `NotSealed`).
	assert!(ferdie.log().contains("sealed result revealed"), "{}", ferdie.log());
	assert!(!ferdie.log().contains("reveal refused"), "never a second one:\n{}", ferdie.log());
	drop((eve, ferdie));
	remove_containers(&eve_instance);
	remove_containers(&ferdie_instance);
	Ok(())
}
