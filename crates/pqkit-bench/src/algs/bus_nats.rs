//! The NATS section: pqkit-bus sealed over NATS against plain `async-nats` on the **same server in
//! the same run**, timed by the wall clock (the harness's per-thread CPU clock does not see time spent in the
//! server and the network, so these rows have their own loop; `pqkit-bench --nats URL|auto`).
//!
//! Rows (payload sizes 64 B, 1 KiB, 64 KiB where stated):
//! - `send_10k-<size>`: 10,000 messages published on one subject by one connection and all received by a
//!   subscriber on another connection; the time from the first publish to the last receive. pqkit: a
//!   `NatsPublisher` (`NatsAgent::publisher`, made before the clock starts like the subscription, as the
//!   in-process rows make their `Publisher`) publishes (seal under the sender key) → NATS →
//!   `NatsSubscription::recv` (open). Plain: `Client::publish` →
//!   NATS → `Subscriber::next`. Both keep at most 1 MiB (and at most 1,000 messages) in flight by credit from
//!   the receiver, so that neither runs into the server's slow-consumer limit. Core NATS is at-most-once: a
//!   credit that does not come back within 250 ms counts as a lost message and the publisher goes on; the
//!   receiver stops after 3 s of silence. Time per received message, losses reported per candidate.
//! - `request_reply-64`: one 64-byte request and its 64-byte reply, one after another (3,000 round trips in
//!   `--quick`); p50 and p99 of the round trip. pqkit: `NatsAgent::request` / `reply` (NATS inboxes, both
//!   sealed). Plain: `Client::request` / `publish` to the reply subject.
//! - `durable_send_10k-64`: 10,000 messages published to a JetStream stream, each acknowledged by the server
//!   before the next, then all read through a durable pull consumer with explicit acknowledgement. pqkit:
//!   `publish_durable` / `subscribe_durable`. Plain: `jetstream::Context::publish` (awaiting the ack) / pull
//!   consumer `messages()` + `ack`.
//! - `durable_send_10k-64-r3`: the same on a three-node cluster this run starts on loopback ports (whatever
//!   `--nats` says), the stream replicated three times (R3), every client given the three URLs.
//!
//! - `send_10k-<size>-ckpt` and `request_reply-64-ckpt`: the same, pqkit as it runs **by default**, with
//!   sender authentication (docs/bus.md §9, `NatsOptions::sender_auth`): two more agents connected with the
//!   default options, the publisher signing checkpoints (N = 256, T = 5 ms) and the subscriber holding each
//!   message until a checkpoint covers it. The rows without `-ckpt` (and the durable rows) use agents that
//!   opted out (`sender_auth: false`): sealing alone. The `send_10k` samples of the three candidates (sealed, sealed with
//!   checkpoints, plain) are interleaved in one loop; the request/reply ones too.
//!
//! Agreement: a candidate that received every message must have received exactly the bytes sent (the sum of
//! first bytes); none may receive more than was sent. Losses are counted and reported, not fatal.

use pqkit_bus::nats::{KeyServer, KeyServerHandle, NatsAgent, NatsOptions};
use pqkit_bus::{Identity, Policy, Priority};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Messages per `send_10k` sample.
pub const N: usize = 10_000;
/// Payload sizes of the `send_10k` rows.
pub const SIZES: [usize; 3] = [64, 1024, 65536];
/// Bytes kept in flight at most (core NATS is at-most-once: a subscriber that falls too far behind on this
/// shared, loaded machine is cut off as a slow consumer and loses messages, so both candidates stay well inside).
const IN_FLIGHT: usize = 1 << 20;
/// Messages kept in flight at most.
const MAX_IN_FLIGHT_MSGS: usize = 1000;

type R<T> = Result<T, String>;

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

/// A nats-server this run started (killed on drop).
pub struct LocalServer {
    child: Child,
    _store: PathBuf,
    /// `nats://127.0.0.1:<port>`.
    pub url: String,
}

impl LocalServer {
    /// The server's process id (for profiling its CPU time).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._store);
    }
}

fn nats_server_binary() -> R<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.push("/usr/sbin".into());
    Ok(dirs
        .into_iter()
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
        .ok_or("nats-server not found on PATH: install nats-server (apt-get install nats-server) or pass --nats URL")?)
}

fn free_port() -> R<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0").map_err(e)?.local_addr().map_err(e)?.port())
}

/// Starts `nats-server -js` on a free loopback port (found on `PATH` or in `/usr/sbin`).
pub fn start_local() -> R<LocalServer> {
    start_node(free_port()?, &[])
}

/// Starts three `nats-server -js` nodes forming one cluster on loopback ports; returns them and their client
/// URLs as one comma-separated list.
pub fn start_local_cluster() -> R<(Vec<LocalServer>, String)> {
    let routes = [free_port()?, free_port()?, free_port()?];
    let all = routes.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
    let mut nodes = Vec::new();
    for (i, r) in routes.iter().enumerate() {
        let extra = [
            "-n".to_string(),
            format!("bench{i}"),
            "--cluster_name".into(),
            "pqkit-bench".into(),
            "--cluster".into(),
            format!("nats://127.0.0.1:{r}"),
            "--routes".into(),
            all.clone(),
        ];
        nodes.push(start_node(free_port()?, &extra)?);
    }
    let urls = nodes.iter().map(|n| n.url.clone()).collect::<Vec<_>>().join(",");
    Ok((nodes, urls))
}

fn start_node(port: u16, extra: &[String]) -> R<LocalServer> {
    let bin = nats_server_binary()?;
    let store = std::env::temp_dir().join(format!("pqkit-bench-nats-{}-{port}", std::process::id()));
    let child = Command::new(bin)
        .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
        .arg(&store)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(e)?;
    let s = LocalServer { child, _store: store, url: format!("nats://127.0.0.1:{port}") };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err("nats-server did not start".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(s)
}

/// One row of the section.
#[derive(Clone, Debug)]
pub struct Row {
    /// Row name.
    pub name: String,
    /// pqkit's samples, ns.
    pub pqkit: Vec<f64>,
    /// async-nats's samples, ns.
    pub plain: Vec<f64>,
    /// `send_10k` rows: pqkit's samples in full (messages per second are taken from these).
    pub pqkit_send: Vec<Sample>,
    /// `send_10k` rows: async-nats's samples in full.
    pub plain_send: Vec<Sample>,
    /// Messages lost (sent but never received within the wait) over all samples: pqkit, async-nats. For
    /// request/reply, requests that got no answer within a second.
    pub lost: (usize, usize),
}

impl Row {
    fn new(name: impl Into<String>) -> Row {
        Row {
            name: name.into(),
            pqkit: Vec::new(),
            plain: Vec::new(),
            pqkit_send: Vec::new(),
            plain_send: Vec::new(),
            lost: (0, 0),
        }
    }
    /// Records one interleaved pair of `send_10k` samples: the time per delivered message scaled to `N`
    /// messages (so a sample that lost messages is neither rewarded nor dropped), and the losses.
    fn push_send(&mut self, p: Sample, n: Sample) {
        for (x, v) in [(p, &mut self.pqkit), (n, &mut self.plain)] {
            v.push(N as f64 * 1e9 / x.rate());
        }
        self.lost.0 += N - p.received;
        self.lost.1 += N - n.received;
        self.pqkit_send.push(p);
        self.plain_send.push(n);
    }
}

fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    if s.is_empty() {
        return f64::NAN;
    }
    s[(((s.len() - 1) as f64) * p).round() as usize]
}

/// The pqkit side of the section: a key server and two pairs of agents (publisher alice, subscriber bob):
/// `alice` and `bob` opted out of sender authentication (sealing alone), `auth_alice` and `auth_bob` with the
/// default options (sender authentication on).
pub struct Pqkit {
    _ks: KeyServerHandle,
    alice: NatsAgent,
    bob: NatsAgent,
    auth_alice: NatsAgent,
    auth_bob: NatsAgent,
}

/// Starts a key server and connects the two agents.
pub async fn pqkit_agents(url: &str) -> R<Pqkit> {
    let ks = KeyServer::new(Identity::from_seed("bench-keys", &[9; 32]).map_err(e)?, Policy::allow_all())
        .serve(url)
        .await
        .map_err(e)?;
    let sealed_only = NatsOptions { sender_auth: false, ..NatsOptions::default() };
    let id = |name: &str, seed: u8| Identity::from_seed(name, &[seed; 32]).map_err(e);
    let alice = NatsAgent::connect_with(url, &id("alice", 1)?, ks.id(), sealed_only).await.map_err(e)?;
    let bob = NatsAgent::connect_with(url, &id("bob", 2)?, ks.id(), sealed_only).await.map_err(e)?;
    // The `-ckpt` rows: the default options, sender authentication on every topic.
    let auth_alice = NatsAgent::connect(url, &id("auth-alice", 3)?, ks.id()).await.map_err(e)?;
    let auth_bob = NatsAgent::connect(url, &id("auth-bob", 4)?, ks.id()).await.map_err(e)?;
    Ok(Pqkit { _ks: ks, alice, bob, auth_alice, auth_bob })
}

fn window(size: usize) -> usize {
    (IN_FLIGHT / size).clamp(1, MAX_IN_FLIGHT_MSGS)
}

/// How long the publisher waits for credit before it assumes the oldest message in flight was lost (core NATS
/// is at-most-once) and goes on without it: the sample then reports the loss instead of stalling.
const CREDIT_WAIT: Duration = Duration::from_millis(250);
/// How long the receiver waits for the next message before it ends the sample, counting the rest as lost.
const IDLE_WAIT: Duration = Duration::from_secs(3);

/// One `send_10k` sample of one candidate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// First publish to last receive.
    pub elapsed: Duration,
    /// First publish to the publisher's flush returning (the server has every message).
    pub publish: Duration,
    /// Messages the subscriber received (and, for pqkit, authenticated).
    pub received: usize,
    /// Times the publisher gave up waiting for credit (each is a message assumed lost).
    pub stalls: usize,
    /// Sum of the first payload bytes received (agreement check when nothing was lost).
    pub sum: u64,
}

impl Sample {
    /// Messages per second that reached the subscriber.
    pub fn rate(&self) -> f64 {
        self.received as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Waits for one unit of credit, at most [`CREDIT_WAIT`]; a timeout counts a stall (one message assumed lost)
/// and lets the publisher go on. Both candidates use this, so they are throttled the same way.
async fn take_credit(credit: &tokio::sync::Semaphore, stalls: &mut usize) -> R<()> {
    match tokio::time::timeout(CREDIT_WAIT, credit.acquire()).await {
        Ok(p) => p.map_err(e)?.forget(),
        Err(_) => *stalls += 1,
    }
    Ok(())
}

/// Subscribes on a second plain connection and returns once the server has registered the SUB (a round trip
/// through the server on that connection: a `flush` alone only empties the client's socket, so the first
/// messages from the publisher's connection could overtake the SUB and be lost).
async fn plain_subscribe(subc: &async_nats::Client, subject: &str) -> R<async_nats::Subscriber> {
    use futures_util::StreamExt;
    let sub = subc.subscribe(subject.to_string()).await.map_err(e)?;
    let probe = subc.new_inbox();
    let mut ps = subc.subscribe(probe.clone()).await.map_err(e)?;
    subc.publish(probe, Vec::new().into()).await.map_err(e)?;
    subc.flush().await.map_err(e)?;
    tokio::time::timeout(Duration::from_secs(10), ps.next()).await.map_err(|_| "no round trip from the server")?;
    Ok(sub)
}

/// One `send_10k` sample through pqkit-bus: seal, publish, NATS, open; with `ckpt` (a `bench.ckpt.` subject)
/// also record each envelope's digest, sign checkpoints, and hold each message until its checkpoint verifies.
pub async fn send_pqkit(p: &Pqkit, subject: &str, size: usize, ckpt: bool) -> R<Sample> {
    let (alice, bob) = if ckpt { (&p.auth_alice, &p.auth_bob) } else { (&p.alice, &p.bob) };
    let mut sub = bob.subscribe(subject).await.map_err(e)?;
    // The publisher handle (as the in-process `send_10k` rows use `Agent::publisher`): subject, sender key and
    // checkpoint decision resolved here, before the clock starts, like the subscription.
    let mut publisher = alice.publisher(subject).await.map_err(e)?;
    let credit = Arc::new(tokio::sync::Semaphore::new(window(size)));
    let c2 = credit.clone();
    let t0 = Instant::now();
    let rx = tokio::spawn(async move {
        let (mut n, mut sum, mut last) = (0usize, 0u64, Instant::now());
        while n < N {
            match sub.recv_timeout(IDLE_WAIT).await {
                Ok(m) => {
                    last = Instant::now();
                    n += 1;
                    sum += u64::from(m.payload()[0]);
                    c2.add_permits(1);
                }
                Err(pqkit_bus::Error::Timeout) => break,
                Err(x) => return Err(format!("pqkit receiver: {x}")),
            }
        }
        Ok::<_, String>((n, sum, last))
    });
    let mut stalls = 0;
    let mut msg = vec![0u8; size];
    for i in 0..N {
        take_credit(&credit, &mut stalls).await?;
        msg[0] = i as u8;
        publisher.publish(&msg, Priority::Normal).await.map_err(e)?;
    }
    // `close` signs the last batch at once (a plain `flush` when nothing is checkpointed).
    alice.close().await.map_err(e)?;
    let publish = t0.elapsed();
    let (received, sum, last) = rx.await.map_err(e)??;
    Ok(Sample { elapsed: last.saturating_duration_since(t0), publish, received, stalls, sum })
}

/// One `send_10k` sample through plain async-nats, the same loop as [`send_pqkit`].
pub async fn send_plain(pubc: &async_nats::Client, subc: &async_nats::Client, subject: &str, size: usize) -> R<Sample> {
    use futures_util::StreamExt;
    let mut sub = plain_subscribe(subc, subject).await?;
    let credit = Arc::new(tokio::sync::Semaphore::new(window(size)));
    let c2 = credit.clone();
    let t0 = Instant::now();
    let rx = tokio::spawn(async move {
        let (mut n, mut sum, mut last) = (0usize, 0u64, Instant::now());
        while n < N {
            match tokio::time::timeout(IDLE_WAIT, sub.next()).await {
                Ok(Some(m)) => {
                    last = Instant::now();
                    n += 1;
                    sum += u64::from(m.payload[0]);
                    c2.add_permits(1);
                }
                Ok(None) => return Err("async-nats receiver: subscription closed".to_string()),
                Err(_) => break,
            }
        }
        Ok::<_, String>((n, sum, last))
    });
    let mut stalls = 0;
    let mut msg = vec![0u8; size];
    for i in 0..N {
        take_credit(&credit, &mut stalls).await?;
        msg[0] = i as u8;
        pubc.publish(subject.to_string(), msg.clone().into()).await.map_err(e)?;
    }
    pubc.flush().await.map_err(e)?;
    let publish = t0.elapsed();
    let (received, sum, last) = rx.await.map_err(e)??;
    Ok(Sample { elapsed: last.saturating_duration_since(t0), publish, received, stalls, sum })
}

fn expected_sum() -> u64 {
    (0..N).map(|i| (i as u8) as u64).sum()
}

/// Runs the section against `url`; `quick` takes fewer samples.
pub fn run(url: &str, quick: bool) -> R<Vec<Row>> {
    run_filtered(url, quick, None)
}

/// [`run`], only the rows whose name contains one of `only` (all rows when `only` is empty), e.g.
/// `send_10k-64,request_reply` (`pqkit-bench --nats auto --only ...`).
pub fn run_only(url: &str, quick: bool, only: &[String]) -> R<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(e)?;
    rt.block_on(run_async(url, quick, &|name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))))
}

/// [`run`], only the rows whose name starts with `filter` (e.g. `send_10k-64`, `request_reply`) when given.
pub fn run_filtered(url: &str, quick: bool, filter: Option<&str>) -> R<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(e)?;
    rt.block_on(run_async(url, quick, &|name: &str| filter.is_none_or(|f| name.starts_with(f))))
}

async fn run_async(url: &str, quick: bool, want: &dyn Fn(&str) -> bool) -> R<Vec<Row>> {
    let p = pqkit_agents(url).await?;
    let pubc = async_nats::connect(url).await.map_err(e)?;
    let subc = async_nats::connect(url).await.map_err(e)?;
    let mut rows = Vec::new();
    for size in SIZES {
        let (sealed, ckpt) = (want(&format!("send_10k-{size}")), want(&format!("send_10k-{size}-ckpt")));
        if !sealed && !ckpt {
            continue;
        }
        let samples = match (quick, size) {
            (true, 65536) => 3,
            (true, _) => 5,
            (false, 65536) => 7,
            (false, _) => 15,
        };
        let mut row = Row::new(format!("send_10k-{size}"));
        let mut crow = Row::new(format!("send_10k-{size}-ckpt"));
        // One warm-up of each (keys granted, connections warm), then interleaved samples, rotating which
        // candidate goes first so none always runs on the warmer (or more loaded) machine. Each candidate keeps
        // one subject per size for all its samples (a new subscription per sample), so the keys the warm-up
        // took serve every sample: steady-state throughput, as the in-process rows measure it. (With a subject
        // per sample, every pqkit sample would also pay a sender-key and a receiver-key round trip to the key
        // server, each about 2% of a 64 B sample.)
        for k in 0..=samples {
            let (mut sp, mut sc, mut sn) = (None, None, None);
            for j in 0..3 {
                match (k + j) % 3 {
                    0 if sealed => sp = Some(send_pqkit(&p, &format!("bench.sealed.{size}"), size, false).await?),
                    1 if ckpt => sc = Some(send_pqkit(&p, &format!("bench.ckpt.{size}"), size, true).await?),
                    2 => sn = Some(send_plain(&pubc, &subc, &format!("bench.plain.{size}"), size).await?),
                    _ => {}
                }
            }
            let sn = sn.ok_or("no plain sample")?;
            for (who, x) in [("pqkit", &sp), ("pqkit with checkpoints", &sc), ("async-nats", &Some(sn))] {
                let Some(x) = x else { continue };
                // Agreement: with nothing lost every byte pattern must have arrived; a loss is reported, not fatal.
                if x.received == N && x.sum != expected_sum() {
                    return Err(format!("send_10k-{size}: {who} changed messages"));
                }
                if x.received > N {
                    return Err(format!("send_10k-{size}: {who} received more than it was sent"));
                }
            }
            if k > 0 {
                if let Some(sp) = sp {
                    row.push_send(sp, sn);
                }
                if let Some(sc) = sc {
                    crow.push_send(sc, sn);
                }
            }
        }
        if sealed {
            rows.push(row);
        }
        if ckpt {
            rows.push(crow);
        }
    }
    let (rr, rrc) = (want("request_reply-64"), want("request_reply-64-ckpt"));
    if rr || rrc {
        let (a, b) = request_reply(&p, &pubc, &subc, if quick { 3000 } else { 20000 }, rr, rrc).await?;
        rows.extend(a);
        rows.extend(b);
    }
    if want("durable_send_10k-64") {
        rows.push(durable(&p, &pubc, "durable_send_10k-64", 1, if quick { 1 } else { 3 }).await?);
    }
    if want("durable_send_10k-64-r3") {
        let (_nodes, urls) = start_local_cluster()?;
        let p = pqkit_agents(&urls).await?;
        let client = async_nats::connect(
            urls.split(',').map(|u| u.parse::<async_nats::ServerAddr>()).collect::<Result<Vec<_>, _>>().map_err(e)?,
        )
        .await
        .map_err(e)?;
        rows.push(durable(&p, &client, "durable_send_10k-64-r3", 3, if quick { 1 } else { 3 }).await?);
    }
    Ok(rows)
}

/// The request/reply rows: sealed (`rr`) and sealed with checkpoints on the request topic (`rrc`), each
/// interleaved with plain async-nats.
async fn request_reply(
    p: &Pqkit,
    reqc: &async_nats::Client,
    repc: &async_nats::Client,
    n: usize,
    rr: bool,
    rrc: bool,
) -> R<(Option<Row>, Option<Row>)> {
    use futures_util::StreamExt;
    // Responders.
    let mut s = p.bob.subscribe("bench.rr.sealed").await.map_err(e)?;
    let bob = p.bob.clone();
    let t1 = tokio::spawn(async move {
        while let Ok(m) = s.recv().await {
            let _ = bob.reply(&m, m.payload()).await;
        }
    });
    let mut sc = p.auth_bob.subscribe("bench.ckpt.rr").await.map_err(e)?;
    let bob = p.auth_bob.clone();
    let t3 = tokio::spawn(async move {
        while let Ok(m) = sc.recv().await {
            let _ = bob.reply(&m, m.payload()).await;
        }
    });
    let mut ps = repc.subscribe("bench.rr.plain").await.map_err(e)?;
    let rc = repc.clone();
    let t2 = tokio::spawn(async move {
        while let Some(m) = ps.next().await {
            if let Some(r) = m.reply {
                let _ = rc.publish(r, m.payload).await;
            }
        }
    });
    repc.flush().await.map_err(e)?;
    let mut row = Row::new("request_reply-64");
    let mut crow = Row::new("request_reply-64-ckpt");
    let payload = [7u8; 64];
    // A request or reply lost by core NATS (at-most-once) is counted and its round trip left out, for either
    // candidate; the pair is still interleaved.
    const RR_WAIT: Duration = Duration::from_secs(1);
    let pq = |subject: &'static str| {
        let alice = if subject.starts_with("bench.ckpt.") { p.auth_alice.clone() } else { p.alice.clone() };
        async move {
            let t = Instant::now();
            match alice.request(subject, &payload, RR_WAIT).await {
                Ok(r) if r.payload() == payload => Ok(Some(t.elapsed())),
                Ok(_) => Err(format!("request_reply: pqkit answered wrongly on {subject}")),
                Err(pqkit_bus::Error::Timeout) => Ok(None),
                Err(x) => Err(format!("request_reply: pqkit on {subject}: {x}")),
            }
        }
    };
    for i in 0..n + 100 {
        let dp = if rr { pq("bench.rr.sealed").await? } else { None };
        let dc = if rrc { pq("bench.ckpt.rr").await? } else { None };
        let t = Instant::now();
        let dn = match tokio::time::timeout(RR_WAIT, reqc.request("bench.rr.plain", payload.to_vec().into())).await {
            Ok(Ok(r)) if r.payload[..] == payload => Some(t.elapsed()),
            Ok(Ok(_)) => return Err("request_reply: async-nats answered wrongly".into()),
            Ok(Err(x)) if x.kind() == async_nats::client::RequestErrorKind::TimedOut => None,
            Ok(Err(x)) => return Err(format!("request_reply: async-nats: {x}")),
            Err(_) => None,
        };
        if i >= 100 {
            for (on, r, d) in [(rr, &mut row, dp), (rrc, &mut crow, dc)] {
                if !on {
                    continue;
                }
                match d {
                    Some(d) => r.pqkit.push(d.as_nanos() as f64),
                    None => r.lost.0 += 1,
                }
                match dn {
                    Some(d) => r.plain.push(d.as_nanos() as f64),
                    None => r.lost.1 += 1,
                }
            }
        }
    }
    t1.abort();
    t2.abort();
    t3.abort();
    Ok((rr.then_some(row), rrc.then_some(crow)))
}

async fn durable(p: &Pqkit, client: &async_nats::Client, name: &str, replicas: usize, samples: usize) -> R<Row> {
    use async_nats::jetstream;
    use futures_util::StreamExt;
    let js = jetstream::new(client.clone());
    let mut row = Row::new(name);
    for k in 0..samples {
        // pqkit. (A new cluster elects its JetStream leader after the routes connect: declare until it answers.)
        let stream = format!("BENCH_SEALED_{k}");
        let subject = format!("bench.dsealed.{k}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Err(x) = p.alice.declare_durable_replicated(&stream, &[subject.as_str()], replicas).await {
            if Instant::now() > deadline {
                return Err(format!("{name}: cannot declare the stream: {x}"));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let mut sub = p.bob.subscribe_durable(&stream, "bench", &subject).await.map_err(e)?;
        let mut msg = [0u8; 64];
        let t = Instant::now();
        for i in 0..N {
            msg[0] = i as u8;
            p.alice.publish_durable(&subject, &msg, Priority::Normal).await.map_err(e)?;
        }
        let mut sum = 0u64;
        for _ in 0..N {
            sum += u64::from(sub.recv_timeout(Duration::from_secs(30)).await.map_err(e)?.payload()[0]);
        }
        let dp = t.elapsed();
        // Plain async-nats.
        let stream = format!("BENCH_PLAIN_{k}");
        let subject = format!("bench.dplain.{k}");
        let s = js
            .get_or_create_stream(jetstream::stream::Config {
                name: stream.clone(),
                subjects: vec![subject.clone()],
                storage: jetstream::stream::StorageType::File,
                num_replicas: replicas,
                ..Default::default()
            })
            .await
            .map_err(e)?;
        let c = s
            .get_or_create_consumer(
                "bench",
                jetstream::consumer::pull::Config {
                    durable_name: Some("bench".into()),
                    ack_policy: jetstream::consumer::AckPolicy::Explicit,
                    ..Default::default()
                },
            )
            .await
            .map_err(e)?;
        let t = Instant::now();
        for i in 0..N {
            msg[0] = i as u8;
            js.publish(subject.clone(), msg.to_vec().into()).await.map_err(e)?.await.map_err(e)?;
        }
        let mut msgs = c.messages().await.map_err(e)?;
        let mut sum2 = 0u64;
        for _ in 0..N {
            let m = tokio::time::timeout(Duration::from_secs(30), msgs.next())
                .await
                .map_err(|_| "durable async-nats: timed out".to_string())?
                .ok_or("closed")?
                .map_err(e)?;
            sum2 += u64::from(m.payload[0]);
            m.ack().await.map_err(e)?;
        }
        let dn = t.elapsed();
        if sum != expected_sum() || sum2 != expected_sum() {
            return Err("durable_send_10k: a candidate lost or changed messages".into());
        }
        row.pqkit.push(dp.as_nanos() as f64);
        row.plain.push(dn.as_nanos() as f64);
    }
    Ok(row)
}

/// The section as markdown: medians (and p99 for request/reply), throughput, the publisher-side time, the
/// messages lost per candidate, and the ratios against the targets (sealed ≥ 0.8× plain throughput;
/// p50 request/reply ≤ 1.2× plain).
pub fn markdown(rows: &[Row], header: &str) -> String {
    let mut s = String::new();
    s.push_str("## pqkit-bus over NATS\n\n");
    s.push_str(header);
    s.push_str(
        "\n\nMethod (both candidates the same way, interleaved, alternating which goes first): `send_10k` is 10,000 \
         messages from one connection to a subscriber on another, the publisher keeping at most 1 MiB / 1,000 \
         messages in flight by credit from the receiver (a credit not back within 250 ms is taken as a lost \
         message and the publisher goes on); the sample ends at the last receive (the receiver gives up after \
         3 s of silence). Time per message = elapsed / messages received, shown scaled to 10,000; \
         \"publish side\" is first publish to the publisher's flush. Lost = sent but never received (core NATS \
         is at-most-once), summed over the samples; request/reply counts requests without an answer in 1 s.\n",
    );
    s.push_str(
        "\n| row | pqkit-bus sealed | async-nats plain | ratio | target | met? | publish side (pqkit / plain) | lost (pqkit / plain) |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (mp, mn) = (pct(&r.pqkit, 0.5), pct(&r.plain, 0.5));
        let lost = format!("{} / {}", r.lost.0, r.lost.1);
        if r.name.starts_with("request_reply") {
            let (pp, pn) = (pct(&r.pqkit, 0.99), pct(&r.plain, 0.99));
            let ratio = mp / mn;
            s.push_str(&format!(
                "| {} p50 ({} / {} round trips) | {:.1} µs | {:.1} µs | {:.2}× | ≤ 1.2× | {} | | {lost} |\n",
                r.name,
                r.pqkit.len(),
                r.plain.len(),
                mp / 1e3,
                mn / 1e3,
                ratio,
                if ratio <= 1.2 { "yes" } else { "**no**" }
            ));
            s.push_str(&format!(
                "| {} p99 | {:.1} µs | {:.1} µs | {:.2}× | | | | |\n",
                r.name,
                pp / 1e3,
                pn / 1e3,
                pp / pn
            ));
        } else {
            let ratio = mn / mp;
            let (tp, tn) = (N as f64 * 1e9 / mp, N as f64 * 1e9 / mn);
            let target = !r.name.starts_with("durable");
            let publish = if r.pqkit_send.is_empty() {
                String::new()
            } else {
                let med = |v: &[Sample]| pct(&v.iter().map(|x| x.publish.as_nanos() as f64).collect::<Vec<_>>(), 0.5);
                format!("{:.1} / {:.1} ms", med(&r.pqkit_send) / 1e6, med(&r.plain_send) / 1e6)
            };
            s.push_str(&format!(
                "| {} ({} samples, median) | {:.1} ms, {:.0} msg/s | {:.1} ms, {:.0} msg/s | {:.2}× throughput | {} | {} | {publish} | {lost} |\n",
                r.name,
                r.pqkit.len(),
                mp / 1e6,
                tp,
                mn / 1e6,
                tn,
                ratio,
                if target { "≥ 0.8×" } else { "" },
                if !target {
                    ""
                } else if ratio >= 0.8 {
                    "yes"
                } else {
                    "**no**"
                }
            ));
        }
    }
    // The cost of sender authentication: the `-ckpt` rows against the sealed rows of the same run.
    let mut cost = String::new();
    for r in rows.iter().filter(|r| r.name.ends_with("-ckpt")) {
        let base = r.name.trim_end_matches("-ckpt");
        let Some(b) = rows.iter().find(|x| x.name == base) else { continue };
        let (mc, mb) = (pct(&r.pqkit, 0.5), pct(&b.pqkit, 0.5));
        if r.name.starts_with("request_reply") {
            cost.push_str(&format!(
                "| {base} p50 | {:.1} µs | {:.1} µs | +{:.1} µs ({:.2}×) |\n",
                mc / 1e3,
                mb / 1e3,
                (mc - mb) / 1e3,
                mc / mb
            ));
        } else {
            cost.push_str(&format!(
                "| {base} | {:.1} ms | {:.1} ms | {:.2}× throughput |\n",
                mc / 1e6,
                mb / 1e6,
                mb / mc
            ));
        }
    }
    if !cost.is_empty() {
        s.push_str(
            "\nSender authentication (the default: signed checkpoints, N = 256, T = 5 ms; docs/bus.md §9) against sealing alone (opted out), same run:\n\n| row | sealed + checkpoints | sealed | checkpoints vs sealed |\n|---|---|---|---|\n",
        );
        s.push_str(&cost);
    }
    s
}
