//! The native executor: configured programs only, pinned by their sha256, with the arguments
//! their provider declared (an order brings neither arguments nor variables), run unisolated
//! in a process group of their own as the job's user (who cannot read the worker's key), with
//! an exit code that survives the worker.

mod common;

use std::{collections::HashMap, time::Duration};

use stint_client::job_file::Job;
use stint_primitives::ReservedExit;
use stint_worker::{
	commit::LeaseDirs,
	config::{Limits, NativeProgram},
	executor::{
		held, native::Native, Executor, JobRequest, JobState, PrepareError, StartError,
		INSTANCE_LABEL, LEASE_LABEL,
	},
};

/// The test job's program, built into `dir`: its sha256.
fn job_binary(dir: &std::path::Path) -> String {
	common::job_program(dir).1
}

/// A native executor whose programs are `jobs`'s, as a provider declares them: each lease's
/// program is the job binary with the words of its order's command past the first as its fixed
/// arguments. The orders then name their program and bring neither command nor variables.
fn native(dir: &std::path::Path, jobs: &mut [&mut JobRequest]) -> Native {
	Native::new(declared(dir, jobs), dir.join("state")).unwrap()
}

/// The programs of [`native`].
fn declared(dir: &std::path::Path, jobs: &mut [&mut JobRequest]) -> Vec<NativeProgram> {
	jobs.iter_mut().map(|job| declare(dir, job)).collect()
}

fn declare(dir: &std::path::Path, job: &mut JobRequest) -> NativeProgram {
	let image = String::from_utf8(job.spec.image.to_vec()).unwrap();
	let (name, sha256) = image.split_once("@sha256:").unwrap();
	let args =
		job.spec.command.iter().skip(1).map(|w| String::from_utf8(w.to_vec()).unwrap()).collect();
	job.spec.command = Default::default();
	NativeProgram {
		name: name.strip_prefix("native/").unwrap().into(),
		path: dir.join("job"),
		sha256: sha256.into(),
		args,
	}
}

/// Lease `lease`'s job: the program `job-<lease>`, the job binary with `command`'s words past
/// the first as its arguments (see [`native`]). It runs as the worker's own user: these tests'
/// folders are closed to others (`a_job_runs_as_the_job_user_and_cannot_read_the_workers_key`
/// runs one as `nobody`).
fn request(dir: &std::path::Path, lease: u64, sha256: &str, command: &[&str]) -> JobRequest {
	let image = format!("native/job-{lease}@sha256:{sha256}");
	let spec = Job { max_output_bytes: 1 << 20, ..Job::new(image, command) }.spec().unwrap();
	let dirs = LeaseDirs { root: dir.join(lease.to_string()) };
	dirs.create().unwrap();
	JobRequest {
		lease,
		spec,
		devices: vec![],
		gpu_uuids: vec!["GPU-a".into(), "GPU-b".into()],
		dirs,
		nano_cpus: 0,
		memory_bytes: 0,
		limits: Limits { job_user: String::new(), ..Limits::default() },
		labels: HashMap::from([
			(INSTANCE_LABEL.into(), format!("t{}", std::process::id())),
			(LEASE_LABEL.into(), lease.to_string()),
		]),
	}
}

#[tokio::test]
async fn a_configured_program_runs_with_its_declared_arguments_outputs_logs_and_gpus() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let command = [
		"job",
		"write",
		"r.txt",
		"42",
		"env",
		"CUDA_VISIBLE_DEVICES",
		"env",
		"STINT_AS",
		"exit",
		"5",
	];
	let mut job = request(dir.path(), 1, &sha256, &command);
	let native = native(dir.path(), &mut [&mut job]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	let state = tokio::time::timeout(Duration::from_secs(30), native.wait(&handle)).await.unwrap();
	assert_eq!(state.unwrap(), JobState::Exited { code: 5, oom: false });
	native.collect_logs(&handle, &job.dirs.logs(), 1 << 20).await.unwrap();
	let stdout = std::fs::read_to_string(job.dirs.logs().join("stdout")).unwrap();
	assert_eq!(stdout, "wrote r.txt\nCUDA_VISIBLE_DEVICES=GPU-a,GPU-b\nSTINT_AS=\n");
	assert_eq!(std::fs::read(job.dirs.outputs().join("r.txt")).unwrap(), b"42");
}

#[tokio::test]
async fn an_order_brings_a_native_program_inputs_only_never_arguments_nor_variables() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 11, &sha256, &["job", "write", "declared.txt", "yes"]);
	let native = native(dir.path(), &mut [&mut job]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	let word = |w: &str| w.as_bytes().to_vec().try_into().unwrap();
	// A python or torchrun would run whatever a buyer wrote after its name, or in its
	// variables (`PYTHONPATH` pointing at an input): the order's fault, at once, nothing run.
	let mut worded = job.clone();
	worded.spec.command = vec![word("job-11"), word("exit"), word("3")].try_into().unwrap();
	assert!(matches!(native.start(&worded, &program).await, Err(StartError::Unstartable(_))));
	for (key, value) in [("PYTHONPATH", "/inputs"), ("LD_PRELOAD", "/inputs/x.so"), ("X", "1")] {
		let mut with_var = job.clone();
		let var = stint_primitives::EnvVar {
			key: key.as_bytes().to_vec().try_into().unwrap(),
			value: value.as_bytes().to_vec().try_into().unwrap(),
		};
		with_var.spec.env.try_push(var).unwrap();
		match native.start(&with_var, &program).await {
			Err(StartError::Unstartable(why)) => assert!(why.contains(key), "{why}"),
			other => panic!("{key}: {other:?}"),
		}
	}
	assert!(native.list(&job.labels).await.unwrap().is_empty(), "nothing was started");
	// The program's name alone: it runs with its provider's arguments.
	job.spec.command = vec![word("job-11")].try_into().unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	let state = tokio::time::timeout(Duration::from_secs(30), native.wait(&handle)).await.unwrap();
	assert_eq!(state.unwrap(), JobState::Exited { code: 0, oom: false });
	assert_eq!(std::fs::read(job.dirs.outputs().join("declared.txt")).unwrap(), b"yes");
}

#[tokio::test]
async fn a_job_runs_as_the_job_user_and_cannot_read_the_workers_key() {
	use std::os::unix::fs::{MetadataExt, PermissionsExt};
	if !rustix::process::geteuid().is_root() {
		eprintln!("skipped: switching to the job's user needs root");
		return;
	}
	let dir = tempfile::tempdir().unwrap();
	// A data directory others may pass through, as a service's is; the worker's key in it is
	// its user's alone.
	std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
	let key = dir.path().join("worker.key");
	std::fs::write(&key, "//secret").unwrap();
	std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
	let key = key.to_str().unwrap();
	let sha256 = job_binary(dir.path());
	let command = ["job", "whoami", "-", "read", key, "write", "w.txt", "ok"];
	let mut job = request(dir.path(), 12, &sha256, &command);
	job.limits.job_user = stint_worker::config::DEFAULT_JOB_USER.into();
	let native = native(dir.path(), &mut [&mut job]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	let state = tokio::time::timeout(Duration::from_secs(30), native.wait(&handle)).await.unwrap();
	assert_eq!(state.unwrap(), JobState::Exited { code: 0, oom: false });
	native.collect_logs(&handle, &job.dirs.logs(), 1 << 20).await.unwrap();
	let stdout = std::fs::read_to_string(job.dirs.logs().join("stdout")).unwrap();
	assert_eq!(
		stdout,
		format!("uid=65534 gid=65534\nread {key}: Permission denied\nwrote w.txt\n")
	);
	let written = std::fs::metadata(job.dirs.outputs().join("w.txt")).unwrap();
	assert_eq!((written.uid(), written.gid()), (65534, 65534));
	// The same program as the worker's own user reads it: the switch is what keeps it out.
	let mut as_worker = request(dir.path(), 13, &sha256, &["job", "read", key]);
	let native = self::native(dir.path(), &mut [&mut as_worker]);
	let handle = native.start(&as_worker, &program).await.unwrap();
	native.wait(&handle).await.unwrap();
	native.collect_logs(&handle, &as_worker.dirs.logs(), 1 << 20).await.unwrap();
	let stdout = std::fs::read_to_string(as_worker.dirs.logs().join("stdout")).unwrap();
	assert_eq!(stdout, format!("read {key}: ok\n"));
}

#[tokio::test]
async fn only_configured_programs_with_their_digest_run() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 0, &sha256, &[]);
	let native = native(dir.path(), &mut [&mut job]);
	let unavailable = |result: Result<String, PrepareError>| match result {
		Err(PrepareError::Order(code, _)) => code == ReservedExit::ImageUnavailable,
		_ => false,
	};
	let other = "0".repeat(64);
	assert!(unavailable(native.resolve(format!("native/other@sha256:{sha256}").as_bytes()).await));
	assert!(unavailable(native.resolve(format!("native/job-0@sha256:{other}").as_bytes()).await));
	assert!(unavailable(native.resolve(format!("ghcr.io/x/job@sha256:{sha256}").as_bytes()).await));
	assert!(native.resolve(format!("native/job-0@sha256:{sha256}").as_bytes()).await.is_ok());
	// A program changed on disk after it was configured is the provider's problem: not run.
	std::fs::write(dir.path().join("job"), b"#!/bin/sh\necho changed\n").unwrap();
	assert!(matches!(
		native.resolve(format!("native/job-0@sha256:{sha256}").as_bytes()).await,
		Err(PrepareError::Provider(_))
	));
}

#[tokio::test]
async fn a_job_outlives_its_worker_and_is_paused_and_stopped_as_a_group() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 2, &sha256, &["job", "sleep", "2", "write", "x", "y"]);
	let mut long = request(dir.path(), 3, &sha256, &["job", "sleep", "60"]);
	let mut graceful = request(dir.path(), 4, &sha256, &["job", "onterm", "5", "sleep", "60"]);
	let programs = declared(dir.path(), &mut [&mut job, &mut long, &mut graceful]);
	let native = Native::new(programs.clone(), dir.path().join("state")).unwrap();
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	assert_eq!(native.start(&job, &program).await.unwrap(), handle, "one job per lease");
	drop(native);
	// A new worker finds the job by its labels, and its exit code once it ends.
	let again = Native::new(programs, dir.path().join("state")).unwrap();
	let found = again.list(&job.labels).await.unwrap();
	assert_eq!(found.len(), 1);
	assert_eq!(found[0].lease, 2);
	let state = again.wait(&handle).await.unwrap();
	assert_eq!(state, JobState::Exited { code: 0, oom: false });

	let handle = again.start(&long, &program).await.unwrap();
	tokio::time::sleep(Duration::from_millis(300)).await;
	again.pause(&handle).await.unwrap();
	assert_eq!(again.state(&handle).await.unwrap(), JobState::Paused);
	again.unpause(&handle).await.unwrap();
	assert_eq!(again.state(&handle).await.unwrap(), JobState::Running);
	again.stop(&handle, 1).await.unwrap();
	assert_eq!(again.state(&handle).await.unwrap(), JobState::Exited { code: 143, oom: false });
	again.remove(&handle).await.unwrap();
	assert_eq!(again.state(&handle).await.unwrap(), JobState::Missing);

	// A program that ends itself on SIGTERM, within the grace: its own exit code is kept, as
	// Docker keeps it (the supervisor outlives the signal to write it).
	let handle = again.start(&graceful, &program).await.unwrap();
	tokio::time::sleep(Duration::from_millis(300)).await;
	again.stop(&handle, 10).await.unwrap();
	assert_eq!(again.state(&handle).await.unwrap(), JobState::Exited { code: 5, oom: false });
	again.remove(&handle).await.unwrap();
}

/// `0\n1\n2\n…`, as the job's `lines` step prints it, cut at `bytes`.
fn lines_head(bytes: usize) -> Vec<u8> {
	let mut text = Vec::new();
	let mut n = 0u64;
	while text.len() < bytes {
		text.extend_from_slice(format!("{n}\n").as_bytes());
		n += 1;
	}
	text.truncate(bytes);
	text
}

/// The disk a file takes (its blocks), not its length.
fn allocated(path: &std::path::Path) -> u64 {
	use std::os::unix::fs::MetadataExt;
	std::fs::metadata(path).unwrap().blocks() * 512
}

#[tokio::test]
async fn a_job_that_prints_without_end_takes_no_more_disk_than_its_kept_logs() {
	const CAP: u64 = 64 * 1024;
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let state = |handle: &str| dir.path().join("state").join(handle).join("stdout");
	// About 20 MiB of stdout before and after a pause, followed as a worker follows a job.
	let command = ["job", "lines", "2700000", "sleep", "1", "lines", "2700000"];
	let mut job = request(dir.path(), 9, &sha256, &command);
	let mut unfollowed = request(dir.path(), 10, &sha256, &["job", "lines", "2700000"]);
	let native = native(dir.path(), &mut [&mut job, &mut unfollowed]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	let live = job.dirs.live_logs();
	tokio::time::timeout(Duration::from_secs(60), native.follow_logs(&handle, &live, CAP))
		.await
		.unwrap()
		.unwrap();
	assert_eq!(native.state(&handle).await.unwrap(), JobState::Exited { code: 0, oom: false });
	assert_eq!(std::fs::read(live.join("stdout")).unwrap(), lines_head(CAP as usize));
	let printed = std::fs::metadata(state(&handle)).unwrap().len();
	assert!(printed > 30 << 20, "the program printed on, untouched: {printed} bytes");
	assert!(allocated(&state(&handle)) <= CAP + 64 * 1024, "{}", allocated(&state(&handle)));
	// Its head is still there for a worker that collects the logs later.
	native.collect_logs(&handle, &job.dirs.logs(), CAP).await.unwrap();
	assert_eq!(std::fs::read(job.dirs.logs().join("stdout")).unwrap(), lines_head(CAP as usize));

	// A job no worker followed (it ended while the worker was down): collecting its logs frees
	// the rest.
	let handle = native.start(&unfollowed, &program).await.unwrap();
	native.wait(&handle).await.unwrap();
	assert!(allocated(&state(&handle)) > 10 << 20);
	native.collect_logs(&handle, &unfollowed.dirs.logs(), CAP).await.unwrap();
	assert!(allocated(&state(&handle)) <= CAP + 64 * 1024, "{}", allocated(&state(&handle)));
	let kept = std::fs::read(unfollowed.dirs.logs().join("stdout")).unwrap();
	assert_eq!(kept, lines_head(CAP as usize));
}

#[tokio::test]
async fn a_pid_that_names_another_process_now_is_not_the_job() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 9, &sha256, &["job", "sleep", "30"]);
	let native = native(dir.path(), &mut [&mut job]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	assert_eq!(native.state(&handle).await.unwrap(), JobState::Running);
	// The job dies with its supervisor (as in a reboot), leaving no exit code…
	let pid_file = dir.path().join("state").join(&handle).join("pid");
	let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
	let killed = std::process::Command::new("kill")
		.args(["-KILL", "--", &format!("-{pid}")])
		.status()
		.unwrap();
	assert!(killed.success());
	// …and its pid now names another process group, someone else's, started later (a start
	// time is counted in ticks of 10 ms: not within the job's own tick).
	std::thread::sleep(Duration::from_millis(50));
	let mut other = std::process::Command::new("setsid").args(["sleep", "30"]).spawn().unwrap();
	std::thread::sleep(Duration::from_millis(200));
	std::fs::write(&pid_file, other.id().to_string()).unwrap();
	assert_eq!(native.state(&handle).await.unwrap(), JobState::Missing);
	// Said once, for good: the next reads do not wait for an exit code again.
	assert!(pid_file.with_file_name("lost").exists());
	assert_eq!(native.state(&handle).await.unwrap(), JobState::Missing);
	native.stop(&handle, 1).await.unwrap();
	native.remove(&handle).await.unwrap();
	assert!(other.try_wait().unwrap().is_none(), "another process group was signalled");
	other.kill().unwrap();
	other.wait().unwrap();
}

/// The CPUs a job said it may run on (its `cpus` step), once it has said so.
async fn cpus_of(native: &Native, handle: &str, job: &JobRequest) -> Vec<usize> {
	let said = job.dirs.root.join("said");
	for _ in 0..200 {
		native.collect_logs(handle, &said, 1 << 10).await.unwrap();
		let stdout = std::fs::read_to_string(said.join("stdout")).unwrap_or_default();
		if let Some(list) = stdout.lines().find_map(|line| line.strip_prefix("cpus=")) {
			return list.split(',').map(|cpu| cpu.parse().unwrap()).collect();
		}
		tokio::time::sleep(Duration::from_millis(20)).await;
	}
	panic!("{handle} never said its CPUs");
}

#[tokio::test]
async fn jobs_run_on_their_share_of_the_cpus_and_not_on_each_others() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let host = std::thread::available_parallelism().unwrap().get();
	let command = ["job", "cpus", "-", "sleep", "30"];
	let mut jobs: Vec<JobRequest> =
		(20..24).map(|lease| request(dir.path(), lease, &sha256, &command)).collect();
	let native = native(dir.path(), &mut jobs.iter_mut().collect::<Vec<_>>());
	let [all, one, other, next] = jobs.try_into().unwrap();
	// A job with no share runs on every CPU the worker has.
	let program = native.resolve(&all.spec.image).await.unwrap();
	let handle = native.start(&all, &program).await.unwrap();
	assert_eq!(cpus_of(&native, &handle, &all).await.len(), host);
	native.stop(&handle, 1).await.unwrap();
	if host < 2 {
		return; // One CPU: every share of it is all of it.
	}
	// Two jobs with one CPU each, at once: one CPU each, not the same one, and a restart of the
	// worker gives a started job the CPUs it had.
	let mut handles = Vec::new();
	let mut seen = Vec::new();
	for mut job in [one, other] {
		job.nano_cpus = 1_000_000_000;
		let handle = native.start(&job, &program).await.unwrap();
		let cpus = cpus_of(&native, &handle, &job).await;
		assert_eq!(cpus.len(), 1, "{cpus:?}");
		assert!(!seen.contains(&cpus[0]), "{cpus:?} already taken by {seen:?}");
		seen.extend(cpus);
		assert_eq!(native.start(&job, &program).await.unwrap(), handle);
		handles.push(handle);
	}
	// Once one has ended its CPU is free again: the next job gets it.
	native.stop(&handles[0], 1).await.unwrap();
	let mut next = next;
	next.nano_cpus = 1_000_000_000;
	let handle = native.start(&next, &program).await.unwrap();
	assert_eq!(cpus_of(&native, &handle, &next).await, vec![seen[0]]);
	for handle in [&handles[1], &handle] {
		native.stop(handle, 1).await.unwrap();
	}
}

#[tokio::test]
async fn one_damaged_job_folder_hides_no_other_job() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut jobs: Vec<JobRequest> =
		[30, 31].map(|lease| request(dir.path(), lease, &sha256, &["job", "sleep", "30"])).into();
	let native = native(dir.path(), &mut jobs.iter_mut().collect::<Vec<_>>());
	let program = native.resolve(&jobs[0].spec.image).await.unwrap();
	let mut handles = Vec::new();
	for job in &jobs {
		handles.push(native.start(job, &program).await.unwrap());
	}
	// Lease 30's exit file holds no code (written on a full disk, say); a stray file and a
	// folder with no labels sit beside the jobs.
	let state = dir.path().join("state");
	native.stop(&handles[0], 1).await.unwrap();
	std::fs::write(state.join(&handles[0]).join("exit"), b"").unwrap();
	std::fs::write(state.join("stray"), b"").unwrap();
	std::fs::create_dir(state.join("empty")).unwrap();
	let labels = jobs[0].labels.clone();
	let mut listed: Vec<_> = native
		.list(&HashMap::from([(INSTANCE_LABEL.to_string(), labels[INSTANCE_LABEL].clone())]))
		.await
		.unwrap()
		.into_iter()
		.map(|job| (job.lease, job.state))
		.collect();
	listed.sort_by_key(|(lease, _)| *lease);
	assert_eq!(
		listed,
		vec![(30, JobState::Exited { code: -1, oom: false }), (31, JobState::Running)]
	);
	native.stop(&handles[1], 1).await.unwrap();
}

/// Whether process `pid` is gone (or a zombie, waiting to be reaped).
fn gone(pid: u32) -> bool {
	match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
		Ok(stat) => {
			stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
		}
		Err(_) => true,
	}
}

async fn detached_pid(job: &JobRequest) -> u32 {
	let path = job.dirs.outputs().join("detached");
	for _ in 0..100 {
		if let Ok(pid) = std::fs::read_to_string(&path) {
			if let Ok(pid) = pid.trim().parse() {
				return pid;
			}
		}
		tokio::time::sleep(Duration::from_millis(50)).await;
	}
	panic!("the job never detached a child");
}

async fn wait_gone(pid: u32) -> bool {
	for _ in 0..40 {
		if gone(pid) {
			return true;
		}
		tokio::time::sleep(Duration::from_millis(50)).await;
	}
	false
}

#[tokio::test]
async fn what_a_job_started_in_a_session_of_its_own_is_paused_and_ended_with_it() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 4, &sha256, &["job", "detach", "300", "sleep", "60"]);
	let mut ended = request(dir.path(), 5, &sha256, &["job", "detach", "300", "exit", "3"]);
	let native = native(dir.path(), &mut [&mut job, &mut ended]);
	// Stopped by the worker: its helper, out of the job's process group, is stopped too.
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	let helper = detached_pid(&job).await;
	assert!(!gone(helper));
	native.pause(&handle).await.unwrap();
	tokio::time::sleep(Duration::from_millis(200)).await;
	let stat = std::fs::read_to_string(format!("/proc/{helper}/stat")).unwrap();
	assert!(stat.rsplit_once(')').unwrap().1.trim_start().starts_with('T'), "{stat}");
	native.unpause(&handle).await.unwrap();
	native.stop(&handle, 1).await.unwrap();
	assert_eq!(native.state(&handle).await.unwrap(), JobState::Exited { code: 143, oom: false });
	assert!(wait_gone(helper).await, "the helper outlived its stopped job");

	// Ended by itself: what it left running is killed.
	let handle = native.start(&ended, &program).await.unwrap();
	let helper = detached_pid(&ended).await;
	let state = tokio::time::timeout(Duration::from_secs(30), native.wait(&handle)).await.unwrap();
	assert_eq!(state.unwrap(), JobState::Exited { code: 3, oom: false });
	assert!(wait_gone(helper).await, "the helper outlived its job");
}

#[tokio::test]
async fn the_file_run_is_the_file_hashed() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 6, &sha256, &["job", "sleep", "30"]);
	let native = native(dir.path(), &mut [&mut job]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	// Changed between the check and the start: not run.
	let original = std::fs::read(dir.path().join("job")).unwrap();
	std::fs::write(dir.path().join("job"), b"#!/bin/sh\necho changed\n").unwrap();
	assert!(native.start(&job, &program).await.is_err());
	// Changed once it runs: what runs is the copy that was hashed.
	std::fs::write(dir.path().join("job"), &original).unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	std::fs::write(dir.path().join("job"), b"#!/bin/sh\necho changed\n").unwrap();
	let copy = dir.path().join("state").join(&handle).join("program");
	assert_eq!(stint_worker::executor::native::sha256_file(&copy).unwrap(), sha256);
	assert_eq!(native.state(&handle).await.unwrap(), JobState::Running);
	native.stop(&handle, 1).await.unwrap();
	native.remove(&handle).await.unwrap();
}

#[tokio::test]
async fn a_deleted_file_a_job_keeps_open_counts_against_its_outputs() {
	let dir = tempfile::tempdir().unwrap();
	let sha256 = job_binary(dir.path());
	let mut job = request(dir.path(), 7, &sha256, &["job", "hold", "3000000", "sleep", "60"]);
	let native = native(dir.path(), &mut [&mut job]);
	let program = native.resolve(&job.spec.image).await.unwrap();
	let handle = native.start(&job, &program).await.unwrap();
	let outputs = job.dirs.outputs();
	let mut used = Default::default();
	for _ in 0..100 {
		used = held::job_usage(&native, &handle, None, &outputs).await;
		if used.held >= 3_000_000 {
			break;
		}
		tokio::time::sleep(Duration::from_millis(100)).await;
	}
	// Nothing under outputs/, yet 3 MB on the disk: over the order's 1 MiB.
	assert_eq!((used.bytes, used.held), (0, 3_000_000), "{used:?}");
	assert!(used.over(job.spec.max_output_bytes));
	assert!(native.processes(&handle).await.unwrap().len() >= 2, "the supervisor and the job");
	native.stop(&handle, 1).await.unwrap();
	assert!(native.processes(&handle).await.unwrap().is_empty());
	assert_eq!(held::job_usage(&native, &handle, None, &outputs).await.held, 0);
}
