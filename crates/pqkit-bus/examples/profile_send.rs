//! A profiling loop for the in-process `send_10k` workload (10,000 × 64 B published on one subject, then
//! drained by one subscriber), repeated; and `aead`: AES-256-GCM seal + open of 64 B under a 54-byte header,
//! the bus's crypto floor per pass. Not a benchmark (pqkit-bench measures, with peers); it prints nothing
//! timed. Use it under `perf`:
//!
//! ```text
//! perf stat -e task-clock target/release/examples/profile_send sealed 300   # CPU ms / 3e6 = ns per message
//! perf stat -e task-clock target/release/examples/profile_send plain 3000 1000   # rounds of 1,000 messages
//! perf stat -e task-clock target/release/examples/profile_send plain 300 10000 1 batch   # recv_batch drain
//! perf record -g target/release/examples/profile_send plain 1000
//! perf record -g target/release/examples/profile_send sealed 300 10000 2    # two producers, as
//!                                                                            # `send_10k-sealed-producers-2`
//! ```
//!
//! With `P` producers (fourth argument, default 1), P − 1 helper threads each publish the round through their
//! own agent while the main thread publishes its share, then the main thread drains all `P × per`: the
//! topology of pqkit-bench's `send_10k-<mode>-producers-<P>` rows. `perf report --sort comm` splits the CPU
//! time between the helpers (`producer-k`) and the main thread (producer 0 and the drain).
//!
//! `fanout` mode (`profile_send fanout|fanout-sealed ITERS`): pqkit-bench's `fanout-100` workload, 100
//! messages of 64 B to 100 subscribers of one subject, each drained with `recv_batch`, repeated ITERS times.
//!
//! `subscribe-plain|subscribe-sealed ITERS`: pqkit-bench's `subscribe-<mode>` rows, ITERS × 10,000 subscribe +
//! unsubscribe pairs on an agent already holding 1,000 subscriptions.
//!
//! The fifth argument picks the receive API: `drain` (default; `Subscription::drain`, zero-copy, what
//! pqkit-bench's `send_10k` rows use) or `batch` (`Subscription::recv_batch`, owned `Message`s).
use pqkit::aead::{Aead, Aes256Gcm};
use pqkit_bus::{Bus, Identity, Policy, Priority};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "sealed".into());
    let iters: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(300);
    // Messages per round (default 10,000 as in `send_10k`); smaller rounds show what the queue's memory
    // footprint costs (the whole round is queued before it is drained).
    let per: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let producers: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let owned = args.next().is_some_and(|s| s == "batch");
    if mode == "aead" {
        let k = Aes256Gcm::new(&[7u8; 32])?;
        let aad = [1u8; 54];
        let mut buf = [0u8; 64];
        for i in 0..iters as u64 * 10_000 {
            let mut nonce = [0u8; 12];
            nonce[4..].copy_from_slice(&i.to_be_bytes());
            let tag = k.seal_in_place_detached(&nonce, &aad, &mut buf)?;
            k.open_in_place_detached(&nonce, &aad, &mut buf, &tag)?;
        }
        println!("{} seal + open pairs", iters * 10_000);
        return Ok(());
    }
    let b = Bus::builder(Policy::allow_all()).capacity(1 << 16);
    if let Some(m) = mode.strip_prefix("subscribe-") {
        // pqkit-bench's `subscribe-<plain|sealed>`: one subscribe + unsubscribe beside 1,000 subscriptions,
        // ITERS × 10,000 times.
        let bus = if m == "plain" { b.plain() } else { b }.build()?;
        let a = bus.connect(&Identity::from_seed("subscriber", &[1; 32])?)?;
        let _held = (0..1000).map(|i| a.subscribe(&format!("bench.sub.{i}"))).collect::<Result<Vec<_>, _>>()?;
        for _ in 0..iters * 10_000 {
            a.subscribe("bench.sub.extra.>")?.unsubscribe();
        }
        println!("{} subscribe + unsubscribe pairs", iters * 10_000);
        return Ok(());
    }
    if mode.starts_with("fanout") {
        let bus = if mode == "fanout" { b.plain() } else { b }.build()?;
        let a = bus.connect(&Identity::from_seed("fan", &[1; 32])?)?;
        let mut subs = (0..100).map(|_| a.subscribe("bench.fan")).collect::<Result<Vec<_>, _>>()?;
        let mut p = a.publisher("bench.fan")?;
        let mut buf = Vec::with_capacity(100);
        let mut sum = 0u64;
        // PROFILE_TRASH=BYTES: write that much memory between rounds, as pqkit-bench's interleaved peers do
        // (their channels evict the bus's queues from the caches between its samples).
        let mut trash = vec![0u8; std::env::var("PROFILE_TRASH").ok().and_then(|s| s.parse().ok()).unwrap_or(0)];
        for round in 0..iters {
            for b in trash.iter_mut().step_by(64) {
                *b = b.wrapping_add(round as u8);
            }
            for i in 0..100 {
                let mut m = [0u8; 64];
                m[0] = i as u8;
                p.publish(&m, Priority::Normal)?;
            }
            for s in subs.iter_mut() {
                buf.clear();
                if s.recv_batch(&mut buf, 100)? != 100 {
                    return Err("a message was lost".into());
                }
                sum += buf.iter().map(|m| u64::from(m.payload()[0])).sum::<u64>();
            }
        }
        println!(
            "{mode}: {} deliveries (checksum {sum}, {})",
            iters * 10_000,
            trash.iter().map(|&b| b as u64).sum::<u64>()
        );
        return Ok(());
    }
    let bus = if mode == "plain" { b.plain() } else { b }.build()?;
    let s = bus.connect(&Identity::from_seed("subscriber", &[200; 32])?)?;
    let mut sub = s.subscribe("bench.send")?;
    let a = bus.connect(&Identity::from_seed("producer", &[0; 32])?)?;
    let mut p = a.publisher("bench.send")?;
    // Helper producers: a round starts when the main thread sends on their channel; they report when done.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut gos = Vec::new();
    for k in 1..producers {
        let mut hp = bus.connect(&Identity::from_seed("producer", &[k as u8; 32])?)?.publisher("bench.send")?;
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let done = done_tx.clone();
        std::thread::Builder::new().name(format!("producer-{k}")).spawn(move || {
            while go_rx.recv().is_ok() {
                for i in 0..per {
                    let mut m = [0u8; 64];
                    m[0] = i as u8;
                    if hp.publish(&m, Priority::Normal).is_err() {
                        return;
                    }
                }
                if done.send(()).is_err() {
                    return;
                }
            }
        })?;
        gos.push(go_tx);
    }
    let total = per * producers;
    let mut buf = Vec::with_capacity(total);
    let mut sum = 0u64;
    for _ in 0..iters {
        for g in &gos {
            g.send(())?;
        }
        for i in 0..per {
            let mut m = [0u8; 64];
            m[0] = i as u8;
            p.publish(&m, Priority::Normal)?;
        }
        for _ in &gos {
            done_rx.recv()?;
        }
        let mut got = 0;
        while got < total {
            let n = if owned {
                buf.clear();
                let n = sub.recv_batch(&mut buf, total)?;
                sum += buf.iter().map(|m| u64::from(m.payload()[0])).sum::<u64>();
                n
            } else {
                sub.drain(total, |m| sum += u64::from(m.payload()[0]))?
            };
            if n == 0 {
                return Err("a message was lost".into());
            }
            got += n;
        }
    }
    println!("{mode}: {} messages received (checksum {sum})", iters * total);
    Ok(())
}
