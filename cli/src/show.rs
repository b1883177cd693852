//! How answers are shown: a few aligned lines for people, JSON for scripts.

use serde_json::{json, Value};
use stint_client::{
	format_stint, AccountId, BidRecord, BondLedger, ChainStatus, DisputeState, DisputeView,
	LeaseRecord, OrderRecord, OrderStatus, ProviderRecord, ReplicaDecision, ReplicasView,
	StreamView, VerdictView,
};
use stint_primitives::DeviceId;

pub fn json(value: &impl serde::Serialize) {
	println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

fn hex(bytes: &[u8]) -> String {
	format!("0x{}", ::hex::encode(bytes))
}

fn text(bytes: &[u8]) -> String {
	String::from_utf8_lossy(bytes).into_owned()
}

pub fn status(status: &ChainStatus, as_json: bool) {
	if as_json {
		return json(status);
	}
	println!("chain            {}", status.chain);
	println!("node             {}", status.node);
	println!("best block       #{}", status.best_block);
	println!("finalized block  #{}", status.finalized_block);
	println!("runtime version  {}", status.spec_version);
	println!("genesis          {}", status.genesis_hash);
	println!("peers            {}", status.peers);
}

fn order_status(status: &OrderStatus) -> String {
	match status {
		OrderStatus::Open => "open".into(),
		OrderStatus::Leased { lease } => format!("leased as lease {lease}"),
	}
}

fn order_json(id: u64, o: &OrderRecord) -> Value {
	let spec = &o.spec.0;
	let req = &o.terms.requirements.0;
	json!({
		"order": id,
		"buyer": o.buyer.to_string(),
		"status": order_status(&o.status),
		"image": text(&spec.image),
		"command": spec.command.iter().map(|w| text(w)).collect::<Vec<_>>(),
		"gpus": req.gpu_count,
		"min_vram_mib": req.min_vram_mib,
		"region": req.region.map(|r| text(&r)),
		"max_price_per_block": o.terms.max_price_per_block,
		"duration_blocks": o.terms.duration,
		"deposit": o.deposit,
		"storage_deposit": o.storage_deposit,
		"bids_close_at": o.bids_close_at,
		"auto_accept": o.terms.auto_accept,
		"bid_count": o.bid_count,
	})
}

pub fn orders(orders: &[(u64, OrderRecord)], as_json: bool) {
	if as_json {
		return json(&orders.iter().map(|(id, o)| order_json(*id, o)).collect::<Vec<_>>());
	}
	if orders.is_empty() {
		println!("no open orders");
		return;
	}
	println!(
		"{:>6}  {:>4}  {:>20}  {:>10}  {:>6}  BUYER",
		"ORDER", "GPUS", "MAX PRICE/BLOCK", "DURATION", "BIDS"
	);
	for (id, o) in orders {
		let duration = o.terms.duration.map(|d| d.to_string()).unwrap_or_else(|| "open".into());
		println!(
			"{id:>6}  {:>4}  {:>20}  {duration:>10}  {:>6}  {}",
			o.terms.requirements.0.gpu_count,
			format_stint(o.terms.max_price_per_block),
			o.bid_count,
			o.buyer
		);
	}
}

pub fn order(id: u64, o: &OrderRecord, bids: &[(AccountId, BidRecord)], as_json: bool) {
	if as_json {
		let mut value = order_json(id, o);
		value["bids"] = bids
			.iter()
			.map(|(p, b)| {
				json!({
					"provider": p.to_string(),
					"price_per_block": b.price_per_block,
					"devices": b.devices.0.iter().map(|d| hex(d)).collect::<Vec<_>>(),
					"placed_at": b.placed_at,
				})
			})
			.collect();
		return json(&value);
	}
	let spec = &o.spec.0;
	let req = &o.terms.requirements.0;
	println!("order            {id} ({})", order_status(&o.status));
	println!("buyer            {}", o.buyer);
	println!("image            {}", text(&spec.image));
	println!(
		"command          {}",
		spec.command.iter().map(|w| text(w)).collect::<Vec<_>>().join(" ")
	);
	println!(
		"gpus             {} × ≥{} MiB, compute ≥{}.{}, driver ≥{}{}",
		req.gpu_count,
		req.min_vram_mib,
		req.min_compute_capability.major,
		req.min_compute_capability.minor,
		req.min_cuda_driver_version,
		req.region.map(|r| format!(", region {}", text(&r))).unwrap_or_default()
	);
	println!("max price/block  {}", format_stint(o.terms.max_price_per_block));
	match o.terms.duration {
		Some(d) => println!("duration         {d} blocks"),
		None => println!("duration         open-ended (runs while funded)"),
	}
	println!("escrow           {}", format_stint(o.deposit));
	println!("storage deposit  {}", format_stint(o.storage_deposit));
	println!(
		"bids close at    #{} ({})",
		o.bids_close_at,
		if o.terms.auto_accept { "auto-accept" } else { "buyer accepts" }
	);
	if bids.is_empty() {
		println!("bids             none");
	}
	for (provider, bid) in bids {
		println!(
			"bid              {} by {provider} on {} device(s)",
			format_stint(bid.price_per_block),
			bid.devices.0.len()
		);
	}
}

pub fn servable(servable: &[(u64, Vec<DeviceId>)], as_json: bool) {
	if as_json {
		return json(
			&servable
				.iter()
				.map(
					|(id, d)| json!({ "order": id, "devices": d.iter().map(|x| hex(x)).collect::<Vec<_>>() }),
				)
				.collect::<Vec<_>>(),
		);
	}
	if servable.is_empty() {
		println!("no open order fits your free GPUs");
	}
	for (id, devices) in servable {
		println!("order {id}: {}", devices.iter().map(|d| hex(d)).collect::<Vec<_>>().join(","));
	}
}

fn lease_json(id: u64, l: &LeaseRecord) -> Value {
	json!({
		"lease": id,
		"order": l.order,
		"buyer": l.buyer.to_string(),
		"provider": l.provider.to_string(),
		"status": format!("{:?}", l.status),
		"price_per_block": l.price_per_block,
		"stream": l.stream,
		"devices": l.devices.0.iter().map(|d| hex(d)).collect::<Vec<_>>(),
		"ack_by": l.ack_by,
		"started_at": l.started_at,
		"ends_at": l.ends_at,
		"checkpoints": l.checkpoints,
		"output_root": l.result.as_ref().map(|r| hex(&r.0.output_root)),
		"exit_code": l.result.as_ref().map(|r| r.0.exit_code),
	})
}

pub fn leases(leases: &[(u64, LeaseRecord)], as_json: bool) {
	if as_json {
		return json(&leases.iter().map(|(id, l)| lease_json(*id, l)).collect::<Vec<_>>());
	}
	if leases.is_empty() {
		println!("no live leases");
		return;
	}
	println!("{:>6}  {:>6}  {:<12}  {:>20}  BUYER", "LEASE", "ORDER", "STATUS", "PRICE/BLOCK");
	for (id, l) in leases {
		println!(
			"{id:>6}  {:>6}  {:<12}  {:>20}  {}",
			l.order,
			format!("{:?}", l.status),
			format_stint(l.price_per_block),
			l.buyer
		);
	}
}

/// How a lease's result is being judged: the buyer's verdict, a dispute, or the replicas.
pub struct Judged<'a> {
	pub verdict: Option<&'a VerdictView>,
	pub dispute: Option<&'a DisputeView>,
	pub replicas: Option<&'a ReplicasView>,
}

fn decision(d: &Option<(u32, ReplicaDecision)>) -> String {
	match d {
		None => "open".into(),
		Some((at, ReplicaDecision::NoMajority)) => {
			format!("no majority (#{at}): the buyer refunded, the order flagged")
		}
		Some((at, ReplicaDecision::Majority { output_root, exit_code, votes })) => format!(
			"majority of {votes} (#{at}): output root {}, exit code {exit_code}",
			hex(output_root)
		),
		Some((at, ReplicaDecision::Alone { lease, output_root, exit_code })) => format!(
			"lease {lease} alone revealed (#{at}): output root {}, exit code {exit_code}; \
			 it waits for the buyer's verdict",
			hex(output_root)
		),
	}
}

pub fn lease(id: u64, l: &LeaseRecord, judged: &Judged, as_json: bool) {
	let Judged { verdict, dispute, replicas } = *judged;
	if as_json {
		let mut value = lease_json(id, l);
		if let Some(d) = dispute {
			value["dispute"] = json!({
				"state": format!("{:?}", d.state),
				"bond": d.bond,
				"draws": d.draws,
				"verifiers": d.verifiers,
			});
		}
		if let Some(v) = verdict {
			value["verdict"] = json!({
				"objections_until": v.objections_until,
				"at_stake": v.at_stake,
				"collateral": v.collateral,
				"withheld": v.withheld,
			});
		}
		if let Some(r) = replicas {
			value["replicas"] = json!({
				"leases": r.replicas.iter().map(|(lease, _)| lease).collect::<Vec<_>>(),
				"committed": r.replicas.iter().filter(|(_, sealed)| *sealed).count(),
				"reveals_from": r.reveals_from,
				"reveal_until": r.reveal_until,
				"decision": decision(&r.decided),
			});
		}
		return json(&value);
	}
	println!("lease            {id} ({:?})", l.status);
	println!("order            {}", l.order);
	println!("buyer            {}", l.buyer);
	println!("provider         {}", l.provider);
	println!("price/block      {}", format_stint(l.price_per_block));
	println!("stream           {}", l.stream);
	println!(
		"devices          {}",
		l.devices.0.iter().map(|d| hex(d)).collect::<Vec<_>>().join(",")
	);
	println!("acknowledge by   #{}", l.ack_by);
	if let Some(at) = l.started_at {
		println!("started          #{at}");
	}
	if let Some(at) = l.ends_at {
		println!("ends             #{at}");
	}
	if let Some(result) = &l.result {
		println!("output root      {}", hex(&result.0.output_root));
		println!("exit code        {}", result.0.exit_code);
		println!("gpu-seconds      {}", result.0.gpu_seconds);
	}
	if let Some(v) = verdict {
		println!("verdict until    #{} (accept-result, or object before then)", v.objections_until);
		println!(
			"withheld         {} (paid to the provider with the verdict)",
			format_stint(v.withheld)
		);
		println!("at stake         {} (slashed if the buyer objects)", format_stint(v.at_stake));
	}
	if let Some(d) = dispute {
		let state = match d.state {
			DisputeState::Drawing { at } => format!("drawing a verifier at #{at}"),
			DisputeState::Verifying { lease } => format!("re-executed on lease {lease}"),
			DisputeState::Upheld => "upheld: the same outputs, the result stood".into(),
			DisputeState::Overturned => "overturned: other outputs, the provider slashed".into(),
			DisputeState::Void => "void: no verifier delivered, the bond refunded".into(),
		};
		println!("dispute          {state}");
		println!("dispute bond     {} ({} draws)", format_stint(d.bond), d.draws);
	}
	if let Some(r) = replicas {
		let leases: Vec<String> = r.replicas.iter().map(|(lease, _)| lease.to_string()).collect();
		let committed = r.replicas.iter().filter(|(_, sealed)| *sealed).count();
		println!("replicas         leases {} ({committed} committed)", leases.join(", "));
		println!("reveals          #{} to #{}", r.reveals_from, r.reveal_until);
		println!("decision         {}", decision(&r.decided));
	}
}

pub fn stream(id: u64, s: &StreamView, as_json: bool) {
	if as_json {
		return json(&json!({
			"stream": id, "owed": s.owed, "remaining": s.remaining, "depletes_at": s.depletes_at
		}));
	}
	println!("stream           {id}");
	println!("owed now         {}", format_stint(s.owed));
	println!("escrow left      {}", format_stint(s.remaining));
	match s.depletes_at {
		Some(at) => println!("runs out at      #{at}"),
		None => println!("runs out at      (not charging: pending or suspended)"),
	}
}

pub fn provider(who: &AccountId, p: &ProviderRecord, as_json: bool) {
	let gpus: Vec<_> = p.hardware.gpus.0.iter().map(|g| &g.0).collect();
	if as_json {
		return json(&json!({
			"provider": who.to_string(),
			"name": text(&p.name.0),
			"endpoint": text(&p.endpoint.0),
			"region": text(&p.region),
			"status": format!("{:?}", p.status),
			"workers": p.workers.0.iter().map(|w| json!({
				"key": hex(&w.key),
				"devices": w.devices.0.iter().map(|d| hex(d)).collect::<Vec<_>>(),
			})).collect::<Vec<_>>(),
			"deposit": p.deposit,
			"active_leases": p.active_leases,
			"completed": p.reputation.completed,
			"gpus": gpus.iter().map(|g| json!({
				"model": text(&g.model), "vram_mib": g.vram_mib, "device": hex(&g.uuid_hash)
			})).collect::<Vec<_>>(),
		}));
	}
	println!("provider         {who} ({})", text(&p.name.0));
	println!("status           {:?}", p.status);
	println!("endpoint         {}", text(&p.endpoint.0));
	println!("region           {}", text(&p.region));
	for worker in &p.workers.0 {
		println!("worker key       {} ({} GPU(s))", hex(&worker.key), worker.devices.0.len());
	}
	println!("active leases    {}", p.active_leases);
	println!(
		"record           {} completed, {} failed, {} slashed, {} no-shows, {} objected to",
		p.reputation.completed,
		p.reputation.failed,
		p.reputation.slashed,
		p.reputation.no_shows,
		p.reputation.objected
	);
	for g in gpus {
		println!("gpu              {} {} MiB  {}", text(&g.model), g.vram_mib, hex(&g.uuid_hash));
	}
}

pub fn bond(who: &AccountId, ledger: &BondLedger, as_json: bool) {
	if as_json {
		return json(&json!({
			"account": who.to_string(), "active": ledger.active, "locked": ledger.locked,
			"unlocking": ledger.unlocking.0.iter().map(|c| c.value).sum::<u128>(),
		}));
	}
	println!("bond of          {who}");
	println!("active           {}", format_stint(ledger.active));
	println!(
		"locked           {} (bids' collateral and deposits, leases' collateral)",
		format_stint(ledger.locked)
	);
	for chunk in &ledger.unlocking.0 {
		println!("unlocking        {} (from #{})", format_stint(chunk.value), chunk.unlocks_at);
	}
}
