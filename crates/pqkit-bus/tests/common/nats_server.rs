//! A real `nats-server` for tests: started on a free loopback port with JetStream (`-js`) and a temporary store
//! directory, ready when it accepts a connection and answers with its `INFO` line, killed on drop. No mock stands
//! in for NATS in the tests that use it.
//!
//! A missing binary is a test failure (never a silent skip): `install nats-server (apt-get install nats-server)`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What a test prints when the binary is missing.
pub const INSTALL_HINT: &str = "install nats-server (apt-get install nats-server)";

/// A `nats-server` child process with its store directory.
pub struct NatsServer {
    bin: PathBuf,
    port: u16,
    store: tempfile::TempDir,
    child: Option<Child>,
    /// Cluster arguments (`-n`, `--cluster_name`, `--cluster`, `--routes`) of a cluster node.
    extra: Vec<String>,
}

/// The `nats-server` binary: `$NATS_SERVER`, then `PATH`, then the Debian location (`/usr/sbin`, often not on a
/// non-root user's `PATH`).
pub fn find_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NATS_SERVER") {
        return Some(PathBuf::from(p));
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/usr/bin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("nats-server")).find(|p| p.is_file())
}

/// A loopback port that is free now, drawn below the kernel's ephemeral range (32768 and up on Linux): the
/// outgoing connections of tests running beside this one take their source ports from that range, and one of them
/// can take a port between the check here and the server's bind. A per-process counter spreads the draws of
/// parallel tests; a start-up that still loses the race is retried on fresh ports (see [`START_ATTEMPTS`]).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::process::id().wrapping_mul(7919)
        ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    for _ in 0..1000 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = 20_000 + (seed.wrapping_add(n.wrapping_mul(2_654_435_761)) % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    // Every draw was taken: let the OS choose.
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// How many times a start on fresh ports is tried when a port was taken between the check and the server's bind.
const START_ATTEMPTS: usize = 5;

/// Runs `start` (one attempt on fresh ports) until it succeeds, at most `attempts` times; panics naming `what`, the
/// number of attempts and the last error.
pub fn retry_start<T>(what: &str, attempts: usize, mut start: impl FnMut() -> Result<T, String>) -> T {
    let mut last = String::new();
    for _ in 0..attempts {
        match start() {
            Ok(t) => return t,
            Err(e) => last = e,
        }
    }
    panic!("{what} did not start in {attempts} attempts on fresh ports; the last: {last}");
}

impl NatsServer {
    /// Starts a server on a free port; panics with [`INSTALL_HINT`] if the binary is missing.
    pub fn start() -> NatsServer {
        let bin = find_binary().unwrap_or_else(|| panic!("nats-server not found on PATH: {INSTALL_HINT}"));
        retry_start("nats-server", START_ATTEMPTS, || Self::try_start_on(&bin, free_port()))
    }

    /// One start on `port`: an error (with the end of the server's log) if the server exits during start-up.
    pub fn try_start_on(bin: &std::path::Path, port: u16) -> Result<NatsServer, String> {
        let store = tempfile::tempdir().expect("temporary store directory");
        let mut s = NatsServer { bin: bin.to_path_buf(), port, store, child: None, extra: Vec::new() };
        s.spawn_only();
        s.wait_ready().map(|()| s)
    }

    /// Starts `n` servers forming one cluster (routes on loopback ports, JetStream clustered): each node's
    /// client port is its own; a client given every node's URL fails over between them.
    pub fn cluster(n: usize) -> Vec<NatsServer> {
        let bin = find_binary().unwrap_or_else(|| panic!("nats-server not found on PATH: {INSTALL_HINT}"));
        retry_start(&format!("a {n}-node nats-server cluster"), START_ATTEMPTS, || Self::try_cluster(&bin, n))
    }

    fn try_cluster(bin: &std::path::Path, n: usize) -> Result<Vec<NatsServer>, String> {
        let routes: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let all = routes.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
        let mut nodes: Vec<NatsServer> = (0..n)
            .map(|i| NatsServer {
                bin: bin.to_path_buf(),
                port: free_port(),
                store: tempfile::tempdir().expect("temporary store directory"),
                child: None,
                extra: vec![
                    "-n".into(),
                    format!("node{i}"),
                    "--cluster_name".into(),
                    "pqkit-test".into(),
                    "--cluster".into(),
                    format!("nats://127.0.0.1:{}", routes[i]),
                    "--routes".into(),
                    all.clone(),
                ],
            })
            .collect();
        // All started before any waits: the routes connect as the nodes come up. A node that fails drops (and
        // kills) the whole set, and the caller tries again on fresh ports.
        for s in &mut nodes {
            s.spawn_only();
        }
        for s in &mut nodes {
            s.wait_ready()?;
        }
        Ok(nodes)
    }

    /// Starts the server on its own port (a restart): a port taken meanwhile by another test's connection is
    /// waited out for a few seconds before the test fails.
    fn spawn(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            self.spawn_only();
            match self.wait_ready() {
                Ok(()) => return,
                Err(e) if Instant::now() >= deadline => panic!("{e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// The server's own log (stderr), kept in its store directory for the failure messages (removed with it).
    fn log_path(&self) -> PathBuf {
        self.store.path().join("nats-server.log")
    }

    fn spawn_only(&mut self) {
        let log = std::fs::File::create(self.log_path()).expect("nats-server log file");
        let child = Command::new(&self.bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string(), "-js", "-sd"])
            .arg(self.store.path())
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}; {INSTALL_HINT}", self.bin.display()));
        self.child = Some(child);
    }

    /// Waits until the server answers with its `INFO` line. An exit during start-up (a port taken, most often)
    /// is an error carrying the end of the server's log; a server that neither answers nor exits in 15 s fails
    /// the test.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(st)) = c.try_wait()
            {
                self.child = None;
                let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                return Err(format!(
                    "nats-server exited during start-up ({st}) on port {}: {}",
                    self.port,
                    tail.join(" | ")
                ));
            }
            if let Ok(s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let mut line = String::new();
                if BufReader::new(s).read_line(&mut line).is_ok() && line.starts_with("INFO") {
                    return Ok(());
                }
            }
            assert!(Instant::now() < deadline, "nats-server did not accept on port {} within 15 s", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server with SIGTERM (a graceful shutdown, as an operator's restart) and waits for it.
    pub fn terminate(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg("-TERM").arg(c.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts a stopped server again (same port, store and cluster arguments).
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "the server is running");
        self.spawn();
    }

    /// Kills the server (SIGKILL: no graceful shutdown, as a crash) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port with the same store (JetStream recovers from it).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}
