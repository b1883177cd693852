//! A harness that starts a real `stint-node` as a child process on free loopback ports and stops
//! it when dropped, including when a test panics, and when the test process itself ends (a
//! watchdog kills a node whose test process is gone, so a node shared by a test binary never
//! outlives it).
//!
//! Most tests run against the node's development sealing (`--dev-block-time`): the same runtime,
//! a block every [`TEST_BLOCK_MS`] milliseconds, final at once. Tests of consensus itself start
//! it with real Aura and GRANDPA ([`TestNode::dev_aura`]).

use std::{
	fs::File,
	net::{TcpListener, TcpStream},
	path::{Path, PathBuf},
	process::{Child, Command, Stdio},
	sync::{Mutex, OnceLock},
	time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};
use subxt::{OnlineClient, PolkadotConfig};

/// The client configuration that matches Stint's runtime (MultiAddress, MultiSignature, u128).
pub type StintConfig = PolkadotConfig;
/// A connected client.
pub type Client = OnlineClient<StintConfig>;

/// Milliseconds between the blocks of a test node (`$STINT_TEST_BLOCK_MS`, default 250).
pub fn test_block_ms() -> u64 {
	std::env::var("STINT_TEST_BLOCK_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(TEST_BLOCK_MS)
}

/// The default block time of test nodes, in milliseconds.
pub const TEST_BLOCK_MS: u64 = 250;

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

/// A port on 127.0.0.1 that was free a moment ago, and that no other caller in this process
/// gets.
///
/// It is chosen below the kernel's ephemeral range (`ip_local_port_range`, 32768–60999 by
/// default), never from it: between the choice and the child's own bind, any process's outbound
/// connection may take an ephemeral port (a worker's Docker or RPC socket took one once, and the
/// next worker could not serve its outputs API). Each process starts at its own offset in the
/// range, so test binaries and a dev chain beside them rarely meet, and a port found taken is
/// skipped.
pub fn free_port() -> Result<u16> {
	use std::sync::atomic::{AtomicU32, Ordering};
	const FIRST: u32 = 15_000;
	const SPAN: u32 = 17_000;
	static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
	let _ = NEXT.compare_exchange(
		u32::MAX,
		std::process::id().wrapping_mul(7_919) % SPAN,
		Ordering::SeqCst,
		Ordering::SeqCst,
	);
	for _ in 0..SPAN {
		let port = (FIRST + NEXT.fetch_add(1, Ordering::SeqCst) % SPAN) as u16;
		// Free on loopback and on every address (a node may listen on either).
		// Free on loopback and on every address (a node may listen on either), tried one after
		// the other: the first listener is closed before the second binds.
		let free = |address: &str| TcpListener::bind((address, port)).is_ok();
		if free("127.0.0.1") && free("0.0.0.0") {
			return Ok(port);
		}
	}
	bail!("no free port between {FIRST} and {}", FIRST + SPAN)
}

/// A running node. Dropping it kills the process.
pub struct TestNode {
	child: Mutex<Child>,
	args: Vec<String>,
	rpc_port: u16,
	p2p_port: u16,
	log_path: PathBuf,
	base: tempfile::TempDir,
}

impl TestNode {
	/// Starts `stint-node --dev` with development sealing (a block every [`test_block_ms`],
	/// final at once), a fresh database and free ports.
	pub fn dev() -> Result<Self> {
		let ms = test_block_ms().to_string();
		Self::start(&["--dev", "--dev-block-time", &ms])
	}

	/// Starts `stint-node --dev` with real Aura (6-second slots) and GRANDPA: for tests of
	/// consensus itself.
	pub fn dev_aura() -> Result<Self> {
		Self::start(&["--dev"])
	}

	/// The development node this test binary shares: started by the first test that asks, ready
	/// (its RPC answers) when returned, killed when the test binary ends. Tests that share it
	/// must not depend on each other's state: each uses its own accounts or reads what it made.
	pub fn shared() -> Result<&'static TestNode> {
		static SHARED: OnceLock<std::result::Result<TestNode, String>> = OnceLock::new();
		let node = SHARED.get_or_init(|| {
			let node = Self::dev().map_err(|e| format!("{e:#}"))?;
			node.wait_for_rpc(Duration::from_secs(90)).map_err(|e| format!("{e:#}"))?;
			Ok(node)
		});
		node.as_ref().map_err(|e| anyhow::anyhow!("the shared node did not start: {e}"))
	}

	/// Starts `stint-node` with `args` (plus a fresh base path and free loopback ports).
	pub fn start(args: &[&str]) -> Result<Self> {
		let base = tempfile::tempdir().context("creating the node's base path")?;
		let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
		let (rpc_port, p2p_port) = (free_port()?, free_port()?);
		let log_path = base.path().join("node.log");
		let child = Self::spawn(&args, base.path(), rpc_port, p2p_port, &log_path)?;
		Ok(Self { child: Mutex::new(child), args, rpc_port, p2p_port, log_path, base })
	}

	/// The node process, on base path `base`, these ports, logging to `log_path`.
	fn spawn(
		args: &[String],
		base: &Path,
		rpc_port: u16,
		p2p_port: u16,
		log_path: &Path,
	) -> Result<Child> {
		let log =
			File::options().create(true).append(true).open(log_path).context("the node log")?;
		let child = Command::new(node_binary()?)
			.args(args)
			.arg("--base-path")
			.arg(base.join("data"))
			.args(["--rpc-port", &rpc_port.to_string()])
			.args(["--listen-addr", &format!("/ip4/127.0.0.1/tcp/{p2p_port}")])
			.args(["--no-prometheus", "--no-telemetry", "--no-mdns"])
			.stdout(Stdio::null())
			.stderr(log)
			.spawn()
			.context("starting stint-node")?;
		watch_over(child.id());
		Ok(child)
	}

	/// Kills the node, waits `down`, and starts it again on the same database and ports (a node
	/// restarted under its clients).
	pub fn restart(&self, down: Duration) -> Result<()> {
		let mut child = self.child.lock().expect("the node's handle");
		child.kill()?;
		child.wait()?;
		std::thread::sleep(down);
		let (args, base) = (&self.args, self.base.path());
		*child = Self::spawn(args, base, self.rpc_port, self.p2p_port, &self.log_path)?;
		Ok(())
	}

	/// The node's process id (to freeze it with SIGSTOP, say).
	pub fn pid(&self) -> u32 {
		self.child.lock().expect("the node's handle").id()
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

	fn exited(&self) -> Result<()> {
		let status = self.child.lock().expect("the node's handle").try_wait()?;
		if let Some(status) = status {
			bail!("stint-node exited with {status}:\n{}", self.log_tail(40));
		}
		Ok(())
	}

	/// Waits until the RPC port accepts connections, without an async runtime.
	pub fn wait_for_rpc(&self, timeout: Duration) -> Result<()> {
		let deadline = Instant::now() + timeout;
		loop {
			self.exited()?;
			if TcpStream::connect(("127.0.0.1", self.rpc_port)).is_ok() {
				return Ok(());
			}
			if Instant::now() > deadline {
				bail!("no RPC at {} after {timeout:?}\n{}", self.ws_url(), self.log_tail(40));
			}
			std::thread::sleep(Duration::from_millis(100));
		}
	}

	/// Connects a client, retrying until the RPC server answers or `timeout` passes.
	pub async fn client(&self, timeout: Duration) -> Result<Client> {
		let deadline = Instant::now() + timeout;
		loop {
			self.exited()?;
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
		let child = self.child.get_mut().expect("the node's handle");
		let _ = child.kill();
		let _ = child.wait();
	}
}

/// Kills process `pid` once this test process is gone (statics are never dropped, and a panic
/// or a killed test run leaves no `Drop` to run): a shell that polls both every half second.
fn watch_over(pid: u32) {
	let script = format!(
		"while kill -0 {parent} 2>/dev/null && kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
		 kill -9 {pid} 2>/dev/null",
		parent = std::process::id()
	);
	let _ = Command::new("sh")
		.args(["-c", &script])
		.stdin(Stdio::null())
		.stdout(Stdio::null())
		.stderr(Stdio::null())
		.spawn();
}

/// The C source of a stand-in NVIDIA driver library (see `stand-in/libcuda.c`): two GPUs, an
/// `NVIDIA H200` (UUID bytes 0..16) and an `NVIDIA H100 PCIe` (16..32), driver API 12080 (or
/// `$STUB_CUDA_VERSION`), that loads PTX as a driver would and runs the self-test's kernel on the
/// host.
pub const CUDA_STAND_IN: &str = include_str!("../stand-in/libcuda.c");

/// The UUID the stand-in driver reports for the device at `ordinal`.
pub fn stand_in_uuid(ordinal: u8) -> String {
	stint_probe::format_uuid(&std::array::from_fn(|i| 16 * ordinal + i as u8))
}

/// Compiles the stand-in driver into `dir/libcuda.so` with the system C compiler, for tests on
/// machines without a GPU. A process started with `LD_LIBRARY_PATH=dir` loads it through the
/// same dlopen path as the real driver; `STUB_CUDA=no-device` makes it report no device,
/// `STUB_CUDA=bad-1` makes GPU 1 compute wrong.
pub fn build_cuda_stand_in(dir: &Path) -> Result<()> {
	let source = dir.join("libcuda.c");
	std::fs::write(&source, CUDA_STAND_IN)?;
	let status = Command::new("cc")
		.args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"])
		.arg(dir.join("libcuda.so"))
		.arg(&source)
		.status()
		.context("running the C compiler (cc)")?;
	if !status.success() {
		bail!("cc failed to build the stand-in driver");
	}
	Ok(())
}

/// NVIDIA's NVRTC library and `ptxas` (from PyPI, no GPU needed), where `scripts/setup.sh` put
/// them (`$STINT_CUDA_TOOLS`, set by `scripts/env.sh`).
pub struct CudaTools {
	/// The folder of `libnvrtc.so.12`, for `LD_LIBRARY_PATH`.
	pub nvrtc_dir: PathBuf,
	pub ptxas: PathBuf,
}

/// The CUDA tools, or `None` when the tests run without `scripts/env.sh` (said on stderr); an
/// error if they should be there and are not.
pub fn cuda_tools() -> Result<Option<CudaTools>> {
	let Some(root) = std::env::var_os("STINT_CUDA_TOOLS").map(PathBuf::from) else {
		eprintln!("STINT_CUDA_TOOLS is not set (run the tests with scripts/test.sh): skipped");
		return Ok(None);
	};
	let tools = CudaTools {
		nvrtc_dir: root.join("nvidia/cuda_nvrtc/lib"),
		ptxas: root.join("nvidia/cuda_nvcc/bin/ptxas"),
	};
	if !tools.nvrtc_dir.join("libnvrtc.so.12").is_file() || !tools.ptxas.is_file() {
		bail!("NVRTC or ptxas missing under {}: run scripts/setup.sh", root.display());
	}
	Ok(Some(tools))
}
