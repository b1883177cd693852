//! The outputs API: what a lease produced, served to its buyer only.
//!
//! Every request under `/leases/<id>/` carries a [`SignedFetchAuth`] in the `x-stint-fetch-auth`
//! header, signed by the lease's buyer (401 when missing or expired, 403 when signed by another
//! key or for another lease or chain). The buyer is read from the journal, so the API works
//! without a node.
//!
//! - `GET /leases/<id>/manifest`: `{"files": [{"path", "size", "blake2_256"}]}` of the outputs;
//! - `GET /leases/<id>/files/<path>`: an output file (paths that climb out are refused);
//! - `GET /leases/<id>/receipt`: the SCALE-encoded execution receipt (once the job stopped);
//! - `GET /leases/<id>/logs/manifest`, `…/logs/files/<stdout|stderr>`: the logs as committed;
//! - `GET /leases/<id>/logs/<stdout|stderr>?offset=N[&follow=1]`: a log from byte N, also while
//!   the job runs; with `follow=1` the response goes on until the job stops (or nothing new
//!   came for 60 s: the client follows again from its offset);
//! - `GET /leases/<id>/status`: the worker's phase of the lease, as JSON;
//! - `GET /health`: `ok` (no authorisation).

use std::{
	fs,
	path::{Path, PathBuf},
	sync::{
		atomic::{AtomicUsize, Ordering},
		Arc,
	},
	time::Duration,
};

use stint_primitives::{is_safe_output_path, FetchAuthError, LeaseId, SignedFetchAuth};

use crate::{
	commit::{self, LeaseDirs},
	http::{self, Body, Next, Reply, Request, Source},
	journal::{Journal, LeaseEntry, Phase},
};

/// How many `follow=1` log requests are answered at once.
pub const MAX_FOLLOWS: usize = 64;

/// What the API reads.
pub struct Api {
	pub journal: Arc<Journal>,
	pub data_dir: PathBuf,
	/// Follows being answered now.
	pub follows: Arc<AtomicUsize>,
}

impl Api {
	pub fn new(journal: Arc<Journal>, data_dir: PathBuf) -> Self {
		Self { journal, data_dir, follows: Arc::new(AtomicUsize::new(0)) }
	}
}

fn reply(status: u16, body: impl Into<String>) -> Reply {
	Reply::text(status, body)
}

/// A file the worker wrote itself (a log, the receipt), never through a symbolic link.
fn file(path: &Path, offset: u64) -> Reply {
	match fs::symlink_metadata(path) {
		Ok(meta) if meta.is_file() => {}
		_ => return reply(404, "no such file"),
	}
	match fs::File::open(path) {
		Ok(handle) => Reply::file(handle, offset),
		Err(_) => reply(404, "no such file"),
	}
}

/// A log read while the job runs: what is there, then more as it is written; once the job
/// stopped, the rest from the log as committed, then the end. It holds one of the API's
/// [`MAX_FOLLOWS`] follow slots until it is dropped.
struct Follow {
	live: PathBuf,
	committed: PathBuf,
	offset: u64,
	journal: Arc<Journal>,
	lease: LeaseId,
	/// Polls in a row that found nothing new.
	quiet: u32,
	follows: Arc<AtomicUsize>,
}

impl Drop for Follow {
	fn drop(&mut self) {
		self.follows.fetch_sub(1, Ordering::SeqCst);
	}
}

/// A follow that finds nothing new for this long ends (the client follows again from its
/// offset): a silent job's follower must not hold one of the API's few follow slots for good,
/// nor one whose client went away unnoticed (nothing is written to find out).
const FOLLOW_QUIET: Duration = Duration::from_secs(60);

impl Follow {
	fn read_at(path: &Path, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
		use std::io::{Read, Seek, SeekFrom};
		match fs::File::open(path) {
			Ok(mut handle) => {
				handle.seek(SeekFrom::Start(offset))?;
				handle.read(buf)
			}
			Err(_) => Ok(0),
		}
	}
}

impl Source for Follow {
	fn next(&mut self) -> std::io::Result<Next> {
		let stopped = matches!(
			self.journal.get(self.lease).ok().flatten().map(|e| e.phase),
			Some(Phase::Exited | Phase::Done) | None
		);
		let from = if stopped { &self.committed } else { &self.live };
		let mut buf = vec![0; 64 * 1024];
		let n = Self::read_at(from, self.offset, &mut buf)?;
		if n > 0 {
			buf.truncate(n);
			self.offset += n as u64;
			self.quiet = 0;
			return Ok(Next::Data(buf));
		}
		if stopped || http::STREAM_POLL * self.quiet >= FOLLOW_QUIET {
			return Ok(Next::End);
		}
		self.quiet += 1;
		Ok(Next::Wait)
	}
}

/// Percent-decodes a URL path segment (`%2F` and the like).
fn decode(text: &str) -> Option<String> {
	let bytes = text.as_bytes();
	let mut out = Vec::with_capacity(bytes.len());
	let mut i = 0;
	while i < bytes.len() {
		match bytes[i] {
			b'%' => {
				let hex = text.get(i + 1..i + 3)?;
				out.push(u8::from_str_radix(hex, 16).ok()?);
				i += 3;
			}
			byte => {
				out.push(byte);
				i += 1;
			}
		}
	}
	String::from_utf8(out).ok()
}

fn query(url: &str, key: &str) -> Option<String> {
	let (_, query) = url.split_once('?')?;
	query.split('&').find_map(|pair| {
		let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
		(k == key).then(|| v.to_string())
	})
}

impl Api {
	/// Serves on `listen` from a runtime and threads of its own, within
	/// [`http::Limits::OUTPUTS`] (see [`crate::http`]). Returns the address bound.
	pub fn serve(self, listen: std::net::SocketAddr) -> Result<std::net::SocketAddr, String> {
		let api = Arc::new(self);
		http::serve(
			"outputs API",
			listen,
			http::Limits::OUTPUTS,
			Arc::new(move |r: Request| api.handle(&r)),
		)
	}

	/// Answers one request.
	pub fn handle(&self, request: &Request) -> Reply {
		if request.method != hyper::Method::GET {
			return reply(405, "only GET");
		}
		let url = request.url.as_str();
		let path = url.split('?').next().unwrap_or_default();
		if path == "/health" {
			return reply(200, "ok");
		}
		let Some(rest) = path.strip_prefix("/leases/") else { return reply(404, "not found") };
		let (id, rest) = rest.split_once('/').unwrap_or((rest, ""));
		let Ok(lease) = id.parse::<LeaseId>() else { return reply(404, "not a lease id") };
		let Ok(Some(entry)) = self.journal.get(lease) else {
			return reply(404, format!("lease {lease} is not one of this worker's"));
		};
		let auth = request.header(stint_primitives::FETCH_AUTH_HEADER);
		if let Err((status, why)) = self.authorise(auth, &entry) {
			return reply(status, why);
		}
		self.route(&entry, rest, url)
	}

	fn authorise(&self, header: Option<&str>, entry: &LeaseEntry) -> Result<(), (u16, String)> {
		let header = header.ok_or((401, "sign the request as the lease's buyer".into()))?;
		let signed = SignedFetchAuth::from_header(header).map_err(|e| (401, e.to_string()))?;
		let genesis = self
			.journal
			.meta("genesis")
			.ok()
			.flatten()
			.and_then(|hex| stint_client::parse_hex32(&hex))
			.ok_or((503, "the worker has not met its chain yet".to_string()))?;
		let buyer = stint_primitives::WorkerKey::from_raw(entry.buyer);
		signed.check(&genesis, entry.lease, &buyer, crate::unix_now()).map_err(|e| {
			let status = match e {
				FetchAuthError::Malformed
				| FetchAuthError::Expired
				| FetchAuthError::ExpiryTooFar
				| FetchAuthError::WrongDomain => 401,
				FetchAuthError::BadSignature
				| FetchAuthError::WrongLease
				| FetchAuthError::WrongChain => 403,
			};
			(status, e.to_string())
		})
	}

	fn route(&self, entry: &LeaseEntry, rest: &str, url: &str) -> Reply {
		let dirs = LeaseDirs::new(&self.data_dir, entry.lease);
		let stopped = matches!(entry.phase, Phase::Exited | Phase::Done);
		match rest {
			// Not here (a journal imported without its files, or removed): said, not an
			// empty manifest that reads as a job that wrote nothing.
			"manifest" if !dirs.outputs().is_dir() => {
				reply(404, "this lease's outputs are not on this machine")
			}
			// Once committed, the manifest the result commits to; while the job runs, the
			// outputs as they are.
			"manifest" if stopped && dirs.manifest().is_file() => file(&dirs.manifest(), 0),
			"manifest" => match commit::manifest(&dirs.outputs()) {
				Ok(manifest) => Reply::json(&manifest),
				Err(e) => reply(500, e.to_string()),
			},
			"receipt" => match stopped && dirs.receipt().is_file() {
				true => file(&dirs.receipt(), 0),
				false => reply(404, "no receipt yet: the job has not stopped"),
			},
			"status" => Reply::json(&serde_json::json!({
				"lease": entry.lease,
				"phase": format!("{:?}", entry.phase),
				"exit": entry.exit.map(|e| e.code),
			})),
			"logs/manifest" => match commit::logs_manifest(&dirs.logs()) {
				Ok(manifest) => Reply::json(&manifest),
				Err(e) => reply(500, e.to_string()),
			},
			"logs/stdout" | "logs/stderr" => {
				let name = &rest["logs/".len()..];
				let offset = query(url, "offset").and_then(|o| o.parse().ok()).unwrap_or(0);
				if stopped {
					return file(&dirs.logs().join(name), offset);
				}
				if query(url, "follow").as_deref() == Some("1") {
					// A follow lasts as long as its job; their number is capped.
					if self.follows.fetch_add(1, Ordering::SeqCst) >= MAX_FOLLOWS {
						self.follows.fetch_sub(1, Ordering::SeqCst);
						return reply(503, "too many logs followed at once");
					}
					return Reply {
						status: 200,
						content_type: None,
						body: Body::Stream(Box::new(Follow {
							live: dirs.live_logs().join(name),
							committed: dirs.logs().join(name),
							offset,
							journal: self.journal.clone(),
							lease: entry.lease,
							quiet: 0,
							follows: self.follows.clone(),
						})),
					};
				}
				match dirs.live_logs().join(name).is_file() {
					true => file(&dirs.live_logs().join(name), offset),
					// Not started yet, or its logs not yet followed: nothing so far.
					false => reply(200, ""),
				}
			}
			"logs/files/stdout" | "logs/files/stderr" => {
				file(&dirs.logs().join(&rest["logs/files/".len()..]), 0)
			}
			other => match other.strip_prefix("files/").and_then(decode) {
				// A job's file: opened one name at a time, through no link at any step.
				Some(path) if is_safe_output_path(&path) => {
					match commit::open_beneath(&dirs.outputs(), &path) {
						Ok(handle) => Reply::file(handle, 0),
						Err(_) => reply(404, "no such file"),
					}
				}
				Some(_) => reply(400, "not a path inside the outputs"),
				None => reply(404, "not found"),
			},
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use stint_primitives::{ExecutorKind, FetchAuth};

	struct Served {
		url: String,
		journal: Arc<Journal>,
		dir: tempfile::TempDir,
	}

	fn serve() -> Served {
		let dir = tempfile::tempdir().unwrap();
		let journal = Arc::new(Journal::open(&dir.path().join("journal.redb")).unwrap());
		journal.set_meta("genesis", &format!("0x{}", hex::encode([0x11; 32]))).unwrap();
		let buyer = stint_client::keypair("//Alice").unwrap();
		let mut entry = LeaseEntry::new(
			7,
			buyer.public_key().0,
			crate::journal::tests_spec(),
			vec![],
			ExecutorKind::Docker,
		);
		entry.phase = Phase::Done;
		journal.put(&entry).unwrap();
		let dirs = LeaseDirs::new(dir.path(), 7);
		dirs.create().unwrap();
		fs::write(dirs.outputs().join("result.txt"), b"42\n").unwrap();
		fs::write(dir.path().join("secret"), b"provider's").unwrap();
		std::os::unix::fs::symlink(dir.path().join("secret"), dirs.outputs().join("link")).unwrap();
		// A link to a folder outside, and one inside: neither is a way to any file.
		std::os::unix::fs::symlink(dir.path(), dirs.outputs().join("up")).unwrap();
		fs::create_dir_all(dirs.outputs().join("sub")).unwrap();
		fs::write(dirs.outputs().join("sub/part.txt"), b"part\n").unwrap();
		std::os::unix::fs::symlink("sub", dirs.outputs().join("alias")).unwrap();
		fs::write(dirs.logs().join("stdout"), b"hello\n").unwrap();
		// Lease 8's job is still running.
		let mut running = entry.clone();
		running.lease = 8;
		running.phase = Phase::Running;
		journal.put(&running).unwrap();
		let dirs = LeaseDirs::new(dir.path(), 8);
		dirs.create().unwrap();
		fs::create_dir_all(dirs.live_logs()).unwrap();
		fs::write(dirs.live_logs().join("stdout"), b"one\n").unwrap();
		let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
		let listen = format!("127.0.0.1:{port}").parse().unwrap();
		Api::new(journal.clone(), dir.path().to_path_buf()).serve(listen).unwrap();
		Served { url: format!("http://127.0.0.1:{port}"), journal, dir }
	}

	fn auth(signer: &str, genesis: [u8; 32], lease: u64, expires_in: i64) -> String {
		let pair = stint_client::keypair(signer).unwrap();
		let expires_at = (crate::unix_now() as i64 + expires_in) as u64;
		let auth = FetchAuth::new(genesis, lease, expires_at);
		SignedFetchAuth { auth, signature: pair.sign(&auth.signing_bytes()).0 }.to_header()
	}

	fn get(url: &str, header: Option<String>) -> (u16, String) {
		let mut request = ureq::get(url);
		if let Some(header) = header {
			request = request.set(stint_primitives::FETCH_AUTH_HEADER, &header);
		}
		match request.call() {
			Ok(response) => (response.status(), response.into_string().unwrap()),
			Err(ureq::Error::Status(status, response)) => {
				(status, response.into_string().unwrap_or_default())
			}
			Err(other) => panic!("{other}"),
		}
	}

	#[test]
	fn only_the_buyers_live_authorisation_for_this_lease_opens_it() {
		let served = serve();
		let base = format!("{}/leases/7", served.url);
		let good = || Some(auth("//Alice", [0x11; 32], 7, 60));
		let (status, body) = get(&format!("{base}/files/result.txt"), good());
		assert_eq!((status, body.as_str()), (200, "42\n"));
		let (status, body) = get(&format!("{base}/manifest"), good());
		assert_eq!(status, 200);
		assert!(body.contains("result.txt") && !body.contains("link"), "{body}");
		assert_eq!(get(&format!("{base}/logs/stdout?offset=2"), good()).1, "llo\n");

		assert_eq!(get(&format!("{base}/manifest"), None).0, 401, "unsigned");
		assert_eq!(
			get(&format!("{base}/manifest"), Some(auth("//Alice", [0x11; 32], 7, -5))).0,
			401,
			"expired"
		);
		assert_eq!(get(&format!("{base}/manifest"), Some("zz".into())).0, 401, "garbage");
		assert_eq!(
			get(&format!("{base}/manifest"), Some(auth("//Bob", [0x11; 32], 7, 60))).0,
			403,
			"another key"
		);
		assert_eq!(
			get(&format!("{base}/manifest"), Some(auth("//Alice", [0x11; 32], 8, 60))).0,
			403,
			"another lease"
		);
		assert_eq!(
			get(&format!("{base}/manifest"), Some(auth("//Alice", [0x12; 32], 7, 60))).0,
			403,
			"another chain"
		);
		assert_eq!(get(&format!("{}/leases/9/manifest", served.url), good()).0, 404);
		// Journaled, its files not on this machine (a journal imported without them).
		let mut moved = served.journal.get(7).unwrap().unwrap();
		moved.lease = 11;
		served.journal.put(&moved).unwrap();
		let eleven = Some(auth("//Alice", [0x11; 32], 11, 60));
		let (status, body) = get(&format!("{}/leases/11/manifest", served.url), eleven);
		assert_eq!(status, 404, "{body}");
		assert_eq!(get(&format!("{}/health", served.url), None), (200, "ok".into()));
	}

	#[test]
	fn paths_that_climb_out_or_follow_links_are_refused() {
		let served = serve();
		let base = format!("{}/leases/7", served.url);
		let good = || Some(auth("//Alice", [0x11; 32], 7, 60));
		for climb in
			["files/%2e%2e/%2e%2e/secret", "files/..%2F..%2Fsecret", "files/%2Fetc%2Fpasswd"]
		{
			let (status, body) = get(&format!("{base}/{climb}"), good());
			assert!(status == 400 || status == 404, "{climb}: {status}");
			assert!(!body.contains("provider's"), "{climb}");
		}
		for linked in ["files/link", "files/up/secret", "files/alias/part.txt"] {
			let (status, body) = get(&format!("{base}/{linked}"), good());
			assert_eq!(status, 404, "{linked}");
			assert!(!body.contains("provider's") && !body.contains("part"), "{linked}");
		}
		assert_eq!(get(&format!("{base}/files/sub/part.txt"), good()), (200, "part\n".into()));
	}

	#[test]
	fn followed_logs_stream_until_the_job_stops_and_never_hold_up_other_requests() {
		let served = serve();
		let base = format!("{}/leases/8", served.url);
		let good = || Some(auth("//Alice", [0x11; 32], 8, 60));
		// More followers than the API has threads for ordinary requests.
		let followers: Vec<_> = (0..6)
			.map(|_| {
				let (url, header) = (format!("{base}/logs/stdout?follow=1"), good());
				std::thread::spawn(move || get(&url, header))
			})
			.collect();
		std::thread::sleep(Duration::from_millis(300));
		let (status, body) = get(&format!("{base}/status"), good());
		assert_eq!(status, 200, "answered while six follows are open: {body}");
		let live = served.dir.path().join("leases/8/live/stdout");
		let mut handle = fs::OpenOptions::new().append(true).open(&live).unwrap();
		std::io::Write::write_all(&mut handle, b"two\n").unwrap();
		std::thread::sleep(Duration::from_millis(400));
		let (status, body) = get(&format!("{base}/logs/stdout?offset=4"), good());
		assert_eq!((status, body.as_str()), (200, "two\n"), "the live log, from an offset");
		// The job stops: its log is committed (with a last line the live copy missed).
		let committed = served.dir.path().join("leases/8/logs/stdout");
		fs::write(&committed, b"one\ntwo\nthree\n").unwrap();
		let mut entry = served.journal.get(8).unwrap().unwrap();
		entry.phase = Phase::Done;
		served.journal.put(&entry).unwrap();
		for follower in followers {
			assert_eq!(follower.join().unwrap(), (200, "one\ntwo\nthree\n".to_string()));
		}
	}
}
