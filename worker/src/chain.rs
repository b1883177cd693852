//! The worker's side of the chain: a [`Failover`] connection over the configured nodes, and the
//! journal-first way every extrinsic is sent ([`Chain::send`]): signed, written to the journal,
//! then broadcast; after a crash the same bytes are sent again, so the chain sees one
//! transaction, never two.

use std::time::Duration;

use stint_client::{Backoff, Client, Error, Failover, Keypair, Payload, Wait};
use stint_primitives::LeaseId;

use crate::{
	journal::{Journal, JournalError, SignedExtrinsic},
	log,
	metrics::Metrics,
};

/// How long one read or send may take before the connection counts as broken.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How long after an extrinsic was seen in a block a finalized state still asking for it means
/// that block was dropped (finality normally follows within a few blocks; while it stalls no
/// finalized state asks at all).
pub const REORG_AFTER: Duration = Duration::from_secs(30);

/// How far before the finalized block [`Chain::send`] looks for bytes whose nonce was used.
const SEEN_BEFORE_FINALIZED: u64 = 8;

/// Points where tests make the worker crash (`STINT_WORKER_CRASH_AT`), to prove that a restart
/// from any of them sends exactly one result.
pub fn crash_point(point: &str) {
	if std::env::var("STINT_WORKER_CRASH_AT").is_ok_and(|at| at == point) {
		log::error("chain", None, format!("crashing at {point} (STINT_WORKER_CRASH_AT)"));
		std::process::abort();
	}
}

/// The node connection, and the worker key's nonces.
///
/// Every transaction the worker signs takes its nonce here: the larger of the pool's next nonce
/// and one past the last this worker handed out. Tasks signing at once never share a nonce, and a
/// transaction signed and journaled but not yet sent (a crash between the two) keeps its nonce:
/// nothing else is signed with it before it is sent again ([`Chain::reserve`] at start-up).
pub struct Chain {
	pub failover: Failover,
	metrics: Metrics,
	next_nonce: tokio::sync::Mutex<Option<u64>>,
}

/// How a send ended.
#[derive(Debug)]
pub enum Sent {
	/// In a block, and it succeeded.
	Included,
	/// In a block, and the chain refused it (a pallet error).
	Refused(String),
	/// Not accepted: the pool rejected it (stale nonce, expired, already in), or the node
	/// broke off. The journal's copy is dropped when `drop_signed` is set, so the next try
	/// signs again (around the same report).
	Rejected { why: String, drop_signed: bool },
}

/// What to do with journaled bytes whose era is over at the best block.
/// What a node's rejection of signed bytes says of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rejection {
	/// Their nonce is used (by them, in a block, or by another of the key's transactions):
	/// these bytes never go in again.
	NonceUsed,
	/// Expired or invalid: never again either.
	Dead,
	/// Anything else (a full pool, bytes banned for a while, the node busy): perhaps later.
	Transient,
}

impl Rejection {
	fn of(why: &str) -> Self {
		let lower = why.to_lowercase();
		if ["stale", "outdated"].iter().any(|word| lower.contains(word)) {
			Self::NonceUsed
		} else if ["invalid", "ancient", "bad proof", "bad signature"]
			.iter()
			.any(|word| lower.contains(word))
		{
			Self::Dead
		} else {
			Self::Transient
		}
	}
}

#[derive(Debug, PartialEq, Eq)]
enum PastEra {
	/// They are in no block and never will be: sign the same report again (with the same
	/// nonce where it is still free, so at most one of the two can ever go in).
	SignAgain,
	/// They may be in a block not finalized yet: ask again later.
	Wait,
}

/// Bytes valid for blocks before `until`, signed with `nonce`, asked for again at a finalized
/// state (so not in any finalized block), where the last finalized block is `finalized` and the
/// signer's next nonce at the best block (and pool) is `next`.
fn past_era(until: u64, finalized: u64, next: u64, nonce: u64) -> PastEra {
	// Every block that could hold them is finalized, and none does.
	if finalized + 1 >= until {
		return PastEra::SignAgain;
	}
	// Their nonce is free at the best block: they are not in the best chain, and no block
	// built from now on can take them.
	match next <= nonce {
		true => PastEra::SignAgain,
		false => PastEra::Wait,
	}
}

impl Chain {
	pub fn new(urls: Vec<String>, metrics: Metrics) -> Result<Self, Error> {
		// Rounds of every URL 0.5, 1, 2, 4 s apart: a node restarting (about ten seconds) is
		// waited for within one reconnection, not counted as three failures.
		let backoff =
			Backoff { first: Duration::from_millis(500), max: Duration::from_secs(4), rounds: 5 };
		Ok(Self {
			failover: Failover::new(urls, backoff)?,
			metrics,
			next_nonce: tokio::sync::Mutex::new(None),
		})
	}

	/// Keeps `nonce` (of a journaled transaction not known to be in) from being handed out.
	pub async fn reserve(&self, nonce: u64) {
		let mut next = self.next_nonce.lock().await;
		*next = Some(next.unwrap_or(0).max(nonce + 1));
	}

	/// Forgets the nonces handed out: the next one is read from the pool again (after a
	/// transaction was rejected, so that its nonce is not left as a gap).
	pub async fn resync(&self) {
		*self.next_nonce.lock().await = None;
	}

	/// Signs `call` with the next nonce of `signer`.
	pub async fn sign(
		&self,
		client: &Client,
		call: &impl Payload,
		signer: &Keypair,
	) -> Result<stint_client::SignedTx, Error> {
		let mut next = self.next_nonce.lock().await;
		let pool = client.next_nonce(&stint_client::account_of(signer)).await?;
		let nonce = pool.max(next.unwrap_or(0));
		let signed = client.sign(call, signer, Some(nonce)).await?;
		*next = Some(nonce + 1);
		Ok(signed)
	}

	/// Signs and sends `call` (not journaled: bids, retractions, settlements), waiting for a
	/// block.
	pub async fn submit(
		&self,
		call: &impl Payload,
		signer: &Keypair,
		kind: &str,
	) -> Result<stint_client::Included, Error> {
		let client = self.client().await?;
		let signed = tokio::time::timeout(CALL_TIMEOUT, self.sign(&client, call, signer))
			.await
			.map_err(|_| Error::Rpc("signing timed out".into()))??;
		let sent = tokio::time::timeout(
			CALL_TIMEOUT,
			client.broadcast(&signed.bytes, Wait::InBlock, |_| {}),
		)
		.await
		.map_err(|_| Error::Rpc("no answer in time".into()))
		.and_then(|sent| sent);
		if sent.is_err() {
			// Not in a block: it may never be (refused by the pool, or lost with a node that
			// did not answer). The next transaction asks the pool for its nonce again, so a
			// nonce that never went in cannot leave every later one waiting behind it.
			self.resync().await;
		}
		let result = if sent.is_ok() { "ok" } else { "error" };
		self.metrics.submissions.with_label_values(&[kind, result]).inc();
		sent
	}

	pub async fn client(&self) -> Result<Client, Error> {
		let client = self.failover.client().await?;
		self.metrics.chain_connected.set(1);
		Ok(client)
	}

	/// Drops the connection and connects again (to the next node that answers).
	pub async fn reconnect(&self) -> Result<Client, Error> {
		self.metrics.chain_connected.set(0);
		self.metrics.reconnects.inc();
		let client = self.failover.reconnect().await?;
		self.metrics.chain_connected.set(1);
		Ok(client)
	}

	/// Whether `signed`'s bytes are in a block of the best chain since a little before the
	/// finalized one: `None` when the node cannot say.
	async fn seen_in_chain(&self, client: &Client, signed: &SignedExtrinsic) -> Option<bool> {
		let hash: [u8; 32] = signed.hash.clone().try_into().ok()?;
		let (_, finalized) =
			tokio::time::timeout(CALL_TIMEOUT, client.finalized_head()).await.ok()?.ok()?;
		// A few blocks before the finalized one: the state the caller planned from may be older.
		let after = finalized.saturating_sub(SEEN_BEFORE_FINALIZED);
		tokio::time::timeout(CALL_TIMEOUT, client.in_best_chain_after(hash, after)).await.ok()?.ok()
	}

	/// Sends `call` for the journal slot `slot` of `lease`, signed by `signer`: the bytes
	/// already signed for that slot if there are any, else newly signed ones, recorded in the
	/// journal before they leave. Waits for a block.
	pub async fn send(
		&self,
		journal: &Journal,
		lease: LeaseId,
		slot: &str,
		call: &impl Payload,
		signer: &Keypair,
	) -> Result<Sent, JournalError> {
		let kind = slot.split('/').next().unwrap_or(slot).to_string();
		let client = match self.client().await {
			Ok(client) => client,
			Err(e) => return Ok(Sent::Rejected { why: e.to_string(), drop_signed: false }),
		};
		let mut entry = journal
			.get(lease)?
			.ok_or_else(|| JournalError::Db(format!("lease {lease} is not in the journal")))?;
		if let Some(signed) = entry.extrinsics.get(slot).filter(|s| !s.included) {
			if let Some(until) = signed.valid_until {
				// Past its era these bytes can never go in: sign again, around the same report.
				// (Only a lease still waiting for this slot gets here: one whose transaction
				// went in is no longer planned for.)
				let best = tokio::time::timeout(CALL_TIMEOUT, client.best_number()).await;
				if let Ok(Ok(best)) = best {
					if best + 1 >= until {
						let account = stint_client::account_of(signer);
						let (finalized, next) = tokio::join!(
							tokio::time::timeout(CALL_TIMEOUT, client.finalized_head()),
							tokio::time::timeout(CALL_TIMEOUT, client.next_nonce(&account)),
						);
						let (Ok(Ok((_, finalized))), Ok(Ok(next))) = (finalized, next) else {
							let why = "cannot read the finalized block and the nonce".to_string();
							return Ok(Sent::Rejected { why, drop_signed: false });
						};
						match past_era(until, finalized, next, signed.nonce) {
							PastEra::SignAgain => {
								log::warn(
									"chain",
									Some(lease),
									format!(
										"{slot}: signed for blocks before {until}, now {best}: \
										 signing again"
									),
								);
								journal.drop_extrinsic(lease, slot)?;
								entry.extrinsics.remove(slot);
								self.resync().await;
							}
							PastEra::Wait => {
								// Its nonce is used in the best chain: in all likelihood by
								// these bytes, in a block finality has not reached yet. A new
								// signature would only be refused there, for a fee.
								let why = format!(
									"{slot}: signed for blocks before {until}, its nonce used in \
									 a block after the finalized {finalized}: waiting for finality"
								);
								return Ok(Sent::Rejected { why, drop_signed: false });
							}
						}
					}
				}
			}
		}
		// Sent again although it was seen in a block: that block left the chain (a
		// reorganisation), since the finalized state still asks for what it did.
		let mut again = false;
		let signed = match entry.extrinsics.get(slot) {
			// In a block already: sending it again could only be refused. One that was refused
			// there stays refused: it must never read as done (an ack refused is no ack).
			Some(signed) if signed.included => {
				let since = signed.included_ms.map(|at| crate::unix_ms().saturating_sub(at));
				match &signed.refused {
					Some(why) => return Ok(Sent::Refused(why.clone())),
					// Asked for again long after its block: that block is gone, the same
					// bytes go out again (their nonce is free again).
					None if since.is_some_and(|ms| ms >= REORG_AFTER.as_millis() as u64) => {
						log::warn(
							"chain",
							Some(lease),
							format!(
								"{slot}: in a block {} s ago and still asked for at a finalized \
								 block: sending it again",
								since.unwrap_or_default() / 1000
							),
						);
						again = true;
						signed.clone()
					}
					None => return Ok(Sent::Included),
				}
			}
			Some(signed) => signed.clone(),
			None => {
				let tx = match tokio::time::timeout(CALL_TIMEOUT, self.sign(&client, call, signer))
					.await
				{
					Ok(Ok(tx)) => tx,
					Ok(Err(e)) => {
						return Ok(Sent::Rejected { why: e.to_string(), drop_signed: false })
					}
					Err(_) => {
						return Ok(Sent::Rejected {
							why: "signing timed out".into(),
							drop_signed: false,
						})
					}
				};
				let signed = SignedExtrinsic {
					slot: slot.to_string(),
					bytes: tx.bytes,
					hash: tx.hash,
					nonce: tx.nonce,
					included: false,
					included_ms: None,
					valid_until: tx.valid_until,
					refused: None,
				};
				entry.extrinsics.insert(slot.to_string(), signed.clone());
				journal.put(&entry)?;
				crash_point(&format!("after-sign-{kind}"));
				signed
			}
		};
		let sent = tokio::time::timeout(
			CALL_TIMEOUT,
			client.broadcast(&signed.bytes, Wait::InBlock, |_| {}),
		)
		.await;
		crash_point(&format!("after-broadcast-{kind}"));
		let outcome = match sent {
			Ok(Ok(_)) => Sent::Included,
			Ok(Err(Error::Dispatch { pallet, error, docs })) => {
				Sent::Refused(format!("{pallet}.{error}: {docs}"))
			}
			Ok(Err(Error::Refused(why))) => Sent::Refused(why),
			Ok(Err(Error::Rejected(why))) => {
				// Stale (its nonce was used: it, or another, is in), or expired, or invalid:
				// these bytes will never go in again.
				let rejection = Rejection::of(&why);
				let dead = rejection != Rejection::Transient;
				match rejection == Rejection::NonceUsed && !again {
					// Sent before, its answer lost (a timeout, a node that went away), and in a
					// block the finalized state does not show yet: done, not to be signed again
					// (a new signature of an ack, say, would only be refused).
					true => match self.seen_in_chain(&client, &signed).await {
						Some(true) => {
							log::info(
								"chain",
								Some(lease),
								format!("{slot}: already in a block, its answer was lost"),
							);
							Sent::Included
						}
						Some(false) => Sent::Rejected { why, drop_signed: true },
						None => Sent::Rejected { why, drop_signed: false },
					},
					false => Sent::Rejected { why, drop_signed: dead },
				}
			}
			Ok(Err(other)) => Sent::Rejected { why: other.to_string(), drop_signed: false },
			Err(_) => Sent::Rejected { why: "no answer in time".into(), drop_signed: false },
		};
		let result = match &outcome {
			Sent::Included => "ok",
			Sent::Refused(_) => "refused",
			Sent::Rejected { .. } => "rejected",
		};
		self.metrics.submissions.with_label_values(&[&kind, result]).inc();
		// Sent again and not taken (stale: its nonce is used, so it is in a block after all,
		// one not finalized yet): it stays as it was, seen in a block, and is asked about again
		// only after another while.
		let outcome = match outcome {
			Sent::Rejected { .. } if again => Sent::Included,
			outcome => outcome,
		};
		let mut entry = journal.get(lease)?.unwrap_or(entry);
		match &outcome {
			Sent::Included | Sent::Refused(_) => {
				if let Some(record) = entry.extrinsics.get_mut(slot) {
					record.included = true;
					record.included_ms = Some(crate::unix_ms());
					if let Sent::Refused(why) = &outcome {
						record.refused = Some(why.clone());
					}
				}
				journal.put(&entry)?;
			}
			Sent::Rejected { drop_signed: true, .. } => {
				journal.drop_extrinsic(lease, slot)?;
				self.resync().await;
			}
			Sent::Rejected { .. } => {}
		}
		Ok(outcome)
	}
}

#[cfg(test)]
mod tests {
	use super::{past_era, PastEra::*, Rejection};

	#[test]
	fn a_rejection_says_whether_the_bytes_can_ever_go_in() {
		// As the node's pool words them (sp-runtime's `InvalidTransaction`, the pool's errors).
		let rows = [
			("Invalid Transaction: Transaction is outdated", Rejection::NonceUsed),
			("Transaction is stale", Rejection::NonceUsed),
			("Invalid Transaction: Transaction has an ancient birth block", Rejection::Dead),
			("Invalid Transaction: Transaction has a bad signature", Rejection::Dead),
			("Transaction has a bad proof", Rejection::Dead),
			("Transaction has a bad signature", Rejection::Dead),
			("Transaction will be valid in the future", Rejection::Transient),
			("Transaction is temporarily banned", Rejection::Transient),
			("Transaction pool is full", Rejection::Transient),
			("Immediately Dropped: the pool is busy", Rejection::Transient),
		];
		for (why, expected) in rows {
			assert_eq!(Rejection::of(why), expected, "{why}");
		}
	}

	#[test]
	fn bytes_past_their_era_are_signed_again_only_when_no_block_can_hold_them() {
		// (valid before, finalized, next nonce at the best block, their nonce)
		let rows = [
			("never sent: its nonce free", (40, 30, 7, 7), SignAgain),
			("a later nonce handed out meanwhile, theirs still free", (40, 30, 5, 7), SignAgain),
			("its nonce used after the finalized block: maybe these bytes", (40, 30, 8, 7), Wait),
			("every block that could hold them finalized", (40, 39, 8, 7), SignAgain),
			("finality past the era", (40, 45, 8, 7), SignAgain),
		];
		for (case, (until, finalized, next, nonce), expected) in rows {
			assert_eq!(past_era(until, finalized, next, nonce), expected, "{case}");
		}
	}
}
