//! Jobs as plain processes, for hosts without Docker: only the programs the configuration names
//! (`[[native.programs]]`), each pinned by its file's sha256, run **unisolated** (same kernel,
//! same filesystem, same network as the worker): for programs the provider trusts, never for a
//! stranger's code.
//!
//! An order's image `native/<name>@sha256:<digest>` runs the program `name` when its file hashes
//! to that digest. The job runs in the lease's `outputs` folder with `STINT_OUTPUTS`,
//! `STINT_INPUTS`, `STINT_LEASE`, the order's variables and `CUDA_VISIBLE_DEVICES` set to the
//! leased GPUs; in a session and process group of its own (`setsid`), with `prlimit` limits on
//! processes and memory. A small shell supervises it and writes its exit code to a file, so the
//! code survives a restart of the worker, which finds the job again by the labels kept beside it.

use std::{
	collections::HashMap,
	path::{Path, PathBuf},
	process::{Command, Stdio},
	time::Duration,
};

use sha2::{Digest, Sha256};
use stint_primitives::{is_job_env_name, ExecutorKind, ReservedExit};

use super::{split_pinned, Executor, FoundJob, JobRequest, JobState, PrepareError, LEASE_LABEL};
use crate::config::NativeProgram;

/// The native executor.
pub struct Native {
	programs: Vec<NativeProgram>,
	/// Where each job's state folder lives.
	state_dir: PathBuf,
}

/// The sha256 of a file, as 64 hex digits.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
	use std::io::Read;
	let mut file = std::fs::File::open(path)?;
	let mut hasher = Sha256::new();
	let mut buffer = vec![0u8; 64 * 1024];
	loop {
		let n = file.read(&mut buffer)?;
		if n == 0 {
			break;
		}
		hasher.update(&buffer[..n]);
	}
	Ok(hex::encode(hasher.finalize()))
}

fn run(program: &str, args: &[&str]) -> Result<String, String> {
	let out = Command::new(program).args(args).output().map_err(|e| format!("{program}: {e}"))?;
	match out.status.success() {
		true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
		false => {
			Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)))
		}
	}
}

impl Native {
	/// The programs `programs`, with job state under `state_dir`.
	pub fn new(programs: Vec<NativeProgram>, state_dir: PathBuf) -> Result<Self, String> {
		std::fs::create_dir_all(&state_dir).map_err(|e| format!("{}: {e}", state_dir.display()))?;
		for tool in ["setsid", "prlimit", "kill"] {
			if Command::new(tool)
				.arg("--version")
				.stdout(Stdio::null())
				.stderr(Stdio::null())
				.status()
				.is_err()
			{
				return Err(format!("the native executor needs `{tool}` (util-linux, procps)"));
			}
		}
		Ok(Self { programs, state_dir })
	}

	fn job_dir(&self, handle: &str) -> PathBuf {
		self.state_dir.join(handle)
	}

	fn pid(&self, handle: &str) -> Option<u32> {
		std::fs::read_to_string(self.job_dir(handle).join("pid")).ok()?.trim().parse().ok()
	}

	/// `R`, `S`, `T` (stopped)… of a live process, `None` once it is gone.
	fn process_state(pid: u32) -> Option<char> {
		let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
		// The state follows the command name, which is in parentheses and may hold spaces.
		let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
		(state != 'Z' && state != 'X').then_some(state)
	}

	/// What names process `pid` for good: the boot, and its start time in that boot (a pid
	/// alone is reused, after a reboot or days later).
	fn identity(pid: u32) -> Option<String> {
		let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
		let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
		// Field 22, `starttime`; the fields after the command name start at field 3.
		let started = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?;
		Some(format!("{} {started}", boot.trim()))
	}

	/// The job's supervisor's pid while that process is still the one started for it: `None`
	/// once it is gone or its pid names another process.
	fn live_pid(&self, handle: &str) -> Option<u32> {
		let pid = self.pid(handle)?;
		match std::fs::read_to_string(self.job_dir(handle).join("identity")) {
			Ok(recorded) if Self::identity(pid).as_deref() != Some(recorded.trim()) => None,
			_ => Self::process_state(pid).map(|_| pid),
		}
	}

	fn signal(&self, handle: &str, signal: &str) -> Result<(), String> {
		// Never a process group that is no longer the job's.
		let Some(pid) = self.live_pid(handle) else { return Ok(()) };
		// The whole process group: the supervising shell leads it.
		let _ = run("kill", &[&format!("-{signal}"), "--", &format!("-{pid}")]);
		Ok(())
	}
}

impl Executor for Native {
	fn kind(&self) -> ExecutorKind {
		ExecutorKind::Native
	}

	async fn gpus_supported(&self) -> Option<bool> {
		Some(true)
	}

	/// Programs are checked per job (by their sha256); there is no engine to be down.
	async fn ready(&self) -> Result<(), String> {
		Ok(())
	}

	async fn resolve(&self, image: &[u8]) -> Result<String, PrepareError> {
		let unavailable = |why: String| PrepareError::Order(ReservedExit::ImageUnavailable, why);
		let (name, digest) =
			split_pinned(image).ok_or_else(|| unavailable("the image is not pinned".into()))?;
		let name = name.strip_prefix("native/").ok_or_else(|| {
			unavailable(format!("{name}: the native executor runs native/<program> only"))
		})?;
		let program = self
			.programs
			.iter()
			.find(|p| p.name == name)
			.ok_or_else(|| unavailable(format!("no program {name} is configured")))?;
		let wanted = digest.trim_start_matches("sha256:");
		if program.sha256.trim_start_matches("0x") != wanted {
			return Err(unavailable(format!("{name} is configured with another digest")));
		}
		let actual = sha256_file(&program.path)
			.map_err(|e| PrepareError::Provider(format!("{}: {e}", program.path.display())))?;
		if actual != wanted {
			return Err(PrepareError::Provider(format!(
				"{} no longer hashes to its configured sha256",
				program.path.display()
			)));
		}
		Ok(program.path.display().to_string())
	}

	async fn start(&self, job: &JobRequest, image_id: &str) -> Result<String, String> {
		let instance = job.labels.get(super::INSTANCE_LABEL).map(String::as_str).unwrap_or("once");
		let handle = format!("native-{instance}-lease-{}", job.lease);
		let dir = self.job_dir(&handle);
		if dir.join("pid").exists() {
			// Started before a crash: the same job, never a second one.
			return Ok(handle);
		}
		std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
		let labels = serde_json::to_string(&job.labels).expect("plain data");
		std::fs::write(dir.join("labels.json"), labels).map_err(|e| e.to_string())?;
		// The program's file is checked again right before it runs.
		let program = Path::new(image_id);
		let digest = stint_primitives::image_digest(&job.spec.image).map(hex::encode);
		if sha256_file(program).ok() != digest {
			return Err(format!("{image_id} no longer hashes to the order's digest"));
		}
		let words: Vec<String> =
			job.spec.command.iter().map(|w| String::from_utf8_lossy(w).into_owned()).collect();
		let args = match words.split_first() {
			// The command's first word names the program; the file run is the pinned one.
			Some((_, rest)) => rest.to_vec(),
			None => Vec::new(),
		};
		let mut command = Command::new("setsid");
		command
			.arg("sh")
			.arg("-c")
			.arg(
				"echo $$ > \"$STINT_STATE/pid\"; prlimit --nproc=\"$STINT_NPROC\" \
				 ${STINT_MEM:+\"$STINT_MEM\"} -- \"$@\" > \"$STINT_STATE/stdout\" \
				 2> \"$STINT_STATE/stderr\" < /dev/null; echo $? > \"$STINT_STATE/exit.tmp\" \
				 && mv \"$STINT_STATE/exit.tmp\" \"$STINT_STATE/exit\"",
			)
			.arg("stint-native-job")
			.arg(program)
			.args(&args)
			.current_dir(job.dirs.outputs())
			.env_clear()
			.stdin(Stdio::null())
			.stdout(Stdio::null())
			.stderr(Stdio::null());
		// The order's variables first, and only names a job may set (never the loader's, the
		// GPUs' or the worker's: the bidding policy bids on no order that sets one); the
		// worker's own after them.
		for var in job.spec.env.iter().filter(|var| is_job_env_name(&var.key)) {
			command.env(
				String::from_utf8_lossy(&var.key).into_owned(),
				String::from_utf8_lossy(&var.value).into_owned(),
			);
		}
		command
			.env("PATH", "/usr/local/bin:/usr/bin:/bin")
			.env("STINT_STATE", &dir)
			.env("STINT_NPROC", job.limits.pids.to_string())
			.env("STINT_LEASE", job.lease.to_string())
			.env("STINT_OUTPUTS", job.dirs.outputs())
			.env("STINT_INPUTS", job.dirs.inputs())
			.env("CUDA_VISIBLE_DEVICES", job.gpu_uuids.join(","));
		if job.memory_bytes > 0 {
			command.env("STINT_MEM", memory_limit(job.memory_bytes, !job.gpu_uuids.is_empty()));
		}
		// Where the driver's libraries are found through the worker's own library path (a
		// driver installed outside the loader's cache), the job needs the same path.
		if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
			command.env("LD_LIBRARY_PATH", path);
		}
		let child = command.spawn().map_err(|e| format!("cannot start {image_id}: {e}"))?;
		// The supervisor outlives the worker: it is not waited for here, only its files are read.
		drop(child);
		for _ in 0..50 {
			if let Some(pid) = self.pid(&handle) {
				if let Some(identity) = Self::identity(pid) {
					std::fs::write(dir.join("identity"), identity)
						.map_err(|e| format!("{}: {e}", dir.display()))?;
				}
				return Ok(handle);
			}
			tokio::time::sleep(Duration::from_millis(20)).await;
		}
		Err(format!("{image_id} did not start"))
	}

	async fn state(&self, handle: &str) -> Result<JobState, String> {
		let dir = self.job_dir(handle);
		if let Ok(code) = std::fs::read_to_string(dir.join("exit")) {
			let code = code.trim().parse().map_err(|_| format!("{handle}: a bad exit file"))?;
			return Ok(JobState::Exited { code, oom: false });
		}
		if self.pid(handle).is_none() {
			return Ok(if dir.exists() { JobState::Created } else { JobState::Missing });
		}
		let alive = self.live_pid(handle).and_then(Self::process_state);
		Ok(match alive {
			Some('T') => JobState::Paused,
			Some(_) => JobState::Running,
			// Gone without writing its exit code: stopped by the worker (which writes it in a
			// moment) or killed with its supervisor.
			None => {
				tokio::time::sleep(Duration::from_secs(1)).await;
				match std::fs::read_to_string(dir.join("exit")) {
					Ok(code) => {
						JobState::Exited { code: code.trim().parse().unwrap_or(-1), oom: false }
					}
					Err(_) => JobState::Missing,
				}
			}
		})
	}

	async fn wait(&self, handle: &str) -> Result<JobState, String> {
		loop {
			match self.state(handle).await? {
				JobState::Running | JobState::Paused | JobState::Created => {
					tokio::time::sleep(Duration::from_millis(200)).await
				}
				done => return Ok(done),
			}
		}
	}

	async fn stop(&self, handle: &str, grace_secs: u32) -> Result<(), String> {
		if !matches!(self.state(handle).await?, JobState::Running | JobState::Paused) {
			return Ok(());
		}
		// The signal reaches the supervising shell too, which then cannot write the exit code:
		// the worker writes what the signal means (128 + its number), as a shell would report.
		self.signal(handle, "CONT")?;
		self.signal(handle, "TERM")?;
		let deadline = std::time::Instant::now() + Duration::from_secs(grace_secs.into());
		let mut code = 143;
		while matches!(self.state(handle).await?, JobState::Running | JobState::Paused) {
			if std::time::Instant::now() >= deadline && code == 143 {
				self.signal(handle, "KILL")?;
				code = 137;
			}
			tokio::time::sleep(Duration::from_millis(100)).await;
		}
		let exit = self.job_dir(handle).join("exit");
		if !exit.exists() {
			std::fs::write(&exit, format!("{code}\n")).map_err(|e| e.to_string())?;
		}
		Ok(())
	}

	async fn pause(&self, handle: &str) -> Result<(), String> {
		self.signal(handle, "STOP")
	}

	async fn unpause(&self, handle: &str) -> Result<(), String> {
		self.signal(handle, "CONT")
	}

	async fn collect_logs(&self, handle: &str, dir: &Path, cap: u64) -> Result<(), String> {
		use std::io::Read;
		std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
		for name in ["stdout", "stderr"] {
			let mut bytes = Vec::new();
			if let Ok(file) = std::fs::File::open(self.job_dir(handle).join(name)) {
				file.take(cap).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
			}
			std::fs::write(dir.join(name), bytes).map_err(|e| e.to_string())?;
		}
		Ok(())
	}

	async fn follow_logs(&self, handle: &str, dir: &Path, cap: u64) -> Result<(), String> {
		use std::io::{Read, Seek, SeekFrom, Write};
		std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
		let mut copies = Vec::new();
		for name in ["stdout", "stderr"] {
			copies.push((
				name,
				std::fs::File::create(dir.join(name)).map_err(|e| e.to_string())?,
				0u64,
			));
		}
		loop {
			// Read the state first: what the job wrote before it stopped is copied below.
			let stopped =
				matches!(self.state(handle).await?, JobState::Exited { .. } | JobState::Missing);
			for (name, copy, written) in copies.iter_mut() {
				let Ok(mut from) = std::fs::File::open(self.job_dir(handle).join(*name)) else {
					continue;
				};
				from.seek(SeekFrom::Start(*written)).map_err(|e| e.to_string())?;
				let mut bytes = Vec::new();
				from.take(cap.saturating_sub(*written))
					.read_to_end(&mut bytes)
					.map_err(|e| e.to_string())?;
				copy.write_all(&bytes).map_err(|e| e.to_string())?;
				*written += bytes.len() as u64;
			}
			if stopped {
				return Ok(());
			}
			tokio::time::sleep(std::time::Duration::from_millis(250)).await;
		}
	}

	async fn remove(&self, handle: &str) -> Result<(), String> {
		self.signal(handle, "KILL")?;
		let dir = self.job_dir(handle);
		match dir.exists() {
			true => std::fs::remove_dir_all(&dir).map_err(|e| e.to_string()),
			false => Ok(()),
		}
	}

	async fn list(&self, labels: &HashMap<String, String>) -> Result<Vec<FoundJob>, String> {
		let mut found = Vec::new();
		let Ok(entries) = std::fs::read_dir(&self.state_dir) else { return Ok(found) };
		for entry in entries.flatten() {
			let Ok(text) = std::fs::read_to_string(entry.path().join("labels.json")) else {
				continue;
			};
			let Ok(theirs) = serde_json::from_str::<HashMap<String, String>>(&text) else {
				continue;
			};
			if !labels.iter().all(|(key, value)| theirs.get(key) == Some(value)) {
				continue;
			}
			let Some(lease) = theirs.get(LEASE_LABEL).and_then(|l| l.parse().ok()) else {
				continue;
			};
			let handle = entry.file_name().to_string_lossy().into_owned();
			let state = self.state(&handle).await?;
			// Native jobs live under this worker's data folder: their outputs are its own.
			found.push(FoundJob { lease, handle, state, outputs: None });
		}
		Ok(found)
	}
}

/// The `prlimit` option that caps a job's memory. CPU jobs get an address-space limit. A CUDA
/// context reserves far more address space than it uses (unified addressing maps every GPU's
/// memory and the host's), so under such a limit a GPU job could not start CUDA at all: GPU
/// jobs get a data-segment limit instead, which counts the private writable memory they
/// really take (heap and anonymous mappings), not reservations.
fn memory_limit(bytes: i64, gpus: bool) -> String {
	match gpus {
		false => format!("--as={bytes}"),
		true => format!("--data={bytes}"),
	}
}

#[cfg(test)]
mod tests {
	use super::memory_limit;

	#[test]
	fn gpu_jobs_are_capped_by_data_not_by_address_space() {
		assert_eq!(memory_limit(1 << 30, false), "--as=1073741824");
		assert_eq!(memory_limit(1 << 30, true), "--data=1073741824");
	}
}
