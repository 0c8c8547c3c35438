//! pqkit-bus over a real NATS server: sender authentication with signed checkpoints, the routes of interleaved
//! senders and subjects, relabelled subjects, and stream numbers. Every test starts its own `nats-server`.
mod common;

use common::agents::{T, ident, key_server, opted_out, plain, sync};
use common::nats_server::NatsServer;
use futures_util::StreamExt;
use pqkit_bus::envelope::{self, Kind};
use pqkit_bus::nats::{NatsAgent, NatsOptions};
use pqkit_bus::{Error, Policy, Priority};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------------------
// Sender authentication: signed checkpoints (docs/bus.md §9)

use pqkit_bus::checkpoint::{self, Checkpoints, SenderAuth};

/// Checkpoint settings that never fire by themselves (the test signs with `flush_checkpoints`).
const BY_HAND: Checkpoints = Checkpoints { every: 1000, after: Duration::from_secs(60), max_bytes: 1 << 30 };

fn auth(timeout_ms: u64) -> SenderAuth {
    SenderAuth { timeout: Duration::from_millis(timeout_ms), ..SenderAuth::default() }
}

/// Collects `n` raw envelopes from a plain tap.
async fn take(tap: &mut async_nats::Subscriber, n: usize) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(tokio::time::timeout(T, tap.next()).await.unwrap().unwrap().payload.to_vec());
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_forging_in_a_publishers_name_is_rejected_with_sender_auth() {
    let s = NatsServer::start();
    // Everyone may publish and subscribe on `team.>`: bob holds alice's key for it, as any subscriber does.
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    // Bob opted out of sender authentication: his subscription shows what the AEAD alone accepts.
    let bob = NatsAgent::connect_with(&s.url(), &ident("bob", 2), ks.id(), opted_out()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &ident("carol", 5), ks.id()).await.unwrap();
    let wire = plain(&s.url()).await;
    alice.sign_checkpoints("team.quiet", Checkpoints::default()).unwrap();
    alice.sign_checkpoints("team.>", BY_HAND).unwrap();
    let mut checked = carol.subscribe_authenticated("team.>", auth(400)).await.unwrap();
    let mut unchecked = bob.subscribe("team.>").await.unwrap();
    // A quiet topic: one message, and the 5 ms timer signs it without any flush.
    let t0 = Instant::now();
    alice.publish("team.quiet", b"hello", Priority::Normal).await.unwrap();
    let m = checked.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.sender()), (&b"hello"[..], alice.id()));
    assert!(t0.elapsed() >= Duration::from_millis(5), "released before its checkpoint could exist");
    assert_eq!(unchecked.recv_timeout(T).await.unwrap().payload(), b"hello");
    assert!(alice.checkpoints_sent() >= 1);
    // The forgery: an envelope sealed under alice's sender key for `team.pay` that alice never sent. Any
    // subscriber of the topic holds that key and can make it; here alice's own `seal` makes it (same key, same
    // bytes a forger would produce), and bob's plain connection injects it.
    let forged = alice.seal("team.pay", b"pay mallory 1000", Priority::Critical, None).await.unwrap();
    wire.publish("team.pay", forged.clone().into()).await.unwrap();
    sync(&wire).await;
    // Without sender authentication the AEAD accepts it: this is the weakness checkpoints remove.
    let m = unchecked.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.sender()), (&b"pay mallory 1000"[..], alice.id()));
    // With it, nothing covers the forgery: rejected after the timeout, never delivered.
    assert_eq!(checked.recv_timeout(Duration::from_millis(800)).await.unwrap_err(), Error::Timeout);
    assert_eq!(carol.metrics().rejected_unsigned, 1);
    // A forgery among alice's messages (its sequence between two genuine ones: alice's own `seal` takes it): no
    // checkpoint of alice lists its digest, so it alone is rejected (after the timeout, holding back the genuine
    // message behind it until then); every genuine message is delivered, in order.
    alice.publish("team.pay", b"genuine 1", Priority::Normal).await.unwrap();
    alice.flush().await.unwrap();
    let forged = alice.seal("team.pay", b"pay mallory 2000", Priority::Critical, None).await.unwrap();
    wire.publish("team.pay", forged.into()).await.unwrap();
    sync(&wire).await;
    alice.publish("team.pay", b"genuine 2", Priority::Normal).await.unwrap();
    alice.flush_checkpoints().await.unwrap();
    alice.publish("team.pay", b"genuine 3", Priority::Normal).await.unwrap();
    alice.close().await.unwrap();
    for want in [&b"genuine 1"[..], b"genuine 2", b"genuine 3"] {
        assert_eq!(checked.recv_timeout(T).await.unwrap().payload(), want);
    }
    let mt = carol.metrics();
    assert_eq!((mt.rejected_auth, mt.rejected_unsigned, mt.received), (0, 2, 4), "{mt:?}");
    // The unchecked subscriber got everything, forgeries included, and counted no checkpoint as a rejection.
    // The forgery came through another connection, so its place among alice's messages is not fixed (alice's
    // flush does not order it against the injecting connection): compare the set.
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(unchecked.recv_timeout(T).await.unwrap().payload().to_vec());
    }
    got.sort();
    let mut want: Vec<Vec<u8>> =
        [&b"genuine 1"[..], b"pay mallory 2000", b"genuine 2", b"genuine 3"].iter().map(|w| w.to_vec()).collect();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(bob.metrics().rejected(), 0);
}

/// With the default options (no `sign_checkpoints`, no `subscribe_authenticated`), a subscriber of a topic who
/// holds a publisher's key cannot make another subscriber accept a message in that publisher's name: neither
/// a bare forgery, nor one covered by a checkpoint the forger signs himself claiming the publisher, nor one
/// whose genuine checkpoint is cut short. The genuine messages arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_co_subscriber_cannot_forge_a_publishers_message() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let mallory_id = ident("mallory", 2);
    let mallory = NatsAgent::connect(&s.url(), &mallory_id, ks.id()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &ident("carol", 5), ks.id()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("team.pay").await.unwrap();
    let mut carols = carol.subscribe("team.>").await.unwrap();
    let mut mallorys = mallory.subscribe("team.>").await.unwrap();
    sync(&wire).await;
    // Genuine traffic: both subscribers get it once alice's timer has signed it (no flush, no rule).
    alice.publish("team.pay", b"pay bob 10", Priority::Normal).await.unwrap();
    for sub in [&mut carols, &mut mallorys] {
        let m = sub.recv_timeout(T).await.unwrap();
        assert_eq!((m.payload(), m.sender()), (&b"pay bob 10"[..], alice.id()));
    }
    assert!(alice.checkpoints_sent() >= 1, "the default signs checkpoints");
    let genuine = take(&mut tap, 2).await;
    assert_eq!(envelope::parse(&genuine[1]).unwrap().kind, Kind::Checkpoint);
    // 1. A bare forgery: sealed under alice's sender key for the topic, which mallory, a subscriber, holds
    //    (alice's own `seal` makes the same bytes a forger would), injected by a plain connection.
    let forged = alice.seal("team.pay", b"pay mallory 1000", Priority::Critical, None).await.unwrap();
    wire.publish("team.pay", forged.clone().into()).await.unwrap();
    sync(&wire).await;
    // 2. The same forgery covered by a checkpoint mallory signs, with the right digest, claiming alice.
    let forged2 = alice.seal("team.pay", b"pay mallory 2000", Priority::Critical, None).await.unwrap();
    let m = envelope::parse_nats(&forged2).unwrap();
    let mut ch = checkpoint::Chain::new();
    ch.push(m.epoch, m.seq, "", &forged2);
    let mut cp = ch.checkpoint(&mallory_id, "team.pay").unwrap().unwrap();
    cp[16..32].copy_from_slice(&alice.id().0);
    wire.publish("team.pay", forged2.into()).await.unwrap();
    wire.publish("team.pay", cp.into()).await.unwrap();
    sync(&wire).await;
    // 3. A genuine message whose genuine checkpoint arrives truncated (by a byte, and by half).
    alice.sign_checkpoints("team.held", BY_HAND).unwrap();
    let mut tap2 = wire.subscribe("team.held").await.unwrap();
    sync(&wire).await;
    alice.publish("team.held", b"cut", Priority::Normal).await.unwrap();
    alice.flush_checkpoints().await.unwrap();
    let v = take(&mut tap2, 2).await;
    // Carol got alice's message and checkpoint as sent; a later copy of both, truncated, changes nothing.
    let got = carols.recv_timeout(T).await.unwrap();
    assert_eq!(got.payload(), b"cut");
    for cut in [1, v[1].len() / 2] {
        wire.publish("team.held", v[1][..v[1].len() - cut].to_vec().into()).await.unwrap();
    }
    sync(&wire).await;
    // None of it is delivered; the forgeries are rejected once the timeout passes (never released early).
    let bound = SenderAuth::default().timeout + Duration::from_millis(500);
    assert_eq!(carols.recv_timeout(bound).await.unwrap_err(), Error::Timeout);
    let mt = carol.metrics();
    assert_eq!(mt.received, 2, "{mt:?}");
    assert_eq!(mt.rejected_unsigned, 2, "both forgeries dropped unreleased: {mt:?}");
    assert!(mt.rejected_auth >= 1, "mallory's checkpoint in alice's name: {mt:?}");
    assert_eq!(mt.rejected_malformed, 2, "the truncated checkpoints: {mt:?}");
    // Genuine traffic goes on.
    alice.publish("team.pay", b"pay bob 20", Priority::Normal).await.unwrap();
    assert_eq!(carols.recv_timeout(T).await.unwrap().payload(), b"pay bob 20");
}

/// A checkpoint that never arrives: the messages it would have covered are held, never delivered, and rejected
/// and counted (`rejected_unsigned`) once [`SenderAuth::timeout`] has passed, not before and not much later; a
/// late checkpoint releases nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_whose_checkpoint_never_arrives_are_dropped_and_counted_within_the_bound() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &ident("carol", 5), ks.id()).await.unwrap();
    // Alice's checkpoints for this topic are held back (signed by hand only).
    alice.sign_checkpoints("lost.>", BY_HAND).unwrap();
    let mut sub = carol.subscribe("lost.x").await.unwrap();
    let t0 = Instant::now();
    for i in 0u8..5 {
        alice.publish("lost.x", &[i], Priority::Normal).await.unwrap();
    }
    alice.flush().await.unwrap();
    let timeout = SenderAuth::default().timeout;
    let early = sub.recv_timeout(timeout / 2).await;
    assert_eq!(early.unwrap_err(), Error::Timeout, "nothing before a checkpoint");
    assert_eq!(carol.metrics().rejected_unsigned, 0, "not rejected before the timeout");
    // Polling the subscription (as an application waiting for messages does) reports the rejection.
    let r = sub.recv_timeout(timeout + Duration::from_millis(500)).await;
    assert_eq!(r.unwrap_err(), Error::Timeout);
    let mt = carol.metrics();
    assert_eq!((mt.rejected_unsigned, mt.received), (5, 0), "{mt:?}");
    assert!(t0.elapsed() < timeout * 2 + Duration::from_secs(1), "rejected within the bound");
    // The checkpoint turns up late: nothing is released.
    alice.flush_checkpoints().await.unwrap();
    assert_eq!(sub.recv_timeout(Duration::from_millis(300)).await.unwrap_err(), Error::Timeout);
    assert_eq!(carol.metrics().received, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_corrupted_reordered_duplicated_and_wrongly_signed_checkpoints() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice_id = ident("alice", 1);
    let alice = NatsAgent::connect(&s.url(), &alice_id, ks.id()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &ident("carol", 5), ks.id()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("cp.x").await.unwrap();
    sync(&wire).await;
    alice.sign_checkpoints("cp.>", BY_HAND).unwrap();
    // Record five batches of two messages and their checkpoints as the server saw them; carol is not
    // subscribed yet, and the test then plays the wire to her the way a hostile server could.
    let mut batches = Vec::new();
    for b in 0u8..5 {
        for i in 0u8..2 {
            alice.publish("cp.x", &[b, i], Priority::Normal).await.unwrap();
        }
        alice.flush_checkpoints().await.unwrap();
        let v = take(&mut tap, 3).await;
        assert_eq!(envelope::parse(&v[2]).unwrap().kind, Kind::Checkpoint);
        batches.push(v);
    }
    let mut sub = carol.subscribe_authenticated("cp.x", auth(400)).await.unwrap();
    let send = |bytes: &Vec<u8>| {
        let (w, b) = (wire.clone(), bytes.clone());
        async move { w.publish("cp.x", b.into()).await.unwrap() }
    };
    // 1. Dropped checkpoint: the batch is rejected after the timeout.
    send(&batches[0][0]).await;
    send(&batches[0][1]).await;
    sync(&wire).await;
    assert_eq!(sub.recv_timeout(Duration::from_millis(800)).await.unwrap_err(), Error::Timeout);
    assert_eq!(carol.metrics().rejected_unsigned, 2);
    // 2. Corrupted checkpoint (one bit of the signature): rejected, and its batch after the timeout.
    let mut bad = batches[1][2].clone();
    let n = bad.len();
    bad[n - 100] ^= 1;
    for e in [&batches[1][0], &batches[1][1], &bad] {
        send(e).await;
    }
    sync(&wire).await;
    assert_eq!(sub.recv_timeout(Duration::from_millis(800)).await.unwrap_err(), Error::Timeout);
    let mt = carol.metrics();
    assert_eq!((mt.rejected_auth, mt.rejected_unsigned, mt.received), (1, 4, 0), "{mt:?}");
    // 3. Signed by the wrong identity: bob lists the right digests of alice's batch and signs it with his own
    //    keys, claiming alice as the sender. The identity does not hash to alice's id: rejected.
    let bob_id = ident("bob", 2);
    let mut ch = checkpoint::Chain::new();
    for e in &batches[2][..2] {
        let m = envelope::parse_nats(e).unwrap();
        ch.push(m.epoch, m.seq, "", e);
    }
    let mut wrong = ch.checkpoint(&bob_id, "cp.x").unwrap().unwrap();
    wrong[16..32].copy_from_slice(&alice.id().0);
    // And alice's identity in it with bob's signature: the signature does not verify.
    let cm = envelope::parse_checkpoint(&batches[2][2]).unwrap();
    let mut swapped = batches[2][2][..cm.signature.start].to_vec();
    let mut signed = b"pqkit-bus nats checkpoint v2".to_vec();
    signed.extend_from_slice(&swapped);
    bob_id.sign(&signed, &mut swapped).unwrap();
    for e in [&batches[2][0], &batches[2][1], &wrong, &swapped] {
        send(e).await;
    }
    sync(&wire).await;
    assert_eq!(sub.recv_timeout(Duration::from_millis(800)).await.unwrap_err(), Error::Timeout);
    let mt = carol.metrics();
    assert_eq!((mt.rejected_auth, mt.rejected_unsigned, mt.received), (3, 6, 0), "{mt:?}");
    // 4. Reordered and duplicated: batch 3 and 4's messages, 4's checkpoint before 3's, then 3's again. Both
    //    batches are released, in sequence order; the duplicate is counted as a replay and not verified again.
    for e in [&batches[3][0], &batches[3][1], &batches[4][0], &batches[4][1], &batches[4][2], &batches[3][2]] {
        send(e).await;
    }
    send(&batches[3][2]).await;
    sync(&wire).await;
    for want in [[3u8, 0], [3, 1], [4, 0], [4, 1]] {
        assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), want);
    }
    // The genuine traffic goes on after all that.
    alice.publish("cp.x", b"live", Priority::Normal).await.unwrap();
    alice.flush_checkpoints().await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"live");
    let mt = carol.metrics();
    assert_eq!((mt.rejected_auth, mt.rejected_unsigned, mt.rejected_replayed, mt.received), (3, 6, 1, 5), "{mt:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_catch_up_and_restart_with_checkpoints() {
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let opts = NatsOptions { ack_wait: Duration::from_secs(1), ..Default::default() };
    let alice = NatsAgent::connect_with(&url, &ident("alice", 1), ks.id(), opts).await.unwrap();
    alice.declare_durable("AUD", &["aud.>"]).await.unwrap();
    // Batches of exactly 8 (the timer waits a minute): under load the default 5 ms timer could cut a batch
    // short and make a fourth checkpoint.
    alice.sign_checkpoints("aud.>", Checkpoints { every: 8, ..BY_HAND }).unwrap();
    let bob_id = ident("bob", 2);
    {
        let bob = NatsAgent::connect_with(&url, &bob_id, ks.id(), opts).await.unwrap();
        drop(bob.subscribe_durable_authenticated("AUD", "bob", "aud.>", auth(5000)).await.unwrap());
    }
    // Bob is away: alice publishes 20 messages (batches 0..=7, 8..=15, 16..=19) and a forged one is stored too.
    for i in 0u32..20 {
        alice.publish_durable("aud.log", &i.to_be_bytes(), Priority::Normal).await.unwrap();
    }
    alice.close().await.unwrap();
    let forged = alice.seal("aud.log", b"forged", Priority::Normal, None).await.unwrap();
    let js = async_nats::jetstream::new(plain(&url).await);
    js.publish("aud.log", forged.into()).await.unwrap().await.unwrap();
    assert_eq!(alice.checkpoints_sent(), 3);
    // Bob comes back, takes ten messages and dies in the middle of the second batch.
    {
        let bob = NatsAgent::connect_with(&url, &bob_id, ks.id(), opts).await.unwrap();
        // Sender authentication is on by default for durable subscriptions too.
        let mut d = bob.subscribe_durable("AUD", "bob", "aud.>").await.unwrap();
        for i in 0u32..10 {
            assert_eq!(d.recv_timeout(T).await.unwrap().payload(), i.to_be_bytes());
        }
        // The tenth is acknowledged when the application is done with it (here, or by the next recv).
        d.ack().await.unwrap();
        bob.flush().await.unwrap();
    }
    // Restarted, he gets exactly the ten he had not been handed (acknowledgements are per message, not per
    // batch), each verified against the checkpoint that covered it: the second batch's checkpoint was held
    // unacknowledged (its messages 10..=15 were not all handed over), so it comes back with them. The forgery
    // never. What the dead subscriber had pulled beyond message 9 comes back after `ack_wait`, so the order may
    // differ from the stream's; nothing is missing or repeated.
    let bob = NatsAgent::connect_with(&url, &bob_id, ks.id(), opts).await.unwrap();
    // (A short timeout, so the forgery, which no checkpoint lists, is rejected within the test.)
    let mut d = bob.subscribe_durable_authenticated("AUD", "bob", "aud.>", auth(1500)).await.unwrap();
    let mut got = Vec::new();
    for _ in 10..20 {
        let m = d.recv_timeout(Duration::from_secs(10)).await.unwrap();
        got.push(u32::from_be_bytes(m.payload().try_into().unwrap()));
    }
    got.sort();
    assert_eq!(got, (10..20).collect::<Vec<u32>>());
    assert_eq!(d.recv_timeout(Duration::from_secs(3)).await.unwrap_err(), Error::Timeout);
    let mt = bob.metrics();
    assert_eq!((mt.received, mt.rejected_unsigned, mt.rejected_auth), (10, 1, 0), "{mt:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_reply_on_a_checkpointed_topic_is_signed_at_once() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let client = NatsAgent::connect(&s.url(), &ident("client", 3), ks.id()).await.unwrap();
    let service = NatsAgent::connect(&s.url(), &ident("service", 4), ks.id()).await.unwrap();
    // The timer would wait a minute: the request must not.
    client.sign_checkpoints("svc.>", BY_HAND).unwrap();
    let mut sub = service.subscribe_authenticated("svc.echo", auth(2000)).await.unwrap();
    let svc = service.clone();
    let task = tokio::spawn(async move {
        for _ in 0..3 {
            let req = sub.recv().await.unwrap();
            svc.reply(&req, req.payload()).await.unwrap();
        }
    });
    for n in 0u8..3 {
        let r = client.request("svc.echo", &[n; 5], Duration::from_secs(2)).await.unwrap();
        assert_eq!((r.payload(), r.sender()), (&[n; 5][..], service.id()));
    }
    task.await.unwrap();
    assert_eq!(client.checkpoints_sent(), 3);
    assert_eq!(service.metrics().rejected(), 0);
}

/// A predecessor on the durable consumer died holding part of the stream delivered and unacknowledged while the
/// rest was still undelivered: its successor gets the undelivered messages first and the redeliveries after
/// `ack_wait`, and must hand over every message once (the redeliveries are not duplicates of anything it saw).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redeliveries_after_later_messages_are_not_dropped_as_duplicates() {
    use async_nats::jetstream::consumer::pull;
    let s = NatsServer::start();
    let url = s.url();
    let ks = key_server(&url, Policy::allow_all()).await;
    let opts = NatsOptions { ack_wait: Duration::from_millis(500), ..Default::default() };
    let alice = NatsAgent::connect(&url, &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect_with(&url, &ident("bob", 2), ks.id(), opts).await.unwrap();
    alice.declare_durable("TASKS", &["tasks.>"]).await.unwrap();
    drop(bob.subscribe_durable("TASKS", "bob", "tasks.>").await.unwrap());
    for i in 0u32..20 {
        alice.publish_durable("tasks.t", &i.to_be_bytes(), Priority::Normal).await.unwrap();
    }
    // The predecessor: a plain client on bob's consumer takes the first 5 and dies without acknowledging them.
    let wire = plain(&url).await;
    let js = async_nats::jetstream::new(wire.clone());
    let c = js.get_stream("TASKS").await.unwrap().get_consumer::<pull::Config>("bob").await.unwrap();
    let mut batch = c.fetch().max_messages(5).messages().await.unwrap();
    for _ in 0..5 {
        batch.next().await.unwrap().unwrap();
    }
    drop(batch);
    let mut d = bob.subscribe_durable("TASKS", "bob", "tasks.>").await.unwrap();
    let mut got = Vec::new();
    for _ in 0..20 {
        let m = d.recv_timeout(T).await.unwrap();
        got.push(u32::from_be_bytes(m.payload().try_into().unwrap()));
    }
    // The undelivered ones come first, in order; the redeliveries after them; every message once.
    assert_eq!(&got[..15], &(5..20).collect::<Vec<_>>()[..], "{got:?}");
    let mut all = got.clone();
    all.sort();
    assert_eq!(all, (0..20).collect::<Vec<_>>(), "{got:?}");
    assert_eq!(d.recv_timeout(Duration::from_millis(1200)).await.unwrap_err(), Error::Timeout);
    assert_eq!(bob.metrics().received, 20);
}

// ---------------------------------------------------------------------------------------------------------
// The per-message caches (the subscription's last route, the publisher's last sender key and last
// checkpoint decision) must never hand a message another message's sender, subject or reply-to, nor skip a
// checkpoint rule added after a subject was looked up.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interleaved_senders_subjects_and_replies_each_keep_their_own_route() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&s.url(), &ident("bob", 2), ks.id()).await.unwrap();
    let carol = NatsAgent::connect(&s.url(), &ident("carol", 3), ks.id()).await.unwrap();
    let mut sub = bob.subscribe("mix.*").await.unwrap();
    // (sender, subject, reply-to, payload length): repeats (the cached route is reused) and every kind of change.
    let plan: Vec<(&NatsAgent, &str, Option<&str>, usize)> = vec![
        (&alice, "mix.a", None, 3),
        (&alice, "mix.a", None, 1024),
        (&carol, "mix.a", None, 5),
        (&carol, "mix.b", None, 200),
        (&carol, "mix.b", Some("reply.one"), 7),
        (&carol, "mix.b", Some("reply.two"), 7),
        (&carol, "mix.b", None, 64),
        (&alice, "mix.b", None, 80),
        (&alice, "mix.a", Some("reply.one"), 81),
        (&alice, "mix.a", None, 128),
        (&alice, "mix.a", None, 129),
    ];
    // One publisher at a time, each message received before the next is sent: the order is the plan's.
    for (i, (who, subject, reply, len)) in plan.iter().enumerate() {
        let body = vec![i as u8; *len];
        match reply {
            Some(r) => who.publish_with_reply(subject, &body, Priority::Normal, r).await.unwrap(),
            None => who.publish(subject, &body, Priority::Normal).await.unwrap(),
        }
        let m = sub.recv_timeout(T).await.unwrap();
        assert_eq!(m.sender(), who.id(), "message {i}");
        assert_eq!(m.subject(), *subject, "message {i}");
        assert_eq!(m.reply_to(), *reply, "message {i}");
        assert_eq!(m.payload(), &body[..], "message {i}");
    }
    assert_eq!(bob.metrics().received, plan.len() as u64);
    assert_eq!(bob.metrics().rejected(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_rule_added_after_publishing_applies_to_the_next_publish() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect_with(&s.url(), &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    // Opted out, so that only rules sign. A rule on another topic turns signing on, so `ck.x` is looked up (and found uncovered) on each publish.
    alice.sign_checkpoints("other.>", Checkpoints { every: 1, ..Checkpoints::default() }).unwrap();
    alice.publish("ck.x", b"one", Priority::Normal).await.unwrap();
    alice.publish("ck.x", b"two", Priority::Normal).await.unwrap();
    alice.close().await.unwrap();
    assert_eq!(alice.checkpoints_sent(), 0, "no rule covers ck.x yet");
    alice.sign_checkpoints("ck.>", Checkpoints { every: 1, ..Checkpoints::default() }).unwrap();
    alice.publish("ck.x", b"three", Priority::Normal).await.unwrap();
    alice.close().await.unwrap();
    assert_eq!(alice.checkpoints_sent(), 1, "the new rule covers the next publish on ck.x");
}

/// A `recv` that is dropped (here after one poll) while the subscription fetches the sender's key from the
/// key server does not lose the message it was opening: the next `recv` hands it over, once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recv_cancelled_during_the_key_fetch_loses_no_message() {
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect(&s.url(), &ident("alice", 1), ks.id()).await.unwrap();
    let bob = NatsAgent::connect(&s.url(), &ident("bob", 2), ks.id()).await.unwrap();
    let mut sub = bob.subscribe("fetch.a").await.unwrap();
    for p in [&b"first"[..], b"second"] {
        alice.publish("fetch.a", p, Priority::Normal).await.unwrap();
    }
    alice.flush().await.unwrap();
    // Let both messages reach bob's client: the next recv takes "first" and must ask the key server (bob holds
    // no key of alice's yet), which takes a round trip; the recv is polled once and dropped before it ends.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(futures_util::FutureExt::now_or_never(sub.recv()).is_none(), "opened without the key server");
    // The cancelled recv did take "first" and ask for the key (the request went out before the timeout).
    let deadline = Instant::now() + T;
    while ks.metrics().recv_grants == 0 {
        assert!(Instant::now() < deadline, "the cancelled recv never asked the key server");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(bob.metrics().received, 0);
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"first");
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"second");
    assert_eq!(sub.recv_timeout(Duration::from_millis(300)).await.unwrap_err(), Error::Timeout);
    assert_eq!((bob.metrics().received, bob.metrics().rejected()), (2, 0));
    assert_eq!(ks.metrics().recv_grants, 1, "one fetch, kept across the cancelled recv");
}

/// The NATS envelope (v3) does not carry the topic or the reply-to: both sides bind the NATS subject and reply
/// subject into the AEAD's associated data. A plain client re-publishing a genuine envelope with another reply-to,
/// without its reply-to, with one added, or on another inbox of the same requester (one key scope, so the key is
/// the same and only the associated data can tell) gets it rejected as `rejected_auth`; the same bytes with their
/// genuine labels are delivered. Fails if either binding is dropped from the associated data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relabelled_subjects_and_reply_tos_fail_the_tag_and_are_counted() {
    // Opted out of sender authentication: the envelope's own checks.
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect_with(&s.url(), &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    let bob = NatsAgent::connect_with(&s.url(), &ident("bob", 2), ks.id(), opted_out()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut sub = bob.subscribe("rl.*").await.unwrap();
    sync(&wire).await;
    alice.publish("rl.x", b"warm", Priority::Normal).await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"warm");
    let inbox = format!("_INBOX.{}.{:016x}", alice.id().to_hex(), 1);
    let evil = format!("_INBOX.{}.{:016x}", bob.id().to_hex(), 2);
    let with_reply = alice.seal("rl.x", b"answer me", Priority::Normal, Some(&inbox)).await.unwrap();
    let without = alice.seal("rl.x", b"no reply", Priority::Normal, None).await.unwrap();
    wire.publish_with_reply("rl.x", evil.clone(), with_reply.clone().into()).await.unwrap(); // reply-to changed
    wire.publish("rl.x", with_reply.clone().into()).await.unwrap(); // reply-to dropped
    wire.publish_with_reply("rl.x", evil.clone(), without.clone().into()).await.unwrap(); // reply-to added
    sync(&wire).await;
    // The rejected copies did not use up the sequences (a window commits only after the tag verifies): the
    // genuine labels are delivered after them.
    wire.publish_with_reply("rl.x", inbox.clone(), with_reply.into()).await.unwrap();
    wire.publish("rl.x", without.into()).await.unwrap();
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.reply_to(), m.sender()), (&b"answer me"[..], Some(inbox.as_str()), alice.id()));
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.reply_to()), (&b"no reply"[..], None));
    let mt = bob.metrics();
    assert_eq!((mt.rejected_auth, mt.rejected(), mt.received), (3, 3, 3), "{mt:?}");
    // A reply sealed for bob's inbox `…1` re-published on his inbox `…2`: same scope `_INBOX.<bob>`, same key.
    let to_1 = format!("_INBOX.{}.{:016x}", bob.id().to_hex(), 1);
    let to_2 = format!("_INBOX.{}.{:016x}", bob.id().to_hex(), 2);
    let reply = alice.seal(&to_1, b"reply to request 1", Priority::Normal, None).await.unwrap();
    wire.publish(to_2, reply.clone().into()).await.unwrap();
    sync(&wire).await;
    let deadline = Instant::now() + T;
    while bob.metrics().rejected() < 4 {
        assert!(Instant::now() < deadline, "the moved reply was not rejected: {:?}", bob.metrics());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mt = bob.metrics();
    assert_eq!((mt.rejected_auth, mt.received), (4, 3), "{mt:?}");
    // On the inbox it was sealed for, it opens (no request waits for it, so it is counted and dropped).
    wire.publish(to_1, reply.into()).await.unwrap();
    sync(&wire).await;
    while bob.metrics().received < 4 {
        assert!(Instant::now() < deadline, "the genuine reply was not opened: {:?}", bob.metrics());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(bob.metrics().rejected(), 4);
    // A v1 envelope (the in-process format, with the topic inside) is not a NATS envelope: malformed.
    let h = envelope::Header {
        kind: Kind::Publish,
        priority: Priority::Normal,
        epoch: 1,
        seq: 1,
        sender: alice.id(),
        sub: 0,
        topic: "rl.x",
        reply: "",
    };
    let mut v1 = Vec::new();
    h.append(&mut v1);
    v1.extend_from_slice(&[0u8; 16 + 16]);
    wire.publish("rl.x", v1.into()).await.unwrap();
    sync(&wire).await;
    alice.publish("rl.x", b"after", Priority::Normal).await.unwrap();
    assert_eq!(sub.recv_timeout(T).await.unwrap().payload(), b"after");
    assert_eq!(bob.metrics().rejected_malformed, 1);
}

/// `envelope` with the stream number (the sequence's top 24 bits, header bytes 7..10) replaced by `stream`.
fn restamp(envelope: &[u8], stream: u32) -> Vec<u8> {
    let mut v = envelope.to_vec();
    v[7..10].copy_from_slice(&stream.to_be_bytes()[1..]);
    v
}

/// Envelope v3 names the sender by its stream number only: the key server's grant of that stream (one agent
/// per scope and epoch) says whose it is, and the key opening it is derived for that agent and stream. A stream
/// nobody was granted, another sender's stream, and a delivered message re-stamped with a new stream of the same
/// sender are each rejected and counted, and nothing is delivered under a wrong sender.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_numbers_name_their_sender_and_cannot_be_forged_borrowed_or_restamped() {
    // Opted out of sender authentication: the envelope's own checks.
    let s = NatsServer::start();
    let ks = key_server(&s.url(), Policy::allow_all()).await;
    let alice = NatsAgent::connect_with(&s.url(), &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    let carol = NatsAgent::connect_with(&s.url(), &ident("carol", 5), ks.id(), opted_out()).await.unwrap();
    let bob = NatsAgent::connect_with(&s.url(), &ident("bob", 2), ks.id(), opted_out()).await.unwrap();
    let wire = plain(&s.url()).await;
    let mut tap = wire.subscribe("sn.x").await.unwrap();
    let mut sub = bob.subscribe("sn.x").await.unwrap();
    sync(&wire).await;
    // alice sends counters 0..=3 of her stream, carol one message of hers: each delivered under its sender.
    let mut alice_raw = Vec::new();
    for i in 0u8..4 {
        alice.publish("sn.x", &[b'a', i], Priority::Normal).await.unwrap();
        let m = sub.recv_timeout(T).await.unwrap();
        assert_eq!((m.payload(), m.sender()), (&[b'a', i][..], alice.id()));
        alice_raw.push(tap.next().await.unwrap().payload.to_vec());
    }
    carol.publish("sn.x", b"c0", Priority::Normal).await.unwrap();
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.sender()), (&b"c0"[..], carol.id()));
    let carol_raw = tap.next().await.unwrap().payload.to_vec();
    let sa = envelope::parse_nats(&alice_raw[0]).unwrap().stream();
    let sc = envelope::parse_nats(&carol_raw).unwrap().stream();
    assert_ne!(sa, sc, "two senders share a stream number");
    // alice again, in a second process (the same identity, a new connection): a new grant, a new stream.
    let alice2 = NatsAgent::connect_with(&s.url(), &ident("alice", 1), ks.id(), opted_out()).await.unwrap();
    alice2.publish("sn.x", b"a2", Priority::Normal).await.unwrap();
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.sender()), (&b"a2"[..], alice.id()));
    let sa2 = envelope::parse_nats(&tap.next().await.unwrap().payload).unwrap().stream();
    assert!(sa2 != sa && sa2 != sc, "streams {sa} {sc} {sa2}");
    let before = bob.metrics();
    // Fresh envelopes (sealed, never sent), so only the stream number can make them fail.
    let fresh_a = alice.seal("sn.x", b"alice fresh", Priority::Normal, None).await.unwrap();
    // carol's counter moves past alice's highest (3), so alice's replay window cannot be what refuses it.
    for _ in 0..4 {
        carol.seal("sn.x", b"unsent", Priority::Normal, None).await.unwrap();
    }
    let fresh_c = carol.seal("sn.x", b"carol claims to be alice", Priority::Normal, None).await.unwrap();
    assert!(envelope::parse_nats(&fresh_c).unwrap().seq & 0xFF_FFFF_FFFF > 3);
    let injections: Vec<Vec<u8>> = vec![
        restamp(&fresh_a, 0x00AB_CDEF), // a stream nobody was granted: the key server knows no sender (unknown key)
        restamp(&fresh_a, sc),          // alice's message under carol's stream: carol's key does not open it (auth)
        restamp(&fresh_c, sa),          // carol's message under alice's stream: alice's key does not open it (auth)
        restamp(&alice_raw[3], sa2),    // a delivered message re-stamped with alice's new stream (auth)
        alice_raw[3].clone(),           // and as it was: a replay (replayed)
    ];
    for bytes in injections {
        wire.publish("sn.x", bytes.into()).await.unwrap();
    }
    sync(&wire).await;
    // The genuine fresh ones still open (nothing was committed for them), each under its own sender.
    wire.publish("sn.x", fresh_a.into()).await.unwrap();
    wire.publish("sn.x", fresh_c.into()).await.unwrap();
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.sender()), (&b"alice fresh"[..], alice.id()));
    let m = sub.recv_timeout(T).await.unwrap();
    assert_eq!((m.payload(), m.sender()), (&b"carol claims to be alice"[..], carol.id()));
    let mt = bob.metrics();
    assert_eq!(mt.rejected_unknown_key - before.rejected_unknown_key, 1, "{mt:?}");
    assert_eq!(mt.rejected_auth - before.rejected_auth, 3, "{mt:?}");
    assert_eq!(mt.rejected_replayed - before.rejected_replayed, 1, "{mt:?}");
    assert_eq!(mt.rejected() - before.rejected(), 5, "{mt:?}");
    assert_eq!(mt.received, 8);
}
