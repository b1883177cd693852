//! The `stint` binary against a real dev node: each command's happy path and its main failure,
//! checked by reading the chain afterwards through the client, and the exit codes docs/buyer.md
//! promises (3 no connection, 4 bad key, 5 bad input, 6 refused by the chain, 7 not found).

use std::{path::Path, process::Command, time::Duration};

use anyhow::{Context, Result};
use stint_client::{parse_account, Client, LeaseStatus, OrderStatus};
use stint_e2e::TestNode;

const STARTUP: Duration = Duration::from_secs(90);
const STINT: u128 = 1_000_000_000_000;
const EVE: &str = "5HGjWAeFDfFCWPsjFQdVV2Msvz2XtMktvgocEZcCj68kUMaw";

/// What a run of `stint` left: its exit code and output.
struct Run {
	code: i32,
	stdout: String,
	stderr: String,
}

/// Runs `stint` with extra environment variables.
fn stint_in(url: &str, args: &[&str], env: &[(&str, &Path)]) -> Result<Run> {
	let output = Command::new(env!("CARGO_BIN_EXE_stint"))
		.arg("--url")
		.arg(url)
		.args(args)
		.envs(env.iter().copied())
		.output()
		.context("running stint")?;
	Ok(Run {
		code: output.status.code().unwrap_or(-1),
		stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
		stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
	})
}

/// Runs `stint` and insists on exit code `code`.
fn expect(url: &str, args: &[&str], code: i32) -> Result<Run> {
	expect_in(url, args, &[], code)
}

/// Runs `stint` with extra environment variables and insists on exit code `code`.
fn expect_in(url: &str, args: &[&str], env: &[(&str, &Path)], code: i32) -> Result<Run> {
	let run = stint_in(url, args, env)?;
	assert_eq!(
		run.code, code,
		"stint {args:?} exited {} (expected {code})\nstdout: {}\nstderr: {}",
		run.code, run.stdout, run.stderr
	);
	Ok(run)
}

fn job_file(dir: &Path, name: &str, auto_accept: bool, duration: Option<u32>) -> Result<String> {
	let duration = duration.map(|d| format!("duration_blocks = {d}\n")).unwrap_or_default();
	let text = format!(
		r#"[job]
image = "ghcr.io/acme/train@sha256:5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592"
command = ["python", "train.py"]

[gpus]
count = 1
min_vram_mib = 80000
min_compute_capability = "9.0"
region = "DE"

[terms]
max_price_per_block = "1"
{duration}bid_window_blocks = 30
auto_accept = {auto_accept}
deposit = "100"
"#
	);
	let path = dir.join(name);
	std::fs::write(&path, text)?;
	Ok(path.display().to_string())
}

#[test]
fn without_a_node_the_cli_says_so_and_exits_3() -> Result<()> {
	let run = expect("ws://127.0.0.1:1", &["status"], 3)?;
	assert!(run.stderr.contains("cannot connect to ws://127.0.0.1:1"), "{}", run.stderr);
	assert!(!run.stderr.contains("panicked"));
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn buyer_and_provider_commands_against_a_dev_node() -> Result<()> {
	let node = TestNode::dev()?;
	let client_ready = node.client(STARTUP).await?;
	drop(client_ready);
	let url = node.ws_url();
	let client = Client::connect(&url).await?;
	let dir = tempfile::tempdir()?;

	// Status, plain and JSON.
	let run = expect(&url, &["status"], 0)?;
	assert!(run.stdout.contains("finalized block"), "{}", run.stdout);
	let run = expect(&url, &["--json", "status"], 0)?;
	let status: serde_json::Value = serde_json::from_str(&run.stdout)?;
	assert_eq!(status["chain"], "Stint Development");

	// Bad key, bad job file, nothing signed.
	let job = job_file(dir.path(), "job.toml", false, None)?;
	let run = expect(&url, &["--key", "not a key", "order", "create", &job], 4)?;
	assert!(run.stderr.contains("bad key"), "{}", run.stderr);
	let bad = dir.path().join("bad.toml");
	std::fs::write(&bad, std::fs::read_to_string(&job)?.replace("\"DE\"", "\"Germany\""))?;
	let run = expect(&url, &["--key", "//Alice", "order", "create", bad.to_str().unwrap()], 5)?;
	assert!(run.stderr.contains("gpus.region"), "{}", run.stderr);
	assert!(client.order(0).await?.is_none(), "nothing was ordered");

	// Alice orders (open-ended, she accepts by hand).
	let run = expect(&url, &["--key", "//Alice", "order", "create", &job], 0)?;
	assert!(run.stdout.contains("order 0 created"), "{}", run.stdout);
	let order = client.order(0).await?.context("order 0 on chain")?;
	assert_eq!(order.deposit, 100 * STINT);
	let run = expect(&url, &["--json", "order", "list"], 0)?;
	let listed: serde_json::Value = serde_json::from_str(&run.stdout)?;
	assert_eq!(listed[0]["order"], 0);
	expect(&url, &["order", "show", "7"], 7)?;

	// Eve's bid over the ceiling is refused by name; at 0.5 it stands.
	let run = expect(&url, &["--key", "//Eve", "bid", "place", "0", "--price", "2"], 6)?;
	assert!(run.stderr.contains("Market.PriceAboveCeiling"), "{}", run.stderr);
	let run = expect(&url, &["--key", "//Eve", "bid", "servable"], 0)?;
	assert!(run.stdout.contains("order 0: 0x"), "{}", run.stdout);
	expect(&url, &["--key", "//Eve", "bid", "place", "0", "--price", "0.5"], 0)?;
	let bids = client.bids(0).await?;
	assert_eq!(bids.len(), 1);
	assert_eq!(bids[0].1.price_per_block, STINT / 2);
	let run = expect(&url, &["order", "show", "0"], 0)?;
	assert!(run.stdout.contains("0.5 STINT by"), "{}", run.stdout);

	// Only the buyer accepts; then the lease exists and Eve acknowledges it.
	let run = expect(&url, &["--key", "//Bob", "order", "accept", "0", EVE], 6)?;
	assert!(run.stderr.contains("Market.NotBuyer"), "{}", run.stderr);
	// The CLI accepts the bid as it stands, and not above the price Alice names.
	let run =
		expect(&url, &["--key", "//Alice", "order", "accept", "0", EVE, "--max-price", "0.4"], 5)?;
	assert!(run.stderr.contains("above your --max-price"), "{}", run.stderr);
	expect(&url, &["--key", "//Alice", "order", "accept", "0", EVE], 0)?;
	let order = client.order(0).await?.context("order 0")?;
	assert!(matches!(order.status, OrderStatus::Leased { lease: 0 }));
	let eve = parse_account(EVE)?;
	assert_eq!(client.leases_of(&eve).await?.len(), 1);
	let run = expect(&url, &["--key", "//Eve", "lease", "list"], 0)?;
	assert!(run.stdout.contains("AwaitingAck"), "{}", run.stdout);
	expect(&url, &["--key", "//Alice", "lease", "ack", "0"], 6)?;
	expect(&url, &["--key", "//Eve", "lease", "ack", "0"], 0)?;
	assert!(matches!(client.lease(0).await?.context("lease 0")?.status, LeaseStatus::Running));

	// The stream: shown, topped up by Bob.
	let stream = client.lease(0).await?.context("lease 0")?.stream;
	let before = client.stream(stream).await?.context("stream open")?.remaining;
	expect(&url, &["stream", "show", &stream.to_string()], 0)?;
	expect(&url, &["--key", "//Bob", "stream", "top-up", &stream.to_string(), "5"], 0)?;
	let after = client.stream(stream).await?.context("stream open")?.remaining;
	assert!(after > before, "the top-up added escrow ({before} → {after})");
	expect(&url, &["--key", "//Bob", "stream", "top-up", &stream.to_string(), "five"], 5)?;

	// A no-show report on a running lease is refused; Alice closes it.
	let run = expect(&url, &["--key", "//Bob", "report", "no-show", "0"], 6)?;
	assert!(run.stderr.contains("Leases.NotAwaitingAck"), "{}", run.stderr);
	expect(&url, &["--key", "//Alice", "lease", "close", "0"], 0)?;
	assert!(matches!(
		client.lease(0).await?.context("lease 0")?.status,
		LeaseStatus::Terminated { .. }
	));
	assert!(client.leases_of(&eve).await?.is_empty());

	// Alice sees her leases as a buyer.
	let run = expect(&url, &["--key", "//Alice", "lease", "list", "--buyer", "me"], 0)?;
	assert!(run.stdout.contains("Terminated"), "{}", run.stdout);

	// Dave registers from a provider file; a second registration and a bad file are refused.
	let dave_file = dir.path().join("dave.toml");
	let provider = r#"name = "dave-gpus"
endpoint = "http://127.0.0.1:8604"
region = "NL"
worker_key = "//Dave//stash"

[hardware]
cpu_cores = 32
ram_mib = 262144
disk_gib = 2000

[[hardware.gpus]]
model = "NVIDIA L4"
vram_mib = 23034
compute_capability = "8.9"
cuda_driver_version = 13000
uuid = "GPU-dave-0"
"#;
	std::fs::write(&dave_file, provider)?;
	let dave_path = dave_file.to_str().unwrap();
	let run = expect(&url, &["--key", "//Dave", "provider", "register", dave_path], 0)?;
	assert!(run.stdout.contains("Providers.Registered"), "{}", run.stdout);
	let dave = parse_account("5DAAnrj7VHTznn2AWBemMuyBwZWs6FNFjdyVXUeYum3PTXFy")?;
	let record = client.provider(&dave).await?.context("Dave registered")?;
	assert_eq!(record.hardware.gpus.0.len(), 1);
	assert_eq!(record.hardware.gpus.0[0].0.uuid_hash, stint_primitives::device_id("GPU-dave-0"));
	expect(&url, &["--key", "//Dave", "provider", "register", dave_path], 6)?;
	std::fs::write(&dave_file, provider.replace("\"NL\"", "\"Netherlands\""))?;
	let run = expect(&url, &["--key", "//Dave", "provider", "update", dave_path], 5)?;
	assert!(run.stderr.contains("region"), "{}", run.stderr);

	// Bob registers the machine the worker's probe reads: here the stand-in driver's two GPUs.
	// Without a [hardware] section or --probe, or with a driver that sees no GPU (exit 9),
	// nothing is registered.
	let driver = tempfile::tempdir()?;
	stint_e2e::build_cuda_stand_in(driver.path())?;
	let lib = [("LD_LIBRARY_PATH", driver.path())];
	let no_gpu = [("LD_LIBRARY_PATH", driver.path()), ("STUB_CUDA", Path::new("no-device"))];
	let bob_file = dir.path().join("bob.toml");
	std::fs::write(
		&bob_file,
		"name = \"bob-gpus\"\nendpoint = \"http://127.0.0.1:8605\"\nregion = \"FR\"\n\
		 worker_key = \"//Bob//stash\"\n",
	)?;
	let bob_path = bob_file.to_str().unwrap();
	let register = ["--key", "//Bob", "provider", "register", bob_path];
	let run = expect(&url, &register, 5)?;
	assert!(run.stderr.contains("hardware: missing"), "{}", run.stderr);
	let run = expect_in(&url, &[&register[..], &["--probe"]].concat(), &no_gpu, 9)?;
	assert_eq!(run.stderr, "error: probe: the CUDA driver sees no GPU\n");
	let bob = parse_account("5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty")?;
	assert!(client.provider(&bob).await?.is_none(), "nothing registered");
	// A GPU that fails the self-test (the stand-in's GPU 1 computing wrong) is named, and the
	// machine is not registered.
	let bad_gpu = [("LD_LIBRARY_PATH", driver.path()), ("STUB_CUDA", Path::new("bad-1"))];
	let run = expect_in(&url, &[&register[..], &["--probe"]].concat(), &bad_gpu, 9)?;
	let bad = stint_e2e::stand_in_uuid(1);
	assert!(
		run.stderr.contains(&format!("{bad} (NVIDIA H100 PCIe) failed the self-test")),
		"{}",
		run.stderr
	);
	assert!(!run.stderr.contains(&stint_e2e::stand_in_uuid(0)), "{}", run.stderr);
	assert!(client.provider(&bob).await?.is_none(), "nothing registered");
	let run = expect_in(&url, &[&register[..], &["--probe"]].concat(), &lib, 0)?;
	assert!(run.stdout.contains("Providers.Registered"), "{}", run.stdout);
	let record = client.provider(&bob).await?.context("Bob registered")?;
	let gpus: Vec<_> = record.hardware.gpus.0.iter().map(|gpu| &gpu.0).collect();
	assert_eq!(gpus.len(), 2);
	assert_eq!(gpus[0].model.to_vec(), b"NVIDIA H200");
	assert_eq!(gpus[0].vram_mib, 143_155);
	assert_eq!(gpus[0].interface, stint_primitives::GpuInterface::Sxm);
	assert_eq!(gpus[0].uuid_hash, stint_primitives::device_id(&stint_e2e::stand_in_uuid(0)));
	assert_eq!(
		gpus[1].compute_capability,
		stint_primitives::ComputeCapability { major: 8, minor: 9 }
	);
	assert_eq!(gpus[1].uuid_hash, stint_primitives::device_id(&stint_e2e::stand_in_uuid(1)));
	assert!(record.hardware.cpu_cores >= 1 && record.hardware.ram_mib > 0);

	// Providers: pause, and a bond for a newcomer.
	expect(&url, &["--key", "//Ferdie", "provider", "pause"], 0)?;
	let run =
		expect(&url, &["provider", "show", "5CiPPseXPECbkjWCa6MnjNokrgYjMqmKndv2rSnekmSK2DjL"], 0)?;
	assert!(run.stdout.contains("Paused"), "{}", run.stdout);
	expect(&url, &["--key", "//Charlie", "bond", "bond", "200"], 0)?;
	let charlie = parse_account("5FLSigC9HGRKVhB9FiEo4Y3koPsNmBmLJbpXg2mp1hXcS59Y")?;
	assert_eq!(client.bond(&charlie).await?.context("Charlie's bond")?.active, 200 * STINT);
	let run = expect(&url, &["--key", "//Charlie", "bond", "bond", "1"], 6)?;
	assert!(run.stderr.contains("Bonds."), "{}", run.stderr);
	Ok(())
}

/// What the stand-in provider serves for lease 0.
#[derive(Clone, Default)]
struct Served {
	/// `(path, served content, content the manifest describes)`.
	files: Vec<(String, Vec<u8>, Vec<u8>)>,
	receipt: Vec<u8>,
	stdout: Vec<u8>,
	stderr: Vec<u8>,
}

/// A stand-in for a provider worker's result endpoint, over plain HTTP on a free loopback port:
/// serves lease 0's outputs, receipt and logs to its buyer only, checking every request's
/// `x-stint-fetch-auth` exactly as a provider must (`SignedFetchAuth::check`).
struct Outputs {
	served: std::sync::Arc<std::sync::Mutex<Served>>,
	port: u16,
}

fn manifest(files: &[(&str, &[u8])]) -> Vec<u8> {
	let listed: Vec<_> = files
		.iter()
		.map(|(p, content)| {
			serde_json::json!({
				"path": p,
				"size": content.len(),
				"blake2_256": format!("0x{}", hex(&stint_primitives::blake2_256(content))),
			})
		})
		.collect();
	serde_json::json!({ "files": listed }).to_string().into_bytes()
}

impl Outputs {
	fn start(served: Served, genesis: [u8; 32], buyer: [u8; 32]) -> Result<Self> {
		use std::io::{BufRead, BufReader, Write};
		use stint_primitives::{SignedFetchAuth, FETCH_AUTH_HEADER};
		let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
		let port = listener.local_addr()?.port();
		let served = std::sync::Arc::new(std::sync::Mutex::new(served));
		let shared = served.clone();
		let buyer = polkadot_sdk_sr25519(buyer);
		std::thread::spawn(move || {
			for stream in listener.incoming().flatten() {
				let mut reader = BufReader::new(&stream);
				let mut request = String::new();
				if reader.read_line(&mut request).is_err() {
					continue;
				}
				let mut auth = None;
				let mut header = String::new();
				while reader.read_line(&mut header).map(|n| n > 2).unwrap_or(false) {
					if let Some((name, value)) = header.split_once(':') {
						if name.trim().eq_ignore_ascii_case(FETCH_AUTH_HEADER) {
							auth = Some(value.trim().to_string());
						}
					}
					header.clear();
				}
				let target = request.split_whitespace().nth(1).unwrap_or("/").to_string();
				let (path, query) = target.split_once('?').unwrap_or((&target, ""));
				let now = std::time::SystemTime::now()
					.duration_since(std::time::UNIX_EPOCH)
					.unwrap()
					.as_secs();
				let refusal = match auth.as_deref().map(SignedFetchAuth::from_header) {
					None => Some("no fetch authorisation".to_string()),
					Some(Err(e)) => Some(e.to_string()),
					Some(Ok(signed)) => {
						signed.check(&genesis, 0, &buyer, now).err().map(|e| e.to_string())
					}
				};
				let served = shared.lock().unwrap().clone();
				let log = |name: &str| match name {
					"stdout" => Some(served.stdout.clone()),
					"stderr" => Some(served.stderr.clone()),
					_ => None,
				};
				let body: Option<Vec<u8>> = match path {
					"/leases/0/manifest" => {
						let files: Vec<(&str, &[u8])> = served
							.files
							.iter()
							.map(|(p, _, d)| (p.as_str(), d.as_slice()))
							.collect();
						Some(manifest(&files))
					}
					"/leases/0/receipt" => Some(served.receipt.clone()),
					"/leases/0/logs/manifest" => {
						Some(manifest(&[("stdout", &served.stdout), ("stderr", &served.stderr)]))
					}
					_ => {
						if let Some(p) = path.strip_prefix("/leases/0/files/") {
							served.files.iter().find(|(name, _, _)| name == p).map(|f| f.1.clone())
						} else if let Some(name) = path.strip_prefix("/leases/0/logs/files/") {
							log(name)
						} else if let Some(name) = path.strip_prefix("/leases/0/logs/") {
							let offset: usize = query
								.strip_prefix("offset=")
								.and_then(|o| o.parse().ok())
								.unwrap_or(0);
							log(name).map(|l| l.get(offset..).unwrap_or_default().to_vec())
						} else {
							None
						}
					}
				};
				let mut stream = &stream;
				let (status, body) = match (refusal, body) {
					(Some(why), _) => ("401 Unauthorized", why.into_bytes()),
					(None, Some(body)) => ("200 OK", body),
					(None, None) => ("404 Not Found", Vec::new()),
				};
				let head = format!(
					"HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
					body.len()
				);
				let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&body));
			}
		});
		Ok(Self { served, port })
	}
}

fn polkadot_sdk_sr25519(raw: [u8; 32]) -> stint_primitives::WorkerKey {
	stint_primitives::WorkerKey::from_raw(raw)
}

fn hex(bytes: &[u8]) -> String {
	bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn results_and_logs_are_fetched_by_the_buyer_and_kept_only_when_they_match() -> Result<()> {
	use codec::Encode;
	use stint_client::{runtime, Static, Wait};
	use stint_primitives::{
		output_root, ExecutionReceipt, ExecutorKind, Instant, OutputFile, Report, ReportKind,
		ResultCommitment, StopReason, RECEIPT_DOMAIN,
	};

	let node = TestNode::dev()?;
	drop(node.client(STARTUP).await?);
	let url = node.ws_url();
	let client = Client::connect(&url).await?;
	let dir = tempfile::tempdir()?;
	let as_file = |p: &str, c: &[u8]| OutputFile {
		path: p.as_bytes().to_vec(),
		size: c.len() as u64,
		content_hash: stint_primitives::blake2_256(c),
	};
	let files: Vec<(String, Vec<u8>)> = vec![
		("model/weights.bin".into(), vec![7u8; 100_000]),
		("log.txt".into(), b"epoch 3: loss 0.01\n".to_vec()),
	];
	let (stdout, stderr) = (b"training\nepoch 1\nepoch 2\n".to_vec(), b"warning: slow\n".to_vec());
	let root = output_root(&files.iter().map(|(p, c)| as_file(p, c)).collect::<Vec<_>>());
	let image_digest = stint_primitives::image_digest(
		b"x@sha256:5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592",
	)
	.unwrap();
	let receipt = ExecutionReceipt {
		domain: RECEIPT_DOMAIN,
		genesis_hash: client.genesis_hash(),
		lease: 0,
		kind: ReportKind::Final,
		image_digest,
		executor: ExecutorKind::Docker,
		devices: vec![stint_primitives::device_id("GPU-eve-0")],
		started: Instant { block: 5, unix_ms: 1_700_000_000_000 },
		ended: Instant { block: 50, unix_ms: 1_700_000_600_000 },
		exit_code: 0,
		stop_reason: StopReason::Exited,
		gpu_seconds: 600,
		logs_root: output_root(&[as_file("stdout", &stdout), as_file("stderr", &stderr)]),
		output_root: root,
		input_hashes: vec![],
		worker_version: b"stint-worker 0.1.0".to_vec(),
	};
	let served = Served {
		files: files.iter().map(|(p, c)| (p.clone(), c.clone(), c.clone())).collect(),
		receipt: receipt.encode(),
		stdout: stdout.clone(),
		stderr: stderr.clone(),
	};
	let alice = stint_client::keypair("//Alice")?.public_key().0;
	let outputs = Outputs::start(served, client.genesis_hash(), alice)?;

	// Eve points her endpoint at the outputs server (same hardware as at genesis), in one
	// transaction.
	let eve_file = dir.path().join("eve.toml");
	let mut eve = format!(
		"name = \"eve-gpus\"\nendpoint = \"http://127.0.0.1:{}\"\nregion = \"DE\"\n\
		 worker_key = \"//Eve//stash\"\n\n[hardware]\ncpu_cores = 64\nram_mib = 524288\n\
		 disk_gib = 4000\n",
		outputs.port
	);
	for i in 0..2 {
		eve += &format!(
			"\n[[hardware.gpus]]\nmodel = \"NVIDIA H100 80GB HBM3\"\nvram_mib = 81559\n\
			 compute_capability = \"9.0\"\ncuda_driver_version = 13000\ninterface = \"Sxm\"\n\
			 uuid = \"GPU-eve-{i}\"\n"
		);
	}
	std::fs::write(&eve_file, eve)?;
	let run =
		expect(&url, &["--key", "//Eve", "provider", "update", eve_file.to_str().unwrap()], 0)?;
	assert!(run.stdout.contains("Utility.BatchCompleted"), "{}", run.stdout);
	assert!(run.stdout.contains("Providers.InfoUpdated"), "{}", run.stdout);
	assert!(run.stdout.contains("Providers.HardwareUpdated"), "{}", run.stdout);

	// A lease: order, bid, accept, and an ack by Eve's worker key.
	let job = job_file(dir.path(), "job.toml", false, Some(100))?;
	expect(&url, &["--key", "//Alice", "order", "create", &job], 0)?;
	expect(&url, &["--key", "//Eve//stash", "bid", "place", "0", "--price", "0.5"], 0)?;
	expect(&url, &["--key", "//Alice", "order", "accept", "0", EVE], 0)?;
	expect(&url, &["--key", "//Eve//stash", "lease", "ack", "0"], 0)?;
	// No result yet: nothing to fetch; the logs so far are shown, unverified.
	let early = dir.path().join("early");
	expect(
		&url,
		&["--key", "//Alice", "results", "fetch", "0", "--out", early.to_str().unwrap()],
		7,
	)?;
	let run = expect(&url, &["--key", "//Alice", "lease", "logs", "0"], 0)?;
	assert_eq!(run.stdout, "training\nepoch 1\nepoch 2\n");
	assert!(
		run.stderr.contains("warning: slow") && run.stderr.contains("not verified"),
		"{}",
		run.stderr
	);

	// Eve's worker signs the result over the files it serves and its receipt; Bob sends it.
	let commitment = ResultCommitment {
		output_root: root,
		receipt_hash: receipt.hash(),
		exit_code: 0,
		gpu_seconds: 600,
		image_digest,
	};
	let report = Report::new(client.genesis_hash(), 0, ReportKind::Final, commitment);
	let signature = stint_client::keypair("//Eve//stash")?.sign(&report.signing_bytes());
	let call = runtime::tx().leases().submit_result(0, Static(commitment), signature.0);
	client.submit(&call, &stint_client::keypair("//Bob")?, Wait::Finalized, |_| {}).await?;

	// Only the buyer's live, signed request is served: unsigned, expired and another key's are
	// refused by the provider (exit 10), and nothing is written.
	let refused = dir.path().join("refused");
	let out = refused.to_str().unwrap();
	let run = expect(&url, &["results", "fetch", "0", "--out", out], 10)?;
	assert!(run.stderr.contains("no fetch authorisation"), "{}", run.stderr);
	let run = expect(
		&url,
		&["--key", "//Alice", "results", "fetch", "0", "--out", out, "--valid-for", "0"],
		10,
	)?;
	assert!(run.stderr.contains("expired"), "{}", run.stderr);
	let run = expect(&url, &["--key", "//Bob", "results", "fetch", "0", "--out", out], 10)?;
	assert!(run.stderr.contains("not signed by the lease's buyer"), "{}", run.stderr);
	assert!(!refused.exists());

	// The buyer's: outputs, receipt and logs come down and match.
	let good = dir.path().join("good");
	let run = expect(
		&url,
		&["--key", "//Alice", "results", "fetch", "0", "--out", good.to_str().unwrap()],
		0,
	)?;
	assert!(run.stdout.contains("2 output file(s) match the output root"), "{}", run.stdout);
	assert_eq!(std::fs::read(good.join("outputs/model/weights.bin"))?, files[0].1);
	assert_eq!(std::fs::read(good.join("outputs/log.txt"))?, files[1].1);
	assert_eq!(std::fs::read(good.join("logs/stdout"))?, stdout);
	assert_eq!(std::fs::read(good.join("receipt.scale"))?, receipt.encode());
	let json: serde_json::Value =
		serde_json::from_slice(&std::fs::read(good.join("receipt.json"))?)?;
	assert_eq!(json["gpu_seconds"], 600);
	let run = expect(&url, &["--key", "//Alice", "lease", "logs", "0", "--follow"], 0)?;
	assert_eq!(run.stdout, "training\nepoch 1\nepoch 2\n");
	assert!(run.stderr.contains("verified against its signed receipt"), "{}", run.stderr);

	// Logs served differently from what the receipt commits to are refused.
	outputs.served.lock().unwrap().stdout = b"training\nepoch 1\n".to_vec();
	let run = expect(&url, &["--key", "//Alice", "lease", "logs", "0"], 8)?;
	assert!(run.stderr.contains("do not match"), "{}", run.stderr);
	let logs = dir.path().join("logs");
	expect(
		&url,
		&["--key", "//Alice", "results", "fetch", "0", "--out", logs.to_str().unwrap()],
		8,
	)?;
	outputs.served.lock().unwrap().stdout = stdout.clone();

	// A receipt that is not the one signed is refused.
	outputs.served.lock().unwrap().receipt[60] ^= 1;
	let run = expect(
		&url,
		&[
			"--key",
			"//Alice",
			"results",
			"fetch",
			"0",
			"--out",
			dir.path().join("r").to_str().unwrap(),
		],
		8,
	)?;
	assert!(run.stderr.contains("receipt_hash"), "{}", run.stderr);
	outputs.served.lock().unwrap().receipt = receipt.encode();

	// A file served differently from what was signed is deleted, and the exit code says so.
	outputs.served.lock().unwrap().files[1].1 = b"epoch 3: loss 9.99\n".to_vec();
	let bad = dir.path().join("bad");
	let run = expect(
		&url,
		&["--key", "//Alice", "results", "fetch", "0", "--out", bad.to_str().unwrap()],
		8,
	)?;
	assert!(run.stderr.contains("log.txt"), "{}", run.stderr);
	assert!(!bad.join("outputs/log.txt").exists(), "the mismatching file was deleted");

	// A manifest that does not match the root: nothing is downloaded at all.
	outputs.served.lock().unwrap().files[1] =
		("log.txt".into(), b"other".to_vec(), b"other".to_vec());
	let none = dir.path().join("none");
	let run = expect(
		&url,
		&["--key", "//Alice", "results", "fetch", "0", "--out", none.to_str().unwrap()],
		8,
	)?;
	assert!(run.stderr.contains("nothing downloaded"), "{}", run.stderr);
	assert!(!none.exists());
	Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remaining_commands_each_work_and_refuse_by_name() -> Result<()> {
	let node = TestNode::dev()?;
	drop(node.client(STARTUP).await?);
	let url = node.ws_url();
	let client = Client::connect(&url).await?;
	let dir = tempfile::tempdir()?;
	let eve = parse_account(EVE)?;
	let ferdie = parse_account("5CiPPseXPECbkjWCa6MnjNokrgYjMqmKndv2rSnekmSK2DjL")?;

	// order cancel: everything back; a second cancel names the error.
	let job = job_file(dir.path(), "job.toml", false, None)?;
	expect(&url, &["--key", "//Alice", "order", "create", &job], 0)?;
	expect(&url, &["--key", "//Bob", "order", "cancel", "0"], 6)?;
	expect(&url, &["--key", "//Alice", "order", "cancel", "0"], 0)?;
	assert!(client.order(0).await?.is_none(), "the cancelled order is gone");
	// A refused call is tried on the best block first and never sent: it costs no fee. With
	// --no-dry-run it is sent, refused in a block, and pays its fee.
	let alice = parse_account("5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY")?;
	let before = client.free_balance(&alice).await?;
	let run = expect(&url, &["--key", "//Alice", "order", "cancel", "0"], 6)?;
	assert!(run.stderr.contains("Market.UnknownOrder"), "{}", run.stderr);
	assert!(!run.stderr.contains("submitted"), "{}", run.stderr);
	assert_eq!(client.free_balance(&alice).await?, before, "a dry-run refusal costs nothing");
	let run = expect(&url, &["--key", "//Alice", "--no-dry-run", "order", "cancel", "0"], 6)?;
	assert!(run.stderr.contains("Market.UnknownOrder"), "{}", run.stderr);
	// Read at the block this client sees as the latest, which may be a block behind the one
	// the CLI saw its refusal in: a few blocks' grace.
	let mut after = client.free_balance(&alice).await?;
	for _ in 0..40 {
		if after < before {
			break;
		}
		tokio::time::sleep(std::time::Duration::from_millis(250)).await;
		after = client.free_balance(&alice).await?;
	}
	assert!(after < before, "a refusal in a block pays its fee");

	// An open-ended lease: the file names no notice, so the CLI asks the chain's least. One
	// block less is refused by name.
	let short = std::fs::read_to_string(&job)?
		.replace("deposit = \"100\"", "deposit = \"100\"\ntermination_notice_blocks = 1");
	let short_path = dir.path().join("short.toml");
	std::fs::write(&short_path, short)?;
	let run =
		expect(&url, &["--key", "//Alice", "order", "create", short_path.to_str().unwrap()], 6)?;
	assert!(run.stderr.contains("Market.NoticeTooShort"), "{}", run.stderr);
	expect(&url, &["--key", "//Alice", "order", "create", &job], 0)?;
	expect(&url, &["--key", "//Eve", "bid", "place", "1", "--price", "0.5"], 0)?;
	expect(&url, &["--key", "//Alice", "order", "accept", "1", EVE], 0)?;
	expect(&url, &["--key", "//Eve", "lease", "ack", "0"], 0)?;
	let stream = client.lease(0).await?.context("lease 0")?.stream.to_string();

	// stream settle (anyone) pays Eve; withdraw only by the payee.
	let before = client.free_balance(&eve).await?;
	expect(&url, &["--key", "//Bob", "stream", "settle", &stream], 0)?;
	assert!(client.free_balance(&eve).await? > before, "settling paid Eve");
	let run = expect(&url, &["--key", "//Bob", "stream", "withdraw", &stream], 6)?;
	assert!(run.stderr.contains("Streams.NotPayee"), "{}", run.stderr);
	expect(&url, &["--key", "//Eve", "stream", "withdraw", &stream], 0)?;

	// report missed: nothing is overdue yet.
	let run = expect(&url, &["--key", "//Bob", "report", "missed", "0"], 6)?;
	assert!(run.stderr.contains("Leases.NotOverdue"), "{}", run.stderr);

	// lease notice: only the provider. Terminating before it is served is slashed (ending after
	// it, and the verdict that follows, is worker/tests/reconcile.rs's: it waits 100 blocks).
	let run = expect(&url, &["--key", "//Alice", "lease", "notice", "0"], 6)?;
	assert!(run.stderr.contains("Leases.NotProvider"), "{}", run.stderr);
	expect(&url, &["--key", "//Eve", "lease", "notice", "0"], 0)?;
	let run = expect(&url, &["--key", "//Eve", "lease", "terminate", "0"], 0)?;
	assert!(run.stdout.contains("Bonds.Slashed"), "{}", run.stdout);
	assert!(matches!(
		client.lease(0).await?.context("lease 0")?.status,
		LeaseStatus::Terminated { .. }
	));
	expect(&url, &["--key", "//Eve", "lease", "terminate", "0"], 6)?;

	// lease dispute: only the buyer, and only of a result waiting for its verdict (the
	// re-execution itself is worker/tests/reconcile.rs's, with two workers).
	let run = expect(&url, &["--key", "//Bob", "lease", "dispute", "0"], 6)?;
	assert!(run.stderr.contains("Leases.NotBuyer"), "{}", run.stderr);
	let run = expect(&url, &["--key", "//Alice", "lease", "dispute", "0"], 6)?;
	assert!(run.stderr.contains("Leases.NoPendingVerdict"), "{}", run.stderr);

	// provider resume, rotate-key, exit, deregister.
	let run = expect(&url, &["--key", "//Ferdie", "provider", "resume"], 6)?;
	assert!(run.stderr.contains("Providers.NotPaused"), "{}", run.stderr);
	expect(&url, &["--key", "//Ferdie", "provider", "pause"], 0)?;
	expect(&url, &["--key", "//Ferdie", "provider", "resume"], 0)?;
	expect(&url, &["--key", "//Ferdie", "provider", "rotate-key", "0x1234"], 4)?;
	expect(&url, &["--key", "//Ferdie", "provider", "rotate-key", "//Ferdie//worker2"], 0)?;
	let rotated = stint_client::keypair("//Ferdie//worker2")?.public_key().0;
	let workers = client.provider(&ferdie).await?.context("Ferdie")?.workers.0;
	assert_eq!(workers.iter().map(|w| w.key).collect::<Vec<_>>(), vec![rotated]);
	// A second machine: its own worker key for the second GPU; rotating now needs --from.
	let second = stint_client::keypair("//Ferdie//machine2")?.public_key().0;
	expect(
		&url,
		&[
			"--key",
			"//Ferdie",
			"provider",
			"bind-worker",
			"//Ferdie//worker2",
			"--devices",
			"GPU-ferdie-0",
		],
		0,
	)?;
	expect(
		&url,
		&[
			"--key",
			"//Ferdie",
			"provider",
			"bind-worker",
			"//Ferdie//machine2",
			"--devices",
			"GPU-ferdie-1",
		],
		0,
	)?;
	let run =
		expect(&url, &["--key", "//Ferdie", "provider", "rotate-key", "//Ferdie//worker3"], 5)?;
	assert!(run.stderr.contains("--from"), "{}", run.stderr);
	// A key held elsewhere: its public key, and its consent made where it is.
	let third = stint_client::keypair("//Ferdie//worker3")?.public_key().0;
	let third_hex = format!("0x{}", hex(&third));
	let ferdie_address = ferdie.to_string();
	let args =
		["--key", "//Ferdie", "provider", "rotate-key", &third_hex, "--from", "//Ferdie//worker2"];
	let run = expect(&url, &args, 4)?;
	assert!(run.stderr.contains("key-proof"), "{}", run.stderr);
	let wrong = expect(&url, &["--key", "//Bob", "provider", "key-proof", &ferdie_address], 0)?;
	let run = expect(&url, &[&args[..], &["--proof", wrong.stdout.trim()]].concat(), 6)?;
	assert!(run.stderr.contains("Providers.BadWorkerKeyProof"), "{}", run.stderr);
	let key_proof = ["--key", "//Ferdie//worker3", "provider", "key-proof", &ferdie_address];
	let proof = expect(&url, &key_proof, 0)?;
	expect(&url, &[&args[..], &["--proof", proof.stdout.trim()]].concat(), 0)?;
	let rotated = third;
	let run =
		expect(&url, &["--key", "//Ferdie", "provider", "unbind-worker", "//Ferdie//nobody"], 6)?;
	assert!(run.stderr.contains("Providers.UnknownWorkerKey"), "{}", run.stderr);
	expect(&url, &["--key", "//Ferdie", "provider", "unbind-worker", "//Ferdie//machine2"], 0)?;
	let workers = client.provider(&ferdie).await?.context("Ferdie")?.workers.0;
	assert_eq!(workers.iter().map(|w| w.key).collect::<Vec<_>>(), vec![rotated]);
	assert!(!workers.iter().any(|w| w.key == second));
	let run = expect(&url, &["--key", "//Ferdie", "provider", "deregister"], 6)?;
	assert!(run.stderr.contains("Providers.NotExiting"), "{}", run.stderr);
	expect(&url, &["--key", "//Ferdie", "provider", "exit"], 0)?;
	let run = expect(&url, &["--key", "//Ferdie", "provider", "deregister"], 6)?;
	assert!(run.stderr.contains("Providers.NoticeNotServed"), "{}", run.stderr);

	// bond more, unbond, withdraw (nothing has matured yet). The first returns at inclusion and
	// the second follows at once, before finality: it must not reuse the first one's nonce.
	let active = client.bond(&eve).await?.context("Eve's bond")?.active;
	expect(&url, &["--key", "//Eve", "--no-wait-finality", "bond", "more", "10"], 0)?;
	expect(&url, &["--key", "//Eve", "bond", "unbond", "5"], 0)?;
	let ledger = client.bond(&eve).await?.context("Eve's bond")?;
	assert_eq!(ledger.active, active + 5 * STINT);
	assert_eq!(ledger.unlocking.0.iter().map(|c| c.value).sum::<u128>(), 5 * STINT);
	let run = expect(&url, &["--key", "//Eve", "bond", "withdraw"], 6)?;
	assert!(run.stderr.contains("Bonds.NothingToWithdraw"), "{}", run.stderr);
	expect(&url, &["--key", "//Eve", "bond", "unbond", "many"], 5)?;
	Ok(())
}
