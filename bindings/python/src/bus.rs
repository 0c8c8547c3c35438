//! `pqkit.bus`: the Rust NATS agent of `pqkit-bus`, driven from asyncio.
//!
//! One implementation of the sealed protocol: every operation here calls `pqkit_bus::nats`. The futures run on
//! the tokio runtime of [`crate::runtime`] (created on first use, stopped at interpreter exit) and complete an
//! `asyncio.Future` of the caller's event loop; the GIL is held only to copy arguments in and results out,
//! never while waiting on the network. The asyncio-facing classes (`Agent`, `Subscription`, ...)
//! are in `python/pqkit/bus.py` and wrap the `_Bus*` classes below.

use crate::Buf;
use crate::bus_errors::{BusClosed, BusError, BusTimeout, InvalidSubject, NoResponders, Unauthorised, bus_err};
use crate::runtime::future_into_py;
use pqkit_bus::checkpoint::{Checkpoints, SenderAuth};
use pqkit_bus::nats::{DurableSubscription, KeyServer, KeyServerHandle, NatsAgent, NatsOptions, NatsSubscription};
use pqkit_bus::{AgentId, Error, Identity, Message, Policy, Priority};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use zeroize::Zeroizing;

fn parse_id(what: &str, s: &str) -> PyResult<AgentId> {
    let s = s.trim();
    let bad = || {
        PyValueError::new_err(format!("{what}: an agent id is 32 hex digits (16 bytes), got {} characters", s.len()))
    };
    if s.len() != 32 || !s.is_ascii() {
        return Err(bad());
    }
    let mut id = [0u8; 16];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(AgentId(id))
}

fn priority(p: u8) -> PyResult<Priority> {
    Priority::from_u8(p)
        .ok_or_else(|| PyValueError::new_err(format!("priority: expected 0 (LOW) to 3 (CRITICAL), got {p}")))
}

fn timeout(seconds: f64) -> PyResult<Duration> {
    secs("timeout", seconds)
}

fn secs(what: &str, seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| PyValueError::new_err(format!("{what}: expected a finite number of seconds >= 0, got {seconds}")))
}

/// The agent options of `Agent.connect`, checked; `None` keeps the Rust default ([`NatsOptions::default`]).
struct ConnectOptions {
    opts: NatsOptions,
    /// A checkpoint rule for every topic, when `checkpoint_every` or `checkpoint_after` was given.
    checkpoints: Option<Checkpoints>,
    /// Subscriber-side sender authentication with a timeout of the caller's, when `sender_auth_timeout` was given.
    auth: Option<SenderAuth>,
}

#[allow(clippy::too_many_arguments)]
fn connect_options(
    sender_auth: bool,
    checkpoint_every: Option<u64>,
    checkpoint_after: Option<f64>,
    sender_auth_timeout: Option<f64>,
    ack_wait: Option<f64>,
    durable_retry: Option<f64>,
    subscription_capacity: Option<usize>,
    rotate_after_messages: Option<u64>,
) -> PyResult<ConnectOptions> {
    let d = NatsOptions::default();
    if !sender_auth && (checkpoint_every.is_some() || checkpoint_after.is_some()) {
        return Err(PyValueError::new_err(
            "checkpoint_every, checkpoint_after: checkpoints are signed for sender authentication, which \
             sender_auth=False turns off",
        ));
    }
    if checkpoint_every == Some(0) {
        return Err(PyValueError::new_err("checkpoint_every: expected at least 1 message, got 0"));
    }
    if subscription_capacity == Some(0) {
        return Err(PyValueError::new_err("subscription_capacity: expected at least 1 message, got 0"));
    }
    if let Some(n) = rotate_after_messages.filter(|n| !(1..=MAX_ROTATE).contains(n)) {
        return Err(PyValueError::new_err(format!("rotate_after_messages: expected 1 to 2**39 messages, got {n}")));
    }
    let checkpoints = match (checkpoint_every, checkpoint_after) {
        (None, None) => None,
        (every, after) => {
            let c = Checkpoints::default();
            Some(Checkpoints {
                every: every.unwrap_or(c.every),
                after: after.map(|t| secs("checkpoint_after", t)).transpose()?.unwrap_or(c.after),
                ..c
            })
        }
    };
    let auth = match sender_auth_timeout {
        None => None,
        Some(t) if t > 0.0 => Some(SenderAuth { timeout: secs("sender_auth_timeout", t)?, ..SenderAuth::default() }),
        Some(t) => {
            return Err(PyValueError::new_err(format!(
                "sender_auth_timeout: expected a finite number of seconds > 0, got {t}"
            )));
        }
    };
    let opts = NatsOptions {
        sender_auth,
        ack_wait: ack_wait.map(|t| secs("ack_wait", t)).transpose()?.unwrap_or(d.ack_wait),
        durable_retry: durable_retry.map(|t| secs("durable_retry", t)).transpose()?.unwrap_or(d.durable_retry),
        subscription_capacity: subscription_capacity.unwrap_or(d.subscription_capacity),
        rotate_after_messages: rotate_after_messages.unwrap_or(d.rotate_after_messages),
    };
    Ok(ConnectOptions { opts, checkpoints, auth })
}

/// The most messages under one sender key that the Rust agent accepts (2^39).
const MAX_ROTATE: u64 = 1 << 39;

/// An agent identity: a name and the hybrid ML-DSA-65 + Ed25519 signing keys derived from a 32-byte seed.
#[pyclass(module = "pqkit.bus", name = "_BusIdentity", frozen)]
pub(crate) struct BusIdentity {
    // Boxed: the identity's ML-KEM key is 64-byte aligned (see `fits_python_alignment`).
    identity: Box<Identity>,
    seed: Zeroizing<[u8; 32]>,
}
fits_python_alignment!(BusIdentity);

impl BusIdentity {
    fn from_seed_bytes(name: &str, seed: &[u8]) -> PyResult<Self> {
        let seed: Zeroizing<[u8; 32]> = Zeroizing::new(seed.try_into().map_err(|_| {
            crate::InvalidLength::new_err(format!("agent identity seed: expected 32 bytes, got {}", seed.len()))
        })?);
        let identity = Identity::from_seed(name, &seed).map_err(bus_err)?;
        Ok(BusIdentity { identity: Box::new(identity), seed })
    }
}

#[pymethods]
impl BusIdentity {
    #[staticmethod]
    fn generate(name: &str) -> PyResult<Self> {
        let mut seed = Zeroizing::new([0u8; 32]);
        pqkit::rng::fill_os(seed.as_mut()).map_err(crate::err)?;
        Self::from_seed_bytes(name, seed.as_ref())
    }

    #[staticmethod]
    fn from_seed(name: &str, seed: Buf<'_, '_>) -> PyResult<Self> {
        Self::from_seed_bytes(name, &seed)
    }

    /// Reads the identity file format of `pqkit keygen --alg agent`.
    #[staticmethod]
    fn from_text(text: &str) -> PyResult<Self> {
        let (name, seed) = pqkit_bus::identity::parse_key_file(text.as_bytes()).map_err(|e| match e {
            Error::KeyFile { .. } => crate::InvalidEncoding::new_err(e.to_string()),
            e => bus_err(e),
        })?;
        Self::from_seed_bytes(&name, seed.as_ref())
    }

    /// The identity file text (secret: it holds the seed).
    fn to_text(&self) -> PyResult<String> {
        let file = pqkit_bus::identity::key_file(self.identity.name(), &self.seed).map_err(bus_err)?;
        // The format is ASCII apart from the name, which `from_seed` checked is UTF-8.
        Ok(String::from_utf8_lossy(&file).into_owned())
    }

    #[getter]
    fn id(&self) -> String {
        self.identity.id().to_hex()
    }

    #[getter]
    fn name(&self) -> &str {
        self.identity.name()
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.bus.Identity {:?} id {} (keys hidden)>", self.identity.name(), self.identity.id().to_hex())
    }
}

/// Who may publish and subscribe to what; held by the key server.
#[pyclass(module = "pqkit.bus", name = "_BusPolicy", frozen)]
pub(crate) struct BusPolicy {
    policy: Mutex<Policy>,
}
fits_python_alignment!(BusPolicy);

impl BusPolicy {
    fn get(&self) -> Policy {
        self.policy.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

#[pymethods]
impl BusPolicy {
    #[new]
    fn new() -> Self {
        BusPolicy { policy: Mutex::new(Policy::new()) }
    }

    #[staticmethod]
    fn allow_all() -> Self {
        BusPolicy { policy: Mutex::new(Policy::allow_all()) }
    }

    fn allow(&self, agent_id: &str, publish: Vec<String>, subscribe: Vec<String>) -> PyResult<()> {
        let id = parse_id("agent_id", agent_id)?;
        let p: Vec<&str> = publish.iter().map(String::as_str).collect();
        let s: Vec<&str> = subscribe.iter().map(String::as_str).collect();
        let mut g = self.policy.lock().unwrap_or_else(PoisonError::into_inner);
        *g = g.clone().allow(id, &p, &s).map_err(bus_err)?;
        Ok(())
    }

    fn may_publish(&self, agent_id: &str, subject: &str) -> PyResult<bool> {
        Ok(self.get().may_publish(&parse_id("agent_id", agent_id)?, subject))
    }

    fn may_subscribe(&self, agent_id: &str, pattern: &str) -> PyResult<bool> {
        Ok(self.get().may_subscribe(&parse_id("agent_id", agent_id)?, pattern))
    }
}

/// A key server run inside this process.
#[pyclass(module = "pqkit.bus", name = "_BusKeyServer", frozen)]
pub(crate) struct BusKeyServer {
    id: AgentId,
    handle: Mutex<Option<KeyServerHandle>>,
}
fits_python_alignment!(BusKeyServer);

#[pymethods]
impl BusKeyServer {
    #[staticmethod]
    #[pyo3(signature = (url, identity, policy, state_file=None))]
    fn serve<'py>(
        py: Python<'py>,
        url: String,
        identity: &BusIdentity,
        policy: &BusPolicy,
        state_file: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ks = KeyServer::new(Identity::clone(&identity.identity), policy.get());
        let ks = match state_file {
            Some(path) => ks.state_file(path),
            None => ks,
        };
        future_into_py(py, async move {
            let handle = ks.serve(&url).await.map_err(bus_err)?;
            Ok(BusKeyServer { id: handle.id(), handle: Mutex::new(Some(handle)) })
        })
    }

    #[getter]
    fn id(&self) -> String {
        self.id.to_hex()
    }

    /// Stops serving (idempotent).
    fn close(&self) {
        drop(self.handle.lock().unwrap_or_else(PoisonError::into_inner).take());
    }
}

/// A message that authenticated: its subject, sender, priority and payload.
#[pyclass(module = "pqkit.bus", name = "Message", frozen)]
pub(crate) struct BusMessage {
    msg: Message,
}
fits_python_alignment!(BusMessage);

#[pymethods]
impl BusMessage {
    #[getter]
    fn subject(&self) -> &str {
        self.msg.subject()
    }

    #[getter]
    fn sender(&self) -> String {
        self.msg.sender().to_hex()
    }

    #[getter]
    fn priority(&self) -> u8 {
        self.msg.priority() as u8
    }

    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.msg.payload())
    }

    #[getter]
    fn reply_to(&self) -> Option<&str> {
        self.msg.reply_to()
    }

    #[getter]
    fn seq(&self) -> u64 {
        self.msg.seq()
    }

    fn __repr__(&self) -> String {
        format!(
            "<pqkit.bus.Message subject={:?} sender={} priority={} {} bytes>",
            self.msg.subject(),
            self.msg.sender().to_hex(),
            self.msg.priority() as u8,
            self.msg.payload().len()
        )
    }
}

fn wrap(msg: Message) -> BusMessage {
    BusMessage { msg }
}

/// A NATS agent, authenticated to a key server. `close` takes the Rust agent out: once the operations in
/// flight end, its last reference goes, its background tasks are aborted and its connection is drained.
#[pyclass(module = "pqkit.bus", name = "_BusAgent", frozen)]
pub(crate) struct BusAgent {
    id: AgentId,
    ks: AgentId,
    agent: Mutex<Option<NatsAgent>>,
    /// Sender authentication on core subscriptions (the agent's `sender_auth`).
    sender_auth: bool,
    /// Subscriber-side settings of the caller's (`sender_auth_timeout`); `None`: the Rust default.
    auth: Option<SenderAuth>,
    /// The counters when the agent was closed (once its last checkpoints are signed).
    last_metrics: Arc<Mutex<Option<Counters>>>,
}
fits_python_alignment!(BusAgent);

impl BusAgent {
    /// The Rust agent; `Closed` once `close` ran.
    fn agent(&self) -> PyResult<NatsAgent> {
        self.agent.lock().unwrap_or_else(PoisonError::into_inner).clone().ok_or_else(|| bus_err(Error::Closed))
    }
}

/// The counters `metrics` returns, by name.
type Counters = Vec<(&'static str, u64)>;

fn metrics_of(agent: &NatsAgent) -> Counters {
    let m = agent.metrics();
    vec![
        ("published", m.published),
        ("delivered", m.delivered),
        ("rejected", m.rejected()),
        ("rejected_unsigned", m.rejected_unsigned),
        ("duplicates", agent.duplicates()),
        ("checkpoints", agent.checkpoints_sent()),
    ]
}

#[pymethods]
impl BusAgent {
    #[staticmethod]
    #[pyo3(signature = (url, identity, key_server, *, sender_auth=true, checkpoint_every=None,
        checkpoint_after=None, sender_auth_timeout=None, ack_wait=None, durable_retry=None,
        subscription_capacity=None, rotate_after_messages=None))]
    #[allow(clippy::too_many_arguments)]
    fn connect<'py>(
        py: Python<'py>,
        url: String,
        identity: &BusIdentity,
        key_server: &str,
        sender_auth: bool,
        checkpoint_every: Option<u64>,
        checkpoint_after: Option<f64>,
        sender_auth_timeout: Option<f64>,
        ack_wait: Option<f64>,
        durable_retry: Option<f64>,
        subscription_capacity: Option<usize>,
        rotate_after_messages: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ks = parse_id("key_server", key_server)?;
        let c = connect_options(
            sender_auth,
            checkpoint_every,
            checkpoint_after,
            sender_auth_timeout,
            ack_wait,
            durable_retry,
            subscription_capacity,
            rotate_after_messages,
        )?;
        let identity = Identity::clone(&identity.identity);
        future_into_py(py, async move {
            let agent = NatsAgent::connect_with(&url, &identity, ks, c.opts).await.map_err(bus_err)?;
            if let Some(cfg) = c.checkpoints {
                // A rule for every topic: it takes the place of the default N and T.
                agent.sign_checkpoints(">", cfg).map_err(bus_err)?;
            }
            Ok(BusAgent {
                id: agent.id(),
                ks: agent.key_server(),
                agent: Mutex::new(Some(agent)),
                sender_auth,
                auth: c.auth,
                last_metrics: Arc::new(Mutex::new(None)),
            })
        })
    }

    #[getter]
    fn id(&self) -> String {
        self.id.to_hex()
    }

    #[getter]
    fn key_server(&self) -> String {
        self.ks.to_hex()
    }

    fn publish<'py>(
        &self,
        py: Python<'py>,
        subject: String,
        payload: Buf<'_, '_>,
        priority: u8,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (agent, payload, p) = (self.agent()?, payload.to_vec(), self::priority(priority)?);
        future_into_py(py, async move { agent.publish(&subject, &payload, p).await.map_err(bus_err) })
    }

    fn request<'py>(
        &self,
        py: Python<'py>,
        subject: String,
        payload: Buf<'_, '_>,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (agent, payload, t) = (self.agent()?, payload.to_vec(), self::timeout(timeout)?);
        future_into_py(py, async move { agent.request(&subject, &payload, t).await.map(wrap).map_err(bus_err) })
    }

    fn reply<'py>(&self, py: Python<'py>, request: &BusMessage, payload: Buf<'_, '_>) -> PyResult<Bound<'py, PyAny>> {
        if request.msg.reply_to().is_none() {
            return Err(PyValueError::new_err(format!(
                "reply: the message on {:?} is not a request (it has no reply_to)",
                request.msg.subject()
            )));
        }
        let (agent, req, payload) = (self.agent()?, request.msg.clone(), payload.to_vec());
        future_into_py(py, async move { agent.reply(&req, &payload).await.map_err(bus_err) })
    }

    fn subscribe<'py>(&self, py: Python<'py>, pattern: String) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent()?;
        let auth = self.auth.filter(|_| self.sender_auth);
        future_into_py(py, async move {
            // The key server is asked first, as `pqkit bus sub` does: a pattern the policy does not cover whole is
            // refused here rather than received in part.
            agent.check_subscribe(&pattern).await.map_err(bus_err)?;
            let sub = match auth {
                Some(a) => agent.subscribe_authenticated(&pattern, a).await,
                None => agent.subscribe(&pattern).await,
            }
            .map_err(bus_err)?;
            Ok(BusSubscription { pattern, sub: Arc::new(tokio::sync::Mutex::new(Some(sub))), closing: closing() })
        })
    }

    fn declare_durable<'py>(
        &self,
        py: Python<'py>,
        name: String,
        subjects: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent()?;
        future_into_py(py, async move {
            let s: Vec<&str> = subjects.iter().map(String::as_str).collect();
            agent.declare_durable(&name, &s).await.map_err(bus_err)
        })
    }

    fn publish_durable<'py>(
        &self,
        py: Python<'py>,
        subject: String,
        payload: Buf<'_, '_>,
        priority: u8,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (agent, payload, p) = (self.agent()?, payload.to_vec(), self::priority(priority)?);
        future_into_py(py, async move { agent.publish_durable(&subject, &payload, p).await.map_err(bus_err) })
    }

    #[pyo3(signature = (stream, consumer, pattern, sender_auth=None))]
    fn subscribe_durable<'py>(
        &self,
        py: Python<'py>,
        stream: String,
        consumer: String,
        pattern: String,
        sender_auth: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent()?;
        let auth = self.auth.unwrap_or_default();
        future_into_py(py, async move {
            agent.check_subscribe(&pattern).await.map_err(bus_err)?;
            let sub = match sender_auth {
                None => agent.subscribe_durable(&stream, &consumer, &pattern).await,
                Some(true) => agent.subscribe_durable_authenticated(&stream, &consumer, &pattern, auth).await,
                Some(false) => agent.subscribe_durable_unauthenticated(&stream, &consumer, &pattern).await,
            }
            .map_err(bus_err)?;
            Ok(BusDurableSubscription {
                pattern,
                sub: Arc::new(tokio::sync::Mutex::new(Some(sub))),
                closing: closing(),
            })
        })
    }

    fn flush<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent()?;
        future_into_py(py, async move { agent.flush().await.map_err(bus_err) })
    }

    /// Signs what is pending and flushes, then drains the connection and lets the Rust agent go (idempotent).
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let taken = self.agent.lock().unwrap_or_else(PoisonError::into_inner).take();
        let last = self.last_metrics.clone();
        let snapshot = move |a: &NatsAgent| *last.lock().unwrap_or_else(PoisonError::into_inner) = Some(metrics_of(a));
        if let Some(a) = &taken {
            snapshot(a);
        }
        future_into_py(py, async move {
            let Some(agent) = taken else { return Ok(()) };
            let r = agent.close().await.map_err(bus_err);
            snapshot(&agent);
            // The connection ends once what is queued is sent; the agent's tasks end with its last reference.
            let _ = agent.client().drain().await;
            r
        })
    }

    /// The agent's counters: published, delivered, and every rejection by reason (the last ones once closed).
    fn metrics(&self) -> Counters {
        match self.agent.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            Some(a) => metrics_of(a),
            None => self.last_metrics.lock().unwrap_or_else(PoisonError::into_inner).clone().unwrap_or_default(),
        }
    }
}

/// A subscription of a [`BusAgent`]; one receive at a time (the Python side serialises them).
#[pyclass(module = "pqkit.bus", name = "_BusSubscription", frozen)]
pub(crate) struct BusSubscription {
    pattern: String,
    sub: Arc<tokio::sync::Mutex<Option<NatsSubscription>>>,
    /// Set by unsubscribe/close: ends a receive in flight (which holds the lock) with `Closed`.
    closing: Arc<tokio::sync::watch::Sender<bool>>,
}
fits_python_alignment!(BusSubscription);

#[pymethods]
impl BusSubscription {
    #[getter]
    fn pattern(&self) -> &str {
        &self.pattern
    }

    fn recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        recv(py, &self.sub, &self.closing)
    }

    fn unsubscribe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let sub = self.sub.clone();
        self.closing.send_replace(true);
        future_into_py(py, async move {
            let taken = sub.lock().await.take();
            match taken {
                Some(s) => s.unsubscribe().await.map_err(bus_err),
                None => Ok(()),
            }
        })
    }
}

/// A durable (JetStream) subscription of a [`BusAgent`].
#[pyclass(module = "pqkit.bus", name = "_BusDurableSubscription", frozen)]
pub(crate) struct BusDurableSubscription {
    pattern: String,
    sub: Arc<tokio::sync::Mutex<Option<DurableSubscription>>>,
    /// Set by unsubscribe/close: ends a receive in flight (which holds the lock) with `Closed`.
    closing: Arc<tokio::sync::watch::Sender<bool>>,
}
fits_python_alignment!(BusDurableSubscription);

#[pymethods]
impl BusDurableSubscription {
    #[getter]
    fn pattern(&self) -> &str {
        &self.pattern
    }

    fn recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        recv(py, &self.sub, &self.closing)
    }

    fn ack<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let sub = self.sub.clone();
        future_into_py(py, async move {
            let mut g = sub.lock().await;
            let s = g.as_mut().ok_or_else(|| bus_err(Error::Closed))?;
            s.ack().await.map_err(bus_err)
        })
    }

    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let sub = self.sub.clone();
        self.closing.send_replace(true);
        future_into_py(py, async move {
            let taken = sub.lock().await.take();
            match taken {
                Some(s) => s.close().await.map_err(bus_err),
                None => Ok(()),
            }
        })
    }
}

/// What a core and a durable subscription have in common: receiving the next message.
trait Receive: Send + 'static {
    fn next(&mut self) -> impl Future<Output = pqkit_bus::Result<Message>> + Send + '_;
}

impl Receive for NatsSubscription {
    fn next(&mut self) -> impl Future<Output = pqkit_bus::Result<Message>> + Send + '_ {
        self.recv()
    }
}

impl Receive for DurableSubscription {
    fn next(&mut self) -> impl Future<Output = pqkit_bus::Result<Message>> + Send + '_ {
        self.recv()
    }
}

/// The `recv` of both subscription classes: waits for the lock (one receive at a time), then for the next
/// message; setting `closing` (unsubscribe, close) ends either wait with `Closed`.
fn recv<'py, S: Receive>(
    py: Python<'py>,
    sub: &Arc<tokio::sync::Mutex<Option<S>>>,
    closing: &tokio::sync::watch::Sender<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let (sub, mut closing) = (sub.clone(), closing.subscribe());
    future_into_py(py, async move {
        let closed = || bus_err(Error::Closed);
        let mut g = tokio::select! {
            g = sub.lock() => g,
            _ = closing.wait_for(|c| *c) => return Err(closed()),
        };
        let s = g.as_mut().ok_or_else(closed)?;
        tokio::select! {
            r = s.next() => r.map(wrap).map_err(bus_err),
            _ = closing.wait_for(|c| *c) => Err(closed()),
        }
    })
}

fn closing() -> Arc<tokio::sync::watch::Sender<bool>> {
    Arc::new(tokio::sync::watch::channel(false).0)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Private names: `pqkit.bus` re-exports them as BusError, Unauthorised, ..., Message.
    m.add("_BusError", py.get_type::<BusError>())?;
    m.add("_BusUnauthorised", py.get_type::<Unauthorised>())?;
    m.add("_BusNoResponders", py.get_type::<NoResponders>())?;
    m.add("_BusTimeout", py.get_type::<BusTimeout>())?;
    m.add("_BusClosed", py.get_type::<BusClosed>())?;
    m.add("_BusInvalidSubject", py.get_type::<InvalidSubject>())?;
    m.add_class::<BusIdentity>()?;
    m.add_class::<BusPolicy>()?;
    m.add_class::<BusKeyServer>()?;
    m.add("_BusMessage", py.get_type::<BusMessage>())?;
    m.add_class::<BusAgent>()?;
    m.add_class::<BusSubscription>()?;
    m.add_class::<BusDurableSubscription>()?;
    crate::runtime::register(m)
}
