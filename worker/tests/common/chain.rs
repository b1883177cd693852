//! Tests on a dev chain: Eve's worker as a process, Alice's orders through the `stint` CLI.

use std::{
	path::{Path, PathBuf},
	process::{Child, Command, Stdio},
	time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};
use stint_client::{Client, LeaseRecord, LeaseStatus, OrderStatus};
use stint_e2e::{free_port, node_binary};

/// Eve's registered endpoint on the dev chain: where the CLI fetches results from.
pub const EVE_ENDPOINT_PORT: u16 = 8601;

/// Connects to a node that just opened its RPC port, retrying for 30 s: a node under load may
/// still reset the first websocket handshakes.
pub async fn connect(url: &str) -> Result<Client> {
	let deadline = Instant::now() + Duration::from_secs(30);
	loop {
		match Client::connect(url).await {
			Ok(client) => return Ok(client),
			Err(error) if Instant::now() > deadline => return Err(error.into()),
			Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
		}
	}
}

/// A dev node of its own (development sealing, final at once) and a client on it, for a test
/// that runs Docker jobs.
pub async fn dev_node() -> Result<(stint_e2e::TestNode, Client)> {
	assert!(super::docker_available(), "these tests need a Docker engine");
	let node = stint_e2e::TestNode::dev()?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let client = connect(&node.ws_url()).await?;
	Ok((node, client))
}

/// Eve's worker, started as `stint-worker run`.
pub struct Worker {
	pub child: Child,
	pub log: PathBuf,
	pub config: PathBuf,
}

impl Worker {
	pub fn start(config: &Path, crash_at: Option<&str>) -> Result<Self> {
		Self::start_with(config, crash_at, &[])
	}

	/// Started with more arguments to `run` (`--adopt <lease>`).
	pub fn start_with(config: &Path, crash_at: Option<&str>, args: &[&str]) -> Result<Self> {
		Self::start_with_env(config, crash_at, args, &[])
	}

	/// Started with more arguments and environment variables (`DOCKER_HOST`).
	pub fn start_with_env(
		config: &Path,
		crash_at: Option<&str>,
		args: &[&str],
		env: &[(&str, &str)],
	) -> Result<Self> {
		Self::spawn(config, crash_at, args, env, None)
	}

	/// Started with its open-file limit at `nofile`, soft and hard (so the worker cannot raise
	/// it): what a service manager's default gives a daemon.
	pub fn start_with_open_files(config: &Path, nofile: u64) -> Result<Self> {
		Self::spawn(config, None, &[], &[], Some(nofile))
	}

	fn spawn(
		config: &Path,
		crash_at: Option<&str>,
		args: &[&str],
		env: &[(&str, &str)],
		nofile: Option<u64>,
	) -> Result<Self> {
		let log = config.with_extension(format!("{}.log", stint_worker::unix_ms()));
		let worker = env!("CARGO_BIN_EXE_stint-worker");
		// util-linux's `prlimit` sets the limit and runs the worker in its place (same pid).
		let mut command = match nofile {
			Some(nofile) => {
				let mut command = Command::new("prlimit");
				command.arg(format!("--nofile={nofile}:{nofile}")).arg(worker);
				command
			}
			None => Command::new(worker),
		};
		command
			.args(["run", "--config"])
			.arg(config)
			.args(args)
			.envs(env.iter().copied())
			.stdout(Stdio::null())
			.stderr(std::fs::File::create(&log)?);
		if let Some(point) = crash_at {
			command.env("STINT_WORKER_CRASH_AT", point);
		}
		Ok(Self { child: command.spawn()?, log, config: config.to_path_buf() })
	}

	pub fn log(&self) -> String {
		std::fs::read_to_string(&self.log).unwrap_or_default()
	}

	/// Waits until the log has `text`.
	pub async fn wait_log(&self, text: &str, timeout: Duration) -> Result<()> {
		let deadline = Instant::now() + timeout;
		while !self.log().contains(text) {
			if Instant::now() > deadline {
				bail!("the worker never logged {text:?}:\n{}", self.log());
			}
			tokio::time::sleep(Duration::from_millis(100)).await;
		}
		Ok(())
	}

	/// The journal's instance id, which every container of this worker carries as a label.
	pub async fn instance(&self) -> Result<String> {
		self.wait_log("instance ", Duration::from_secs(30)).await?;
		let log = self.log();
		let id = log
			.split("instance ")
			.nth(1)
			.and_then(|rest| rest.split_whitespace().next())
			.context("an instance id in the log")?;
		Ok(id.trim_end_matches(')').to_string())
	}

	/// Waits for the process to end by itself.
	pub fn wait_exit(&mut self, timeout: Duration) -> Result<std::process::ExitStatus> {
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

	pub fn kill(&mut self) {
		let _ = self.child.kill();
		let _ = self.child.wait();
	}

	/// The journal, as `journal export` prints it (the worker must be stopped).
	pub fn export(&self) -> Result<serde_json::Value> {
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
		self.kill();
	}
}

/// Stops the worker, returns its journal, and removes the containers it made.
pub fn stop(mut worker: Worker) -> Result<serde_json::Value> {
	worker.kill();
	let journal = worker.export()?;
	if let Some(instance) = journal["meta"]["instance"].as_str() {
		remove_containers(instance);
	}
	Ok(journal)
}

/// Removes every container of the worker journal `instance`.
pub fn remove_containers(instance: &str) {
	let _ = Command::new("sh")
		.arg("-c")
		.arg(format!(
			"docker rm -f $(docker ps -aq --filter label=stint.instance={instance}) >/dev/null 2>&1"
		))
		.status();
}

/// The state (`running`, `paused`, `exited`) of the container of `lease` of worker `instance`.
pub fn container_state(instance: &str, lease: u64) -> String {
	let out = Command::new("docker")
		.args(["ps", "-a", "--format", "{{.State}}"])
		.args(["--filter", &format!("label=stint.instance={instance}")])
		.args(["--filter", &format!("label=stint.lease={lease}")])
		.output()
		.expect("docker runs");
	String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// What a test's worker is set up with.
pub struct Setup {
	pub api_port: u16,
	/// STINT per GPU per block.
	pub price: &'static str,
	pub stall_secs: u64,
	pub max_failures: u32,
	/// Lets orders' inputs come from loopback (the tests serve them there).
	pub allow_private_inputs: bool,
	/// A URL where no node listens comes first in `[chain] urls`: the worker fails over.
	pub dead_url_first: bool,
	/// `[limits] log_bytes`: how much of each stream is kept.
	pub log_bytes: u64,
	/// The worker key: Eve's worker (`//Eve//stash`) unless a test runs Ferdie's.
	pub key: &'static str,
	/// `[limits] outputs_filesystem`: off but where a test needs it, since the mounts outlive
	/// the worker (`common::unmount_under` clears them).
	pub outputs_filesystem: bool,
}

impl Default for Setup {
	fn default() -> Self {
		Self {
			api_port: 0,
			price: "0.01",
			stall_secs: 30,
			max_failures: 3,
			allow_private_inputs: false,
			dead_url_first: false,
			log_bytes: 16 << 20,
			key: "//Eve//stash",
			outputs_filesystem: false,
		}
	}
}

/// Writes the `worker.toml` of Eve's worker (or the one `setup.key` names) into `dir`.
pub fn write_config(dir: &Path, url: &str, setup: &Setup) -> Result<PathBuf> {
	let path = dir.join("worker.toml");
	let api_port = if setup.api_port == 0 { free_port()? } else { setup.api_port };
	let urls = match setup.dead_url_first {
		true => format!("\"ws://127.0.0.1:{}\", \"{url}\"", free_port()?),
		false => format!("\"{url}\""),
	};
	let config = format!(
		r#"
[chain]
urls = [{urls}]
stall_secs = {stall}
max_failures = {failures}

[worker]
key = "{key}"
data_dir = "{data}"
gpus = "off"
allow_private_inputs = {private}

[api]
listen = "127.0.0.1:{api_port}"

[metrics]
listen = "127.0.0.1:{metrics}"

[bidding]
price = "{price}"
settle_every = 5

[limits]
stop_grace_secs = 1
log_bytes = {log_bytes}
outputs_filesystem = {outputs_filesystem}
"#,
		data = dir.join("data").display(),
		metrics = free_port()?,
		stall = setup.stall_secs,
		failures = setup.max_failures,
		price = setup.price,
		private = setup.allow_private_inputs,
		log_bytes = setup.log_bytes,
		key = setup.key,
		outputs_filesystem = setup.outputs_filesystem,
	);
	std::fs::write(&path, config)?;
	Ok(path)
}

/// Runs the `stint` CLI; its stdout.
pub fn stint(url: &str, key: &str, args: &[&str]) -> Result<String> {
	Ok(stint_both(url, key, args)?.0)
}

/// Runs the `stint` CLI; its stdout and stderr.
pub fn stint_both(url: &str, key: &str, args: &[&str]) -> Result<(String, String)> {
	let cli = node_binary()?.with_file_name("stint");
	let out = Command::new(&cli).args(["--url", url, "--key", key]).args(args).output()?;
	let (stdout, stderr) = (
		String::from_utf8_lossy(&out.stdout).into_owned(),
		String::from_utf8_lossy(&out.stderr).into_owned(),
	);
	if !out.status.success() {
		bail!("stint {}: {stdout}{stderr}", args.join(" "));
	}
	Ok((stdout, stderr))
}

/// What the worker of `config` reports on its metrics endpoint.
pub fn metrics(config: &Path) -> Result<String> {
	let text = std::fs::read_to_string(config)?;
	let listen = text
		.split("[metrics]")
		.nth(1)
		.and_then(|rest| rest.split('"').nth(1))
		.context("a metrics listen address in the config")?;
	Ok(ureq::get(&format!("http://{listen}/metrics")).call()?.into_string()?)
}

/// The worker's metrics once they hold every one of `lines`, or an error naming the first
/// missing after 30 s: the worker counts a submission when it sees it included, which may be a
/// moment after the chain shows its effect to a client.
pub fn metrics_with(config: &Path, lines: &[&str]) -> Result<String> {
	let deadline = Instant::now() + Duration::from_secs(30);
	loop {
		let text = metrics(config)?;
		match lines.iter().find(|line| !text.contains(*line)) {
			None => return Ok(text),
			Some(line) if Instant::now() > deadline => bail!("no {line:?} in:\n{text}"),
			Some(_) => std::thread::sleep(Duration::from_millis(200)),
		}
	}
}

/// The journal entry of `lease` in an exported journal.
pub fn journal_entry(journal: &serde_json::Value, lease: u64) -> serde_json::Value {
	journal["leases"]
		.as_array()
		.and_then(|all| all.iter().find(|e| e["lease"] == lease).cloned())
		.unwrap_or_default()
}

/// An order of Alice's for one of Eve's GPUs.
pub struct Order<'a> {
	/// `None`: the test job image.
	pub image: Option<&'a str>,
	pub command: &'a [&'a str],
	/// `None`: open-ended.
	pub duration: Option<u32>,
	pub max_price: &'a str,
	pub deposit: &'a str,
	/// Each input's URI and the blake2-256 of its content.
	pub inputs: &'a [(&'a str, [u8; 32])],
	pub max_output_bytes: u64,
	pub bid_window: u32,
	/// The region the GPUs must be in: Eve's (`DE`) unless a test lets Ferdie's (`US`) serve.
	pub region: Option<&'a str>,
	/// The job promises the same outputs for the same inputs: its result may be disputed.
	pub deterministic: bool,
	/// How many providers run it.
	pub replicas: u32,
	/// The chain accepts the best bid at the close (else the buyer accepts by hand).
	pub auto_accept: bool,
}

impl Default for Order<'_> {
	fn default() -> Self {
		Self {
			image: None,
			command: &[],
			duration: Some(200),
			max_price: "0.05",
			deposit: "10",
			inputs: &[],
			max_output_bytes: 1 << 20,
			bid_window: 8,
			region: Some("DE"),
			deterministic: false,
			replicas: 1,
			auto_accept: true,
		}
	}
}

/// Posts `order` with the CLI; returns its id.
pub fn post_order(dir: &Path, url: &str, order: &Order) -> Result<u64> {
	let words: Vec<String> = order.command.iter().map(|w| format!("{w:?}")).collect();
	let duration = order.duration.map(|d| format!("duration_blocks = {d}")).unwrap_or_default();
	let inputs: Vec<String> = order
		.inputs
		.iter()
		.map(|(uri, hash)| format!("{{ uri = {uri:?}, content_hash = \"0x{}\" }}", hex(hash)))
		.collect();
	let job = format!(
		r#"
[job]
image = "{image}"
command = [{words}]
inputs = [{inputs}]
max_output_bytes = {max_output_bytes}

[gpus]
count = 1
{region}

[terms]
max_price_per_block = "{price}"
{duration}
bid_window_blocks = {bid_window}
auto_accept = {auto_accept}
deterministic = {deterministic}
replicas = {replicas}
deposit = "{deposit}"
"#,
		region = order.region.map(|r| format!("region = {r:?}")).unwrap_or_default(),
		deterministic = order.deterministic,
		replicas = order.replicas,
		auto_accept = order.auto_accept,
		image = order.image.map(str::to_string).unwrap_or_else(super::job_image),
		words = words.join(", "),
		price = order.max_price,
		deposit = order.deposit,
		inputs = inputs.join(", "),
		max_output_bytes = order.max_output_bytes,
		bid_window = order.bid_window,
	);
	let file = dir.join(format!("job-{}.toml", stint_worker::unix_ms()));
	std::fs::write(&file, job)?;
	let out = stint(url, "//Alice", &["order", "create", file.to_str().unwrap()])?;
	out.split_whitespace()
		.skip_while(|w| *w != "order")
		.nth(1)
		.and_then(|n| n.parse().ok())
		.with_context(|| format!("no order id in {out:?}"))
}

/// Waits until `order` is a lease; its id.
pub async fn lease_of(
	client: &Client,
	order: u64,
	timeout: Duration,
	worker: &Worker,
) -> Result<u64> {
	let deadline = Instant::now() + timeout;
	loop {
		if let Some(record) = client.order(order).await? {
			if let OrderStatus::Leased { lease } = record.status {
				return Ok(lease);
			}
		}
		if Instant::now() > deadline {
			bail!("order {order} was not leased in time:\n{}", worker.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
}

/// Waits until `lease` satisfies `done`; the lease.
pub async fn wait_lease(
	client: &Client,
	lease: u64,
	timeout: Duration,
	worker: &Worker,
	done: impl Fn(&LeaseRecord) -> bool,
) -> Result<LeaseRecord> {
	let deadline = Instant::now() + timeout;
	loop {
		let record = client.lease(lease).await?.context("the lease")?;
		if done(&record) {
			return Ok(record);
		}
		if Instant::now() > deadline {
			bail!("lease {lease} is {:?}:\n{}", record.status, worker.log());
		}
		tokio::time::sleep(Duration::from_millis(250)).await;
	}
}

/// Whether a lease is still live.
pub fn live(record: &LeaseRecord) -> bool {
	matches!(
		record.status,
		LeaseStatus::AwaitingAck | LeaseStatus::Running | LeaseStatus::Suspended
	)
}

/// Waits until `order` became a lease and the lease is no longer live.
pub async fn lease_result(
	client: &Client,
	order: u64,
	timeout: Duration,
	worker: &Worker,
) -> Result<(u64, LeaseRecord)> {
	let lease = lease_of(client, order, timeout, worker).await?;
	let record = wait_lease(client, lease, timeout, worker, |r| !live(r)).await?;
	Ok((lease, record))
}

/// Lower-case hex, no prefix.
pub fn hex(bytes: &[u8]) -> String {
	bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// In blocks `from..=to`: the `ResultSubmitted` events for `lease`, and the `submit_result`
/// extrinsics that name it (whether they succeeded or not).
pub async fn results_on_chain(
	client: &Client,
	lease: u64,
	from: u64,
	to: u64,
) -> Result<(usize, usize)> {
	use stint_client::runtime::leases::{calls::SubmitResult, events::ResultSubmitted};
	let (mut events, mut calls) = (0, 0);
	for number in from..=to {
		let at = client.api().at_block(number).await?;
		for event in at.events().fetch().await?.find::<ResultSubmitted>() {
			events += usize::from(event?.lease == lease);
		}
		for call in at.extrinsics().fetch().await?.find::<SubmitResult>() {
			calls += usize::from(call?.lease == lease);
		}
	}
	Ok((events, calls))
}
