//! A connection that survives its node: several URLs, tried in turn, with backoff between rounds.
//!
//! A worker holds one [`Failover`]. It asks [`Failover::client`] for the current connection, and
//! when a call on it fails (or no finalized block arrived for too long, a half-open socket), it
//! calls [`Failover::reconnect`], which drops that connection and connects to the next URL that
//! answers, starting after the one that failed, waiting longer after each round in which none
//! did.

use std::time::Duration;

use tokio::sync::Mutex;

use crate::{Client, Error};

/// How long to wait between rounds over the URLs: `first`, doubling up to `max`, for at most
/// `rounds` rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
	pub first: Duration,
	pub max: Duration,
	pub rounds: u32,
}

impl Default for Backoff {
	/// 0.5 s, 1 s, 2 s … up to 30 s, eight rounds (a little over a minute and a half in all).
	fn default() -> Self {
		Self { first: Duration::from_millis(500), max: Duration::from_secs(30), rounds: 8 }
	}
}

impl Backoff {
	/// The wait after round `round` (from 0).
	pub fn delay(&self, round: u32) -> Duration {
		self.first.saturating_mul(2u32.saturating_pow(round)).min(self.max)
	}
}

/// A connection to the first of several nodes that answers.
pub struct Failover {
	urls: Vec<String>,
	backoff: Backoff,
	/// The index of the URL connected to, and the connection.
	current: Mutex<Option<(usize, Client)>>,
	/// The chain every node must be on, once known: a URL that leads to another is passed
	/// over like one that does not answer (its state would say every lease is gone).
	genesis: std::sync::Mutex<Option<[u8; 32]>>,
}

impl Failover {
	/// A connection over `urls` (tried in this order); nothing is connected until first asked.
	pub fn new(urls: Vec<String>, backoff: Backoff) -> Result<Self, Error> {
		if urls.is_empty() {
			return Err(Error::Connect { url: String::new(), reason: "no node URL given".into() });
		}
		Ok(Self { urls, backoff, current: Mutex::new(None), genesis: Default::default() })
	}

	/// From now on, connects only to nodes of the chain whose genesis hash is `genesis`.
	pub fn expect_genesis(&self, genesis: [u8; 32]) {
		*self.genesis.lock().expect("not poisoned") = Some(genesis);
	}

	/// The URLs, in the order they are tried.
	pub fn urls(&self) -> &[String] {
		&self.urls
	}

	/// The URL connected to now, if any.
	pub async fn connected_to(&self) -> Option<String> {
		self.current.lock().await.as_ref().map(|(index, _)| self.urls[*index].clone())
	}

	/// The current connection, connecting first if there is none.
	pub async fn client(&self) -> Result<Client, Error> {
		let mut current = self.current.lock().await;
		if let Some((_, client)) = current.as_ref() {
			return Ok(client.clone());
		}
		let connected = self.connect_from(0).await?;
		let client = connected.1.clone();
		*current = Some(connected);
		Ok(client)
	}

	/// Drops the current connection and connects again, to the URL after the one that failed
	/// first. Fails, naming every URL, when no node answered in any round.
	pub async fn reconnect(&self) -> Result<Client, Error> {
		let mut current = self.current.lock().await;
		let start = current.take().map_or(0, |(index, _)| (index + 1) % self.urls.len());
		let connected = self.connect_from(start).await?;
		let client = connected.1.clone();
		*current = Some(connected);
		Ok(client)
	}

	async fn connect_from(&self, start: usize) -> Result<(usize, Client), Error> {
		let mut last = String::new();
		for round in 0..self.backoff.rounds.max(1) {
			for offset in 0..self.urls.len() {
				let index = (start + offset) % self.urls.len();
				let url = &self.urls[index];
				match tokio::time::timeout(Duration::from_secs(10), Client::connect(url)).await {
					Ok(Ok(client)) => {
						let expected = *self.genesis.lock().expect("not poisoned");
						match expected {
							Some(genesis) if client.genesis_hash() != genesis => {
								last = format!(
									"{url}: on another chain (genesis 0x{}, not 0x{})",
									hex::encode(client.genesis_hash()),
									hex::encode(genesis)
								)
							}
							_ => return Ok((index, client)),
						}
					}
					Ok(Err(error)) => last = format!("{url}: {error}"),
					Err(_) => last = format!("{url}: no answer within 10 s"),
				}
			}
			if round + 1 < self.backoff.rounds {
				tokio::time::sleep(self.backoff.delay(round)).await;
			}
		}
		Err(Error::Connect {
			url: self.urls.join(", "),
			reason: format!(
				"no node answered after {} round(s); last: {last}",
				self.backoff.rounds
			),
		})
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn the_backoff_doubles_up_to_its_ceiling() {
		let backoff =
			Backoff { first: Duration::from_millis(500), max: Duration::from_secs(3), rounds: 5 };
		let delays: Vec<_> = (0..5).map(|r| backoff.delay(r).as_millis()).collect();
		assert_eq!(delays, [500, 1000, 2000, 3000, 3000]);
	}

	#[tokio::test]
	async fn with_no_node_it_names_every_url_and_gives_up() {
		let fast =
			Backoff { first: Duration::from_millis(10), max: Duration::from_millis(20), rounds: 2 };
		let urls = vec!["ws://127.0.0.1:1".to_string(), "ws://127.0.0.1:2".to_string()];
		let failover = Failover::new(urls, fast).unwrap();
		match failover.client().await {
			Err(Error::Connect { url, reason }) => {
				assert_eq!(url, "ws://127.0.0.1:1, ws://127.0.0.1:2");
				assert!(reason.contains("2 round(s)"), "{reason}");
			}
			Err(other) => panic!("{other}"),
			Ok(_) => panic!("connected to nothing"),
		}
		assert!(Failover::new(Vec::new(), fast).is_err());
	}
}
