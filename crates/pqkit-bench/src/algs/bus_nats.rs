//! The NATS section (issue 19): pqkit-bus sealed over NATS against plain `async-nats` on the **same server in
//! the same run**, timed by the wall clock (the harness's per-thread CPU clock does not see time spent in the
//! server and the network, so these rows have their own loop; `pqkit-bench --nats URL|auto`).
//!
//! Rows (payload sizes 64 B, 1 KiB, 64 KiB where stated):
//! - `send_10k-<size>`: 10,000 messages published on one subject by one connection and all received by a
//!   subscriber on another connection; the time from the first publish to the last receive. pqkit: `NatsAgent`
//!   publish (seal under the sender key) → NATS → `NatsSubscription::recv` (open). Plain: `Client::publish` →
//!   NATS → `Subscriber::next`. Both keep at most 1 MiB (and at most 1,000 messages) in flight, so that
//!   neither runs into the server's slow-consumer limit.
//! - `request_reply-64`: one 64-byte request and its 64-byte reply, one after another (3,000 round trips in
//!   `--quick`); p50 and p99 of the round trip. pqkit: `NatsAgent::request` / `reply` (NATS inboxes, both
//!   sealed). Plain: `Client::request` / `publish` to the reply subject.
//! - `durable_send_10k-64`: 10,000 messages published to a JetStream stream, each acknowledged by the server
//!   before the next, then all read through a durable pull consumer with explicit acknowledgement. pqkit:
//!   `publish_durable` / `subscribe_durable`. Plain: `jetstream::Context::publish` (awaiting the ack) / pull
//!   consumer `messages()` + `ack`.
//!
//! Agreement: every candidate must receive exactly the messages sent (count and the sum of first bytes).

use pqkit_bus::nats::{KeyServer, KeyServerHandle, NatsAgent};
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

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._store);
    }
}

/// Starts `nats-server -js` on a free loopback port (found on `PATH` or in `/usr/sbin`).
pub fn start_local() -> R<LocalServer> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.push("/usr/sbin".into());
    let bin =
        dirs.into_iter().map(|d| d.join("nats-server")).find(|p| p.is_file()).ok_or(
            "nats-server not found on PATH: install nats-server (apt-get install nats-server) or pass --nats URL",
        )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0").map_err(e)?.local_addr().map_err(e)?.port();
    let store = std::env::temp_dir().join(format!("pqkit-bench-nats-{}-{port}", std::process::id()));
    let child = Command::new(bin)
        .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
        .arg(&store)
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
}

fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    if s.is_empty() {
        return f64::NAN;
    }
    s[(((s.len() - 1) as f64) * p).round() as usize]
}

struct Pqkit {
    _ks: KeyServerHandle,
    alice: NatsAgent,
    bob: NatsAgent,
}

async fn pqkit_agents(url: &str) -> R<Pqkit> {
    let ks = KeyServer::new(Identity::from_seed("bench-keys", &[9; 32]).map_err(e)?, Policy::allow_all())
        .serve(url)
        .await
        .map_err(e)?;
    let alice =
        NatsAgent::connect(url, &Identity::from_seed("alice", &[1; 32]).map_err(e)?, ks.id()).await.map_err(e)?;
    let bob = NatsAgent::connect(url, &Identity::from_seed("bob", &[2; 32]).map_err(e)?, ks.id()).await.map_err(e)?;
    Ok(Pqkit { _ks: ks, alice, bob })
}

fn window(size: usize) -> usize {
    (IN_FLIGHT / size).clamp(1, MAX_IN_FLIGHT_MSGS)
}

async fn send_pqkit(p: &Pqkit, subject: &str, size: usize) -> R<(Duration, u64)> {
    let mut sub = p.bob.subscribe(subject).await.map_err(e)?;
    let credit = Arc::new(tokio::sync::Semaphore::new(window(size)));
    let c2 = credit.clone();
    let t0 = Instant::now();
    let rx = tokio::spawn(async move {
        let mut sum = 0u64;
        for i in 0..N {
            let m = sub.recv_timeout(Duration::from_secs(30)).await.map_err(|x| format!("pqkit: {i} of {N}: {x}"))?;
            sum += u64::from(m.payload()[0]);
            c2.add_permits(1);
        }
        Ok::<_, String>(sum)
    });
    let mut msg = vec![0u8; size];
    for i in 0..N {
        // A lost message (core NATS is at-most-once) ends the receiver with an error; do not wait for it.
        tokio::time::timeout(Duration::from_secs(35), credit.acquire())
            .await
            .map_err(|_| format!("{subject}: the receiver stopped (messages lost)"))?
            .map_err(e)?
            .forget();
        msg[0] = i as u8;
        p.alice.publish(subject, &msg, Priority::Normal).await.map_err(e)?;
    }
    let sum = rx.await.map_err(e)??;
    Ok((t0.elapsed(), sum))
}

async fn send_plain(
    pubc: &async_nats::Client,
    subc: &async_nats::Client,
    subject: &str,
    size: usize,
) -> R<(Duration, u64)> {
    use futures_util::StreamExt;
    let mut sub = subc.subscribe(subject.to_string()).await.map_err(e)?;
    subc.flush().await.map_err(e)?;
    let credit = Arc::new(tokio::sync::Semaphore::new(window(size)));
    let c2 = credit.clone();
    let subject2 = subject.to_string();
    let t0 = Instant::now();
    let rx = tokio::spawn(async move {
        let mut sum = 0u64;
        for i in 0..N {
            let m = tokio::time::timeout(Duration::from_secs(30), sub.next())
                .await
                .map_err(|_| format!("async-nats on {subject2}: {i} of {N} messages arrived"))?
                .ok_or("closed")?;
            sum += u64::from(m.payload[0]);
            c2.add_permits(1);
        }
        Ok::<_, String>(sum)
    });
    let mut msg = vec![0u8; size];
    for i in 0..N {
        // A lost message (core NATS is at-most-once) ends the receiver with an error; do not wait for it.
        tokio::time::timeout(Duration::from_secs(35), credit.acquire())
            .await
            .map_err(|_| format!("{subject}: the receiver stopped (messages lost)"))?
            .map_err(e)?
            .forget();
        msg[0] = i as u8;
        pubc.publish(subject.to_string(), msg.clone().into()).await.map_err(e)?;
    }
    let sum = rx.await.map_err(e)??;
    Ok((t0.elapsed(), sum))
}

fn expected_sum() -> u64 {
    (0..N).map(|i| (i as u8) as u64).sum()
}

/// Runs the section against `url`; `quick` takes fewer samples.
pub fn run(url: &str, quick: bool) -> R<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(e)?;
    rt.block_on(run_async(url, quick))
}

async fn run_async(url: &str, quick: bool) -> R<Vec<Row>> {
    let p = pqkit_agents(url).await?;
    let pubc = async_nats::connect(url).await.map_err(e)?;
    let subc = async_nats::connect(url).await.map_err(e)?;
    let mut rows = Vec::new();
    for size in SIZES {
        let samples = match (quick, size) {
            (true, 65536) => 3,
            (true, _) => 5,
            (false, 65536) => 7,
            (false, _) => 15,
        };
        let mut row = Row { name: format!("send_10k-{size}"), pqkit: Vec::new(), plain: Vec::new() };
        // One warm-up of each (keys granted, connections warm), then interleaved samples.
        for k in 0..=samples {
            let (tp, sp) = send_pqkit(&p, &format!("bench.sealed.{size}.{k}"), size).await?;
            let (tn, sn) = send_plain(&pubc, &subc, &format!("bench.plain.{size}.{k}"), size).await?;
            if sp != expected_sum() || sn != expected_sum() {
                return Err(format!("send_10k-{size}: a candidate lost or changed messages"));
            }
            if k > 0 {
                row.pqkit.push(tp.as_nanos() as f64);
                row.plain.push(tn.as_nanos() as f64);
            }
        }
        rows.push(row);
    }
    rows.push(request_reply(&p, &pubc, &subc, if quick { 3000 } else { 20000 }).await?);
    rows.push(durable(&p, &pubc, url, if quick { 1 } else { 3 }).await?);
    Ok(rows)
}

async fn request_reply(p: &Pqkit, reqc: &async_nats::Client, repc: &async_nats::Client, n: usize) -> R<Row> {
    use futures_util::StreamExt;
    // Responders.
    let mut s = p.bob.subscribe("bench.rr.sealed").await.map_err(e)?;
    let bob = p.bob.clone();
    let t1 = tokio::spawn(async move {
        while let Ok(m) = s.recv().await {
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
    let mut row = Row { name: "request_reply-64".into(), pqkit: Vec::with_capacity(n), plain: Vec::with_capacity(n) };
    let payload = [7u8; 64];
    for i in 0..n + 100 {
        let t = Instant::now();
        let r = p.alice.request("bench.rr.sealed", &payload, Duration::from_secs(5)).await.map_err(e)?;
        let dp = t.elapsed();
        if r.payload() != payload {
            return Err("request_reply: pqkit answered wrongly".into());
        }
        let t = Instant::now();
        let r = reqc.request("bench.rr.plain", payload.to_vec().into()).await.map_err(e)?;
        let dn = t.elapsed();
        if r.payload[..] != payload {
            return Err("request_reply: async-nats answered wrongly".into());
        }
        if i >= 100 {
            row.pqkit.push(dp.as_nanos() as f64);
            row.plain.push(dn.as_nanos() as f64);
        }
    }
    t1.abort();
    t2.abort();
    Ok(row)
}

async fn durable(p: &Pqkit, client: &async_nats::Client, _url: &str, samples: usize) -> R<Row> {
    use async_nats::jetstream;
    use futures_util::StreamExt;
    let js = jetstream::new(client.clone());
    let mut row = Row { name: "durable_send_10k-64".into(), pqkit: Vec::new(), plain: Vec::new() };
    for k in 0..samples {
        // pqkit.
        let stream = format!("BENCH_SEALED_{k}");
        let subject = format!("bench.dsealed.{k}");
        p.alice.declare_durable(&stream, &[subject.as_str()]).await.map_err(e)?;
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

/// The section as markdown: medians (and p99 for request/reply), throughput, and the ratios against the
/// issue-19 targets (sealed ≥ 0.8× plain throughput; p50 request/reply ≤ 1.2× plain).
pub fn markdown(rows: &[Row], header: &str) -> String {
    let mut s = String::new();
    s.push_str("## pqkit-bus over NATS (issue 19)\n\n");
    s.push_str(header);
    s.push_str(
        "\n\n| row | pqkit-bus sealed | async-nats plain | ratio | target | met? |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (mp, mn) = (pct(&r.pqkit, 0.5), pct(&r.plain, 0.5));
        if r.name.starts_with("request_reply") {
            let (pp, pn) = (pct(&r.pqkit, 0.99), pct(&r.plain, 0.99));
            let ratio = mp / mn;
            s.push_str(&format!(
                "| {} p50 ({} round trips) | {:.1} µs | {:.1} µs | {:.2}× | ≤ 1.2× | {} |\n",
                r.name,
                r.pqkit.len(),
                mp / 1e3,
                mn / 1e3,
                ratio,
                if ratio <= 1.2 { "yes" } else { "**no**" }
            ));
            s.push_str(&format!(
                "| {} p99 | {:.1} µs | {:.1} µs | {:.2}× | | |\n",
                r.name,
                pp / 1e3,
                pn / 1e3,
                pp / pn
            ));
        } else {
            let ratio = mn / mp;
            let (tp, tn) = (N as f64 * 1e9 / mp, N as f64 * 1e9 / mn);
            let target = !r.name.starts_with("durable");
            s.push_str(&format!(
                "| {} ({} samples, median) | {:.1} ms, {:.0} msg/s | {:.1} ms, {:.0} msg/s | {:.2}× throughput | {} | {} |\n",
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
    s
}
