//! The Docker executor against this machine's real engine, with the test job image built here
//! (a static binary `FROM scratch`): outputs, logs (their heads kept however much a job
//! prints), exit codes, time up, a wrong digest, a local
//! image found by its ID, no network and a read-only root, jobs found again by their labels.

mod common;

use std::{collections::HashMap, time::Duration};

use stint_client::job_file::Job;
use stint_primitives::{ReservedExit, StopReason};
use stint_worker::{
	commit::{self, LeaseDirs},
	config::Limits,
	executor::{
		docker::{container_name, Docker},
		Executor, JobRequest, JobState, PrepareError, StartError, CHAIN_LABEL, INSTANCE_LABEL,
		LEASE_LABEL,
	},
	once::{run_once, OnceJob},
};

fn request(dir: &std::path::Path, lease: u64, image: &str, command: &[&str]) -> JobRequest {
	let spec = Job { max_output_bytes: 1 << 20, ..Job::new(image, command) }.spec().unwrap();
	let dirs = LeaseDirs { root: dir.join(lease.to_string()) };
	dirs.create().unwrap();
	let instance = format!("test{:x}", std::process::id());
	JobRequest {
		lease,
		spec,
		devices: vec![],
		gpu_uuids: vec![],
		dirs,
		nano_cpus: 1_000_000_000,
		memory_bytes: 256 << 20,
		limits: Limits { stop_grace_secs: 1, ..Limits::default() },
		labels: HashMap::from([
			(CHAIN_LABEL.into(), "test".into()),
			(INSTANCE_LABEL.into(), instance),
			(LEASE_LABEL.into(), lease.to_string()),
		]),
	}
}

async fn docker() -> Docker {
	assert!(common::docker_available(), "these tests need a Docker engine");
	Docker::connect().await.expect("the engine answers")
}

async fn run(docker: &Docker, job: &JobRequest) -> (JobState, String, String) {
	let image = docker.resolve(&job.spec.image).await.expect("the test image is local");
	let handle = docker.start(job, &image).await.expect("the job starts");
	let state = tokio::time::timeout(Duration::from_secs(60), docker.wait(&handle))
		.await
		.expect("the job ends")
		.unwrap();
	docker.collect_logs(&handle, &job.dirs.logs(), 1 << 20).await.unwrap();
	docker.remove(&handle).await.unwrap();
	let read =
		|name| String::from_utf8(std::fs::read(job.dirs.logs().join(name)).unwrap()).unwrap();
	(state, read("stdout"), read("stderr"))
}

#[tokio::test]
async fn a_job_writes_outputs_and_logs_and_its_exit_code_is_kept() {
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let image = common::job_image();
	let ok = request(dir.path(), 1, &image, &["/job", "write", "result.txt", "42", "say", "hello"]);
	let (state, stdout, stderr) = run(&docker, &ok).await;
	assert_eq!(state, JobState::Exited { code: 0, oom: false });
	assert_eq!(stdout, "wrote result.txt\nhello\n");
	assert_eq!(stderr, "hello\n");
	assert_eq!(common::files(&ok.dirs.outputs()), vec![("result.txt".into(), b"42".to_vec())]);

	let failing = request(dir.path(), 2, &image, &["/job", "say", "bye", "exit", "7"]);
	let (state, stdout, _) = run(&docker, &failing).await;
	assert_eq!(state, JobState::Exited { code: 7, oom: false });
	assert_eq!(stdout, "bye\n");
}

#[tokio::test]
async fn a_job_that_prints_more_than_the_engine_keeps_has_the_head_of_its_logs_kept() {
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	// 64 KiB of each stream kept: the engine's file holds about 1.5 MiB of JSON lines, and
	// 200,000 lines make about 15 MiB of them.
	let mut job = request(dir.path(), 6, &common::job_image(), &["/job", "lines", "200000"]);
	job.limits.log_bytes = 1 << 16;
	let image = docker.resolve(&job.spec.image).await.unwrap();
	let handle = docker.start(&job, &image).await.unwrap();
	let kept = job.dirs.logs();
	docker.follow_logs(&handle, &kept, job.limits.log_bytes).await.unwrap();
	assert!(matches!(docker.state(&handle).await.unwrap(), JobState::Exited { code: 0, .. }));
	let printed: String = (0..200_000).map(|n| format!("{n}\n")).collect();
	let stdout = std::fs::read_to_string(kept.join("stdout")).unwrap();
	assert_eq!(stdout, printed[..1 << 16]);
	// The engine itself kept only the later part: its copy is not the head.
	let engine = dir.path().join("engine");
	docker.collect_logs(&handle, &engine, 1 << 16).await.unwrap();
	let late = std::fs::read_to_string(engine.join("stdout")).unwrap();
	assert!(!late.starts_with("0\n1\n"), "{:?}", &late[..64]);
	docker.remove(&handle).await.unwrap();
}

#[tokio::test]
async fn a_job_has_no_network_and_a_read_only_root() {
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let job = request(dir.path(), 3, &common::job_image(), &["/job", "net", "-", "rootfs", "-"]);
	let (state, stdout, _) = run(&docker, &job).await;
	// 42: it reached the network; 43: it wrote to its root filesystem.
	assert_eq!(state, JobState::Exited { code: 0, oom: false }, "{stdout}");
	assert_eq!(stdout, "no network\nread-only root\n");
}

/// An image that asks for root and preloads its own code (through the NVIDIA Container
/// Toolkit's hooks, up to 1.17.7, that ran on the host as root: CVE-2025-23266) gets neither:
/// the job runs as `nobody`, the loader's variables are empty, and what it writes is nobody's.
#[tokio::test]
async fn a_job_runs_as_nobody_with_the_loaders_variables_emptied_whatever_its_image_says() {
	use std::os::unix::fs::MetadataExt;
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let image = derived_image(
		"stint-test/hostile-env",
		"ENV LD_PRELOAD=/evil.so LD_AUDIT=/evil.so LD_LIBRARY_PATH=/evil\nUSER 0:0",
	);
	let image = format!("stint-test/hostile-env@{image}");
	let steps = [
		"/job",
		"whoami",
		"-",
		"env",
		"LD_PRELOAD",
		"env",
		"LD_AUDIT",
		"env",
		"LD_LIBRARY_PATH",
		"write",
		"f",
		"x",
	];
	let job = request(dir.path(), 12, &image, &steps);
	let (state, stdout, _) = run(&docker, &job).await;
	assert_eq!(state, JobState::Exited { code: 0, oom: false }, "{stdout}");
	assert_eq!(
		stdout, "uid=65534 gid=65534\nLD_PRELOAD=\nLD_AUDIT=\nLD_LIBRARY_PATH=\nwrote f\n",
		"before: uid=0 and the image's /evil.so"
	);
	let written = std::fs::metadata(job.dirs.outputs().join("f")).unwrap();
	assert_eq!((written.uid(), written.gid()), (65534, 65534));
	// `job_user = ""` leaves the image its own user (the loader's variables stay emptied).
	let as_image = as_image_user(request(dir.path(), 13, &image, &["/job", "whoami", "-"]));
	let (_, stdout, _) = run(&docker, &as_image).await;
	assert_eq!(stdout, "uid=0 gid=0\n");
}

#[tokio::test]
async fn a_job_past_its_time_is_stopped_and_a_stopped_job_is_found_by_its_labels() {
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let job =
		request(dir.path(), 4, &common::job_image(), &["/job", "say", "working", "sleep", "60"]);
	let image = docker.resolve(&job.spec.image).await.unwrap();
	let handle = docker.start(&job, &image).await.unwrap();
	// Starting again (a worker that crashed after creating it) finds the same container.
	assert_eq!(docker.start(&job, &image).await.unwrap(), handle);
	assert_eq!(docker.state(&handle).await.unwrap(), JobState::Running);
	assert_isolated(&handle, &job);
	let found = docker.list(&job.labels).await.unwrap();
	assert_eq!(found.len(), 1);
	assert_eq!((found[0].lease, found[0].handle.as_str()), (4, handle.as_str()));
	docker.pause(&handle).await.unwrap();
	assert_eq!(docker.state(&handle).await.unwrap(), JobState::Paused);
	docker.stop(&handle, 1).await.unwrap();
	match docker.state(&handle).await.unwrap() {
		// SIGTERM ends the job (143), or SIGKILL after the grace (137).
		JobState::Exited { code, .. } => assert!(code == 143 || code == 137, "{code}"),
		other => panic!("{other:?}"),
	}
	// A stopped job is kept (its exit code is collected later), until removed.
	assert_eq!(docker.list(&job.labels).await.unwrap().len(), 1);
	docker.remove(&handle).await.unwrap();
	assert_eq!(docker.state(&handle).await.unwrap(), JobState::Missing);
	assert!(docker.list(&job.labels).await.unwrap().is_empty());

	// A job that ends itself on SIGTERM, within the grace: its own exit code is kept.
	let graceful =
		request(dir.path(), 5, &common::job_image(), &["/job", "onterm", "5", "sleep", "60"]);
	let handle = docker.start(&graceful, &image).await.unwrap();
	tokio::time::sleep(Duration::from_millis(500)).await;
	docker.stop(&handle, 10).await.unwrap();
	assert_eq!(docker.state(&handle).await.unwrap(), JobState::Exited { code: 5, oom: false });
	docker.remove(&handle).await.unwrap();
}

#[tokio::test]
async fn images_are_found_by_id_and_a_digest_that_is_nowhere_is_the_orders_fault() {
	let docker = docker().await;
	let image = common::job_image();
	let id = docker.resolve(image.as_bytes()).await.unwrap();
	assert_eq!(id, format!("sha256:{}", image.rsplit_once(":").unwrap().1));
	let nowhere = format!("stint-test/job@sha256:{}", "0".repeat(64));
	match docker.resolve(nowhere.as_bytes()).await {
		Err(PrepareError::Order(code, _)) => assert_eq!(code, ReservedExit::ImageUnavailable),
		other => panic!("{other:?}"),
	}
	match docker.resolve(b"stint-test/job:latest").await {
		Err(PrepareError::Order(code, _)) => assert_eq!(code, ReservedExit::ImageUnavailable),
		other => panic!("{other:?}"),
	}
}

#[tokio::test]
async fn run_once_prints_a_receipt_that_commits_to_the_outputs_and_logs() {
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let command = ["/job", "write", "a.txt", "alpha", "big", "3000000"];
	let job = OnceJob {
		timeout_secs: 60,
		..OnceJob::new(
			Job { max_output_bytes: 2 << 20, ..Job::new(common::job_image(), &command) },
			dir.path().join("out"),
		)
	};
	let report = run_once(&docker, &job).await.unwrap();
	assert_eq!(report.exit_code, 0);
	// It wrote 3 MB where 2 MiB were allowed.
	assert_eq!(report.stop_reason, StopReason::OutputOverLimit);
	let dirs = LeaseDirs { root: job.out.clone() };
	let manifest = commit::manifest(&dirs.outputs()).unwrap();
	assert_eq!(report.receipt.output_root, manifest.root());
	assert_eq!(report.receipt.logs_root, commit::logs_manifest(&dirs.logs()).unwrap().root());
	assert_eq!(
		std::fs::read(dirs.receipt()).unwrap(),
		codec::Encode::encode(&report.receipt),
		"receipt.scale is the receipt"
	);
	assert_eq!(report.receipt_hash, format!("0x{}", hex::encode(report.receipt.hash())));

	// A file deleted while the job keeps it open fills the disk as much as any output: it
	// counts against the limit, though no walk of /outputs sees it.
	let mut held = OnceJob { out: dir.path().join("held"), ..job.clone() };
	held.job.command = ["/job", "hold", "3000000", "sleep", "60"].map(String::from).to_vec();
	let report = run_once(&docker, &held).await.unwrap();
	assert_eq!(report.stop_reason, StopReason::OutputOverLimit);
	assert!(commit::manifest(&dir.path().join("held/outputs")).unwrap().files.is_empty());

	let mut timed = OnceJob { timeout_secs: 1, out: dir.path().join("timed"), ..job };
	timed.job.command = ["/job", "sleep", "60"].map(String::from).to_vec();
	let report = run_once(&docker, &timed).await.unwrap();
	assert_eq!(report.stop_reason, StopReason::TimeLimit);
	assert_ne!(report.exit_code, 0);
}

/// What the engine itself says of a job's container: every isolation setting took effect.
fn assert_isolated(handle: &str, job: &JobRequest) {
	let out = std::process::Command::new("docker").args(["inspect", handle]).output().unwrap();
	assert!(out.status.success(), "docker inspect {handle}");
	let inspected: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
	let host = &inspected[0]["HostConfig"];
	assert_eq!(host["NetworkMode"], "none");
	assert_eq!(inspected[0]["Config"]["NetworkDisabled"], true);
	assert_eq!(host["ReadonlyRootfs"], true);
	assert_eq!(host["CapDrop"], serde_json::json!(["ALL"]));
	assert_eq!(host["SecurityOpt"], serde_json::json!(["no-new-privileges"]));
	assert_eq!(host["PidsLimit"], job.limits.pids);
	assert_eq!(host["Memory"], job.memory_bytes);
	assert_eq!(host["MemorySwap"], job.memory_bytes, "no swap beyond the memory");
	assert_eq!(host["NanoCpus"], job.nano_cpus);
	assert_eq!(host["RestartPolicy"]["Name"], "no");
	assert_eq!(host["AutoRemove"], false, "an exit code outlives the job");
	assert_eq!(host["LogConfig"]["Type"], "json-file");
	let engine_log = stint_worker::executor::docker::engine_log_bytes(job.limits.log_bytes);
	assert_eq!(host["LogConfig"]["Config"]["max-size"], engine_log.to_string());
	let tmp = host["Tmpfs"]["/tmp"].as_str().unwrap();
	assert!(tmp.contains(&format!("size={}m", job.limits.tmp_mib)), "{tmp}");
	let binds: Vec<&str> =
		host["Binds"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect();
	assert!(binds.iter().any(|b| b.ends_with(":/inputs:ro")), "{binds:?}");
	assert!(binds.iter().any(|b| b.ends_with(":/outputs:rw")), "{binds:?}");
	assert_eq!(binds.len(), 2, "nothing else of the host: {binds:?}");
	assert!(host["DeviceRequests"].is_null(), "no GPU asked for, none given");
	for (key, value) in &job.labels {
		assert_eq!(inspected[0]["Config"]["Labels"][key], value.as_str());
	}
}

/// `job` run as its image's own user rather than the worker's fixed one.
fn as_image_user(mut job: JobRequest) -> JobRequest {
	job.limits.job_user = String::new();
	job
}

/// An image made from the test image by the Dockerfile lines `lines` (no context needed).
fn derived_image(name: &str, lines: &str) -> String {
	use std::io::Write;
	let base = common::job_image();
	let mut build = std::process::Command::new("docker")
		.args(["build", "-q", "-t", name, "-"])
		.env("DOCKER_BUILDKIT", "0")
		.stdin(std::process::Stdio::piped())
		.stdout(std::process::Stdio::piped())
		.spawn()
		.unwrap();
	let from = base.split_once('@').unwrap().1;
	write!(build.stdin.take().unwrap(), "FROM {from}\n{lines}\n").unwrap();
	let out = build.wait_with_output().unwrap();
	assert!(out.status.success(), "docker build {name}");
	String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test]
async fn an_image_and_command_that_start_no_process_are_the_orders_fault_and_leave_nothing() {
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let image = common::job_image();
	let id = docker.resolve(image.as_bytes()).await.unwrap();
	let volumes: String = (0..17).map(|i| format!("VOLUME /v{i}\n")).collect();
	let cases = [
		// No such executable (refused at start, the container already made).
		(request(dir.path(), 31, &image, &["/nope"]), id.clone()),
		// No command at all (refused at create).
		(request(dir.path(), 32, &image, &[]), derived_image("stint-test/nocmd", "ENTRYPOINT []")),
		// A user the image does not have (left to the image: `job_user = ""`).
		(
			as_image_user(request(dir.path(), 33, &image, &[])),
			derived_image("stint-test/nouser", "USER nobody"),
		),
		// More volumes than a job may have (each would be a tmpfs).
		(
			request(dir.path(), 34, &image, &["/job", "exit", "0"]),
			derived_image("stint-test/vols", &volumes),
		),
	];
	for (job, image_id) in cases {
		match docker.start(&job, &image_id).await {
			Err(StartError::Unstartable(_)) => {}
			other => panic!("lease {}: {other:?}", job.lease),
		}
		let left = docker.state(&container_name(&job)).await.unwrap();
		assert_eq!(left, JobState::Missing, "lease {}", job.lease);
	}
}

/// The engine opens the folders a job closed to the worker: read, write and search for others,
/// the owner and the rest of the mode kept, nothing in them touched; a name no ustar header
/// holds (long, not UTF-8) included.
#[tokio::test]
async fn the_engine_opens_the_folders_a_job_closed_and_touches_nothing_in_them() {
	use std::os::unix::{ffi::OsStrExt, fs::MetadataExt};
	let docker = docker().await;
	let dir = tempfile::tempdir().unwrap();
	let long = "l".repeat(150);
	let command = [
		"/job", "mkdir", "a", "700", "mkdir", "a/b", "1750", "write", "a/b/f", "kept", "mkdir",
		&long, "700",
	];
	let job = request(dir.path(), 41, &common::job_image(), &command);
	let image = docker.resolve(&job.spec.image).await.unwrap();
	let handle = docker.start(&job, &image).await.unwrap();
	let state = docker.wait(&handle).await.unwrap();
	assert_eq!(state, JobState::Exited { code: 0, oom: false });
	let outputs = job.dirs.outputs();
	let odd = std::ffi::OsStr::from_bytes(b"\xffodd");
	std::fs::create_dir(outputs.join(odd)).unwrap();
	std::fs::set_permissions(
		outputs.join(odd),
		std::os::unix::fs::PermissionsExt::from_mode(0o700),
	)
	.unwrap();
	let folders: Vec<std::path::PathBuf> =
		["a", "a/b", long.as_str()].iter().map(Into::into).chain([odd.into()]).collect();
	docker.open_folders(&handle, &outputs, &folders).await.unwrap();
	let mode = |path: &std::path::Path| std::fs::metadata(outputs.join(path)).unwrap().mode();
	assert_eq!(mode("a".as_ref()) & 0o7777, 0o707);
	assert_eq!(mode("a/b".as_ref()) & 0o7777, 0o757, "sticky dropped, group kept");
	assert_eq!(mode(long.as_ref()) & 0o7777, 0o707);
	assert_eq!(mode(odd.as_ref()) & 0o7777, 0o707);
	assert_eq!(std::fs::read_to_string(outputs.join("a/b/f")).unwrap(), "kept");
	assert_eq!(
		std::fs::metadata(outputs.join("a")).unwrap().uid(),
		65534,
		"the job's owner (nobody) kept"
	);
	docker.remove(&handle).await.unwrap();
}

/// A worker run as a provider's own user (not root) beside a job that runs as root in its
/// container: what the job hides in a folder closed to the worker counts against its limit and
/// is in the manifest, a job that closes a folder again as soon as it is opened is over its
/// limit, and what is left can be removed by the worker's user. Run here as `nobody` in the
/// engine's group (the test itself runs as root).
#[tokio::test]
async fn a_worker_that_is_not_root_counts_and_can_remove_what_a_root_job_closed_to_it() {
	use std::os::unix::fs::{MetadataExt, PermissionsExt};
	if !is_root() {
		eprintln!("skipped: needs root to run the worker as another user");
		return;
	}
	let _ = docker().await;
	let dir = tempfile::tempdir().unwrap();
	std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o777)).unwrap();
	// Where `nobody` can run it from.
	let worker = dir.path().join("stint-worker");
	std::fs::copy(env!("CARGO_BIN_EXE_stint-worker"), &worker).unwrap();
	let engine_group = std::fs::metadata("/var/run/docker.sock").unwrap().gid();
	let run_as_nobody = |name: &str, command: &[&str], limit: u64| {
		let out = dir.path().join(name);
		let job = dir.path().join(format!("{name}.toml"));
		std::fs::write(&job, common::job_toml(&common::job_image(), command, limit)).unwrap();
		let ran = std::process::Command::new("setpriv")
			.args(["--reuid=65534", "--regid=65534", &format!("--groups={engine_group}")])
			.arg(&worker)
			.args(["run-once", "--timeout-secs", "60", "--out"])
			.arg(&out)
			.arg(&job)
			// As root, the image's own user: a job run as the worker's user (its default,
			// nobody) owns nothing the worker cannot enter.
			.args(["--job-user", ""])
			.output()
			.unwrap();
		// Exit 3: the job ran and failed (killed over its limit); the report is on stdout.
		assert!(matches!(ran.status.code(), Some(0 | 3)), "{ran:?}");
		let report: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
		(report, out)
	};

	// 3 MB under a folder only root may enter, where 2 MiB are allowed; a file beside it.
	let (report, out) = run_as_nobody(
		"closed",
		&[
			"/job", "mkdir", "c", "700", "mkdir", "c/d", "700", "write", "c/d/f", "kept", "big-at",
			"c/d/big", "3000000",
		],
		2 << 20,
	);
	assert_eq!(report["stop_reason"], "OutputOverLimit", "{report}");
	let outputs = LeaseDirs { root: out.clone() }.outputs();
	let manifest = commit::manifest(&outputs).unwrap();
	assert!(manifest.files.iter().any(|f| f.path == "c/d/f"), "{manifest:?}");
	assert_eq!(report["output_root"], format!("0x{}", hex::encode(manifest.root())));
	// What the worker's user removes at the end of the retention, it can.
	let removed = std::process::Command::new("setpriv")
		.args(["--reuid=65534", "--regid=65534", "--clear-groups", "rm", "-r"])
		.arg(&out)
		.status()
		.unwrap();
	assert!(removed.success());
	assert!(!out.exists());

	// A few bytes in a folder the job closes again every millisecond: hidden, so over.
	let (report, _) = run_as_nobody(
		"hiding",
		&["/job", "mkdir", "h", "700", "reclose", "h", "write", "h/x", "small", "sleep", "30"],
		2 << 20,
	);
	assert_eq!(report["stop_reason"], "OutputOverLimit", "{report}");
}

/// Whether this process's effective user is root.
fn is_root() -> bool {
	let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
	status.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}
