//! Strangers against the worker (issue 38, hole 2). The outputs API faces the internet; before,
//! every connection took a thread and a file descriptor with no timeout, so about 500 idle
//! connections left a worker at the common service limit of 1,024 open files unable to reach
//! Docker or the chain (a missed acknowledgement, a no-show slash), and the API never came back.
//!
//! Here Eve's worker runs with its open-file limit at 1,024 (soft and hard) while strangers hold
//! 5,000 idle connections to its outputs API from one address and 100 slow-loris ones (a byte of
//! the request head a second) from another, reopening every connection the worker closes. The
//! worker must still acknowledge and commit a lease on time, and Alice's fetch of the result,
//! from a third address, must complete and verify.

mod common;

use std::{
	io::{Read, Write},
	net::{Ipv4Addr, SocketAddr, TcpStream},
	sync::{
		atomic::{AtomicBool, AtomicU64, Ordering},
		Arc,
	},
	time::{Duration, Instant},
};

use anyhow::{Context, Result};
use common::chain::{
	lease_result, post_order, write_config, Order, Setup, Worker, EVE_ENDPOINT_PORT,
};
use stint_client::{Client, LeaseStatus};
use stint_e2e::TestNode;

const IDLE: usize = 5_000;
const SLOW: usize = 100;

/// A connection to `to` from loopback address `127.0.0.<from>`, or `None` when refused.
fn connect(from: u8, to: SocketAddr) -> Option<TcpStream> {
	let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).ok()?;
	let source = SocketAddr::from((Ipv4Addr::new(127, 0, 0, from), 0));
	socket.bind(&source.into()).ok()?;
	socket.connect_timeout(&to.into(), Duration::from_secs(2)).ok()?;
	let stream: TcpStream = socket.into();
	stream.set_nonblocking(true).ok()?;
	Some(stream)
}

/// Whether the other side closed `stream` (or reset it).
fn closed(stream: &mut TcpStream) -> bool {
	let mut byte = [0u8; 1];
	match stream.read(&mut byte) {
		Ok(0) => true,
		Ok(_) => false,
		Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
	}
}

/// Holds `count` connections from `127.0.0.<from>` until `stop`, reopening every `round` each
/// one the server closed; with `trickle`, each sends one more byte of a request head every
/// round. Counts every connection opened in `opened`.
fn flood(
	from: u8,
	to: SocketAddr,
	count: usize,
	trickle: bool,
	round: Duration,
	stop: Arc<AtomicBool>,
	opened: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
	std::thread::spawn(move || {
		let head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
		let mut held: Vec<(TcpStream, usize)> = Vec::with_capacity(count);
		while !stop.load(Ordering::Relaxed) {
			held.retain_mut(|(stream, _)| !closed(stream));
			while held.len() < count && !stop.load(Ordering::Relaxed) {
				match connect(from, to) {
					Some(stream) => {
						opened.fetch_add(1, Ordering::Relaxed);
						held.push((stream, 0));
					}
					None => break,
				}
			}
			if trickle {
				for (stream, sent) in &mut held {
					let byte = head.get(*sent).copied().unwrap_or(b'a');
					if stream.write(&[byte]).is_ok() {
						*sent += 1;
					}
				}
			}
			std::thread::sleep(round);
		}
	})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_idle_and_slow_connections_stops_neither_the_worker_nor_a_buyers_fetch(
) -> Result<()> {
	assert!(common::docker_available(), "this test needs a Docker engine");
	let node = TestNode::dev()?;
	node.wait_for_rpc(Duration::from_secs(90))?;
	let url = node.ws_url();
	let dir = tempfile::tempdir()?;
	let setup = Setup { api_port: EVE_ENDPOINT_PORT, ..Setup::default() };
	let config = write_config(dir.path(), &url, &setup)?;
	let worker = Worker::start_with_open_files(&config, 1024)?;
	let client = Client::connect(&url).await?;
	let api = SocketAddr::from(([127, 0, 0, 1], EVE_ENDPOINT_PORT));
	let deadline = Instant::now() + Duration::from_secs(60);
	while TcpStream::connect(api).is_err() {
		anyhow::ensure!(Instant::now() < deadline, "no outputs API:\n{}", worker.log());
		tokio::time::sleep(Duration::from_millis(100)).await;
	}

	let stop = Arc::new(AtomicBool::new(false));
	let (idle, slow) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
	let floods = [
		flood(2, api, IDLE, false, Duration::from_secs(3), stop.clone(), idle.clone()),
		flood(3, api, SLOW, true, Duration::from_secs(1), stop.clone(), slow.clone()),
	];
	// Until every idle connection was opened once (a server that stops accepting makes the
	// connections wait: then the flood goes on as far as it gets).
	let deadline = Instant::now() + Duration::from_secs(30);
	while idle.load(Ordering::Relaxed) < IDLE as u64 && Instant::now() < deadline {
		tokio::time::sleep(Duration::from_millis(200)).await;
	}

	// Under the flood: an order is bid on, acknowledged, run and committed.
	let started = Instant::now();
	let command = ["/job", "write", "result.txt", "42", "exit", "0"];
	let order = post_order(dir.path(), &url, &Order { command: &command, ..Order::default() })?;
	let (lease, record) = lease_result(&client, order, Duration::from_secs(120), &worker)
		.await
		.with_context(|| tail(&worker.log()))?;
	assert!(matches!(record.status, LeaseStatus::Completed), "{}", tail(&worker.log()));
	let committed = started.elapsed();

	// Alice fetches and verifies it from her own address while the flood goes on.
	let fetch_started = Instant::now();
	let out = dir.path().join("fetched");
	let cli = stint_e2e::node_binary()?.with_file_name("stint");
	let mut fetch = std::process::Command::new(cli)
		.args(["--url", &url, "--key", "//Alice", "results", "fetch", &lease.to_string()])
		.arg("--out")
		.arg(&out)
		.stdout(std::process::Stdio::null())
		.stderr(std::process::Stdio::piped())
		.spawn()?;
	let status = loop {
		if let Some(status) = fetch.try_wait()? {
			break status;
		}
		if fetch_started.elapsed() > Duration::from_secs(60) {
			let _ = fetch.kill();
			anyhow::bail!("the fetch hangs under the flood:\n{}", tail(&worker.log()));
		}
		tokio::time::sleep(Duration::from_millis(100)).await;
	};
	let mut why = String::new();
	if let Some(mut stderr) = fetch.stderr.take() {
		let _ = stderr.read_to_string(&mut why);
	}
	anyhow::ensure!(status.success(), "the fetch failed: {why}\n{}", tail(&worker.log()));
	let fetched = fetch_started.elapsed();
	assert_eq!(std::fs::read(out.join("outputs/result.txt"))?, b"42");

	stop.store(true, Ordering::Relaxed);
	for flood in floods {
		let _ = flood.join();
	}
	let log = worker.log();
	for starved in ["Too many open files", "cannot list jobs", "cannot prepare the image"] {
		assert!(!log.contains(starved), "the worker was starved ({starved}):\n{log}");
	}
	eprintln!(
		"flood: {} idle and {} slow connections opened; order to committed result {:.1} s, \
		 fetch {:.2} s",
		idle.load(Ordering::Relaxed),
		slow.load(Ordering::Relaxed),
		committed.as_secs_f64(),
		fetched.as_secs_f64()
	);
	// The API still answers once the flood is over.
	let mut health = TcpStream::connect_timeout(&api, Duration::from_secs(5))?;
	health.set_read_timeout(Some(Duration::from_secs(10)))?;
	health.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
	let mut answer = String::new();
	health.read_to_string(&mut answer)?;
	assert!(answer.ends_with("ok"), "{answer}");
	Ok(())
}

/// The last lines of a log, for a failure's message.
fn tail(log: &str) -> String {
	let lines: Vec<&str> = log.lines().collect();
	lines[lines.len().saturating_sub(40)..].join("\n")
}
