//! Compatibility with a client we did not write: Python's `substrate-interface` (from PyPI, put in
//! place by scripts/setup.sh) creates an order on a real dev node with a dev account, reads it
//! back from storage and decodes its event, knowing nothing of Stint but the node's metadata.

use std::{path::PathBuf, process::Command, time::Duration};

use anyhow::{bail, Context, Result};
use stint_e2e::TestNode;

#[tokio::test(flavor = "multi_thread")]
async fn substrate_interface_creates_and_reads_an_order() -> Result<()> {
	let python = PathBuf::from(
		std::env::var_os("STINT_PYTHON")
			.context("STINT_PYTHON is not set: run the tests with scripts/test.sh")?,
	);
	if !python.is_file() {
		bail!("{} does not exist: run scripts/setup.sh", python.display());
	}
	let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/create_order.py");
	let node = TestNode::shared()?;
	node.client(Duration::from_secs(90)).await?;
	let output = Command::new(&python).arg(&script).arg(node.ws_url()).output()?;
	let stdout = String::from_utf8_lossy(&output.stdout);
	let stderr = String::from_utf8_lossy(&output.stderr);
	assert!(output.status.success(), "the Python client failed:\n{stdout}\n{stderr}");
	assert!(stdout.contains("read back from storage, event decoded"), "{stdout}");
	Ok(())
}
