//! Jobs as plain processes, for hosts without Docker: only the programs the configuration names
//! (`[[native.programs]]`), each pinned by its file's sha256, run **unisolated** (same kernel,
//! same filesystem, same network as the worker): for programs the provider trusts, never for a
//! stranger's code.
//!
//! An order's image `native/<name>@sha256:<digest>` runs the program `name` when its file hashes
//! to that digest. The job runs in the lease's `outputs` folder with `STINT_OUTPUTS`,
//! `STINT_INPUTS`, `STINT_LEASE`, the order's variables and `CUDA_VISIBLE_DEVICES` set to the
//! leased GPUs; in a session and process group of its own (`setsid`), with `prlimit` limits on
//! processes and memory, pinned (`taskset`) to as many of the host's CPUs as its share of them
//! rounds up to, the CPUs other live jobs are pinned to taken last. A small shell supervises it and writes its exit code to a file, so the
//! code survives a restart of the worker, which finds the job again by the labels kept beside it.
//! Its stdout and stderr go to files there; past their first `log_bytes` (all that is kept) the
//! worker frees their blocks as it follows them, so a job that prints for days fills no disk.
//!
//! What runs is a private copy of the program, hashed as it is copied: the file run is the file
//! checked, whatever happens to the configured path meanwhile. Signals (pause, stop) reach the
//! job's process group and every process that still carries the job's `STINT_STATE` in its
//! environment, so a helper the program started in a session of its own is paused and stopped
//! with it; once the job has ended, whatever it left running is killed. A program that clears
//! its environment and detaches escapes this: another reason these are for trusted programs.

use std::{
	collections::HashMap,
	path::{Path, PathBuf},
	process::{Command, Stdio},
	time::Duration,
};

use stint_primitives::{ExecutorKind, ReservedExit};

pub use super::files::sha256_file;
pub use super::job_user::NotRoot;
use super::job_user::{job_user, open_to_group};
use super::{
	files::{copy_hashed, trim, write_atomically},
	split_pinned, Executor, FoundJob, JobRequest, JobState, PrepareError, StartError, LEASE_LABEL,
};
use crate::config::NativeProgram;

/// How long a stop waits for the job's processes to go after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(10);

/// The native executor.
pub struct Native {
	programs: Vec<NativeProgram>,
	/// Where each job's state folder lives.
	state_dir: PathBuf,
	/// Held while a job's CPUs are chosen and recorded: two jobs starting at once are not
	/// given the same ones.
	pinning: std::sync::Mutex<()>,
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
		// The programs' copies run from here.
		let mount =
			rustix::fs::statvfs(&state_dir).map_err(|e| format!("{}: {e}", state_dir.display()))?;
		if mount.f_flag.contains(rustix::fs::StatVfsMountFlags::NOEXEC) {
			return Err(format!(
				"{} is on a noexec mount: the native executor runs its programs from there",
				state_dir.display()
			));
		}
		// util-linux's setsid (`--fork`), not a shell's or BusyBox's.
		let forks = Command::new("setsid")
			.args(["--fork", "true"])
			.stdout(Stdio::null())
			.stderr(Stdio::null())
			.status();
		if !forks.is_ok_and(|status| status.success()) {
			return Err("the native executor needs util-linux's `setsid` (with --fork)".into());
		}
		for tool in ["prlimit", "taskset", "kill", "setpriv"] {
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
		Ok(Self { programs, state_dir, pinning: Default::default() })
	}

	/// The program `job`'s image names, as its provider declared it; the order's fault if
	/// the order brings more than inputs: a command past the program's name, or variables.
	fn declared(&self, job: &JobRequest) -> Result<&NativeProgram, StartError> {
		let name = split_pinned(&job.spec.image)
			.and_then(|(name, _)| name.strip_prefix("native/").map(String::from))
			.unwrap_or_default();
		let program = self
			.programs
			.iter()
			.find(|program| program.name == name)
			.ok_or_else(|| format!("no program {name} is configured"))?;
		if job.spec.command.len() > 1 {
			return Err(StartError::Unstartable(format!(
				"{name} runs with the arguments its provider declared: an order names the \
				 program and brings inputs, never arguments ({} words past its name)",
				job.spec.command.len() - 1
			)));
		}
		if let Some(var) = job.spec.env.first() {
			return Err(StartError::Unstartable(format!(
				"{name} runs with the variables its provider declared: an order sets none ({})",
				String::from_utf8_lossy(&var.key)
			)));
		}
		Ok(program)
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

	/// The processes whose environment still holds job `handle`'s `STINT_STATE` (its supervisor,
	/// its program and what they started, in a session of their own or not), each with its
	/// process group. Only the job's processes carry that folder's name.
	fn members(&self, handle: &str) -> Vec<(u32, u32)> {
		let mut needle = b"STINT_STATE=".to_vec();
		needle.extend_from_slice(self.job_dir(handle).as_os_str().as_encoded_bytes());
		let me = std::process::id();
		let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
		entries
			.flatten()
			.filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
			.filter(|pid| *pid != me)
			.filter(|pid| {
				// A process the worker may not read is not one it may signal either.
				std::fs::read(format!("/proc/{pid}/environ"))
					.is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == needle.as_slice()))
			})
			.filter_map(|pid| Some((pid, Self::group(pid)?)))
			.collect()
	}

	/// The process group of `pid`, while it lives.
	fn group(pid: u32) -> Option<u32> {
		let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
		// Field 5; the fields after the command name start at field 3.
		stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
	}

	/// Signals the job's process group and each of its processes that left it: each process
	/// once.
	fn signal(&self, handle: &str, signal: &str) -> Result<(), String> {
		// Never a process group that is no longer the job's.
		let leader = self.live_pid(handle);
		if let Some(pid) = leader {
			// The whole process group: the supervising shell leads it.
			let _ = run("kill", &[&format!("-{signal}"), "--", &format!("-{pid}")]);
		}
		let strays: Vec<String> = self
			.members(handle)
			.into_iter()
			.filter(|(_, group)| Some(*group) != leader)
			.map(|(pid, _)| pid.to_string())
			.collect();
		if !strays.is_empty() {
			let mut args = vec![format!("-{signal}"), "--".into()];
			args.extend(strays);
			let _ = run("kill", &args.iter().map(String::as_str).collect::<Vec<_>>());
		}
		Ok(())
	}

	/// Waits (a moment at most) until the signal just sent has taken: the supervisor stopped, or
	/// no longer stopped. A signal is delivered after `kill` returns; a pause is not done until
	/// it has been.
	async fn settle(&self, handle: &str, stopped: bool) {
		for _ in 0..100 {
			match self.live_pid(handle).and_then(Self::process_state) {
				Some(state) if (state == 'T') != stopped => {
					tokio::time::sleep(Duration::from_millis(10)).await
				}
				_ => return,
			}
		}
	}

	/// Once the job has ended: kills what it left running (again while a process forks as it
	/// is killed), then says so with a marker file, so that this is done once.
	fn reap(&self, handle: &str) {
		let marker = self.job_dir(handle).join("reaped");
		if !marker.parent().is_some_and(Path::is_dir) || marker.exists() {
			return;
		}
		for _ in 0..5 {
			if self.members(handle).is_empty() {
				break;
			}
			let _ = self.signal(handle, "KILL");
			std::thread::sleep(Duration::from_millis(20));
		}
		let _ = std::fs::write(marker, b"");
	}

	/// How many live jobs are pinned to each CPU: the `cpus` files of the jobs that have not
	/// ended (a job whose supervisor is gone without a trace is not counted).
	fn pinned(&self) -> HashMap<usize, usize> {
		let mut load = HashMap::new();
		let Ok(entries) = std::fs::read_dir(&self.state_dir) else { return load };
		for entry in entries.flatten() {
			let dir = entry.path();
			let Ok(list) = std::fs::read_to_string(dir.join("cpus")) else { continue };
			let handle = entry.file_name().to_string_lossy().into_owned();
			let started = dir.join("pid").exists();
			if dir.join("exit").exists() || (started && self.live_pid(&handle).is_none()) {
				continue;
			}
			for cpu in parse_cpu_list(&list) {
				*load.entry(cpu).or_default() += 1;
			}
		}
		load
	}

	/// Chooses and records in `dir` the CPUs of a job whose share of them is `nano_cpus`:
	/// `None` when it may use all the worker's.
	fn pin(&self, dir: &Path, nano_cpus: i64) -> Result<Option<String>, String> {
		let _chosen = self.pinning.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
		let path = dir.join("cpus");
		if let Ok(list) = std::fs::read_to_string(&path) {
			return Ok(Some(list));
		}
		let mask = rustix::thread::sched_getaffinity(None)
			.map_err(|e| format!("cannot read the worker's CPUs: {e}"))?;
		let allowed: Vec<usize> =
			(0..rustix::thread::CpuSet::MAX_CPU).filter(|cpu| mask.is_set(*cpu)).collect();
		let Some(cpus) = pick_cpus(&allowed, &self.pinned(), nano_cpus) else { return Ok(None) };
		let list = cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
		write_atomically(&path, list.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
		Ok(Some(list))
	}
}

/// The CPUs of a list such as `0,2-3` (what `pin` writes, or the kernel's format).
fn parse_cpu_list(list: &str) -> Vec<usize> {
	let mut cpus = Vec::new();
	for part in list.trim().split(',').filter(|part| !part.is_empty()) {
		let (from, to) = part.split_once('-').unwrap_or((part, part));
		if let (Ok(from), Ok(to)) = (from.trim().parse::<usize>(), to.trim().parse::<usize>()) {
			cpus.extend(from..=to.min(from + 4096));
		}
	}
	cpus
}

/// The CPUs, out of `allowed`, for a job whose share is `nano_cpus` billionths of CPUs: as
/// many as the share rounds up to (one at least), those the fewest live jobs are pinned to
/// (`load`) first, lowest first among equals. `None` when the job may use all of them (no
/// share, or a share of all).
fn pick_cpus(
	allowed: &[usize],
	load: &HashMap<usize, usize>,
	nano_cpus: i64,
) -> Option<Vec<usize>> {
	if nano_cpus <= 0 {
		return None;
	}
	let wanted = (nano_cpus as u64).div_ceil(1_000_000_000).max(1) as usize;
	if wanted >= allowed.len() {
		return None;
	}
	let mut by_load: Vec<usize> = allowed.to_vec();
	by_load.sort_by_key(|cpu| (load.get(cpu).copied().unwrap_or(0), *cpu));
	let mut cpus: Vec<usize> = by_load.into_iter().take(wanted).collect();
	cpus.sort_unstable();
	Some(cpus)
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

	async fn start(&self, job: &JobRequest, image_id: &str) -> Result<String, StartError> {
		if let Some(why) = super::unpassable(&job.spec) {
			return Err(StartError::Unstartable(why));
		}
		let declared = self.declared(job)?;
		let user = job_user(&job.limits.job_user)?;
		let instance = job.labels.get(super::INSTANCE_LABEL).map(String::as_str).unwrap_or("once");
		let handle = format!("native-{instance}-lease-{}", job.lease);
		let dir = self.job_dir(&handle);
		if dir.join("pid").exists() {
			// Started before a crash: the same job, never a second one.
			return Ok(handle);
		}
		std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
		let labels = serde_json::to_string(&job.labels).expect("plain data");
		// Whole or not at all: a job whose labels cannot be read is not found again.
		write_atomically(&dir.join("labels.json"), labels.as_bytes()).map_err(|e| e.to_string())?;
		// The program's file is copied, and the copy is what runs: hashed as it is copied, it is
		// the file checked, whatever happens to the configured path meanwhile.
		let program = dir.join("program");
		let digest = stint_primitives::image_digest(&job.spec.image).map(hex::encode);
		let copied = copy_hashed(Path::new(image_id), &program)
			.map_err(|e| format!("cannot copy {image_id}: {e}"))?;
		if Some(copied) != digest {
			let _ = std::fs::remove_file(&program);
			return Err(format!("{image_id} no longer hashes to the order's digest").into());
		}
		if let Some((_, gid)) = user {
			// The job's user reaches its program, its outputs and inputs through its group,
			// and nothing else of the worker's: its folders' other files stay the worker's.
			let opened = |path: &Path, mode| open_to_group(path, gid, mode);
			opened(&program, 0o550)?;
			opened(&dir, 0o710)?;
			opened(&job.dirs.root, 0o710)?;
		}
		// `--fork`: the supervisor is setsid's child, not the worker's, which waits for setsid
		// alone and so leaves no zombie behind when the job ends.
		let mut command = Command::new("setsid");
		command
			.arg("--fork")
			.arg("sh")
			.arg("-c")
			.arg(
				"trap : TERM; echo $$ > \"$STINT_STATE/pid\"; \
				 ${STINT_CPUS:+taskset -c \"$STINT_CPUS\"} prlimit --nproc=\"$STINT_NPROC\" \
				 ${STINT_MEM:+\"$STINT_MEM\"} -- ${STINT_AS:+setpriv $STINT_AS --} \"$@\" \
				 > \"$STINT_STATE/stdout\" \
				 2> \"$STINT_STATE/stderr\" < /dev/null; echo $? > \"$STINT_STATE/exit.tmp\" \
				 && mv \"$STINT_STATE/exit.tmp\" \"$STINT_STATE/exit\"",
			)
			.arg("stint-native-job")
			.arg(&program)
			.args(&declared.args)
			.current_dir(job.dirs.outputs())
			.env_clear()
			.stdin(Stdio::null())
			.stdout(Stdio::null())
			.stderr(Stdio::null());
		// Not the worker's user: the job cannot read the worker's key nor its journal.
		if let Some((uid, gid)) = user {
			command.env(
				"STINT_AS",
				format!("--reuid={uid} --regid={gid} --clear-groups --no-new-privs"),
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
		if let Some(cpus) = self.pin(&dir, job.nano_cpus)? {
			command.env("STINT_CPUS", cpus);
		}
		if job.memory_bytes > 0 {
			command.env("STINT_MEM", memory_limit(job.memory_bytes, !job.gpu_uuids.is_empty()));
		}
		// Where the driver's libraries are found through the worker's own library path (a
		// driver installed outside the loader's cache), the job needs the same path.
		if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
			command.env("LD_LIBRARY_PATH", path);
		}
		// The supervisor outlives the worker: it is not waited for, only its files are read.
		let forked = command.status().map_err(|e| format!("cannot start {image_id}: {e}"))?;
		if !forked.success() {
			return Err(format!("cannot start {image_id}: setsid {forked}").into());
		}
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
		Err(format!("{image_id} did not start").into())
	}

	async fn state(&self, handle: &str) -> Result<JobState, String> {
		let dir = self.job_dir(handle);
		if let Ok(code) = std::fs::read_to_string(dir.join("exit")) {
			// Ended; with a code nobody can tell if the file does not hold one.
			let code = code.trim().parse().unwrap_or(-1);
			self.reap(handle);
			return Ok(JobState::Exited { code, oom: false });
		}
		if dir.join("lost").exists() {
			return Ok(JobState::Missing);
		}
		if self.pid(handle).is_none() {
			return Ok(if dir.exists() { JobState::Created } else { JobState::Missing });
		}
		// Whether the job's processes live is read from /proc: a worker that cannot read even
		// its own entry there (out of file descriptors, say) cannot tell, and says so rather
		// than take a running job for a vanished one.
		if Self::identity(std::process::id()).is_none() {
			return Err(format!("{handle}: cannot read /proc: the job's state is unknown"));
		}
		let alive = self.live_pid(handle).and_then(Self::process_state);
		Ok(match alive {
			Some('T') => JobState::Paused,
			Some(_) => JobState::Running,
			// The supervisor is gone, the job's processes not yet (the program finishing its
			// stop's grace, or one whose supervisor was killed alone): still running.
			None if !self.members(handle).is_empty() => JobState::Running,
			// Gone without writing its exit code: stopped by the worker (which writes it in a
			// moment) or killed with its supervisor.
			None => {
				tokio::time::sleep(Duration::from_secs(1)).await;
				let code = std::fs::read_to_string(dir.join("exit"));
				self.reap(handle);
				match code {
					Ok(code) => {
						JobState::Exited { code: code.trim().parse().unwrap_or(-1), oom: false }
					}
					Err(_) => {
						// Said once: the next reads answer at once.
						write_atomically(&dir.join("lost"), b"").map_err(|e| e.to_string())?;
						JobState::Missing
					}
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
		// SIGTERM reaches the supervising shell too, which outlives it (a trap: the program's
		// own disposition is the default again) and writes the program's exit code, whatever
		// the program made of the signal. SIGKILL ends the shell as well: the worker writes what
		// the signal means (128 + its number), as a shell would report.
		self.signal(handle, "CONT")?;
		self.signal(handle, "TERM")?;
		let deadline = std::time::Instant::now() + Duration::from_secs(grace_secs.into());
		let mut code = 143;
		while matches!(self.state(handle).await?, JobState::Running | JobState::Paused) {
			let now = std::time::Instant::now();
			if now >= deadline {
				// Every round: a process forked as the last KILL went out is killed too.
				self.signal(handle, "KILL")?;
				code = 137;
			}
			// A process that ignores even KILL (stuck in the kernel) does not hold the stop.
			if now >= deadline + KILL_WAIT {
				break;
			}
			tokio::time::sleep(Duration::from_millis(100)).await;
		}
		let exit = self.job_dir(handle).join("exit");
		if !exit.exists() {
			write_atomically(&exit, format!("{code}\n").as_bytes()).map_err(|e| e.to_string())?;
		}
		Ok(())
	}

	async fn pause(&self, handle: &str) -> Result<(), String> {
		self.signal(handle, "STOP")?;
		self.settle(handle, true).await;
		Ok(())
	}

	async fn unpause(&self, handle: &str) -> Result<(), String> {
		self.signal(handle, "CONT")?;
		self.settle(handle, false).await;
		Ok(())
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
			// What a job printed while no worker followed it no longer holds the disk.
			let _ = trim(&self.job_dir(handle).join(name), cap);
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
				false,
			));
		}
		loop {
			// Read the state first: what the job wrote before it stopped is copied below.
			let stopped =
				matches!(self.state(handle).await?, JobState::Exited { .. } | JobState::Missing);
			for (name, copy, written, unsupported) in copies.iter_mut() {
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
				if let Err(why) = trim(&self.job_dir(handle).join(*name), cap) {
					if !*unsupported {
						*unsupported = true;
						crate::log::warn(
							"executor",
							handle.rsplit_once("-lease-").and_then(|(_, id)| id.parse().ok()),
							format!("{name} cannot be trimmed past log_bytes ({why}): it grows"),
						);
					}
				}
			}
			if stopped {
				return Ok(());
			}
			tokio::time::sleep(std::time::Duration::from_millis(250)).await;
		}
	}

	async fn processes(&self, handle: &str) -> Result<Vec<u32>, String> {
		// The supervisor, its group, and whatever still carries the job's STINT_STATE.
		let Some(pid) = self.live_pid(handle) else { return Ok(Vec::new()) };
		let group = Self::group(pid);
		let mut pids: Vec<u32> = self.members(handle).into_iter().map(|(pid, _)| pid).collect();
		if let (Some(group), Ok(entries)) = (group, std::fs::read_dir("/proc")) {
			pids.extend(
				entries
					.flatten()
					.filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
					.filter(|other| Self::group(*other) == Some(group)),
			);
		}
		pids.push(pid);
		pids.sort_unstable();
		pids.dedup();
		Ok(pids)
	}

	async fn open_folders(
		&self,
		_handle: &str,
		_outputs: &Path,
		closed: &[PathBuf],
	) -> Result<(), String> {
		// A native job runs as the worker's user: its folders are opened as the worker's own
		// ([`super::folders::open_own`]); another user's got there some other way.
		Err(format!("{} folder(s) of another user than the worker's", closed.len()))
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
		// A folder that cannot be read is an error, never an empty list: a job left out would
		// read as vanished, and be reported lost while it runs.
		let unreadable = |e: std::io::Error| format!("{}: {e}", self.state_dir.display());
		let mut found = Vec::new();
		let entries = match std::fs::read_dir(&self.state_dir) {
			Ok(entries) => entries,
			Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
			Err(e) => return Err(unreadable(e)),
		};
		for entry in entries {
			let entry = entry.map_err(unreadable)?;
			let text = match std::fs::read_to_string(entry.path().join("labels.json")) {
				Ok(text) => text,
				// Not a job's folder, or one whose start wrote nothing yet.
				Err(e)
					if matches!(
						e.kind(),
						std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
					) =>
				{
					continue
				}
				Err(e) => return Err(unreadable(e)),
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
	use std::collections::HashMap;

	use super::{memory_limit, parse_cpu_list, pick_cpus};
	use crate::executor::files::{copy_hashed, sha256_file};

	#[test]
	fn a_job_gets_the_cpus_its_share_rounds_up_to_the_least_used_first() {
		const CPU: i64 = 1_000_000_000;
		let four = [0, 1, 2, 3];
		let none = HashMap::new();
		let busy = HashMap::from([(0, 1), (1, 2), (3, 1)]);
		// (allowed, load, share, CPUs pinned to)
		type Case<'a> = (&'a [usize], &'a HashMap<usize, usize>, i64, Option<Vec<usize>>);
		let cases: [Case; 9] = [
			// No share, or a share of them all: not pinned.
			(&four, &none, 0, None),
			(&four, &none, -1, None),
			(&four, &none, 4 * CPU, None),
			(&four, &none, 6 * CPU, None),
			(&[5], &none, CPU / 2, None),
			// A part of one CPU is one CPU; a part past a whole one more.
			(&four, &none, CPU / 10, Some(vec![0])),
			(&four, &none, CPU + 1, Some(vec![0, 1])),
			// The least used first, the lowest among equals.
			(&four, &busy, 2 * CPU, Some(vec![0, 2])),
			(&[1, 3, 7], &busy, CPU, Some(vec![7])),
		];
		for (allowed, load, nano_cpus, wanted) in cases {
			assert_eq!(pick_cpus(allowed, load, nano_cpus), wanted, "{allowed:?} {nano_cpus}");
		}
		assert_eq!(parse_cpu_list("0,2-4,9\n"), vec![0, 2, 3, 4, 9]);
		assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
		assert_eq!(parse_cpu_list("x,1"), vec![1]);
	}

	#[test]
	fn a_copy_is_the_bytes_hashed_and_a_stale_copy_is_replaced() {
		use std::os::unix::fs::PermissionsExt;
		let dir = tempfile::tempdir().unwrap();
		let (from, to) = (dir.path().join("program"), dir.path().join("copy"));
		// Known answer: sha256("abc") (FIPS 180-2, appendix B.1).
		let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
		std::fs::write(&from, b"abc").unwrap();
		assert_eq!(sha256_file(&from).unwrap(), abc);
		std::fs::write(&to, b"an older copy, longer than the program").unwrap();
		assert_eq!(copy_hashed(&from, &to).unwrap(), abc);
		assert_eq!(std::fs::read(&to).unwrap(), b"abc");
		assert_eq!(std::fs::metadata(&to).unwrap().permissions().mode() & 0o777, 0o500);
		// More than one buffer's worth.
		let big: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
		std::fs::write(&from, &big).unwrap();
		let hash = copy_hashed(&from, &to).unwrap();
		assert_eq!(std::fs::read(&to).unwrap(), big);
		assert_eq!(hash, sha256_file(&from).unwrap());
		assert!(copy_hashed(&dir.path().join("absent"), &to).is_err());
	}

	#[test]
	fn gpu_jobs_are_capped_by_data_not_by_address_space() {
		assert_eq!(memory_limit(1 << 30, false), "--as=1073741824");
		assert_eq!(memory_limit(1 << 30, true), "--data=1073741824");
	}
}
