//! `pqkit agent` and `pqkit bus` against a real nats-server: two agents talk sealed through the
//! command line, with a key server in a third process.
#[path = "../../pqkit-bus/tests/common/nats_server.rs"]
mod nats_server;

use nats_server::NatsServer;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn pqkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pqkit"))
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn keygen(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, String) {
    let path = dir.join(format!("{name}.key"));
    let out = pqkit().args(["agent", "keygen", "--name", name, "-o"]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8(out.stdout).unwrap();
    let id = line.trim().strip_prefix("id ").unwrap().to_string();
    assert_eq!(id.len(), 32);
    // `agent id` reads the same id back.
    let out = pqkit().args(["agent", "id"]).arg(&path).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), id);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    (path, id)
}

/// Reads lines from `r` until one satisfies `f` (10 s).
fn wait_line(r: &mut impl BufRead, f: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut line = String::new();
    while Instant::now() < deadline {
        line.clear();
        if r.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if f(line.trim()) {
            return line.trim().to_string();
        }
    }
    panic!("expected line not seen (last: {line:?})");
}

#[test]
fn two_agents_talk_sealed_through_the_cli() {
    let s = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (ks_key, ks_id) = keygen(dir.path(), "keys");
    let (alice, alice_id) = keygen(dir.path(), "alice");
    let (bob, bob_id) = keygen(dir.path(), "bob");
    let (eve, _) = keygen(dir.path(), "eve");
    // Policy: alice publishes chat.>, bob subscribes chat.>, eve is unknown.
    let policy = dir.path().join("policy.txt");
    std::fs::write(&policy, format!("# who may do what\n{alice_id} pub chat.> sub -\n{bob_id} pub - sub chat.>\n"))
        .unwrap();
    let mut ks = Killed(
        pqkit()
            .args(["bus", "keyserver", "--nats", &s.url(), "--identity"])
            .arg(&ks_key)
            .arg("--policy")
            .arg(&policy)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut ks_out = BufReader::new(ks.0.stdout.take().unwrap());
    assert_eq!(wait_line(&mut ks_out, |l| l.starts_with("keyserver ")), format!("keyserver {ks_id}"));
    wait_line(&mut ks_out, |l| l == "ready");

    let mut sub = Killed(
        pqkit()
            .args(["bus", "sub", "--nats", &s.url(), "--key-server", &ks_id, "--count", "2", "--identity"])
            .arg(&bob)
            .arg("chat.>")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut sub_err = BufReader::new(sub.0.stderr.take().unwrap());
    wait_line(&mut sub_err, |l| l == "subscribed chat.>");

    // One message from the argument, two lines from stdin (the subscriber stops after two).
    let out = pqkit()
        .args(["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "--priority", "high", "--identity"])
        .arg(&alice)
        .args(["chat.room", "hello bob"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut p = pqkit()
        .args(["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "--identity"])
        .arg(&alice)
        .arg("chat.room")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin.take().unwrap().write_all(b"second line\n").unwrap();
    assert!(p.wait().unwrap().success());

    let mut text = String::new();
    sub.0.stdout.take().unwrap().read_to_string(&mut text).unwrap();
    assert!(sub.0.wait().unwrap().success());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [format!("chat.room {alice_id} High: hello bob"), format!("chat.room {alice_id} Normal: second line")]
    );

    // Refusals exit 2 with a clear message: an agent the policy does not know, a publish the policy forbids,
    // a key server id that is not there, a bad identity file.
    let run = |args: &[&str], id: &std::path::Path| {
        let o = pqkit().args(args).arg("--identity").arg(id).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (code, err) = run(&["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "chat.room", "x"], &eve);
    assert_eq!(code, Some(2));
    assert!(err.contains("does not allow connect"), "{err}");
    let (code, err) = run(&["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "other.topic", "x"], &alice);
    assert_eq!(code, Some(2));
    assert!(err.contains("does not allow publish `other.topic`"), "{err}");
    // The policy format is in the help.
    let help = pqkit().args(["bus", "keyserver", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("<agent id hex> pub <patterns> sub <patterns>"));
    // A subscription wider than the grant is refused, not silently starved (a `bus sub` that subscribed instead
    // would wait for messages forever: it is given 20 s to exit, then killed and the test fails).
    let refused = |pattern: &str| {
        let mut c = Killed(
            pqkit()
                .args(["bus", "sub", "--nats", &s.url(), "--key-server", &ks_id, pattern, "--identity"])
                .arg(&bob)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while c.0.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "bus sub {pattern} was not refused: still running after 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut err = String::new();
        c.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        (c.0.wait().unwrap().code(), err)
    };
    let (code, err) = refused(">");
    assert_eq!(code, Some(2));
    assert!(err.contains("does not allow subscribe `>`"), "{err}");
    let (code, err) = refused("other.>");
    assert_eq!(code, Some(2));
    assert!(err.contains("does not allow subscribe `other.>`"), "{err}");
    let (code, err) = run(&["bus", "pub", "--nats", &s.url(), "--key-server", &bob_id, "chat.room", "x"], &alice);
    assert!(err.contains(&bob_id) && err.contains(&s.url()), "the error names the key server and the address: {err}");
    assert_eq!(code, Some(2));
    let (code, err) = run(&["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "chat.room", "x"], &policy);
    assert_eq!(code, Some(2));
    assert!(err.contains("not an agent identity file"), "{err}");
    drop(ks);
}

/// Sender authentication is the default: `bus sub` prints only what a checkpoint signed by its sender covers;
/// a message published with `--no-sender-auth` (unsigned, as a member holding the publisher's key could
/// inject) is dropped. `sub --no-sender-auth` prints an unsigned message as soon as it opens.
#[test]
fn sender_authentication_through_the_cli() {
    let s = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (ks_key, ks_id) = keygen(dir.path(), "keys");
    let (alice, alice_id) = keygen(dir.path(), "alice");
    let (bob, _) = keygen(dir.path(), "bob");
    let mut ks = Killed(
        pqkit()
            .args(["bus", "keyserver", "--nats", &s.url(), "--allow-all", "--identity"])
            .arg(&ks_key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut ks_out = BufReader::new(ks.0.stdout.take().unwrap());
    wait_line(&mut ks_out, |l| l == "ready");
    let mut sub = Killed(
        pqkit()
            .args(["bus", "sub", "--nats", &s.url(), "--key-server", &ks_id, "--count", "1"])
            .arg("--identity")
            .arg(&bob)
            .arg("signed.>")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut sub_err = BufReader::new(sub.0.stderr.take().unwrap());
    wait_line(&mut sub_err, |l| l == "subscribed signed.>");
    for (sign, text) in [(false, "unsigned"), (true, "signed")] {
        let mut c = pqkit();
        c.args(["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "--identity"]).arg(&alice);
        if !sign {
            c.arg("--no-sender-auth");
        }
        let out = c.args(["signed.room", text]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let mut text = String::new();
    sub.0.stdout.take().unwrap().read_to_string(&mut text).unwrap();
    assert!(sub.0.wait().unwrap().success());
    assert_eq!(text.lines().collect::<Vec<_>>(), [format!("signed.room {alice_id} Normal: signed")]);
    // Opted out, the subscriber prints the unsigned message as soon as it opens.
    let mut sub = Killed(
        pqkit()
            .args(["bus", "sub", "--nats", &s.url(), "--key-server", &ks_id, "--count", "1", "--no-sender-auth"])
            .arg("--identity")
            .arg(&bob)
            .arg("signed.>")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut sub_err = BufReader::new(sub.0.stderr.take().unwrap());
    wait_line(&mut sub_err, |l| l == "subscribed signed.>");
    let out = pqkit()
        .args(["bus", "pub", "--nats", &s.url(), "--key-server", &ks_id, "--no-sender-auth", "--identity"])
        .arg(&alice)
        .args(["signed.room", "unsigned"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut text = String::new();
    sub.0.stdout.take().unwrap().read_to_string(&mut text).unwrap();
    assert!(sub.0.wait().unwrap().success());
    assert_eq!(text.lines().collect::<Vec<_>>(), [format!("signed.room {alice_id} Normal: unsigned")]);
}

// ---------------------------------------------------------------------------------------------------------
// Nothing accepted is lost, on any way out; output is safe.

/// A nats-server, a key server (`--allow-all`) in its own process, and two agents.
struct Deployment {
    s: NatsServer,
    _dir: tempfile::TempDir,
    ks: Option<Killed>,
    ks_key: std::path::PathBuf,
    ks_id: String,
    alice: std::path::PathBuf,
    alice_id: String,
    bob: std::path::PathBuf,
}

impl Deployment {
    fn start() -> Deployment {
        let s = NatsServer::start();
        let dir = tempfile::tempdir().unwrap();
        let (ks_key, ks_id) = keygen(dir.path(), "keys");
        let (alice, alice_id) = keygen(dir.path(), "alice");
        let (bob, _) = keygen(dir.path(), "bob");
        let mut d = Deployment { s, _dir: dir, ks: None, ks_key, ks_id, alice, alice_id, bob };
        d.start_key_server();
        d
    }
    fn start_key_server(&mut self) {
        let mut ks = Killed(
            pqkit()
                .args(["bus", "keyserver", "--nats", &self.s.url(), "--allow-all", "--identity"])
                .arg(&self.ks_key)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let mut out = BufReader::new(ks.0.stdout.take().unwrap());
        wait_line(&mut out, |l| l == "ready");
        self.ks = Some(ks);
    }
    /// `pqkit bus VERB --nats .. --key-server .. --identity WHO`.
    fn bus(&self, verb: &str, who: &std::path::Path) -> Command {
        let mut c = pqkit();
        c.args(["bus", verb, "--nats", &self.s.url(), "--key-server", &self.ks_id, "--identity"]).arg(who);
        c
    }
    fn publish(&self, args: &[&str], stdin: &[u8]) -> std::process::Output {
        let mut p =
            self.bus("pub", &self.alice).args(args).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        p.stdin.take().unwrap().write_all(stdin).unwrap();
        p.wait_with_output().unwrap()
    }
    /// Runs `bus sub` with `args` to completion (it must exit within 20 s) and returns its stdout lines.
    fn sub_lines(&self, args: &[&str]) -> Vec<String> {
        let mut c = Killed(
            self.bus("sub", &self.bob).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while c.0.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "bus sub {args:?} did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut text = String::new();
        c.0.stdout.take().unwrap().read_to_string(&mut text).unwrap();
        let mut err = String::new();
        c.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(c.0.wait().unwrap().success(), "{err}");
        text.lines().map(str::to_string).collect()
    }
}

/// The payload of a printed line `subject sender priority: payload`.
fn payload(line: &str) -> &str {
    line.split_once(": ").unwrap().1
}

#[test]
fn durable_count_runs_resume_in_stream_order_without_repeats() {
    let d = Deployment::start();
    let lines: Vec<u8> = (0..15).map(|i| format!("m{i}\n")).collect::<String>().into_bytes();
    let out = d.publish(&["--durable", "Q", "--declare", "q.>", "q.a"], &lines);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut got = Vec::new();
    for _ in 0..3 {
        let l = d.sub_lines(&["--durable", "Q", "--consumer", "c", "--count", "5", "q.>"]);
        got.extend(l.iter().map(|l| payload(l).to_string()));
    }
    assert_eq!(got, (0..15).map(|i| format!("m{i}")).collect::<Vec<_>>());
}

#[test]
fn an_error_exit_of_pub_loses_no_accepted_line() {
    let d = Deployment::start();
    const RUNS: usize = 8;
    let mut sub = Killed(
        d.bus("sub", &d.bob)
            .args(["--count", &RUNS.to_string(), "lost.>"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut err = BufReader::new(sub.0.stderr.take().unwrap());
    wait_line(&mut err, |l| l == "subscribed lost.>");
    for i in 0..RUNS {
        let mut input = format!("good {i}\n").into_bytes();
        input.extend_from_slice(b"\xff\n");
        let out = d.publish(&["lost.t"], &input);
        assert_eq!(out.status.code(), Some(2));
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("stdin line 2: not UTF-8"), "{e}");
    }
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sub.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the subscriber did not get all {RUNS} accepted lines");
        std::thread::sleep(Duration::from_millis(20));
    }
    sub.0.stdout.take().unwrap().read_to_string(&mut text).unwrap();
    let got: Vec<&str> = text.lines().map(payload).collect();
    assert_eq!(got, (0..RUNS).map(|i| format!("good {i}")).collect::<Vec<_>>());
}

#[test]
fn payloads_cannot_forge_lines_or_reach_the_terminal_raw() {
    let d = Deployment::start();
    let evil = "hi\nchat.room 00000000000000000000000000000000 Critical: wire the money\x1b[2J\u{9b}31m\u{202e}x\\n";
    let out = d.publish(&["--durable", "E", "--declare", "evil.>", "evil.t", evil], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = d.publish(&["--durable", "E", "evil.t"], b"\xff\x00\n");
    assert_eq!(out.status.code(), Some(2), "not UTF-8 on stdin");
    let lines = d.sub_lines(&["--durable", "E", "--consumer", "text", "--count", "1", "evil.>"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        lines[0],
        format!(
            "evil.t {} Normal: hi\\nchat.room 00000000000000000000000000000000 Critical: wire the \
             money\\u{{1b}}[2J\\u{{9b}}31m\\u{{202e}}x\\\\n",
            d.alice_id
        )
    );
    assert!(!lines[0].chars().any(|c| c.is_control()));
    let lines = d.sub_lines(&["--durable", "E", "--consumer", "json", "--count", "1", "--json", "evil.>"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(!lines[0].chars().any(|c| c.is_control() || c == '\u{202e}'), "{:?}", lines[0]);
    let v: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(v["payload"], evil);
    assert_eq!(v["subject"], "evil.t");
    assert_eq!(v["sender"], d.alice_id.as_str());
    assert_eq!(v["priority"], "Normal");
}

#[test]
fn a_sigkilled_durable_subscriber_loses_none_of_1000_messages() {
    const N: usize = 1000;
    let d = Deployment::start();
    // Long lines: the pipe (64 KiB) holds about a hundred, so the subscriber is blocked writing when it dies.
    let pad = "x".repeat(600);
    let lines: Vec<u8> = (0..N).map(|i| format!("m{i} {pad}\n")).collect::<String>().into_bytes();
    let out = d.publish(&["--durable", "K", "--declare", "k.>", "k.a"], &lines);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let spawn = || {
        Killed(
            d.bus("sub", &d.bob)
                .args(["--durable", "K", "--consumer", "c", "k.>"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    };
    let mut seen = std::collections::HashSet::new();
    let mut printed = 0;
    // The first subscriber is killed (SIGKILL) after 300 lines, holding its prefetch unacknowledged.
    {
        let mut c = spawn();
        let mut out = BufReader::new(c.0.stdout.take().unwrap());
        for _ in 0..300 {
            let mut l = String::new();
            assert!(out.read_line(&mut l).unwrap() > 0);
            seen.insert(payload(l.trim()).to_string());
            printed += 1;
        }
        assert!(c.0.try_wait().unwrap().is_none(), "the subscriber must still be running when it is killed");
        c.0.kill().unwrap();
        c.0.wait().unwrap();
        // What it printed before it died (still in the pipe) was delivered.
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        for l in rest.lines().filter(|l| l.contains(": ")) {
            seen.insert(payload(l).to_string());
            printed += 1;
        }
    }
    let first = seen.clone();
    // The second one gets the rest: what was never delivered at once, the dead one's held messages after
    // ack_wait (2 s), far behind the newer ones.
    let mut c = spawn();
    let mut out = BufReader::new(c.0.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut l = String::new();
        while out.read_line(&mut l).unwrap_or(0) > 0 {
            if tx.send(l.trim().to_string()).is_err() {
                break;
            }
            l.clear();
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < N {
        let l = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).unwrap_or_else(|_| {
            panic!("{} of {N} messages after the restart", seen.len());
        });
        let p = payload(&l).to_string();
        assert!(seen.insert(p.clone()) || first.contains(&p), "{p:.8}: a repeat the first subscriber never printed");
        printed += 1;
    }
    assert_eq!(seen, (0..N).map(|i| format!("m{i} {pad}")).collect());
    // At-least-once: bus sub acknowledges each message once it is printed, so only the one being printed when
    // it died may come again.
    assert!(printed <= N + 1, "{printed} lines for {N} messages");
    drop(c);
}

#[test]
fn sub_keeps_its_replay_state_in_a_file() {
    let d = Deployment::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("bob.replay");
    let st = state.to_str().unwrap();
    let out = d.publish(&["--durable", "S", "--declare", "s.>", "s.a", "one"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = d.sub_lines(&["--durable", "S", "--consumer", "c", "--count", "1", "--state", st, "s.>"]);
    assert_eq!(lines.len(), 1);
    let text = std::fs::read_to_string(&state).unwrap();
    assert!(text.starts_with("s.a ") && text.contains(" E 0-0"), "{text}");
    // Read back at the next start (a run that prints nothing new keeps it).
    let out = d.publish(&["--durable", "S", "s.a", "two"], b"");
    assert!(out.status.success());
    let lines = d.sub_lines(&["--durable", "S", "--consumer", "c", "--count", "1", "--state", st, "s.>"]);
    assert_eq!(payload(&lines[0]), "two");
    // Each `bus pub` is a new sender stream: the state holds both, the first read back from the file.
    let text = std::fs::read_to_string(&state).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().all(|l| l.starts_with("s.a ") && l.contains(" E ")), "{text}");
    std::fs::write(&state, "s.a 1 0 R zz\n").unwrap();
    let out = d.bus("sub", &d.bob).args(["--count", "1", "--state", st, "s.>"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a replay state file"));
}

/// `--nats` takes a cluster's node list: the key server, a publisher and a subscriber each given all three
/// URLs keep working when the first node of the list is down.
#[test]
fn the_cli_fails_over_between_the_nodes_of_a_cluster() {
    let mut nodes = NatsServer::cluster(3);
    let urls = nodes.iter().map(|n| n.url()).collect::<Vec<_>>().join(",");
    let dir = tempfile::tempdir().unwrap();
    let (ks_key, ks_id) = keygen(dir.path(), "keys");
    let (alice, alice_id) = keygen(dir.path(), "alice");
    let (bob, _) = keygen(dir.path(), "bob");
    let bus = |verb: &str, who: &std::path::Path| {
        let mut c = pqkit();
        c.args(["bus", verb, "--nats", &urls, "--key-server", &ks_id, "--identity"]).arg(who);
        c
    };
    let mut ks = Killed(
        pqkit()
            .args(["bus", "keyserver", "--nats", &urls, "--allow-all", "--identity"])
            .arg(&ks_key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_line(&mut BufReader::new(ks.0.stdout.take().unwrap()), |l| l == "ready");
    // The first node goes down: every client connects to another one of the list.
    nodes[0].terminate();
    let mut sub = Killed(
        bus("sub", &bob).args(["--count", "3", "fo.>"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(),
    );
    wait_line(&mut BufReader::new(sub.0.stderr.take().unwrap()), |l| l == "subscribed fo.>");
    for i in 0..3 {
        let out = bus("pub", &alice).args(["fo.x", &format!("over {i}")]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let mut text = String::new();
    sub.0.stdout.take().unwrap().read_to_string(&mut text).unwrap();
    assert!(sub.0.wait().unwrap().success());
    let want: Vec<String> = (0..3).map(|i| format!("fo.x {alice_id} Normal: over {i}")).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), want);
    drop(ks);
}

/// Durable delivery on a three-node cluster loses nothing while every part restarts. The key server, the
/// publisher and the durable subscriber are `pqkit bus` processes given all three URLs; the stream is R3. While
/// 1,000 messages are published, one line at a time, the subscriber is killed (SIGKILL) and started again with
/// the same consumer, a node is stopped (SIGTERM) and started again, and the key server is killed and started
/// again. Every message is printed, each as alice's, and a message is printed twice only if the killed
/// subscriber printed it (at-least-once: the one it was printing when it died).
#[test]
fn a_cluster_loses_none_of_1000_durable_messages_while_subscriber_node_and_key_server_restart() {
    cluster_restarts(true);
}

/// The same, when the first subscriber is killed before it may have subscribed (creating an R3 consumer can take
/// seconds) and the second starts behind: it reads the backlog while the node and then the key server restart,
/// so it meets messages sealed under the epoch of a key server that is gone. The key server's state file
/// (`--state`) keeps those epochs; without it the backlog cannot be opened.
#[test]
fn a_cluster_subscriber_that_starts_behind_opens_the_backlog_after_the_key_server_restarts() {
    cluster_restarts(false);
}

/// `first_subscribes`: the first subscriber has subscribed before publishing starts, and is killed at message
/// 200; else it is killed at message 20, subscribed or not.
fn cluster_restarts(first_subscribes: bool) {
    const N: usize = 1000;
    let t0 = Instant::now();
    let mut nodes = NatsServer::cluster(3);
    let urls = nodes.iter().map(|n| n.url()).collect::<Vec<_>>().join(",");
    let dir = tempfile::tempdir().unwrap();
    let (ks_key, ks_id) = keygen(dir.path(), "keys");
    let (alice, alice_id) = keygen(dir.path(), "alice");
    let (bob, _) = keygen(dir.path(), "bob");
    let bus = |verb: &str, who: &std::path::Path| {
        let mut c = pqkit();
        c.args(["bus", verb, "--nats", &urls, "--key-server", &ks_id, "--identity"]).arg(who);
        c
    };
    let ks_state = dir.path().join("keys.state");
    let start_ks = || {
        let mut ks = Killed(
            pqkit()
                .args(["bus", "keyserver", "--nats", &urls, "--allow-all", "--state"])
                .arg(&ks_state)
                .arg("--identity")
                .arg(&ks_key)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        wait_line(&mut BufReader::new(ks.0.stdout.take().unwrap()), |l| l == "ready");
        ks
    };
    let mut ks = start_ks();
    // JetStream elects its meta leader once the routes are up: declare the R3 stream until it answers.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = bus("pub", &alice)
            .args(["--durable", "R3", "--declare", "r3.>", "--replicas", "3", "r3.warm", "warm"])
            .output()
            .unwrap();
        if out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "no R3 stream: {}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(Duration::from_millis(250));
    }
    // Each subscriber's printed lines, tagged with its generation, through one channel.
    let (tx, rx) = std::sync::mpsc::channel::<(u8, String)>();
    let spawn_sub = |generation: u8| {
        let mut c = Killed(
            bus("sub", &bob)
                .args(["--durable", "R3", "--consumer", "c", "r3.t"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let out = BufReader::new(c.0.stdout.take().unwrap());
        let tx = tx.clone();
        std::thread::spawn(move || {
            for l in out.lines() {
                let Ok(l) = l else { break };
                if tx.send((generation, l)).is_err() {
                    break;
                }
            }
        });
        // Its stderr, echoed into the test's output; `ready` fires on its "subscribed" line.
        let err = BufReader::new(c.0.stderr.take().unwrap());
        let (ready_tx, ready) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            for l in err.lines() {
                let Ok(l) = l else { break };
                eprintln!("bus sub {generation}: {l}");
                if l.starts_with("subscribed ") {
                    let _ = ready_tx.send(());
                }
            }
        });
        (c, ready)
    };
    // The first subscriber creates the durable consumer before anything is published (on a new R3 stream that
    // can take seconds while its leader is elected), so the restarts below meet a subscriber that is running.
    let (mut sub, ready) = spawn_sub(0);
    if first_subscribes {
        ready.recv_timeout(Duration::from_secs(60)).expect("the first bus sub subscribes");
    }
    let kill_at = if first_subscribes { 200 } else { 20 };
    let mut publisher =
        Killed(bus("pub", &alice).args(["--durable", "R3", "r3.t"]).stdin(Stdio::piped()).spawn().unwrap());
    let mut stdin = publisher.0.stdin.take().unwrap();
    let mut lines: Vec<(u8, String)> = Vec::new();
    let collect = |lines: &mut Vec<(u8, String)>| lines.extend(rx.try_iter());
    // The restarts, in order, as publishing goes on; the last 100 lines wait until all have happened.
    let mut step = 0;
    let mut since = Instant::now();
    let mut i = 0;
    while i < N {
        collect(&mut lines);
        match step {
            0 if i >= kill_at => {
                sub.0.kill().unwrap();
                sub.0.wait().unwrap();
                sub = spawn_sub(1).0;
                step = 1;
            }
            1 if i >= 300 => {
                nodes[0].terminate();
                since = Instant::now();
                step = 2;
            }
            2 if since.elapsed() >= Duration::from_secs(2) => {
                nodes[0].start_again();
                step = 3;
            }
            3 if i >= 600 => {
                ks.0.kill().unwrap();
                ks.0.wait().unwrap();
                since = Instant::now();
                step = 4;
            }
            4 if since.elapsed() >= Duration::from_secs(1) => {
                ks = start_ks();
                step = 5;
            }
            _ => {}
        }
        if i >= N - 100 && step < 5 {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        writeln!(stdin, "m{i}").unwrap();
        i += 1;
        std::thread::sleep(Duration::from_millis(3));
    }
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(60);
    while publisher.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "bus pub did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(publisher.0.wait().unwrap().success(), "bus pub failed");
    eprintln!("bus pub done after {:.1} s", t0.elapsed().as_secs_f64());
    let want: std::collections::HashSet<String> = (0..N).map(|i| format!("m{i}")).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let seen: std::collections::HashSet<String> = loop {
        collect(&mut lines);
        let seen: std::collections::HashSet<String> = lines.iter().map(|(_, l)| payload(l).to_string()).collect();
        if seen.len() >= N || Instant::now() >= deadline {
            break seen;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let missing: Vec<&String> = want.difference(&seen).collect();
    assert!(missing.is_empty(), "{} of {N} missing, e.g. {:?}", missing.len(), &missing[..missing.len().min(5)]);
    assert_eq!(seen, want, "nothing but what alice published");
    assert!(lines.iter().all(|(_, l)| l.starts_with(&format!("r3.t {alice_id} Normal: "))), "a line not alice's");
    // Repeats: only of what the killed subscriber printed, at most the one it was printing.
    let first: std::collections::HashSet<&str> =
        lines.iter().filter(|(g, _)| *g == 0).map(|(_, l)| payload(l)).collect();
    let second: Vec<&str> = lines.iter().filter(|(g, _)| *g == 1).map(|(_, l)| payload(l)).collect();
    let again: Vec<&&str> = second.iter().filter(|p| first.contains(**p)).collect();
    assert!(again.len() <= 1, "printed again after the restart: {again:?}");
    assert_eq!(second.len(), second.iter().collect::<std::collections::HashSet<_>>().len(), "a repeat");
    assert!(second.len() >= N - first.len(), "the second subscriber printed the rest");
    if first_subscribes {
        assert!(!first.is_empty(), "the first subscriber printed");
    }
    eprintln!("1,000 durable messages across the restarts in {:.1} s", t0.elapsed().as_secs_f64());
    drop(sub);
    drop(ks);
}

/// `bus keyserver --state`: a state file written by another key server, or not a state file at all, stops it
/// before it serves, with exit code 2 and the file named.
#[test]
fn the_key_server_refuses_a_state_file_it_did_not_write() {
    let mut s = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = keygen(dir.path(), "one");
    let (two, _) = keygen(dir.path(), "two");
    let state = dir.path().join("ks.state");
    let serve = |who: &std::path::Path| {
        let mut ks = Killed(
            pqkit()
                .args(["bus", "keyserver", "--nats", &s.url(), "--allow-all", "--state"])
                .arg(&state)
                .arg("--identity")
                .arg(who)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let mut out = BufReader::new(ks.0.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        (ks, first)
    };
    // The first start creates the file; a second key server with another identity cannot read it.
    let (ks, first) = serve(&one);
    assert!(first.starts_with("keyserver "), "{first}");
    assert!(state.exists());
    drop(ks);
    let (mut ks, first) = serve(&two);
    assert_eq!(first, "", "it must not serve");
    let status = ks.0.wait().unwrap();
    let mut err = String::new();
    ks.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("ks.state") && err.contains("does not authenticate"), "{err}");
    std::fs::write(&state, b"hello\n").unwrap();
    let (mut ks, first) = serve(&one);
    assert_eq!(first, "");
    assert_eq!(ks.0.wait().unwrap().code(), Some(2));
    s.kill();
}

/// A key server started without `--state` says on stderr what a restart will cost; one with it says nothing.
#[test]
fn the_key_server_warns_when_it_keeps_no_state() {
    let mut s = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = keygen(dir.path(), "keys");
    let state = dir.path().join("ks.state");
    let stderr_of = |extra: &[&std::ffi::OsStr]| {
        let mut ks = Killed(
            pqkit()
                .args(["bus", "keyserver", "--nats", &s.url(), "--allow-all", "--identity"])
                .arg(&key)
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        wait_line(&mut BufReader::new(ks.0.stdout.take().unwrap()), |l| l == "ready");
        ks.0.kill().unwrap();
        let mut err = String::new();
        ks.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        err
    };
    let err = stderr_of(&[]);
    assert!(err.contains("warning: no --state FILE") && err.contains("restart"), "{err}");
    let err = stderr_of(&["--state".as_ref(), state.as_os_str()]);
    assert!(!err.contains("warning"), "{err}");
    s.kill();
}
