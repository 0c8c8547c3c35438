//! The bus from C: an agent driven through the C ABI (`pqkit_bus_*`) and a Rust `NatsAgent` exchange sealed
//! messages both ways over a real `nats-server` (started on a loopback port by the bus tests' `nats_server`
//! module), under a key server's policy: publish and subscribe, request and reply in both directions, a durable
//! topic, the short-buffer and timeout statuses, and subjects the policy denies refused.

#[path = "../../pqkit-bus/tests/common/nats_server.rs"]
mod nats_server;

use nats_server::NatsServer;
use pqkit_bus::nats::{KeyServer, KeyServerHandle, NatsAgent};
use pqkit_bus::{Identity, Policy, Priority};
use pqkit_ffi::*;
use std::ffi::{CStr, CString};
use std::ptr;
use std::time::Duration;

const T: Duration = Duration::from_secs(5);
const T_MS: u32 = 5000;
const C_SEED: [u8; 32] = [7; 32];

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn last_error() -> String {
    let p = pqkit_last_error();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: pqkit_last_error returns NULL or a NUL-terminated string valid until the next failing call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn key_file(name: &str, seed: &[u8; 32]) -> Vec<u8> {
    format!("pqkit-bus agent v1\nname {name}\nseed {}\n", hex::encode(seed)).into_bytes()
}

fn connect(url: &str, identity: &[u8], ks: &[u8]) -> (PqkitStatus, *mut PqkitBusAgent) {
    let mut a = ptr::null_mut();
    let u = c(url);
    // SAFETY: valid NUL-terminated string, buffers with their lengths, a valid out-pointer.
    let st = unsafe {
        pqkit_bus_agent_connect(u.as_ptr(), identity.as_ptr(), identity.len(), ks.as_ptr(), ks.len(), &mut a)
    };
    (st, a)
}

fn publish(a: *mut PqkitBusAgent, subject: &str, prio: u32, payload: &[u8]) -> PqkitStatus {
    let s = c(subject);
    // SAFETY: a live handle, a NUL-terminated string, a buffer with its length.
    unsafe { pqkit_bus_agent_publish(a, s.as_ptr(), prio, payload.as_ptr(), payload.len()) }
}

fn subscribe(a: *mut PqkitBusAgent, pattern: &str) -> *mut PqkitBusSubscription {
    let p = c(pattern);
    let mut s = ptr::null_mut();
    // SAFETY: a live handle, a NUL-terminated string, a valid out-pointer.
    let st = unsafe { pqkit_bus_agent_subscribe(a, p.as_ptr(), &mut s) };
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    s
}

struct Got {
    sender: [u8; 16],
    subject: String,
    payload: Vec<u8>,
    priority: u32,
}

fn next_with(
    s: *mut PqkitBusSubscription,
    timeout_ms: u32,
    subject_cap: usize,
    payload_cap: usize,
) -> (PqkitStatus, Got, usize, usize) {
    let mut sender = [0u8; 16];
    let mut subject = vec![0u8; subject_cap];
    let mut payload = vec![0u8; payload_cap];
    let (mut sl, mut pl, mut prio) = (0usize, 0usize, 99u32);
    // SAFETY: a live handle; every buffer is writable for the capacity given; valid out-pointers.
    let st = unsafe {
        pqkit_bus_subscription_next(
            s,
            timeout_ms,
            sender.as_mut_ptr(),
            16,
            subject.as_mut_ptr().cast(),
            subject_cap,
            &mut sl,
            payload.as_mut_ptr(),
            payload_cap,
            &mut pl,
            &mut prio,
        )
    };
    let got = Got {
        sender,
        subject: String::from_utf8_lossy(&subject[..sl.min(subject_cap)]).into_owned(),
        payload: payload[..pl.min(payload_cap)].to_vec(),
        priority: prio,
    };
    (st, got, sl, pl)
}

fn next(s: *mut PqkitBusSubscription) -> Got {
    let (st, got, _, _) = next_with(s, T_MS, 256, 4096);
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    got
}

fn agent_id(a: *mut PqkitBusAgent) -> [u8; 16] {
    let mut id = [0u8; 16];
    // SAFETY: a live handle, a 16-byte output.
    assert_eq!(unsafe { pqkit_bus_agent_id(a, id.as_mut_ptr(), 16) }, PqkitStatus::Ok);
    id
}

struct World {
    server: NatsServer,
    rt: tokio::runtime::Runtime,
    ks: KeyServerHandle,
    rust: NatsAgent,
}

fn world() -> World {
    let server = NatsServer::start();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let c_id = Identity::from_seed("c-agent", &C_SEED).unwrap().id();
    let r_ident = Identity::from_seed("rust-agent", &[8; 32]).unwrap();
    let policy = Policy::new()
        .allow(c_id, &["to.rust.>", "svc.rust", "durable.>"], &["to.c.>", "svc.c", "durable.>"])
        .unwrap()
        .allow(r_ident.id(), &["to.c.>", "svc.c", "durable.>", "private.>"], &["to.rust.>", "svc.rust", "durable.>"])
        .unwrap();
    let url = server.url();
    let (ks, rust) = rt.block_on(async {
        let ks = KeyServer::new(Identity::from_seed("keys", &[9; 32]).unwrap(), policy).serve(&url).await.unwrap();
        let rust = NatsAgent::connect(&url, &r_ident, ks.id()).await.unwrap();
        (ks, rust)
    });
    World { server, rt, ks, rust }
}

#[test]
fn a_c_agent_and_a_rust_agent_exchange_sealed_messages_both_ways() {
    let w = world();
    let (st, a) = connect(&w.server.url(), &key_file("c-agent", &C_SEED), &w.ks.id().0);
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let cid = agent_id(a);
    assert_eq!(cid, Identity::from_seed("c-agent", &C_SEED).unwrap().id().0);

    // C to Rust.
    let mut rsub = w.rt.block_on(w.rust.subscribe("to.rust.>")).unwrap();
    assert_eq!(publish(a, "to.rust.hello", PqkitBusPriority::High as u32, b"from C"), PqkitStatus::Ok);
    let m = w.rt.block_on(async { rsub.recv_timeout(T).await }).unwrap();
    assert_eq!((m.payload(), m.subject(), m.priority()), (&b"from C"[..], "to.rust.hello", Priority::High));
    assert_eq!(m.sender().0, cid, "the Rust agent sees the C agent's authenticated id");

    // Rust to C.
    let csub = subscribe(a, "to.c.>");
    w.rt.block_on(w.rust.publish("to.c.one", b"from Rust", Priority::Critical)).unwrap();
    let g = next(csub);
    assert_eq!((g.payload.as_slice(), g.subject.as_str()), (&b"from Rust"[..], "to.c.one"));
    assert_eq!(g.sender, w.rust.id().0);
    assert_eq!(g.priority, PqkitBusPriority::Critical as u32);

    // A short buffer: the sizes needed, nothing consumed; the same message on the next call.
    w.rt.block_on(w.rust.publish("to.c.two", b"a longer payload", Priority::Low)).unwrap();
    let (st, _, sl, pl) = next_with(csub, T_MS, 256, 4);
    assert_eq!(st, PqkitStatus::BufferTooSmall, "{}", last_error());
    assert_eq!((sl, pl), ("to.c.two".len(), b"a longer payload".len()));
    let (st, _, sl, pl) = next_with(csub, T_MS, 3, 4096);
    assert_eq!(st, PqkitStatus::BufferTooSmall);
    assert_eq!((sl, pl), (8, 16));
    let g = next(csub);
    assert_eq!((g.payload.as_slice(), g.subject.as_str(), g.priority), (&b"a longer payload"[..], "to.c.two", 0));

    // Nothing more: a timeout.
    let (st, _, _, _) = next_with(csub, 200, 256, 4096);
    assert_eq!(st, PqkitStatus::Timeout);

    // C requests, Rust answers.
    let mut svc = w.rt.block_on(w.rust.subscribe("svc.rust")).unwrap();
    let responder = {
        let rust = w.rust.clone();
        w.rt.spawn(async move {
            let m = svc.recv_timeout(T).await.unwrap();
            let mut answer = b"echo: ".to_vec();
            answer.extend_from_slice(m.payload());
            rust.reply(&m, &answer).await.unwrap();
            m.sender()
        })
    };
    let subj = c("svc.rust");
    let mut reply = [0u8; 4];
    let mut rl = 0usize;
    // SAFETY: a live handle, a NUL-terminated string, buffers with their lengths, a valid out-pointer.
    let st =
        unsafe { pqkit_bus_agent_request(a, subj.as_ptr(), b"ping".as_ptr(), 4, T_MS, reply.as_mut_ptr(), 4, &mut rl) };
    assert_eq!(st, PqkitStatus::BufferTooSmall, "{}", last_error());
    assert_eq!(rl, 10);
    let mut reply = [0u8; 10];
    // SAFETY: a live handle, a 10-byte buffer, a valid out-pointer.
    let st = unsafe { pqkit_bus_agent_last_reply(a, reply.as_mut_ptr(), 10, &mut rl) };
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    assert_eq!(&reply[..rl], b"echo: ping");
    assert_eq!(w.rt.block_on(responder).unwrap().0, cid);

    // Rust requests, C answers.
    let csvc = subscribe(a, "svc.c");
    let req = {
        let rust = w.rust.clone();
        w.rt.spawn(async move { rust.request("svc.c", b"question", T).await })
    };
    let g = next(csvc);
    assert_eq!((g.payload.as_slice(), g.sender), (&b"question"[..], w.rust.id().0));
    // SAFETY: a live handle, a buffer with its length.
    let st = unsafe { pqkit_bus_subscription_reply(csvc, b"answer".as_ptr(), 6) };
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let r = w.rt.block_on(req).unwrap().unwrap();
    assert_eq!((r.payload(), r.sender().0), (&b"answer"[..], cid));
    // The message before was not a request: no reply subject.
    assert_eq!(publish(a, "to.rust.x", 1, b"x"), PqkitStatus::Ok);
    w.rt.block_on(w.rust.publish("to.c.plain", b"p", Priority::Normal)).unwrap();
    let _ = next(csub);
    // SAFETY: a live handle, a buffer with its length.
    assert_eq!(unsafe { pqkit_bus_subscription_reply(csub, b"no".as_ptr(), 2) }, PqkitStatus::BadState);

    // The subscription outlives the agent handle.
    // SAFETY: live handles, each freed once.
    unsafe {
        pqkit_bus_agent_free(a);
        pqkit_bus_subscription_free(csvc);
    }
    w.rt.block_on(w.rust.publish("to.c.late", b"late", Priority::Normal)).unwrap();
    assert_eq!(next(csub).payload, b"late");
    // SAFETY: a live handle, freed once.
    unsafe { pqkit_bus_subscription_free(csub) };
}

#[test]
fn subjects_the_policy_denies_are_refused() {
    let w = world();
    let (st, a) = connect(&w.server.url(), &key_file("c-agent", &C_SEED), &w.ks.id().0);
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let mut tap = w.rt.block_on(w.rust.subscribe("to.c.>")).unwrap();
    assert_eq!(publish(a, "to.c.spoof", 1, b"not allowed"), PqkitStatus::Unauthorised);
    assert!(last_error().contains("to.c.spoof"), "{}", last_error());
    assert!(matches!(
        w.rt.block_on(async { tap.recv_timeout(Duration::from_millis(300)).await }),
        Err(pqkit_bus::Error::Timeout)
    ));
    let p = c("to.rust.>");
    // SAFETY: a live handle, a NUL-terminated string.
    assert_eq!(unsafe { pqkit_bus_agent_check_subscribe(a, p.as_ptr()) }, PqkitStatus::Unauthorised);
    let p = c("to.c.>");
    // SAFETY: as above.
    assert_eq!(unsafe { pqkit_bus_agent_check_subscribe(a, p.as_ptr()) }, PqkitStatus::Ok, "{}", last_error());
    // A subscription wider than the grant receives nothing the grant does not cover.
    let wide = subscribe(a, "private.>");
    w.rt.block_on(w.rust.publish("private.peek", b"private", Priority::Normal)).unwrap();
    let (st, _, _, _) = next_with(wide, 500, 256, 4096);
    assert_eq!(st, PqkitStatus::Timeout);
    // An agent the policy does not know cannot connect.
    let (st, b) = connect(&w.server.url(), &key_file("stranger", &[1; 32]), &w.ks.id().0);
    assert_ne!(st, PqkitStatus::Ok);
    assert!(b.is_null());
    // SAFETY: live handles, each freed once.
    unsafe {
        pqkit_bus_subscription_free(wide);
        pqkit_bus_agent_free(a);
    }
}

#[test]
fn a_durable_topic_from_c() {
    let w = world();
    let (st, a) = connect(&w.server.url(), &key_file("c-agent", &C_SEED), &w.ks.id().0);
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let (stream, subj) = (c("DURABLE"), c("durable.>"));
    let subjects = [subj.as_ptr()];
    // SAFETY: a live handle, NUL-terminated strings, an array of one.
    let st = unsafe { pqkit_bus_agent_declare_durable(a, stream.as_ptr(), subjects.as_ptr(), 1) };
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    // Stored before anyone subscribes: one from C, one from Rust.
    let s1 = c("durable.c");
    let mut seq = 0u64;
    // SAFETY: a live handle, a NUL-terminated string, a buffer with its length, a valid out-pointer.
    let st = unsafe { pqkit_bus_agent_publish_durable(a, s1.as_ptr(), 2, b"kept".as_ptr(), 4, &mut seq) };
    assert_eq!((st, seq), (PqkitStatus::Ok, 1), "{}", last_error());
    w.rt.block_on(w.rust.publish_durable("durable.rust", b"kept too", Priority::Normal)).unwrap();
    // The Rust agent reads the C agent's message from the stream.
    let mut rd = w.rt.block_on(w.rust.subscribe_durable("DURABLE", "rust-reader", "durable.c")).unwrap();
    let m = w.rt.block_on(async { rd.recv_timeout(T).await }).unwrap();
    assert_eq!((m.payload(), m.sender().0, m.priority()), (&b"kept"[..], agent_id(a), Priority::High));
    // The C agent reads both. With sender authentication each is handed over when its sender's checkpoint
    // (stored in the stream after it) verifies, so messages of two senders come in the order of their checkpoints.
    let (consumer, pattern) = (c("c-reader"), c("durable.>"));
    let mut d = ptr::null_mut();
    // SAFETY: a live handle, NUL-terminated strings, a valid out-pointer.
    let st =
        unsafe { pqkit_bus_agent_subscribe_durable(a, stream.as_ptr(), consumer.as_ptr(), pattern.as_ptr(), &mut d) };
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let mut got = [next(d), next(d)].map(|g| (g.payload, g.subject, g.sender));
    got.sort();
    assert_eq!(
        got,
        [
            (b"kept".to_vec(), "durable.c".to_string(), agent_id(a)),
            (b"kept too".to_vec(), "durable.rust".to_string(), w.rust.id().0),
        ]
    );
    // SAFETY: live handles, each freed once.
    unsafe {
        pqkit_bus_subscription_free(d);
        pqkit_bus_agent_free(a);
    }
}

#[test]
fn bad_arguments_are_statuses() {
    let s = NatsServer::start();
    let ks = [0u8; 16];
    let (st, a) = connect(&s.url(), b"not a key file", &ks);
    assert_eq!(st, PqkitStatus::InvalidEncoding);
    assert!(a.is_null());
    assert!(last_error().contains("first line"), "{}", last_error());
    let mut bad_seed = key_file("x", &[1; 32]);
    bad_seed.truncate(bad_seed.len() - 3);
    assert_eq!(connect(&s.url(), &bad_seed, &ks).0, PqkitStatus::InvalidEncoding);
    let good = key_file("x", &[1; 32]);
    assert_eq!(connect(&s.url(), &good, &ks[..15]).0, PqkitStatus::InvalidLength);
    // Nothing listens on the port of a stopped server; a key server nobody runs does not answer.
    let (st, _) = connect("nats://127.0.0.1:1", &good, &ks);
    assert_eq!(st, PqkitStatus::Transport, "{}", last_error());
    let (st, _) = connect(&s.url(), &good, &ks);
    assert_eq!(st, PqkitStatus::Transport, "{}", last_error());
    let mut out = ptr::null_mut();
    // SAFETY: NULL arguments are checked, never dereferenced.
    unsafe {
        assert_eq!(
            pqkit_bus_agent_connect(ptr::null(), good.as_ptr(), good.len(), ks.as_ptr(), 16, &mut out),
            PqkitStatus::NullPointer
        );
        assert_eq!(
            pqkit_bus_agent_publish(ptr::null_mut(), c("a").as_ptr(), 1, ptr::null(), 0),
            PqkitStatus::NullPointer
        );
        pqkit_bus_agent_free(ptr::null_mut());
        pqkit_bus_subscription_free(ptr::null_mut());
    }
    // SAFETY: pqkit_status_string returns a static NUL-terminated string.
    let name = unsafe { CStr::from_ptr(pqkit_status_string(PqkitStatus::Transport as i32)) };
    assert_eq!(name.to_str().unwrap(), "NATS transport failure");
}

/// The directory holding libpqkit_ffi.a as built for this test run (`deps/` next to the test binary first, so
/// a stale copy from an earlier `cargo build` is never the one tested).
fn static_lib() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let profile = deps.parent().unwrap().to_path_buf();
    [deps, profile].into_iter().map(|d| d.join("libpqkit_ffi.a")).find(|p| p.exists()).expect("libpqkit_ffi.a built")
}

/// The C example of docs/c.md (the block calling `pqkit_bus_*`), given a `main`, compiled as strict C99 against
/// the static library and run as a separate process: it answers a Rust agent's request.
#[test]
fn the_docs_c_example_answers_a_rust_agent() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/c.md")).unwrap();
    let example = doc
        .split("```c\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .find(|b| b.contains("answer_one_request("))
        .expect("docs/c.md has the bus example");
    let main = r#"
int main(int argc, char **argv) {
  uint8_t ks[16];
  unsigned v;
  int i;
  if (argc != 5 || strlen(argv[3]) != 32) return 2;
  for (i = 0; i < 16; i++) {
    if (sscanf(argv[3] + 2 * i, "%2x", &v) != 1) return 2;
    ks[i] = (uint8_t)v;
  }
  return answer_one_request(argv[1], argv[2], ks, argv[4]);
}
"#;
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("answer.c");
    std::fs::write(&src, format!("{example}{main}")).unwrap();
    let exe = work.path().join("answer");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = std::process::Command::new(&cc)
        .args(["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc} ({e}): apt-get install gcc"));
    assert!(out.status.success(), "compiling the example: {}", String::from_utf8_lossy(&out.stderr));

    let w = world();
    let key = work.path().join("c-agent.key");
    std::fs::write(&key, key_file("c-agent", &C_SEED)).unwrap();
    let child = std::process::Command::new(&exe)
        .arg(w.server.url())
        .arg(&key)
        .arg(w.ks.id().to_hex())
        .arg("svc.c")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ask until the C agent has subscribed (no responders before that).
    let reply = w.rt.block_on(async {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            match w.rust.request("svc.c", b"from Rust", T).await {
                Err(pqkit_bus::Error::NoResponders { .. }) if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                r => break r.unwrap(),
            }
        }
    });
    assert_eq!(reply.payload(), b"hello, from Rust");
    assert_eq!(reply.sender().0, Identity::from_seed("c-agent", &C_SEED).unwrap().id().0);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the example failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// A subscription handle moved to another thread.
struct SendSub(*mut PqkitBusSubscription);
// SAFETY: the handle is used by one thread at a time (the receiving thread, then the test thread after join).
unsafe impl Send for SendSub {}

/// One thread blocks in `next` on a subscription while another publishes with the agent handle: the two handles
/// share the agent's runtime and connection, and neither call waits for the other.
#[test]
fn a_thread_waits_in_next_while_another_publishes() {
    let w = world();
    let (st, a) = connect(&w.server.url(), &key_file("c-agent", &C_SEED), &w.ks.id().0);
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let sub = SendSub(subscribe(a, "to.c.>"));
    let receiver = std::thread::spawn(move || {
        let sub = sub;
        let g = next(sub.0);
        (sub, g.payload)
    });
    // The Rust agent answers every ping with a pong, which the waiting thread receives.
    let mut pings = w.rt.block_on(w.rust.subscribe("to.rust.ping")).unwrap();
    let rust = w.rust.clone();
    let echo = w.rt.spawn(async move {
        let m = pings.recv_timeout(T).await.unwrap();
        rust.publish("to.c.pong", m.payload(), Priority::Normal).await.unwrap();
    });
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(publish(a, "to.rust.ping", 1, b"ping 1"), PqkitStatus::Ok, "{}", last_error());
    w.rt.block_on(echo).unwrap();
    let (sub, got) = receiver.join().unwrap();
    assert_eq!(got, b"ping 1");
    // SAFETY: live handles, each freed once.
    unsafe {
        pqkit_bus_subscription_free(sub.0);
        pqkit_bus_agent_free(a);
    }
}

/// Panics raised in the library's bus code, counted by a panic hook (the `*_free` functions swallow them, as
/// there is no status to return).
fn library_panics() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.location().is_some_and(|l| l.file().ends_with("src/bus.rs")) {
                COUNT.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
    COUNT.load(Ordering::SeqCst)
}

/// Freeing an agent right after publishing loses nothing: the free waits until the server has what was queued.
#[test]
fn freeing_an_agent_delivers_what_it_queued() {
    let w = world();
    let (st, a) = connect(&w.server.url(), &key_file("c-agent", &C_SEED), &w.ks.id().0);
    assert_eq!(st, PqkitStatus::Ok, "{}", last_error());
    let mut sub = w.rt.block_on(w.rust.subscribe("to.rust.>")).unwrap();
    let csub = subscribe(a, "to.c.>");
    let payload = vec![0x5a; 16 * 1024];
    for _ in 0..200 {
        assert_eq!(publish(a, "to.rust.bulk", 1, &payload), PqkitStatus::Ok, "{}", last_error());
    }
    let before = library_panics();
    // SAFETY: a live handle, freed once.
    unsafe { pqkit_bus_agent_free(a) };
    assert_eq!(library_panics(), before, "pqkit_bus_agent_free panicked (caught at the boundary)");
    // SAFETY: a live handle, freed once.
    unsafe { pqkit_bus_subscription_free(csub) };
    assert_eq!(library_panics(), before, "pqkit_bus_subscription_free panicked (caught at the boundary)");
    for i in 0..200 {
        let m = w.rt.block_on(async { sub.recv_timeout(T).await }).unwrap_or_else(|e| panic!("message {i}: {e}"));
        assert_eq!(m.payload().len(), payload.len());
    }
}
