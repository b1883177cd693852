//! The worker on a real dev chain: Alice orders a job with the `stint` CLI, Eve's worker (signing
//! with `//Eve//stash`) bids, the order is accepted without anyone's transaction, the worker
//! acknowledges, runs the job in Docker, and submits the result signed by its key; Alice fetches
//! the outputs with the CLI, which checks them against the chain. Then crash safety: a worker
//! killed right after signing its result, or right after sending it, sends it exactly once.

mod common;

use std::{
	path::{Path, PathBuf},
	process::{Child, Command, Stdio},
	time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};
use stint_client::{Client, LeaseRecord, LeaseStatus, OrderStatus};
use stint_e2e::{free_port, node_binary, TestNode};

/// Eve's registered endpoint on the dev chain: where the CLI fetches results from.
const EVE_ENDPOINT_PORT: u16 = 8601;

struct Worker {
	child: Child,
	log: PathBuf,
	config: PathBuf,
}

impl Worker {
	fn start(config: &Path, crash_at: Option<&str>) -> Result<Self> {
		let log = config.with_extension(format!("{}.log", stint_worker::unix_ms()));
		let mut command = Command::new(env!("CARGO_BIN_EXE_stint-worker"));
		command
			.args(["run", "--config"])
			.arg(config)
			.stdout(Stdio::null())
			.stderr(std::fs::File::create(&log)?);
		if let Some(point) = crash_at {
			command.env("STINT_WORKER_CRASH_AT", point);
		}
		Ok(Self { child: command.spawn()?, log, config: config.to_path_buf() })
	}

	fn log(&self) -> String {
		std::fs::read_to_string(&self.log).unwrap_or_default()
	}

	/// Waits for the process to end by itself (a crash point).
	fn wait_exit(&mut self, timeout: Duration) -> Result<std::process::ExitStatus> {
		let deadline = Instant::now() + timeout;
		loop {
			if let Some(status) = self.child.try_wait()? {
				return Ok(status);
			}
			if Instant::now() > deadline {
				bail!("the worker did not exit:\n{}", self.log());
			}
			std::thread::sleep(Duration::from_millis(100));
		}
	}

	fn export(&self) -> Result<serde_json::Value> {
		let out = Command::new(env!("CARGO_BIN_EXE_stint-worker"))
			.args(["journal", "export", "--config"])
			.arg(&self.config)
			.output()?;
		if !out.status.success() {
			bail!("journal export: {}", String::from_utf8_lossy(&out.stderr));
		}
		Ok(serde_json::from_slice(&out.stdout)?)
	}
}

impl Drop for Worker {
	fn drop(&mut self) {
		let _ = self.child.kill();
		let _ = self.child.wait();
	}
}

fn write_config(dir: &Path, url: &str, api_port: u16) -> Result<PathBuf> {
	let path = dir.join("worker.toml");
	let config = format!(
		r#"
[chain]
urls = ["{url}"]
stall_secs = 30

[worker]
key = "//Eve//stash"
data_dir = "{data}"
gpus = "off"

[api]
listen = "127.0.0.1:{api_port}"

[metrics]
listen = "127.0.0.1:{metrics}"

[bidding]
price = "0.01"
settle_every = 5

[limits]
stop_grace_secs = 1
"#,
		data = dir.join("data").display(),
		metrics = free_port()?,
	);
	std::fs::write(&path, config)?;
	Ok(path)
}

fn stint(url: &str, key: &str, args: &[&str]) -> Result<String> {
	let cli = node_binary()?.with_file_name("stint");
	let out = Command::new(&cli).args(["--url", url, "--key", key]).args(args).output()?;
	if !out.status.success() {
		bail!(
			"stint {}: {}{}",
			args.join(" "),
			String::from_utf8_lossy(&out.stdout),
			String::from_utf8_lossy(&out.stderr)
		);
	}
	Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Posts `command` as Alice's order for one of Eve's GPUs; returns the order id.
fn post_order(dir: &Path, url: &str, command: &[&str], duration: u32) -> Result<u64> {
	let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
	let job = format!(
		r#"
[job]
image = "{image}"
command = [{words}]
max_output_bytes = 1048576

[gpus]
count = 1
region = "DE"

[terms]
max_price_per_block = "0.05"
duration_blocks = {duration}
bid_window_blocks = 8
auto_accept = true
"#,
		image = common::job_image(),
		words = words.join(", "),
	);
	let file = dir.join(format!("job-{}.toml", stint_worker::unix_ms()));
	std::fs::write(&file, job)?;
	let out = stint(url, "//Alice", &["order", "create", file.to_str().unwrap()])?;
	let id = out
		.split_whitespace()
		.skip_while(|w| *w != "order")
		.nth(1)
		.and_then(|n| n.parse().ok())
		.with_context(|| format!("no order id in {out:?}"))?;
	Ok(id)
}

/// Waits until `order` became a lease and the lease is no longer live.
async fn lease_result(
	client: &Client,
	order: u64,
	timeout: Duration,
	worker: &Worker,
) -> Result<(u64, LeaseRecord)> {
	let deadline = Instant::now() + timeout;
	let mut lease_id = None;
	loop {
		if lease_id.is_none() {
			if let Some(record) = client.order(order).await? {
				if let OrderStatus::Leased { lease } = record.status {
					lease_id = Some(lease);
				}
			}
		}
		if let Some(id) = lease_id {
			let lease = client.lease(id).await?.context("the lease")?;
			if !matches!(
				lease.status,
				LeaseStatus::AwaitingAck | LeaseStatus::Running | LeaseStatus::Suspended
			) {
				return Ok((id, lease));
			}
		}
		if Instant::now() > deadline {
			bail!("order {order} (lease {lease_id:?}) did not end in time:\n{}", worker.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
}

/// Stops the worker, returns its journal, and removes the containers it made (they carry its
/// journal's instance label).
fn stop(mut worker: Worker) -> Result<serde_json::Value> {
	let _ = worker.child.kill();
	let _ = worker.child.wait();
	let journal = worker.export()?;
	if let Some(instance) = journal["meta"]["instance"].as_str() {
		let _ = Command::new("sh")
			.arg("-c")
			.arg(format!(
				"docker rm -f $(docker ps -aq --filter label=stint.instance={instance}) >/dev/null 2>&1"
			))
			.status();
	}
	Ok(journal)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_runs_in_docker_and_its_result_is_fetched_and_verified() -> Result<()> {
	assert!(common::docker_available(), "this test needs a Docker engine");
	let node = TestNode::dev()?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, EVE_ENDPOINT_PORT)?;
	let worker = Worker::start(&config, None)?;
	let client = Client::connect(&url).await?;

	let order = post_order(
		dir.path(),
		&url,
		&["/job", "write", "result.txt", "42", "say", "hello", "exit", "0"],
		200,
	)?;
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

	// A failing job is reported with its exit code, as a failure.
	let order = post_order(dir.path(), &url, &["/job", "say", "oops", "exit", "3"], 200)?;
	let (_, record) = lease_result(&client, order, Duration::from_secs(120), &worker).await?;
	assert!(matches!(record.status, LeaseStatus::Failed), "{}", worker.log());
	assert_eq!(record.result.context("a result")?.0.exit_code, 3);

	stop(worker)?;
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_while_committing_sends_its_result_exactly_once() -> Result<()> {
	assert!(common::docker_available(), "this test needs a Docker engine");
	let node = TestNode::dev()?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let config = write_config(dir.path(), &url, free_port()?)?;
	let client = Client::connect(&url).await?;
	for point in ["after-sign-report-final", "after-sign-final", "after-broadcast-final"] {
		let mut crashing = Worker::start(&config, Some(point))?;
		let order = post_order(dir.path(), &url, &["/job", "write", "out.txt", point], 200)?;
		let status = crashing.wait_exit(Duration::from_secs(120))?;
		assert!(!status.success(), "{point}: the worker was to crash");
		let crashed_log = crashing.log();
		assert!(crashed_log.contains(&format!("crashing at {point}")), "{crashed_log}");
		let before = crashing.export()?;
		drop(crashing);

		let worker = Worker::start(&config, None)?;
		let (lease, record) =
			lease_result(&client, order, Duration::from_secs(120), &worker).await?;
		assert!(matches!(record.status, LeaseStatus::Completed), "{point}: {}", worker.log());
		// Let the restarted worker see the lease end before it stops.
		tokio::time::sleep(Duration::from_secs(2)).await;
		let restarted_log = worker.log();
		let after = stop(worker)?;
		let find = |journal: &serde_json::Value| {
			journal["leases"]
				.as_array()
				.and_then(|all| all.iter().find(|e| e["lease"] == lease).cloned())
				.unwrap_or_default()
		};
		let (before, after) = (find(&before), find(&after));
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
		if !hash_before.is_null() {
			assert_eq!(&after["extrinsics"]["final"]["hash"], hash_before, "{point}:\n{logs}");
		}
		let sent = logs.matches(&format!("lease={lease}: final in a block")).count();
		let refused = logs.matches(&format!("lease={lease}: final refused")).count();
		assert!(sent <= 1 && refused == 0, "{point}: {sent} sent, {refused} refused:\n{logs}");
	}
	Ok(())
}
