//! What the worker's tests share: the test job image, built here from `tests/job/job.c` (a static
//! binary `FROM scratch`: no registry needed), once per test binary.

#![allow(dead_code)]

use std::{path::Path, process::Command, sync::OnceLock};

/// The test image, pinned as an order pins it: `stint-test/job@sha256:<its ID>`.
pub fn job_image() -> String {
	static IMAGE: OnceLock<String> = OnceLock::new();
	IMAGE.get_or_init(|| build_image("stint-test/job", include_str!("../job/job.c"))).clone()
}

/// Builds `source` (C) statically into an image `name` whose entry point runs it.
pub fn build_image(name: &str, source: &str) -> String {
	let dir = tempfile::tempdir().expect("a temporary folder");
	std::fs::write(dir.path().join("job.c"), source).unwrap();
	run(Command::new("gcc").args(["-static", "-O2", "-o", "job", "job.c"]).current_dir(dir.path()));
	std::fs::write(
		dir.path().join("Dockerfile"),
		"FROM scratch\nCOPY job /job\nENTRYPOINT [\"/job\"]\n",
	)
	.unwrap();
	let id = run(Command::new("docker")
		.args(["build", "-q", "-t", name, "."])
		.env("DOCKER_BUILDKIT", "0")
		.current_dir(dir.path()));
	let id =
		id.trim().strip_prefix("sha256:").expect("docker build -q prints the image ID").to_string();
	format!("{name}@sha256:{id}")
}

fn run(command: &mut Command) -> String {
	let output = command.output().expect("the command starts");
	assert!(output.status.success(), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
	String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether a Docker engine answers (the executor tests need one).
/// A buyer's job file (the one `stint order create` takes) for `image` running `command`, on one
/// GPU, 0.01 STINT a block for 100 blocks.
pub fn job_toml(image: &str, command: &[&str], max_output_bytes: u64) -> String {
	let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
	format!(
		"[job]\nimage = {image:?}\ncommand = [{}]\nmax_output_bytes = {max_output_bytes}\n\n\
		 [gpus]\ncount = 1\n\n\
		 [terms]\nmax_price_per_block = \"0.01\"\nduration_blocks = 100\nbid_window_blocks = 5\n",
		words.join(", ")
	)
}

pub fn docker_available() -> bool {
	Command::new("docker").arg("info").output().is_ok_and(|o| o.status.success())
}

/// The files of a folder, as (relative path, content), sorted.
pub fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
	let mut found = Vec::new();
	for entry in std::fs::read_dir(dir).unwrap().flatten() {
		if entry.file_type().unwrap().is_file() {
			found.push((
				entry.file_name().to_string_lossy().into_owned(),
				std::fs::read(entry.path()).unwrap(),
			));
		}
	}
	found.sort();
	found
}

pub mod chain;

/// The test job built as a plain program at `dir/job`, and its sha256.
pub fn job_program(dir: &Path) -> (std::path::PathBuf, String) {
	std::fs::write(dir.join("job.c"), include_str!("../job/job.c")).unwrap();
	run(Command::new("gcc").args(["-O2", "-o", "job", "job.c"]).current_dir(dir));
	let path = dir.join("job");
	let sha256 = stint_worker::executor::native::sha256_file(&path).unwrap();
	(path, sha256)
}

/// A Docker socket that can go down and come back: a Unix socket in front of the real engine's
/// (`/var/run/docker.sock`), forwarding while up; while down it closes every connection, open
/// or new, as a dead engine would. A worker reaches it through `DOCKER_HOST`.
pub struct DockerSocket {
	pub path: std::path::PathBuf,
	up: std::sync::Arc<std::sync::atomic::AtomicBool>,
	open: std::sync::Arc<std::sync::Mutex<Vec<std::os::unix::net::UnixStream>>>,
}

impl DockerSocket {
	pub fn start(dir: &Path) -> Self {
		use std::{
			os::unix::net::{UnixListener, UnixStream},
			sync::{atomic::Ordering, Arc},
		};
		let path = dir.join("docker.sock");
		let listener = UnixListener::bind(&path).expect("a socket in the test's folder");
		let socket = Self { path, up: Arc::new(true.into()), open: Arc::default() };
		let (up, open) = (socket.up.clone(), socket.open.clone());
		std::thread::spawn(move || {
			for client in listener.incoming().flatten() {
				// Under the lock `down` takes: no connection slips past it still forwarding.
				let mut open = open.lock().unwrap();
				if !up.load(Ordering::SeqCst) {
					continue;
				}
				let Ok(engine) = UnixStream::connect("/var/run/docker.sock") else { continue };
				for (mut from, mut to) in [
					(client.try_clone().unwrap(), engine.try_clone().unwrap()),
					(engine.try_clone().unwrap(), client.try_clone().unwrap()),
				] {
					std::thread::spawn(move || {
						let _ = std::io::copy(&mut from, &mut to);
						let _ = to.shutdown(std::net::Shutdown::Write);
					});
				}
				open.extend([client, engine]);
			}
		});
		socket
	}

	/// `DOCKER_HOST` for it.
	pub fn host(&self) -> String {
		format!("unix://{}", self.path.display())
	}

	/// The engine stops answering: open connections are cut, new ones closed at once.
	pub fn down(&self) {
		let mut open = self.open.lock().unwrap();
		self.up.store(false, std::sync::atomic::Ordering::SeqCst);
		for stream in open.drain(..) {
			let _ = stream.shutdown(std::net::Shutdown::Both);
		}
	}

	pub fn up(&self) {
		self.up.store(true, std::sync::atomic::Ordering::SeqCst);
	}
}

/// Unmounts every filesystem mounted under `dir` (the outputs' filesystems a worker made, which
/// outlive it), so that the test's folder can go.
pub fn unmount_under(dir: &Path) {
	let Ok(dir) = std::fs::canonicalize(dir) else { return };
	let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
	let mut points: Vec<&str> = table
		.lines()
		.filter_map(|line| line.split(' ').nth(4))
		.filter(|point| Path::new(point).starts_with(&dir))
		.collect();
	points.sort_by_key(|point| std::cmp::Reverse(point.len()));
	for point in points {
		let _ = Command::new("umount").args(["-l", point]).output();
	}
}

/// Unmounts what a worker mounted under its folder when dropped, a failing test's too: declare
/// it after the folder, so that it goes first.
pub struct Unmounts(pub std::path::PathBuf);

impl Drop for Unmounts {
	fn drop(&mut self) {
		unmount_under(&self.0);
	}
}
