//! Jobs as Docker containers, through bollard.
//!
//! - The API version is negotiated with the engine (engines in the field speak older APIs than
//!   bollard's default): at connect, or, for a worker started while the engine was down, at its
//!   first answer. Until then every call says the engine does not answer.
//! - `name@sha256:D` runs the local image whose ID is `sha256:D` (locally built images have no
//!   repo digest) or whose repo digests hold D; otherwise it is pulled by digest, never from a
//!   loopback or private registry, and held to a size ([`PullRules`]: its layers, and what it
//!   unpacks to, watched during the pull and checked after). The container runs the image by
//!   ID.
//! - A container has no network, a read-only root filesystem, `/outputs` writable, the inputs
//!   read-only under `/inputs`, a `tmpfs` `/tmp`, every capability dropped, no new privileges,
//!   a pids limit, memory without swap and its share of the CPUs, capped logs, labels, and no
//!   restart policy. Leased GPUs are a device request by UUID (never a count with ids).

use std::{
	collections::HashMap,
	path::{Path, PathBuf},
	sync::{Arc, Mutex},
	time::Duration,
};

use bollard::{
	container::LogOutput,
	errors::Error as DockerError,
	models::{
		ContainerCreateBody, ContainerStateStatusEnum, DeviceRequest, HostConfig,
		HostConfigLogConfig, RestartPolicy, RestartPolicyNameEnum,
	},
	query_parameters::{
		AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, ListContainersOptionsBuilder,
		LogsOptionsBuilder, RemoveContainerOptionsBuilder, StopContainerOptionsBuilder,
		UploadToContainerOptionsBuilder,
	},
};
use futures::StreamExt;
use stint_primitives::{is_job_env_name, ExecutorKind, ReservedExit};

pub use super::pull::{PullRules, DEFAULT_MAX_IMAGE_MIB};
use super::{
	split_pinned, Executor, FoundJob, JobRequest, JobState, PrepareError, StartError, LEASE_LABEL,
};

/// A Docker engine.
#[derive(Clone, Default)]
pub struct Docker {
	/// What it may pull for a job.
	rules: PullRules,
	/// Images pulled and not yet asked for ([`Executor::take_pulled`]).
	pulled: Arc<Mutex<Vec<(String, u64)>>>,
	/// The engine, once an API version is agreed with it.
	engine: Arc<Mutex<Option<bollard::Docker>>>,
	/// Jobs this process started attached to their output: where the copy goes and the task
	/// that writes it (see [`Docker::attach`]).
	attached: Arc<Mutex<HashMap<String, Attached>>>,
}

type Attached = (PathBuf, tokio::task::JoinHandle<Result<(), String>>);

fn text(error: DockerError) -> String {
	error.to_string()
}

/// Whether the engine's refusal to create or start a container is the order's doing: its image
/// and command start no process. Only answers that say so plainly: anything else (an engine
/// that cannot give GPUs, a full disk) is tried again.
fn unstartable(error: &DockerError) -> bool {
	let DockerError::DockerResponseServerError { status_code, message } = error else {
		return false;
	};
	let said = |text: &str| message.contains(text);
	// `No command specified` (create); runc's `exec: "/x": stat /x: no such file or directory`
	// or `permission denied` (start); `unable to find user nobody: no matching entries in
	// passwd file` (start, a 500 on the engines we run).
	(*status_code == 400 && (said("No command specified") || said("exec: ")))
		|| said("unable to find user")
		|| said("no matching entries in passwd file")
}

/// An image `VOLUME` path as the engine compares it with mount destinations (Go's
/// `filepath.Clean`: no empty or `.` parts, `..` taken back lexically, no trailing slash);
/// `None` for a relative one.
fn clean_path(path: &str) -> Option<String> {
	if !path.starts_with('/') {
		return None;
	}
	let mut parts: Vec<&str> = Vec::new();
	for part in path.split('/') {
		match part {
			"" | "." => {}
			".." => {
				parts.pop();
			}
			part => parts.push(part),
		}
	}
	Some(format!("/{}", parts.join("/")))
}

/// The image's `VOLUME`s that need a tmpfs of their own: cleaned, without duplicates, and
/// without those the job's own mounts (and `/`) already cover.
fn image_volumes(declared: &[String]) -> Vec<String> {
	let mut volumes: Vec<String> = declared
		.iter()
		.filter_map(|volume| clean_path(volume))
		.filter(|volume| !matches!(volume.as_str(), "/" | "/outputs" | "/inputs" | "/tmp"))
		.collect();
	volumes.sort();
	volumes.dedup();
	volumes
}

fn not_found(error: &DockerError) -> bool {
	matches!(error, DockerError::DockerResponseServerError { status_code: 404, .. })
}

/// Writes the `stdout` and `stderr` pieces of `stream` into `dir`, each at most `cap` bytes
/// (what is past the cap is read and dropped), until the stream ends.
async fn copy_capped(
	mut stream: impl futures::Stream<Item = Result<LogOutput, DockerError>> + Unpin,
	dir: &Path,
	cap: u64,
) -> Result<(), String> {
	use std::io::Write;
	std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
	let open = |name: &str| std::fs::File::create(dir.join(name)).map_err(|e| e.to_string());
	let (mut stdout, mut stderr) = (open("stdout")?, open("stderr")?);
	let (mut out_len, mut err_len) = (0u64, 0u64);
	while let Some(piece) = stream.next().await {
		let (file, written, bytes) = match piece.map_err(text)? {
			LogOutput::StdOut { message } => (&mut stdout, &mut out_len, message),
			LogOutput::StdErr { message } => (&mut stderr, &mut err_len, message),
			_ => continue,
		};
		let room = cap.saturating_sub(*written) as usize;
		let take = bytes.len().min(room);
		file.write_all(&bytes[..take]).map_err(|e| e.to_string())?;
		*written += take as u64;
	}
	stdout.sync_all().map_err(|e| e.to_string())?;
	stderr.sync_all().map_err(|e| e.to_string())
}

/// The size of the engine's log file for a job whose logs keep `log_bytes` of each stream. The
/// file counts JSON lines (a timestamp and the stream's name around every line), and past its
/// size keeps the later part: room for both streams four times over and a MiB, so a job that
/// writes near its cap in lines of any usual length loses none of what is kept.
pub fn engine_log_bytes(log_bytes: u64) -> u64 {
	log_bytes.saturating_mul(8).saturating_add(1 << 20)
}

impl Docker {
	/// Writes the job's `stdout` and `stderr` into `dir` from their start, each at most `cap`
	/// bytes; with `follow`, goes on as the job writes until it stops.
	async fn write_logs(
		&self,
		handle: &str,
		dir: &Path,
		cap: u64,
		follow: bool,
	) -> Result<(), String> {
		let options =
			LogsOptionsBuilder::default().stdout(true).stderr(true).follow(follow).build();
		let engine = self.engine().await?;
		copy_capped(engine.logs(handle, Some(options)), dir, cap).await
	}

	/// Attaches to a created job's output before it starts, and copies it into `dir` (each
	/// stream's first `cap` bytes, the rest read and dropped) until the job stops: straight from
	/// the job, so it has each stream's head however much the job prints, where the engine's
	/// capped file keeps the later part. The copy ends with the attachment (this process's end,
	/// or an engine restart); [`Executor::follow_logs`] of this job then waits for it.
	async fn attach(&self, engine: &bollard::Docker, id: &str, dir: &Path, cap: u64) {
		let options =
			AttachContainerOptionsBuilder::default().stdout(true).stderr(true).stream(true).build();
		// Without the attachment the job still runs; its logs come from the engine's file.
		let Ok(attached) = engine.attach_container(id, Some(options)).await else { return };
		let to = dir.to_path_buf();
		let task = tokio::spawn(async move {
			// Its input half is held until the output ends: nothing is written to it.
			let _input = attached.input;
			copy_capped(attached.output, &to, cap).await
		});
		self.attached
			.lock()
			.expect("not poisoned")
			.insert(id.to_string(), (dir.to_path_buf(), task));
	}

	/// Connects to the local engine (`DOCKER_HOST` or the default socket) and negotiates the API
	/// version; an error if the engine does not answer.
	pub async fn connect() -> Result<Self, String> {
		let docker = Self::default();
		docker.engine().await?;
		Ok(docker)
	}

	/// The same engine, pulling by `rules`.
	pub fn with_rules(mut self, rules: PullRules) -> Self {
		self.rules = rules;
		self
	}

	/// The API version agreed with the engine, once it answered.
	pub fn api_version(&self) -> Option<String> {
		let engine = self.engine.lock().expect("not poisoned");
		engine.as_ref().map(|engine| engine.client_version().to_string())
	}

	/// The engine, negotiating the API version with it first if that has not been done yet.
	pub async fn engine(&self) -> Result<bollard::Docker, String> {
		if let Some(engine) = self.engine.lock().expect("not poisoned").clone() {
			return Ok(engine);
		}
		let engine = bollard::Docker::connect_with_local_defaults()
			.map_err(|e| format!("cannot reach the Docker engine: {e}"))?;
		let engine = tokio::time::timeout(Duration::from_secs(5), engine.negotiate_version())
			.await
			.map_err(|_| "the Docker engine does not answer within 5 s".to_string())?
			.map_err(|e| format!("the Docker engine does not answer: {e}"))?;
		*self.engine.lock().expect("not poisoned") = Some(engine.clone());
		Ok(engine)
	}

	async fn find_local(&self, name: &str, digest: &str) -> Result<Option<String>, PrepareError> {
		let engine = self.engine().await.map_err(PrepareError::Provider)?;
		// A locally built image: its ID is the digest.
		match engine.inspect_image(digest).await {
			Ok(image) if image.id.as_deref() == Some(digest) => return Ok(image.id),
			Ok(_) => {}
			Err(error) if not_found(&error) => {}
			Err(error) => return Err(PrepareError::Provider(text(error))),
		}
		// A pulled image: its repo digests name the digest.
		let reference = format!("{name}@{digest}");
		match engine.inspect_image(&reference).await {
			Ok(image) => {
				let pinned = image
					.repo_digests
					.unwrap_or_default()
					.iter()
					.any(|repo| repo.ends_with(&format!("@{digest}")));
				match pinned {
					true => Ok(image.id),
					false => Err(PrepareError::Order(
						ReservedExit::ImageDigestMismatch,
						format!("{reference} resolves to an image without that digest"),
					)),
				}
			}
			Err(error) if not_found(&error) => Ok(None),
			Err(error) => Err(PrepareError::Provider(text(error))),
		}
	}
}

/// The dynamic loader's variables, emptied in every job's environment.
pub const LOADER_VARIABLES: [&str; 4] =
	["LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "LD_ORIGIN_PATH"];

/// The most image `VOLUME`s replaced by a sized tmpfs.
const MAX_IMAGE_VOLUMES: usize = 16;

/// The container for `job` on the image `image_id`, whose `VOLUME`s (cleaned, at most
/// [`MAX_IMAGE_VOLUMES`]) are `volumes`.
fn container_body(job: &JobRequest, image_id: &str, volumes: &[String]) -> ContainerCreateBody {
	let spec = &job.spec;
	let words: Vec<String> =
		spec.command.iter().map(|word| String::from_utf8_lossy(word).into_owned()).collect();
	let (entrypoint, cmd) = match words.split_first() {
		Some((program, args)) => (Some(vec![program.clone()]), Some(args.to_vec())),
		None => (None, None),
	};
	// Only names a job may set; the worker's own after them (the last of a name wins), and the
	// GPUs the container sees named here too: an image's `NVIDIA_VISIBLE_DEVICES=all` on an
	// engine whose default runtime is NVIDIA's would otherwise show it every GPU of the host.
	let mut env: Vec<String> = spec
		.env
		.iter()
		.filter(|var| is_job_env_name(&var.key))
		.map(|var| {
			format!("{}={}", String::from_utf8_lossy(&var.key), String::from_utf8_lossy(&var.value))
		})
		.collect();
	// Whatever the image's `ENV` says, the loader preloads and audits nothing and searches no
	// path the image chose: the NVIDIA Container Toolkit's hooks run with the container's
	// environment, and through 1.17.7 an image's `LD_PRELOAD` ran its code on the host as root
	// (CVE-2025-23266). Images find their libraries through `ld.so.conf`, as NVIDIA's do.
	env.extend(LOADER_VARIABLES.iter().map(|name| format!("{name}=")));
	env.push(format!("STINT_LEASE={}", job.lease));
	env.push("STINT_OUTPUTS=/outputs".into());
	env.push("STINT_INPUTS=/inputs".into());
	env.push(match job.gpu_uuids.is_empty() {
		true => "NVIDIA_VISIBLE_DEVICES=void".into(),
		false => format!("NVIDIA_VISIBLE_DEVICES={}", job.gpu_uuids.join(",")),
	});
	let device_requests = (!job.gpu_uuids.is_empty()).then(|| {
		vec![DeviceRequest {
			driver: Some("nvidia".into()),
			device_ids: Some(job.gpu_uuids.clone()),
			capabilities: Some(vec![vec!["gpu".into(), "compute".into(), "utility".into()]]),
			..Default::default()
		}]
	});
	let mut log_options = HashMap::new();
	log_options.insert("max-size".to_string(), engine_log_bytes(job.limits.log_bytes).to_string());
	log_options.insert("max-file".to_string(), "1".to_string());
	let mut tmpfs = HashMap::new();
	tmpfs.insert("/tmp".to_string(), format!("rw,nosuid,nodev,size={}m", job.limits.tmp_mib));
	// An image's `VOLUME` would be a writable volume on the host's disk that no limit watches
	// and that outlives the container: each is a sized tmpfs instead (counted in its memory).
	// An image that declares more than MAX_IMAGE_VOLUMES is not started at all.
	for volume in volumes.iter().take(MAX_IMAGE_VOLUMES) {
		tmpfs
			.entry(volume.clone())
			.or_insert_with(|| format!("rw,nosuid,nodev,size={}m", job.limits.tmp_mib));
	}
	ContainerCreateBody {
		image: Some(image_id.to_string()),
		entrypoint,
		cmd,
		env: Some(env),
		labels: Some(job.labels.clone()),
		// A fixed unprivileged user, not the image's (see `Limits::job_user`).
		user: (!job.limits.job_user.is_empty()).then(|| job.limits.job_user.clone()),
		network_disabled: Some(true),
		working_dir: Some("/outputs".into()),
		host_config: Some(HostConfig {
			network_mode: Some("none".into()),
			readonly_rootfs: Some(true),
			binds: Some(vec![
				format!("{}:/outputs:rw", job.dirs.outputs().display()),
				format!("{}:/inputs:ro", job.dirs.inputs().display()),
			]),
			tmpfs: Some(tmpfs),
			cap_drop: Some(vec!["ALL".into()]),
			security_opt: Some(vec!["no-new-privileges".into()]),
			pids_limit: Some(job.limits.pids),
			memory: (job.memory_bytes > 0).then_some(job.memory_bytes),
			memory_swap: (job.memory_bytes > 0).then_some(job.memory_bytes),
			nano_cpus: (job.nano_cpus > 0).then_some(job.nano_cpus),
			device_requests,
			log_config: Some(HostConfigLogConfig {
				typ: Some("json-file".into()),
				config: Some(log_options),
			}),
			restart_policy: Some(RestartPolicy {
				name: Some(RestartPolicyNameEnum::NO),
				maximum_retry_count: None,
			}),
			auto_remove: Some(false),
			..Default::default()
		}),
		..Default::default()
	}
}

/// The container's name for a job: one per worker journal and lease.
pub fn container_name(job: &JobRequest) -> String {
	let instance = job.labels.get(super::INSTANCE_LABEL).map(String::as_str).unwrap_or("once");
	format!("stint-{instance}-lease-{}", job.lease)
}

fn state_of(state: Option<&bollard::models::ContainerState>) -> JobState {
	let Some(state) = state else { return JobState::Missing };
	match state.status {
		Some(ContainerStateStatusEnum::CREATED) => JobState::Created,
		Some(ContainerStateStatusEnum::RUNNING) | Some(ContainerStateStatusEnum::RESTARTING) => {
			JobState::Running
		}
		Some(ContainerStateStatusEnum::PAUSED) => JobState::Paused,
		Some(ContainerStateStatusEnum::EXITED) | Some(ContainerStateStatusEnum::DEAD) => {
			JobState::Exited {
				code: state.exit_code.unwrap_or(-1) as i32,
				oom: state.oom_killed.unwrap_or(false),
			}
		}
		_ => JobState::Running,
	}
}

impl Executor for Docker {
	fn kind(&self) -> ExecutorKind {
		ExecutorKind::Docker
	}

	async fn gpus_supported(&self) -> Option<bool> {
		match self.engine().await.ok()?.info().await {
			Ok(info) => Some(info.runtimes.unwrap_or_default().contains_key("nvidia")),
			Err(_) => None,
		}
	}

	async fn ready(&self) -> Result<(), String> {
		let engine = self.engine().await?;
		match tokio::time::timeout(Duration::from_secs(5), engine.ping()).await {
			Ok(Ok(_)) => Ok(()),
			Ok(Err(e)) => Err(format!("the Docker engine does not answer: {e}")),
			Err(_) => Err("the Docker engine does not answer within 5 s".into()),
		}
	}

	fn take_pulled(&self) -> Vec<(String, u64)> {
		std::mem::take(&mut *self.pulled.lock().expect("not poisoned"))
	}

	async fn remove_image(&self, image_id: &str) -> Result<(), String> {
		let options = bollard::query_parameters::RemoveImageOptionsBuilder::default().build();
		match self.engine().await?.remove_image(image_id, Some(options), None).await {
			Ok(_) => Ok(()),
			Err(error) if not_found(&error) => Ok(()),
			Err(error) => Err(text(error)),
		}
	}

	async fn resolve(&self, image: &[u8]) -> Result<String, PrepareError> {
		let (name, digest) = split_pinned(image).ok_or_else(|| {
			PrepareError::Order(ReservedExit::ImageUnavailable, "the image is not pinned".into())
		})?;
		let engine = self.engine().await.map_err(PrepareError::Provider)?;
		self.ready().await.map_err(PrepareError::Provider)?;
		if let Some(id) = self.find_local(&name, &digest).await? {
			return Ok(id);
		}
		let reference = format!("{name}@{digest}");
		let registry = super::registry_of(&name);
		if !self.rules.private_registries && super::private_registry(registry) {
			return Err(PrepareError::Order(
				ReservedExit::ImageUnavailable,
				format!(
					"{reference}: {registry} is a loopback or private registry, never pulled from"
				),
			));
		}
		// Its size from the registry first: an image past the limit is refused before a byte
		// of it is pulled.
		super::manifest::within(&name, &digest, self.rules).await?;
		super::pull::pull(&engine, &reference, self.rules).await?;
		let id = self.find_local(&name, &digest).await?.ok_or_else(|| {
			PrepareError::Order(
				ReservedExit::ImageUnavailable,
				format!("{reference} was pulled but cannot be found"),
			)
		})?;
		let bytes = super::pull::unpacked_within(&engine, &id, &reference, self.rules).await?;
		self.pulled.lock().expect("not poisoned").push((id.clone(), bytes));
		Ok(id)
	}

	async fn start(&self, job: &JobRequest, image_id: &str) -> Result<String, StartError> {
		let refused = |error: DockerError| match unstartable(&error) {
			true => StartError::Unstartable(text(error)),
			false => StartError::Other(text(error)),
		};
		if let Some(why) = super::unpassable(&job.spec) {
			return Err(StartError::Unstartable(why));
		}
		let name = container_name(job);
		let engine = self.engine().await?;
		let id = match engine.inspect_container(&name, None).await {
			// Created before a crash: the same container, never a second one.
			Ok(existing) => existing.id.unwrap_or(name.clone()),
			Err(error) if not_found(&error) => {
				let declared: Vec<String> = engine
					.inspect_image(image_id)
					.await
					.map_err(text)?
					.config
					.and_then(|config| config.volumes)
					.map(|volumes| volumes.into_iter().collect())
					.unwrap_or_default();
				let volumes = image_volumes(&declared);
				if volumes.len() > MAX_IMAGE_VOLUMES {
					return Err(StartError::Unstartable(format!(
						"the image declares {} volumes, more than the {MAX_IMAGE_VOLUMES} a job \
						 may have",
						volumes.len()
					)));
				}
				let options = CreateContainerOptionsBuilder::default().name(&name).build();
				engine
					.create_container(Some(options), container_body(job, image_id, &volumes))
					.await
					.map_err(refused)?
					.id
			}
			Err(error) => return Err(text(error).into()),
		};
		if self.state(&id).await? == JobState::Created {
			self.attach(&engine, &id, &job.dirs.live_logs(), job.limits.log_bytes).await;
			if let Err(error) = engine.start_container(&id, None).await {
				// The next try attaches anew.
				if let Some((_, copy)) = self.attached.lock().expect("not poisoned").remove(&id) {
					copy.abort();
				}
				let error = refused(error);
				if let StartError::Unstartable(_) = error {
					// Never to start: nothing of it is kept (its result says why).
					let _ = self.remove(&id).await;
				}
				return Err(error);
			}
		}
		Ok(id)
	}

	async fn state(&self, handle: &str) -> Result<JobState, String> {
		match self.engine().await?.inspect_container(handle, None).await {
			Ok(container) => Ok(state_of(container.state.as_ref())),
			Err(error) if not_found(&error) => Ok(JobState::Missing),
			Err(error) => Err(text(error)),
		}
	}

	async fn wait(&self, handle: &str) -> Result<JobState, String> {
		loop {
			// The wait call errs for a non-zero exit code, and may end when the engine
			// restarts: the container's state says what happened.
			let engine = self.engine().await?;
			let mut waiting = engine.wait_container(handle, None);
			let _ = waiting.next().await;
			match self.state(handle).await? {
				JobState::Running | JobState::Paused | JobState::Created => {
					tokio::time::sleep(std::time::Duration::from_millis(200)).await;
				}
				done => return Ok(done),
			}
		}
	}

	async fn stop(&self, handle: &str, grace_secs: u32) -> Result<(), String> {
		if self.state(handle).await? == JobState::Paused {
			// A paused container cannot take SIGTERM.
			let _ = self.engine().await?.unpause_container(handle).await;
		}
		let options = StopContainerOptionsBuilder::default().t(grace_secs as i32).build();
		match self.engine().await?.stop_container(handle, Some(options)).await {
			Ok(()) => Ok(()),
			Err(DockerError::DockerResponseServerError { status_code: 304 | 404, .. }) => Ok(()),
			Err(error) => Err(text(error)),
		}
	}

	async fn pause(&self, handle: &str) -> Result<(), String> {
		match self.state(handle).await? {
			JobState::Running => self.engine().await?.pause_container(handle).await.map_err(text),
			_ => Ok(()),
		}
	}

	async fn unpause(&self, handle: &str) -> Result<(), String> {
		match self.state(handle).await? {
			JobState::Paused => self.engine().await?.unpause_container(handle).await.map_err(text),
			_ => Ok(()),
		}
	}

	async fn collect_logs(&self, handle: &str, dir: &Path, cap: u64) -> Result<(), String> {
		self.write_logs(handle, dir, cap, false).await
	}

	async fn follow_logs(&self, handle: &str, dir: &Path, cap: u64) -> Result<(), String> {
		// A job this process started: its copy is made from its attachment.
		let attached = self.attached.lock().expect("not poisoned").remove(handle);
		let Some((copy, task)) = attached else {
			return self.write_logs(handle, dir, cap, true).await;
		};
		task.await.map_err(|e| e.to_string())??;
		if copy != dir {
			std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
			for name in ["stdout", "stderr"] {
				std::fs::copy(copy.join(name), dir.join(name)).map_err(|e| e.to_string())?;
			}
		}
		Ok(())
	}

	async fn processes(&self, handle: &str) -> Result<Vec<u32>, String> {
		let engine = self.engine().await?;
		let container = engine.inspect_container(handle, None).await.map_err(text)?;
		let pid = container.state.and_then(|state| state.pid).unwrap_or(0);
		match u32::try_from(pid) {
			// The container's own pid namespace: every process it started, and only those.
			Ok(pid) if pid > 0 => {
				tokio::task::spawn_blocking(move || super::held::namespace_of(pid))
					.await
					.map_err(|e| e.to_string())
			}
			_ => Ok(Vec::new()),
		}
	}

	async fn open_folders(
		&self,
		handle: &str,
		outputs: &Path,
		closed: &[PathBuf],
	) -> Result<(), String> {
		// The engine runs as root: a tar of the folders alone, each with its owner and its
		// opened mode, unpacked over `/outputs` changes their modes and nothing in them (the
		// engine unpacks in the container's root, so a link the job swapped in meanwhile leads
		// only into the container's own files).
		let mut tar = Vec::new();
		for folder in closed {
			let Ok(meta) = std::fs::symlink_metadata(outputs.join(folder)) else { continue };
			if meta.is_dir() {
				use std::os::unix::fs::MetadataExt;
				let mode = super::folders::opened_mode(meta.mode());
				super::tar::folder(&mut tar, folder, mode, meta.uid(), meta.gid(), meta.mtime());
			}
		}
		if tar.is_empty() {
			return Ok(());
		}
		tar.extend_from_slice(&[0; 1024]);
		let options = UploadToContainerOptionsBuilder::default()
			.path("/outputs")
			// A folder the job replaced with a file meanwhile stays a file.
			.no_overwrite_dir_non_dir("true")
			.build();
		self.engine()
			.await?
			.upload_to_container(handle, Some(options), bollard::body_full(tar.into()))
			.await
			.map_err(text)
	}

	async fn remove(&self, handle: &str) -> Result<(), String> {
		self.attached.lock().expect("not poisoned").remove(handle);
		// With its anonymous volumes (an image's `VOLUME`s), which nothing else would remove.
		let options = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
		match self.engine().await?.remove_container(handle, Some(options)).await {
			Ok(()) => Ok(()),
			Err(error) if not_found(&error) => Ok(()),
			Err(error) => Err(text(error)),
		}
	}

	async fn list(&self, labels: &HashMap<String, String>) -> Result<Vec<FoundJob>, String> {
		let mut filters: HashMap<String, Vec<String>> = HashMap::new();
		filters.insert(
			"label".into(),
			labels.iter().map(|(key, value)| format!("{key}={value}")).collect(),
		);
		let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
		let containers = self.engine().await?.list_containers(Some(options)).await.map_err(text)?;
		let mut found = Vec::new();
		for container in containers {
			let outputs = container.mounts.unwrap_or_default().into_iter().find_map(|mount| {
				(mount.destination.as_deref() == Some("/outputs"))
					.then_some(mount.source)
					.flatten()
					.map(std::path::PathBuf::from)
			});
			let (Some(id), Some(lease)) = (
				container.id,
				container.labels.and_then(|l| l.get(LEASE_LABEL).and_then(|v| v.parse().ok())),
			) else {
				continue;
			};
			let state = self.state(&id).await?;
			found.push(FoundJob { lease, handle: id, state, outputs });
		}
		Ok(found)
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::{commit::LeaseDirs, config::Limits};

	fn job(gpu_uuids: Vec<String>) -> JobRequest {
		let image = format!("stint/job@sha256:{}", "a".repeat(64));
		let spec = stint_client::job_file::Job::new(image, &["/job"]).spec().unwrap();
		JobRequest {
			lease: 1,
			spec,
			devices: vec![],
			gpu_uuids,
			dirs: LeaseDirs { root: "/tmp/lease".into() },
			nano_cpus: 0,
			memory_bytes: 0,
			limits: Limits::default(),
			labels: HashMap::new(),
		}
	}

	/// The leased GPUs by UUID, with the capabilities CUDA jobs need, and never a count beside
	/// the ids (the engine would refuse both, or give GPUs that were not leased).
	#[test]
	fn leased_gpus_are_asked_for_by_uuid_and_nothing_else() {
		let uuids = vec!["GPU-a".to_string(), "GPU-b".to_string()];
		let body = container_body(&job(uuids.clone()), "sha256:x", &[]);
		let host = body.host_config.unwrap();
		let requests = host.device_requests.unwrap();
		assert_eq!(requests.len(), 1);
		let request = &requests[0];
		assert_eq!(request.driver.as_deref(), Some("nvidia"));
		assert_eq!(request.device_ids.as_ref(), Some(&uuids));
		assert_eq!(request.count, None);
		assert_eq!(
			request.capabilities,
			Some(vec![vec!["gpu".to_string(), "compute".to_string(), "utility".to_string()]])
		);
		let env = body.env.unwrap();
		assert!(env.contains(&"NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b".to_string()), "{env:?}");
		let none = container_body(&job(vec![]), "sha256:x", &[]);
		assert_eq!(none.user.as_deref(), Some("65534:65534"), "nobody, whatever the image says");
		let env = none.env.unwrap();
		assert!(env.contains(&"NVIDIA_VISIBLE_DEVICES=void".to_string()));
		for name in LOADER_VARIABLES {
			assert!(env.contains(&format!("{name}=")), "{name} emptied: {env:?}");
		}
		let none = none.host_config.unwrap();
		assert!(none.device_requests.is_none());
		// Memory and CPUs left to the host only when the lease sets no share.
		assert_eq!((none.memory, none.memory_swap, none.nano_cpus), (None, None, None));
	}

	/// The order's environment never sets what picks the GPUs or what the worker sets, and an
	/// image's volumes are sized tmpfs, not unwatched disk.
	#[test]
	fn the_order_sets_only_its_own_variables_and_volumes_are_bounded() {
		let mut job = job(vec![]);
		for (key, value) in
			[("EPOCHS", "3"), ("NVIDIA_VISIBLE_DEVICES", "all"), ("STINT_LEASE", "9")]
		{
			let var = stint_primitives::EnvVar {
				key: key.as_bytes().to_vec().try_into().unwrap(),
				value: value.as_bytes().to_vec().try_into().unwrap(),
			};
			job.spec.env.try_push(var).unwrap();
		}
		let volumes = image_volumes(&["/data/".into(), "/outputs".into()]);
		let body = container_body(&job, "sha256:x", &volumes);
		let env = body.env.unwrap();
		assert!(env.contains(&"EPOCHS=3".to_string()));
		assert!(!env.iter().any(|var| var.ends_with("=all") || var == "STINT_LEASE=9"), "{env:?}");
		let tmpfs = body.host_config.unwrap().tmpfs.unwrap();
		assert!(tmpfs["/data"].contains("size="), "{tmpfs:?}");
		assert!(!tmpfs.contains_key("/outputs"));
	}

	/// The engine skips an image volume only when a mount has exactly its cleaned path: a
	/// `/a//b` or `/a/./b` left as written would get a volume on the host's disk.
	#[test]
	fn image_volumes_are_cleaned_as_the_engine_cleans_them() {
		let declared: Vec<String> =
			["/a//b/./c/", "/a/b/c", "/x/../outputs/", "/data/../data", "relative", "/", "/tmp/"]
				.map(String::from)
				.to_vec();
		assert_eq!(image_volumes(&declared), ["/a/b/c", "/data"]);
		assert_eq!(clean_path("/.."), Some("/".into()));
		assert_eq!(clean_path("/a/b/../../.."), Some("/".into()));
	}

	#[test]
	fn only_the_engines_plain_word_makes_a_start_the_orders_fault() {
		let answer = |status_code, message: &str| DockerError::DockerResponseServerError {
			status_code,
			message: message.into(),
		};
		for theirs in [
			answer(400, "No command specified"),
			answer(
				400,
				"failed to create shim task: OCI runtime create failed: runc create failed: \
				 unable to start container process: exec: \"/nope\": stat /nope: no such file \
				 or directory: unknown",
			),
			answer(500, "unable to find user nobody: no matching entries in passwd file"),
		] {
			assert!(unstartable(&theirs), "{theirs}");
		}
		for ours in [
			answer(500, "could not select device driver \"nvidia\" with capabilities: [[gpu]]"),
			answer(500, "no space left on device"),
			answer(400, "invalid mount config"),
			answer(404, "No such image"),
		] {
			assert!(!unstartable(&ours), "{ours}");
		}
	}
}
