//! The message bus over NATS: a blocking C API over the Rust agent (`pqkit_bus::nats::NatsAgent`), which
//! implements the protocol (handshake with the key server, sealed envelopes, key fetches, replay windows). This
//! file only checks arguments, runs the agent's futures to completion on the agent's own runtime and moves
//! bytes.
//!
//! Each [`PqkitBusAgent`] owns a tokio runtime with one worker thread (the NATS connection, the agent's inbox
//! and key-server watch tasks run there); a blocking call runs its future on the calling thread with
//! `block_on`. A [`PqkitBusSubscription`] shares that runtime, so either handle may be freed first.

use crate::{
    Fail, FfiResult, PqkitStatus, check_out, emit, guard, guard_free, handle, handle_ref, input, new_handle, null,
    output, write_out,
};
use core::ffi::c_char;
use pqkit_bus::nats::{DurableSubscription, NatsAgent, NatsSubscription};
use pqkit_bus::{AgentId, Error, Identity, Message, Priority};
use std::ffi::CStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;
use zeroize::Zeroizing;

/// Message priorities, the `priority` argument of the publish functions (higher is delivered first).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitBusPriority {
    /// Background traffic.
    Low = 0,
    /// The default.
    Normal = 1,
    /// Ahead of normal traffic.
    High = 2,
    /// Ahead of everything.
    Critical = 3,
}

/// An agent connected to a NATS server (or cluster) and authenticated to a key server. Opaque; made by
/// [`pqkit_bus_agent_connect`] or [`pqkit_bus_agent_connect_file`], released by [`pqkit_bus_agent_free`].
pub struct PqkitBusAgent {
    agent: NatsAgent,
    /// The reply of the last request, kept when the caller's buffer was too small.
    last_reply: Option<Message>,
    rt: Arc<Runtime>,
}

/// A subscription (plain or durable). Opaque; made by [`pqkit_bus_agent_subscribe`] or
/// [`pqkit_bus_agent_subscribe_durable`], released by [`pqkit_bus_subscription_free`].
pub struct PqkitBusSubscription {
    sub: Sub,
    agent: NatsAgent,
    /// A received message not yet handed over (the caller's buffers were too small).
    pending: Option<Message>,
    /// The last message handed over (what [`pqkit_bus_subscription_reply`] answers).
    last: Option<Message>,
    rt: Arc<Runtime>,
}

// The handle holding it is boxed already, and one kind is chosen for its whole life.
#[allow(clippy::large_enum_variant)]
enum Sub {
    Plain(NatsSubscription),
    Durable(DurableSubscription),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        let status = match &e {
            Error::Crypto(c) => crate::status_of(c),
            Error::Unauthorised { .. } => PqkitStatus::Unauthorised,
            Error::Timeout => PqkitStatus::Timeout,
            Error::NoResponders { .. } => PqkitStatus::NoResponders,
            Error::Transport { .. } | Error::Handshake { .. } => PqkitStatus::Transport,
            Error::PayloadTooLarge { .. } => PqkitStatus::MessageTooLong,
            Error::Malformed { .. } | Error::KeyFile { .. } => PqkitStatus::InvalidEncoding,
            Error::AuthFailed => PqkitStatus::AuthenticationFailed,
            Error::Closed => PqkitStatus::BadState,
            // InvalidSubject, InvalidName, and the rejections a receive never returns to the caller.
            _ => PqkitStatus::InvalidParameter,
        };
        Fail::new(status, e.to_string())
    }
}

/// Borrows a NUL-terminated UTF-8 string.
///
/// # Safety
/// `s` must be NULL or point to a NUL-terminated string valid for `'a`.
unsafe fn text<'a>(s: *const c_char, what: &str) -> FfiResult<&'a str> {
    if s.is_null() {
        return Err(null(what));
    }
    // SAFETY: s is non-NULL and NUL-terminated, valid for 'a, by this function's contract.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str().map_err(|_| Fail::new(PqkitStatus::InvalidParameter, format!("pqkit: {what} is not UTF-8")))
}

fn priority(p: u32) -> FfiResult<Priority> {
    u8::try_from(p)
        .ok()
        .and_then(Priority::from_u8)
        .ok_or_else(|| Fail::new(PqkitStatus::InvalidParameter, format!("pqkit: bus priority {p} is not one of 0..=3")))
}

fn millis(ms: u32) -> Duration {
    Duration::from_millis(u64::from(ms))
}

/// Parses an agent key file (the format of `pqkit_bus::identity::key_file`).
fn parse_identity(data: &[u8]) -> FfiResult<Identity> {
    Identity::from_key_file(data).map_err(Fail::from)
}

fn connect(urls: &str, identity: &Identity, key_server: &[u8]) -> FfiResult<PqkitBusAgent> {
    let ks: [u8; 16] = key_server.try_into().map_err(|_| {
        Fail::new(PqkitStatus::InvalidLength, format!("pqkit: a key server id is 16 bytes, got {}", key_server.len()))
    })?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("pqkit-bus")
        .enable_all()
        .build()
        .map_err(|e| Fail::new(PqkitStatus::Transport, format!("pqkit: cannot start the bus runtime: {e}")))?;
    let agent = rt.block_on(NatsAgent::connect(urls, identity, AgentId(ks)))?;
    Ok(PqkitBusAgent { agent, last_reply: None, rt: Arc::new(rt) })
}

/// Connects an agent: `urls` is the NATS server URL (`nats://127.0.0.1:4222`, or `tls://`; a comma-separated
/// list for a cluster), `identity` the bytes of the agent's key file (as written by
/// `pqkit keygen --alg agent`), `key_server` the 16-byte id of the key server to pin (any other responder is
/// refused). Runs the authenticated handshake with the key server, which applies its policy. The handle goes
/// to `*agent`.
///
/// `PQKIT_STATUS_INVALID_ENCODING` if `identity` is not a key file, `PQKIT_STATUS_INVALID_LENGTH` if
/// `key_server_len` is not 16, `PQKIT_STATUS_TRANSPORT` if the server cannot be reached or the handshake fails,
/// `PQKIT_STATUS_UNAUTHORISED` if the policy refuses the agent.
///
/// # Safety
/// `urls` is a NUL-terminated string; buffers as in the conventions; `agent` is valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_connect(
    urls: *const c_char,
    identity: *const u8,
    identity_len: usize,
    key_server: *const u8,
    key_server_len: usize,
    agent: *mut *mut PqkitBusAgent,
) -> PqkitStatus {
    guard(|| {
        check_out(agent, "agent")?;
        // SAFETY: urls is a NUL-terminated string by this function's contract.
        let urls = unsafe { text(urls, "urls")? };
        // SAFETY: identity points to identity_len readable bytes by this function's contract.
        let id = parse_identity(unsafe { input(identity, identity_len, "identity")? })?;
        // SAFETY: key_server points to key_server_len readable bytes by this function's contract.
        let ks = unsafe { input(key_server, key_server_len, "key_server")? };
        let a = connect(urls, &id, ks)?;
        // SAFETY: agent is valid for a pointer write by this function's contract.
        unsafe { new_handle(agent, a) }
    })
}

/// [`pqkit_bus_agent_connect`] with the identity read from the key file at `identity_path`.
///
/// # Safety
/// `urls` and `identity_path` are NUL-terminated strings; `key_server` as in the conventions; `agent` is valid
/// for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_connect_file(
    urls: *const c_char,
    identity_path: *const c_char,
    key_server: *const u8,
    key_server_len: usize,
    agent: *mut *mut PqkitBusAgent,
) -> PqkitStatus {
    guard(|| {
        check_out(agent, "agent")?;
        // SAFETY: urls is a NUL-terminated string by this function's contract.
        let urls = unsafe { text(urls, "urls")? };
        // SAFETY: identity_path is a NUL-terminated string by this function's contract.
        let path = unsafe { text(identity_path, "identity_path")? };
        let data = Zeroizing::new(std::fs::read(path).map_err(|e| {
            Fail::new(PqkitStatus::InvalidParameter, format!("pqkit: cannot read identity file {path}: {e}"))
        })?);
        let id = parse_identity(&data)?;
        // SAFETY: key_server points to key_server_len readable bytes by this function's contract.
        let ks = unsafe { input(key_server, key_server_len, "key_server")? };
        let a = connect(urls, &id, ks)?;
        // SAFETY: agent is valid for a pointer write by this function's contract.
        unsafe { new_handle(agent, a) }
    })
}

/// Writes the agent's 16-byte id to `out` (`out_len` must be 16).
///
/// # Safety
/// `agent` is a live handle; `out` is writable for `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_id(agent: *const PqkitBusAgent, out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle_ref(agent)? };
        if out_len != 16 {
            return Err(Fail::new(
                PqkitStatus::InvalidLength,
                format!("pqkit: an agent id is 16 bytes, got {out_len}"),
            ));
        }
        // SAFETY: out is writable for out_len bytes by this function's contract.
        unsafe { output(out, out_len, "out")? }.copy_from_slice(&a.agent.id().0);
        Ok(())
    })
}

/// Publishes `payload`, sealed, on `subject` with `priority` (a [`PqkitBusPriority`]). Returns once the
/// message is queued; [`pqkit_bus_agent_flush`] waits until the server has it. `PQKIT_STATUS_UNAUTHORISED`
/// if the policy does not let this agent publish on `subject`.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `subject` is a NUL-terminated string; `payload` as in the
/// conventions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_publish(
    agent: *mut PqkitBusAgent,
    subject: *const c_char,
    priority: u32,
    payload: *const u8,
    payload_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        // SAFETY: subject is a NUL-terminated string by this function's contract.
        let subject = unsafe { text(subject, "subject")? };
        // SAFETY: payload points to payload_len readable bytes by this function's contract.
        let payload = unsafe { input(payload, payload_len, "payload")? };
        let p = self::priority(priority)?;
        a.rt.block_on(a.agent.publish(subject, payload, p))?;
        Ok(())
    })
}

/// Waits until the NATS server has everything this agent published so far.
///
/// # Safety
/// `agent` is a live handle used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_flush(agent: *mut PqkitBusAgent) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        a.rt.block_on(a.agent.close())?;
        Ok(())
    })
}

/// Asks the key server whether the policy lets this agent subscribe to all of `pattern`:
/// `PQKIT_STATUS_UNAUTHORISED` if not. ([`pqkit_bus_agent_subscribe`] does not ask: a subscription wider than
/// the grant receives only what the grant covers.)
///
/// # Safety
/// `agent` is a live handle used by no other thread; `pattern` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_check_subscribe(
    agent: *mut PqkitBusAgent,
    pattern: *const c_char,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        // SAFETY: pattern is a NUL-terminated string by this function's contract.
        let pattern = unsafe { text(pattern, "pattern")? };
        a.rt.block_on(a.agent.check_subscribe(pattern))?;
        Ok(())
    })
}

fn subscription(a: &PqkitBusAgent, sub: Sub) -> PqkitBusSubscription {
    PqkitBusSubscription { sub, agent: a.agent.clone(), pending: None, last: None, rt: a.rt.clone() }
}

/// Subscribes to `pattern` (NATS wildcards `*` and `>`). Returns once the server has registered it, so a
/// message published after this returns is delivered. The handle goes to `*sub`.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `pattern` is a NUL-terminated string; `sub` is valid for
/// a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_subscribe(
    agent: *mut PqkitBusAgent,
    pattern: *const c_char,
    sub: *mut *mut PqkitBusSubscription,
) -> PqkitStatus {
    guard(|| {
        check_out(sub, "sub")?;
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        // SAFETY: pattern is a NUL-terminated string by this function's contract.
        let pattern = unsafe { text(pattern, "pattern")? };
        let s = a.rt.block_on(a.agent.subscribe(pattern))?;
        // SAFETY: sub is valid for a pointer write by this function's contract.
        unsafe { new_handle(sub, subscription(a, Sub::Plain(s))) }
    })
}

/// Waits up to `timeout_ms` for the next message and writes its sender id (16 bytes, `sender_len` must be
/// 16), its subject (not NUL-terminated) and its payload to the caller's buffers, their lengths to
/// `*subject_len` and `*payload_len`, and its priority to `*priority`.
///
/// If `subject_cap` or `payload_cap` is too small: `PQKIT_STATUS_BUFFER_TOO_SMALL`, both sizes needed are
/// written to `*subject_len` and `*payload_len`, nothing else is written, and the message stays in the
/// subscription: the next call returns it. `PQKIT_STATUS_TIMEOUT` if none arrived in time. Messages that do
/// not authenticate, replays and messages the policy does not grant are dropped (never returned).
///
/// # Safety
/// `sub` is a live handle used by no other thread; each buffer is writable for its length or capacity;
/// `subject_len`, `payload_len` and `priority` are valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_subscription_next(
    sub: *mut PqkitBusSubscription,
    timeout_ms: u32,
    sender: *mut u8,
    sender_len: usize,
    subject: *mut c_char,
    subject_cap: usize,
    subject_len: *mut usize,
    payload: *mut u8,
    payload_cap: usize,
    payload_len: *mut usize,
    priority: *mut u32,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: sub is a live handle by this function's contract.
        let s = unsafe { handle(sub)? };
        check_out(subject_len, "subject_len")?;
        check_out(payload_len, "payload_len")?;
        check_out(priority, "priority")?;
        if sender_len != 16 {
            return Err(Fail::new(
                PqkitStatus::InvalidLength,
                format!("pqkit: a sender id is 16 bytes, got {sender_len}"),
            ));
        }
        // SAFETY: sender is writable for sender_len bytes by this function's contract.
        let sender = unsafe { output(sender, sender_len, "sender")? };
        if s.pending.is_none() {
            let t = millis(timeout_ms);
            // Inside the async block: the plain receive makes its timer when called, which needs the runtime.
            let m = s.rt.block_on(async {
                match &mut s.sub {
                    Sub::Plain(p) => p.recv_timeout(t).await,
                    Sub::Durable(d) => d.recv_timeout(t).await,
                }
            })?;
            s.pending = Some(m);
        }
        let m = s.pending.as_ref().ok_or_else(|| Fail::new(PqkitStatus::InternalError, "pqkit: no message"))?;
        let (subj, body) = (m.subject().as_bytes(), m.payload());
        if subject_cap < subj.len() || payload_cap < body.len() {
            // SAFETY: subject_len and payload_len are valid for writes by this function's contract.
            unsafe {
                write_out(subject_len, subj.len(), "subject_len")?;
                write_out(payload_len, body.len(), "payload_len")?;
            }
            return Err(Fail::new(
                PqkitStatus::BufferTooSmall,
                format!(
                    "pqkit: the message needs {} subject and {} payload bytes, capacities are {subject_cap} and {payload_cap}",
                    subj.len(),
                    body.len()
                ),
            ));
        }
        // SAFETY: subject and payload are writable for their capacities (checked to be large enough), and the
        // length and priority pointers valid for writes, by this function's contract.
        unsafe {
            emit(subj, subject.cast(), subject_cap, subject_len, "subject")?;
            emit(body, payload, payload_cap, payload_len, "payload")?;
            write_out(priority, m.priority() as u32, "priority")?;
        }
        sender.copy_from_slice(&m.sender().0);
        s.last = s.pending.take();
        Ok(())
    })
}

/// Answers the last message [`pqkit_bus_subscription_next`] returned (a request): publishes `payload`, sealed,
/// to its reply subject. `PQKIT_STATUS_BAD_STATE` if no message was returned yet or it has no reply subject.
///
/// # Safety
/// `sub` is a live handle used by no other thread; `payload` as in the conventions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_subscription_reply(
    sub: *mut PqkitBusSubscription,
    payload: *const u8,
    payload_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: sub is a live handle by this function's contract.
        let s = unsafe { handle(sub)? };
        // SAFETY: payload points to payload_len readable bytes by this function's contract.
        let payload = unsafe { input(payload, payload_len, "payload")? };
        let m = s.last.as_ref().filter(|m| m.reply_to().is_some()).ok_or_else(|| {
            Fail::new(PqkitStatus::BadState, "pqkit: the last message returned is not a request (no reply subject)")
        })?;
        s.rt.block_on(async {
            s.agent.reply(m, payload).await?;
            s.agent.flush().await
        })?;
        Ok(())
    })
}

/// Frees a subscription (unsubscribing); `NULL` does nothing.
///
/// # Safety
/// `sub` is NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_subscription_free(sub: *mut PqkitBusSubscription) {
    guard_free(|| {
        if sub.is_null() {
            return;
        }
        // SAFETY: sub came from Box::into_raw in new_handle and is freed once, by this function's contract.
        let s = unsafe { Box::from_raw(sub) };
        let rt = s.rt.clone();
        let _ctx = rt.enter();
        drop(s);
    })
}

/// Sends a request: publishes `payload`, sealed, on `subject` with a reply subject of this agent and waits up
/// to `timeout_ms` for the first reply, whose payload goes to `reply` (length to `*reply_len`).
/// `PQKIT_STATUS_NO_RESPONDERS` if nobody subscribes to `subject`, `PQKIT_STATUS_TIMEOUT` if nobody answered
/// in time. If `reply_cap` is too small: `PQKIT_STATUS_BUFFER_TOO_SMALL` with the size needed in `*reply_len`,
/// and the reply is kept: [`pqkit_bus_agent_last_reply`] returns it.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `subject` is a NUL-terminated string; buffers as in the
/// conventions; `reply_len` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_request(
    agent: *mut PqkitBusAgent,
    subject: *const c_char,
    payload: *const u8,
    payload_len: usize,
    timeout_ms: u32,
    reply: *mut u8,
    reply_cap: usize,
    reply_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        check_out(reply_len, "reply_len")?;
        // SAFETY: subject is a NUL-terminated string by this function's contract.
        let subject = unsafe { text(subject, "subject")? };
        // SAFETY: payload points to payload_len readable bytes by this function's contract.
        let payload = unsafe { input(payload, payload_len, "payload")? };
        a.last_reply = None;
        let m = a.rt.block_on(a.agent.request(subject, payload, millis(timeout_ms)))?;
        let m = a.last_reply.insert(m);
        // SAFETY: reply is writable for reply_cap bytes and reply_len valid for a write by this function's
        // contract.
        unsafe { emit(m.payload(), reply, reply_cap, reply_len, "reply") }
    })
}

/// Writes the reply of the last [`pqkit_bus_agent_request`] (when that call's buffer was too small) to
/// `reply`, with the usual length query. `PQKIT_STATUS_BAD_STATE` if there is none.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `reply` is writable for `reply_cap` bytes; `reply_len`
/// is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_last_reply(
    agent: *const PqkitBusAgent,
    reply: *mut u8,
    reply_cap: usize,
    reply_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle_ref(agent)? };
        let m =
            a.last_reply.as_ref().ok_or_else(|| Fail::new(PqkitStatus::BadState, "pqkit: no request was answered"))?;
        // SAFETY: reply is writable for reply_cap bytes and reply_len valid for a write by this function's
        // contract.
        unsafe { emit(m.payload(), reply, reply_cap, reply_len, "reply") }
    })
}

/// Declares the durable topic (a JetStream stream) `stream` capturing the `n_subjects` patterns in
/// `subjects`. Idempotent. Messages on those subjects are stored sealed.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `stream` is a NUL-terminated string; `subjects` points to
/// `n_subjects` NUL-terminated strings (NULL only if `n_subjects` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_declare_durable(
    agent: *mut PqkitBusAgent,
    stream: *const c_char,
    subjects: *const *const c_char,
    n_subjects: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        // SAFETY: stream is a NUL-terminated string by this function's contract.
        let stream = unsafe { text(stream, "stream")? };
        if n_subjects == 0 {
            return Err(Fail::new(PqkitStatus::InvalidParameter, "pqkit: a durable topic needs at least one subject"));
        }
        if subjects.is_null() {
            return Err(null("subjects"));
        }
        if n_subjects > isize::MAX as usize / core::mem::size_of::<*const c_char>() {
            return Err(Fail::new(PqkitStatus::InvalidLength, format!("pqkit: {n_subjects} subjects is too many")));
        }
        // SAFETY: subjects points to n_subjects pointers by this function's contract.
        let ptrs = unsafe { core::slice::from_raw_parts(subjects, n_subjects) };
        // SAFETY: each pointer is a NUL-terminated string by this function's contract.
        let list = ptrs.iter().map(|&p| unsafe { text(p, "subject") }).collect::<FfiResult<Vec<&str>>>()?;
        a.rt.block_on(a.agent.declare_durable(stream, &list))?;
        Ok(())
    })
}

/// Publishes on a durable subject and waits for the server's acknowledgement (retrying the same envelope on a
/// lost connection, stored once); the stream sequence goes to `*sequence`.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `subject` is a NUL-terminated string; `payload` as in the
/// conventions; `sequence` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_publish_durable(
    agent: *mut PqkitBusAgent,
    subject: *const c_char,
    priority: u32,
    payload: *const u8,
    payload_len: usize,
    sequence: *mut u64,
) -> PqkitStatus {
    guard(|| {
        check_out(sequence, "sequence")?;
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        // SAFETY: subject is a NUL-terminated string by this function's contract.
        let subject = unsafe { text(subject, "subject")? };
        // SAFETY: payload points to payload_len readable bytes by this function's contract.
        let payload = unsafe { input(payload, payload_len, "payload")? };
        let p = self::priority(priority)?;
        let n = a.rt.block_on(a.agent.publish_durable(subject, payload, p))?;
        // SAFETY: sequence is valid for a write by this function's contract.
        unsafe { write_out(sequence, n, "sequence") }
    })
}

/// Subscribes to `pattern` on the durable topic `stream` through the durable consumer `consumer`: a
/// subscriber that was away gets what it missed, in order, and resumes after the last message it received.
/// Read it with [`pqkit_bus_subscription_next`]; the handle goes to `*sub`.
///
/// # Safety
/// `agent` is a live handle used by no other thread; `stream`, `consumer` and `pattern` are NUL-terminated
/// strings; `sub` is valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_subscribe_durable(
    agent: *mut PqkitBusAgent,
    stream: *const c_char,
    consumer: *const c_char,
    pattern: *const c_char,
    sub: *mut *mut PqkitBusSubscription,
) -> PqkitStatus {
    guard(|| {
        check_out(sub, "sub")?;
        // SAFETY: agent is a live handle by this function's contract.
        let a = unsafe { handle(agent)? };
        // SAFETY: the three are NUL-terminated strings by this function's contract.
        let (stream, consumer, pattern) =
            unsafe { (text(stream, "stream")?, text(consumer, "consumer")?, text(pattern, "pattern")?) };
        let s = a.rt.block_on(a.agent.subscribe_durable(stream, consumer, pattern))?;
        // SAFETY: sub is valid for a pointer write by this function's contract.
        unsafe { new_handle(sub, subscription(a, Sub::Durable(s))) }
    })
}

/// Waits (up to 2 seconds) until the server has what the agent published, then frees it; `NULL` does
/// nothing. Subscriptions made from it stay usable until they are freed.
///
/// # Safety
/// `agent` is NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_bus_agent_free(agent: *mut PqkitBusAgent) {
    guard_free(|| {
        if agent.is_null() {
            return;
        }
        // SAFETY: agent came from Box::into_raw in new_handle and is freed once, by this function's contract.
        let a = unsafe { Box::from_raw(agent) };
        let rt = a.rt.clone();
        // The timer is made inside the async block: it needs the runtime.
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(2), a.agent.close()).await });
        let _ctx = rt.enter();
        drop(a);
    })
}
