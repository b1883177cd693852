//! An order's inputs: fetched from public addresses only, each checked against its hash.

use super::*;

/// Downloads each input to `folder/<index>`, checking its blake2-256; the order's fault (with
/// its reserved code) when one cannot be had as pinned.
pub fn fetch_inputs(
	inputs: &[(String, [u8; 32])],
	folder: &Path,
	allow_private: bool,
	budget: u64,
	stop: &AtomicBool,
) -> Result<Vec<[u8; 32]>, PrepareError> {
	use std::io::{Read, Write};
	let unreachable = |why: String| PrepareError::Order(ReservedExit::InputUnreachable, why);
	// A full or broken disk here is the provider's, not the order's.
	let local =
		|index: usize, e: std::io::Error| PrepareError::Provider(format!("input {index}: {e}"));
	let mut agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(300));
	if !allow_private {
		agent = agent.resolver(public_only);
	}
	let agent = agent.build();
	let mut hashes = Vec::new();
	let mut left = budget;
	for (index, (uri, expected)) in inputs.iter().enumerate() {
		let target = folder.join(index.to_string());
		if target.is_file() {
			// Fetched before a restart: already on the disk the budget was measured on.
			if let Ok((hash, _)) = commit::hash_file(&target) {
				if &hash == expected {
					hashes.push(hash);
					continue;
				}
			}
		}
		if !(uri.starts_with("http://") || uri.starts_with("https://")) {
			return Err(unreachable(format!("input {index}: only http(s) inputs are fetched")));
		}
		let response =
			agent.get(uri).call().map_err(|e| unreachable(format!("input {index}: {e}")))?;
		let mut reader = response.into_reader().take(left.saturating_add(1));
		let mut file = std::fs::File::create(&target).map_err(|e| local(index, e))?;
		let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
		let mut buffer = vec![0u8; 64 * 1024];
		let mut size = 0u64;
		loop {
			if stop.load(Ordering::Relaxed) {
				drop(file);
				let _ = std::fs::remove_file(&target);
				return Err(unreachable(format!("input {index}: abandoned")));
			}
			let n =
				reader.read(&mut buffer).map_err(|e| unreachable(format!("input {index}: {e}")))?;
			if n == 0 {
				break;
			}
			size += n as u64;
			if size > left {
				drop(file);
				let _ = std::fs::remove_file(&target);
				return Err(unreachable(format!(
					"input {index}: the inputs are larger than the free disk leaves beside the \
					 outputs"
				)));
			}
			state.update(&buffer[..n]);
			file.write_all(&buffer[..n]).map_err(|e| local(index, e))?;
		}
		file.sync_all().map_err(|e| local(index, e))?;
		left -= size;
		let hash: [u8; 32] = state.finalize().as_bytes().try_into().expect("32 bytes asked");
		if &hash != expected {
			let _ = std::fs::remove_file(&target);
			return Err(PrepareError::Order(
				ReservedExit::InputHashMismatch,
				format!("input {index}: its content does not hash to the order's content_hash"),
			));
		}
		hashes.push(hash);
	}
	Ok(hashes)
}

/// Resolves an input's `host:port`, refusing it when any address is on the provider's own
/// network. It runs for every connection, each redirect's included, and the connection goes
/// to exactly the addresses it checked: a name that resolves differently the second time
/// gains nothing.
fn public_only(netloc: &str) -> std::io::Result<Vec<std::net::SocketAddr>> {
	use std::net::ToSocketAddrs;
	let addresses: Vec<std::net::SocketAddr> = netloc.to_socket_addrs()?.collect();
	match addresses.iter().find(|address| is_inside(address.ip())) {
		Some(inside) => Err(std::io::Error::new(
			std::io::ErrorKind::PermissionDenied,
			format!("{netloc} is a loopback or private address ({})", inside.ip()),
		)),
		None => Ok(addresses),
	}
}

/// Whether `ip` is loopback, private, shared (carrier NAT), link-local, unspecified or
/// broadcast: the provider's own network, never an input's.
pub(crate) fn is_inside(ip: std::net::IpAddr) -> bool {
	use std::net::IpAddr;
	match ip {
		IpAddr::V4(v4) => {
			let [a, b, ..] = v4.octets();
			v4.is_loopback()
				|| v4.is_private()
				|| v4.is_link_local()
				|| v4.is_unspecified()
				|| v4.is_broadcast()
				|| a == 0 || (a == 100 && (64..128).contains(&b))
		}
		IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
			Some(v4) => is_inside(IpAddr::V4(v4)),
			None => {
				let first = v6.segments()[0];
				v6.is_loopback()
					|| v6.is_unspecified()
					|| (first & 0xfe00) == 0xfc00
					|| (first & 0xffc0) == 0xfe80
			}
		},
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	fn go() -> AtomicBool {
		AtomicBool::new(false)
	}

	#[test]
	fn inputs_on_the_providers_own_network_are_refused() {
		for inside in [
			"127.0.0.1:9944",
			"localhost:80",
			"10.1.2.3:80",
			"192.168.0.1:8080",
			"[::1]:80",
			"169.254.169.254:80",
			"100.64.0.1:80",
			"0.0.0.0:80",
			"[::ffff:127.0.0.1]:80",
			"[fe80::1]:80",
			"[fd00::1]:80",
		] {
			assert!(public_only(inside).is_err(), "{inside}");
		}
		assert_eq!(public_only("8.8.8.8:53").unwrap().len(), 1);
		let dir = tempfile::tempdir().unwrap();
		let refused = fetch_inputs(
			&[("http://127.0.0.1:1/x".into(), [0; 32])],
			dir.path(),
			false,
			1 << 20,
			&go(),
		);
		assert!(
			matches!(&refused, Err(PrepareError::Order(ReservedExit::InputUnreachable, why))
				if why.contains("private")),
			"{refused:?}"
		);
		let scheme = fetch_inputs(
			&[("file:///etc/passwd".into(), [0; 32])],
			dir.path(),
			true,
			1 << 20,
			&go(),
		);
		assert!(matches!(scheme, Err(PrepareError::Order(ReservedExit::InputUnreachable, _))));
	}

	#[test]
	fn a_redirect_to_the_providers_own_network_is_refused() {
		// A public-looking server (here on loopback, allowed only for the test's first hop)
		// that redirects to loopback: the check runs again on the redirect's connection.
		let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
		let port = server.server_addr().to_ip().unwrap().port();
		std::thread::spawn(move || {
			for request in server.incoming_requests() {
				let to =
					"Location: http://127.0.0.1:9/secret".parse::<tiny_http::Header>().unwrap();
				let _ = request.respond(tiny_http::Response::empty(302).with_header(to));
			}
		});
		let agent = ureq::AgentBuilder::new()
			.resolver(move |netloc: &str| match netloc.ends_with(&format!(":{port}")) {
				true => Ok(vec![std::net::SocketAddr::from(([127, 0, 0, 1], port))]),
				false => public_only(netloc),
			})
			.build();
		let redirected = agent.get(&format!("http://127.0.0.1:{port}/data")).call();
		let why = redirected.err().map(|e| e.to_string()).unwrap_or_default();
		assert!(why.contains("private"), "{why}");
	}

	#[test]
	fn the_inputs_together_fit_in_the_budget() {
		let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
		let port = server.server_addr().to_ip().unwrap().port();
		std::thread::spawn(move || {
			for request in server.incoming_requests() {
				let _ = request.respond(tiny_http::Response::from_string("0123456789"));
			}
		});
		let dir = tempfile::tempdir().unwrap();
		let ten = stint_primitives::blake2_256(b"0123456789");
		let uri = format!("http://127.0.0.1:{port}/data");
		let both = [(uri.clone(), ten), (uri, ten)];
		// Each alone fits in 15 bytes; both do not.
		let over = fetch_inputs(&both, dir.path(), true, 15, &go());
		assert!(matches!(over, Err(PrepareError::Order(ReservedExit::InputUnreachable, _))));
		assert!(!dir.path().join("1").exists(), "the input over the budget is not kept");
		assert_eq!(fetch_inputs(&both, dir.path(), true, 20, &go()), Ok(vec![ten, ten]));
		// A folder the worker cannot write to is the provider's fault.
		let gone = dir.path().join("gone");
		let unwritable = fetch_inputs(&both, &gone, true, 20, &go());
		assert!(matches!(unwritable, Err(PrepareError::Provider(_))), "{unwritable:?}");
	}

	#[test]
	fn inputs_are_checked_against_their_hash() {
		let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
		let port = server.server_addr().to_ip().unwrap().port();
		std::thread::spawn(move || {
			for request in server.incoming_requests() {
				let _ = request.respond(tiny_http::Response::from_string("input bytes"));
			}
		});
		let dir = tempfile::tempdir().unwrap();
		let uri = format!("http://127.0.0.1:{port}/data");
		let good = stint_primitives::blake2_256(b"input bytes");
		assert_eq!(
			fetch_inputs(&[(uri.clone(), good)], dir.path(), true, 1 << 20, &go()),
			Ok(vec![good])
		);
		assert_eq!(std::fs::read(dir.path().join("0")).unwrap(), b"input bytes");
		let other = tempfile::tempdir().unwrap();
		let wrong = fetch_inputs(&[(uri, [1; 32])], other.path(), true, 1 << 20, &go());
		assert!(matches!(wrong, Err(PrepareError::Order(ReservedExit::InputHashMismatch, _))));
		assert!(!other.path().join("0").exists());
	}
}
