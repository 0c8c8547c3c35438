//! Behaviour and every rejection path of the bus.

#[path = "common/ids.rs"]
mod ids;

use ids::{alice, bob, mallory, open_bus};
use pqkit_bus::envelope::{self, FIXED_LEN};
use pqkit_bus::{Backpressure, Bus, Error, Policy, Priority, SubOptions};
use std::sync::OnceLock;
use std::time::Duration;

#[test]
fn sealed_round_trip_with_sender_and_priority() {
    let bus = open_bus();
    assert!(bus.is_sealed());
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = b.subscribe("t.*").unwrap();
    assert_eq!(a.publish("t.x", b"one", Priority::Low).unwrap(), 1);
    assert_eq!(a.publish("t.y", b"two", Priority::Critical).unwrap(), 1);
    assert_eq!(a.publish("u.y", b"nobody", Priority::Critical).unwrap(), 0);
    let m = sub.recv().unwrap();
    assert_eq!((m.payload(), m.subject(), m.priority(), m.sender()), (&b"two"[..], "t.y", Priority::Critical, a.id()));
    let m = sub.recv().unwrap();
    assert_eq!((m.payload(), m.priority()), (&b"one"[..], Priority::Low));
    let mt = bus.metrics();
    assert_eq!((mt.published, mt.delivered, mt.received, mt.rejected()), (3, 2, 2, 0));
}

#[test]
fn wildcards_and_fan_out() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut s1 = a.subscribe("a.>").unwrap();
    let mut s2 = a.subscribe("a.*.c").unwrap();
    let mut s3 = a.subscribe("a.b.c").unwrap();
    let mut s4 = a.subscribe("a.b").unwrap();
    assert_eq!(a.publish("a.b.c", b"x", Priority::Normal).unwrap(), 3);
    for s in [&mut s1, &mut s2, &mut s3] {
        assert_eq!(s.try_recv().unwrap().unwrap().payload(), b"x");
    }
    assert!(s4.try_recv().unwrap().is_none());
}

#[test]
fn big_payloads_and_limits() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("big").unwrap();
    let p: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    a.publish("big", &p, Priority::Normal).unwrap();
    assert_eq!(sub.recv().unwrap().payload(), &p[..]);
    let huge = vec![0u8; envelope::MAX_PAYLOAD + 1];
    assert_eq!(a.publish("big", &huge, Priority::Normal), Err(Error::PayloadTooLarge { len: huge.len() }));
    assert!(matches!(a.publish("bad..subject", b"", Priority::Normal), Err(Error::InvalidSubject { .. })));
    assert!(matches!(a.publish("wild.*", b"", Priority::Normal), Err(Error::InvalidSubject { .. })));
    assert!(matches!(a.subscribe("a.>.b"), Err(Error::InvalidSubject { .. })));
}

#[test]
fn policy_refuses_connect_publish_subscribe() {
    let policy = Policy::new().allow(alice().id(), &["orders.*"], &["events.>"]).unwrap();
    let bus = Bus::new(policy).unwrap();
    assert!(matches!(bus.connect(mallory()), Err(Error::Unauthorised { action: "connect", .. })));
    let a = bus.connect(alice()).unwrap();
    assert!(matches!(a.publish("events.x", b"", Priority::Normal), Err(Error::Unauthorised { action: "publish", .. })));
    assert!(matches!(a.subscribe("orders.*"), Err(Error::Unauthorised { action: "subscribe", .. })));
    assert!(matches!(a.subscribe(">"), Err(Error::Unauthorised { .. })));
    a.subscribe("events.*").unwrap();
    a.publish("orders.new", b"", Priority::Normal).unwrap();
    assert_eq!(bus.metrics().rejected_unauthorised, 4);
}

#[test]
fn plain_mode_is_explicit_and_works() {
    let bus = Bus::builder(Policy::allow_all()).plain().build().unwrap();
    assert!(!bus.is_sealed());
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("p").unwrap();
    let mut p = a.publisher("p").unwrap();
    let env = p.seal(b"plain", Priority::High, None).unwrap();
    assert_eq!(env[1], 3, "plain kind on the wire");
    assert_eq!(&env[env.len() - 5..], b"plain", "no encryption in plain mode");
    assert_eq!(bus.ingest(&env).unwrap(), 1);
    assert_eq!(sub.recv().unwrap().payload(), b"plain");
    // A plain bus refuses claimed identities the policy does not know.
    let bus2 = Bus::builder(Policy::new().allow(bob().id(), &[">"], &[]).unwrap()).plain().build().unwrap();
    assert!(bus2.ingest(&env).is_err(), "alice is not in bus2's policy");
    assert_eq!(bus2.metrics().rejected_unauthorised, 1);
}

// ---- publish-leg rejections through Bus::ingest ----------------------------------------------------------

#[test]
fn ingest_accepts_once_then_rejects_replay() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("r").unwrap();
    let mut p = a.publisher("r").unwrap();
    let env = p.seal(b"once", Priority::Normal, None).unwrap();
    assert_eq!(bus.ingest(&env).unwrap(), 1);
    assert_eq!(bus.ingest(&env), Err(Error::Replayed { seq: 0 }));
    assert_eq!(sub.recv().unwrap().payload(), b"once");
    assert!(sub.try_recv().unwrap().is_none(), "the replay was never delivered");
    assert_eq!(bus.metrics().rejected_replayed, 1);
}

#[test]
fn replay_window_allows_reorder_within_64_only() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("w").unwrap();
    let mut p = a.publisher("w").unwrap();
    let envs: Vec<Vec<u8>> = (0..70).map(|i| p.seal(&[i as u8], Priority::Normal, None).unwrap()).collect();
    // Deliver 69 first, then 10 (within the window, out of order: accepted), then 2 (too old).
    bus.ingest(&envs[69]).unwrap();
    bus.ingest(&envs[10]).unwrap();
    assert_eq!(bus.ingest(&envs[2]), Err(Error::Replayed { seq: 2 }));
    assert_eq!(bus.ingest(&envs[10]), Err(Error::Replayed { seq: 10 }));
    let mut got = Vec::new();
    sub.recv_batch(&mut got, 10).unwrap();
    assert_eq!(got.iter().map(|m| m.payload()[0]).collect::<Vec<_>>(), [69, 10]);
}

fn seq_of(env: &[u8]) -> u64 {
    u64::from_be_bytes(env[8..16].try_into().unwrap())
}

#[test]
fn a_publisher_far_behind_another_of_the_same_agent_is_not_a_replay() {
    // The deterministic form of a race two producer threads of one agent can hit: handle 1 takes a sequence
    // number, handle 2 publishes more than a window's worth, then handle 1's envelope arrives. Each handle has
    // its own stream and window, so it is accepted; a repeat of it is still a replay.
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("race").unwrap();
    let mut p1 = a.publisher("race").unwrap();
    let mut p2 = a.publisher("race").unwrap();
    let late = p1.seal(b"late", Priority::Normal, None).unwrap();
    for i in 0..200u32 {
        p2.publish(&i.to_le_bytes(), Priority::Normal).unwrap();
    }
    assert_eq!(bus.ingest(&late).unwrap(), 1);
    assert_eq!(bus.ingest(&late), Err(Error::Replayed { seq: seq_of(&late) }));
    let mut v = Vec::new();
    while sub.recv_batch(&mut v, 512).unwrap() > 0 {}
    assert_eq!(v.len(), 201);
    assert_eq!(v.last().unwrap().payload(), b"late");
    assert_eq!(bus.metrics().rejected(), 1);
}

#[test]
fn a_new_publisher_handle_does_not_reset_the_replay_window() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let _sub = a.subscribe("nr").unwrap();
    let mut p = a.publisher("nr").unwrap();
    let env = p.seal(b"once", Priority::Normal, None).unwrap();
    assert_eq!(bus.ingest(&env).unwrap(), 1);
    let _p2 = a.publisher("nr").unwrap(); // a second grant in the same epoch
    assert_eq!(bus.ingest(&env), Err(Error::Replayed { seq: seq_of(&env) }));
}

#[test]
fn a_dropped_publishers_stream_continues_and_never_repeats_a_sequence() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let _sub = a.subscribe("reuse").unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut first = Vec::new();
    for round in 0..5 {
        let mut p = a.publisher("reuse").unwrap();
        let mut q = a.publisher("reuse").unwrap();
        for _ in 0..3 {
            let e = p.seal(b"x", Priority::Normal, None).unwrap();
            assert!(seen.insert(seq_of(&e)), "sequence repeated under one key");
            bus.ingest(&e).unwrap();
            let e = q.seal(b"y", Priority::Normal, None).unwrap();
            assert!(seen.insert(seq_of(&e)), "sequence repeated under one key");
            bus.ingest(&e).unwrap();
            if round == 0 {
                first.push(e);
            }
        }
    }
    // 2 live handles at a time: 2 streams, their counters carried across handles.
    assert_eq!(seen.iter().map(|s| s >> 40).collect::<std::collections::HashSet<_>>().len(), 2);
    for e in &first {
        let r = bus.ingest(e);
        assert!(matches!(r, Err(Error::Replayed { .. })), "{r:?}");
    }
}

#[test]
fn publisher_handles_are_bounded_per_agent_and_subject() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut hs: Vec<_> = (0..pqkit_bus::MAX_PUBLISHERS).map(|_| a.publisher("many").unwrap()).collect();
    let e = a.publisher("many").unwrap_err();
    assert_eq!(e, Error::TooManyPublishers { subject: "many".into() });
    assert!(e.to_string().contains("publisher handles"));
    // Another subject is its own key: unaffected. A dropped handle frees its stream.
    a.publisher("other").unwrap();
    hs.pop();
    let mut p = a.publisher("many").unwrap();
    let _sub = a.subscribe("many").unwrap();
    assert_eq!(p.publish(b"ok", Priority::Normal).unwrap(), 1);
}

#[test]
fn broker_rejects_a_stream_out_of_range() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut p = a.publisher("oor").unwrap();
    let mut env = p.seal(b"x", Priority::Normal, None).unwrap();
    env[8] = 0xff; // stream 0xff_xxxx: above MAX_PUBLISHERS
    assert_eq!(bus.ingest(&env), Err(Error::Malformed { reason: "sequence stream out of range" }));
    env[8] = 0;
    env[9] = 0x01; // stream 256: in range, but the sequence is authenticated
    assert_eq!(bus.ingest(&env), Err(Error::AuthFailed));
}

#[test]
fn ingest_rejects_forged_truncated_and_malformed() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("f").unwrap();
    let mut p = a.publisher("f").unwrap();
    let env = p.seal(b"payload!", Priority::High, None).unwrap();
    // Any flipped bit in header, ciphertext or tag: dropped (header fields are authenticated).
    for i in [2usize, 5, 12, 20, FIXED_LEN, env.len() - 10, env.len() - 1] {
        let mut e = env.clone();
        e[i] ^= 1;
        let r = bus.ingest(&e);
        assert!(r.is_err(), "flip at {i} accepted");
    }
    // Truncations at every length.
    for n in 0..env.len() {
        assert!(bus.ingest(&env[..n]).is_err(), "truncated to {n} accepted");
    }
    // Random garbage.
    assert!(matches!(bus.ingest(&[0u8; 100]), Err(Error::Malformed { .. })));
    assert!(sub.try_recv().unwrap().is_none(), "nothing forged was delivered");
    let m = bus.metrics();
    assert!(m.rejected_auth >= 4 && m.rejected_malformed >= 1, "{m:?}");
    // The genuine one still goes through afterwards.
    assert_eq!(bus.ingest(&env).unwrap(), 1);
}

#[test]
fn member_cannot_forge_another_sender() {
    // Mallory is a legitimate member of the topic (may publish and subscribe) and tries to pass a message off as
    // Alice's: she rewrites the sender field of her own envelope, and seals under her own key with Alice's id.
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let m = bus.connect(mallory()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = b.subscribe("team").unwrap();
    let _ = a.publisher("team").unwrap();
    let mut mp = m.publisher("team").unwrap();
    let mut env = mp.seal(b"pay mallory", Priority::Critical, None).unwrap();
    env[16..32].copy_from_slice(&a.id().0);
    assert!(matches!(bus.ingest(&env), Err(Error::AuthFailed | Error::Replayed { .. })));
    assert!(sub.try_recv().unwrap().is_none());
    // Mallory's own messages are delivered under her name.
    mp.publish(b"hi", Priority::Normal).unwrap();
    assert_eq!(sub.recv().unwrap().sender(), m.id());
}

#[test]
fn unknown_sender_and_wrong_key_are_rejected() {
    let bus = open_bus();
    let other = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("k").unwrap();
    let oa = other.connect(alice()).unwrap();
    let mut op = oa.publisher("k").unwrap();
    // Same identity and topic, but sealed under another bus's key: tag fails.
    let _ = a.publisher("k").unwrap();
    let env = op.seal(b"x", Priority::Normal, None).unwrap();
    assert_eq!(bus.ingest(&env), Err(Error::AuthFailed));
    // A sender that never obtained a key for the topic.
    let mut op2 = oa.publisher("k2").unwrap();
    let env2 = op2.seal(b"x", Priority::Normal, None).unwrap();
    assert_eq!(bus.ingest(&env2), Err(Error::UnknownKey));
    assert!(sub.try_recv().unwrap().is_none());
    let m = bus.metrics();
    assert_eq!((m.rejected_auth, m.rejected_unknown_key), (1, 1));
}

#[test]
fn rotation_by_count_erases_old_epochs() {
    let bus = Bus::builder(Policy::allow_all()).rotate_after_messages(3).build().unwrap();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("rot").unwrap();
    let mut p = a.publisher("rot").unwrap();
    let old = p.seal(b"epoch-1", Priority::Normal, None).unwrap();
    assert_eq!(u32::from_be_bytes(old[4..8].try_into().unwrap()), 1);
    for i in 0..20u8 {
        p.publish(&[i], Priority::Normal).unwrap();
    }
    let env = p.seal(b"late", Priority::Normal, None).unwrap();
    let epoch = u32::from_be_bytes(env[4..8].try_into().unwrap());
    assert!(epoch >= 7, "epoch {epoch}: keys rotated every 3 messages");
    // The epoch-1 envelope is now expired: its key is erased.
    assert_eq!(bus.ingest(&old), Err(Error::Expired { epoch: 1 }));
    let mut got = Vec::new();
    while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
    assert_eq!(got.len(), 20, "delivery keys rotated too and every message still opened");
    assert_eq!(got.iter().map(|m| m.payload()[0]).collect::<Vec<_>>(), (0..20).collect::<Vec<u8>>());
    assert_eq!(bus.metrics().rejected_expired, 1);
}

// ---- delivery-leg rejections through Subscription::inject -----------------------------------------------

#[test]
fn delivery_leg_replay_forgery_and_truncation() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("d").unwrap();
    a.publish("d", b"first", Priority::High).unwrap();
    a.publish("d", b"second", Priority::High).unwrap();
    let w1 = sub.take_envelope().unwrap().unwrap();
    let w2 = sub.take_envelope().unwrap().unwrap();
    assert_eq!(w1[1], 2, "delivery kind");
    assert!(!w1.windows(5).any(|w| w == b"first"), "sealed on the wire");
    // Genuine, in order.
    sub.inject(&w1).unwrap();
    assert_eq!(sub.recv().unwrap().payload(), b"first");
    // Replay of w1: dropped.
    sub.inject(&w1).unwrap();
    assert!(sub.try_recv().unwrap().is_none());
    assert_eq!(bus.metrics().rejected_replayed, 1);
    // Tampered w2 (priority byte moved to another level, sender changed, ciphertext flipped): dropped.
    for (i, x) in [(2usize, 1u8), (20, 1), (w2.len() - 3, 0x80)] {
        let mut e = w2.clone();
        e[i] ^= x;
        sub.inject(&e).unwrap();
        assert!(sub.try_recv().unwrap().is_none(), "tampered byte {i} delivered");
    }
    // Truncated: refused at parse.
    assert!(matches!(sub.inject(&w2[..10]), Err(Error::Malformed { .. })));
    // Wrong subscription id: refused.
    let mut other = w2.clone();
    other[39] ^= 1;
    assert_eq!(sub.inject(&other), Err(Error::UnknownKey));
    // Wrong key: a delivery for another subscription of another bus.
    let bus2 = open_bus();
    let a2 = bus2.connect(alice()).unwrap();
    let mut s2 = a2.subscribe("d").unwrap();
    a2.publish("d", b"x", Priority::High).unwrap();
    let mut foreign = s2.take_envelope().unwrap().unwrap();
    foreign[32..40].copy_from_slice(&sub.id().to_be_bytes());
    foreign[8..16].copy_from_slice(&5u64.to_be_bytes()); // past the replay check: the tag must fail
    sub.inject(&foreign).unwrap();
    assert!(sub.try_recv().unwrap().is_none());
    // Unknown epoch.
    let mut e = w2.clone();
    e[7] = 9;
    sub.inject(&e).unwrap();
    assert!(sub.try_recv().unwrap().is_none());
    // The genuine w2 is still good.
    sub.inject(&w2).unwrap();
    assert_eq!(sub.recv().unwrap().payload(), b"second");
    let m = bus.metrics();
    assert_eq!(m.rejected_auth, 4, "{m:?}");
    assert!(m.rejected_unknown_key >= 2, "{m:?}");
}

// ---- queues -------------------------------------------------------------------------------------------------

#[test]
fn drop_oldest_of_lowest_and_counts() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let opts = SubOptions { capacity: Some(3), backpressure: Backpressure::DropOldest };
    let mut sub = a.subscribe_with("q", opts).unwrap();
    a.publish("q", b"n1", Priority::Normal).unwrap();
    a.publish("q", b"l1", Priority::Low).unwrap();
    a.publish("q", b"n2", Priority::Normal).unwrap();
    a.publish("q", b"h1", Priority::High).unwrap(); // drops l1
    a.publish("q", b"l2", Priority::Low).unwrap(); // lower than everything queued: itself dropped
    a.publish("q", b"n3", Priority::Normal).unwrap(); // drops n1
    assert_eq!(sub.dropped(), 3);
    let mut v = Vec::new();
    sub.recv_batch(&mut v, 10).unwrap();
    assert_eq!(v.iter().map(|m| m.payload()).collect::<Vec<_>>(), [&b"h1"[..], b"n2", b"n3"]);
    assert_eq!(bus.metrics().dropped, 3);
}

#[test]
fn fail_policy_errors_but_others_still_receive() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut slow = a.subscribe_with("q", SubOptions { capacity: Some(1), backpressure: Backpressure::Fail }).unwrap();
    let mut fast = a.subscribe("q").unwrap();
    a.publish("q", b"1", Priority::Normal).unwrap();
    assert_eq!(a.publish("q", b"2", Priority::Normal), Err(Error::QueueFull { subject: "q".into(), full: 1 }));
    assert_eq!(slow.refused(), 1);
    let mut v = Vec::new();
    fast.recv_batch(&mut v, 10).unwrap();
    assert_eq!(v.len(), 2, "the fast subscriber is not stalled by the slow one");
    assert_eq!(slow.recv().unwrap().payload(), b"1");
    assert_eq!(bus.metrics().refused, 1);
}

#[test]
fn block_policy_waits_for_room() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe_with("b", SubOptions { capacity: Some(2), backpressure: Backpressure::Block }).unwrap();
    let a2 = a.clone();
    let t = std::thread::spawn(move || {
        for i in 0..50u8 {
            a2.publish("b", &[i], Priority::Normal).unwrap();
        }
    });
    let mut got = Vec::new();
    while got.len() < 50 {
        got.push(sub.recv_timeout(Duration::from_secs(10)).unwrap().payload()[0]);
    }
    t.join().unwrap();
    assert_eq!(got, (0..50).collect::<Vec<u8>>(), "nothing dropped, FIFO kept");
    assert_eq!(sub.dropped(), 0);
}

#[test]
fn closed_subscription_and_timeouts() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("c").unwrap();
    assert_eq!(sub.recv_timeout(Duration::from_millis(20)), Err(Error::Timeout));
    let sid = sub.id();
    let n = bus.subscription_count();
    sub.unsubscribe();
    assert_eq!(bus.subscription_count(), n - 1);
    assert_eq!(a.publish("c", b"x", Priority::Normal).unwrap(), 0, "unsubscribed: not routed");
    let _ = sid;
    // A subscription closed by the bus going away reports Closed.
    let bus2 = open_bus();
    let a2 = bus2.connect(alice()).unwrap();
    let mut s2 = a2.subscribe("c").unwrap();
    drop(a2);
    drop(bus2);
    assert_eq!(s2.try_recv(), Ok(None), "the subscription keeps the bus alive: still open");
}

#[test]
fn request_reply_and_no_responders() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    assert_eq!(
        a.request("svc.echo", b"hi", Duration::from_millis(100)),
        Err(Error::NoResponders { subject: "svc.echo".into() })
    );
    let mut svc = b.subscribe("svc.echo").unwrap();
    let srv = std::thread::spawn(move || {
        let req = svc.recv_timeout(Duration::from_secs(10)).unwrap();
        let mut r = req.payload().to_vec();
        r.reverse();
        b.reply(&req, &r).unwrap();
        req.sender()
    });
    let rep = a.request("svc.echo", b"abc", Duration::from_secs(10)).unwrap();
    assert_eq!(rep.payload(), b"cba");
    assert_eq!(srv.join().unwrap(), a.id());
    // A responder that never answers: timeout.
    let _silent = bus.connect(bob()).unwrap().subscribe("svc.silent").unwrap();
    assert_eq!(a.request("svc.silent", b"?", Duration::from_millis(30)), Err(Error::Timeout));
}

#[test]
fn inbox_of_another_agent_is_refused() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let theirs = format!("_INBOX.{}.x", a.id().to_hex());
    assert!(matches!(b.subscribe(&theirs), Err(Error::Unauthorised { .. })));
    a.subscribe(&theirs).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_api() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = b.subscribe("async.>").unwrap();
    let mut p = a.publisher("async.x").unwrap();
    let recv = tokio::spawn(async move {
        let mut v = Vec::new();
        for _ in 0..10 {
            v.push(sub.recv_async().await.unwrap().payload()[0]);
        }
        v
    });
    for i in 0..10u8 {
        tokio::time::sleep(Duration::from_millis(1)).await;
        p.publish_async(&[i], Priority::Normal).await.unwrap();
    }
    assert_eq!(recv.await.unwrap(), (0..10).collect::<Vec<u8>>());
    // Async request/reply.
    let mut svc = b.subscribe("async.svc").unwrap();
    let b2 = b.clone();
    let srv = tokio::spawn(async move {
        let req = svc.recv_async().await.unwrap();
        b2.reply(&req, b"pong").unwrap();
    });
    let rep = a.request_async("async.svc", b"ping", Duration::from_secs(10)).await.unwrap();
    assert_eq!(rep.payload(), b"pong");
    srv.await.unwrap();
    assert_eq!(
        a.request_async("async.none", b"", Duration::from_millis(10)).await,
        Err(Error::NoResponders { subject: "async.none".into() })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_publish_waits_on_block() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe_with("ab", SubOptions { capacity: Some(1), backpressure: Backpressure::Block }).unwrap();
    let mut p = a.publisher("ab").unwrap();
    let prod = tokio::spawn(async move {
        for i in 0..20u8 {
            p.publish_async(&[i], Priority::Normal).await.unwrap();
        }
    });
    let mut got = Vec::new();
    while got.len() < 20 {
        got.push(sub.recv_async().await.unwrap().payload()[0]);
    }
    prod.await.unwrap();
    assert_eq!(got, (0..20).collect::<Vec<u8>>());
}

#[test]
fn two_producers_same_agent_never_reuse_a_nonce() {
    // Two publisher handles of one agent on one topic seal on the wire path (the one that draws sequence
    // numbers: local publishes build no envelope) concurrently, each interleaving local publishes: all 2000
    // envelopes verify (a repeated nonce would be caught as a replay by the broker's window), and the 2000
    // local publishes arrive too.
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("mt").unwrap();
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let mut p = a.publisher("mt").unwrap();
            let bus = bus.clone();
            std::thread::spawn(move || {
                let mut seqs = Vec::new();
                for i in 0..1000u32 {
                    let env = p.seal(&i.to_le_bytes(), Priority::Normal, None).unwrap();
                    seqs.push(seq_of(&env));
                    assert_eq!(bus.ingest(&env), Ok(1));
                    p.publish(&i.to_le_bytes(), Priority::Normal).unwrap();
                }
                seqs
            })
        })
        .collect();
    let mut seqs: Vec<u64> = hs.into_iter().flat_map(|h| h.join().unwrap()).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), 2000, "no sequence number (nonce) was used twice");
    let mut v = Vec::new();
    while sub.recv_batch(&mut v, 4096).unwrap() > 0 {}
    assert_eq!(v.len(), 4000);
    assert_eq!(bus.metrics().rejected(), 0);
}

#[test]
fn local_sealed_publish_needs_the_grant_and_is_delivered_sealed() {
    // A local publish builds no publish envelope (docs/bus.md §3, "Local publishes"), but the deliver leg is
    // sealed: the subscriber's wire form carries a tag under its delivery key, and a member's own local
    // publishes are delivered under its own name only.
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let m = bus.connect(mallory()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = b.subscribe("loc").unwrap();
    let mut pa = a.publisher("loc").unwrap();
    let mut pm = m.publisher("loc").unwrap();
    pa.publish(b"from alice", Priority::High).unwrap();
    let env = sub.take_envelope().unwrap().expect("a delivery envelope");
    assert_eq!(env[1], 2, "deliver kind: sealed under the delivery key");
    assert_eq!(&env[16..32], &a.id().0);
    assert!(!env.windows(10).any(|w| w == b"from alice"), "the payload is encrypted on the deliver leg");
    sub.inject(&env).unwrap();
    pm.publish(b"from mallory", Priority::High).unwrap();
    let got = sub.recv().unwrap();
    assert_eq!((got.sender(), got.payload()), (a.id(), &b"from alice"[..]));
    assert_eq!(sub.recv().unwrap().sender(), m.id());
    // Delivery envelopes of a local publish are still checked: a flipped tag byte is dropped and counted.
    pa.publish(b"again", Priority::Low).unwrap();
    let mut env = sub.take_envelope().unwrap().unwrap();
    let last = env.len() - 1;
    env[last] ^= 1;
    sub.inject(&env).unwrap();
    assert!(sub.try_recv().unwrap().is_none());
    assert_eq!(bus.metrics().rejected_auth, 1);
    // (Local publishes the policy forbids: `policy_refuses_connect_publish_subscribe`.)
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Random bytes, and random mutations of a genuine envelope, through the broker's and the subscriber's
        /// full paths: never a panic, never a delivery of anything but the genuine message.
        #[test]
        fn random_envelopes_are_dropped_never_delivered(
            junk in proptest::collection::vec(any::<u8>(), 0..200),
            at in 0usize..200,
            x in 1u8..=255,
        ) {
            static BUS: OnceLock<(Bus, std::sync::Mutex<(pqkit_bus::Subscription, pqkit_bus::Publisher)>)> =
                OnceLock::new();
            let (bus, state) = BUS.get_or_init(|| {
                let bus = Bus::new(Policy::allow_all()).unwrap();
                let a = bus.connect(alice()).unwrap();
                let sub = a.subscribe("fz.>").unwrap();
                let p = a.publisher("fz.x").unwrap();
                (bus, std::sync::Mutex::new((sub, p)))
            });
            let mut g = state.lock().unwrap();
            let (sub, p) = &mut *g;
            let _ = bus.ingest(&junk);
            let _ = sub.inject(&junk);
            let mut env = p.seal(b"genuine", Priority::Normal, None).unwrap();
            let i = at % env.len();
            env[i] ^= x;
            prop_assert!(bus.ingest(&env).is_err(), "mutated byte {} accepted", i);
            let mut got = Vec::new();
            sub.recv_batch(&mut got, 16).unwrap();
            prop_assert!(got.is_empty());
        }
    }
}

#[test]
fn publish_batch_delivers_in_order_with_priorities_and_back_pressure() {
    for sealed in [false, true] {
        let b = Bus::builder(Policy::allow_all());
        let bus = if sealed { b } else { b.plain() }.build().unwrap();
        let a = bus.connect(alice()).unwrap();
        let mut all = a.subscribe("batch.>").unwrap();
        let mut small =
            a.subscribe_with("batch.x", SubOptions { capacity: Some(3), backpressure: Backpressure::Fail }).unwrap();
        let mut p = a.publisher("batch.x").unwrap();
        let payloads: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 1 + i as usize]).collect();
        // Two subscribers, the small one refuses the last two: 5 + 3 deliveries, then QueueFull for 2.
        assert_eq!(
            p.publish_batch(&payloads, Priority::Low),
            Err(Error::QueueFull { subject: "batch.x".into(), full: 2 })
        );
        // The small queue is full: refused there, delivered to the other.
        assert_eq!(
            p.publish_batch(&[b"hi"], Priority::Critical),
            Err(Error::QueueFull { subject: "batch.x".into(), full: 1 })
        );
        assert_eq!(p.publish_batch::<&[u8]>(&[], Priority::Critical).unwrap(), 0);
        let mut v = Vec::new();
        assert_eq!(all.recv_batch(&mut v, 100).unwrap(), 6);
        assert_eq!(v[0].payload(), b"hi", "the critical message first");
        for (i, m) in v[1..].iter().enumerate() {
            assert_eq!((m.payload(), m.priority(), m.sender()), (&payloads[i][..], Priority::Low, a.id()));
        }
        v.clear();
        assert_eq!(small.recv_batch(&mut v, 100).unwrap(), 3);
        assert_eq!(v.iter().map(|m| m.payload()).collect::<Vec<_>>(), [&payloads[0][..], &payloads[1], &payloads[2]]);
        let m = bus.metrics();
        assert_eq!((m.published, m.delivered, m.received, m.refused, m.rejected()), (6, 9, 9, 3, 0), "sealed {sealed}");
        // Too large a payload fails before anything is published (plain; sealed stops at it).
        let big = vec![0u8; envelope::MAX_PAYLOAD + 1];
        assert_eq!(
            p.publish_batch(&[&big[..]], Priority::Low),
            Err(Error::PayloadTooLarge { len: envelope::MAX_PAYLOAD + 1 })
        );
        assert_eq!(bus.metrics().published, 6);
    }
}

#[test]
fn plain_publish_counts_survive_dropped_handles() {
    let bus = Bus::builder(Policy::allow_all()).plain().build().unwrap();
    let a = bus.connect(alice()).unwrap();
    let mut sub = a.subscribe("cnt").unwrap();
    let mut p = a.publisher("cnt").unwrap();
    p.publish(b"1", Priority::Normal).unwrap();
    p.publish_batch(&[b"2", b"3"], Priority::Normal).unwrap();
    a.publish("cnt", b"4", Priority::Normal).unwrap();
    assert_eq!(bus.metrics().published, 4);
    drop(p);
    assert_eq!(bus.metrics().published, 4, "a dropped handle's count is kept");
    let mut q = a.publisher("cnt").unwrap();
    q.publish(b"5", Priority::Normal).unwrap();
    let mut v = Vec::new();
    assert_eq!(sub.recv_batch(&mut v, 10).unwrap(), 5);
    let m = bus.metrics();
    assert_eq!((m.published, m.delivered, m.received), (5, 5, 5));
}

/// `Subscription::drain` (zero-copy `MessageRef`s) hands over exactly what `recv_batch` and `try_recv` give:
/// the same messages in the same order with the same subject, reply-to, sender, priority, sequence and payload,
/// on a plain and a sealed bus, for random priorities, payload lengths (inline and heap sizes), subjects,
/// reply-tos, batch sizes and drop-oldest drops (three identical subscriptions, one per receive API).
#[test]
fn drain_equals_recv_batch_and_try_recv() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    type Seen = (String, Option<String>, pqkit_bus::AgentId, Priority, u64, Vec<u8>);
    fn seen(m: &pqkit_bus::Message) -> Seen {
        (m.subject().into(), m.reply_to().map(Into::into), m.sender(), m.priority(), m.seq(), m.payload().to_vec())
    }
    for sealed in [false, true] {
        let b = Bus::builder(Policy::allow_all());
        let bus = if sealed { b.build() } else { b.plain().build() }.unwrap();
        let a = bus.connect(alice()).unwrap();
        let c = bus.connect(bob()).unwrap();
        let opts = SubOptions { capacity: Some(300), backpressure: Backpressure::DropOldest };
        let mut subs: Vec<_> = (0..3).map(|_| c.subscribe_with("eq.>", opts).unwrap()).collect();
        let mut total = 0;
        for round in 0..12u8 {
            for i in 0..rnd(400) {
                let len = [0, 1, 7, 64, 80, 81, 300, 5000][rnd(8) as usize];
                let mut p = vec![(i as u8) ^ round; len];
                if len > 0 {
                    p[0] = rnd(256) as u8;
                }
                let subject = ["eq.a", "eq.b.c", "eq.d"][rnd(3) as usize];
                let reply = (rnd(4) == 0).then(|| format!("_INBOX.r{}", rnd(3)));
                let prio = Priority::ALL[rnd(4) as usize];
                let from = if rnd(2) == 0 { &a } else { &c };
                assert_eq!(from.publish_with_reply(subject, &p, prio, reply.as_deref()).unwrap(), 3);
            }
            let max = 1 + rnd(200) as usize;
            let mut r0: Vec<Seen> = Vec::new();
            while subs[0]
                .drain(max, |m| {
                    r0.push((
                        m.subject().into(),
                        m.reply_to().map(Into::into),
                        m.sender(),
                        m.priority(),
                        m.seq(),
                        m.payload().to_vec(),
                    ))
                })
                .unwrap()
                > 0
            {}
            let mut v = Vec::new();
            while subs[1].recv_batch(&mut v, max).unwrap() > 0 {}
            let r1: Vec<Seen> = v.iter().map(seen).collect();
            let mut r2: Vec<Seen> = Vec::new();
            while let Some(m) = subs[2].try_recv().unwrap() {
                r2.push(seen(&m));
            }
            assert_eq!(r0, r1, "round {round}, sealed {sealed}");
            assert_eq!(r0, r2, "round {round}, sealed {sealed}");
            total += r0.len();
        }
        assert!(total > 1000, "{total}");
        assert!(subs.iter().all(|s| s.dropped() > 0), "the capacity of 300 made drops");
        assert_eq!(bus.metrics().received, 3 * total as u64);
        // Nothing queued: nothing handed over.
        assert_eq!(subs[0].drain(10, |_| panic!("nothing queued")).unwrap(), 0);
    }
}

// ---- delivery streams (docs/bus.md §3, "Delivery streams") --------------------------------------------------

/// (epoch, priority, sequence) of a delivery envelope: with the key (epoch) and the kind, its nonce.
fn nonce_of(env: &[u8]) -> (u32, u8, u64) {
    assert_eq!(env[1], 2, "a delivery envelope");
    (u32::from_be_bytes(env[4..8].try_into().unwrap()), env[2], seq_of(env))
}

const COUNTER_BITS: u32 = 40;

#[test]
fn delivery_streams_have_distinct_ids_and_never_repeat_a_counter() {
    // Two handles (two agents) publish into one subscription, interleaved, at two levels; one handle is then
    // dropped and a new one continues its stream. Every delivery nonce is distinct, the live handles' stream
    // ids differ, the reused id continues its counters, and the subscriber accepts every delivery.
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = a.subscribe("ds").unwrap();
    let mut pa = a.publisher("ds").unwrap();
    let mut pb = b.publisher("ds").unwrap();
    let mut envs = Vec::new();
    fn publish(
        p: &mut pqkit_bus::Publisher,
        prio: Priority,
        sub: &mut pqkit_bus::Subscription,
        envs: &mut Vec<Vec<u8>>,
    ) {
        assert_eq!(p.publish(&(envs.len() as u32).to_le_bytes(), prio), Ok(1));
        envs.push(sub.take_envelope().unwrap().unwrap());
    }
    for i in 0..6 {
        let prio = if i % 2 == 0 { Priority::Normal } else { Priority::High };
        publish(&mut pa, prio, &mut sub, &mut envs);
        publish(&mut pb, prio, &mut sub, &mut envs);
    }
    let stream = |e: &Vec<u8>| seq_of(e) >> COUNTER_BITS;
    let (sa, sb) = (stream(&envs[0]), stream(&envs[1]));
    assert_ne!(sa, sb, "two live handles share a delivery stream id");
    assert!(sa != 0 && sb != 0, "stream 0 is the broker's own");
    // A's handle goes; a new handle of A takes the freed id and continues its counters.
    drop(pa);
    let mut pa2 = a.publisher("ds").unwrap();
    for _ in 0..3 {
        publish(&mut pa2, Priority::Normal, &mut sub, &mut envs);
    }
    let normal = Priority::Normal as u8;
    let last_a = envs[..12].iter().filter(|e| stream(e) == sa && e[2] == normal).map(|e| seq_of(e)).max().unwrap();
    let first_a2 = seq_of(&envs[12]);
    assert_eq!(stream(&envs[12]), sa, "the freed id is handed out again");
    assert!(first_a2 > last_a, "a reused stream restarted its counter: {first_a2:#x} after {last_a:#x}");
    let mut nonces: Vec<_> = envs.iter().map(|e| nonce_of(e)).collect();
    nonces.sort_unstable();
    nonces.dedup();
    assert_eq!(nonces.len(), envs.len(), "a (key, nonce) pair was used twice");
    for e in &envs {
        sub.inject(e).unwrap();
    }
    let mut got = Vec::new();
    while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
    assert_eq!(got.len(), envs.len());
    assert_eq!(bus.metrics().rejected(), 0);
}

#[test]
fn delivery_stream_replay_and_reorder_are_rejected_per_stream() {
    let bus = open_bus();
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = a.subscribe("rr").unwrap();
    let mut pa = a.publisher("rr").unwrap();
    let mut pb = b.publisher("rr").unwrap();
    for i in 0..3u8 {
        pa.publish(&[i], Priority::Normal).unwrap();
    }
    pb.publish(&[10], Priority::Normal).unwrap();
    let w: Vec<_> = (0..4).map(|_| sub.take_envelope().unwrap().unwrap()).collect();
    // A's 0, then A's 2: accepted (a gap is allowed).
    sub.inject(&w[0]).unwrap();
    sub.inject(&w[2]).unwrap();
    // A's 1 after A's 2: reordered within the stream, dropped.
    sub.inject(&w[1]).unwrap();
    // A's 2 again: replayed, dropped.
    sub.inject(&w[2]).unwrap();
    // B's first message has a lower counter than A's 2, on its own stream: accepted.
    sub.inject(&w[3]).unwrap();
    let mut got = Vec::new();
    while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
    assert_eq!(got.iter().map(|m| m.payload()[0]).collect::<Vec<_>>(), [0, 2, 10]);
    assert_eq!(bus.metrics().rejected_replayed, 2);
    // A stream id past the cap is malformed (checked before the tag).
    let mut far = w[1].clone();
    far[8..11].copy_from_slice(&[0xff, 0xff, 0xff]);
    sub.inject(&far).unwrap();
    assert!(sub.try_recv().unwrap().is_none());
    assert_eq!(bus.metrics().rejected_malformed, 1);
}

#[test]
fn a_delivery_sealed_before_rotations_is_resealed_or_still_opens() {
    // Delivery keys rotate every 3 messages. Handle A seals under epoch 1; B's traffic rotates the
    // subscription's key twice and the subscriber drains (erasing epoch 1). A's next message must not be
    // queued under epoch 1 (it would no longer open): it is sealed again under the current key. After one
    // more rotation A's message under the previous epoch is queued and still opens.
    let bus = Bus::builder(Policy::allow_all()).rotate_after_messages(3).build().unwrap();
    let a = bus.connect(alice()).unwrap();
    let b = bus.connect(bob()).unwrap();
    let mut sub = a.subscribe("late").unwrap();
    let mut pa = a.publisher("late").unwrap();
    let mut pb = b.publisher("late").unwrap();
    let mut got = Vec::new();
    let mut want = Vec::new();
    pa.publish(&[0], Priority::Normal).unwrap();
    want.push(0);
    for i in 1..10u8 {
        pb.publish(&[i], Priority::Normal).unwrap();
        want.push(i);
        while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
    }
    pa.publish(&[100], Priority::Normal).unwrap();
    want.push(100);
    pb.publish(&[101], Priority::Normal).unwrap();
    want.push(101);
    pb.publish(&[102], Priority::Normal).unwrap();
    want.push(102);
    pa.publish(&[103], Priority::Normal).unwrap();
    want.push(103);
    while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
    // Every message arrives and opens; FIFO per handle (A: 0, 100, 103; B: the rest). The order across the
    // two handles is not promised (docs/bus.md §6: each handle has its own lane).
    let got: Vec<u8> = got.iter().map(|m| m.payload()[0]).collect();
    let of = |v: &[u8], a: bool| v.iter().copied().filter(|x| [0, 100, 103].contains(x) == a).collect::<Vec<_>>();
    assert_eq!(of(&got, true), of(&want, true));
    assert_eq!(of(&got, false), of(&want, false));
    assert_eq!(bus.metrics().rejected(), 0, "{:?}", bus.metrics());
}
