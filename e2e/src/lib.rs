//! A harness that starts a real `stint-node` as a child process on free loopback ports and stops
//! it when dropped, including when a test panics.

use std::{
	fs::File,
	net::TcpListener,
	path::{Path, PathBuf},
	process::{Child, Command, Stdio},
	time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};
use subxt::{OnlineClient, PolkadotConfig};

/// The client configuration that matches Stint's runtime (MultiAddress, MultiSignature, u128).
pub type StintConfig = PolkadotConfig;
/// A connected client.
pub type Client = OnlineClient<StintConfig>;

/// Where the `stint-node` binary is: `$STINT_NODE_BIN`, else beside the running test binary
/// in cargo's target directory (`target/<profile>/deps/<test>` → `target/<profile>/stint-node`).
pub fn node_binary() -> Result<PathBuf> {
	if let Some(path) = std::env::var_os("STINT_NODE_BIN") {
		let path = PathBuf::from(path);
		if path.is_file() {
			return Ok(path);
		}
		bail!("STINT_NODE_BIN={} does not exist; build it with scripts/build.sh", path.display());
	}
	let exe = std::env::current_exe().context("locating the test binary")?;
	let profile_dir = exe
		.parent()
		.and_then(Path::parent)
		.context("the test binary is not inside cargo's target directory")?;
	let path = profile_dir.join("stint-node");
	if !path.is_file() {
		bail!(
			"{} not found: build the node first (`cargo build --release --workspace`)",
			path.display()
		);
	}
	Ok(path)
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16> {
	let listener = TcpListener::bind("127.0.0.1:0").context("binding an ephemeral port")?;
	Ok(listener.local_addr()?.port())
}

/// A running node. Dropping it kills the process.
pub struct TestNode {
	child: Child,
	rpc_port: u16,
	log_path: PathBuf,
	_base: tempfile::TempDir,
}

impl TestNode {
	/// Starts `stint-node --dev` with a fresh database on free ports.
	pub fn dev() -> Result<Self> {
		Self::start(&["--dev"])
	}

	/// Starts `stint-node` with `args` (plus a fresh base path and free loopback ports).
	pub fn start(args: &[&str]) -> Result<Self> {
		let base = tempfile::tempdir().context("creating the node's base path")?;
		let log_path = base.path().join("node.log");
		let log = File::create(&log_path).context("creating the node log")?;
		let rpc_port = free_port()?;
		let p2p_port = free_port()?;
		let child = Command::new(node_binary()?)
			.args(args)
			.arg("--base-path")
			.arg(base.path().join("data"))
			.args(["--rpc-port", &rpc_port.to_string()])
			.args(["--listen-addr", &format!("/ip4/127.0.0.1/tcp/{p2p_port}")])
			.args(["--no-prometheus", "--no-telemetry", "--no-mdns"])
			.stdout(Stdio::null())
			.stderr(log)
			.spawn()
			.context("starting stint-node")?;
		Ok(Self { child, rpc_port, log_path, _base: base })
	}

	/// The node's WebSocket RPC endpoint.
	pub fn ws_url(&self) -> String {
		format!("ws://127.0.0.1:{}", self.rpc_port)
	}

	/// The last lines the node logged, for failure messages.
	pub fn log_tail(&self, lines: usize) -> String {
		let log = std::fs::read_to_string(&self.log_path).unwrap_or_default();
		let all: Vec<&str> = log.lines().collect();
		all[all.len().saturating_sub(lines)..].join("\n")
	}

	/// Connects a client, retrying until the RPC server answers or `timeout` passes.
	pub async fn client(&mut self, timeout: Duration) -> Result<Client> {
		let deadline = Instant::now() + timeout;
		loop {
			if let Some(status) = self.child.try_wait()? {
				bail!("stint-node exited with {status}:\n{}", self.log_tail(40));
			}
			match Client::from_insecure_url(self.ws_url()).await {
				Ok(client) => return Ok(client),
				Err(e) if Instant::now() > deadline => bail!(
					"no RPC at {} after {timeout:?}: {e}\n{}",
					self.ws_url(),
					self.log_tail(40)
				),
				Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
			}
		}
	}
}

impl Drop for TestNode {
	fn drop(&mut self) {
		let _ = self.child.kill();
		let _ = self.child.wait();
	}
}

/// The C source of a stand-in NVIDIA driver library (see `stand-in/libcuda.c`): two GPUs, an
/// `NVIDIA H200` (UUID bytes 0..16) and an `NVIDIA H100 PCIe` (16..32), driver API 12080.
pub const CUDA_STAND_IN: &str = include_str!("../stand-in/libcuda.c");

/// The UUID the stand-in driver reports for the device at `ordinal`.
pub fn stand_in_uuid(ordinal: u8) -> String {
	stint_probe::format_uuid(&std::array::from_fn(|i| 16 * ordinal + i as u8))
}

/// Compiles the stand-in driver into `dir/libcuda.so` with the system C compiler, for tests on
/// machines without a GPU. A process started with `LD_LIBRARY_PATH=dir` loads it through the
/// same dlopen path as the real driver; `STUB_CUDA=no-device` makes it report no device.
pub fn build_cuda_stand_in(dir: &Path) -> Result<()> {
	let source = dir.join("libcuda.c");
	std::fs::write(&source, CUDA_STAND_IN)?;
	let status = Command::new("cc")
		.args(["-shared", "-fPIC", "-o"])
		.arg(dir.join("libcuda.so"))
		.arg(&source)
		.status()
		.context("running the C compiler (cc)")?;
	if !status.success() {
		bail!("cc failed to build the stand-in driver");
	}
	Ok(())
}
