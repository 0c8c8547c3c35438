//! pqkit-bus over a real NATS server. Every test starts its own `nats-server` (tests/common).
mod common;

use common::agents::{T, ident, key_server, opted_out, plain, sync};
use common::nats_server::NatsServer;
use std::net::TcpStream;

#[test]
fn test_server_starts_restarts_and_stops() {
    let mut s = NatsServer::start();
    let port = s.port();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
    s.kill();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "killed server still accepts");
    s.restart();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok(), "restarted server on the same port");
    drop(s);
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "server outlived its handle");
}

use futures_util::StreamExt;
use pqkit_bus::checkpoint::Checkpoints;
use pqkit_bus::envelope::{self, Kind};
use pqkit_bus::nats::{KeyServer, NatsAgent, NatsOptions};
use pqkit_bus::{Error, Policy, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sealed_publish_subscribe_and_the_server_sees_only_ciphertext() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&s.url(), &ident("bob", 2), ks.id()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("greet.>").await.unwrap();
    let mut sub = bob.subscribe("greet.*").await.unwrap();
    sync(&wire).await;
    let secret = b"attack at dawn, the eastern gate";
    alice.publish("greet.bob", secret, Priority::High).await.unwrap();
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!(m.payload(), secret);
    assert_eq!(m.sender(), alice.id());
    assert_eq!(m.priority(), Priority::High);
    assert_eq!(m.subject(), "greet.bob");
    // What NATS carried: the NATS (v3) envelope, with the subject and the header in clear, the payload sealed,
    // the topic only in the NATS subject and no sender id (15-byte header + payload + 16-byte tag).
    let raw = tap.next().await.unwrap();
    assert_eq!(raw.subject.as_str(), "greet.bob");
    assert!(!raw.payload.windows(6).any(|w| w == b"attack"), "plaintext visible to the server");
    assert!(!raw.payload.windows(9).any(|w| w == b"greet.bob"), "the topic travels twice");
    let meta = envelope::parse_nats(&raw.payload).unwrap();
    assert_eq!((meta.priority, meta.stream()), (Priority::High, 0), "the first grant of the scope is stream 0");
    assert!(!raw.payload.windows(16).any(|w| w == alice.id().0), "the sender id travels");
    assert_eq!(raw.payload[..2], [envelope::NATS_VERSION, Kind::Publish as u8]);
    assert_eq!(raw.payload.len(), envelope::NATS_HEADER_LEN + secret.len() + 16);
    assert_eq!(raw.payload.len(), meta.payload.end + 16);
    assert_eq!(meta.payload.len(), secret.len(), "the size is visible (no padding)");
    // Several messages keep their order and priorities, and nobody rejected anything.
    for (i, p) in [Priority::Low, Priority::Critical, Priority::Normal].into_iter().enumerate() {
        alice.publish("greet.bob", &[i as u8; 3], p).await.unwrap();
    }
    for (i, p) in [Priority::Low, Priority::Critical, Priority::Normal].into_iter().enumerate() {
        let m = sub.recv_timeout(T).await.unwrap();
        assert_eq!((m.payload(), m.priority()), (&[i as u8; 3][..], p));
    }
    assert_eq!(bob.metrics().received, 4);
    assert_eq!(bob.metrics().rejected(), 0);
    assert_eq!(alice.metrics().published, 4);
    let km = ks.metrics();
    assert_eq!(km.handshakes, 2);
    assert_eq!((km.send_grants, km.recv_grants), (1, 1), "one grant each way, then cached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_reply_over_nats_inboxes() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let client = NatsAgent::connect(&s.url(), &ident("client", 3), ks.id()).await.unwrap();
    let service = NatsAgent::connect(&s.url(), &ident("service", 4), ks.id()).await.unwrap();
    // Nobody subscribed: NATS says "no responders".
    let e = client.request("math.double", b"x", T).await.unwrap_err();
    assert_eq!(e, Error::NoResponders { subject: "math.double".into() });
    let mut sub = service.subscribe("math.double").await.unwrap();
    let svc = service.clone();
    let task = tokio::spawn(async move {
        for _ in 0..3 {
            let req = sub.recv().await.unwrap();
            assert!(req.reply_to().unwrap().starts_with(&format!("_INBOX.{}.", req.sender().to_hex())));
            let n = u32::from_be_bytes(req.payload().try_into().unwrap());
            svc.reply(&req, &(2 * n).to_be_bytes()).await.unwrap();
        }
        sub
    });
    for n in [1u32, 21, 1000] {
        let r = client.request("math.double", &n.to_be_bytes(), T).await.unwrap();
        assert_eq!(r.payload(), (2 * n).to_be_bytes());
        assert_eq!(r.sender(), service.id());
    }
    let _sub = task.await.unwrap();
    // A subscriber that does not answer: timeout.
    let e = client.request("math.double", b"late", Duration::from_millis(300)).await.unwrap_err();
    assert_eq!(e, Error::Timeout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_decides_who_gets_keys() {
    let s = NatsServer::start();
    let (a, b, c, stranger) = (ident("alice", 1), ident("bob", 2), ident("carol", 5), ident("mallory", 6));
    let policy = Policy::new()
        .allow(a.id(), &["orders.>"], &[])
        .unwrap()
        .allow(b.id(), &[], &["orders.*"])
        .unwrap()
        .allow(c.id(), &["chat.>"], &["chat.>"])
        .unwrap();
    let ks = key_server(&s.url(), policy).await;
    // Not in the policy: refused at the handshake.
    let e = NatsAgent::connect(&s.url(), &stranger, ks.id()).await.unwrap_err();
    assert_eq!(e, Error::Unauthorised { action: "connect as", subject: stranger.id().to_hex() });
    // Pinned to a key server that is not there.
    assert!(NatsAgent::connect(&s.url(), &a, ident("other", 9).id()).await.is_err());
    let alice = NatsAgent::connect(&s.url(), &a, ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&s.url(), &b, ks.id()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &c, ks.id()).await.unwrap();
    // Carol may not publish on orders.*: no key.
    let e = carol.publish("orders.new", b"x", Priority::Normal).await.unwrap_err();
    assert_eq!(e, Error::Unauthorised { action: "publish", subject: "orders.new".into() });
    // NATS itself lets carol subscribe, but the key server gives her no key: nothing is delivered, and the
    // refusal is counted.
    let mut spy = carol.subscribe("orders.*").await.unwrap();
    let mut sub = bob.subscribe("orders.*").await.unwrap();
    alice.publish("orders.new", b"order 1", Priority::Normal).await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"order 1");
    assert_eq!(spy.recv_timeout(Duration::from_millis(500)).await.unwrap_err(), Error::Timeout);
    assert_eq!(carol.metrics().rejected_unauthorised, 1);
    assert_eq!(carol.metrics().received, 0);
    // Control subjects are not topics.
    assert!(matches!(carol.subscribe("_PQKIT.>").await, Err(Error::Unauthorised { .. })));
    assert!(ks.metrics().refused >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_replayed_and_corrupted_injections_are_rejected_and_counted() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    // Opted out of sender authentication: what the AEAD and the replay window reject on their own (with it, a
    // bare injection is also held and dropped for want of a checkpoint: nats_wire.rs).
    let alice = NatsAgent::connect_with(&s.url(), &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    let bob = NatsAgent::connect_with(&s.url(), &ident("bob", 2), ks.id(), opted_out()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("inj.x").await.unwrap();
    let mut sub = bob.subscribe("inj.*").await.unwrap();
    sync(&wire).await;
    alice.publish("inj.x", b"first legit", Priority::Normal).await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"first legit");
    let raw = tap.next().await.unwrap().payload.to_vec();
    let meta = envelope::parse_nats(&raw).unwrap();
    let forge = |epoch: u32, seq: u64| {
        let h = envelope::NatsHeader { priority: Priority::Critical, epoch, seq };
        let mut v = h.encode().to_vec();
        v.extend_from_slice(b"pay the bearer 1000");
        v.extend_from_slice(&[0x5A; 16]);
        v
    };
    // A fresh envelope bob has not seen yet (sealed by alice, not sent): its corruptions must fail the tag, not
    // the replay window.
    let fresh = alice.seal("inj.x", b"fresh", Priority::Normal, None).await.unwrap();
    let fm = envelope::parse_nats(&fresh).unwrap();
    let mut corrupt_body = fresh.clone();
    corrupt_body[fm.payload.start] ^= 1;
    let mut corrupt_tag = fresh.clone();
    *corrupt_tag.last_mut().unwrap() ^= 0x80;
    let mut corrupt_header = fresh.clone();
    corrupt_header[2] = Priority::Critical as u8; // the priority is authenticated
    let injections: Vec<(&str, Vec<u8>)> = vec![
        ("inj.x", raw.clone()),                      // replay of a delivered message
        ("inj.x", corrupt_body),                     // corrupted payload: auth
        ("inj.x", corrupt_tag),                      // corrupted tag: auth
        ("inj.x", corrupt_header),                   // raised priority: auth
        ("inj.x", forge(meta.epoch, meta.seq + 50)), // forged in alice's name: auth
        ("inj.x", forge(u32::MAX - 7, 0)),           // forged under an epoch nobody has: unknown key
        ("inj.x", raw[..30].to_vec()),               // truncated: malformed
        ("inj.y", raw.clone()),                      // moved to another topic: no key of alice's for it (unknown)
        ("inj.x", b"random garbage, not an envelope at all, long enough to parse".to_vec()), // malformed
        ("inj.x", fresh.clone()),                    // genuine (whoever relays it): delivered once
        ("inj.x", fresh),                            // and its replay: rejected
    ];
    for (subject, bytes) in injections {
        wire.publish(subject, bytes.into()).await.unwrap();
    }
    sync(&wire).await;
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"fresh");
    alice.publish("inj.x", b"second legit", Priority::Low).await.unwrap();
    // Everything injected before it was dropped: the next delivery is the second legitimate message.
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.priority()), (&b"second legit"[..], Priority::Low));
    let mt = bob.metrics();
    assert_eq!(mt.rejected_replayed, 2, "{mt:?}");
    assert_eq!(mt.rejected_auth, 4, "{mt:?}");
    assert_eq!(mt.rejected_unknown_key, 2, "{mt:?}");
    assert_eq!(mt.rejected_malformed, 2, "{mt:?}");
    assert_eq!(mt.rejected(), 10);
    assert_eq!(mt.received, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_topic_a_returning_subscriber_gets_what_it_missed_once_and_in_order() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&s.url(), &ident("bob", 2), ks.id()).await.unwrap();
    alice.declare_durable("ORDERS", &["orders.>"]).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("orders.>").await.unwrap();
    sync(&wire).await;
    // Bob's consumer exists, then bob goes away.
    drop(bob.subscribe_durable("ORDERS", "bob", "orders.>").await.unwrap());
    let mut seqs: Vec<u64> = Vec::new();
    for i in 0u32..20 {
        let seq = alice.publish_durable("orders.eu", &i.to_be_bytes(), Priority::Normal).await.unwrap();
        assert!(seq > seqs.last().copied().unwrap_or(0));
        seqs.push(seq);
    }
    // The sender's checkpoints are stored in the stream too (sender authentication is on by default), between
    // or after the messages as its timer fires: store what is pending now, so the stream ends here.
    alice.flush_checkpoints().await.unwrap();
    let js = async_nats::jetstream::new(wire.clone());
    let end = js.get_stream("ORDERS").await.unwrap().info().await.unwrap().state.last_sequence;
    assert!(end > seqs[19], "the checkpoint covering the messages is in the stream");
    // At-least-once on the wire: the same envelope stored again (a publisher retry whose id fell out of the
    // server's duplicate window, or an attacker's replay) reaches the stream a second time.
    let copy = tap.next().await.unwrap().payload;
    let ack = js.publish("orders.eu", copy).await.unwrap().await.unwrap();
    assert_eq!(ack.sequence, end + 1, "stored a second time");
    let mut d = bob.subscribe_durable("ORDERS", "bob", "orders.>").await.unwrap();
    for (i, seq) in (0u32..20).zip(&seqs) {
        let m = d.recv_timeout(T).await.unwrap();
        assert_eq!(m.payload(), i.to_be_bytes());
        assert_eq!(d.last_sequence(), *seq);
    }
    // Exactly once to the application: the second copy is rejected by the replay window.
    assert_eq!(d.recv_timeout(Duration::from_millis(500)).await.unwrap_err(), Error::Timeout);
    assert_eq!(bob.metrics().received, 20);
    assert_eq!(bob.metrics().rejected_replayed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_and_restarted_mid_stream_durable_topics_lose_nothing() {
    let mut s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let opts = NatsOptions { durable_retry: Duration::from_secs(20), ..Default::default() };
    let alice = NatsAgent::connect_with(&url, &ident("alice", 1), ks.id(), opts).await.unwrap();
    let bob = NatsAgent::connect_with(&url, &ident("bob", 2), ks.id(), opts).await.unwrap();
    alice.declare_durable("JOBS", &["jobs.>"]).await.unwrap();
    let mut d = bob.subscribe_durable("JOBS", "bob", "jobs.>").await.unwrap();
    let mut core = bob.subscribe("live.>").await.unwrap();
    const N: u32 = 300;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let a = alice.clone();
    let publisher = tokio::spawn(async move {
        let mut tx = Some(tx);
        for i in 0..N {
            a.publish_durable("jobs.run", &i.to_be_bytes(), Priority::Normal).await.unwrap();
            if i == N / 3 {
                tx.take().unwrap().send(()).unwrap();
            }
            if i % 16 == 0 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    });
    let consumer = tokio::spawn(async move {
        let mut got = Vec::new();
        while got.len() < N as usize {
            let m = d.recv_timeout(Duration::from_secs(30)).await.unwrap();
            got.push(u32::from_be_bytes(m.payload().try_into().unwrap()));
        }
        (got, d)
    });
    rx.await.unwrap();
    assert!(!publisher.is_finished(), "the server must die mid-stream");
    s.kill();
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.restart();
    publisher.await.unwrap();
    let (got, mut d) = consumer.await.unwrap();
    assert_eq!(got, (0..N).collect::<Vec<_>>(), "every message, once, in order");
    // Both clients went through a reconnect (the statistic counts connections made).
    for a in [&alice, &bob] {
        assert!(a.client().statistics().connects.load(std::sync::atomic::Ordering::Relaxed) >= 2);
    }
    assert_eq!(alice.metrics().published, u64::from(N));
    assert_eq!(bob.metrics().received, u64::from(N));
    assert_eq!(d.recv_timeout(Duration::from_millis(300)).await.unwrap_err(), Error::Timeout);
    // Core (non-durable) subscriptions come back with the reconnected client.
    let deadline = Instant::now() + T;
    loop {
        alice.publish("live.ping", b"after restart", Priority::Normal).await.unwrap();
        match core.recv_timeout(Duration::from_millis(200)).await {
            Ok(m) => {
                assert_eq!(m.payload(), b"after restart");
                break;
            }
            Err(e) => assert!(Instant::now() < deadline, "core subscription did not come back: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_client_resumes_from_its_last_acknowledged_sequence() {
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let alice = NatsAgent::connect_with(&url, &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    alice.declare_durable("EVENTS", &["events.>"]).await.unwrap();
    for i in 0u32..30 {
        alice.publish_durable("events.e", &i.to_be_bytes(), Priority::Normal).await.unwrap();
    }
    let bob_id = ident("bob", 2);
    // The topic opted out as a whole (its publisher signs no checkpoints, so its subscribers do not wait for
    // any): the stream sequences are the messages' own.
    let floor = {
        let bob = NatsAgent::connect_with(&url, &bob_id, ks.id(), opted_out()).await.unwrap();
        let mut d = bob.subscribe_durable("EVENTS", "bob", "events.>").await.unwrap();
        for i in 0u32..10 {
            assert_eq!(d.recv_timeout(T).await.unwrap().payload(), i.to_be_bytes());
        }
        // The tenth is acknowledged when the application is done with it (here, or by the next recv).
        d.ack().await.unwrap();
        bob.flush().await.unwrap();
        let deadline = Instant::now() + T;
        let mut floor = d.ack_floor().await.unwrap();
        while floor < 10 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            floor = d.ack_floor().await.unwrap();
        }
        // The test is about resuming after the acknowledged messages, so bob dies holding *all* the others
        // (delivered to its pull stream, unacknowledged): then the server redelivers them, in order, to the
        // next consumer. Under load the prefetch may still be under way here; if bob died with part of it
        // undelivered, the restarted consumer would get those first and the redeliveries after (seen in a
        // loaded run: JetStream does not order redeliveries before new deliveries).
        let js = async_nats::jetstream::new(bob.client().clone());
        let mut c = js
            .get_stream("EVENTS")
            .await
            .unwrap()
            .get_consumer::<async_nats::jetstream::consumer::pull::Config>("bob")
            .await
            .unwrap();
        loop {
            let i = c.info().await.unwrap();
            if i.num_pending == 0 && i.num_ack_pending == 20 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "bob's prefetch did not complete: {} pending, {} unacknowledged",
                i.num_pending,
                i.num_ack_pending
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        floor
        // Killed: the agent and its subscription vanish without unsubscribing; it held more messages
        // (prefetched, unacknowledged) that the server redelivers after `ack_wait`.
    };
    assert_eq!(floor, 10, "the server holds the acknowledgements of what was handed over");
    let bob = NatsAgent::connect_with(&url, &bob_id, ks.id(), opted_out()).await.unwrap();
    let mut d = bob.subscribe_durable("EVENTS", "bob", "events.>").await.unwrap();
    let m = d.recv_timeout(Duration::from_secs(10)).await.unwrap();
    assert_eq!(m.payload(), 10u32.to_be_bytes(), "resumes right after the last acknowledged message");
    assert_eq!(d.last_sequence(), floor + 1);
    for i in 11u32..30 {
        assert_eq!(d.recv_timeout(T).await.unwrap().payload(), i.to_be_bytes());
    }
    assert_eq!(d.recv_timeout(Duration::from_millis(300)).await.unwrap_err(), Error::Timeout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_server_refuses_replayed_forged_and_unknown_requests() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("_PQKIT.>").await.unwrap();
    sync(&wire).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    alice.publish("k.x", b"x", Priority::Normal).await.unwrap(); // one sender-key request
    let mut req = None;
    while req.is_none() {
        let m = tap.next().await.unwrap();
        if m.subject.as_str().ends_with(".req") {
            req = Some(m);
        }
    }
    let req = req.unwrap();
    let subject = req.subject.to_string();
    let before = ks.metrics();
    assert_eq!(before.send_grants, 1);
    // Replayed: the session window refuses it, no second grant.
    let r = wire.request(subject.clone(), req.payload.clone()).await.unwrap();
    assert_eq!(&r.payload[..], [0xFF]);
    // Corrupted: the tag fails.
    let mut bad = req.payload.to_vec();
    bad[30] ^= 1;
    bad[16 + 7] = bad[16 + 7].wrapping_add(5); // a fresh counter, so only the tag can refuse it
    let r = wire.request(subject.clone(), bad.into()).await.unwrap();
    assert_eq!(&r.payload[..], [0xFF]);
    // Unknown session: refused with its own status (the agent must reconnect).
    let mut unknown = req.payload.to_vec();
    unknown[0] ^= 0xFF;
    let r = wire.request(subject.clone(), unknown.into()).await.unwrap();
    assert_eq!(&r.payload[..], [3]);
    // A handshake message 3 for a token the key server never issued.
    let r = wire.request(subject.replace(".req", ".hs3"), vec![0u8; 64].into()).await.unwrap();
    assert_eq!(&r.payload[..], [0xFF]);
    let after = ks.metrics();
    assert_eq!(after.send_grants, 1);
    assert_eq!(after.refused, before.refused + 3, "{after:?}");
    // The genuine session still works.
    alice.publish("k.y", b"y", Priority::Normal).await.unwrap();
    assert_eq!(ks.metrics().send_grants, 2);
}

/// Payload sizes around the receive path's boundaries (inline body 80 B, stack decryption up to 128 B, heap
/// above) round-trip exactly, and a corrupted large envelope is rejected like a small one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payload_sizes_around_the_receive_buffers_round_trip() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&s.url(), &ident("bob", 2), ks.id()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut sub = bob.subscribe("sizes.>").await.unwrap();
    let sizes = [0usize, 1, 79, 80, 81, 127, 128, 129, 4096, 70_000];
    for (i, &n) in sizes.iter().enumerate() {
        let p: Vec<u8> = (0..n).map(|j| (j * 31 + i) as u8).collect();
        // Alternate two topics so the hot entry and the topic cache switch back and forth.
        let topic = if i % 2 == 0 { "sizes.a" } else { "sizes.b.c" };
        alice.publish(topic, &p, Priority::Normal).await.unwrap();
        let m = sub.recv_timeout(T).await.unwrap();
        assert_eq!((m.payload(), m.subject()), (&p[..], topic), "size {n}");
    }
    let mut big = alice.seal("sizes.a", &vec![3u8; 70_000], Priority::Normal, None).await.unwrap();
    big[1000] ^= 4;
    wire.publish("sizes.a", big.into()).await.unwrap();
    sync(&wire).await;
    alice.publish("sizes.a", b"after", Priority::Normal).await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"after");
    assert_eq!(bob.metrics().rejected_auth, 1);
    assert_eq!(bob.metrics().received, sizes.len() as u64 + 1);
}

/// `NatsAgent::publisher`: a handle seals exactly as `publish` does (same receiver, sender, priority and
/// subject; the wire sees ciphertext), shares the agent's sender stream with `publish` (one sequence, no
/// duplicates, rotation to a new epoch picked up by the handle), applies a checkpoint rule added after it was
/// made, and refuses what `publish` refuses: an invalid or control subject, an unauthorised one (at `publisher`,
/// before any message), an oversized payload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publisher_handle_seals_as_publish_does_and_follows_rotation_and_rules() {
    let s = NatsServer::start();
    let (a, b, c) = (ident("alice", 1), ident("bob", 2), ident("carol", 5));
    let policy = Policy::new()
        .allow(a.id(), &["h.>"], &["h.>"])
        .unwrap()
        .allow(b.id(), &[], &["h.>"])
        .unwrap()
        .allow(c.id(), &["other.>"], &[])
        .unwrap();
    // Epochs kept long enough that bob, fetching keys after alice rotated twice, still gets the first.
    let ks = KeyServer::new(ident("keys", 200), policy).keep_epochs(8).serve(&s.url()).await.unwrap();
    let opts = NatsOptions { rotate_after_messages: 3, ..opted_out() };
    let alice = NatsAgent::connect_with(&s.url(), &a, ks.id(), opts).await.unwrap();
    let bob = NatsAgent::connect_with(&s.url(), &b, ks.id(), opted_out()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &c, ks.id()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("h.>").await.unwrap();
    let mut sub = bob.subscribe("h.>").await.unwrap();
    sync(&wire).await;

    let mut p = alice.publisher("h.x").await.unwrap();
    assert_eq!(p.subject(), "h.x");
    // 8 messages, the handle and `publish` interleaved on the same subject: with 3 messages per sender key the
    // stream rotates twice, under the handle and under `publish` alike.
    for i in 0..8u8 {
        let prio = if i % 2 == 0 { Priority::High } else { Priority::Low };
        if i % 3 == 1 {
            alice.publish("h.x", &[i; 20], prio).await.unwrap();
        } else {
            p.publish(&[i; 20], prio).await.unwrap();
        }
    }
    alice.flush().await.unwrap();
    let (mut seqs, mut epochs) = (Vec::new(), Vec::new());
    for i in 0..8u8 {
        let m = sub.recv_timeout(T).await.unwrap();
        assert_eq!((m.payload(), m.subject(), m.sender()), (&[i; 20][..], "h.x", alice.id()), "message {i}");
        assert_eq!(m.priority(), if i % 2 == 0 { Priority::High } else { Priority::Low });
        let w = tokio::time::timeout(T, tap.next()).await.unwrap().unwrap();
        assert!(!w.payload.windows(20).any(|x| x == [i; 20]), "the wire sees the payload");
        let epoch = envelope::parse_nats(&w.payload).unwrap().epoch;
        epochs.push(epoch);
        seqs.push((epoch, m.seq()));
    }
    let mut distinct = seqs.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 8, "one (epoch, sequence) per message: {seqs:?}");
    assert!(epochs.windows(2).all(|e| e[0] <= e[1]), "epochs only move forward: {epochs:?}");
    assert!(epochs[7] >= epochs[0] + 2, "3 messages per key: the epoch moved at least twice: {epochs:?}");
    assert_eq!(alice.metrics().published, 8);
    assert_eq!(bob.metrics().received, 8);

    // A rule added after the handle was made applies to its next message.
    assert_eq!(alice.checkpoints_sent(), 0);
    alice.sign_checkpoints("h.>", Checkpoints { every: 1, ..Checkpoints::default() }).unwrap();
    p.publish(b"signed", Priority::Normal).await.unwrap();
    alice.close().await.unwrap();
    assert_eq!(alice.checkpoints_sent(), 1, "the handle's message was chained and signed");
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"signed");

    // Refusals.
    assert!(matches!(alice.publisher("h.*").await, Err(Error::InvalidSubject { .. })));
    assert!(matches!(alice.publisher("").await, Err(Error::InvalidSubject { .. })));
    assert!(matches!(alice.publisher("_PQKIT.ks.x").await, Err(Error::Unauthorised { .. })));
    let e = carol.publisher("h.x").await.unwrap_err();
    assert_eq!(e, Error::Unauthorised { action: "publish", subject: "h.x".into() });
    let mut q = alice.publisher("h.y").await.unwrap();
    let e = q.publish(&vec![0u8; envelope::MAX_PAYLOAD + 1], Priority::Normal).await.unwrap_err();
    assert_eq!(e, Error::PayloadTooLarge { len: envelope::MAX_PAYLOAD + 1 });
    assert_eq!(alice.metrics().published, 9, "nothing was sent for a refused message");
    assert!(format!("{q:?}").contains("h.y"));
}

// ---------------------------------------------------------------------------------------------------------
// Durable delivery loses nothing.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_messages_on_different_subjects_of_one_stream_are_all_stored() {
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let alice = NatsAgent::connect(&url, &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&url, &ident("bob", 2), ks.id()).await.unwrap();
    alice.declare_durable("DM", &["jm.>"]).await.unwrap();
    // Each subject is its own key scope: the same epoch and sequence on both.
    let a = alice.publish_durable("jm.a", b"A", Priority::Normal).await.unwrap();
    let b = alice.publish_durable("jm.b", b"B", Priority::Normal).await.unwrap();
    // Both stored, at sequences of their own. The stream also takes the checkpoints the sender signs a few
    // milliseconds after a message (on the message's subject), so its count and the sequences depend on timing.
    assert!(b > a, "the second message was deduplicated away: {a} {b}");
    let js = async_nats::jetstream::new(plain(&url).await);
    let stream = js.get_stream("DM").await.unwrap();
    for (seq, subject) in [(a, "jm.a"), (b, "jm.b")] {
        assert_eq!(stream.get_raw_message(seq).await.unwrap().subject.as_str(), subject, "sequence {seq}");
    }
    let mut d = bob.subscribe_durable("DM", "bob", "jm.>").await.unwrap();
    // Each topic's messages are released when its own checkpoint verifies: across topics in either order.
    let mut got = [d.recv_timeout(T).await.unwrap(), d.recv_timeout(T).await.unwrap()].map(|m| m.payload().to_vec());
    got.sort();
    assert_eq!(got, [b"A".to_vec(), b"B".to_vec()]);
    // The message id names neither the sender nor the sequence.
    let msg = stream.get_raw_message(a).await.unwrap();
    let id = msg.headers.get("Nats-Msg-Id").unwrap().to_string();
    assert_eq!(id.len(), 32);
    assert!(!id.contains(&alice.id().to_hex()), "{id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_consumers_late_redeliveries_of_1000_messages_are_delivered() {
    use async_nats::jetstream::consumer::pull;
    const N: u32 = 1000;
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let opts = NatsOptions { ack_wait: Duration::from_millis(800), ..Default::default() };
    // Both with the default options: sender authentication on, checkpoints stored in the stream.
    let alice = NatsAgent::connect(&url, &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect_with(&url, &ident("bob", 2), ks.id(), opts).await.unwrap();
    alice.declare_durable("TASKS", &["tasks.>"]).await.unwrap();
    // One checkpoint after the thousand (stream sequence 1001), so the stream sequences below are the messages'.
    let one_batch =
        pqkit_bus::checkpoint::Checkpoints { every: 1000, after: Duration::from_secs(60), max_bytes: 1 << 30 };
    alice.sign_checkpoints("tasks.>", one_batch).unwrap();
    drop(bob.subscribe_durable("TASKS", "bob", "tasks.>").await.unwrap());
    for i in 0..N {
        alice.publish_durable("tasks.t", &i.to_be_bytes(), Priority::Normal).await.unwrap();
    }
    alice.flush_checkpoints().await.unwrap();
    // The crashed predecessor: it took 300 (after 30 it had handed over and acknowledged) and died.
    let wire = plain(&url).await;
    let js = async_nats::jetstream::new(wire.clone());
    let c = js.get_stream("TASKS").await.unwrap().get_consumer::<pull::Config>("bob").await.unwrap();
    let mut batch = c.fetch().max_messages(300).messages().await.unwrap();
    for i in 0..300 {
        let m = batch.next().await.unwrap().unwrap();
        if i < 30 {
            m.double_ack().await.unwrap();
        }
    }
    drop(batch);
    let mut d = bob.subscribe_durable("TASKS", "bob", "tasks.>").await.unwrap();
    let mut got = Vec::new();
    for _ in 30..N {
        let m = d.recv_timeout(Duration::from_secs(10)).await.unwrap_or_else(|e| {
            panic!("{e} after {} messages; metrics {:?}", got.len(), bob.metrics());
        });
        got.push(u32::from_be_bytes(m.payload().try_into().unwrap()));
    }
    // The undelivered ones first, in order (verified by the checkpoint behind them); the 270 redeliveries after
    // them, far behind, each verified on its own against that checkpoint (which the crashed predecessor had not
    // acknowledged): every one once.
    assert_eq!(&got[..700], &(300..N).collect::<Vec<_>>()[..]);
    let mut all = got.clone();
    all.sort();
    assert_eq!(all, (30..N).collect::<Vec<_>>());
    assert_eq!(d.recv_timeout(Duration::from_millis(1500)).await.unwrap_err(), Error::Timeout);
    assert_eq!(bob.metrics().rejected_replayed, 0, "{:?}", bob.metrics());
}

// ---------------------------------------------------------------------------------------------------------
// Restarts of every part.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_key_server_restart_running_agents_carry_on_with_new_ones() {
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let alice = NatsAgent::connect(&url, &ident("alice", 1), ks.id()).await.unwrap();
    let mut handle = alice.publisher("ks.a").await.unwrap();
    let bob = NatsAgent::connect(&url, &ident("bob", 2), ks.id()).await.unwrap();
    let mut bob_sub = bob.subscribe("ks.>").await.unwrap();
    alice.publish("ks.a", b"before", Priority::Normal).await.unwrap();
    assert_eq!(bob_sub.recv_timeout(T).await.unwrap().payload(), b"before");
    // The key server restarts: sessions and epoch secrets are gone.
    drop(ks);
    let ks = key_server(&url, Policy::allow_all()).await;
    // Agents that come after it: a subscriber that must open the running publisher's messages, a publisher
    // whose messages the running subscriber must open.
    let carol = NatsAgent::connect(&url, &ident("carol", 3), ks.id()).await.unwrap();
    let mut carol_sub = carol.subscribe("ks.>").await.unwrap();
    let dave = NatsAgent::connect(&url, &ident("dave", 4), ks.id()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(8);
    let (mut carol_got, mut bob_got) = (false, false);
    let mut i = 0u32;
    while !(carol_got && bob_got) {
        assert!(
            Instant::now() < deadline,
            "carol {carol_got}, bob {bob_got}: {:?} {:?}",
            carol.metrics(),
            bob.metrics()
        );
        i += 1;
        alice.publish("ks.a", format!("alice {i}").as_bytes(), Priority::Normal).await.unwrap();
        handle.publish(format!("handle {i}").as_bytes(), Priority::Normal).await.unwrap();
        dave.publish("ks.d", format!("dave {i}").as_bytes(), Priority::Normal).await.unwrap();
        while let Ok(m) = carol_sub.recv_timeout(Duration::from_millis(50)).await {
            carol_got |= m.sender() == alice.id() && m.payload().starts_with(b"handle");
        }
        while let Ok(m) = bob_sub.recv_timeout(Duration::from_millis(50)).await {
            bob_got |= m.sender() == dave.id();
        }
    }
}

/// A durable subscriber that reads only after the key server restarted: with the key server's state file every
/// message sealed before the restart still opens, and a publisher's next grant is a new (epoch, stream), never
/// one it was given before. Without the file the restarted key server knows none of the old epochs, and the
/// backlog cannot be opened: the case the state file exists for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_server_restarted_with_its_state_file_still_opens_the_durable_backlog() {
    let s = NatsServer::start();
    let url = s.url();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("keys.state");
    let serve = |file: Option<&std::path::Path>| {
        let ks = KeyServer::new(ident("keys", 200), Policy::allow_all());
        let ks = match file {
            Some(f) => ks.state_file(f),
            None => ks,
        };
        ks.serve(&url)
    };
    for with_state in [true, false] {
        let stream = if with_state { "KSA" } else { "KSB" };
        let topic = if with_state { "ksa.t" } else { "ksb.t" };
        let ks = serve(with_state.then_some(state.as_path())).await.unwrap();
        let alice = NatsAgent::connect(&url, &ident("alice", 1), ks.id()).await.unwrap();
        alice.declare_durable(stream, &[topic]).await.unwrap();
        let bob = NatsAgent::connect(&url, &ident("bob", 2), ks.id()).await.unwrap();
        drop(bob.subscribe_durable(stream, "bob", topic).await.unwrap());
        drop(bob);
        for i in 0u32..30 {
            alice.publish_durable(topic, &i.to_be_bytes(), Priority::Normal).await.unwrap();
        }
        alice.flush_checkpoints().await.unwrap();
        // The key server restarts before bob has read anything; bob comes back as a new process would.
        drop(ks);
        let ks = serve(with_state.then_some(state.as_path())).await.unwrap();
        let bob = NatsAgent::connect(&url, &ident("bob", 2), ks.id()).await.unwrap();
        let mut d = bob.subscribe_durable(stream, "bob", topic).await.unwrap();
        if !with_state {
            assert_eq!(d.recv_timeout(Duration::from_secs(2)).await.unwrap_err(), Error::Timeout);
            let m = bob.metrics();
            assert_eq!(m.received, 0, "{m:?}");
            assert!(m.rejected_unknown_key + m.rejected_expired >= 30, "{m:?}");
            continue;
        }
        let mut seqs = std::collections::HashSet::new();
        for i in 0u32..30 {
            let m = d.recv_timeout(T).await.unwrap();
            assert_eq!((m.payload(), m.sender()), (&i.to_be_bytes()[..], alice.id()));
            seqs.insert(m.seq());
        }
        // Alice carries on after the restart (her agent runs the handshake again and gets a new sender key):
        // a new stream of the same epoch, so no sequence of hers repeats and bob's replay window takes it.
        let deadline = Instant::now() + Duration::from_secs(15);
        let m = loop {
            assert!(Instant::now() < deadline, "{:?} {:?}", alice.metrics(), bob.metrics());
            alice.publish_durable(topic, b"after", Priority::Normal).await.unwrap();
            alice.flush_checkpoints().await.unwrap();
            if let Ok(m) = d.recv_timeout(Duration::from_millis(500)).await {
                break m;
            }
        };
        assert_eq!((m.payload(), m.sender()), (&b"after"[..], alice.id()));
        assert!(!seqs.contains(&m.seq()), "sequence {} granted twice", m.seq());
        assert_eq!(bob.metrics().rejected_replayed, 0);
        d.close().await.unwrap();
    }
    // The file is sealed to the key server's identity: another one refuses it, naming it.
    let e = KeyServer::new(ident("other", 201), Policy::allow_all()).state_file(&state).serve(&url).await.unwrap_err();
    assert!(matches!(e, Error::StateFile { .. }) && e.to_string().contains("keys.state"), "{e}");
}

/// A grant the key server cannot record in its state file is refused (never handed out unrecorded), and the
/// key server grants again once the file can be written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_the_state_file_cannot_record_is_refused() {
    let s = NatsServer::start();
    let url = s.url();
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("state");
    std::fs::create_dir(&sub).unwrap();
    let ks = KeyServer::new(ident("keys", 200), Policy::allow_all())
        .state_file(sub.join("keys.state"))
        .serve(&url)
        .await
        .unwrap();
    // The directory goes away: the temporary file of the next write cannot be created (also as root).
    std::fs::remove_dir_all(&sub).unwrap();
    let alice = NatsAgent::connect(&url, &ident("alice", 1), ks.id()).await.unwrap();
    let e = alice.publish("grant.t", b"x", Priority::Normal).await.unwrap_err();
    assert_eq!(e, Error::UnknownKey, "{e}");
    assert_eq!(ks.metrics().send_grants, 0);
    assert!(ks.metrics().refused >= 1);
    std::fs::create_dir(&sub).unwrap();
    alice.publish("grant.t", b"x", Priority::Normal).await.unwrap();
    assert_eq!(ks.metrics().send_grants, 1);
    assert!(sub.join("keys.state").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_name_the_key_server_and_the_nats_address() {
    let s = NatsServer::start();
    let url = s.url();
    // A monitoring client subscribed to everything: the missing key server must not become a long wait.
    let wire = plain(&url).await;
    let _all = wire.subscribe(">").await.unwrap();
    sync(&wire).await;
    let t = Instant::now();
    let e = NatsAgent::connect(&url, &ident("alice", 1), ident("keys", 200).id()).await.unwrap_err().to_string();
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
    assert!(e.contains(&ident("keys", 200).id().to_hex()) && e.contains(&url), "{e}");
    let e = NatsAgent::connect("nats://127.0.0.1:1", &ident("alice", 1), ident("keys", 200).id()).await.unwrap_err();
    assert!(e.to_string().contains("nats://127.0.0.1:1"), "{e}");
    let ks = key_server(&url, Policy::new()).await;
    let e = NatsAgent::connect(&url, &ident("eve", 9), ks.id()).await.unwrap_err().to_string();
    assert!(e.contains(&ident("eve", 9).id().to_hex()), "{e}");
}

/// Three nats-server nodes in one cluster, an R3 stream, agents given all three URLs. A publisher publishes
/// continuously while the node it is connected to stops (SIGTERM) and comes back, then while the key server
/// restarts: every message arrives at the durable subscriber, none is forged, and a payload comes twice only
/// if the publisher gave up on an acknowledgement and published it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_node_cluster_loses_nothing_while_a_node_and_the_key_server_restart() {
    const N: u32 = 1000;
    let mut nodes = NatsServer::cluster(3);
    let urls = nodes.iter().map(|n| n.url()).collect::<Vec<_>>().join(",");
    let mut ks = Some(key_server(&urls, Policy::allow_all()).await);
    let ks_id = ks.as_ref().unwrap().id();
    let alice = NatsAgent::connect(&urls, &ident("alice", 1), ks_id).await.unwrap();
    let bob = NatsAgent::connect(&urls, &ident("bob", 2), ks_id).await.unwrap();
    // JetStream elects its meta leader once the routes are up: declare until it answers.
    let deadline = Instant::now() + Duration::from_secs(60);
    while let Err(e) = alice.declare_durable_replicated("R3", &["r3.>"], 3).await {
        assert!(Instant::now() < deadline, "no R3 stream: {e}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut d = loop {
        match bob.subscribe_durable("R3", "bob", "r3.>").await {
            Ok(d) => break d,
            Err(e) => assert!(Instant::now() < deadline, "no consumer: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let sent = Arc::new(AtomicU32::new(0));
    // The restarts done so far: the publisher keeps its last 150 messages until the key server restarted, so
    // that both restarts happen while it publishes, whatever the machine's speed.
    let phase = Arc::new(AtomicU32::new(0));
    let publisher = {
        let (alice, sent, phase) = (alice.clone(), sent.clone(), phase.clone());
        tokio::spawn(async move {
            let mut republished = 0u32;
            for i in 0..N {
                while i >= N - 150 && phase.load(Ordering::Relaxed) < 2 {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                while alice.publish_durable("r3.t", &i.to_be_bytes(), Priority::Normal).await.is_err() {
                    republished += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                sent.store(i + 1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            republished
        })
    };
    let mut got = std::collections::HashMap::<u32, u32>::new();
    let mut step = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while got.len() < N as usize {
        assert!(Instant::now() < deadline, "{} of {N} received, step {step}: {:?}", got.len(), bob.metrics());
        let n = sent.load(Ordering::Relaxed);
        if step == 0 && n >= 100 {
            // Stop the node the publisher is connected to.
            let port = alice.client().server_info().port;
            let node = nodes.iter_mut().position(|s| s.port() == port).expect("alice's node");
            tokio::task::block_in_place(|| nodes[node].terminate());
            tokio::time::sleep(Duration::from_secs(2)).await;
            tokio::task::block_in_place(|| nodes[node].start_again());
            step = 1;
            phase.store(1, Ordering::Relaxed);
        } else if step == 1 && n >= 200 {
            drop(ks.take());
            tokio::time::sleep(Duration::from_secs(1)).await;
            ks = Some(KeyServer::new(ident("keys", 200), Policy::allow_all()).serve(&urls).await.unwrap());
            step = 2;
            phase.store(2, Ordering::Relaxed);
        }
        match d.recv_timeout(Duration::from_millis(500)).await {
            Ok(m) => {
                assert_eq!(m.sender(), alice.id());
                let i = u32::from_be_bytes(m.payload().try_into().unwrap());
                assert!(i < N);
                *got.entry(i).or_default() += 1;
            }
            Err(Error::Timeout) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let republished = publisher.await.unwrap();
    assert_eq!(step, 2, "the restarts happened while publishing");
    let twice = got.values().filter(|&&c| c > 1).count() as u32;
    assert!(twice <= republished, "{twice} payloads came twice, {republished} were published again");
    let m = bob.metrics();
    assert_eq!((m.rejected_auth, m.rejected_malformed, m.rejected_replayed), (0, 0, 0), "{m:?}");
    assert!(ks.unwrap().metrics().handshakes >= 2, "both agents handshook with the new key server");
    d.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_replayed_after_a_subscriber_restart_is_rejected_with_the_saved_state() {
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    // Opted out of sender authentication: the replay state on its own (with it, the bare capture below is also
    // held and dropped for want of its checkpoint).
    let alice = NatsAgent::connect_with(&url, &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    let wire = plain(&url).await;
    let mut tap = wire.subscribe("rp.>").await.unwrap();
    sync(&wire).await;
    let bob_id = ident("bob", 2);
    let state = {
        let bob = NatsAgent::connect_with(&url, &bob_id, ks.id(), opted_out()).await.unwrap();
        let mut sub = bob.subscribe("rp.>").await.unwrap();
        alice.publish("rp.x", b"pay 100", Priority::Normal).await.unwrap();
        assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"pay 100");
        sub.replay_state()
    };
    let captured = tokio::time::timeout(T, tap.next()).await.unwrap().unwrap().payload;
    // The subscriber restarts (a new agent, a new subscription); the capture is re-published.
    let restarted = |restore: bool| {
        let (url, state, bob_id, ks) = (url.clone(), state.clone(), bob_id.clone(), ks.id());
        async move {
            let bob = NatsAgent::connect_with(&url, &bob_id, ks, opted_out()).await.unwrap();
            let mut sub = bob.subscribe("rp.>").await.unwrap();
            if restore {
                sub.restore_replay_state(&state).unwrap();
            }
            (bob, sub)
        }
    };
    let (bob, mut sub) = restarted(false).await;
    wire.publish("rp.x", captured.clone()).await.unwrap();
    sync(&wire).await;
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"pay 100", "without the state: delivered again");
    drop((bob, sub));
    let (bob, mut sub) = restarted(true).await;
    wire.publish("rp.x", captured).await.unwrap();
    sync(&wire).await;
    alice.publish("rp.x", b"pay 5", Priority::Normal).await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"pay 5", "the replay is dropped, the next one comes");
    assert_eq!(bob.metrics().rejected_replayed, 1);
    assert!(sub.restore_replay_state("rp.x 1 2 R zz 1\n").is_err());
}

// ---------------------------------------------------------------------------------------------------------
// The test server itself: a start that loses its port is seen, not waited out

/// A port held by another socket makes the server exit during start-up; the harness reports it with the
/// server's own reason, which is what lets a start retry on fresh ports instead of failing a test by chance.
#[test]
fn a_server_start_on_a_taken_port_is_an_error_naming_the_cause() {
    let bin = common::nats_server::find_binary().expect(common::nats_server::INSTALL_HINT);
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let err = match NatsServer::try_start_on(&bin, port) {
        Ok(_) => panic!("nats-server started on port {port}, which is held"),
        Err(e) => e,
    };
    assert!(err.contains(&format!("on port {port}")), "{err}");
    assert!(err.to_lowercase().contains("address already in use"), "{err}");
    drop(held);
    let s = NatsServer::try_start_on(&bin, port).expect("the port is free again");
    assert_eq!(s.port(), port);
}

/// A start that loses its port is tried again on another, and a start that keeps failing ends in a panic that names
/// the attempts and the last cause: the path `NatsServer::start` and `NatsServer::cluster` take after a collision.
#[test]
fn a_start_that_loses_its_port_is_retried_and_a_start_that_keeps_failing_names_the_cause() {
    use common::nats_server::retry_start;
    let bin = common::nats_server::find_binary().expect(common::nats_server::INSTALL_HINT);
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = held.local_addr().unwrap().port();
    let mut tried = Vec::new();
    let s = retry_start("nats-server", 3, || {
        // The first attempt gets the held port, as a start that lost the race would; the next a free one.
        let port = if tried.is_empty() { taken } else { common::nats_server::free_port() };
        tried.push(port);
        NatsServer::try_start_on(&bin, port)
    });
    assert_eq!(tried.len(), 2, "{tried:?}");
    assert_eq!(s.port(), tried[1]);
    drop(s);
    let failing = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        retry_start("nats-server", 2, || NatsServer::try_start_on(&bin, taken))
    }));
    let msg = match failing {
        Ok(_) => panic!("nats-server started on port {taken}, which is held"),
        Err(p) => p.downcast::<String>().map(|m| *m).unwrap_or_default(),
    };
    assert!(msg.contains("did not start in 2 attempts"), "{msg}");
    assert!(msg.to_lowercase().contains("address already in use"), "{msg}");
    drop(held);
}
