//! The worker's HTTP servers (the outputs API and the metrics): hyper on a tokio runtime of
//! their own, with limits a stranger cannot get around, so that nobody on the network can take
//! the file descriptors or the threads the duty loop needs (acknowledging, committing).
//!
//! - **Connections**: at most [`Limits::connections`] at once, and [`Limits::per_client`] from
//!   one address; a connection over either is closed as soon as it is accepted (one file
//!   descriptor for a moment), so a flood from one address never shuts out another.
//! - **Headers**: the whole request head within [`Limits::header_timeout`] (a connection that
//!   sends nothing, or trickles its headers, is closed), and the same timeout between requests
//!   on a kept-alive connection; at most [`Limits::header_bytes`] of it (431 beyond).
//! - **Work**: handlers run on a bounded pool of blocking threads of the server's own; bodies
//!   (files, followed logs) are streamed in chunks, so one slow download holds its own
//!   connection and nothing else.
//! - **Failures**: an `accept` that fails (no file descriptor left, say) is retried after a
//!   pause; the server never stops serving.

use std::{
	collections::HashMap,
	convert::Infallible,
	io::{Read, Seek, SeekFrom},
	net::{IpAddr, SocketAddr},
	sync::{Arc, Mutex},
	time::Duration,
};

use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, StreamBody};
use hyper::body::Frame;

use crate::log;

/// What a server accepts.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
	/// Connections open at once.
	pub connections: usize,
	/// Connections open at once from one address.
	pub per_client: usize,
	/// Time to send a request's head, and the longest a kept-alive connection may idle.
	pub header_timeout: Duration,
	/// The largest request head, in bytes (at least 8,192: hyper's floor).
	pub header_bytes: usize,
	/// Threads that run handlers (reading the journal and the disk).
	pub blocking_threads: usize,
}

impl Limits {
	/// The outputs API: buyers on the internet.
	pub const OUTPUTS: Limits = Limits {
		connections: 512,
		per_client: 32,
		header_timeout: Duration::from_secs(10),
		header_bytes: 16 * 1024,
		blocking_threads: 8,
	};
	/// The metrics: a scraper on the provider's network.
	pub const METRICS: Limits = Limits {
		connections: 16,
		per_client: 8,
		header_timeout: Duration::from_secs(10),
		header_bytes: 8 * 1024,
		blocking_threads: 2,
	};
}

/// One request as a handler reads it.
pub struct Request {
	pub method: hyper::Method,
	/// The path and the query, as sent (`/leases/7/manifest?x=1`).
	pub url: String,
	pub headers: hyper::HeaderMap,
}

impl Request {
	/// A header's value, if it is there and is text.
	pub fn header(&self, name: &str) -> Option<&str> {
		self.headers.get(name).and_then(|value| value.to_str().ok())
	}
}

/// What a streamed body has next.
pub enum Next {
	Data(Vec<u8>),
	/// Nothing yet: asked again after [`STREAM_POLL`].
	Wait,
	End,
}

/// A body produced piece by piece (a log followed while its job runs).
pub trait Source: Send + 'static {
	/// Called from a blocking thread: it may read the disk.
	fn next(&mut self) -> std::io::Result<Next>;
}

/// How often a [`Source`] that had nothing is asked again.
pub const STREAM_POLL: Duration = Duration::from_millis(300);

/// A body.
pub enum Body {
	Bytes(Vec<u8>),
	/// `len` bytes of an open file from where it stands.
	File {
		handle: std::fs::File,
		len: u64,
	},
	Stream(Box<dyn Source>),
}

/// A handler's answer.
pub struct Reply {
	pub status: u16,
	pub content_type: Option<&'static str>,
	pub body: Body,
}

impl Reply {
	pub fn text(status: u16, body: impl Into<String>) -> Self {
		let body: String = body.into();
		Self { status, content_type: None, body: Body::Bytes(body.into_bytes()) }
	}

	pub fn json(value: &impl serde::Serialize) -> Self {
		let body = serde_json::to_vec(value).expect("plain data serializes");
		Self { status: 200, content_type: Some("application/json"), body: Body::Bytes(body) }
	}

	/// An open file from `offset` to its end.
	pub fn file(mut handle: std::fs::File, offset: u64) -> Self {
		let size = handle.metadata().map(|m| m.len()).unwrap_or(0);
		let offset = offset.min(size);
		if handle.seek(SeekFrom::Start(offset)).is_err() {
			return Self::text(500, "cannot read the file");
		}
		Self {
			status: 200,
			content_type: Some("application/octet-stream"),
			body: Body::File { handle, len: size - offset },
		}
	}

	pub fn with_type(mut self, content_type: &'static str) -> Self {
		self.content_type = Some(content_type);
		self
	}
}

/// What answers requests: called on one of the server's blocking threads.
pub type Handler = Arc<dyn Fn(Request) -> Reply + Send + Sync>;

type ResponseBody = UnsyncBoxBody<Bytes, std::io::Error>;

/// The connections open now, in all and by address.
#[derive(Default)]
struct Open {
	total: usize,
	by_client: HashMap<IpAddr, usize>,
}

/// A connection's place, given back when it closes.
struct Admitted {
	open: Arc<Mutex<Open>>,
	client: IpAddr,
}

impl Drop for Admitted {
	fn drop(&mut self) {
		let mut open = self.open.lock().expect("not poisoned");
		open.total -= 1;
		if let Some(n) = open.by_client.get_mut(&self.client) {
			*n -= 1;
			if *n == 0 {
				open.by_client.remove(&self.client);
			}
		}
	}
}

fn admit(open: &Arc<Mutex<Open>>, client: IpAddr, limits: &Limits) -> Option<Admitted> {
	let mut state = open.lock().expect("not poisoned");
	let mine = state.by_client.get(&client).copied().unwrap_or(0);
	if state.total >= limits.connections || mine >= limits.per_client {
		return None;
	}
	state.total += 1;
	*state.by_client.entry(client).or_default() += 1;
	Some(Admitted { open: open.clone(), client })
}

/// Binds `listen` now (so a taken address is an error here) and serves `handler` from a
/// runtime and threads of the server's own, named `name`.
pub fn serve(
	name: &'static str,
	listen: SocketAddr,
	limits: Limits,
	handler: Handler,
) -> Result<SocketAddr, String> {
	let listener = std::net::TcpListener::bind(listen)
		.map_err(|e| format!("cannot serve the {name} on {listen}: {e}"))?;
	let bound = listener.local_addr().map_err(|e| e.to_string())?;
	listener.set_nonblocking(true).map_err(|e| e.to_string())?;
	let runtime = tokio::runtime::Builder::new_multi_thread()
		.worker_threads(1)
		.max_blocking_threads(limits.blocking_threads.max(1))
		.thread_name(format!("{name}-http"))
		.enable_all()
		.build()
		.map_err(|e| format!("cannot start the {name}'s runtime: {e}"))?;
	std::thread::Builder::new()
		.name(format!("{name}-accept"))
		.spawn(move || runtime.block_on(accept(name, listener, limits, handler)))
		.map_err(|e| e.to_string())?;
	Ok(bound)
}

async fn accept(
	name: &'static str,
	listener: std::net::TcpListener,
	limits: Limits,
	handler: Handler,
) {
	let listener = match tokio::net::TcpListener::from_std(listener) {
		Ok(listener) => listener,
		Err(e) => {
			log::alert("api", None, format!("the {name} cannot listen: {e}"));
			return;
		}
	};
	let open = Arc::new(Mutex::new(Open::default()));
	let mut failing = false;
	loop {
		let (stream, peer) = match listener.accept().await {
			Ok(accepted) => {
				if failing {
					log::info("api", None, format!("the {name} accepts connections again"));
					failing = false;
				}
				accepted
			}
			Err(e) => {
				// Out of file descriptors, most likely: wait and go on, never stop serving.
				if !failing {
					log::warn("api", None, format!("the {name} cannot accept: {e}"));
					failing = true;
				}
				tokio::time::sleep(Duration::from_millis(100)).await;
				continue;
			}
		};
		let Some(admitted) = admit(&open, peer.ip(), &limits) else {
			drop(stream);
			continue;
		};
		let handler = handler.clone();
		tokio::spawn(async move {
			let _admitted = admitted;
			let service = hyper::service::service_fn(move |request| {
				let handler = handler.clone();
				async move { Ok::<_, Infallible>(answer(handler, request).await) }
			});
			let mut builder = hyper::server::conn::http1::Builder::new();
			builder
				.timer(hyper_util::rt::TokioTimer::new())
				.header_read_timeout(limits.header_timeout)
				.max_buf_size(limits.header_bytes.max(8192));
			let io = hyper_util::rt::TokioIo::new(stream);
			let _ = builder.serve_connection(io, service).await;
		});
	}
}

async fn answer(
	handler: Handler,
	request: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<ResponseBody> {
	let (parts, _) = request.into_parts();
	let url = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
	let request = Request { method: parts.method, url, headers: parts.headers };
	let reply = match tokio::task::spawn_blocking(move || handler(request)).await {
		Ok(reply) => reply,
		Err(_) => Reply::text(500, "the handler failed"),
	};
	let mut response = hyper::Response::builder().status(reply.status);
	if let Some(content_type) = reply.content_type {
		response = response.header(hyper::header::CONTENT_TYPE, content_type);
	}
	let body = match reply.body {
		Body::Bytes(bytes) => {
			Full::new(Bytes::from(bytes)).map_err(|never| match never {}).boxed_unsync()
		}
		Body::File { handle, len } => {
			response = response.header(hyper::header::CONTENT_LENGTH, len);
			file_body(handle, len)
		}
		Body::Stream(source) => stream_body(source),
	};
	response.body(body).unwrap_or_else(|_| {
		let mut fallback = hyper::Response::new(
			Full::new(Bytes::from_static(b"bad response"))
				.map_err(|never| match never {})
				.boxed_unsync(),
		);
		*fallback.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
		fallback
	})
}

/// Read and sent this much at a time.
const CHUNK: usize = 64 * 1024;

/// `len` bytes of `handle`, read on blocking threads a chunk at a time as the client takes them.
fn file_body(handle: std::fs::File, len: u64) -> ResponseBody {
	let chunks = futures::stream::unfold((Some(handle), len), |(handle, left)| async move {
		let mut handle = handle?;
		if left == 0 {
			return None;
		}
		let want = left.min(CHUNK as u64) as usize;
		let read = tokio::task::spawn_blocking(move || {
			let mut buf = vec![0; want];
			let n = handle.read(&mut buf)?;
			buf.truncate(n);
			Ok::<_, std::io::Error>((handle, buf))
		})
		.await;
		match read {
			Ok(Ok((_, buf))) if buf.is_empty() => {
				Some((Err(std::io::ErrorKind::UnexpectedEof.into()), (None, 0)))
			}
			Ok(Ok((handle, buf))) => {
				let left = left - buf.len() as u64;
				Some((Ok(Frame::data(Bytes::from(buf))), (Some(handle), left)))
			}
			Ok(Err(e)) => Some((Err(e), (None, 0))),
			Err(e) => Some((Err(std::io::Error::other(e)), (None, 0))),
		}
	});
	StreamBody::new(chunks).boxed_unsync()
}

/// What `source` produces, asked on a blocking thread, again after [`STREAM_POLL`] when it had
/// nothing.
fn stream_body(source: Box<dyn Source>) -> ResponseBody {
	let pieces = futures::stream::unfold(Some(source), |source| async move {
		let mut source = source?;
		loop {
			let next = tokio::task::spawn_blocking(move || {
				let next = source.next();
				(source, next)
			})
			.await;
			match next {
				Ok((back, Ok(Next::Data(data)))) => {
					return Some((Ok(Frame::data(Bytes::from(data))), Some(back)))
				}
				Ok((back, Ok(Next::Wait))) => {
					source = back;
					tokio::time::sleep(STREAM_POLL).await;
				}
				Ok((_, Ok(Next::End))) => return None,
				Ok((_, Err(e))) => return Some((Err(e), None)),
				Err(e) => return Some((Err(std::io::Error::other(e)), None)),
			}
		}
	});
	StreamBody::new(pieces).boxed_unsync()
}

/// Raises this process's soft limit on open files to its hard limit, so that a burst of
/// connections, refused or not, leaves descriptors for the chain, Docker and the disk.
/// Returns the limit before and after.
pub fn raise_open_files() -> (Option<u64>, Option<u64>) {
	use rustix::process::{getrlimit, setrlimit, Resource};
	let before = getrlimit(Resource::Nofile);
	// No hard limit: the kernel's own ceiling on open files per process (`nr_open`'s default).
	let target = before.maximum.unwrap_or(1 << 20);
	let raised = rustix::process::Rlimit { current: Some(target), maximum: before.maximum };
	let _ = setrlimit(Resource::Nofile, raised);
	(before.current, getrlimit(Resource::Nofile).current)
}

#[cfg(test)]
mod tests {
	use super::*;
	use std::{
		io::Write,
		net::{Ipv4Addr, TcpStream},
		time::Instant,
	};

	const TEST: Limits = Limits {
		connections: 16,
		per_client: 4,
		header_timeout: Duration::from_secs(1),
		header_bytes: 8192,
		blocking_threads: 2,
	};

	fn server() -> SocketAddr {
		let handler: Handler = Arc::new(|request: Request| match request.url.as_str() {
			"/big" => Reply::text(200, "x".repeat(1 << 20)),
			_ => Reply::text(200, "ok"),
		});
		serve("test", "127.0.0.1:0".parse().unwrap(), TEST, handler).unwrap()
	}

	/// A connection to `to` from loopback address `127.0.0.<from>`.
	fn connect(from: u8, to: SocketAddr) -> TcpStream {
		let socket =
			socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
		let source = SocketAddr::from((Ipv4Addr::new(127, 0, 0, from), 0));
		socket.bind(&source.into()).unwrap();
		socket.connect(&to.into()).unwrap();
		socket.into()
	}

	/// Sends a GET of `path` and reads the whole answer (the server closes after it).
	fn get(stream: &mut TcpStream, path: &str) -> String {
		let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
		stream.write_all(request.as_bytes()).unwrap();
		let mut answer = String::new();
		let _ = stream.read_to_string(&mut answer);
		answer
	}

	/// Whether the server closed `stream` (a read sees the end or a reset) within `within`.
	fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
		stream.set_read_timeout(Some(within)).unwrap();
		let mut byte = [0u8; 1];
		match stream.read(&mut byte) {
			Ok(0) => true,
			Ok(_) => false,
			Err(e) => {
				!matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
			}
		}
	}

	#[test]
	fn one_address_cannot_take_the_connections_of_another() {
		let addr = server();
		// One address holds its four idle connections; its fifth is closed at once.
		let mut held: Vec<TcpStream> = (0..TEST.per_client).map(|_| connect(2, addr)).collect();
		std::thread::sleep(Duration::from_millis(100));
		let mut fifth = connect(2, addr);
		assert!(closed_within(&mut fifth, Duration::from_millis(500)), "the fifth is refused");
		// Another address is answered meanwhile.
		let mut other = connect(1, addr);
		assert!(get(&mut other, "/health").ends_with("ok"));
		// Idle connections are closed once the head is not sent in time.
		let started = Instant::now();
		for stream in &mut held {
			assert!(closed_within(stream, Duration::from_secs(3)), "an idle connection");
		}
		assert!(started.elapsed() < Duration::from_secs(3));
	}

	#[test]
	fn a_trickled_or_oversized_head_is_cut_off() {
		let addr = server();
		// Slow loris: a byte of the head every 300 ms never makes a request.
		let mut loris = connect(3, addr);
		let started = Instant::now();
		let mut cut = false;
		for byte in b"GET /health HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
			if loris.write_all(&[*byte]).is_err() {
				cut = true;
				break;
			}
			std::thread::sleep(Duration::from_millis(300));
			if started.elapsed() > Duration::from_secs(4) {
				break;
			}
		}
		assert!(cut || closed_within(&mut loris, Duration::from_millis(500)), "a slow head");
		assert!(started.elapsed() < Duration::from_secs(4));
		// A head over the cap is refused.
		let mut big = connect(4, addr);
		let head = format!("GET /health HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(20_000));
		let _ = big.write_all(head.as_bytes());
		let mut answer = String::new();
		let _ = big.read_to_string(&mut answer);
		assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 431"), "{answer}");
	}

	#[test]
	fn a_client_that_reads_nothing_stalls_nobody_else() {
		let addr = server();
		// Four clients ask for a MiB each and read none of it.
		let stalled: Vec<TcpStream> = (0..4)
			.map(|n| {
				let mut stream = connect(10 + n, addr);
				let request = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
				stream.write_all(request.as_bytes()).unwrap();
				stream
			})
			.collect();
		std::thread::sleep(Duration::from_millis(200));
		let started = Instant::now();
		let mut other = connect(1, addr);
		assert!(get(&mut other, "/health").ends_with("ok"));
		assert!(started.elapsed() < Duration::from_secs(1));
		drop(stalled);
	}
}
