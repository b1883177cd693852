//! Pulls against this machine's real engine, from a registry this test serves on loopback (a
//! fake of the registry's HTTP API; the engine and its pull are real): a loopback registry is
//! never pulled from for a job, an image whose manifest says it is larger than the provider's
//! limit is refused before any of it is downloaded, one that unpacks past the limit (a gzip
//! bomb: a small download, a large file) is cancelled as the order's fault and leaves nothing,
//! and one within it is put on the record of pulled images, and pruned.

mod common;

use std::{
	io::{Read, Write},
	process::{Command, Stdio},
	sync::{Arc, Mutex},
};

use sha2::{Digest, Sha256};
use stint_primitives::ReservedExit;
use stint_worker::executor::{
	docker::{Docker, PullRules},
	Executor, PrepareError,
};

/// `sha256:<hex>` of `bytes`.
fn digest(bytes: &[u8]) -> String {
	format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A tar header for a regular file `name` of `size` bytes.
fn tar_header(name: &str, size: u64) -> [u8; 512] {
	let mut header = [0u8; 512];
	header[..name.len()].copy_from_slice(name.as_bytes());
	header[100..107].copy_from_slice(b"0000644");
	header[108..115].copy_from_slice(b"0000000");
	header[116..123].copy_from_slice(b"0000000");
	header[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
	header[136..147].copy_from_slice(b"00000000000");
	header[156] = b'0';
	header[257..263].copy_from_slice(b"ustar\0");
	header[263..265].copy_from_slice(b"00");
	header[148..156].copy_from_slice(b"        ");
	let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
	header[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
	header
}

/// A layer of one file of `size` zero bytes: its gzip (what is downloaded) and the sha256 of
/// its tar (what it unpacks from).
fn zero_layer(size: u64) -> (Vec<u8>, String) {
	let mut gzip = Command::new("gzip")
		.arg("-1")
		.stdin(Stdio::piped())
		.stdout(Stdio::piped())
		.spawn()
		.expect("gzip is installed");
	let mut input = gzip.stdin.take().unwrap();
	let writer = std::thread::spawn(move || {
		let mut tar = Sha256::new();
		let mut put = |bytes: &[u8]| {
			tar.update(bytes);
			input.write_all(bytes).unwrap();
		};
		put(&tar_header("bomb", size));
		let zeros = vec![0u8; 1 << 20];
		let mut left = size.div_ceil(512) * 512;
		while left > 0 {
			let take = left.min(zeros.len() as u64) as usize;
			put(&zeros[..take]);
			left -= take as u64;
		}
		put(&[0u8; 1024]);
		format!("sha256:{}", hex::encode(tar.finalize()))
	});
	let mut compressed = Vec::new();
	gzip.stdout.take().unwrap().read_to_end(&mut compressed).unwrap();
	assert!(gzip.wait().unwrap().success());
	(compressed, writer.join().unwrap())
}

/// A registry on loopback serving one image, `stint-test/bomb`, by digest; keeps the paths it
/// was asked for. Returns its port and the image's manifest digest.
fn serve(layer: Vec<u8>, diff_id: String, requests: Arc<Mutex<Vec<String>>>) -> (u16, String) {
	let config = serde_json::json!({
		"architecture": "amd64",
		"os": "linux",
		"config": {},
		"rootfs": { "type": "layers", "diff_ids": [diff_id] },
	})
	.to_string()
	.into_bytes();
	let manifest = serde_json::json!({
		"schemaVersion": 2,
		"mediaType": "application/vnd.docker.distribution.manifest.v2+json",
		"config": {
			"mediaType": "application/vnd.docker.container.image.v1+json",
			"size": config.len(),
			"digest": digest(&config),
		},
		"layers": [{
			"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
			"size": layer.len(),
			"digest": digest(&layer),
		}],
	})
	.to_string()
	.into_bytes();
	let manifest_digest = digest(&manifest);
	let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
	let port = server.server_addr().to_ip().unwrap().port();
	let blobs = [(digest(&config), config), (digest(&layer), layer)];
	let named = manifest_digest.clone();
	std::thread::spawn(move || {
		for request in server.incoming_requests() {
			let url = request.url().to_string();
			requests.lock().unwrap().push(url.clone());
			let header = |name: &str, value: &str| {
				tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
			};
			let api = header("Docker-Distribution-API-Version", "registry/2.0");
			let response = if url == "/v2/" {
				tiny_http::Response::from_data(b"{}".to_vec()).with_header(api)
			} else if url == format!("/v2/stint-test/bomb/manifests/{named}") {
				tiny_http::Response::from_data(manifest.clone())
					.with_header(api)
					.with_header(header(
						"Content-Type",
						"application/vnd.docker.distribution.manifest.v2+json",
					))
					.with_header(header("Docker-Content-Digest", &named))
			} else if let Some((_, blob)) = blobs
				.iter()
				.find(|(digest, _)| url == format!("/v2/stint-test/bomb/blobs/{digest}"))
			{
				tiny_http::Response::from_data(blob.clone()).with_header(api)
			} else {
				tiny_http::Response::from_data(b"{\"errors\":[]}".to_vec())
					.with_status_code(404)
					.with_header(api)
			};
			let _ = request.respond(response);
		}
	});
	(port, manifest_digest)
}

#[tokio::test]
async fn a_loopback_registry_is_never_pulled_from_and_a_gzip_bomb_is_cancelled_as_the_orders_fault()
{
	assert!(common::docker_available(), "this test needs a Docker engine");
	// 512 MiB of zeros: about half a MiB to download.
	let (layer, diff_id) = zero_layer(512 << 20);
	assert!(layer.len() < 4 << 20, "{}", layer.len());
	let requests = Arc::new(Mutex::new(Vec::new()));
	let (port, manifest) = serve(layer, diff_id, requests.clone());
	let image = format!("127.0.0.1:{port}/stint-test/bomb@{manifest}");

	// A worker's engine: a registry on this machine is not asked at all.
	let docker = Docker::connect().await.expect("the engine answers");
	match docker.resolve(image.as_bytes()).await {
		Err(PrepareError::Order(code, why)) => {
			assert_eq!(code, ReservedExit::ImageUnavailable);
			assert!(why.contains("loopback or private registry"), "{why}");
		}
		other => panic!("{other:?}"),
	}
	assert!(requests.lock().unwrap().is_empty(), "the registry was asked");

	// Allowed for this test, where the image's manifest says it downloads more than the most
	// an image may take (its layer's gzip is about half a MiB): refused as the order's fault
	// before any of it is pulled (the manifest alone was read).
	let tiny = PullRules { max_image_bytes: 64 << 10, private_registries: true };
	match docker.clone().with_rules(tiny).resolve(image.as_bytes()).await {
		Err(PrepareError::Order(code, why)) => {
			assert_eq!(code, ReservedExit::ImageTooLarge, "{why}");
			assert!(why.contains("its manifest says"), "{why}");
		}
		other => panic!("{other:?}"),
	}
	let asked = std::mem::take(&mut *requests.lock().unwrap());
	assert!(!asked.is_empty(), "the manifest was not read");
	assert!(asked.iter().all(|url| url.contains("/manifests/")), "{asked:?}");

	// Allowed for this test, with 96 MiB the most an image may take: the pull is cancelled as
	// the order's fault, and the engine keeps no image. (The disk is watched for the room the
	// pull takes, so what other writers take meanwhile counts too: the limit is well above what
	// a build beside the test writes in the few seconds of the pull.)
	let rules = PullRules { max_image_bytes: 96 << 20, private_registries: true };
	let docker = docker.with_rules(rules);
	let engine = docker.engine().await.unwrap();
	let root = engine.info().await.unwrap().docker_root_dir.unwrap();
	let free = || stint_probe::free_bytes(std::path::Path::new(&root)).unwrap();
	let before = free();
	match docker.resolve(image.as_bytes()).await {
		Err(PrepareError::Order(code, why)) => {
			assert_eq!(code, ReservedExit::ImageTooLarge, "{why}");
			eprintln!("refused: {why}");
		}
		other => panic!("{other:?}"),
	}
	let asked = requests.lock().unwrap().clone();
	assert!(asked.iter().any(|url| url.contains("/blobs/")), "nothing was pulled: {asked:?}");
	assert!(engine.inspect_image(&image).await.is_err(), "the bomb's image is still there");
	// The engine's disk is as it was: the bomb's 512 MiB are not there (the margin is for
	// other writers to the same disk meanwhile, a build beside the test).
	let taken = before.saturating_sub(free());
	eprintln!("engine's disk taken after the cancelled pull: {taken} bytes");
	assert!(taken < 192 << 20, "{taken} bytes of the engine's disk still taken");

	// Within the limit it is pulled, and put on the record of pulled images (once) with what it
	// takes; a local image is not.
	let docker = docker.with_rules(PullRules { max_image_bytes: 1 << 30, ..rules });
	let id = docker.resolve(image.as_bytes()).await.expect("pulled");
	let pulled = docker.take_pulled();
	assert_eq!(pulled.len(), 1, "{pulled:?}");
	assert_eq!(pulled[0].0, id);
	assert!(pulled[0].1 >= 512 << 20, "{pulled:?}");
	assert!(docker.take_pulled().is_empty(), "taken once");
	docker.resolve(common::job_image().as_bytes()).await.unwrap();
	assert!(docker.take_pulled().is_empty(), "a local image is not on record");
	// Pruned: gone; pruning it again is no error.
	docker.remove_image(&id).await.unwrap();
	assert!(engine.inspect_image(&id).await.is_err());
	docker.remove_image(&id).await.unwrap();
}
