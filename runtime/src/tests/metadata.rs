//! The client's committed metadata (`client/metadata.scale`, which `stint-client` generates its
//! types from) must be exactly what this runtime serves; `scripts/update-metadata.sh` rewrites it.

use crate::Runtime;

/// The metadata version the client is generated from: V15 carries the runtime APIs.
const VERSION: u32 = 15;

#[test]
fn committed_client_metadata_matches_the_runtime() {
	// Inside externalities, as the node serves it (building metadata may read storage).
	let served = polkadot_sdk::sp_io::TestExternalities::default()
		.execute_with(|| Runtime::metadata_at_version(VERSION))
		.expect("the runtime serves V15");
	let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../client/metadata.scale");
	if std::env::var_os("STINT_UPDATE_METADATA").is_some() {
		std::fs::write(path, &*served).expect("writing client/metadata.scale");
	}
	let committed = std::fs::read(path).expect("client/metadata.scale exists");
	assert!(
		committed == *served,
		"client/metadata.scale differs from the runtime's metadata: run scripts/update-metadata.sh \
		 and commit the result"
	);
}
