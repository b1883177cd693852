//! Bidding: the executor's health as it bears on new work, settling streams, and each round of
//! bids through the policy in `crate::bidding`.

use super::*;

/// A bid sent and not yet in a block: the devices it offers and the disk its order may write.
pub(super) type PendingBid = (Vec<[u8; 32]>, u64);

/// Bidding's own state.
#[derive(Default)]
pub(super) struct Bidding {
	/// A bidding round is under way.
	pub(super) round: SingleFlight,
	/// Orders whose bid the chain refused, and until which block not to try again.
	pub(super) refused: Mutex<HashMap<u64, u32>>,
	/// The first block of the next worker era, once this era's cap on what the provider's
	/// worker keys commit in bids is reached: no new bid before it.
	pub(super) capped_until: AtomicU32,
	/// Where the next bidding round goes on reading servable orders: the chain reads a bounded
	/// number of open orders per page, so a crowd of orders this worker cannot serve costs
	/// rounds, never the orders behind it. `None`: from the start.
	pub(super) servable_cursor: Mutex<Option<u64>>,
	/// Bids sent and not yet in a block: their orders and devices.
	pub(super) pending: Mutex<HashMap<u64, PendingBid>>,
	/// Since when the executor has not answered at bidding rounds (said once, until it
	/// answers).
	pub(super) executor_down: Mutex<Option<std::time::Instant>>,
	/// What the machine lacked when it last gave a lease up: no new bid until it is back.
	pub(super) shortage: Mutex<Option<Shortage>>,
}

/// The settlement beat's own state.
pub(super) struct Settling {
	/// The last settlement beat (finalized block / `settle_every`) acted on: finality may
	/// jump over the beat's own block, and the beat must not be lost with it.
	pub(super) last_beat: AtomicU32,
	/// A beat's settlements and confirmations are still being sent: the next beat waits, so
	/// that one call is never sent twice (each would cost a fee, the second one for nothing).
	pub(super) busy: SingleFlight,
}

impl Default for Settling {
	fn default() -> Self {
		Self { last_beat: AtomicU32::new(u32::MAX), busy: SingleFlight::default() }
	}
}

/// How many servable orders a bidding round looks for, and how many pages it reads at most.
const SERVABLE_PER_ROUND: u32 = 32;
const SERVABLE_PAGES_PER_ROUND: usize = 4;

/// What the bidding policy reads of `order`, offered on `devices` (with their models).
fn candidate(
	order: u64,
	record: &stint_client::OrderRecord,
	devices: impl Iterator<Item = [u8; 32]>,
	models: &HashMap<[u8; 32], String>,
	buyer: stint_client::BuyerStanding,
	block: u32,
	accept_period: u32,
) -> bidding::Candidate {
	let manual = if record.terms.auto_accept { 0 } else { accept_period };
	bidding::Candidate {
		stands_for: record.bids_close_at.saturating_sub(block).saturating_add(manual),
		buyer,
		verdict_window: record.terms.verdict_window,
		order,
		devices: devices.map(|d| (d, models.get(&d).cloned().unwrap_or_default())).collect(),
		max_price_per_block: record.terms.max_price_per_block,
		duration: record.terms.duration,
		image: record.spec.0.image.to_vec(),
		max_output_bytes: record.spec.0.max_output_bytes,
		env: record.spec.0.env.iter().map(|var| var.key.to_vec()).collect(),
	}
}

impl<E: Executor> Worker<E> {
	/// Whether the executor could start a job now. Going down raises an alert (and counts an
	/// executor error) once, coming back is said once: the rounds in between stay quiet.
	pub(super) async fn executor_ready(&self) -> bool {
		let answer = self.executor.ready().await;
		let mut down = self.bidding.executor_down.lock().expect("not poisoned");
		match answer {
			Ok(()) => {
				if down.take().is_some() {
					log::info("executor", None, "the executor answers again: bidding again");
				}
				true
			}
			Err(why) => {
				if down.is_none() {
					*down = Some(std::time::Instant::now());
					self.metrics.errors.with_label_values(&["executor"]).inc();
					log::alert(
						"executor",
						None,
						format!(
							"{why}: no new bids until it answers, standing bids retracted if it \
							 stays silent for {} s (a lease won now could not be acknowledged)",
							self.config.bidding.retract_after_secs
						),
					);
				}
				false
			}
		}
	}

	/// Whether the executor has been silent long enough for standing bids to go: a retraction
	/// late in an order's bid window forfeits the bid's deposit, too much for one slow answer
	/// (an engine busy with a pull).
	pub(super) fn executor_long_down(&self) -> bool {
		let after = Duration::from_secs(self.config.bidding.retract_after_secs);
		self.bidding
			.executor_down
			.lock()
			.expect("not poisoned")
			.is_some_and(|since| since.elapsed() >= after)
	}

	/// Whether what the machine lacked when it last gave a lease up (see `Worker::short`) is
	/// still missing, with `scratch_free_bytes` free beside the live leases: then no new bid.
	/// Its return is said once, and bidding goes on.
	pub(super) fn still_short(&self, scratch_free_bytes: u64) -> bool {
		let mut shortage = self.bidding.shortage.lock().expect("not poisoned");
		let short = match &*shortage {
			None => return false,
			Some(Shortage::Disk(needed)) => scratch_free_bytes < *needed,
			Some(Shortage::Gpus(devices)) => self.gpus.uuids_for(devices).is_err(),
			// Asked of the executor at this round already (it answers, or no round gets here).
			Some(Shortage::Executor) => false,
		};
		if !short {
			if let Some(back) = shortage.take() {
				log::info("bidding", None, format!("{} is back: bidding again", back.what()));
			}
		}
		short
	}

	pub(super) async fn settle(self: &Arc<Self>, lease: LeaseId, stream: u64) {
		let call = runtime::tx().streams().settle(stream);
		if let Err(why) = self.chain.submit(&call, &self.key, "settle").await {
			log::warn("bidding", Some(lease), format!("settling stream {stream}: {why}"));
		}
	}

	/// Closes `order`, whose deadline the chain's hook has not reached yet (`close_order`).
	async fn close_overdue(&self, order: u64) {
		let call = runtime::tx().market().close_order(order);
		match self.chain.submit(&call, &self.key, "close").await {
			Ok(_) => log::info(
				"bidding",
				None,
				format!("order {order}: closed, the chain's hook had not reached it yet"),
			),
			Err(e) => log::warn("bidding", None, format!("order {order}: closing it: {e}")),
		}
	}

	/// Retracts this key's standing bids that no longer fit (the policy, the devices this
	/// machine sees, its scratch space), then bids on the orders the runtime says this key can
	/// serve, as the policy allows (no new bids with bidding disabled). `client` reads at a best
	/// block.
	pub(super) async fn bid_round(
		self: &Arc<Self>,
		client: &Client,
		block: u32,
	) -> Result<(), String> {
		let rpc = |e: stint_client::Error| e.to_string();
		let duties = client.duties(&self.account).await.map_err(rpc)?;
		let live = duties.len() as u32;
		let Some((provider, devices)) = client.acting_for(&self.account).await.map_err(rpc)? else {
			return Ok(());
		};
		if let Some(devices) = &devices {
			self.following.bound_devices.store(devices.len().max(1) as u32, Ordering::Relaxed);
		}
		let record = client.provider(&provider).await.map_err(rpc)?.ok_or("no provider record")?;
		let models: HashMap<[u8; 32], String> = record
			.hardware
			.gpus
			.0
			.iter()
			.map(|gpu| (gpu.0.uuid_hash, String::from_utf8_lossy(&gpu.0.model).into_owned()))
			.collect();
		let standing_bids = client.bids_of(&self.account).await.map_err(rpc)?;
		// What the live leases may still write is not free for new work: each may fill its
		// outputs up to its order's limit.
		let writing: Vec<(u64, PathBuf)> = duties
			.iter()
			// A job that has exited writes no more.
			.filter(|duty| {
				self.journal.get(duty.id).ok().flatten().is_none_or(|e| e.exit.is_none())
			})
			.map(|duty| {
				let limit = duty.spec.as_ref().map_or(0, |spec| spec.max_output_bytes);
				(limit, self.dirs(duty.id).outputs())
			})
			.collect();
		let live_reserved: u64 = tokio::task::spawn_blocking(move || {
			writing
				.iter()
				.map(|(limit, outputs)| limit.saturating_sub(commit::usage(outputs).bytes))
				.sum()
		})
		.await
		.map_err(|e| e.to_string())?;
		let scratch_free_bytes =
			stint_probe::free_bytes(&self.config.worker.data_dir)?.saturating_sub(live_reserved);
		let mut bids_reserved = 0u64;
		let executor_ready = self.executor_ready().await;
		if executor_ready {
			// An engine down at start: whether jobs can have the GPUs, once it answers.
			let _ = self.gpus.settle(&*self.executor, When::Running).await;
		}
		let incompatible = self.known_incompatible();
		let costs = client.bid_costs().await.map_err(rpc)?;
		let worker_era = costs.worker_era.max(1);
		let mut displaceable = Vec::new();
		let mut retracted = HashSet::new();
		for (order, bid) in &standing_bids {
			// One order that cannot be read never stops the others; its bid stays.
			let Ok(Some(record)) = client.order(*order).await else { continue };
			// The chain's hook handles a few deadlines a block, in the order they fell due:
			// behind a flood of orders it reaches this one late. Closing it does what the hook
			// would, at once, and is free.
			if record.deadline.as_ref().is_some_and(|slot| slot.block <= block) {
				self.close_overdue(*order).await;
				continue;
			}
			// A standing bid is kept whatever its buyer became: retracting it late forfeits.
			let candidate = candidate(
				*order,
				&record,
				bid.devices.0.iter().copied(),
				&models,
				Default::default(),
				block,
				costs.accept_period,
			);
			// It may give way to an order that closes much sooner while withdrawing it is
			// free: before the last quarter of its window.
			let quarter = (record.terms.bid_window / 4).max(1);
			if block < record.bids_close_at.saturating_sub(quarter) {
				displaceable.push(bidding::Displaceable {
					order: *order,
					devices: bid.devices.0.clone(),
					stands_for: candidate.stands_for,
				});
			}
			let why = match executor_ready {
				_ if incompatible => Some(bidding::Skip::RuntimeIncompatible),
				false if self.executor_long_down() => Some(bidding::Skip::ExecutorDown),
				// Silent only a moment: kept (and its bytes held) until it answers or not.
				false => None,
				true => bidding::stale(
					&self.config.bidding,
					&candidate,
					bid.price_per_block,
					// Beside what the bids kept so far may write.
					scratch_free_bytes.saturating_sub(bids_reserved),
					|d| self.gpus.offers(d),
				),
			};
			let Some(why) = why else {
				bids_reserved = bids_reserved.saturating_add(candidate.max_output_bytes);
				continue;
			};
			let call = runtime::tx().market().retract_bid(*order);
			let result = self.chain.submit(&call, &self.key, "retract").await;
			let outcome = if result.is_ok() { "retracted" } else { "error" };
			self.metrics.bids.with_label_values(&[outcome]).inc();
			match result {
				Ok(_) => {
					retracted.insert(*order);
					log::info(
						"bidding",
						None,
						format!("order {order}: bid retracted, it no longer fits ({why:?})"),
					);
				}
				Err(e) => log::warn(
					"bidding",
					None,
					format!("order {order}: retracting a bid that no longer fits ({why:?}): {e}"),
				),
			}
		}
		if !self.config.bidding.enabled || !executor_ready || incompatible {
			return Ok(());
		}
		if self.still_short(scratch_free_bytes) {
			return Ok(());
		}
		// The provider's worker keys committed this era's cap in bids: the chain would refuse
		// every new one until the next era.
		if block < self.bidding.capped_until.load(Ordering::Relaxed) {
			return Ok(());
		}
		let standing_bids: Vec<_> =
			standing_bids.into_iter().filter(|(order, _)| !retracted.contains(order)).collect();
		let bond = client.bond(&provider).await.map_err(rpc)?;
		let (pending, pending_bytes) = {
			let pending = self.bidding.pending.lock().expect("not poisoned");
			(pending.len(), pending.values().map(|(_, bytes)| *bytes).sum::<u64>())
		};
		let standing = bidding::Standing {
			active: matches!(
				record.status,
				runtime::runtime_types::pallet_providers::types::ProviderStatus::Active
			),
			live_leases: live,
			standing_bids: (standing_bids.len() + pending) as u32,
			free_bond: bond.map_or(0, |b| b.active.saturating_sub(b.locked)),
			costs,
			// Beside the live leases, the bids that stand and those on their way.
			scratch_free_bytes: scratch_free_bytes
				.saturating_sub(bids_reserved)
				.saturating_sub(pending_bytes),
		};
		// Up to four pages a round, going on where the last round stopped and starting over
		// once the end of the open orders is reached.
		let mut servable = Vec::new();
		let mut cursor = *self.bidding.servable_cursor.lock().expect("not poisoned");
		for _ in 0..SERVABLE_PAGES_PER_ROUND {
			let (page, next) = client
				.servable_orders(&self.account, cursor, SERVABLE_PER_ROUND)
				.await
				.map_err(rpc)?;
			servable.extend(page);
			cursor = next;
			if cursor.is_none() || servable.len() >= SERVABLE_PER_ROUND as usize {
				break;
			}
		}
		*self.bidding.servable_cursor.lock().expect("not poisoned") = cursor;
		let mut candidates = Vec::new();
		{
			let mut refused = self.bidding.refused.lock().expect("not poisoned");
			refused.retain(|_, until| *until > block);
			let pending = self.bidding.pending.lock().expect("not poisoned");
			for (order, offered) in servable {
				if refused.contains_key(&order) || pending.contains_key(&order) {
					continue;
				}
				candidates.push((order, offered));
			}
		}
		let mut described = Vec::new();
		let mut buyers = HashMap::new();
		for (order, offered) in candidates {
			// One order that cannot be read never stops the others.
			let Ok(Some(record)) = client.order(order).await else { continue };
			let buyer = match buyers.get(&record.buyer.0) {
				Some(standing) => *standing,
				None => {
					let Ok(standing) = client.buyer_record(&record.buyer).await else { continue };
					buyers.insert(record.buyer.0, standing);
					standing
				}
			};
			described.push(candidate(
				order,
				&record,
				offered.iter().copied(),
				&models,
				buyer,
				block,
				costs.accept_period,
			));
		}
		let mut busy: bidding::Busy =
			standing_bids.iter().flat_map(|(_, bid)| bid.devices.0.iter().copied()).collect();
		busy.extend(duties.iter().flat_map(|duty| duty.lease.devices.0.iter().copied()));
		busy.extend(
			self.bidding
				.pending
				.lock()
				.expect("not poisoned")
				.values()
				.flat_map(|(d, _)| d)
				.copied(),
		);
		let mine: Vec<([u8; 32], String)> = devices
			.iter()
			.flatten()
			.map(|d| (*d, models.get(d).cloned().unwrap_or_default()))
			.collect();
		let mut offered: bidding::Busy = busy.clone();
		let described: Vec<bidding::Candidate> = described
			.into_iter()
			.map(|candidate| {
				let candidate = bidding::with_free_devices(candidate, &mine, &offered);
				offered.extend(candidate.devices.iter().map(|(device, _)| *device));
				candidate
			})
			.collect();
		let displaceable: Vec<_> =
			displaceable.into_iter().filter(|held| !retracted.contains(&held.order)).collect();
		let choice = bidding::choose(
			&self.config.bidding,
			&standing,
			&described,
			|d| self.gpus.offers(d),
			&busy,
			&displaceable,
		);
		// A bid that gives way is withdrawn before the bid that takes its place is sent (the
		// chain would take both, but the devices are promised to one order at a time).
		for order in &choice.displaced {
			let call = runtime::tx().market().retract_bid(*order);
			match self.chain.submit(&call, &self.key, "retract").await {
				Ok(_) => {
					self.metrics.bids.with_label_values(&["retracted"]).inc();
					log::info(
						"bidding",
						None,
						format!("order {order}: bid retracted for an order that closes sooner"),
					);
				}
				Err(e) => {
					log::warn("bidding", None, format!("order {order}: giving way: {e}"));
					// Its devices stay promised: no bid takes their place this round.
					return Ok(());
				}
			}
		}
		let bids = choice.bids;
		// Each bid is sent on its own: a round does not wait a block for one bid to land before
		// the next order is seen (bid windows can be two blocks). Until it lands, its order is
		// skipped and its devices count as promised.
		for bid in bids {
			self.bidding
				.pending
				.lock()
				.expect("not poisoned")
				.insert(bid.order, (bid.devices.clone(), bid.max_output_bytes));
			let me = self.clone();
			spawn_named(&self.metrics, "bid", async move {
				let call = runtime::tx().market().place_bid(
					bid.order,
					bid.price_per_block,
					stint_client::Bounded(bid.devices.clone()),
				);
				match me.chain.submit(&call, &me.key, "bid").await {
					Ok(_) => {
						me.metrics.bids.with_label_values(&["placed"]).inc();
						log::info(
							"bidding",
							None,
							format!(
								"order {}: bid {} per block",
								bid.order,
								stint_client::format_stint(bid.price_per_block)
							),
						);
					}
					Err(why) if why.to_string().contains("WorkerCommitCapReached") => {
						me.metrics.bids.with_label_values(&["refused"]).inc();
						let next = (block / worker_era + 1) * worker_era;
						if me.bidding.capped_until.swap(next, Ordering::Relaxed) < next {
							log::warn(
								"bidding",
								None,
								format!(
									"the provider's worker keys committed this era's cap of its \
									 funds in bids: no new bid before block {next} (its own \
									 account may still bid)"
								),
							);
						}
					}
					Err(why) => {
						me.metrics.bids.with_label_values(&["refused"]).inc();
						me.bidding
							.refused
							.lock()
							.expect("not poisoned")
							.insert(bid.order, block + 20);
						log::warn("bidding", None, format!("order {}: {why}", bid.order));
					}
				}
				me.bidding.pending.lock().expect("not poisoned").remove(&bid.order);
			});
		}
		Ok(())
	}
}
