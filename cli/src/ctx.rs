//! What every command shares: the connection, the signer, sending a transaction and printing what
//! it did, and the failures with their exit codes.

use stint_client::{
	account_of, keypair, parse_account, parse_stint, AccountId, Client, Error, Included, Keypair,
	Progress, Wait,
};
use stint_primitives::DeviceId;

use crate::show;

/// Why the command failed, and its exit code.
pub enum Fail {
	Input(String),
	Client(Error),
	/// What a provider served does not match what the chain says (exit 8).
	Verification(String),
	/// The probe could not read this machine's GPUs (exit 9).
	Probe(String),
	/// The provider refused the request: not authorised (exit 10).
	Unauthorised(String),
}

impl From<Error> for Fail {
	fn from(error: Error) -> Self {
		Self::Client(error)
	}
}

impl Fail {
	pub fn code(&self) -> u8 {
		match self {
			Self::Input(_) => 5,
			Self::Verification(_) => 8,
			Self::Probe(_) => 9,
			Self::Unauthorised(_) => 10,
			Self::Client(Error::Connect { .. }) => 3,
			Self::Client(Error::Key(_)) => 4,
			Self::Client(Error::Dispatch { .. } | Error::Refused(_) | Error::Rejected(_)) => 6,
			Self::Client(Error::NotFound(_)) => 7,
			Self::Client(Error::Rpc(_)) => 1,
		}
	}

	pub fn message(&self) -> String {
		match self {
			Self::Input(message)
			| Self::Verification(message)
			| Self::Probe(message)
			| Self::Unauthorised(message) => message.clone(),
			Self::Client(error) => error.to_string(),
		}
	}
}

/// What a command returns.
pub type Outcome = Result<(), Fail>;

/// The options every command sees.
pub struct Options {
	pub json: bool,
	pub key: Option<String>,
	pub no_wait_finality: bool,
	pub no_dry_run: bool,
}

/// A command's context: the options and the connection.
pub struct Ctx {
	pub options: Options,
	pub client: Client,
}

impl Ctx {
	pub fn json(&self) -> bool {
		self.options.json
	}

	/// The signer from `--key`.
	pub fn signer(&self) -> Result<Keypair, Fail> {
		let source = self.options.key.as_deref().ok_or_else(|| {
			Fail::Input("this command signs: pass --key (e.g. --key //Alice)".into())
		})?;
		Ok(keypair(source)?)
	}

	/// The named account, else the signer's.
	pub fn account(&self, named: &Option<String>) -> Result<AccountId, Fail> {
		match named {
			Some(text) => Ok(parse_account(text)?),
			None => Ok(account_of(&self.signer()?)),
		}
	}

	/// Signs `call`, tries it on the best block (unless `--no-dry-run`: a call the chain would
	/// refuse is not sent, and costs no fee), sends it, reporting its progress on stderr, and
	/// prints its events.
	pub async fn send(&self, call: &impl stint_client::Payload) -> Result<Included, Fail> {
		let signer = self.signer()?;
		let wait = if self.options.no_wait_finality { Wait::InBlock } else { Wait::Finalized };
		let quiet = self.options.json;
		let signed = self.client.sign(call, &signer, None).await?;
		if !self.options.no_dry_run {
			self.client.dry_run(&signed.bytes).await?;
		}
		let included = self
			.client
			.broadcast(&signed.bytes, wait, |step| {
				if !quiet {
					match step {
						Progress::Submitted => eprintln!("submitted"),
						Progress::InBlock(hash) => eprintln!("in block {hash}"),
						Progress::Finalized(hash) => eprintln!("finalized in {hash}"),
						_ => {}
					}
				}
			})
			.await?;
		if self.options.json {
			show::json(&included);
		} else {
			for event in &included.events {
				if !matches!(event.pallet.as_str(), "System" | "TransactionPayment" | "Balances") {
					println!("{}.{} {}", event.pallet, event.name, event.fields);
				}
			}
		}
		Ok(included)
	}
}

/// An amount of STINT (`1.5`, `100`).
pub fn amount(text: &str) -> Result<u128, Fail> {
	parse_stint(text).map_err(Fail::Input)
}

/// A device: its id (32 bytes of hex) or its GPU UUID as `nvidia-smi -L` prints it.
pub fn device(text: &str) -> Result<DeviceId, Fail> {
	if text.starts_with("GPU-") {
		return Ok(stint_primitives::device_id(text));
	}
	stint_client::parse_hex32(text).ok_or_else(|| {
		Fail::Input(format!("`{text}` is not a device id (32 bytes of hex) nor a GPU UUID (GPU-…)"))
	})
}

/// Reads a file named on the command line.
pub fn read_file(path: &std::path::Path) -> Result<String, Fail> {
	std::fs::read_to_string(path)
		.map_err(|e| Fail::Input(format!("cannot read {}: {e}", path.display())))
}
