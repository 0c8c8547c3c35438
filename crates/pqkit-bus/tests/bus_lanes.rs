//! The bus under concurrency and its per-producer lanes: FIFO per handle across threads, exact lane capacity,
//! drop-oldest across handles, blocking and wake-ups, and counts that survive unsubscribing.

#[path = "common/ids.rs"]
mod ids;

use ids::{alice, bob, open_bus};
use pqkit_bus::{Backpressure, Bus, Error, Policy, Priority, SubOptions};
use std::time::Duration;

#[test]
fn two_threads_one_subscription_fifo_per_handle_and_no_rejections() {
    // Two producer threads (two agents) publish into one subscription concurrently while it is also drained;
    // each handle's messages arrive in its own order, none is rejected, none repeats a nonce.
    let bus = open_bus();
    let s = bus.connect(alice()).unwrap();
    let mut sub = s.subscribe("mt2").unwrap();
    const PER: u32 = 3000;
    let hs: Vec<_> = [alice(), bob()]
        .into_iter()
        .enumerate()
        .map(|(k, who)| {
            let mut p = bus.connect(who).unwrap().publisher("mt2").unwrap();
            std::thread::spawn(move || {
                for i in 0..PER {
                    let mut m = [0u8; 8];
                    m[..4].copy_from_slice(&(k as u32).to_le_bytes());
                    m[4..].copy_from_slice(&i.to_le_bytes());
                    p.publish(&m, Priority::Normal).unwrap();
                }
            })
        })
        .collect();
    let mut got = Vec::new();
    while got.len() < 2 * PER as usize {
        if sub.recv_batch(&mut got, 256).unwrap() == 0 {
            std::thread::yield_now();
        }
        assert!(bus.metrics().rejected() == 0, "{:?}", bus.metrics());
    }
    for h in hs {
        h.join().unwrap();
    }
    let mut next = [0u32; 2];
    for m in &got {
        let k = u32::from_le_bytes(m.payload()[..4].try_into().unwrap()) as usize;
        let i = u32::from_le_bytes(m.payload()[4..].try_into().unwrap());
        assert_eq!(i, next[k], "handle {k} out of order");
        next[k] += 1;
    }
    assert_eq!(next, [PER, PER]);
}

// ---------------------------------------------------------------------------------------------------------
// Per-producer lanes (docs/bus.md §6): several publisher handles into ONE subscription.

fn bus_of(sealed: bool) -> Bus {
    let b = Bus::builder(Policy::allow_all());
    if sealed { b.build() } else { b.plain().build() }.unwrap()
}

/// A payload naming its handle and its index.
fn tagged(k: u32, i: u32) -> [u8; 8] {
    let mut m = [0u8; 8];
    m[..4].copy_from_slice(&k.to_le_bytes());
    m[4..].copy_from_slice(&i.to_le_bytes());
    m
}

fn untag(p: &[u8]) -> (u32, u32) {
    (u32::from_le_bytes(p[..4].try_into().unwrap()), u32::from_le_bytes(p[4..8].try_into().unwrap()))
}

/// P handles publish with nobody receiving into a `Fail` subscription of capacity C: exactly C deliveries
/// are accepted in total, whatever credit the handles' lanes hold (a lane out of credit takes back the others'),
/// and the rest are refused and counted. Then, with P threads racing and a receiver draining, the queue never
/// holds more than C and every message is accounted for (received + refused = published).
#[test]
fn lanes_capacity_is_exact_and_never_exceeded() {
    for sealed in [false, true] {
        const CAP: usize = 77;
        let bus = bus_of(sealed);
        let s = bus.connect(alice()).unwrap();
        let mut sub =
            s.subscribe_with("cap", SubOptions { capacity: Some(CAP), backpressure: Backpressure::Fail }).unwrap();
        let mut ps: Vec<_> = (0..4).map(|_| s.publisher("cap").unwrap()).collect();
        // Handles 1..3 publish once (their lanes keep the rest of their credit chunk), then handle 0 alone
        // fills the queue: it must get every remaining slot (the others' credit taken back).
        for (k, p) in ps.iter_mut().enumerate().skip(1) {
            assert_eq!(p.publish(&tagged(k as u32, 0), Priority::Normal).unwrap(), 1);
        }
        let mut ok = 3;
        for i in 0..CAP as u32 {
            if ps[0].publish(&tagged(0, i), Priority::Normal).is_ok() {
                ok += 1;
            }
        }
        assert_eq!(ok, CAP, "sealed={sealed}: one handle fills what the others' credit held");
        assert_eq!(sub.len(), CAP);
        let mut got = Vec::new();
        while sub.recv_batch(&mut got, 10).unwrap() > 0 {}
        assert_eq!(got.len(), CAP);
        let mut ok = 0;
        for i in 1..41u32 {
            for (k, p) in ps.iter_mut().enumerate() {
                match p.publish(&tagged(k as u32, i), Priority::Normal) {
                    Ok(1) => ok += 1,
                    Err(Error::QueueFull { full: 1, .. }) => {}
                    r => panic!("unexpected {r:?}"),
                }
            }
        }
        assert_eq!(ok, CAP, "sealed={sealed}: accepted deliveries");
        assert_eq!(sub.len(), CAP);
        assert_eq!(sub.refused(), 160 + 3 - CAP as u64);
        got.clear();
        while sub.recv_batch(&mut got, 10).unwrap() > 0 {}
        assert_eq!(got.len(), CAP);
        // FIFO per handle.
        let mut next = [0u32; 4];
        for m in &got {
            let (k, i) = untag(m.payload());
            assert!(i >= next[k as usize], "handle {k}: {i} after {}", next[k as usize]);
            next[k as usize] = i + 1;
        }

        // Racing producers and a receiver that checks the bound while it drains.
        const PER: u32 = 3000;
        let refused0 = sub.refused();
        let hs: Vec<_> = ps
            .into_iter()
            .enumerate()
            .map(|(k, mut p)| {
                std::thread::spawn(move || {
                    let mut refused = 0u64;
                    for i in 0..PER {
                        match p.publish(&tagged(k as u32, i), Priority::ALL[(i % 4) as usize]) {
                            Ok(1) => {}
                            Err(Error::QueueFull { full: 1, .. }) => refused += 1,
                            r => panic!("unexpected {r:?}"),
                        }
                    }
                    refused
                })
            })
            .collect();
        let mut received = 0u64;
        let mut buf = Vec::new();
        while hs.iter().any(|h| !h.is_finished()) {
            let n = sub.len();
            assert!(n <= CAP, "sealed={sealed}: {n} queued, capacity {CAP}");
            buf.clear();
            received += sub.recv_batch(&mut buf, 7).unwrap() as u64;
        }
        let refused: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert!(sub.len() <= CAP);
        while {
            buf.clear();
            let n = sub.recv_batch(&mut buf, 64).unwrap();
            received += n as u64;
            n > 0
        } {}
        assert_eq!(received + refused, 4 * PER as u64, "sealed={sealed}");
        assert_eq!(sub.refused() - refused0, refused);
        assert_eq!(bus.metrics().rejected(), 0, "{:?}", bus.metrics());
    }
}

/// `DropOldest` with the messages in several handles' lanes: the dropped message is the oldest of the lowest
/// level across the whole subscription, and a new message lower than everything queued is dropped itself.
#[test]
fn lanes_drop_oldest_picks_lowest_level_across_handles() {
    for sealed in [false, true] {
        let bus = bus_of(sealed);
        let s = bus.connect(alice()).unwrap();
        let mut sub =
            s.subscribe_with("drop", SubOptions { capacity: Some(4), backpressure: Backpressure::DropOldest }).unwrap();
        let mut pa = s.publisher("drop").unwrap();
        let mut pb = s.publisher("drop").unwrap();
        pb.publish(b"b-normal-0", Priority::Normal).unwrap();
        pa.publish(b"a-low-0", Priority::Low).unwrap();
        pb.publish(b"b-high", Priority::High).unwrap();
        pa.publish(b"a-low-1", Priority::Low).unwrap();
        // (No `sub.len()` here: it would merge the lanes into the main queue.)
        // Full: B's critical message drops A's oldest low one (in A's lane).
        pb.publish(b"b-crit", Priority::Critical).unwrap();
        assert_eq!(sub.dropped(), 1);
        // Then A's low one, then B's normal one goes (the lowest level is now Normal).
        pb.publish(b"b-normal-1", Priority::Normal).unwrap();
        pa.publish(b"a-high", Priority::High).unwrap();
        assert_eq!(sub.dropped(), 3);
        // Everything queued is Normal or higher: a Low message is dropped itself.
        pa.publish(b"a-low-2", Priority::Low).unwrap();
        assert_eq!(sub.dropped(), 4);
        let mut got = Vec::new();
        while sub.recv_batch(&mut got, 10).unwrap() > 0 {}
        let got: Vec<&[u8]> = got.iter().map(|m| m.payload()).collect();
        assert_eq!(got[0], b"b-crit");
        let mut high = got[1..3].to_vec();
        high.sort();
        assert_eq!(high, [&b"a-high"[..], b"b-high"]);
        assert_eq!(got[3..], [&b"b-normal-1"[..]]);
        assert_eq!(bus.metrics().dropped, 4);
    }
}

/// `Block` with lanes: publishers wait for room and are woken by receives; a blocking receiver is woken by a
/// lane push (it armed the lanes before it waited), and so is an async one.
#[test]
fn lanes_block_and_wake_ups() {
    for sealed in [false, true] {
        let bus = bus_of(sealed);
        let s = bus.connect(alice()).unwrap();
        let mut sub =
            s.subscribe_with("blk", SubOptions { capacity: Some(8), backpressure: Backpressure::Block }).unwrap();
        const PER: u32 = 500;
        let hs: Vec<_> = (0..3u32)
            .map(|k| {
                let mut p = s.publisher("blk").unwrap();
                std::thread::spawn(move || {
                    for i in 0..PER {
                        if i % 97 == 0 {
                            // Let the receiver fall asleep now and then.
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        assert_eq!(p.publish(&tagged(k, i), Priority::Normal).unwrap(), 1);
                    }
                })
            })
            .collect();
        let mut next = [0u32; 3];
        for _ in 0..3 * PER {
            // A receiver that is not woken finds the message only when its timeout ends.
            let t = std::time::Instant::now();
            let m = sub.recv_timeout(Duration::from_secs(4)).unwrap();
            assert!(t.elapsed() < Duration::from_secs(3), "a lane push wakes the receiver");
            let (k, i) = untag(m.payload());
            assert_eq!(i, next[k as usize], "handle {k} out of order");
            next[k as usize] += 1;
        }
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sub.refused() + sub.dropped(), 0);

        // Async receiver, woken by a lane push from another thread.
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut p = s.publisher("blk").unwrap();
        let h = std::thread::spawn(move || {
            for i in 0..50u32 {
                std::thread::sleep(Duration::from_millis(1));
                p.publish(&tagged(9, i), Priority::Normal).unwrap();
            }
        });
        rt.block_on(async {
            for i in 0..50u32 {
                let m = tokio::time::timeout(Duration::from_secs(10), sub.recv_async()).await.expect("woken").unwrap();
                assert_eq!(untag(m.payload()), (9, i));
            }
        });
        h.join().unwrap();
    }
}

#[test]
fn counts_survive_unsubscribe_and_drop() {
    // A closing subscription folds its delivered, received, dropped and refused counts into the bus's metrics
    // (read under the one lock its close takes), sealed and plain, by `unsubscribe` and by drop alike.
    for sealed in [true, false] {
        let b = Bus::builder(Policy::allow_all());
        let bus = if sealed { b } else { b.plain() }.build().unwrap();
        let a = bus.connect(alice()).unwrap();
        let opts = |backpressure| SubOptions { capacity: Some(2), backpressure };
        let mut drop_sub = a.subscribe_with("m", opts(Backpressure::DropOldest)).unwrap();
        let fail_sub = a.subscribe_with("m", opts(Backpressure::Fail)).unwrap();
        for i in 0..5u8 {
            let r = a.publish("m", &[i], Priority::Normal);
            assert_eq!(r.is_err(), i >= 2, "publish {i}: {r:?}");
        }
        assert_eq!(drop_sub.recv().unwrap().payload(), [3]);
        let before = bus.metrics();
        assert_eq!((before.dropped, before.refused, before.received), (3, 3, 1), "sealed={sealed}");
        drop_sub.unsubscribe();
        drop(fail_sub);
        let m = bus.metrics();
        assert_eq!(
            (m.delivered, m.received, m.dropped, m.refused),
            (before.delivered, 1, 3, 3),
            "sealed={sealed}: {m:?}"
        );
        assert_eq!(m.delivered, 7, "5 to the DropOldest queue, 2 to the Fail queue");
    }
}
