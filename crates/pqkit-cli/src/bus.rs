//! `pqkit bus`: pqkit-bus over NATS from a terminal. Agent identities come from `pqkit keygen --alg agent
//! --name NAME -o FILE` (a name and a 32-byte seed from which the ML-DSA-65 and Ed25519 keys derive, mode
//! 0600; prints `id <hex>`); `pqkit pubkey FILE` prints the id again.
//! - `pqkit bus keyserver --identity FILE (--policy FILE | --allow-all) [--state FILE]`: serves keys on NATS
//!   until killed; prints `keyserver <id hex>` then `ready`. `--state` keeps the topic epochs across restarts;
//!   without it the key server warns on stderr that a restart strands unread durable messages.
//! - `pqkit bus pub --identity FILE --key-server ID SUBJECT [MESSAGE]`: publishes MESSAGE, or each line of
//!   stdin, sealed (`--durable STREAM` through JetStream, acknowledged), with signed checkpoints so that
//!   subscribers can tell the message is this identity's (sender authentication, on by default;
//!   `--no-sender-auth` opts out, docs/bus.md §9).
//! - `pqkit bus sub --identity FILE --key-server ID PATTERN [--count N]`: prints `subject sender priority:
//!   payload` per message, control characters and invalid UTF-8 escaped (`--json`: one JSON object per
//!   message); `--durable STREAM --consumer NAME` for a durable topic (acknowledged after printing; `--count`
//!   pulls no more than it prints); without `--durable` prints only messages a checkpoint signed by their
//!   sender covers (`--no-sender-auth` opts out; `--sender-auth` turns it on with `--durable`). A pattern the
//!   policy does not grant is refused.
//!
//! `--nats URL` (default `$NATS_URL`, else `nats://127.0.0.1:4222`). Exit codes as everywhere: 2 for usage,
//! input, connection or authorisation errors.
//!
//! Identity file: `pqkit-bus agent v1\nname <name>\nseed <64 hex>\n`. Policy file: one rule per line,
//! `<agent id hex> pub <pattern>[,<pattern>...] sub <pattern>[,<pattern>...]` (`-` for none); `#` comments.

use crate::error::{CliError, CliResult};
use crate::io::{print_line, read_file, warn};
use clap::{Args, Subcommand, ValueEnum};
use pqkit_bus::nats::{KeyServer, NatsAgent, NatsOptions};
use pqkit_bus::{AgentId, Identity, Policy, Priority};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

#[derive(Args)]
pub struct BusArgs {
    #[command(subcommand)]
    cmd: BusCmd,
}

#[derive(Args)]
struct Conn {
    /// The NATS server(s): a URL, or a comma-separated list of a cluster's nodes (the client fails over
    /// between them).
    #[arg(long, value_name = "URL", env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats: String,
    /// This agent's identity file (`pqkit keygen --alg agent`).
    #[arg(long, value_name = "FILE")]
    identity: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum Prio {
    Low,
    Normal,
    High,
    Critical,
}

#[derive(Subcommand)]
enum BusCmd {
    /// Run the key server: authenticates agents and grants topic keys by the policy, until killed.
    Keyserver {
        #[command(flatten)]
        conn: Conn,
        /// The policy file: one rule per line, `<agent id hex> pub <patterns> sub <patterns>`, patterns
        /// comma-separated NATS subjects with `*` and `>` wildcards, `-` for none; `#` starts a comment. For
        /// example `3f0c...e1 pub orders.* sub events.>,alerts.*`. An agent without a rule cannot connect.
        #[arg(long, value_name = "FILE", required_unless_present = "allow_all")]
        policy: Option<PathBuf>,
        /// Every authenticated agent may publish and subscribe everywhere (closed deployments, trials).
        #[arg(long, conflicts_with = "policy")]
        allow_all: bool,
        /// Keep the topic epochs in FILE (sealed under a key derived from the identity, mode 0600; created if
        /// missing), so that a key server restarted with the same identity and file still opens durable messages
        /// sealed before the restart. Without it the epochs die with the process, and a durable subscriber that
        /// had not read a message before a restart cannot open it.
        #[arg(long, value_name = "FILE")]
        state: Option<PathBuf>,
    },
    /// Publish MESSAGE, or each line of stdin, sealed.
    Pub {
        #[command(flatten)]
        conn: Conn,
        /// The key server's id (hex, from `pqkit pubkey KEYSERVER-IDENTITY`).
        #[arg(long, value_name = "ID")]
        key_server: String,
        /// Priority, carried in the authenticated header.
        #[arg(long, value_enum, default_value = "normal")]
        priority: Prio,
        /// Publish through the JetStream stream STREAM (it must capture SUBJECT; --declare creates it), waiting
        /// for each acknowledgement.
        #[arg(long, value_name = "STREAM")]
        durable: Option<String>,
        /// With --durable: declare the stream over these subjects first (comma-separated patterns).
        #[arg(long, value_name = "PATTERNS", requires = "durable")]
        declare: Option<String>,
        /// With --declare: keep this many copies of the stream on a JetStream cluster (3: it survives the loss
        /// of one node of three; at most 5).
        #[arg(long, value_name = "N", default_value_t = 1, requires = "declare")]
        replicas: usize,
        /// Sign checkpoints over what is published (the default: sender authentication against other members;
        /// one hybrid signature per 256 messages or 5 ms, and at exit). Kept so that scripts that pass it work;
        /// with --no-sender-auth it still signs this subject.
        #[arg(long)]
        sign: bool,
        /// Opt out of sender authentication: sign no checkpoints. Subscribers that keep the default then drop
        /// these messages after about a second (docs/bus.md §9).
        #[arg(long)]
        no_sender_auth: bool,
        /// The subject.
        subject: String,
        /// The message; each line of stdin if absent.
        message: Option<String>,
    },
    /// Print the messages on PATTERN: `subject sender-id priority: payload`, one line each. Control
    /// characters, invalid UTF-8 and backslashes in the subject and payload are escaped (`\n`, `\x1b`,
    /// `\u{9b}`, `\xff`, `\\`), so no payload can start another line or reach the terminal raw; `--json` for
    /// programs.
    Sub {
        #[command(flatten)]
        conn: Conn,
        /// The key server's id (hex, from `pqkit pubkey KEYSERVER-IDENTITY`).
        #[arg(long, value_name = "ID")]
        key_server: String,
        /// Exit after N messages.
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Read the durable stream STREAM through the durable consumer --consumer (resumes where it stopped).
        #[arg(long, value_name = "STREAM", requires = "consumer")]
        durable: Option<String>,
        /// The durable consumer's name.
        #[arg(long, value_name = "NAME", requires = "durable")]
        consumer: Option<String>,
        /// Sender authentication: print only messages whose digest a checkpoint signed by their sender lists;
        /// others are dropped after about a second (31 s with --durable, which also covers a checkpoint stored
        /// late after a server restart) and counted. The default, with and without --durable (a durable consumer
        /// still acknowledges each message once printed); the flag only states it.
        #[arg(long, conflicts_with = "no_sender_auth")]
        sender_auth: bool,
        /// Opt out of sender authentication: print each message as soon as it opens, without waiting for its
        /// sender's checkpoint (then any other subscriber of the topic could forge a message in a publisher's
        /// name; docs/bus.md §9).
        #[arg(long)]
        no_sender_auth: bool,
        /// Keep the replay state in FILE (read at start, written after each message, before it is printed): an
        /// envelope printed before a restart and re-published by anyone on the NATS server is then rejected.
        #[arg(long, value_name = "FILE")]
        state: Option<PathBuf>,
        /// One JSON object per line: `{"subject":..,"sender":..,"priority":..,"payload":..}` (`payload_hex`
        /// instead of `payload` when the payload is not UTF-8).
        #[arg(long)]
        json: bool,
        /// The pattern (NATS wildcards `*`, `>`).
        pattern: String,
    },
}

pub(crate) fn write_identity(name: &str, seed: &[u8; 32]) -> CliResult<Zeroizing<Vec<u8>>> {
    Ok(pqkit_bus::identity::key_file(name, seed)?)
}

/// Reads an identity file.
pub(crate) fn read_identity(path: &Path) -> CliResult<Identity> {
    let data = read_file(path)?;
    crate::io::warn_if_exposed(path);
    Identity::from_key_file(&data).map_err(|e| CliError::usage(format!("{}: {e}", path.display())))
}

fn parse_id(opt: &str, s: &str) -> CliResult<AgentId> {
    let v = hex::decode(s.trim()).map_err(|_| CliError::usage(format!("{opt}: not valid hex")))?;
    let a: [u8; 16] = v.try_into().map_err(|_| CliError::usage(format!("{opt}: an agent id is 16 bytes (32 hex)")))?;
    Ok(AgentId(a))
}

fn split(p: &str) -> Vec<&str> {
    if p == "-" { Vec::new() } else { p.split(',').filter(|s| !s.is_empty()).collect() }
}

/// Reads a policy file: `<id hex> pub <patterns> sub <patterns>` per line.
fn read_policy(path: &Path) -> CliResult<Policy> {
    let data = read_file(path)?;
    let text = std::str::from_utf8(&data).map_err(|_| CliError::usage(format!("{}: not UTF-8", path.display())))?;
    let mut policy = Policy::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |why: &str| CliError::usage(format!("{}:{}: {why}", path.display(), i + 1));
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 5 || f[1] != "pub" || f[3] != "sub" {
            return Err(at("expected `<agent id hex> pub <patterns> sub <patterns>`"));
        }
        let id = parse_id("agent id", f[0]).map_err(|_| at("the agent id is not 32 hex digits"))?;
        policy = policy.allow(id, &split(f[2]), &split(f[4])).map_err(|e| at(&e.to_string()))?;
    }
    Ok(policy)
}

fn prio(p: Prio) -> Priority {
    match p {
        Prio::Low => Priority::Low,
        Prio::Normal => Priority::Normal,
        Prio::High => Priority::High,
        Prio::Critical => Priority::Critical,
    }
}

/// Connects an agent with the default options, or opted out of sender authentication.
async fn connect(conn: &Conn, identity: &Identity, ks: AgentId, no_sender_auth: bool) -> CliResult<NatsAgent> {
    let opts = NatsOptions { sender_auth: !no_sender_auth, ..NatsOptions::default() };
    Ok(NatsAgent::connect_with(&conn.nats, identity, ks, opts).await?)
}

fn runtime() -> CliResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::io("tokio runtime", e))
}

pub fn bus(a: BusArgs) -> CliResult {
    runtime()?.block_on(async move {
        match a.cmd {
            BusCmd::Keyserver { conn, policy, allow_all, state } => {
                let identity = read_identity(&conn.identity)?;
                let policy = match (policy, allow_all) {
                    (_, true) => Policy::allow_all(),
                    (Some(p), false) => read_policy(&p)?,
                    (None, false) => return Err(CliError::usage("--policy FILE or --allow-all")),
                };
                let ks = KeyServer::new(identity, policy);
                let ks = match state {
                    Some(path) => ks.state_file(path),
                    None => {
                        warn(
                            "warning: no --state FILE: the topic epochs die with this key server, so after a \
                             restart no subscriber can open a durable message it had not read before",
                        );
                        ks
                    }
                };
                let mut ks = ks.serve(&conn.nats).await?;
                print_line(&format!("keyserver {}", ks.id()))?;
                print_line("ready")?;
                ks.wait().await;
                Err(CliError::usage("the key server's NATS subscription ended"))
            }
            BusCmd::Pub {
                conn,
                key_server,
                priority,
                durable,
                declare,
                replicas,
                sign,
                no_sender_auth,
                subject,
                message,
            } => {
                let ks = parse_id("--key-server", &key_server)?;
                let identity = read_identity(&conn.identity)?;
                let agent = connect(&conn, &identity, ks, no_sender_auth).await?;
                let p = prio(priority);
                let sent = async {
                    if sign {
                        agent.sign_checkpoints(&subject, pqkit_bus::checkpoint::Checkpoints::default())?;
                    }
                    if let (Some(stream), Some(subjects)) = (&durable, &declare) {
                        agent.declare_durable_replicated(stream, &split(subjects), replicas).await?;
                    }
                    let send = |m: Vec<u8>| {
                        let agent = &agent;
                        let subject = &subject;
                        let durable = durable.is_some();
                        async move {
                            if durable {
                                agent.publish_durable(subject, &m, p).await.map(|_| ())
                            } else {
                                agent.publish(subject, &m, p).await
                            }
                        }
                    };
                    match message {
                        Some(m) => send(m.into_bytes()).await?,
                        None => {
                            let mut stdin = std::io::stdin().lock();
                            let mut line = Vec::new();
                            let mut n = 0u64;
                            loop {
                                line.clear();
                                if stdin.read_until(b'\n', &mut line).map_err(|e| CliError::io("stdin", e))? == 0 {
                                    break;
                                }
                                n += 1;
                                if line.last() == Some(&b'\n') {
                                    line.pop();
                                    if line.last() == Some(&b'\r') {
                                        line.pop();
                                    }
                                }
                                if std::str::from_utf8(&line).is_err() {
                                    return Err(CliError::usage(format!(
                                        "stdin line {n}: not UTF-8 (the {} line(s) before it were published)",
                                        n - 1
                                    )));
                                }
                                send(std::mem::take(&mut line)).await?;
                            }
                        }
                    }
                    Ok::<(), CliError>(())
                }
                .await;
                // On every way out, errors included: sign the last batch (if --sign) and wait until the server
                // has everything accepted so far.
                let closed = agent.close().await;
                sent?;
                closed.map_err(|e| CliError::usage(format!("flushing to {}: {e}", conn.nats)))?;
                Ok(())
            }
            BusCmd::Sub {
                conn,
                key_server,
                count,
                durable,
                consumer,
                sender_auth,
                no_sender_auth,
                state,
                json,
                pattern,
            } => {
                let ks = parse_id("--key-server", &key_server)?;
                let identity = read_identity(&conn.identity)?;
                let agent = connect(&conn, &identity, ks, no_sender_auth).await?;
                agent.check_subscribe(&pattern).await?;
                let print = |m: pqkit_bus::Message| -> CliResult {
                    let line = if json { json_line(&m) } else { text_line(&m) };
                    let mut o = std::io::stdout().lock();
                    writeln!(o, "{line}").and_then(|_| o.flush()).map_err(|e| CliError::io("stdout", e))
                };
                let saved = match &state {
                    Some(p) if p.exists() => {
                        let t = read_file(p)?;
                        Some(String::from_utf8(t.to_vec()).map_err(|_| {
                            CliError::usage(format!("{}: not a replay state file (not UTF-8)", p.display()))
                        })?)
                    }
                    _ => None,
                };
                let restore = |r: pqkit_bus::Result<()>| {
                    r.map_err(|e| CliError::usage(format!("{}: not a replay state file ({e})", path_of(&state))))
                };
                let save = |text: String| -> CliResult {
                    let Some(p) = &state else { return Ok(()) };
                    let tmp = p.with_extension("tmp");
                    std::fs::write(&tmp, text)
                        .and_then(|_| std::fs::rename(&tmp, p))
                        .map_err(|e| CliError::io(&p.display().to_string(), e))
                };
                let mut n = 0u64;
                let auth = pqkit_bus::checkpoint::SenderAuth::default();
                let r = match (durable, consumer) {
                    (Some(stream), Some(name)) => {
                        // Authenticated unless the agent opted out (`--no-sender-auth`).
                        let mut sub = agent.subscribe_durable(&stream, &name, &pattern).await?;
                        if let Some(c) = count {
                            sub.limit(c);
                        }
                        if let Some(t) = &saved {
                            restore(sub.restore_replay_state(t))?;
                        }
                        eprintln!("subscribed {} (durable {stream}/{name})", escape(pattern.as_bytes()));
                        let r = async {
                            while count.is_none_or(|c| n < c) {
                                let m = sub.recv().await?;
                                save(sub.replay_state())?;
                                print(m)?;
                                // Acknowledged as soon as it is printed, and sent: a `bus sub` killed later
                                // does not get it again.
                                sub.ack().await?;
                                agent.flush().await?;
                                n += 1;
                            }
                            Ok::<(), CliError>(())
                        }
                        .await;
                        // Acknowledge what was printed and wait until the server has it, on every way out.
                        let closed = sub.close().await;
                        r.and(closed.map_err(|e| CliError::usage(format!("acknowledging to {}: {e}", conn.nats))))
                    }
                    _ => {
                        let mut sub = if sender_auth {
                            agent.subscribe_authenticated(&pattern, auth).await?
                        } else {
                            agent.subscribe(&pattern).await?
                        };
                        if let Some(t) = &saved {
                            restore(sub.restore_replay_state(t))?;
                        }
                        eprintln!("subscribed {}", escape(pattern.as_bytes()));
                        async {
                            while count.is_none_or(|c| n < c) {
                                let m = sub.recv().await?;
                                save(sub.replay_state())?;
                                print(m)?;
                                n += 1;
                            }
                            Ok::<(), CliError>(())
                        }
                        .await
                    }
                };
                let m = agent.metrics();
                if m.rejected() > 0 {
                    eprintln!("rejected {} envelope(s): {m:?}", m.rejected());
                }
                r
            }
        }
    })
}

/// Whether `c` must not reach a terminal raw: controls (C0, DEL, C1) and the bidirectional formatting
/// characters that reorder what is displayed.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `bytes` as one line of printable text: `\\`, `\n`, `\r`, `\t`, `\u{..}` for other unsafe characters,
/// `\xNN` for bytes that are not UTF-8. Distinct inputs give distinct outputs.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// A JSON string literal for `s`, with every unsafe character as `\uXXXX` (so the line is terminal-safe too).
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if unsafe_char(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn text_line(m: &pqkit_bus::Message) -> String {
    format!("{} {} {:?}: {}", escape(m.subject().as_bytes()), m.sender(), m.priority(), escape(m.payload()))
}

fn json_line(m: &pqkit_bus::Message) -> String {
    let payload = match std::str::from_utf8(m.payload()) {
        Ok(p) => format!("\"payload\":{}", json_str(p)),
        Err(_) => format!("\"payload_hex\":\"{}\"", hex::encode(m.payload())),
    };
    format!(
        "{{\"subject\":{},\"sender\":\"{}\",\"priority\":\"{:?}\",{payload}}}",
        json_str(m.subject()),
        m.sender(),
        m.priority()
    )
}

fn path_of(p: &Option<PathBuf>) -> String {
    p.as_ref().map_or_else(String::new, |p| p.display().to_string())
}
