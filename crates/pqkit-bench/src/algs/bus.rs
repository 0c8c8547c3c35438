//! The message-bus section: `pqkit-bus` against raw channels (flume, crossbeam-channel, tokio mpsc and
//! broadcast) in the same topology. The channels have no subjects, priorities, policy or security: they are
//! the raw limit a bus built on a queue could reach.
//!
//! Operations (the names of Krait-Core's table; one "operation" of the harness is the whole workload):
//! - `send_10k-plain` / `send_10k-sealed`: 10,000 messages of 64 B published on one subject and all received
//!   by one subscriber: every message is published (peers: sent), then all are drained on the same thread
//!   (pqkit: `Subscription::drain`, the bus's fastest receive API, which hands each message to a closure as a
//!   `MessageRef` borrowing the subscription's buffer instead of an owned `Message`; peers: `try_recv` until
//!   empty, each receive a moved 64-byte array). Sealed: the broker seals under the subscriber's pairwise
//!   delivery key and the subscriber opens, AES-256-GCM; the local publish itself is a method call on the agent's
//!   authenticated handle and builds no publish envelope (docs/bus.md §3, "Local publishes").
//! - `send_10k-plain-batch`: as `send_10k-plain`, but pqkit publishes through `Publisher::publish_batch` in
//!   batches of 100 (one queue lock per batch) and drains with `recv_batch` (owned `Message`s); the peers send
//!   one by one as in `send_10k` (they have no batch send).
//! - `send_10k-<mode>-producers-<P>`: P producer threads each publish 10,000 messages (each through its own
//!   agent) on the one subject concurrently, then one subscriber drains all P × 10,000. The measuring thread
//!   is producer 0 and spins while it waits for the others, so its CPU clock covers the wall time. pqkit drains
//!   with `recv_batch` (owned `Message`s).
//! - `send_10k-<mode>-pairs-<P>`: P threads, each with its own publishing agent, its own subject and its own
//!   subscriber, each doing what `send_10k` does (publish 10,000, then drain them; pqkit drains with
//!   `recv_batch`, owned `Message`s, as `send_10k` did before `drain`), all on the one bus and started together; the time is until all P finish (the measuring thread is pair 0 and spins while it
//!   waits, so its CPU clock covers the wall time). Peers: P independent channels, one per thread. This
//!   measures whether the bus's *shared* state (topic table, metrics, keys, allocator) scales; the
//!   `-producers-` rows cannot scale past their one serial drain (docs/bus.md §8).
//! - `subscribe-<mode>`: one subscribe + unsubscribe on a bus already holding 1,000 subscriptions (sealed: the
//!   pairwise delivery key is created, granted under the session and installed).
//! - `priority_heap`: 1,000 messages of random priority (fixed seed) pushed into a subscriber queue, then
//!   popped in delivery order (four FIFO levels with aging); peer: `std::collections::BinaryHeap` keyed by
//!   (priority, arrival).
//! - `fanout-100-<mode>`: 100 messages of 64 B published to 100 subscribers (10,000 deliveries), drained.
//! - `handshake`: a full authenticated handshake, both sides (ML-KEM-768 + X25519, ML-DSA-65 + Ed25519 over
//!   the transcript), identities built outside timing; the initiator pins the responder's public identity (as
//!   `Bus::connect` pins the broker's), the responder decodes and checks the initiator's.
//!
//! Agreement: every candidate writes the number of messages received and the sum of their first bytes.

use super::{e, pqkit_version, v};
use crate::registry::{Algorithm, Candidate, Op};
use pqkit_bus::queue::{Priority, PriorityQueue};
use pqkit_bus::{Bus, Identity, Message, Policy};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Messages per `send_10k` operation.
pub const N: usize = 10_000;
/// Payload length.
pub const LEN: usize = 64;
/// Subscribers in the fan-out rows.
pub const FAN: usize = 100;
/// Messages per fan-out operation.
pub const FAN_MSGS: usize = 100;
/// Existing subscriptions in the `subscribe` rows.
pub const SUBS: usize = 1000;
/// Messages in `priority_heap`.
pub const HEAP: usize = 1000;

fn digest(out: &mut Vec<u8>, count: u64, sum: u64) {
    out.clear();
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&sum.to_le_bytes());
}

fn payload(data: &[u8], i: usize) -> [u8; LEN] {
    let mut p = [0u8; LEN];
    let n = data.len().min(LEN);
    p[..n].copy_from_slice(&data[..n]);
    p[0] = i as u8;
    p
}

fn bus(sealed: bool) -> Result<Bus, String> {
    let b = Bus::builder(Policy::allow_all()).capacity(1 << 16);
    let b = if sealed { b } else { b.plain() };
    b.build().map_err(e)
}

fn ident(name: &str, n: u8) -> Result<Identity, String> {
    Identity::from_seed(name, &[n; 32]).map_err(e)
}

/// Drains `want` messages from `sub` in batches; returns (count, sum of first bytes).
fn drain(sub: &mut pqkit_bus::Subscription, buf: &mut Vec<Message>, want: usize) -> Result<(u64, u64), String> {
    let (mut c, mut s) = (0u64, 0u64);
    while (c as usize) < want {
        buf.clear();
        let n = sub.recv_batch(buf, want).map_err(e)?;
        if n == 0 {
            return Err(format!("only {c} of {want} messages arrived"));
        }
        for m in buf.iter() {
            s += m.payload()[0] as u64;
        }
        c += n as u64;
    }
    buf.clear();
    Ok((c, s))
}

/// Receives with `try_recv` until the channel is empty; gives (count, sum of the first bytes).
macro_rules! try_drain {
    ($rx:expr) => {{
        let (mut c, mut s) = (0u64, 0u64);
        while let Ok(m) = $rx.try_recv() {
            c += 1;
            s += m[0] as u64;
        }
        (c, s)
    }};
}

/// Drains `want` messages from `sub` with the zero-copy `Subscription::drain`; returns (count, sum of first
/// bytes).
fn drain_ref(sub: &mut pqkit_bus::Subscription, want: usize) -> Result<(u64, u64), String> {
    let (mut c, mut s) = (0u64, 0u64);
    while (c as usize) < want {
        let n = sub.drain(want, |m| s += m.payload()[0] as u64).map_err(e)?;
        if n == 0 {
            return Err(format!("only {c} of {want} messages arrived"));
        }
        c += n as u64;
    }
    Ok((c, s))
}

/// pqkit-bus, P producers (P = 1: the measuring thread alone); `zero_copy`: drain with `Subscription::drain`
/// (the `send_10k` rows) instead of `recv_batch` (the producers rows).
fn pqkit_send(sealed: bool, producers: usize, zero_copy: bool) -> Candidate {
    Candidate::new("pqkit", format!("{} (pqkit-bus)", pqkit_version()), move |_| {
        let bus = bus(sealed)?;
        let sub_agent = bus.connect(&ident("subscriber", 200)?).map_err(e)?;
        let mut sub = sub_agent.subscribe("bench.send").map_err(e)?;
        let mut pubs = Vec::new();
        for k in 0..producers {
            let a = bus.connect(&ident("producer", k as u8)?).map_err(e)?;
            pubs.push(a.publisher("bench.send").map_err(e)?);
        }
        let mut p0 = pubs.remove(0);
        // Producer threads: wait for a go signal, publish N, count themselves done.
        let done = Arc::new(AtomicUsize::new(0));
        let mut gos = Vec::new();
        for mut p in pubs {
            let (tx, rx) = mpsc::channel::<[u8; LEN]>();
            let done = done.clone();
            std::thread::spawn(move || {
                while let Ok(base) = rx.recv() {
                    for i in 0..N {
                        let _ = p.publish(&payload(&base, i), Priority::Normal);
                    }
                    done.fetch_add(1, Ordering::Release);
                }
            });
            gos.push(tx);
        }
        let mut buf = Vec::with_capacity(N * producers);
        Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            let _keep = &bus;
            let base = payload(data, 0);
            done.store(0, Ordering::Relaxed);
            for g in &gos {
                g.send(base).map_err(e)?;
            }
            for i in 0..N {
                p0.publish(&payload(&base, i), Priority::Normal).map_err(e)?;
            }
            while done.load(Ordering::Acquire) < gos.len() {
                std::hint::spin_loop();
            }
            let (c, s) =
                if zero_copy { drain_ref(&mut sub, N * producers)? } else { drain(&mut sub, &mut buf, N * producers)? };
            digest(out, c, s);
            Ok(())
        }) as Box<dyn Op>)
    })
}

/// crossbeam-channel (unbounded), P producers.
fn crossbeam_send(producers: usize) -> Candidate {
    Candidate::new("crossbeam-channel", v("crossbeam-channel"), move |_| {
        let (tx, rx) = crossbeam_channel::unbounded::<[u8; LEN]>();
        let done = Arc::new(AtomicUsize::new(0));
        let mut gos = Vec::new();
        for _ in 1..producers {
            let (gtx, grx) = mpsc::channel::<[u8; LEN]>();
            let tx = tx.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                while let Ok(base) = grx.recv() {
                    for i in 0..N {
                        let _ = tx.send(payload(&base, i));
                    }
                    done.fetch_add(1, Ordering::Release);
                }
            });
            gos.push(gtx);
        }
        Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            let base = payload(data, 0);
            done.store(0, Ordering::Relaxed);
            for g in &gos {
                g.send(base).map_err(e)?;
            }
            for i in 0..N {
                tx.send(payload(&base, i)).map_err(e)?;
            }
            while done.load(Ordering::Acquire) < gos.len() {
                std::hint::spin_loop();
            }
            let (c, s) = try_drain!(rx);
            digest(out, c, s);
            Ok(())
        }) as Box<dyn Op>)
    })
}

/// One pair's round in the `-pairs-` rows: publish (send) `N` messages built from the base payload, then
/// drain them; gives (count, sum of first bytes).
type Round = Box<dyn FnMut(&[u8; LEN]) -> Result<(u64, u64), String> + Send>;

/// Builds pair k's round; one per setup (so the pairs of one setup can share a bus).
type Pairs = Box<dyn FnMut(usize) -> Result<Round, String>>;

/// `send_10k-<mode>-pairs-<P>`: `setup()` gives the builder of the pairs' rounds (each with its own agent,
/// subject and subscriber, or its own channel); pairs 1.. run on threads started by a go signal, pair 0
/// on the measuring thread, which then spins until the others are done.
fn pairs_candidate(
    name: &'static str,
    version: String,
    pairs: usize,
    setup: impl Fn() -> Result<Pairs, String> + Send + Sync + 'static,
) -> Candidate {
    Candidate::new(name, version, move |_| {
        let mut make = setup()?;
        let mut r0 = make(0)?;
        let done = Arc::new(AtomicUsize::new(0));
        let (res_tx, res_rx) = mpsc::channel::<Result<(u64, u64), String>>();
        let mut gos = Vec::new();
        for k in 1..pairs {
            let mut r = make(k)?;
            let (tx, rx) = mpsc::channel::<[u8; LEN]>();
            let (done, res_tx) = (done.clone(), res_tx.clone());
            std::thread::spawn(move || {
                while let Ok(base) = rx.recv() {
                    let res = r(&base);
                    if res_tx.send(res).is_err() {
                        return;
                    }
                    done.fetch_add(1, Ordering::Release);
                }
            });
            gos.push(tx);
        }
        Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            let base = payload(data, 0);
            done.store(0, Ordering::Relaxed);
            for g in &gos {
                g.send(base).map_err(e)?;
            }
            let (mut c, mut s) = r0(&base)?;
            while done.load(Ordering::Acquire) < gos.len() {
                std::hint::spin_loop();
            }
            for _ in 0..gos.len() {
                let (c1, s1) = res_rx.recv().map_err(e)??;
                c += c1;
                s += s1;
            }
            digest(out, c, s);
            Ok(())
        }) as Box<dyn Op>)
    })
}

/// pqkit-bus in the pairs topology: pair k publishes on `bench.pair.k` through its own agent's publisher and
/// drains its own subscription (its own subscriber agent), all on one bus.
fn pqkit_pairs(sealed: bool, pairs: usize) -> Candidate {
    pairs_candidate("pqkit", format!("{} (pqkit-bus)", pqkit_version()), pairs, move || {
        let bus = bus(sealed)?;
        Ok(Box::new(move |k: usize| {
            let subject = format!("bench.pair.{k}");
            let s = bus.connect(&ident("subscriber", 200 - k as u8)?).map_err(e)?;
            let mut sub = s.subscribe(&subject).map_err(e)?;
            let a = bus.connect(&ident("producer", k as u8)?).map_err(e)?;
            let mut p = a.publisher(&subject).map_err(e)?;
            let mut buf = Vec::with_capacity(N);
            Ok(Box::new(move |base: &[u8; LEN]| {
                let _keep = (&s, &a);
                for i in 0..N {
                    p.publish(&payload(base, i), Priority::Normal).map_err(e)?;
                }
                drain(&mut sub, &mut buf, N)
            }) as Round)
        }) as Pairs)
    })
}

/// A raw channel per pair: `N` sends, then `try_recv` until empty, on the pair's thread.
macro_rules! raw_pairs {
    ($name:literal, $krate:literal, $pairs:expr, $chan:expr) => {
        pairs_candidate($name, v($krate), $pairs, || {
            Ok(Box::new(|_: usize| {
                #[allow(unused_mut)] // tokio's receivers need `mut` to receive, crossbeam's and flume's do not
                let (tx, mut rx) = $chan;
                Ok(Box::new(move |base: &[u8; LEN]| {
                    for i in 0..N {
                        tx.send(payload(base, i)).map_err(e)?;
                    }
                    Ok(try_drain!(rx))
                }) as Round)
            }) as Pairs)
        })
    };
}

/// A raw channel in the one-producer `send_10k` topology: `N` sends of a 64-byte array, then `try_recv` until
/// empty. `$chan` makes the (sender, receiver) pair once, outside the timed operation.
macro_rules! raw_send {
    ($name:literal, $krate:literal, $chan:expr) => {
        Candidate::new($name, v($krate), |_| {
            #[allow(unused_mut)] // tokio's receivers need `mut` to receive, flume's does not
            let (tx, mut rx) = $chan;
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let base = payload(data, 0);
                for i in 0..N {
                    tx.send(payload(&base, i)).map_err(e)?;
                }
                let (c, s) = try_drain!(rx);
                digest(out, c, s);
                Ok(())
            }) as Box<dyn Op>)
        })
    };
}

fn flume_send() -> Candidate {
    raw_send!("flume", "flume", flume::unbounded::<[u8; LEN]>())
}

fn tokio_mpsc_send() -> Candidate {
    raw_send!("tokio-mpsc", "tokio", tokio::sync::mpsc::unbounded_channel::<[u8; LEN]>())
}

fn tokio_broadcast_send() -> Candidate {
    raw_send!("tokio-broadcast", "tokio", tokio::sync::broadcast::channel::<[u8; LEN]>(16_384))
}

/// Messages per `Publisher::publish_batch` call in the `send_10k-plain-batch` row.
pub const BATCH: usize = 100;

/// pqkit-bus plain, publishing through `Publisher::publish_batch` in batches of [`BATCH`] (the payloads of a
/// batch are built in a stack array inside the timed loop, as the peers build theirs one by one).
fn pqkit_send_batch() -> Candidate {
    Candidate::new("pqkit", format!("{} (pqkit-bus, publish_batch of {BATCH})", pqkit_version()), move |_| {
        let bus = bus(false)?;
        let sub_agent = bus.connect(&ident("subscriber", 200)?).map_err(e)?;
        let mut sub = sub_agent.subscribe("bench.send").map_err(e)?;
        let a = bus.connect(&ident("producer", 0)?).map_err(e)?;
        let mut p = a.publisher("bench.send").map_err(e)?;
        let mut buf = Vec::with_capacity(N);
        Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            let _keep = &bus;
            let base = payload(data, 0);
            let mut chunk = [[0u8; LEN]; BATCH];
            for c in 0..N / BATCH {
                for (j, m) in chunk.iter_mut().enumerate() {
                    *m = payload(&base, c * BATCH + j);
                }
                p.publish_batch(&chunk, Priority::Normal).map_err(e)?;
            }
            let (c, s) = drain(&mut sub, &mut buf, N)?;
            digest(out, c, s);
            Ok(())
        }) as Box<dyn Op>)
    })
}

/// `send_10k` plain with pqkit publishing in batches; the peers are the same as in `send_10k` (none of them
/// has a batch send: each sends message by message, then drains with `try_recv`).
fn send_10k_batch() -> Algorithm {
    Algorithm::fixed("pqkit-bus", "send_10k-plain-batch", LEN)
        .with(pqkit_send_batch())
        .with(crossbeam_send(1))
        .with(flume_send())
        .with(tokio_mpsc_send())
        .with(tokio_broadcast_send())
}

fn send_10k(sealed: bool) -> Algorithm {
    let mode = if sealed { "sealed" } else { "plain" };
    Algorithm::fixed("pqkit-bus", &format!("send_10k-{mode}"), LEN)
        .with(pqkit_send(sealed, 1, true))
        .with(crossbeam_send(1))
        .with(flume_send())
        .with(tokio_mpsc_send())
        .with(tokio_broadcast_send())
}

fn scaling(sealed: bool, producers: usize) -> Algorithm {
    let mode = if sealed { "sealed" } else { "plain" };
    Algorithm::fixed("pqkit-bus", &format!("send_10k-{mode}-producers-{producers}"), LEN)
        .with(pqkit_send(sealed, producers, false))
        .with(crossbeam_send(producers))
}

fn pairs(sealed: bool, pairs: usize) -> Algorithm {
    let mode = if sealed { "sealed" } else { "plain" };
    Algorithm::fixed("pqkit-bus", &format!("send_10k-{mode}-pairs-{pairs}"), LEN)
        .with(pqkit_pairs(sealed, pairs))
        .with(raw_pairs!("crossbeam-channel", "crossbeam-channel", pairs, crossbeam_channel::unbounded::<[u8; LEN]>()))
        .with(raw_pairs!("flume", "flume", pairs, flume::unbounded::<[u8; LEN]>()))
        .with(raw_pairs!("tokio-mpsc", "tokio", pairs, tokio::sync::mpsc::unbounded_channel::<[u8; LEN]>()))
}

fn subscribe(sealed: bool) -> Algorithm {
    let mode = if sealed { "sealed" } else { "plain" };
    Algorithm::fixed("pqkit-bus", &format!("subscribe-{mode}"), 0).with(Candidate::new(
        "pqkit",
        format!("{} (pqkit-bus)", pqkit_version()),
        move |_| {
            let bus = bus(sealed)?;
            let a = bus.connect(&ident("subscriber", 1)?).map_err(e)?;
            let held: Vec<_> =
                (0..SUBS).map(|i| a.subscribe(&format!("bench.sub.{i}"))).collect::<Result<_, _>>().map_err(e)?;
            Ok(Box::new(move |_: &mut [u8], out: &mut Vec<u8>| {
                let _keep = (&bus, &held);
                let s = a.subscribe("bench.sub.extra.>").map_err(e)?;
                s.unsubscribe();
                out.clear();
                Ok(())
            }) as Box<dyn Op>)
        },
    ))
}

fn priorities() -> Vec<u8> {
    // xorshift64 from a fixed seed.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..HEAP)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x & 3) as u8
        })
        .collect()
}

fn priority_heap() -> Algorithm {
    Algorithm::fixed("pqkit-bus", "priority_heap", LEN)
        .with(Candidate::new("pqkit", format!("{} (pqkit-bus)", pqkit_version()), |_| {
            let prios: Vec<Priority> =
                priorities().into_iter().map(|p| Priority::from_u8(p).unwrap_or(Priority::Normal)).collect();
            let mut q: PriorityQueue<[u8; LEN]> = PriorityQueue::with_capacity(HEAP);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let base = payload(data, 0);
                for (i, &p) in prios.iter().enumerate() {
                    q.push(p, payload(&base, i));
                }
                let (mut c, mut s) = (0u64, 0u64);
                while let Some((_, m)) = q.pop() {
                    c += 1;
                    s += m[0] as u64;
                }
                digest(out, c, s);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("std-binaryheap", "std".to_string(), |_| {
            let prios = priorities();
            let mut h: std::collections::BinaryHeap<(u8, std::cmp::Reverse<u32>, [u8; LEN])> =
                std::collections::BinaryHeap::with_capacity(HEAP);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let base = payload(data, 0);
                for (i, &p) in prios.iter().enumerate() {
                    h.push((p, std::cmp::Reverse(i as u32), payload(&base, i)));
                }
                let (mut c, mut s) = (0u64, 0u64);
                while let Some((_, _, m)) = h.pop() {
                    c += 1;
                    s += m[0] as u64;
                }
                digest(out, c, s);
                Ok(())
            }) as Box<dyn Op>)
        }))
}

fn fanout(sealed: bool) -> Algorithm {
    let mode = if sealed { "sealed" } else { "plain" };
    Algorithm::fixed("pqkit-bus", &format!("fanout-100-{mode}"), LEN)
        .with(Candidate::new("pqkit", format!("{} (pqkit-bus)", pqkit_version()), move |_| {
            let bus = bus(sealed)?;
            let a = bus.connect(&ident("fan", 1)?).map_err(e)?;
            let mut subs: Vec<_> = (0..FAN).map(|_| a.subscribe("bench.fan")).collect::<Result<_, _>>().map_err(e)?;
            let mut p = a.publisher("bench.fan").map_err(e)?;
            let mut buf = Vec::with_capacity(FAN_MSGS);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let _keep = &bus;
                let base = payload(data, 0);
                for i in 0..FAN_MSGS {
                    p.publish(&payload(&base, i), Priority::Normal).map_err(e)?;
                }
                let (mut c, mut s) = (0u64, 0u64);
                for sub in subs.iter_mut() {
                    let (c1, s1) = drain(sub, &mut buf, FAN_MSGS)?;
                    c += c1;
                    s += s1;
                }
                digest(out, c, s);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("crossbeam-channel", v("crossbeam-channel"), |_| {
            let chans: Vec<_> = (0..FAN).map(|_| crossbeam_channel::unbounded::<[u8; LEN]>()).collect();
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let base = payload(data, 0);
                for i in 0..FAN_MSGS {
                    let m = payload(&base, i);
                    for (tx, _) in &chans {
                        tx.send(m).map_err(e)?;
                    }
                }
                let (mut c, mut s) = (0u64, 0u64);
                for (_, rx) in &chans {
                    let (c1, s1) = try_drain!(rx);
                    c += c1;
                    s += s1;
                }
                digest(out, c, s);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("tokio-broadcast", v("tokio"), |_| {
            let (tx, _) = tokio::sync::broadcast::channel::<[u8; LEN]>(FAN_MSGS.next_power_of_two());
            let mut rxs: Vec<_> = (0..FAN).map(|_| tx.subscribe()).collect();
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let base = payload(data, 0);
                for i in 0..FAN_MSGS {
                    tx.send(payload(&base, i)).map_err(e)?;
                }
                let (mut c, mut s) = (0u64, 0u64);
                for rx in rxs.iter_mut() {
                    let (c1, s1) = try_drain!(rx);
                    c += c1;
                    s += s1;
                }
                digest(out, c, s);
                Ok(())
            }) as Box<dyn Op>)
        }))
}

fn handshake() -> Algorithm {
    Algorithm::fixed("pqkit-bus", "handshake", 0).with(Candidate::new(
        "pqkit",
        format!("{} (pqkit-bus)", pqkit_version()),
        |_| {
            use pqkit_bus::handshake::{initiate, respond};
            let a = ident("initiator", 1)?;
            let b = ident("responder", 2)?;
            Ok(Box::new(move |_: &mut [u8], out: &mut Vec<u8>| {
                let (st, m1) = initiate().map_err(e)?;
                let (rs, m2) = respond(&b, &m1).map_err(e)?;
                // The initiator pins the responder's whole public identity, as an agent pins its broker's
                // (`Bus::connect`).
                let (_ka, m3) = st.finish_pinned(&a, &m2, b.public()).map_err(e)?;
                let (_kb, pa) = rs.finish(&m3).map_err(e)?;
                if pa.id() != a.id() {
                    return Err("handshake proved the wrong identity".into());
                }
                out.clear();
                Ok(())
            }) as Box<dyn Op>)
        },
    ))
}

/// The section's rows.
pub fn algorithms() -> Vec<Algorithm> {
    vec![
        send_10k(false),
        send_10k(true),
        send_10k_batch(),
        scaling(false, 1),
        scaling(false, 2),
        scaling(true, 1),
        scaling(true, 2),
        pairs(false, 1),
        pairs(false, 2),
        pairs(true, 1),
        pairs(true, 2),
        subscribe(false),
        subscribe(true),
        priority_heap(),
        fanout(false),
        fanout(true),
        handshake(),
    ]
}
